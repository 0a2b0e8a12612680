"""The tournament configuration: one TOML file, checked to the last key before anything runs.

A mistake in this file would surface mid-session as a wrong seat or a wrong score, so every
problem is reported up front as ``ConfigError(file, key, problem, line)`` naming the line and
the key, e.g. ``samples/x.toml:31: teams[2].colour: expected a colour like #75AADB, got
'blue'``. Array entries are numbered from 0 (``teams[0]`` is the first ``[[teams]]`` block).
The line is that of the key in the TOML text (for a missing key, that of its table's header;
for an element of an array, that of the array's key), and is left out when the text is not
given or the key cannot be found in it.

File shape (see ``samples/ifp6.toml``)::

    [tournament]
    id = "ifp-demo"            # letters, digits, "-", "_", "." (used in channel names)
    name = "IFP team event"
    seats = 6                  # seats per table; also teams and tables per group
    deals = 12                 # deals (deck orders) 1..deals in the session
    small_blind = 50
    big_blind = 100
    cap_bb = 100               # optional (100): the cap, in big blinds, every hand starts with
    betting = "pot-limit"      # optional: "pot-limit" (default) or "no-limit"
    release_delay = 0          # optional (0): seconds before public feeds show a finished deal
    game = "holdem"            # optional: "holdem" (default), "piecepack-holdem" (48 tiles),
                               # "mcr" (docs/mahjong.md) or "rps-poker" (docs/rps-poker.md;
                               # RPS Poker also takes betting = "limit" and [rps] dealer =
                               # "sequence" (default, duplicate) or "chosen")

    [[teams]]                  # one block per team
    id = "ARG"                 # referenced by groups and draw
    name = "Argentina"
    code = "ARG"               # optional (defaults to id): short label for overlays
    colour = "#75AADB"
    players = ["..."]          # players[i] plays at the i-th table of the team's group

    [[groups]]                 # tables of a group play the same deck orders
    id = "A"
    tables = [1, 2, 3, 4, 5, 6]
    teams = ["ARG", "BRA", "CHN", "DEN", "ECU", "FIN"]

    [draw]                     # either a generated draw, reproducible from its seed ...
    method = "cyclic"          # "cyclic" or "random"
    seed = 7
    # ... or the draw written out (what `duplicast draw` prints): team per seat 1..seats
    # [draw.tables]
    # "1" = ["ECU", "ARG", "CHN", "FIN", "BRA", "DEN"]

    [schedule]                 # optional; without it every table plays 1..deals in order
    method = "random"          # "random" (needs seed) or "sequential"
    seed = 11
    # ... or written out (what `duplicast decks --orders-out` prints):
    # [schedule.tables]
    # "1" = [3, 1, 2, ...]     # a permutation of 1..deals
    buttons = [1, 2, 3]        # optional: button seat per deal; default ((d - 1) % seats) + 1

    [decks]                    # optional; without it the hub knows no cards
    rehearsal_seed = "demo"    # seeded, reproducible orders: rehearsals only
    # file = "decks.enc"       # encrypted deck file (relative to this file; key from the
                               # environment variable DUPLICAST_DECK_KEY)

    [clock]                    # optional: the session clock (clock overlay, operator panel)
    on_time_up = "flag"        # "flag" (shown) or "enforce" (no new deal starts once time is up)
    levels = [                 # periods of play and breaks, in order; blinds do not change
      { minutes = 40 },        # (every table plays a deal with the same blinds)
      { minutes = 10, break = true },
      { minutes = 40, name = "Last level" },
    ]

    [scoring]                  # optional; without it: IFP points
    format = "imp"             # "ifp-points" (default), "imp" or "chips"
    unit = "big_blinds"        # imp only (default "chips"): what the IMP difference counts,
                               # "chips", "big_blinds" or a number of chips
    scale = "imp-scale.csv"    # imp only (default: the WBF scale): an IMP scale file, relative
                               # to this file (format in hub/domain/imp.py and docs/rules.md)

    [consoles]                 # optional allow-list: console name -> the one table it writes
    "table1" = 1               # names follow the rule of ids; tables must be in a group;
    "table1-backup" = 1        # a table may have several consoles (e.g. a backup pad)
    "table2" = 2               # without this section any console may write any table; with
                               # it, the engine refuses other consoles (``unknown_console``)

An event of several sessions and stages (see ``samples/ifp-event.toml`` and docs/rules.md)
adds::

    [[groups]]                 # a group of a later stage lists no teams: its stage fills it
    id = "F"
    tables = [13, 14, 15, 16, 17, 18]

    [[stages]]                 # in order; the first stage's groups list their teams
    id = "groups"
    name = "Group stage"       # optional (defaults to id)
    groups = ["A", "B"]

    [[stages]]
    id = "final"
    groups = ["F"]
    advance = { from = "groups", top_per_group = 3 }   # from: default the stage before;
                               # top_per_group (0): best N of each group, then best across groups

    [[sessions]]               # in order; deal ranges consecutive from 1 to tournament.deals
    id = "1"
    name = "Session 1"         # optional
    stage = "groups"           # optional when there is one stage
    deals = [1, 4]             # first and last deal of the session
    draw = { method = "random", seed = 7 }   # optional: this session's own seat draw (or
                               # tables = {...}); the first session of a filled stage needs one

    [[sessions.substitutions]] # optional: from this session on, `in` plays in place of `out`
    team = "ARG"
    out = "L. Gómez"
    in = "R. Benítez"

With sessions, ``tournament.deals`` counts every deal of the event, and ``[schedule]`` orders each
table's sessions one after the other (random within each session).

Generated draws and schedules need a seed: the hub must get the same seats every time it
reads the file. ``parse_config`` is pure (it takes the parsed data, the source text only to
number lines, and a function that reads the files the configuration names, such as an IMP
scale); ``hub.configfile.load_config`` reads the file.
"""

from __future__ import annotations

import difflib
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NoReturn

from hub.domain.clock import ON_TIME_UP, ClockSpec, Level
from hub.domain.draw import Draw, DrawError, make_draw, validate_draw
from hub.domain.event import Advance, DrawSpec, EventPlan, Session, Stage, Substitution
from hub.domain.imp import ScaleError, parse_scale
from hub.domain.mahjong import MCR_SCALE, WINDS, MahjongRules, PaymentRule, default_prevalent
from hub.domain.numbers import MAX_TOML_INT, find_bad_number
from hub.domain.schedule import (
    ScheduleError,
    default_buttons,
    random_deal_orders,
    sequential_deal_orders,
    session_deal_orders,
    validate_buttons,
    validate_deal_orders,
    validate_session_orders,
)
from hub.domain.scoring import DEFAULT_SCORING, FORMATS, ScoringFormat

