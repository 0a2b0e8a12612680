"""One table and one deal at it, as the tournament state keeps them: the inputs that built a
hand, its rebuilt engine, its status. Plain data; `TournamentState` (``tournament``) moves them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hub.domain.dealing import STREET_CARDS
from hub.domain.games.base import Hand
from hub.domain.games.spec import HandSpec
from hub.domain.states import HandStatus
from hub.engine.events import ACTION_TYPES

__all__ = [
    "COMPLETE",
    "DISPUTED",
    "IN_PROGRESS",
    "MISDEAL_ACTIONS",
    "SHOWDOWN",
    "STREETS",
    "TERMINAL",
    "VOID",
    "HandState",
    "Input",
    "TableState",
    "actions_of",
]

# One input of a hand: a betting action (seat, kind, amount), or a dealer error: (seat,
# "exposed", which card) or (0, "early", index of the street in STREET_CARDS).
# RPS Poker adds (seat, "throws", "RPS") and (dealer, "reveal", "RRP").
Input = tuple[int, str, int | str | None]
STREETS = tuple(name for name, _ in STREET_CARDS)
# A misdeal may be declared only before this many players have acted after the blinds.
MISDEAL_ACTIONS = 2


def actions_of(inputs: list[Input]) -> list[Input]:
    """The betting actions among a hand's inputs (what `Hand.replay` takes)."""
    return [i for i in inputs if i[1] in ACTION_TYPES]


# Hand statuses as shown on consoles, overlays and the comparison.
IN_PROGRESS = HandStatus.IN_PROGRESS
SHOWDOWN = HandStatus.SHOWDOWN
COMPLETE = HandStatus.COMPLETE
VOID = HandStatus.VOID
DISPUTED = HandStatus.DISPUTED
TERMINAL = frozenset({COMPLETE, VOID, DISPUTED})


@dataclass(slots=True)
class HandState:
    """One deal at one table: its inputs, the rebuilt engine and where it stands."""

    table: int
    deal: int
    spec: HandSpec
    hand: Hand
    inputs: list[Input] = field(default_factory=list)
    status: str = IN_PROGRESS
    winners: tuple[int, ...] | None = None  # declared (or confirmed) at showdown
    declared: tuple[int, ...] | None = None  # kept while disputed
    computed: tuple[int, ...] | None = None
    # How `hand` was settled at showdown: "cards" (settle(None)), "declared" (settle(winners)),
    # None when `settle` was not called on it (in play, disputed, a fold-out). A snapshot needs
    # it: the winners alone cannot tell a confirmation by the cards from one naming the seats.
    settled_by: str | None = None
    reopened: bool = False
    started_at: float = 0.0
    finished_at: float | None = None

    @property
    def counts(self) -> bool:
        """The hand counts (complete or void): ``result`` is not None, without building it."""
        return self.status == COMPLETE or self.status == VOID

    @property
    def result(self) -> dict[int, int] | None:
        """Chip-score per seat when the hand counts (complete or void), else None."""
        if self.status == VOID:
            return dict.fromkeys(range(1, self.spec.seats + 1), 0)
        if self.status == COMPLETE:
            return dict(self.hand.result or {})
        return None

    @property
    def actions_taken(self) -> int:
        """Voluntary actions so far (the blinds and dealer errors are not actions)."""
        return sum(1 for i in self.inputs if i[1] in ACTION_TYPES)

    def acted(self, n: int) -> bool:
        """Whether ``actions_taken`` reached ``n``, counted no further (the console state's
        misdeal window asks after every action)."""
        if n <= 0:
            return True
        for i in self.inputs:
            if i[1] in ACTION_TYPES:
                n -= 1
                if not n:
                    return True
        return False


@dataclass(slots=True)
class TableState:
    table: int
    group: str
    order: tuple[int, ...]
    hands: dict[int, HandState] = field(default_factory=dict)
    current: HandState | None = None
    last_event_at: float | None = None
    last_seq: int = 0
    console: str | None = None
    # Every event applied to this table, from any console or the operator: the state an entry
    # was made on (a console event's `after`; refused `stale` when it moved since).
    moves: int = 0

    def next_deal(self) -> int | None:
        for d in self.order:
            if d not in self.hands:
                return d
        return None

    @property
    def last_finished(self) -> int | None:
        """The deal of this table's most recently finished hand (None before the first)."""
        # The latest finish; of two at the same moment, the later in the table's order (its
        # index looked up for ties only: a live table's payload asks at every rebuild).
        last: HandState | None = None
        index = self.order.index
        for h in self.hands.values():
            at = h.finished_at
            if at is None:
                continue
            if (
                last is None
                or at > (last.finished_at or 0.0)
                or (at == last.finished_at and index(h.deal) > index(last.deal))
            ):
                last = h
        return None if last is None else last.deal

    @property
    def completed(self) -> int:
        return sum(1 for h in self.hands.values() if h.status in (COMPLETE, VOID))
