"""The ``projection`` family: the commentators' standings as if every hand in play ended now.
Its declaration (``PROJECTION``), its builder (``projection_payload`` of a ``projected_board``,
each hand in play counted as ``if_ended_now``) and its model, ``Projection``: the family's
scoreboard, moved hand by hand, and its document, moved in place row by row."""

from __future__ import annotations

import functools
import weakref
from bisect import bisect_left
from collections.abc import Callable, Container, Iterable, Sequence
from functools import partial
from operator import attrgetter
from typing import Any

from hub.domain.eventscore import EventScoreboard
from hub.domain.scoring import Scoreboard, SeatRow, TeamStanding
from hub.domain.states import Role
from hub.engine.changes import RosterChanged
from hub.engine.families.base import CADENCE, Feed, Reading, TopicKeys
from hub.engine.families.hands import HAND_EVENTS
from hub.engine.hands import TableState
from hub.engine.roster import Roster
from hub.engine.shown import named_seats, team_info
from hub.engine.tournament import TournamentState
from hub.wire.patch import Recorder
from hub.wire.topics import LIVE, TopicKey

__all__ = [
    "PROJECTION",
    "Projection",
    "if_ended_now",
    "projected_board",
    "projected_result",
    "projection_payload",
]

_ENDED: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], dict[int, int] | None]] = (
    weakref.WeakKeyDictionary()
)


def if_ended_now(hand: Any) -> dict[int, int] | None:
    """``hand.if_ended_now()`` (the hand played out by the cards: a copy of it settled), made
    once per state of the hand: the projection's board and its payload both ask at every
    flush, for every table, most of which did not move. Never edit the result."""
    state = (len(hand.actions), hand.street, hand.result is None, hand.spec)
    memo = _ENDED.get(hand)
    if memo is not None and memo[0][:3] == state[:3] and memo[0][3] is state[3]:
        return memo[1]
    projected: dict[int, int] | None = hand.if_ended_now()
    _ENDED[hand] = (state, projected)
    return projected


def projected_result(state: TournamentState, table: int, deal_no: int) -> dict[int, int] | None:
    """What the projection counts for one hand: the hand in progress as if it ended now (no
    more betting, the known board dealt out, pots by the cards), else its counted result."""
    h = state.hand(table, deal_no)
    if h is None:
        return None
    if h is state.tables[table].current:
        projected = if_ended_now(h.hand)
        if projected is not None:
            return projected
    return h.result


def projected_board(state: TournamentState) -> Scoreboard | EventScoreboard:
    """The scoreboard of the projection, from scratch (the engine then moves it hand by hand)."""
    board = state.new_board()
    for table in state.tables.values():
        for deal_no in table.hands:
            result = projected_result(state, table.table, deal_no)
            if result is not None:
                board.set_result(table.table, deal_no, result)
    return board


def projection_payload(
    state: TournamentState, board: Scoreboard | EventScoreboard
) -> dict[str, Any]:
    """Standings "if every hand in progress ended now", from the projected ``board``. Only
    possible when deck orders are loaded."""
    hands = [row for row in map(hand_row, state.tables.values()) if row is not None]
    info = team_info(state.config, state.roster)
    running = board.view_as_dict("running")
    return {
        "hands": hands,
        "scoring": board.scoring.describe(),
        "teams": [{**row, **info[row["team"]]} for row in running["teams"]],
        "seats": named_seats(running["seats"], state.roster),
    }


def projection_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    return [k[LIVE]["projection"]]


