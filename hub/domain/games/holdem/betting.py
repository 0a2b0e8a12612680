"""Hold'em's betting rules: what the seat to act may do, and why any other action is refused.

Pot limit, no limit or fixed limit (``HandSpec.pot_limit``, ``HandSpec.limit``); the rules in
officials' words are in ``hand.py``'s docstring.
"""

from __future__ import annotations

from hub.domain.errors import Rejection
from hub.domain.games.holdem.state import BettingState
from hub.domain.games.records import NOTHING, Legal
from hub.domain.states import BETTING_STREETS as STREETS

# Limit betting: a bet or raise is one fixed step (the big blind on the first two streets,
# twice it on the last two), at most this many bets and raises a street (the blind counts).
LIMIT_BETS = 4
KINDS = ("fold", "check", "call", "bet", "raise")


class BettingRules(BettingState):
    """The betting rules of a hand: ``legal`` and the checks ``act`` and ``verify`` make."""

    def legal(self, seat: int) -> Legal:
        if seat != self.to_act or self.street not in STREETS:
            return NOTHING
        to_call = self._to_call(seat)
        bounds = self._raise_bounds(seat)
        return Legal(
            fold=to_call > 0 or self.spec.free_fold,
            check=to_call == 0,
            call=to_call if to_call > 0 else None,
            min_to=bounds[0] if bounds else None,
            max_to=bounds[1] if bounds else None,
        )

    def _to_call(self, seat: int) -> int:
        return min(self._high - self.street_bet[seat], self._start[seat] - self.committed[seat])

    def _raise_bounds(self, seat: int) -> tuple[int, int] | None:
        """(min_to, max_to) of a bet or raise by ``seat`` now, or None when it may not raise."""
        high = self._high
        bets, start, committed = self.street_bet, self._start, self.committed
        mine = bets[seat]
        most = mine + start[seat] - committed[seat]  # all-in total for this street
        if most <= high:
            return None  # cannot even more than call
        if seat in self._acted and high - mine < self._min_incr:
            return None  # facing less than a full raise since acting: call or fold only
        if not any(
            s != seat and bets[s] + start[s] - committed[s] > high for s in self._can_still_act()
        ):
            return None  # nobody left who could answer a raise
        if self.spec.limit:
            return self._limit_bounds(high, most)
        min_to = min(most, high + max(self._min_incr, self.spec.smallest_bet))
        if not self.spec.pot_limit:
            return min_to, most
        pot_to = high + self.pot + (high - mine)
        return min_to, min(most, max(min_to, pot_to))

    def _limit_bounds(self, high: int, most: int) -> tuple[int, int] | None:
        """Limit betting: one step (the big blind, doubled on the turn and river) above the
        high bet, while fewer than ``LIMIT_BETS`` bets and raises were made on the street (the
        big blind counts as the first before the flop); all-in for less is allowed."""
        made = sum(
            1 for a in self.actions if a.street == self.street and a.kind in ("bet", "raise")
        )
        if self.street == "preflop":
            made += 1
        if made >= LIMIT_BETS:
            return None
        step = self.spec.big_blind * (2 if self.street in ("turn", "river") else 1)
        to = min(most, high + step)
        return to, to

    def _check(self, seat: int, kind: str, amount: int | None) -> int:
        """Every rule of ``act``: return the chips the action adds, or raise ``Rejection``."""
        if self.street not in STREETS:
            raise Rejection("hand_over", f"the hand is at {self.street}: no more actions")
        if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= self.spec.seats:
            raise Rejection("unknown_seat", f"seat {seat} is not a seat of 1..{self.spec.seats}")
        if kind not in KINDS:
            raise Rejection(
                "not_allowed", f"unknown action {kind!r}: use one of {', '.join(KINDS)}"
            )
        if seat != self.to_act:
            who = "nobody" if self.to_act is None else f"seat {self.to_act}"
            raise Rejection("out_of_turn", f"{who} is to act, not seat {seat}")
        if amount is not None and (not isinstance(amount, int) or isinstance(amount, bool)):
            raise Rejection("bad_amount", f"amount {amount!r} is not a whole number of chips")
        to_call = min(self._high - self.street_bet[seat], self._start[seat] - self.committed[seat])
        if kind == "fold" or kind == "check":
            if amount not in (None, 0):
                raise Rejection("bad_amount", f"a {kind} carries no amount, not {amount}")
            if kind == "fold" and to_call == 0 and not self.spec.free_fold:
                raise Rejection("not_allowed", "nothing to call: check instead of folding")
            if kind == "check" and to_call > 0:
                raise Rejection("not_allowed", f"seat {seat} faces {to_call} to call: cannot check")
            return 0
        if kind == "call":
            if to_call == 0:
                raise Rejection("not_allowed", "nothing to call: check instead")
            if amount is not None and amount != to_call:
                raise Rejection("bad_amount", f"a call adds {to_call} chips, not {amount}")
            return to_call
        return self._check_increase(seat, kind, amount)

    def _check_increase(self, seat: int, kind: str, amount: int | None) -> int:
        high = self._high
        if kind == "bet" and high > 0:
            raise Rejection("not_allowed", f"there is already a bet of {high}: raise instead")
        if kind == "raise" and high == 0:
            raise Rejection("not_allowed", "there is no bet on this street to raise: bet instead")
        if amount is None or amount <= 0:
            raise Rejection(
                "bad_amount", f"a {kind} needs a positive amount (the total it reaches)"
            )
        bounds = self._raise_bounds(seat)
        if bounds is None:
            raise Rejection("not_allowed", f"seat {seat} may only call or fold now, not {kind}")
        min_to, max_to = bounds
        mine = self.street_bet[seat]
        most = mine + self._start[seat] - self.committed[seat]
        if amount > most:
            raise Rejection(
                "over_cap", f"{kind} to {amount} is more than seat {seat} has: all-in is {most}"
            )
        if amount > max_to:
            limit = "limit" if self.spec.limit else "pot limit"
            raise Rejection("over_pot_limit", f"{kind} to {amount} is over the {limit} {max_to}")
        if amount < min_to:
            raise Rejection("below_min_raise", f"{kind} to {amount} is below the minimum {min_to}")
        return amount - mine
