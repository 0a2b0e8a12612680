"""One hand of capped pot-limit (or no-limit) Texas hold'em at one table: a pure state machine.

Why our own machine rather than a PokerKit subclass: PokerKit 0.7.7 has no pot-limit hold'em
class; it lets some illegal actions through with only a warning (folding when nothing is to
call); its operations carry no seat; its automated burns draw from its own shuffled deck while
our deck order is an input; and its evaluator costs ~270 µs per 7-card hand (~1.6 ms for a
six-player showdown; ``bench/evaluator_bench.py``) against an ingest target of 20,000
events/s. PokerKit stays in the tests as the oracle (differential tests) and phevaluator
(``evaluation.py``) ranks hands; the piecepack tiles' ranking instead when the spec's
``pieces`` say so (``pieces.py``).

Rules, in the words officials use:

- Seats are numbered 1..seats clockwise; "left of" a seat is the next seat number. The seat left
  of the button posts the small blind, the next one the big blind; heads-up the button posts the
  small blind and acts first before the flop, last after it.
- Every player starts with ``cap`` chips (or ``spec.stacks``); committing them all is all-in.
- ``bet``/``raise`` amounts are the total the player's bet reaches on this street. Before the
  flop the big blind counts as a bet, so the first voluntary increase is a raise.
- A raise must add at least the largest bet or raise increment of the street (at least the big
  blind); going all-in for less is always allowed. A player who has already acted on the street
  may raise again only when facing at least a full raise since (so a short all-in, or several
  that together add up to less than a full raise, does not reopen the betting for them).
- Pot limit: the largest raise reaches ``high + pot + (high - mine)``: the player calls, then
  raises by the whole pot (``pot`` = every chip committed so far, current bets included).
- Antes (``spec.antes``, none in the tournament) are posted before the blinds and are no bet:
  they count in the pot, not in what a player must call. Each ante is the seat's own
  contribution, layered into side pots like any chip, unless ``dead_antes``: then every ante
  is dead money in the main pot (PHH's ``ante_trimming_status = false``).

``order = "rps"`` (RPS Poker, ``hub.domain.games.rps.rules``) moves the blinds to the two seats
right of the button (small blind, big blind, button) and opens every street, pre-flop included,
left of the button. ``limit = True`` is fixed-limit betting: one step of the big blind (twice it
on the turn and river) above the high bet, at most ``LIMIT_BETS`` (``betting.py``) bets and
raises a street.

``rules = "pokerkit"`` follows PokerKit, the reference implementation of PHH, where it parts
from the standard rules above (docs/phh.md): the first bet or raise of a street is a full one
whatever its size (the blinds set no increment to beat), so an all-in for less than the big
blind reopens the betting; preflop opens left of the largest blind posted; a player no one
can make put in another chip skips the street; an
unmatched bet comes back round by round (antes, then each street), not by the hand's layers;
and hands that win nothing are killed first, so pots of the same remaining players merge and a
split pot's odd chips all go to the first winner left of the button instead of one each
(unless ``spec.odd_chips`` says "one-at-a-time": our own hands written to PHH).

The machine in parts, one module each: ``Hand`` here (posting, acting, the streets) starts from
``HandSpec`` (``hub.domain.games.spec``, every game's) and is built on ``state.BettingState``
(what it keeps and reads), ``betting.BettingRules`` (what may be done) and
``settlement.Settlement`` (pots and their award); what it reports is every game's records
(``hub.domain.games.records``). Hold'em's declaration, ``PokerGame``, is ``game.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping

from hub.domain.errors import Rejection
from hub.domain.games.holdem.betting import BettingRules
from hub.domain.games.holdem.settlement import Settlement
from hub.domain.games.records import ActionRecord
from hub.domain.games.spec import HandSpec
from hub.domain.states import BETTING_STREETS

STREETS = BETTING_STREETS
_BOARD_COUNT = {"preflop": 0, "flop": 3, "turn": 4, "river": 5, "showdown": 5}


@functools.cache
def _clockwise(seats: int) -> tuple[tuple[int, ...], ...]:
    """``[first]``: every seat of a ``seats``-seat table clockwise from ``first`` (index 0 is
    no seat), made once per table size rather than once per action."""
    return (
        (),
        *(
            tuple((first - 1 + i) % seats + 1 for i in range(seats))
            for first in range(1, seats + 1)
        ),
    )


class Hand(BettingRules, Settlement):
    """A hand in play. ``verify`` raises exactly what ``act`` would; a rejection changes nothing."""

    def __init__(self, spec: HandSpec) -> None:
        self.spec = spec
        n = spec.seats
        self.street = "preflop"
        self.to_act: int | None = None
        self.committed: dict[int, int] = {s: 0 for s in range(1, n + 1)}
        self.street_bet: dict[int, int] = {s: 0 for s in range(1, n + 1)}
        self.folded: frozenset[int] = frozenset()
        self.all_in: frozenset[int] = frozenset()
        self.actions: list[ActionRecord] = []
        self.result: dict[int, int] | None = None
        self._board_count = 0
        self._min_incr = spec.increment_floor  # largest bet/raise increment of the street
        self._dead = 0  # antes in the main pot as dead money (``spec.dead_antes``)
        self._pending: set[int] = set()  # seats that must still act on this street
        self._acted: set[int] = set()  # seats that acted voluntarily on this street
        # What every action reads, kept up to date as chips move instead of recounted per
        # action (tests/test_holdem_properties.py recounts them after every action).
        self._start = {s: spec.starting_stack(s) for s in range(1, n + 1)}  # ``stack`` + committed
        self._high = 0  # the street's highest bet: ``high_bet``
        self._clockwise = _clockwise(n)
        if spec.order == "rps":
            bb_seat = self._right(spec.button)
            sb_seat = self._right(bb_seat)
        elif n == 2:
            sb_seat, bb_seat = spec.button, self._left(spec.button)
        else:
            sb_seat = self._left(spec.button)
            bb_seat = self._left(sb_seat)
        for seat in range(1, n + 1):
            if spec.ante(seat):
                self._post_ante(seat, spec.ante(seat))
        if spec.rules == "pokerkit" and spec.antes is not None and not spec.dead_antes:
            self._return_uncalled({s: self._ante_paid(s) for s in self.committed})
        self._post(sb_seat, "small_blind", spec.small_blind)
        self._post(bb_seat, "big_blind", spec.big_blind)
        first = self._left(spec.button if spec.order == "rps" else bb_seat)
        if spec.rules == "pokerkit":
            # PokerKit opens left of the largest blind posted (a tie: the later in its player
            # order, p1 being left of the button), so a big blind short of the small blind acts
            # first, and heads-up with equal blinds the big blind does.
            def key(seat: int) -> tuple[int, int]:
                posted = self.street_bet[seat] if seat in (sb_seat, bb_seat) else 0
                return posted, (seat - spec.button - 1) % n

            first = self._left(max(range(1, n + 1), key=key))
        self._begin_street("preflop", first=first)

    def board_visible(self) -> tuple[str, ...]:
        if self.spec.cards is None:
            return ()
        return tuple(self.spec.cards.board[: self._board_count])

    def verify(self, seat: int, kind: str, amount: int | None = None) -> None:
        """Raise the ``Rejection`` that ``act`` would raise; change nothing."""
        self._check(seat, kind, amount)

    def can_act(self, seat: int, kind: str, amount: int | None = None) -> bool:
        try:
            self._check(seat, kind, amount)
        except Rejection:
            return False
        return True

    def act(self, seat: int, kind: str, amount: int | None = None) -> ActionRecord:
        """Verify, then apply one action of the seat to act; returns its record."""
        added = self._check(seat, kind, amount)
        street = self.street
        high = self._high
        if kind == "fold":
            self.folded = self.folded | {seat}
        else:
            self._put(seat, added)
        record = ActionRecord(seat, kind, added, self.street_bet[seat], street)
        self.actions.append(record)
        self._acted.add(seat)
        self._pending.discard(seat)
        if kind == "bet" or kind == "raise":
            self._min_incr = max(self._min_incr, self.street_bet[seat] - high)
            self._pending = self._can_still_act() - {seat}
        self._advance(seat)
        return record

    @classmethod
    def replay(cls, spec: HandSpec, actions: Iterable[tuple[int, str, int | None]]) -> Hand:
        """Rebuild a hand from its voluntary actions (the blinds post themselves)."""
        hand = cls(spec)
        for seat, kind, amount in actions:
            hand.act(seat, kind, amount)
        return hand

    def copy(self) -> Hand:
        clone = object.__new__(type(self))  # what copy.copy does, without its dispatch
        clone.__dict__.update(self.__dict__)
        clone.committed = dict(self.committed)
        clone.street_bet = dict(self.street_bet)
        clone.actions = list(self.actions)
        clone.result = None if self.result is None else dict(self.result)
        clone._pending = set(self._pending)
        clone._acted = set(self._acted)
        return clone

    def if_ended_now(self) -> dict[int, int] | None:
        """The result if the hand ended now: no more betting, the known board dealt out and
        every pot awarded by the cards (the commentators' projection). None: cards unknown."""
        if self.result is not None:
            return dict(self.result)
        if self.spec.cards is None:
            return None
        # What ``settle(None)`` of a copy moved to showdown returns, without the copy: the
        # pots laid out when the betting ended (else as they stand), awarded by the cards.
        pots = self._layered_pots() if self._final_pots is None else list(self._final_pots)
        won = self._won(self._card_awards(pots))
        committed = self.committed
        return {s: won[s] - committed[s] for s in sorted(committed)}

    def _put(self, seat: int, chips: int) -> None:
        committed = self.committed[seat] = self.committed[seat] + chips
        bet = self.street_bet[seat] = self.street_bet[seat] + chips
        if bet > self._high:
            self._high = bet
        if committed == self._start[seat]:  # nothing left behind
            self.all_in = self.all_in | {seat}

    def _post_ante(self, seat: int, ante: int) -> None:
        chips = min(ante, self.stack(seat))
        self.committed[seat] += chips
        if self.spec.dead_antes:
            self._dead += chips
        if self.stack(seat) == 0:
            self.all_in = self.all_in | {seat}
        self.actions.append(ActionRecord(seat, "ante", chips, 0, "preflop"))

    def _return_uncalled(self, bets: Mapping[int, int]) -> None:
        """PokerKit's rules: when a round of bets (the antes, a street) closes, the part of the
        largest that no one matched in that round goes back to its player, round by round."""
        ordered = sorted(bets.values())
        if len(ordered) < 2 or ordered[-1] == ordered[-2]:
            return
        top = max(bets, key=bets.__getitem__)
        excess = ordered[-1] - ordered[-2]
        self.committed[top] -= excess
        self.street_bet[top] = max(0, self.street_bet[top] - excess)
        self._high = max(self.street_bet.values())
        self.all_in = self.all_in - {top}

    def _post(self, seat: int, kind: str, blind: int) -> None:
        chips = min(blind, self.stack(seat))
        if self.spec.rules == "pokerkit":  # PokerKit: from the stack before antes come back
            chips = min(chips, self.spec.starting_stack(seat) - self._ante_paid(seat))
        self._put(seat, chips)
        self.actions.append(ActionRecord(seat, kind, chips, self.street_bet[seat], "preflop"))

    def _begin_street(self, street: str, first: int) -> None:
        self.street = street
        self._board_count = _BOARD_COUNT[street]
        self._acted = set()
        self._min_incr = self.spec.increment_floor
        self._pending = self._can_still_act()
        if self.spec.rules == "pokerkit":
            # PokerKit skips, for the whole street, whoever no one can make put in another chip.
            totals = sorted(self.street_bet[s] + self.stack(s) for s in self._live())
            if len(totals) > 1:
                self._pending = {s for s in self._pending if totals[-2] > self.street_bet[s]}
        high = self._high
        if len(self._pending) <= 1 and all(self.street_bet[s] >= high for s in self._pending):
            self._pending = set()  # nobody left to bet against
        self._advance(first, include_first=True)

    def _advance(self, after: int, include_first: bool = False) -> None:
        """Pick the next seat to act, or close the street (or the hand)."""
        if len(self.committed) - len(self.folded) == 1:  # one seat left in: it wins
            live = [s for s in self.committed if s not in self.folded]
            self.to_act = None
            won = {s: 0 for s in self.committed}
            won[live[0]] = self.pot
            self._complete(won)
            return
        pending = self._pending
        if pending:
            first = after if include_first else after % self.spec.seats + 1
            for s in self._clockwise[first]:
                if s in pending:
                    self.to_act = s
                    return
        self.to_act = None
        if self.spec.rules == "pokerkit":
            self._return_uncalled(self.street_bet)
        index = STREETS.index(self.street) if self.street in STREETS else len(STREETS)
        if len(self._can_still_act()) <= 1 or index == len(STREETS) - 1:
            self.street = "showdown"
            self._board_count = 5
            self._final_pots = self._layered_pots()
            return
        for s in self.street_bet:
            self.street_bet[s] = 0
        self._high = 0
        self._begin_street(STREETS[index + 1], first=self._left(self.spec.button))
