"""The families that show the score: ``standings`` and ``seat`` (cut from the standings).

Each is moved in place by a ``Scores`` mover (``Feed.mover``) that keeps each audience's rows
group by group: the board caches each group's rankings (``Scoreboard.group_standings``,
``seat_standing``), drops a group's when one of its results or penalties moves and names the
groups that moved (``moved_since``), so at a flush only those groups' rankings are made into
rows again, and each open document has the rows of the rankings made anew set at their
group's place (``/running/teams/7``, ``/like_for_like/seats/12/rows/3``, a seat topic's
``/running/rows/40``): a delta names the rows that changed, and nothing tournament-sized is
rebuilt or diffed. A roster fix or a stage filled (names, colours, teams) makes every row and
the documents again (diffed); an event with stages (``EventScoreboard``) is built whole
(``build_standings``, the builder). The builders stay the oracle the projections are tested
against after every event.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hub.domain.config import TournamentConfig
from hub.domain.eventscore import EventScoreboard
from hub.domain.scoring import VIEWS, Scoreboard
from hub.domain.scoring.format import View
from hub.engine.changes import (
    DealReleased,
    HandSettled,
    PenaltyApplied,
    ReleasedResultCorrected,
    RosterChanged,
    StageFilled,
)
from hub.engine.families.base import EngineView, Feed, Reading, TopicKeys
from hub.engine.roster import Roster
from hub.engine.shown import named_seats, team_info
from hub.wire.patch import Recorder
from hub.wire.standings_select import select_standings
from hub.wire.topics import ANY, AUDIENCES, LIVE, PUBLIC, TopicKey

__all__ = ["SEAT", "STANDINGS", "Scores", "build_standings", "seat_payload", "standings_payload"]


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
        return standings_payload(
            config,
            state.board,
            live=True,
            complete=complete,
            fills=state.seating.fills,
            roster=state.roster,
        )
    deals = range(1, config.deals + 1)
    complete = {g: [d for d in deals if engine.release.released(g, d)] for g in config.groups}
    return standings_payload(
        config,
        engine.release.public_board,
        live=False,
        complete=complete,
        fills={
            stage: fill
            for stage, fill in state.seating.fills.items()
            if engine.release.public_teams(fill)
        },
        roster=state.roster,
    )


def standings_payload(
    config: TournamentConfig,
    board: Scoreboard | EventScoreboard,
    *,
    live: bool,
    complete: dict[str, list[int]],
    fills: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None,
    roster: Roster | None = None,
) -> dict[str, Any]:
    info = team_info(config, roster)
    scores = board.as_dict()
    views = ("like_for_like", "running") if live else ("like_for_like",)
    out: dict[str, Any] = {
        "tournament": config.id,
        "name": config.name,
        "tables": list(config.tables),
        "deals": {"total": config.deals, "complete": complete},
        "scoring": board.scoring.describe(),
        "game": config.game,
    }
    for view in views:
        block = scores[view]
        out[view] = {
            "teams": [{**row, **info[row["team"]]} for row in block["teams"]],
            "seats": named_seats(block["seats"], roster),
        }
    if isinstance(board, EventScoreboard):
        out["event"] = event_block(config, board, fills or {})
        for view in VIEWS:
            if view in out:
                blocks = board.event_as_dict(view)
                _with_info(blocks, info)
                for block in blocks["sessions"].values():
                    block["seats"] = named_seats(block.get("seats", []), roster)
                out[view].update(blocks)
    return out


def _with_info(blocks: dict[str, Any], info: dict[str, dict[str, str]]) -> None:
    """Team names and colours on every team row of the event's blocks."""
    rows = [r for b in blocks["sessions"].values() for r in b["teams"]]
    rows += [r for b in blocks["stages"].values() for r in (*b["teams"], *b["across"])]
    rows += blocks["overall"]
    for row in rows:
        row.update(info[row["team"]])


def event_block(
    config: TournamentConfig,
    board: EventScoreboard,
    fills: Mapping[str, Mapping[str, tuple[str, ...]]],
) -> dict[str, Any]:
    """The event's stages and sessions, which are current, and the teams of filled stages."""
    session = board.current_session()
    return {
        **config.plan.as_dict(),
        "current": {"session": session, "stage": config.plan.session_by_id[session].stage},
        "fills": {st: {g: list(t) for g, t in groups.items()} for st, groups in fills.items()},
    }


