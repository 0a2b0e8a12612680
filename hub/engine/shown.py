"""What the families' payloads show alike: the teams and players as named now (the operator's
roster fixes), who sits where at a table, and a hand's action rows (made once per hand and
shared by its table and its travellers). Each family's builder lives with its family
(``hub.engine.families``); these are the pieces several of them read.
"""

from __future__ import annotations

import weakref
from typing import Any

from hub.domain.config import TournamentConfig
from hub.engine.roster import Roster
from hub.engine.tournament import HandState, TournamentState


def team_info(config: TournamentConfig, roster: Roster | None = None) -> dict[str, dict[str, str]]:
    """Each team's name, code and colour as shown (with the operator's ``roster`` fixes)."""
    if roster is not None:
        return roster.info(config)
    return {
        t.id: {"name": t.name, "code": t.code, "colour": t.colour} for t in config.teams.values()
    }


def named_seats(blocks: list[dict[str, Any]], roster: Roster | None) -> list[dict[str, Any]]:
    """Seat-ranking blocks with each player's name as shown (the roster's fixes): the boards
    keep the names of the file."""
    if roster is None or not roster.players:
        return blocks
    return [
        {
            **block,
            "rows": [
                {**row, "player": roster.player(row["team"], row["player"])}
                for row in block["rows"]
            ],
        }
        for block in blocks
    ]


def roster(state: TournamentState, table: int, deal: int | None = None) -> list[dict[str, Any]]:
    """Who sits where at ``table`` for ``deal`` (its session's draw and lineups; the seats
    are empty while the deal's stage has no teams yet)."""
    config = state.config
    info = team_info(config, state.roster)
    seats: list[dict[str, Any]] = []
    for s in range(1, config.seats + 1):
        held = state.seat_holder(table, s, deal)
        if held is None:
            seats.append({"seat": s, "team": None, "player": None})
            continue
        team, player = held
        seats.append({"seat": s, "team": team.id, **info[team.id], "player": player})
    return seats


def action_row(i: int, action: Any) -> dict[str, Any]:
    """One action as shown everywhere (rows are final once made: deltas share them)."""
    return {
        "i": i,
        "seat": action.seat,
        "kind": action.kind,
        "to": action.to,
        "added": action.added,
        "street": action.street,
    }


_ROWS: weakref.WeakKeyDictionary[Any, list[dict[str, Any]]] = weakref.WeakKeyDictionary()


def action_rows(hand: HandState) -> list[dict[str, Any]]:
    """The hand's action rows. A hand's actions only grow until a correction replaces the
    hand's engine, so the rows are made once per engine and shared by every payload that
    shows them (the live table, each traveller): equal rows are the same objects."""
    engine = hand.hand
    rows = _ROWS.get(engine)
    if rows is None:
        rows = _ROWS[engine] = []
    actions = engine.actions
    for i in range(len(rows), len(actions)):
        rows.append(action_row(i, actions[i]))
    return rows[: len(actions)]
