"""The families that show the score: ``standings`` and ``seat`` (cut from the standings).

Both are moved by ``Scores``, a model (``Feed.model``) that keeps each audience's payloads
group by group: the board caches each group's rankings (``Scoreboard.group_standings``,
``seat_standing``) and drops a group's when one of its results or penalties moves, so at a
flush only the groups whose rankings are new objects are made into rows again; every other
row is the same object as before, and the diff of the payload (``Recorder.replace_with``)
passes it by identity: a delta names the rows that changed, and nothing tournament-sized is
rebuilt. A roster fix or a stage filled (names, colours, teams) makes every row again; an
event with stages (``EventScoreboard``) is built whole (``build_standings``, the builder). The
builders stay the oracle the projections are tested against after every event.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hub.domain.eventscore import EventScoreboard
from hub.domain.scoring import Scoreboard
from hub.domain.scoring.format import View
from hub.engine import views
from hub.engine.changes import (
    DealReleased,
    HandSettled,
    PenaltyApplied,
    ReleasedResultCorrected,
    RosterChanged,
    StageFilled,
)
from hub.engine.families.base import EngineView, Feed, Reading, TopicKeys
from hub.wire.standings_select import select_standings
from hub.wire.topics import ANY, AUDIENCES, LIVE, PUBLIC, TopicKey

__all__ = ["SEAT", "STANDINGS", "Scores", "build_standings"]


def _audiences(event: Any) -> tuple[str, ...]:
    """The live standings move as hands settle; the public's as deals are released or their
    results corrected; a penalty, a stage's teams fixed or a roster fix moves both at once."""
    if isinstance(event, HandSettled):
        return (LIVE,)
    if isinstance(event, DealReleased | ReleasedResultCorrected):
        return (PUBLIC,)
    return AUDIENCES


def standings_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    return [k[a]["standings"] for a in _audiences(event)]


def seat_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    return [key for a in _audiences(event) for key in k[a]["seat"]]


def build_standings(engine: EngineView, live: bool) -> dict[str, Any]:
    """One audience's standings payload (``Reading.standings`` keeps it until a change)."""
    config, state = engine.state.config, engine.state
    if live:
        complete = {g: sorted(state.board.completed_deals(g)) for g in config.groups}
        return views.standings_payload(
            config,
            state.board,
            live=True,
            complete=complete,
            fills=state.seating.fills,
            roster=state.roster,
        )
    deals = range(1, config.deals + 1)
    complete = {g: [d for d in deals if engine.released(g, d)] for g in config.groups}
    return views.standings_payload(
        config,
        engine.release.public_board,
        live=False,
        complete=complete,
        fills={
            stage: fill for stage, fill in state.seating.fills.items() if engine._public_teams(fill)
        },
        roster=state.roster,
    )


