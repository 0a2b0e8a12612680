"""The state a hold'em hand keeps, and what reading it needs: seats in clockwise order, the
chips each seat has committed and has behind, who is still in.

``Hand`` (``hand.py``) is built on it, with its betting rules (``betting.py``) and its
settlement (``settlement.py``); each part declares here the state it shares.
"""

from __future__ import annotations

from hub.domain.games.records import ActionRecord, Pot
from hub.domain.games.spec import HandSpec


class BettingState:
    """The attributes every part of a hand reads (set by ``Hand.__init__``) and the readings
    that need nothing but them."""

    spec: HandSpec
    street: str
    to_act: int | None
    committed: dict[int, int]  # seat -> chips put in this hand
    street_bet: dict[int, int]  # seat -> its bet on this street
    folded: frozenset[int]
    all_in: frozenset[int]
    actions: list[ActionRecord]
    result: dict[int, int] | None
    _board_count: int
    _min_incr: int  # largest bet/raise increment of the street
    _dead: int  # antes in the main pot as dead money (``spec.dead_antes``)
    _pending: set[int]  # seats that must still act on this street
    _acted: set[int]  # seats that acted voluntarily on this street
    _start: dict[int, int]  # seat -> ``stack`` + committed
    _high: int  # the street's highest bet: ``high_bet``
    _clockwise: tuple[tuple[int, ...], ...]
    # Once betting is over (showdown) no chip moves: the pots are laid out once, when it
    # ends, for the several readers of a showdown (a win reads them three times).
    _final_pots: list[Pot] | None = None

    @property
    def pot(self) -> int:
        return sum(self.committed.values())

    @property
    def high_bet(self) -> int:
        """The highest street bet: 0 means the next increase is a ``bet``, else a ``raise``."""
        return max(self.street_bet.values())

    def stack(self, seat: int) -> int:
        """Chips the seat still has behind."""
        return self.spec.starting_stack(seat) - self.committed[seat]

    def _left(self, seat: int) -> int:
        return seat % self.spec.seats + 1

    def _right(self, seat: int) -> int:
        return (seat - 2) % self.spec.seats + 1

    def _order_from(self, first: int) -> list[int]:
        """Every seat clockwise starting at ``first``."""
        n = self.spec.seats
        return [(first - 1 + i) % n + 1 for i in range(n)]

    def _ante_paid(self, seat: int) -> int:
        return min(self.spec.ante(seat), self.spec.starting_stack(seat))

    def _live(self) -> list[int]:
        return [s for s in self.committed if s not in self.folded]

    def _can_still_act(self) -> set[int]:
        return {s for s in self.committed if s not in self.folded and s not in self.all_in}
