"""`Roster`: the operator's corrections to the teams of the tournament file while the event
runs (issue #22.5): a misspelled player name, a substitute who takes over a player's seat, a
team's name or colour. Pure, like the rest of the engine.

A correction is an operator command (``{"op": "roster", ...}``) journaled as a control record,
so a replay of the journal applies it again at its place. The file's names stay the keys:
``player(team, name)`` is the name shown for a player the file (or a session's lineup) calls
``name``, ``info(config)`` the teams' names, codes and colours as shown; every payload that
shows a name reads it through these (``hub.engine.shown``), and the engine announces
`RosterChanged` so the topics that show the team are rebuilt in every audience.

A substitution is told as a name: results belong to the seat (the scoring ranks seats), so the
seat's rows, past hands included, show the player who holds the seat now.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from hub.domain.config import TournamentConfig
from hub.domain.config.model import COLOUR_PATTERN
from hub.domain.console_event import MAX_NAME, MAX_NOTE
from hub.domain.errors import Rejection
from hub.engine.changes import RosterChanged

__all__ = ["Roster"]

COLOUR = re.compile(COLOUR_PATTERN)
# Who sits where: (table, seat, deal or None) -> (team, name as shown) or None.
Holder = Callable[[int, int, "int | None"], "tuple[Any, str] | None"]


def _text(command: Mapping[str, Any], key: str, limit: int, *, required: bool = False) -> str:
    value = command.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise Rejection("bad_request", f"roster '{key}' must be text of 1 to {limit} characters")
    return value.strip()


class Roster:
    """The corrections made so far: player names by (team, name in the file), team fields."""

    def __init__(self) -> None:
        self.players: dict[tuple[str, str], str] = {}
        self.teams: dict[str, dict[str, str]] = {}  # team -> {"name", "colour"} as corrected
        self._info: tuple[int, dict[str, dict[str, str]]] | None = None  # (id of config, info)

    def player(self, team: str, name: str) -> str:
        """The name shown for the player the file (or a lineup) calls ``name``."""
        return self.players.get((team, name), name) if self.players else name

    def info(self, config: TournamentConfig) -> dict[str, dict[str, str]]:
        """Each team's name, code and colour as shown (made once per correction)."""
        if self._info is None or self._info[0] != id(config):
            info = {
                t.id: {
                    "name": t.name,
                    "code": t.code,
                    "colour": t.colour,
                    **self.teams.get(t.id, {}),
                }
                for t in config.teams.values()
            }
            self._info = (id(config), info)
        return self._info[1]

    # ----------------------------------------------------------------- commands
    def check(
        self, command: Mapping[str, Any], config: TournamentConfig, holder: Holder, now: float
    ) -> dict[str, Any]:
        """The journal record of a roster command, checked (`Rejection` if not): ``team``, the
        player by ``seat`` (and ``table``), by ``table`` or by ``player`` (the name shown, or
        the file's: what an exported journal's line names) with
        their new ``name``, and/or the team's ``team_name`` or ``colour``; ``by`` required,
        ``reason`` optional."""
        team = command.get("team")
        if not isinstance(team, str) or team not in config.teams:
            known = ", ".join(sorted(config.teams))
            raise Rejection("bad_request", f"roster needs a 'team' of this event ({known})")
        record: dict[str, Any] = {"kind": "control", "op": "roster", "team": team}
        record["by"] = _text(command, "by", MAX_NAME, required=True)
        reason = _text(command, "reason", MAX_NOTE)
        if reason:
            record["reason"] = reason
        name = _text(command, "name", MAX_NAME)
        if name:
            shown = self._shown(command, config, holder, team)
            record["player"] = self._file_name(team, shown)
            record["was"], record["name"] = shown, name
        elif any(command.get(k) is not None for k in ("seat", "table", "player")):
            raise Rejection("bad_request", "roster: give the player's new 'name'")
        team_name = _text(command, "team_name", MAX_NAME)
        if team_name:
            record["team_name"] = team_name
        colour = command.get("colour")
        if colour is not None:
            if not isinstance(colour, str) or not COLOUR.fullmatch(colour):  # ("#75AADB\n": no)
                raise Rejection("bad_request", f"roster 'colour' is like #75AADB, not {colour!r}")
            record["colour"] = colour.upper()
        if not (name or team_name or colour):
            raise Rejection(
                "bad_request", "roster changes a player's 'name', the 'team_name' or the 'colour'"
            )
        record["at"] = now
        return record

    def _shown(
        self, command: Mapping[str, Any], config: TournamentConfig, holder: Holder, team: str
    ) -> str:
        """The name shown now of the player a command names (by seat, table or name)."""
        seat, table, player = command.get("seat"), command.get("table"), command.get("player")
        for key, value in (("seat", seat), ("table", table)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise Rejection("bad_request", f"roster '{key}' must be an integer")
        if seat is None and table is None and not isinstance(player, str):
            raise Rejection("bad_request", "roster names the player by 'seat', 'table' or 'player'")
        found = []
        for t in config.tables:
            for s in range(1, config.seats + 1):
                held = holder(t, s, None)
                if held is None or held[0].id != team:
                    continue
                if (
                    (seat is None or s == seat)
                    and (table is None or t == table)
                    and (player is None or player in (held[1], self._file_name(team, held[1])))
                ):
                    found.append(held[1])
        if not found:
            raise Rejection("bad_request", f"team {team} has no such player ({_where(command)})")
        return found[0]

    def _file_name(self, team: str, shown: str) -> str:
        for (t, base), name in self.players.items():
            if t == team and name == shown:
                return base
        return shown

    def apply(self, record: Mapping[str, Any]) -> tuple[RosterChanged, dict[str, Any]]:
        """Apply a roster record (checked, or from the journal): its engine event and the line
        of the corrections log (who, what, why)."""
        team = str(record["team"])
        what = []
        if "name" in record:
            self.players[(team, str(record["player"]))] = str(record["name"])
            what.append(f"{record.get('was', record['player'])} → {record['name']}")
        fields = self.teams.setdefault(team, {})
        if "team_name" in record:
            fields["name"] = str(record["team_name"])
            what.append(f"team name {record['team_name']}")
        if "colour" in record:
            fields["colour"] = str(record["colour"])
            what.append(f"colour {record['colour']}")
        self._info = None
        entry: dict[str, Any] = {
            "type": "roster",
            "team": team,
            "what": f"{team}: {', '.join(what)}",
        }
        entry.update(by=record.get("by"), reason=record.get("reason"), at=record.get("at"))
        return RosterChanged(team), entry

    # ----------------------------------------------------------------- snapshots
    def snapshot(self) -> dict[str, Any]:
        return {
            "players": [[t, base, name] for (t, base), name in self.players.items()],
            "teams": {t: dict(f) for t, f in self.teams.items()},
        }

    def restore(self, data: Mapping[str, Any] | None) -> None:
        data = data or {}
        self.players = {(str(t), str(b)): str(n) for t, b, n in data.get("players", ())}
        self.teams = {str(t): dict(f) for t, f in data.get("teams", {}).items()}
        self._info = None


def _where(command: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {command[k]!r}" for k in ("seat", "table", "player") if k in command)