def _standings(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    return read.standings(audience == LIVE)


def _seat(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    return views.seat_payload(read.standings(audience == LIVE), args[0])


class _Rows:
    """One audience's rows, per group, with the rankings they were made from."""

    def __init__(self) -> None:
        self.board: object = None
        self.teams: dict[tuple[str, str], tuple[object, list[dict[str, Any]]]] = {}
        self.seats: dict[tuple[str, str, int], tuple[object, dict[str, Any]]] = {}
        self.seat_rows: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
        self.complete: dict[str, list[int]] = {}
        self.doc: dict[str, Any] | None = None  # (a board with stages: the builder's payload)
        self.stamp = 0  # the board's ``moved_since`` stamp the rows were read at


class Scores:
    """Both audiences' standings and seat payloads, moved group by group (the module's
    docstring); ``seat``: the seat payloads (``payload(audience, seat)``), else the standings.
    ``payload`` is equal to the family's builder's (tested after every event)."""

    def __init__(self, engine: EngineView, *, seat: bool = False) -> None:
        self.engine = engine
        self.seat = seat
        config = engine.state.config
        self._groups = tuple(config.groups)
        self._seats = tuple(range(1, config.seats + 1))
        self._deals = range(1, config.deals + 1)
        self._tables = list(config.tables)
        self._info: dict[str, dict[str, str]] = {}
        self._rows: dict[str, _Rows] = {a: _Rows() for a in AUDIENCES}
        self._noted: dict[str, None] = {}
        self._full: set[str] = set(AUDIENCES)
        for audience in AUDIENCES:
            self._move(audience)

    def on(self, event: Any) -> None:
        audiences = _audiences(event)
        self._noted.update(dict.fromkeys(audiences))
        if isinstance(event, StageFilled | RosterChanged):  # names, colours, teams: every row
            self._full.update(audiences)

    def flush(self) -> tuple[str, ...]:
        noted, self._noted = tuple(self._noted), {}
        for audience in noted:
            self._move(audience)
        return noted

    def _board(self, audience: str) -> Scoreboard | EventScoreboard:
        engine = self.engine
        return engine.state.board if audience == LIVE else engine.release.public_board

    def _move(self, audience: str) -> None:
        """Make again the rows of the groups whose rankings moved (every group's, after a
        roster fix or a stage filled, or a new board)."""
        rows = self._rows[audience]
        board = self._board(audience)
        if isinstance(board, EventScoreboard):
            rows.doc = build_standings(self.engine, audience == LIVE)
            return
        state = self.engine.state
        groups: Iterable[str]
        if audience in self._full or board is not rows.board:
            self._full.discard(audience)
            self._info = views.team_info(self.engine.state.config, state.roster)
            rows.teams.clear()
            rows.seats.clear()
            rows.board = board
            groups, rows.stamp = self._groups, board.moved_since(rows.stamp)[1]
        else:  # the groups whose rankings the board made anew (the others' rows stand)
            groups, rows.stamp = board.moved_since(rows.stamp)
        info, roster = self._info, state.roster
        for view in _views(audience):
            for group in groups:
                if not self.seat:
                    ranked = board.group_standings(view, group)
                    held = rows.teams.get((view, group))
                    if held is None or held[0] is not ranked:
                        made = [{**r.as_dict(), **info[r.team]} for r in ranked]
                        rows.teams[(view, group)] = (ranked, made)
                for s in self._seats:
                    standing = board.seat_standing(view, group, s)
                    at = (view, group, s)
                    found = rows.seats.get(at)
                    if found is not None and found[0] is standing:
                        continue
                    (block,) = views.named_seats([standing.as_dict()], roster)
                    rows.seats[at] = (standing, block)
                    rows.seat_rows[at] = [{**row, "group": group} for row in block["rows"]]
        if not self.seat:
            self._complete(audience, board, groups)

    def _complete(self, audience: str, board: Scoreboard, moved: Iterable[str]) -> None:
        """The deals each group completes (live: of the ``moved`` groups, the board's only
        ones whose deals may have completed) or has released (public, every group): a list
        unchanged is the same object."""
        complete = self._rows[audience].complete
        for group in moved if audience == LIVE else self._groups:
            if audience == LIVE:
                now = sorted(board.completed_deals(group))
            else:
                now = [d for d in self._deals if self.engine.released(group, d)]
            if complete.get(group) != now:
                complete[group] = now

    def payload(self, audience: str, *args: int) -> dict[str, Any]:
        """The standings of ``audience``, or (``args``: a seat) its seat topic's payload."""
        seat = args[0] if args else None
        rows = self._rows[audience]
        if rows.doc is not None and isinstance(self._board(audience), EventScoreboard):
            if seat is None:
                return dict(rows.doc)
            return views.seat_payload(rows.doc, seat)
        board = self._board(audience)
        scoring = board.scoring.describe()
        if seat is not None:
            out: dict[str, Any] = {"seat": seat, "scoring": scoring}
            for view in _views(audience):
                made = rows.seat_rows
                out[view] = {"rows": [r for g in self._groups for r in made[(view, g, seat)]]}
            return out
        config = self.engine.state.config
        out = {
            "tournament": config.id,
            "name": config.name,
            "tables": self._tables,
            "deals": {"total": config.deals, "complete": dict(rows.complete)},
            "scoring": scoring,
            "game": config.game,
        }
        for view in _views(audience):
            teams = rows.teams
            out[view] = {
                "teams": [r for g in self._groups for r in teams[(view, g)][1]],
                "seats": [rows.seats[(view, g, s)][1] for g in self._groups for s in self._seats],
            }
        return out


def _views(audience: str) -> tuple[View, ...]:
    return ("like_for_like", "running") if audience == LIVE else ("like_for_like",)


def _scores(engine: EngineView) -> Scores:
    return Scores(engine)


def _seat_scores(engine: EngineView) -> Scores:
    return Scores(engine, seat=True)


SCORE_EVENTS = (
    HandSettled,
    PenaltyApplied,
    DealReleased,
    ReleasedResultCorrected,
    StageFilled,
    RosterChanged,
)
STANDINGS = Feed(
    "standings",
    SCORE_EVENTS,
    standings_keys,
    _standings,
    moves=SCORE_EVENTS,
    model=_scores,
    route="/api/standings",
    delta="replace of the rows whose rank, points or chips moved",
    console=ANY,
    program=PUBLIC,
    query=("scope", "stage", "session", "group"),
    select=select_standings,
)
SEAT = Feed(
    "seat",
    SCORE_EVENTS,
    seat_keys,
    _seat,
    moves=SCORE_EVENTS,
    model=_seat_scores,
    params=("seat",),
    route="/api/seats/{seat:int}",
    delta="replace of the rows that moved",
    console=ANY,
    program=PUBLIC,
)
