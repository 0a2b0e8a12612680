"""`Release`: when the public sees a deal, and the public board it sees.

Every group plays the same deck orders, so the public sees a deal only once every table of
every group has completed it, then the release delay: a deal is public for all or none. The
public board holds the results of released deals only (and the penalties, which wait for the
first release when nothing of their stage is public yet). Pure: time comes in as an argument.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

from hub.domain.eventscore import EventScoreboard
from hub.domain.scoring import Scoreboard
from hub.engine.changes import (
    DealReleased,
    PenaltyApplied,
    ReleasedDealCorrected,
    ReleasedResultCorrected,
    RosterChanged,
    StageFilled,
)
from hub.engine.tournament import TournamentState

__all__ = ["SHOWN", "Release"]

SHOWN = (
    DealReleased,
    ReleasedResultCorrected,
    ReleasedDealCorrected,
    PenaltyApplied,
    RosterChanged,
    StageFilled,
)
"""The engine events that may move what the public is shown (a deal released; a released
deal's result or hand corrected; a penalty, or one withdrawn; names and colours; a stage's
teams): each counts one in ``Release.version`` (a penalty that waits for the first release,
or a stage whose teams are not public yet, counts all the same: a page re-reads for
nothing, never misses a change)."""

_SHOWN: frozenset[type] = frozenset(SHOWN)  # (final classes: a set lookup by type, the hot path's)
_E = TypeVar("_E")


class Release:
    """The release state of one tournament: completion times, released (group, deal) pairs,
    the public board and the penalties it awaits."""

    def __init__(self, state: TournamentState, delay: float) -> None:
        self.state = state
        self.delay = delay
        self.completed_at: dict[int, float] = {}  # deal -> when its last table completed it
        self.pairs: set[tuple[str, int]] = set()  # (group, deal) released
        self.deals: set[int] = set()  # the deals of ``pairs`` (asked per event)
        self.pending: list[Mapping[str, Any]] = []  # penalties the public board awaits
        # What the public was shown moved this many times (``SHOWN``; in the snapshot): the
        # ``released`` topic's ``version``, which tells the site's pages to read again.
        self.version = 0
        self.public_board: Scoreboard | EventScoreboard = state.new_board(self.public_teams)

    # ----------------------------------------------------------------- reading
    def released(self, group: str, deal_no: int) -> bool:
        return (group, deal_no) in self.pairs

    def released_deals(self, group: str) -> list[int]:
        """The deals of ``group`` released so far (in no order)."""
        return [d for g, d in self.pairs if g == group]

    def deal_released(self, deal_no: int) -> bool:
        """Every group plays the same deck orders, so a deal is public for all or none."""
        return deal_no in self.deals

    @property
    def released_count(self) -> int:
        """(group, deal) pairs released to the public so far: grows with each release."""
        return len(self.pairs)

    def public_teams(self, group: str | Mapping[str, Any]) -> bool:
        """May the public know the teams of a group (or of a stage's fill)? Those of a filled
        stage come from the stage before: only once all of its deals are public."""
        plan = self.state.config.plan
        if not isinstance(group, str):
            group = next(iter(group))
        stage = plan.stage_of_group[group]
        if stage.advance is None:
            return True
        return all(d in self.deals for d in plan.deals_of_stage(stage.advance.source))

    def release_state(self) -> list[dict[str, Any]]:
        """Per (group, deal) played: how many of its tables completed it, and whether it is
        public (the operator desk's release table)."""
        out = []
        config, board = self.state.config, self.state.board
        for g in config.groups.values():
            for d in range(1, config.deals + 1):
                if not config.plan.plays(g.id, d):
                    continue
                out.append(
                    {
                        "group": g.id,
                        "deal": d,
                        "tables_complete": board.tables_counted(g.id, d),
                        "tables": len(g.tables),
                        "released": (g.id, d) in self.pairs,
                    }
                )
        return out

    # ----------------------------------------------------------------- moving
    def counted(self, events: Iterable[_E]) -> Iterable[_E]:
        """The engine's events as they are announced, each of ``SHOWN`` counted (``version``)
        before it is handed on (a list: counted now and handed back, the hot path's one
        action; else one at a time, as they are made)."""
        if type(events) is list:
            for event in events:
                if type(event) in _SHOWN:
                    self.version += 1
            return events
        return self._counting(events)

    def _counting(self, events: Iterable[_E]) -> Iterator[_E]:
        for event in events:
            if type(event) in _SHOWN:
                self.version += 1
            yield event

    def correct(self, table: int, deal_no: int) -> ReleasedResultCorrected | None:
        """A hand of (table, deal) settled again: when the deal is public already, the
        correction shows on the public board as it happens (None: not public yet)."""
        group = self.state.config.group_of(table).id
        if (group, deal_no) not in self.pairs:
            return None
        self.public_board.set_result(table, deal_no, self._result(table, deal_no))
        return ReleasedResultCorrected(table, deal_no)

    def track(self, deal_no: int, now: float) -> bool:
        """A hand of a deal not yet public settled: note when every table of every group has
        completed the deal (or forget it, a result left). True: the deal is due now (no
        delay), `due` hands it out."""
        board = self.state.board
        config = self.state.config
        if all(board.deal_complete(g.id, deal_no) for g in config.groups_playing(deal_no)):
            self.completed_at.setdefault(deal_no, now)
            return self.delay <= 0
        self.completed_at.pop(deal_no, None)
        return False

    def due(self, now: float) -> list[int]:
        """The deals whose delay has passed, taken off the waiting list (release each)."""
        deals = [d for d, at in self.completed_at.items() if now >= at + self.delay]
        for deal_no in deals:
            del self.completed_at[deal_no]
        return deals

    def release(self, deal_no: int) -> DealReleased:
        """Open a deal to the public: its results on the public board, then the penalties that
        waited for a session to show in."""
        for group in self.state.config.groups_playing(deal_no):
            self.pairs.add((group.id, deal_no))
            self.deals.add(deal_no)
            for t in group.tables:
                self.public_board.set_result(t, deal_no, self._result(t, deal_no))
        pending, self.pending = self.pending, []
        for penalty in pending:
            self.public_penalty(penalty)
        return DealReleased(deal_no)

    def public_penalty(self, penalty: Mapping[str, Any]) -> None:
        """A penalty on the public board; one given before its stage shows any session to the
        public (nothing released yet: the board has no session to put it in) waits for the
        first release (it raised ValueError after the state had taken it: the command was
        applied, never journaled)."""
        try:
            self.public_board.add_penalty(
                penalty["table"], penalty["seat"], penalty["chips"], penalty["points"]
            )
        except ValueError:
            self.pending.append(penalty)

    def _result(self, table: int, deal_no: int) -> dict[int, int] | None:
        h = self.state.hand(table, deal_no)
        return h.result if h else None

    # ----------------------------------------------------------------- snapshots
    def snapshot(self) -> dict[str, Any]:
        """The engine snapshot's ``released``, ``completed_at`` and ``public_version`` (in that
        order)."""
        return {
            "released": sorted([g, d] for g, d in self.pairs),
            "completed_at": [[d, at] for d, at in self.completed_at.items()],
            "public_version": self.version,
        }

    @classmethod
    def restored(cls, state: TournamentState, delay: float, data: Mapping[str, Any]) -> Release:
        """The release state of a snapshot over its restored tournament state: the public
        board rebuilt from the released deals' results and the penalties."""
        release = cls(state, delay)
        release.pairs = {(str(g), int(d)) for g, d in data["released"]}
        release.completed_at = {int(d): float(at) for d, at in data["completed_at"]}
        release.deals = {d for _, d in release.pairs}
        release.version = int(data.get("public_version", 0))  # (absent: written before it)
        release.rebuild_board()
        return release

    def rebuild_board(self) -> None:
        """The public board anew from the state: released results, then every penalty."""
        state = self.state
        self.public_board = state.new_board(self.public_teams)
        for (table, deal_no), result in state.board.results().items():
            if self.released(state.config.group_of(table).id, deal_no):
                self.public_board.set_result(table, deal_no, result)
        self.pending = []
        for p in state.penalties:
            if "withdrawn" not in p:
                self.public_penalty(p)
