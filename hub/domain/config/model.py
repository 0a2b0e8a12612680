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
    players = ["..."]          # players[i] plays at the i-th table of the team's group;
                               # names are shown as written: no blank at either end, no
                               # control or bidi character, no two of a team that read the
                               # same (NFC, blanks); two that differ by case: a warning

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
    method = "blocks"          # "blocks" (release-aware, needs seed), "random" (independent
    seed = 11                  # orders, needs seed) or "sequential"; random and sequential
                               # put two tables on one deal in one round: a warning
    # ... or written out (what `duplicast decks --orders-out` prints):
    # [schedule.tables]
    # "1" = [3, 1, 2, ...]     # a permutation of 1..deals; two tables of a group on one
                               # deal in one round: loads, with a warning naming them
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

    [broadcast]                # optional: the table cameras, for the edit (docs/edit.md)
    fps = 25                   # the cameras' frame rate (default 25): 23.976, 24, 25, 29.97,
                               # 30, 50, 59.94 or 60 (non-drop-frame timecode)
    sync = 2026-11-25T20:00:00+01:00   # a moment of the hub's clock, with its UTC offset ...
    delay = "20m"              # optional: the program feed (play replayed this much later,
                               # never a deal before its release): seconds, or "90s", "20m",
                               # "1h30m"; without it there is no program feed

    [broadcast.cameras]        # ... and the timecode each table's camera showed then
    "1" = "10:00:00:00"        # tables left out have no camera (no track in the edit);
    "2" = "09:59:58:12"        # without cameras: every table, UTC time of day

    [broadcast.outputs]        # optional, with delay: more program outputs, each its own
    venue = "5m"               # delay (same forms); ?feed=program&output=venue reads one,
                               # ?feed=program alone the one of delay above ("program")

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
scale); ``hub.files.config.load_config`` reads the file.

The package: this module is the model (the frozen configuration and its constants);
``shape`` checks the shape of each section with msgspec and words its errors as above;
``rules``, ``stages`` and ``formats`` check what spans fields (the draw, the schedule, the
stages and sessions, the scoring formats...); ``keylines`` finds the line of a key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any, TypeVar

from hub.domain.clock import ClockSpec
from hub.domain.event import EventPlan, Session, Stage
from hub.domain.scoring import DEFAULT_SCORING, ScoringFormat
from hub.domain.timecode import CameraClocks

BETTING = ("pot-limit", "no-limit")
R = TypeVar("R")  # a game's own rules (``TournamentConfig.rules_of``)
MAX_SEATS = 10
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
COLOUR_PATTERN = r"^#[0-9A-Fa-f]{6}$"
ID = re.compile(ID_PATTERN)
# C0 and C1 controls (NUL, newline, tab, DEL, ...) and the characters that reorder text: the
# bidi marks (LRM, RLM, ALM), embeddings, overrides and isolates, and the zero-width no-break
# space (a BOM inside a name). No name of the file and no text of an operator command
# (hub.engine.bounds) holds one: a name with "\u202e" in it is shown reversed on air.
UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


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
    decks: DeckSource | None = None
    release_delay: float = 0.0
    consoles: Mapping[str, int] | None = None  # console name -> its table; None: any console
    clock: ClockSpec | None = None  # the session clock; None: no clock
    scoring: ScoringFormat = DEFAULT_SCORING
    event: EventPlan | None = None  # [[stages]] and [[sessions]]; None: one session
    game: str = "holdem"  # [tournament] game (hub.domain.games.registry)
    # The game's own rules, in the class its folder declares (``rules_of``): read from its
    # section (``Game.section_config``: RPS Poker's [rps], a third party's) or with its scoring
    # (``Game.scoring_and_rules``: MCR's [mahjong]); None: the game has none (hold'em).
    game_rules: Any = field(default=None, repr=False)
    # Where the games' rules stood in the repr before they moved to their folders, which
    # tests/config_corpus.py digests: (field it follows, name, value) each, from the games'
    # ``repr_slots`` (``rules.parse``). Every file keeps its digest; not part of the value.
    repr_slots: tuple[tuple[str, str, Any], ...] = field(default=(), repr=False, compare=False)
    # What the loader warns of (the file still loads): "file:line: key: problem" each. Not part
    # of the configuration's value (left out of its repr and its equality).
    warnings: tuple[str, ...] = field(default=(), repr=False, compare=False)
    # [broadcast]: the cameras of the edit; None: 25 fps, UTC time of day. Out of the repr,
    # which tests/config_corpus.py digests: files without the section keep their digests.
    broadcast: CameraClocks | None = field(default=None, repr=False)
    # [broadcast] delay: seconds the program feed runs behind play; None: no program feed.
    program_delay: float | None = field(default=None, repr=False)
    # [broadcast.outputs]: more program outputs, name -> seconds behind play (each read with
    # ?feed=program&output=NAME); empty: the one output above (hub.wire.topics.program_outputs).
    program_outputs: Mapping[str, float] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        """The dataclass's repr, with the games' ``repr_slots`` where those fields stood."""
        parts: list[str] = []
        for f in fields(self):
            if f.repr:
                parts.append(f"{f.name}={getattr(self, f.name)!r}")
            parts.extend(f"{name}={value!r}" for at, name, value in self.repr_slots if at == f.name)
        return f"{type(self).__qualname__}({', '.join(parts)})"

    def rules_of(self, kind: type[R]) -> R | None:
        """The game's own rules (``game_rules``) if they are a ``kind``, the class its game
        declares (``MahjongRules``, ``RpsRules``); None: not that game's."""
        rules = self.game_rules
        return rules if isinstance(rules, kind) else None

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