def _projection(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    """The projection from its model's scoreboard (``Projection.board``, read through
    ``Reading.mover``; from a new one while nothing is projected: the journal's replay)."""
    state = read.engine.state
    model = read.mover("projection")
    if isinstance(model, Projection):
        return projection_payload(state, model.board)
    return projection_payload(state, projected_board(state))


def hand_row(table: TableState) -> dict[str, Any] | None:
    """A table's row of the projection's hands: its hand in play as if it ended now (None:
    no hand in play, or none the cards can end)."""
    current = table.current
    if current is None:
        return None
    projected = if_ended_now(current.hand)
    if projected is None:
        return None
    return {
        "table": table.table,
        "deal": current.deal,
        "street": current.hand.street,
        "pot": current.hand.pot,
        "result": {str(s): v for s, v in projected.items()},
    }


class Projection:
    """The ``projection`` topic's ``Mover`` and its model: the projection's scoreboard (every
    hand as if it ended now: made when projecting starts, then moved hand by hand) and the
    hands whose events came, until the flush; then each of those hands' projected result set on
    the board, their tables' rows of ``hands`` (added, replaced or removed at their place) and
    the scoreboard rows that moved: a group's teams and a seat's block, re-read when the
    board's cached standing of it is a new one (the board drops a group's caches when one of
    its totals moves, so the groups nobody played cost a lookup). A roster fix re-reads every
    row. A flush that leaves the projection for later (``Family.cadence``) does not flush it:
    the board keeps its results, the hands stay noted, until a flush that does."""

    def __init__(self, read: Reading) -> None:
        self.read = read
        self.key: TopicKey = read.keys().k[LIVE]["projection"]
        self.rec: Recorder | None = None
        self._noted: dict[int, None] = {}  # tables whose hand moved
        self._projected: dict[tuple[int, int], None] = {}  # their hands, (table, deal)
        self._names = False  # a roster fix: every team's and seat's row
        state = read.engine.state
        self._place = {t: i for i, t in enumerate(state.tables)}  # table -> its place
        self._shown: list[int] = []  # the places of the tables with a row in ``hands``
        # The board's standings the document shows: (group, seat or 0) -> (what, its index),
        # and each group's entries (what one of its tables' hands can move).
        self._read: dict[tuple[str, int], tuple[Any, int]] = {}
        self._entries: dict[str, list[tuple[str, int]]] = {}
        self._group_of: dict[int, str] = {}  # table -> its group on the board
        self.board: Scoreboard | EventScoreboard = projected_board(state)

    def on(self, event: Any) -> None:
        if type(event) is RosterChanged:
            self._names = True
        else:
            self._noted[event.table] = None
            self._projected[(event.table, event.deal)] = None

    def open(self, key: TopicKey) -> Recorder | None:
        if key != self.key:
            return None
        engine = self.read.engine
        state = engine.state
        board = self.board
        self.rec = Recorder(projection_payload(state, board))
        self._shown = [self._place[row["table"]] for row in self.rec.doc["hands"]]
        self._remember(board)
        return self.rec

    def _remember(self, board: Scoreboard | EventScoreboard) -> None:
        """What of the board each row of the document shows (a plain scoreboard's)."""
        self._read.clear()
        self._entries.clear()
        self._group_of.clear()
        if not isinstance(board, Scoreboard):
            return
        teams = seats = 0
        for group, tables in board.layout.groups.items():
            self._group_of.update(dict.fromkeys(tables, group))
            standing = board.group_standings("running", group)
            self._read[(group, 0)] = (standing, teams)
            teams += len(standing)
            for seat in range(1, board.layout.seats + 1):
                self._read[(group, seat)] = (board.seat_standing("running", group, seat), seats)
                seats += 1
            self._entries[group] = [(group, seat) for seat in range(board.layout.seats + 1)]

    def flush(self) -> Iterable[TopicKey]:
        noted, self._noted = self._noted, {}
        names, self._names = self._names, False
        if not (noted or names):
            return ()
        state = self.read.engine.state
        projected, self._projected = self._projected, {}
        board = self.board
        for table, deal in projected:
            board.set_result(table, deal, projected_result(state, table, deal))
        rec = self.rec
        if rec is not None:
            for table in noted:
                self._hand(rec, state.tables[table])
            self._standings(rec, names, noted)
        return (self.key,)

    def _hand(self, rec: Recorder, table: TableState) -> None:
        """Move one table's row of ``hands`` (at its place among the tables shown)."""
        row = hand_row(table)
        place = self._place[table.table]
        i = bisect_left(self._shown, place)
        shown = i < len(self._shown) and self._shown[i] == place
        if row is None:
            if shown:
                del self._shown[i]
                rec.pop(("hands", i))
        elif shown:
            rec.replace_at(("hands", i), row)
        else:
            self._shown.insert(i, place)
            rec.insert(("hands", i), row)

    def _standings(self, rec: Recorder, names: bool, tables: Iterable[int]) -> None:
        """The teams' and seats' rows whose standing the board made anew: of the groups of
        the ``tables`` whose hands moved (a hand moves its group's standings only), of every
        group after a roster fix."""
        state = self.read.engine.state
        board = self.board
        if self._read and isinstance(board, Scoreboard):
            if names:
                groups: Iterable[str] = self._entries
            else:
                groups = dict.fromkeys(
                    g for t in tables if (g := self._group_of.get(t)) is not None
                )
            if self._rows(rec, board, names, groups):
                return
        # A staged event's board, or a group whose teams changed: every row compared.
        running = board.view_as_dict("running")
        info = team_info(state.config, state.roster)
        rec.replace_at(("teams",), [{**row, **info[row["team"]]} for row in running["teams"]])
        rec.replace_at(("seats",), named_seats(running["seats"], state.roster))
        self._remember(board)

    def _rows(self, rec: Recorder, board: Scoreboard, names: bool, groups: Iterable[str]) -> bool:
        """Move the rows of each standing of ``groups`` the board made anew (False: a group's
        teams changed, so did the indexes of the rows after it)."""
        state = self.read.engine.state
        roster = state.roster
        info: dict[str, dict[str, str]] | None = None
        named: Callable[[Row], dict[str, Any]] | None = None
        read = self._read
        for g in groups:
            for entry in self._entries[g]:
                was, i = read[entry]
                group, seat = entry
                if seat:
                    now: Any = board.seat_standing("running", group, seat)
                    if now is was and not names:
                        continue  # (the board's cached standing: nothing of it moved)
                    if names or len(now.rows) != len(was.rows):
                        block = named_seats([now.as_dict()], roster)[0]
                        rec.replace_at(("seats", i), block)
                    else:
                        named = named or partial(_named_row, roster=roster)
                        rows = rec.doc["seats"][i]["rows"]
                        at = ("seats", i, "rows")
                        _move_rows(rec, rows, at, 0, was.rows, now.rows, named)
                else:
                    now = board.group_standings("running", group)
                    if now is was and not names:
                        continue
                    if len(now) != len(was):
                        return False
                    info = info or team_info(state.config, roster)
                    if names:
                        for j, row in enumerate(now):
                            rec.replace_at(("teams", i + j), _team_row(row, info))
                    else:
                        whole = partial(_team_row, info=info)
                        _move_rows(rec, rec.doc["teams"], ("teams",), i, was, now, whole)
                read[entry] = (now, i)
        return True


Row = Any  # a ``SeatRow`` or a ``TeamStanding``: ``penalty``, ``totals()``, its member

# Whose row it is: a table's player's, or a team's (what ``totals()`` leaves out).
_PLAYER = attrgetter("table", "team", "player")
_TEAM = attrgetter("team")


def _move_rows(
    rec: Recorder,
    items: list[dict[str, Any]],
    at: tuple[str | int, ...],
    base: int,
    was: Sequence[Row],
    now: Sequence[Row],
    whole: Callable[[Row], dict[str, Any]],
) -> None:
    """Move one ranking's rows in the document from ``was`` to ``now`` (the same members, at
    ``items[base:base + len(now)]``, the list at ``at``), naming only the rows that moved: a
    row that changed places is removed and added at its new place (the fewest such: the rows
    whose order stands stay), each row that stayed gets the totals it moved set. A row stands
    for the same member (a table's player, a team); a penalty more or less makes it anew
    (``whole``). A ranking of other members at some places (never between two rankings of
    one board) has those places' rows made anew."""
    n = len(now)
    if not n:
        return
    member = _PLAYER if isinstance(now[0], SeatRow) else _TEAM
    members = list(map(member, was))
    ranked = list(map(member, now))
    if members == ranked:  # (the usual case: the order stands)
        order: Sequence[int] = range(n)
        stay: Container[int] = order
        moved: dict[int, dict[str, Any]] = {}
    else:
        place = {m: j for j, m in enumerate(members)}
        found: list[Any] = list(map(place.get, ranked))  # each new row's old place, or None
        if None in found or len(place) != n:  # other members: each place set to its new row
            for j, row in enumerate(now):
                if row is not was[j]:
                    rec.replace_at((*at, base + j), whole(row))
            return
        order = found  # (no None in it)
        stay, gone = _standing(tuple(order))
        moved = {old: items[base + old] for old in gone}
        for old in reversed(gone):
            rec.pop((*at, base + old))
    for j, row in enumerate(now):
        old = order[j]
        before = was[old]
        if old in stay:
            if before is row:
                continue
            penalised = before.penalty is not row.penalty and before.penalty != row.penalty
            if penalised:  # (a member more or less)
                rec.replace_at((*at, base + j), whole(row))
            else:
                rec.update_in(items[base + j], (*at, base + j), row.totals())
        elif before.penalty is not row.penalty and before.penalty != row.penalty:
            rec.insert((*at, base + j), whole(row))
        else:
            rec.insert((*at, base + j), {**moved[old], **row.totals()})


@functools.lru_cache(maxsize=4096)
def _standing(order: tuple[int, ...]) -> tuple[frozenset[int], tuple[int, ...]]:
    """The old places of the rows that stay: a longest run of ``order`` (each new place's old
    place) that rises, so the fewest rows move (a ranking is a few rows: quadratic is fine;
    of the longest runs, the one whose each row follows the earliest row it can); and the
    old places of the others, the rows that move, in order. Made once per order: a ranking's
    few rows move in the same few ways, flush after flush."""
    n = len(order)
    length = [1] * n
    before = [-1] * n
    top, end = 1, 0  # the longest run so far, and where it ends (the first such)
    for j in range(1, n):
        here = order[j]
        best, after = 1, -1
        for k in range(j):
            if order[k] < here and length[k] >= best:
                best, after = length[k] + 1, k
        length[j], before[j] = best, after
        if best > top:
            top, end = best, j
    stay: set[int] = set()
    j = end if n else -1
    while j >= 0:
        stay.add(order[j])
        j = before[j]
    return frozenset(stay), tuple(old for old in range(n) if old not in stay)


def _team_row(row: TeamStanding, info: dict[str, dict[str, str]]) -> dict[str, Any]:
    """A team's row as the document shows it (its name, code and colour beside its totals)."""
    return {**row.as_dict(), **info[row.team]}


def _named_row(row: SeatRow, roster: Roster | None) -> dict[str, Any]:
    """A seat ranking's row as the document shows it (the player named as the roster says)."""
    (block,) = named_seats([{"rows": [row.as_dict()]}], roster)
    row_dict: dict[str, Any] = block["rows"][0]
    return row_dict


PROJECTION = Feed(
    "projection",
    (*HAND_EVENTS, RosterChanged),
    projection_keys,
    _projection,
    audiences=(LIVE,),
    role=Role.COMMENTATOR,
    route="/api/projection",
    delta="replace of the hands and rows that moved",
    mover=Projection,
    cadence=CADENCE,
)