def seat_payload(standings: dict[str, Any], seat: int) -> dict[str, Any]:
    out: dict[str, Any] = {"seat": seat, "scoring": standings["scoring"]}
    for view in ("like_for_like", "running"):
        if view in standings:
            rows = [
                {**row, "group": block["group"]}
                for block in standings[view]["seats"]
                if block["seat"] == seat
                for row in block["rows"]
            ]
            out[view] = {"rows": rows}
    return out


def _standings(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    return read.standings(audience == LIVE)


def _seat(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    return seat_payload(read.standings(audience == LIVE), args[0])


class _Rows:
    """One audience's rows, per group, with the rankings they were made from."""

    def __init__(self) -> None:
        self.board: object = None
        self.teams: dict[tuple[str, str], tuple[Any, list[dict[str, Any]]]] = {}
        self.seats: dict[tuple[str, str, int], tuple[Any, dict[str, Any]]] = {}
        self.seat_rows: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
        self.complete: dict[str, list[int]] = {}
        self.doc: dict[str, Any] | None = None  # (a board with stages: the builder's payload)
        self.stamp = 0  # the board's ``moved_since`` stamp the rows were read at
        # Where each group's rows are in the documents (the sums of the groups' before it):
        # its first team row in ``teams``, its first row in a seat topic's ``rows``.
        self.team_at: dict[str, int] = {}
        self.row_at: dict[str, int] = {}


class _Moved:
    """What one flush moved of an audience's rows (``Scores._move``): each ranking made anew,
    with the one it replaces, and the groups whose completed deals changed."""

    def __init__(self) -> None:
        self.teams: list[tuple[str, str, Any]] = []  # (view, group, the ranking before)
        self.seats: list[tuple[str, str, int, Any]] = []  # (view, group, seat, before)
        self.complete: list[str] = []


class Scores:
    """The ``standings`` (or, ``seat``, the ``seat`` topics') ``Mover``: both audiences'
    rows kept group by group (the module's docstring); at a flush each open document has
    the rows of the rankings the board made anew set in place (a team's row at its group's
    place in ``teams``, a seat block's rows, a seat topic's rows of that group), so a delta
    names the rows that moved and nothing tournament-sized is rebuilt or diffed. A roster
    fix, a stage filled, a new board or a board with stages: the document made again and
    diffed. ``payload`` is equal to the family's builder's (tested after every event)."""

    def __init__(self, read: Reading, *, seat: bool = False) -> None:
        engine = read.engine
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
        # Each audience's topics, with their parameters; the open ones' documents.
        k = read.keys().k
        name = "seat" if seat else "standings"
        self._keys: dict[str, list[tuple[TopicKey, tuple[int, ...]]]] = {
            a: [(key, (s,)) for s, key in enumerate(k[a][name], 1)] if seat else [(k[a][name], ())]
            for a in AUDIENCES
        }
        self._of = {key: (a, args) for a, keys in self._keys.items() for key, args in keys}
        self.docs: dict[TopicKey, Recorder] = {}
        for audience in AUDIENCES:
            self._move(audience)

    def on(self, event: Any) -> None:
        audiences = _audiences(event)
        self._noted.update(dict.fromkeys(audiences))
        if isinstance(event, StageFilled | RosterChanged):  # names, colours, teams: every row
            self._full.update(audiences)

    def open(self, key: TopicKey) -> Recorder | None:
        found = self._of.get(key)
        if found is None:
            return None
        rec = self.docs[key] = Recorder(self.payload(found[0], *found[1]))
        return rec

    def flush(self) -> Iterable[TopicKey]:
        noted, self._noted = tuple(self._noted), {}
        touched: list[TopicKey] = []
        for audience in noted:
            moved = self._move(audience)
            for key, args in self._keys[audience]:
                touched.append(key)
                rec = self.docs.get(key)
                if rec is None:
                    continue
                if moved is None:
                    rec.replace_with(self.payload(audience, *args))
                elif args:
                    self._edit_seat(rec, audience, args[0], moved)
                else:
                    self._edit(rec, audience, moved)
        return touched

    def _edit(self, rec: Recorder, audience: str, moved: _Moved) -> None:
        """The standings document moved by what the flush moved (rows, blocks, deals)."""
        rows = self._rows[audience]
        for view, group, was in moved.teams:
            now, made = rows.teams[(view, group)]
            at = rows.team_at[group]
            for j, row in enumerate(now):
                if row is not was[j]:
                    rec.replace_at((view, "teams", at + j), made[j])
        seats = len(self._seats)
        for view, group, seat, was in moved.seats:
            now, block = rows.seats[(view, group, seat)]
            at = self._groups.index(group) * seats + seat - 1
            for j, row in enumerate(now.rows):
                if row is not was.rows[j]:
                    rec.replace_at((view, "seats", at, "rows", j), block["rows"][j])
        for group in moved.complete:
            rec.set(("deals", "complete", group), rows.complete[group])

    def _edit_seat(self, rec: Recorder, audience: str, seat: int, moved: _Moved) -> None:
        """A seat topic's document moved by its seat's rankings made anew."""
        rows = self._rows[audience]
        for view, group, s, was in moved.seats:
            if s != seat:
                continue
            now = rows.seats[(view, group, seat)][0]
            made = rows.seat_rows[(view, group, seat)]
            at = rows.row_at[group]
            for j, row in enumerate(now.rows):
                if row is not was.rows[j]:
                    rec.replace_at((view, "rows", at + j), made[j])

    def _board(self, audience: str) -> Scoreboard | EventScoreboard:
        engine = self.engine
        return engine.state.board if audience == LIVE else engine.release.public_board

    def _move(self, audience: str) -> _Moved | None:
        """Make again the rows of the groups whose rankings moved (every group's, after a
        roster fix or a stage filled, or a new board); what moved, or None: every row made
        again (or a board with stages: the builder's payload), the documents made anew."""
        rows = self._rows[audience]
        board = self._board(audience)
        if isinstance(board, EventScoreboard):
            rows.doc = build_standings(self.engine, audience == LIVE)
            return None
        state = self.engine.state
        groups: Iterable[str]
        moved: _Moved | None = _Moved()
        if audience in self._full or board is not rows.board:
            self._full.discard(audience)
            self._info = team_info(self.engine.state.config, state.roster)
            rows.teams.clear()
            rows.seats.clear()
            rows.board = board
            groups, rows.stamp = self._groups, board.moved_since(rows.stamp)[1]
            moved = None
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
                        if moved is not None and held is not None:
                            if len(held[0]) != len(ranked):
                                moved = None  # (a group's teams changed: the places after it)
                            else:
                                moved.teams.append((view, group, held[0]))
                for s in self._seats:
                    standing = board.seat_standing(view, group, s)
                    at = (view, group, s)
                    found = rows.seats.get(at)
                    if found is not None and found[0] is standing:
                        continue
                    (block,) = named_seats([standing.as_dict()], roster)
                    rows.seats[at] = (standing, block)
                    rows.seat_rows[at] = [{**row, "group": group} for row in block["rows"]]
                    if moved is not None and found is not None:
                        if len(found[0].rows) != len(standing.rows):
                            moved = None
                        else:
                            moved.seats.append((view, group, s, found[0]))
        if not self.seat:
            changed = self._complete(audience, board, groups)
            if moved is not None:
                moved.complete = changed
        if moved is None:
            self._places(rows)
        return moved

    def _places(self, rows: _Rows) -> None:
        """Where each group's rows start in the documents (after every row was made)."""
        teams = seats = 0
        view = _views(LIVE)[0]
        for group in self._groups:
            rows.team_at[group] = teams
            rows.row_at[group] = seats
            if not self.seat:
                teams += len(rows.teams[(view, group)][0])
            seats += len(rows.seats[(view, group, self._seats[0])][0].rows) if self._seats else 0

    def _complete(self, audience: str, board: Scoreboard, moved: Iterable[str]) -> list[str]:
        """The deals each group completes (live: of the ``moved`` groups, the board's only
        ones whose deals may have completed) or has released (public, every group): a list
        unchanged is the same object. The groups whose list changed."""
        complete = self._rows[audience].complete
        changed: list[str] = []
        for group in moved if audience == LIVE else self._groups:
            if audience == LIVE:
                now = sorted(board.completed_deals(group))
            else:
                now = [d for d in self._deals if self.engine.release.released(group, d)]
            if complete.get(group) != now:
                complete[group] = now
                changed.append(group)
        return changed

    def payload(self, audience: str, *args: int) -> dict[str, Any]:
        """The standings of ``audience``, or (``args``: a seat) its seat topic's payload."""
        seat = args[0] if args else None
        rows = self._rows[audience]
        if rows.doc is not None and isinstance(self._board(audience), EventScoreboard):
            if seat is None:
                return dict(rows.doc)
            return seat_payload(rows.doc, seat)
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


def _scores(read: Reading) -> Scores:
    return Scores(read)


def _seat_scores(read: Reading) -> Scores:
    return Scores(read, seat=True)


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
    mover=_scores,
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
    mover=_seat_scores,
    params=("seat",),
    route="/api/seats/{seat:int}",
    delta="replace of the rows that moved",
    console=ANY,
    program=PUBLIC,
)