BETTING = ("pot-limit", "no-limit")
# `[tournament] game`: what the tables play. hub.domain.pieces says what each hold'em game
# deals; docs/mahjong.md for "mcr", docs/rps-poker.md for "rps-poker".
GAMES = ("holdem", "piecepack-holdem", "mcr", "rps-poker")
# RPS Poker's dealer: his throws read from the deal's deck order (duplicate), or chosen at the
# table and revealed through the console (a plain game); docs/rps-poker.md.
RPS_DEALER = ("sequence", "chosen")
MAX_SEATS = 10
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_COLOUR = re.compile(r"^#[0-9A-Fa-f]{6}$")


# The engine's own console name: nobody else may write as it (see hub.engine.core).
RESERVED_CONSOLES = ("operator",)


class ConfigError(ValueError):
    """A problem in the tournament file: which file, which line (if known), which key, what."""

    def __init__(self, file: str, key: str, problem: str, line: int | None = None) -> None:
        where = file if line is None else f"{file}:{line}"
        super().__init__(f"{where}: {key}: {problem}")
        self.file = file
        self.key = key
        self.problem = problem
        self.line = line


@dataclass(frozen=True)
class Team:
    id: str
    name: str
    code: str
    colour: str
    players: tuple[str, ...]


@dataclass(frozen=True)
class Group:
    id: str
    tables: tuple[int, ...]
    teams: tuple[str, ...]


@dataclass(frozen=True)
class DeckSource:
    """Where the deck orders come from: an encrypted file, or a rehearsal seed."""

    file: str | None = None
    rehearsal_seed: str | None = None

    @property
    def rehearsal(self) -> bool:
        return self.rehearsal_seed is not None


@dataclass(frozen=True, kw_only=True)
class TournamentConfig:
    id: str
    name: str
    teams: Mapping[str, Team]
    groups: Mapping[str, Group]
    seats: int
    deals: int
    small_blind: int
    big_blind: int
    draw: Mapping[tuple[int, int], str]
    deal_orders: Mapping[int, tuple[int, ...]]
    buttons: Mapping[int, int]
    cap_bb: int = 100
    betting: str = "pot-limit"
    rps_dealer: str = "sequence"  # game "rps-poker": [rps] dealer
    decks: DeckSource | None = None
    release_delay: float = 0.0
    consoles: Mapping[str, int] | None = None  # console name -> its table; None: any console
    clock: ClockSpec | None = None  # the session clock; None: no clock
    scoring: ScoringFormat = DEFAULT_SCORING
    event: EventPlan | None = None  # [[stages]] and [[sessions]]; None: one session
    game: str = "holdem"  # [tournament] game (GAMES)
    mahjong: MahjongRules | None = None  # game "mcr": [mahjong] (payments, prevalent winds)

    @cached_property
    def plan(self) -> EventPlan:
        """The event's stages and sessions (one stage, one session of every deal by default)."""
        if self.event is not None:
            return self.event
        return EventPlan(
            stages=(Stage("main", self.name, tuple(self.groups)),),
            sessions=(Session("1", "Session 1", "main", 1, self.deals),),
        )

    @property
    def phased(self) -> bool:
        """The file describes several sessions or stages."""
        return self.event is not None

    def groups_playing(self, deal: int) -> list[Group]:
        """The groups that play ``deal`` (every group, unless the event has stages)."""
        if self.event is None:
            return list(self.groups.values())
        stage = self.event.stage_of(deal)
        return [self.groups[g] for g in stage.groups]

    @property
    def cap(self) -> int:
        """Chips every player has in play at the start of every hand."""
        return self.cap_bb * self.big_blind

    @property
    def pot_limit(self) -> bool:
        return self.betting == "pot-limit"

    @cached_property
    def tables(self) -> tuple[int, ...]:
        return tuple(sorted(t for group in self.groups.values() for t in group.tables))

    @cached_property
    def _group_by_table(self) -> dict[int, Group]:
        return {t: group for group in self.groups.values() for t in group.tables}

    @cached_property
    def _group_by_team(self) -> dict[str, Group]:
        return {team: group for group in self.groups.values() for team in group.teams}

    def group_of(self, table: int) -> Group:
        """The group a table belongs to (``KeyError`` for an unknown table)."""
        try:
            return self._group_by_table[table]
        except KeyError:
            raise KeyError(f"unknown table {table}") from None

    def group_of_team(self, team: str) -> Group:
        try:
            return self._group_by_team[team]
        except KeyError:
            raise KeyError(f"unknown team {team}") from None

    def player_at(self, table: int, team: str) -> str:
        """The name of ``team``'s player at ``table``."""
        group = self.group_of(table)
        return self.teams[team].players[group.tables.index(table)]

    def seat_holder(self, table: int, seat: int) -> tuple[Team, str]:
        """The team and the player name in ``seat`` of ``table``."""
        team = self.teams[self.draw[(table, seat)]]
        return team, self.player_at(table, team.id)

    def seat_of(self, table: int, team: str) -> int:
        """The seat of ``team``'s player at ``table``."""
        for seat in range(1, self.seats + 1):
            if self.draw.get((table, seat)) == team:
                return seat
        raise KeyError(f"team {team} has no seat at table {table}")

    def table_of_player(self, team: str, player: str) -> int:
        """The table where ``player`` of ``team`` plays."""
        index = self.teams[team].players.index(player)
        return self.group_of_team(team).tables[index]


ReadFile = Callable[[str], str]
"""Reads a file the configuration names (its path as written) and returns its text; raises
``OSError`` when it cannot."""


def parse_config(
    data: Mapping[str, Any],
    source: str = "<config>",
    text: str | None = None,
    read_file: ReadFile | None = None,
) -> TournamentConfig:
    """Check parsed TOML data and build the configuration (pure).

    ``text`` is the TOML source ``data`` was parsed from; given, errors carry line numbers.
    ``read_file`` reads the files the configuration names (an IMP scale); without it, naming
    one is an error.
    """
    return _Parser(source, text, read_file).parse(data)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Parser:
    def __init__(self, source: str, text: str | None = None, read: ReadFile | None = None) -> None:
        self.source = source
        self.source_text = text
        self.read = read

    def fail(self, key: str, problem: str) -> NoReturn:
        # The text is only scanned for lines once there is an error to place.
        text = self.source_text
        line = KeyLines(text).find(key_path(key)) if text is not None else None
        raise ConfigError(self.source, key, problem, line)

    # -- generic checks ---------------------------------------------------------------------

    def table(
        self, value: Any, key: str, required: Sequence[str], optional: Sequence[str] = ()
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(key, f"expected a table, got {_show(value)}")
        allowed = [*required, *optional]
        for name in value:
            if name not in allowed:
                close = difflib.get_close_matches(name, allowed, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                self.fail(_join(key, name), f"unknown key{hint}")
        for name in required:
            if name not in value:
                self.fail(_join(key, name), "missing")
        return value

    def mapping(self, value: Any, key: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(key, f"expected a table, got {_show(value)}")
        return value

    def integer(self, value: Any, key: str, minimum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"expected an integer, got {_show(value)}")
        if minimum is not None and value < minimum:
            self.fail(key, f"must be at least {minimum}, got {value}")
        return value

    def text(self, value: Any, key: str) -> str:
        if not isinstance(value, str):
            self.fail(key, f"expected a string, got {_show(value)}")
        if not value.strip():
            self.fail(key, "must not be empty")
        return value

    def identifier(self, value: Any, key: str) -> str:
        text = self.text(value, key)
        if not _ID.match(text):
            self.fail(key, f"expected letters, digits, '-', '_' or '.', got {_show(text)}")
        return text

    def array(self, value: Any, key: str) -> list[Any]:
        if not isinstance(value, list):
            self.fail(key, f"expected an array, got {_show(value)}")
        return value

    def seed(self, value: Any, key: str) -> int | str:
        if isinstance(value, bool) or not isinstance(value, int | str):
            self.fail(key, f"expected an integer or a string, got {_show(value)}")
        return value

    # -- sections ---------------------------------------------------------------------------

    def parse(self, data: Mapping[str, Any]) -> TournamentConfig:
        # TOML has `inf` and `nan` literals and unbounded integers: refused wherever they
        # stand, before any key's own check (a NaN passes every `<` and `>` test).
        bad = find_bad_number(data, max_int=MAX_TOML_INT)
        if bad is not None:
            self.fail(*bad)
        root = self.table(
            dict(data),
            "",
            ["tournament", "teams", "groups", "draw"],
            [
                "schedule",
                "decks",
                "consoles",
                "clock",
                "scoring",
                "stages",
                "sessions",
                "mahjong",
                "rps",
            ],
        )
        game = self.game(root["tournament"])
        blinds = ["small_blind", "big_blind"]
        t = self.table(
            root["tournament"],
            "tournament",
            ["id", "name", "seats", "deals", *(blinds if game != "mcr" else [])],
            ["cap_bb", "betting", "release_delay", "game", *(blinds if game == "mcr" else [])],
        )
        tid = self.identifier(t["id"], "tournament.id")
        name = self.text(t["name"], "tournament.name")
        seats = self.integer(t["seats"], "tournament.seats", 2)
        if seats > MAX_SEATS:
            self.fail("tournament.seats", f"at most {MAX_SEATS} seats, got {seats}")
        deals = self.integer(t["deals"], "tournament.deals", 1)
        if game == "mcr" and seats != 4:
            self.fail("tournament.seats", f"MCR mahjong is played by 4 seats, got {seats}")
        if game != "mcr" and "mahjong" in root:
            self.fail("mahjong", 'a [mahjong] section needs game = "mcr" in [tournament]')
        sb = self.integer(t.get("small_blind", 1), "tournament.small_blind", 1)
        bb = self.integer(t.get("big_blind", 1), "tournament.big_blind", 1)
        if sb > bb:
            self.fail("tournament.small_blind", f"{sb} is more than the big blind {bb}")
        cap_bb = self.integer(t.get("cap_bb", 100), "tournament.cap_bb", 2)
        betting = t.get("betting", "pot-limit")
        if betting == "limit" and game == "rps-poker":
            pass  # limit betting: RPS Poker only (the seed offers it; docs/rps-poker.md)
        elif betting not in BETTING:
            self.fail(
                "tournament.betting", f"expected 'pot-limit' or 'no-limit', got {_show(betting)}"
            )
        if game == "rps-poker" and seats < 3:
            self.fail("tournament.seats", "RPS Poker needs at least 3 seats (2 blinds, dealer)")
        rps_dealer = "sequence"
        if "rps" in root:
            if game != "rps-poker":
                self.fail("rps", 'an [rps] section needs game = "rps-poker"')
            r = self.table(root["rps"], "rps", [], ["dealer"])
            rps_dealer = r.get("dealer", "sequence")
            if rps_dealer not in RPS_DEALER:
                self.fail("rps.dealer", f"expected 'sequence' or 'chosen', got {_show(rps_dealer)}")
        delay = t.get("release_delay", 0)
        if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
            self.fail("tournament.release_delay", f"expected seconds >= 0, got {_show(delay)}")

        teams = self.teams(root["teams"])
        phased = "stages" in root or "sessions" in root
        groups = self.groups(root["groups"], teams, seats, phased)
        event = self.event(root, groups, teams, deals) if phased else None
        fixed = {g: group for g, group in groups.items() if group.teams}
        draw = self.draw(root["draw"], fixed, seats)
        tables = sorted(t for g in groups.values() for t in g.tables)
        if event is None:
            orders, buttons = self.schedule(root.get("schedule"), tables, deals, seats)
        else:
            ranges = {
                t: [s.deals for s in event.sessions_of(event.stage_of_group[g.id].id)]
                for g in groups.values()
                for t in g.tables
            }
            orders, buttons = self.schedule(root.get("schedule"), tables, deals, seats, ranges)
        decks = self.decks(root["decks"]) if "decks" in root else None
        consoles = self.consoles(root["consoles"], tables) if "consoles" in root else None
        clock = self.clock(root["clock"]) if "clock" in root else None
        scoring = DEFAULT_SCORING
        if "scoring" in root and game != "mcr":
            scoring = self.scoring(root["scoring"], bb)
        mahjong = None
        if game == "mcr":
            if event is not None:
                self.fail(
                    "sessions", "a mahjong event of several sessions or stages is not supported yet"
                )
            mahjong = self.mahjong(root.get("mahjong", {}), deals)
            scoring = self.mcr_scoring(root.get("scoring", {}))
        if event is not None and scoring.name != "ifp-points":
            self.fail(
                "scoring.format",
                f"{scoring.name!r} scoring with [[stages]]/[[sessions]] is not supported yet: "
                "an event of several sessions or stages is scored in IFP points",
            )
        return TournamentConfig(
            id=tid,
            name=name,
            teams=teams,
            groups=groups,
            seats=seats,
            deals=deals,
            small_blind=sb,
            big_blind=bb,
            cap_bb=cap_bb,
            betting=betting,
            game=game,
            rps_dealer=rps_dealer,
            draw=draw,
            deal_orders=orders,
            buttons=buttons,
            decks=decks,
            release_delay=float(delay),
            consoles=consoles,
            clock=clock,
            scoring=scoring,
            event=event,
            mahjong=mahjong,
        )

    def clock(self, value: Any) -> ClockSpec:
        c = self.table(value, "clock", ["levels"], ["on_time_up"])
        on_time_up = c.get("on_time_up", "flag")
        if on_time_up not in ON_TIME_UP:
            self.fail("clock.on_time_up", f"expected 'flag' or 'enforce', got {_show(on_time_up)}")
        entries = self.array(c["levels"], "clock.levels")
        if not entries:
            self.fail("clock.levels", "no levels")
        levels = []
        for i, entry in enumerate(entries):
            key = f"clock.levels[{i}]"
            e = self.table(entry, key, ["minutes"], ["break", "name"])
            minutes = e["minutes"]
            if isinstance(minutes, bool) or not isinstance(minutes, int | float) or minutes <= 0:
                self.fail(f"{key}.minutes", f"expected minutes > 0, got {_show(minutes)}")
            is_break = e.get("break", False)
            if not isinstance(is_break, bool):
                self.fail(f"{key}.break", f"expected true or false, got {_show(is_break)}")
            name = self.text(e["name"], f"{key}.name") if "name" in e else None
            levels.append(Level(float(minutes) * 60, is_break, name))
        return ClockSpec(tuple(levels), on_time_up)

    def teams(self, value: Any) -> dict[str, Team]:
        entries = self.array(value, "teams")
        if not entries:
            self.fail("teams", "no teams")
        teams: dict[str, Team] = {}
        for i, entry in enumerate(entries):
            key = f"teams[{i}]"
            e = self.table(entry, key, ["id", "name", "colour", "players"], ["code"])
            tid = self.identifier(e["id"], f"{key}.id")
            if tid in teams:
                self.fail(f"{key}.id", f"team {tid} defined twice")
            colour = e["colour"]
            if not isinstance(colour, str) or not _COLOUR.match(colour):
                self.fail(f"{key}.colour", f"expected a colour like #75AADB, got {_show(colour)}")
            players = self.array(e["players"], f"{key}.players")
            names = tuple(self.text(p, f"{key}.players[{j}]") for j, p in enumerate(players))
            teams[tid] = Team(
                id=tid,
                name=self.text(e["name"], f"{key}.name"),
                code=self.text(e.get("code", tid), f"{key}.code"),
                colour=colour,
                players=names,
            )
        return teams

    def groups(
        self, value: Any, teams: Mapping[str, Team], seats: int, phased: bool = False
    ) -> dict[str, Group]:
        entries = self.array(value, "groups")
        if not entries:
            self.fail("groups", "no groups")
        groups: dict[str, Group] = {}
        table_owner: dict[int, str] = {}
        team_owner: dict[str, str] = {}
        for i, entry in enumerate(entries):
            key = f"groups[{i}]"
            e = self.table(entry, key, ["id", "tables"], ["teams"])
            if "teams" not in e and not phased:
                self.fail(f"{key}.teams", "missing")
            gid = self.identifier(e["id"], f"{key}.id")
            if gid in groups:
                self.fail(f"{key}.id", f"group {gid} defined twice")
            tables = self.array(e["tables"], f"{key}.tables")
            for j, t in enumerate(tables):
                self.integer(t, f"{key}.tables[{j}]", 1)
                if t in table_owner:
                    self.fail(
                        f"{key}.tables[{j}]", f"table {t} is already in group {table_owner[t]}"
                    )
                table_owner[t] = gid
            if len(tables) != seats:
                self.fail(
                    f"{key}.tables",
                    f"a group needs as many tables as seats ({seats}), got {len(tables)}",
                )
            if "teams" not in e:  # filled by its stage's advance rule (checked with the stages)
                groups[gid] = Group(gid, tuple(tables), ())
                continue
            members = self.array(e["teams"], f"{key}.teams")
            for j, team in enumerate(members):
                self.text(team, f"{key}.teams[{j}]")
                if team not in teams:
                    self.fail(f"{key}.teams[{j}]", f"team {team} is not defined in [[teams]]")
                if team in team_owner:
                    self.fail(
                        f"{key}.teams[{j}]", f"team {team} is already in group {team_owner[team]}"
                    )
                team_owner[team] = gid
            if len(members) != seats:
                self.fail(
                    f"{key}.teams",
                    f"a group needs as many teams as seats ({seats}), got {len(members)}",
                )
            groups[gid] = Group(gid, tuple(tables), tuple(members))
        for i, team in enumerate(teams.values()):
            if team.id not in team_owner:
                self.fail(f"teams[{i}]", f"team {team.id} is in no group")
            expected = len(groups[team_owner[team.id]].tables)
            if len(team.players) != expected:
                self.fail(
                    f"teams[{i}].players",
                    f"team {team.id} plays at {expected} tables of group {team_owner[team.id]}: "
                    f"expected {expected} players, got {len(team.players)}",
                )
        return groups

    def event(
        self,
        root: Mapping[str, Any],
        groups: Mapping[str, Group],
        teams: Mapping[str, Team],
        deals: int,
    ) -> EventPlan:
        """``[[stages]]`` and ``[[sessions]]``: the event's stages and their sessions."""
        if "sessions" not in root:
            self.fail("sessions", "missing (an event with stages is played in sessions)")
        stages = self.stages(root.get("stages"), groups)
        by_id = {st.id: st for st in stages}
        entries = self.array(root["sessions"], "sessions")
        if not entries:
            self.fail("sessions", "no sessions")
        sessions: list[Session] = []
        lineups = {tid: list(team.players) for tid, team in teams.items()}
        next_deal = 1
        for i, entry in enumerate(entries):
            key = f"sessions[{i}]"
            e = self.table(entry, key, ["id", "deals"], ["name", "stage", "draw", "substitutions"])
            sid = self.identifier(e["id"], f"{key}.id")
            if any(x.id == sid for x in sessions):
                self.fail(f"{key}.id", f"session {sid} defined twice")
            if "stage" in e:
                stage_id = self.text(e["stage"], f"{key}.stage")
                if stage_id not in by_id:
                    self.fail(f"{key}.stage", f"stage {stage_id} is not defined in [[stages]]")
            elif len(stages) == 1:
                stage_id = stages[0].id
            else:
                self.fail(f"{key}.stage", "missing (the event has several stages)")
            stage = by_id[stage_id]
            if sessions and stages.index(by_id[sessions[-1].stage]) > stages.index(stage):
                self.fail(f"{key}.stage", f"stage {stage_id} comes before {sessions[-1].stage}")
            if (
                sessions
                and sessions[-1].stage != stage_id
                and any(x.stage == stage_id for x in sessions)
            ):
                self.fail(
                    f"{key}.stage", f"the sessions of stage {stage_id} must follow each other"
                )
            span = self.array(e["deals"], f"{key}.deals")
            if len(span) != 2:
                self.fail(f"{key}.deals", "expected [first, last]")
            first = self.integer(span[0], f"{key}.deals[0]", 1)
            last = self.integer(span[1], f"{key}.deals[1]", first)
            if first != next_deal:
                self.fail(f"{key}.deals", f"expected the session to start at deal {next_deal}")
            if last > deals:
                self.fail(f"{key}.deals", f"deal {last} is beyond tournament.deals ({deals})")
            next_deal = last + 1
            first_of_stage = not any(x.stage == stage_id for x in sessions)
            spec = self.session_draw(e.get("draw"), f"{key}.draw", stage, groups)
            if first_of_stage and stage.advance is not None and (spec is None or not spec.method):
                self.fail(
                    f"{key}.draw",
                    f"stage {stage_id} is filled by its advance rule: its first session needs a "
                    "generated draw (method and seed)",
                )
            subs = self.substitutions(e.get("substitutions", []), f"{key}.substitutions", lineups)
            name = self.text(e["name"], f"{key}.name") if "name" in e else f"Session {sid}"
            sessions.append(Session(sid, name, stage_id, first, last, spec, subs))
        if next_deal != deals + 1:
            self.fail("sessions", f"deals {next_deal}..{deals} are in no session")
        for st in stages:
            if not any(x.stage == st.id for x in sessions):
                self.fail("stages", f"stage {st.id} has no session")
        return EventPlan(tuple(stages), tuple(sessions), explicit=True)

    def stages(self, value: Any, groups: Mapping[str, Group]) -> list[Stage]:
        if value is None:
            for gid, group in groups.items():
                if not group.teams:
                    self.fail("groups", f"group {gid} has no teams and no stage fills it")
            return [Stage("main", "Main", tuple(groups))]
        entries = self.array(value, "stages")
        if not entries:
            self.fail("stages", "no stages")
        stages: list[Stage] = []
        owner: dict[str, str] = {}
        for i, entry in enumerate(entries):
            key = f"stages[{i}]"
            e = self.table(entry, key, ["id", "groups"], ["name", "advance"])
            sid = self.identifier(e["id"], f"{key}.id")
            if any(st.id == sid for st in stages):
                self.fail(f"{key}.id", f"stage {sid} defined twice")
            listed = self.array(e["groups"], f"{key}.groups")
            if not listed:
                self.fail(f"{key}.groups", "no groups")
            for j, gid in enumerate(listed):
                self.text(gid, f"{key}.groups[{j}]")
                if gid not in groups:
                    self.fail(f"{key}.groups[{j}]", f"group {gid} is not defined in [[groups]]")
                if gid in owner:
                    self.fail(f"{key}.groups[{j}]", f"group {gid} is already in stage {owner[gid]}")
                owner[gid] = sid
                if bool(groups[gid].teams) != (i == 0):
                    self.fail(
                        f"{key}.groups[{j}]",
                        f"group {gid}: the first stage's groups list their teams, a later "
                        "stage's groups are filled by its advance rule (no teams)",
                    )
            advance = None
            if "advance" in e:
                if i == 0:
                    self.fail(f"{key}.advance", "the first stage has no stage before it")
                advance = self.advance(e["advance"], f"{key}.advance", stages, groups, listed)
            elif i > 0:
                self.fail(f"{key}.advance", "missing (how are this stage's groups filled?)")
            name = self.text(e["name"], f"{key}.name") if "name" in e else sid
            stages.append(Stage(sid, name, tuple(listed), advance))
        for gid in groups:
            if gid not in owner:
                self.fail("stages", f"group {gid} is in no stage")
        return stages

    def advance(
        self,
        value: Any,
        key: str,
        earlier: Sequence[Stage],
        groups: Mapping[str, Group],
        targets: Sequence[str],
    ) -> Advance:
        a = self.table(value, key, [], ["from", "top_per_group"])
        source = earlier[-1].id
        if "from" in a:
            source = self.text(a["from"], f"{key}.from")
            if source not in [st.id for st in earlier]:
                self.fail(f"{key}.from", f"stage {source} is not an earlier stage")
        top = self.integer(a.get("top_per_group", 0), f"{key}.top_per_group", 0)
        src = next(st for st in earlier if st.id == source)
        available = sum(len(groups[g].tables) for g in src.groups)
        needed = sum(len(groups[g].tables) for g in targets)
        if needed > available:
            self.fail(key, f"{needed} teams advance but stage {source} has only {available}")
        if top * len(src.groups) > needed:
            self.fail(
                f"{key}.top_per_group",
                f"top {top} of {len(src.groups)} groups is more than the {needed} places",
            )
        return Advance(source, top)

    def session_draw(
        self, value: Any, key: str, stage: Stage, groups: Mapping[str, Group]
    ) -> DrawSpec | None:
        if value is None:
            return None
        d = self.table(value, key, [], ["method", "seed", "tables"])
        if "tables" in d:
            if "method" in d or "seed" in d:
                self.fail(key, "give either method and seed, or tables, not both")
            if stage.advance is not None:
                self.fail(f"{key}.tables", "the teams of a filled stage are not known in advance")
            part = {g: groups[g] for g in stage.groups}
            written = self.written_draw(d["tables"], part, self.seats_of(groups), key)
            return DrawSpec(tables=written)
        method = d.get("method")
        if method not in ("random", "cyclic"):
            self.fail(f"{key}.method", f"expected 'random' or 'cyclic', got {_show(method)}")
        if "seed" not in d:
            self.fail(f"{key}.seed", "missing (a generated draw must be the same at every read)")
        return DrawSpec(method=method, seed=self.seed(d["seed"], f"{key}.seed"))

    @staticmethod
    def seats_of(groups: Mapping[str, Group]) -> int:
        return len(next(iter(groups.values())).tables)

    def substitutions(
        self, value: Any, key: str, lineups: dict[str, list[str]]
    ) -> tuple[Substitution, ...]:
        subs: list[Substitution] = []
        for i, entry in enumerate(self.array(value, key)):
            k = f"{key}[{i}]"
            e = self.table(entry, k, ["team", "out", "in"])
            team = self.text(e["team"], f"{k}.team")
            if team not in lineups:
                self.fail(f"{k}.team", f"team {team} is not defined in [[teams]]")
            out = self.text(e["out"], f"{k}.out")
            into = self.text(e["in"], f"{k}.in")
            if out not in lineups[team]:
                self.fail(f"{k}.out", f"{out} does not play for {team} at this session")
            if into in lineups[team]:
                self.fail(f"{k}.in", f"{into} already plays for {team}")
            lineups[team][lineups[team].index(out)] = into
            subs.append(Substitution(team, out, into))
        return tuple(subs)

    def draw(self, value: Any, groups: Mapping[str, Group], seats: int) -> Draw:
        d = self.table(value, "draw", [], ["method", "seed", "tables"])
        if "tables" in d:
            if "method" in d or "seed" in d:
                self.fail("draw", "give either method and seed, or tables, not both")
            return self.written_draw(d["tables"], groups, seats)
        if "method" not in d:
            self.fail("draw", "expected method (with seed) or tables")
        method = d["method"]
        if method not in ("random", "cyclic"):
            self.fail("draw.method", f"expected 'random' or 'cyclic', got {_show(method)}")
        if "seed" not in d:
            self.fail("draw.seed", "missing (a generated draw must be the same at every read)")
        rng = random.Random(self.seed(d["seed"], "draw.seed"))
        draw: Draw = {}
        for group in groups.values():
            draw.update(make_draw(method, group.teams, group.tables, seats, rng))
        return draw

    def written_draw(
        self, value: Any, groups: Mapping[str, Group], seats: int, where: str = "draw"
    ) -> Draw:
        tables = self.mapping(value, f"{where}.tables")
        group_of = {t: g for g in groups.values() for t in g.tables}
        draw: Draw = {}
        for name, row in tables.items():
            key = f"{where}.tables.{name}"
            table = _table_number(name)
            if table is None:
                self.fail(key, "a table number is expected as key")
            if table not in group_of:
                self.fail(key, f"table {table} is not in any group")
            teams = self.array(row, key)
            if len(teams) != seats:
                self.fail(key, f"expected a team for each of the {seats} seats, got {len(teams)}")
            for seat, team in enumerate(teams, start=1):
                draw[(table, seat)] = self.text(team, f"{key}[{seat - 1}]")
        for group in groups.values():
            part = {k: v for k, v in draw.items() if k[0] in group.tables}
            try:
                validate_draw(part, group.teams, group.tables, seats)
            except DrawError as exc:
                self.fail(f"{where}.tables", f"group {group.id}: {exc}")
        return draw

    def schedule(
        self,
        value: Any,
        tables: Sequence[int],
        deals: int,
        seats: int,
        ranges: Mapping[int, Sequence[range]] | None = None,
    ) -> tuple[dict[int, tuple[int, ...]], dict[int, int]]:
        """Deal orders and buttons; ``ranges`` (events with sessions): each table's sessions."""

        def in_order() -> dict[int, tuple[int, ...]]:
            if ranges is None:
                return sequential_deal_orders(tables, deals)
            return session_deal_orders(ranges, None)

        if value is None:
            return in_order(), default_buttons(deals, seats)
        s = self.table(value, "schedule", [], ["method", "seed", "tables", "buttons"])
        orders: dict[int, tuple[int, ...]]
        if "tables" in s:
            if "method" in s or "seed" in s:
                self.fail("schedule", "give either method (and seed), or tables, not both")
            orders = self.written_orders(s["tables"])
            try:
                if ranges is None:
                    validate_deal_orders(orders, tables, deals)
                else:
                    validate_session_orders(orders, ranges)
            except ScheduleError as exc:
                self.fail("schedule.tables", str(exc))
        elif s.get("method") == "random":
            if "seed" not in s:
                self.fail("schedule.seed", "missing (random orders must be the same at every read)")
            rng = random.Random(self.seed(s["seed"], "schedule.seed"))
            if ranges is None:
                orders = random_deal_orders(tables, deals, rng)
            else:
                orders = session_deal_orders(ranges, rng)
        elif s.get("method") == "sequential":
            if "seed" in s:
                self.fail("schedule.seed", "a sequential schedule takes no seed")
            orders = in_order()
        elif "method" in s:
            self.fail(
                "schedule.method", f"expected 'random' or 'sequential', got {_show(s['method'])}"
            )
        else:
            orders = in_order()
        buttons = default_buttons(deals, seats)
        if "buttons" in s:
            listed = self.array(s["buttons"], "schedule.buttons")
            for i, b in enumerate(listed):
                self.integer(b, f"schedule.buttons[{i}]")
            if len(listed) != deals:
                self.fail(
                    "schedule.buttons", f"expected one button per deal ({deals}), got {len(listed)}"
                )
            buttons = {deal: b for deal, b in enumerate(listed, start=1)}
            try:
                validate_buttons(buttons, deals, seats)
            except ScheduleError as exc:
                self.fail("schedule.buttons", str(exc))
        return orders, buttons

    def written_orders(self, value: Any) -> dict[int, tuple[int, ...]]:
        rows = self.mapping(value, "schedule.tables")
        orders: dict[int, tuple[int, ...]] = {}
        for name, row in rows.items():
            key = f"schedule.tables.{name}"
            table = _table_number(name)
            if table is None:
                self.fail(key, "a table number is expected as key")
            listed = self.array(row, key)
            orders[table] = tuple(self.integer(d, f"{key}[{i}]") for i, d in enumerate(listed))
        return orders

    def decks(self, value: Any) -> DeckSource:
        d = self.table(value, "decks", [], ["file", "rehearsal_seed"])
        if ("file" in d) == ("rehearsal_seed" in d):
            self.fail("decks", "expected exactly one of file or rehearsal_seed")
        if "file" in d:
            return DeckSource(file=self.text(d["file"], "decks.file"))
        seed = self.seed(d["rehearsal_seed"], "decks.rehearsal_seed")
        return DeckSource(rehearsal_seed=str(seed))

    def scoring(self, value: Any, big_blind: int) -> ScoringFormat:
        d = self.table(value, "scoring", [], ["format", "unit", "scale"])
        name = d.get("format", "ifp-points")
        if name not in FORMATS:
            expected = ", ".join(repr(f) for f in FORMATS)
            self.fail("scoring.format", f"expected one of {expected}, got {_show(name)}")
        if name != "imp":
            for key in ("unit", "scale"):
                if key in d:
                    self.fail(f"scoring.{key}", f"only format 'imp' takes a {key}")
            return ScoringFormat(name=name)
        unit_value = d.get("unit", "chips")
        if unit_value == "chips":
            unit, unit_name = 1, "chips"
        elif unit_value == "big_blinds":
            unit, unit_name = big_blind, "big blinds"
        elif isinstance(unit_value, int) and not isinstance(unit_value, bool) and unit_value >= 1:
            unit, unit_name = unit_value, f"{unit_value} chips"
        else:
            self.fail(
                "scoring.unit",
                "expected 'chips', 'big_blinds' or a number of chips >= 1, "
                f"got {_show(unit_value)}",
            )
        if "scale" not in d:
            return ScoringFormat(name="imp", unit=unit, unit_name=unit_name)
        path = self.text(d["scale"], "scoring.scale")
        if self.read is None:
            self.fail("scoring.scale", "a scale file is read only when the tournament file is")
        try:
            scale = parse_scale(self.read(path), path)
        except OSError as exc:
            self.fail("scoring.scale", f"cannot read {path} ({exc.strerror or exc})")
        except UnicodeDecodeError:
            self.fail("scoring.scale", f"{path} is not UTF-8 text")
        except ScaleError as exc:
            self.fail("scoring.scale", f"{path}: {exc}")
        return ScoringFormat(name="imp", unit=unit, unit_name=unit_name, scale=scale)

    def game(self, tournament: Any) -> str:
        game = tournament.get("game", "holdem") if isinstance(tournament, Mapping) else "holdem"
        if game not in GAMES:
            expected = ", ".join(repr(g) for g in GAMES)
            self.fail("tournament.game", f"expected one of {expected}, got {_show(game)}")
        return str(game)

    def mahjong(self, value: Any, deals: int) -> MahjongRules:
        m = self.table(value, "mahjong", [], ["base", "min_fan", "prevalent"])
        rule = PaymentRule(
            base=self.integer(m.get("base", 8), "mahjong.base", 0),
            min_fan=self.integer(m.get("min_fan", 8), "mahjong.min_fan", 1),
        )
        prevalent = default_prevalent(deals)
        if "prevalent" in m:
            listed = self.array(m["prevalent"], "mahjong.prevalent")
            if len(listed) != deals:
                self.fail(
                    "mahjong.prevalent",
                    f"expected one prevalent wind per deal ({deals}), got {len(listed)}",
                )
            for i, wind in enumerate(listed):
                if wind not in WINDS:
                    self.fail(
                        f"mahjong.prevalent[{i}]", f"expected E, S, W or N, got {_show(wind)}"
                    )
            prevalent = {deal: str(wind) for deal, wind in enumerate(listed, start=1)}
        return MahjongRules(rule, prevalent)

    def mcr_scoring(self, value: Any) -> ScoringFormat:
        """Scoring of a mahjong tournament: IMPs in MCR points by default, each against the
        average of all the tables (the seed's rule), teams by their total per hand."""
        d = self.table(value, "scoring", [], ["format", "scale", "average", "teams"])
        name = d.get("format", "imp")
        if name not in FORMATS:
            expected = ", ".join(repr(f) for f in FORMATS)
            self.fail("scoring.format", f"expected one of {expected}, got {_show(name)}")
        average = d.get("average", "all")
        if average not in ("all", "others"):
            self.fail("scoring.average", f"expected 'all' or 'others', got {_show(average)}")
        teams = d.get("teams", "totals")
        if teams not in ("totals", "players"):
            self.fail("scoring.teams", f"expected 'totals' or 'players', got {_show(teams)}")
        if name != "imp":
            return ScoringFormat(name=name, unit_name="points")
        scale = MCR_SCALE
        if "scale" in d:
            scale = self.scoring({"format": "imp", "scale": d["scale"]}, 1).scale
        return ScoringFormat(
            name="imp", unit=1, unit_name="points", scale=scale, average=average, teams=teams
        )

    def consoles(self, value: Any, tables: Sequence[int]) -> dict[str, int]:
        entries = self.mapping(value, "consoles")
        if not entries:
            self.fail("consoles", "no consoles (leave the section out to allow any console)")
        consoles: dict[str, int] = {}
        for name, table in entries.items():
            key = f"consoles.{name}"
            if not _ID.match(name):
                self.fail(key, f"expected letters, digits, '-', '_' or '.', got {_show(name)}")
            if name in RESERVED_CONSOLES:
                self.fail(key, f"{name!r} is the hub's own console")
            self.integer(table, key, 1)
            if table not in tables:
                self.fail(key, f"table {table} is not in any group")
            consoles[name] = table
        unwritable = sorted(set(tables) - set(consoles.values()))
        if unwritable:
            self.fail(
                "consoles",
                f"table {unwritable[0]} has no console: nothing could be entered there",
            )
        return consoles


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _table_number(name: str) -> int | None:
    return int(name) if re.fullmatch(r"[1-9][0-9]*", name) else None


# -- line numbers -----------------------------------------------------------------------------
#
# tomllib gives values without positions, so errors find their line in the text itself. The
# locator below is not a TOML parser: it trusts that the text is valid TOML (tomllib accepted it)
# and only follows headers, keys and the extent of values (strings, multi-line arrays, inline
# tables, comments) to know which line defines which key path.

KeyPath = tuple[str | int, ...]
_KEY_TOKEN = re.compile(r"\[(\d+)\]|([^.\[\]]+)")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "e": "\x1b", '"': '"'}
_ESCAPES["\\"] = "\\"


def key_path(key: str) -> KeyPath:
    """``teams[2].players[0]`` -> ``("teams", 2, "players", 0)``; ``"-"`` (the file) -> ``()``."""
    if key in ("", "-"):
        return ()
    path: list[str | int] = []
    for match in _KEY_TOKEN.finditer(key):
        index, name = match.groups()
        path.append(int(index) if index is not None else name)
    return tuple(path)


class KeyLines:
    """Where each key path of a TOML text is defined: ``find(("teams", 2, "colour"))`` -> 31.

    Paths are as tomllib builds them: ``[[teams]]`` blocks are indexed from 0, keys of
    ``[a.b]`` and dotted keys ``a.b = 1`` nest, quoted keys are unquoted. A header also
    defines the tables it implies (``[draw.tables]`` defines ``draw`` unless ``[draw]`` does).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines: dict[KeyPath, int] = {}
        self.implied: dict[KeyPath, int] = {}
        self._arrays: dict[KeyPath, int] = {}  # array-of-tables path -> blocks seen so far
        self._pos = 0
        self._line = 1
        try:
            self._scan()
        except (IndexError, ValueError):  # not the TOML it should be: keep what was found
            pass

    def find(self, path: KeyPath) -> int | None:
        """The line of ``path``, else of its closest enclosing key or table; None if none."""
        for end in range(len(path), 0, -1):
            part = path[:end]
            if part in self.lines:
                return self.lines[part]
            if part in self.implied:
                return self.implied[part]
        return None

    # -- scanning ---------------------------------------------------------------------------

    def _peek(self, n: int = 1) -> str:
        return self.text[self._pos : self._pos + n]

    def _advance(self, n: int = 1) -> None:
        self._line += self.text.count("\n", self._pos, self._pos + n)
        self._pos += n

    def _skip_blanks(self) -> None:
        while self._peek() in (" ", "\t"):
            self._pos += 1

    def _skip_to_line_end(self) -> None:
        end = self.text.find("\n", self._pos)
        self._pos = len(self.text) if end < 0 else end

    def _scan(self) -> None:
        table: KeyPath = ()
        while self._pos < len(self.text):
            self._skip_blanks()
            char = self._peek()
            if char in ("\n", "\r"):
                self._advance()
            elif char == "#":
                self._skip_to_line_end()
            elif char == "[":
                table = self._header()
            else:
                line = self._line
                keys = self._key()
                self._skip_blanks()
                if self._peek() != "=":
                    raise ValueError("expected '='")
                self._advance()
                for end in range(1, len(keys)):
                    self.implied.setdefault(table + keys[:end], line)
                self.lines[table + keys] = line
                self._value()

    def _header(self) -> KeyPath:
        line = self._line
        array = self._peek(2) == "[["
        self._advance(2 if array else 1)
        self._skip_blanks()
        keys = self._key()
        self._skip_blanks()
        self._advance(2 if array else 1)  # "]]" or "]"
        path: list[str | int] = []
        for i, name in enumerate(keys):
            path.append(name)
            if array and i == len(keys) - 1:
                here = tuple(path)
                count = self._arrays.get(here, 0)
                self._arrays[here] = count + 1
                self.lines.setdefault(here, line)
                path.append(count)
            elif tuple(path) in self._arrays:
                path.append(self._arrays[tuple(path)] - 1)  # inside the latest block
            elif i < len(keys) - 1:
                self.implied.setdefault(tuple(path), line)
        self.lines[tuple(path)] = line
        return tuple(path)

    def _key(self) -> tuple[str, ...]:
        keys: list[str] = []
        while True:
            self._skip_blanks()
            char = self._peek()
            if char == '"':
                keys.append(self._basic_string())
            elif char == "'":
                end = self.text.index("'", self._pos + 1)
                keys.append(self.text[self._pos + 1 : end])
                self._pos = end + 1
            else:
                match = _BARE.match(self.text, self._pos)
                if match is None:
                    raise ValueError("expected a key")
                keys.append(match.group())
                self._pos = match.end()
            self._skip_blanks()
            if self._peek() != ".":
                return tuple(keys)
            self._pos += 1

    def _basic_string(self) -> str:
        """A one-line "..." string at the cursor, unescaped; the cursor moves past it."""
        out: list[str] = []
        pos = self._pos + 1
        while self.text[pos] != '"':
            char = self.text[pos]
            if char == "\\":
                code = self.text[pos + 1]
                if code in ("u", "U"):
                    size = 4 if code == "u" else 8
                    out.append(chr(int(self.text[pos + 2 : pos + 2 + size], 16)))
                    pos += 2 + size
                    continue
                out.append(_ESCAPES.get(code, code))
                pos += 2
                continue
            out.append(char)
            pos += 1
        self._pos = pos + 1
        return "".join(out)

    def _value(self) -> None:
        """Move past the value at the cursor, to the end of the line where it ends."""
        depth = 0
        while self._pos < len(self.text):
            char = self._peek()
            if char == "\n":
                if depth == 0:
                    return
                self._advance()
            elif char == "#":
                self._skip_to_line_end()
            elif self._peek(3) in ('"""', "'''"):
                quote = self._peek(3)
                start = self._pos + 3
                end = self._closing(quote, start)
                while self.text[end + 3 : end + 4] == quote[0]:  # up to two quotes inside
                    end += 1
                self._advance(end + 3 - self._pos)
            elif char == '"':
                self._advance(self._closing('"', self._pos + 1) + 1 - self._pos)
            elif char == "'":
                self._advance(self.text.index("'", self._pos + 1) + 1 - self._pos)
            else:
                if char in "[{":
                    depth += 1
                elif char in "]}":
                    depth -= 1
                self._pos += 1

    def _closing(self, quote: str, pos: int) -> int:
        """Where ``quote`` closes a string whose content starts at ``pos``."""
        if quote.startswith("'"):
            return self.text.index(quote, pos)
        while True:
            if self.text[pos] == "\\":
                pos += 2
            elif self.text.startswith(quote, pos):
                return pos
            else:
                pos += 1
