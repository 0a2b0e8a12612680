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
on the turn and river) above the high bet, at most ``LIMIT_BETS`` bets and raises a street.

``rules = "pokerkit"`` follows PokerKit, the reference implementation of PHH, where it parts
from the standard rules above (docs/phh.md): the first bet or raise of a street is a full one
whatever its size (the blinds set no increment to beat), so an all-in for less than the big
blind reopens the betting; preflop opens left of the largest blind posted; a player no one
can make put in another chip skips the street; an
unmatched bet comes back round by round (antes, then each street), not by the hand's layers;
and hands that win nothing are killed first, so pots of the same remaining players merge and a
split pot's odd chips all go to the first winner left of the button instead of one each.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from hub.domain.errors import Rejection
from hub.domain.pieces import CARDS, PieceSet
from hub.domain.states import BETTING_STREETS

STREETS = BETTING_STREETS
RULES = ("standard", "pokerkit")
# Who posts the blinds and who opens: "holdem" (blinds left of the button, pre-flop opened left
# of the big blind) or "rps" (RPS Poker: blinds the two seats right of the dealer, so the order
# goes small blind, big blind, dealer; the seat left of the dealer opens every round).
ORDERS = ("holdem", "rps")
# Limit betting: a bet or raise is one fixed step (the big blind on the first two streets,
# twice it on the last two), at most this many bets and raises a street (the blind counts).
LIMIT_BETS = 4
KINDS = ("fold", "check", "call", "bet", "raise")
_BOARD_COUNT = {"preflop": 0, "flop": 3, "turn": 4, "river": 5, "showdown": 5}


class KnownCards(Protocol):
    """The dealt cards of a hand (``dealing.Dealt`` satisfies it)."""

    @property
    def hole(self) -> Mapping[int, tuple[str, str]]: ...

    @property
    def board(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class HandSpec:
    """What a hand needs before its first action.

    ``stacks`` (one per seat, seat 1 first) exists for hands where players start unequal (PHH
    imports, rule tests); ``None`` means every seat starts with exactly ``cap`` chips.
    ``antes`` (one per seat, seat 1 first; ``None``: no antes, as in the tournament),
    ``dead_antes``, ``min_bet`` (``None``: the big blind) and ``rules`` serve hands from
    elsewhere (PHH files); the tournament leaves them at their defaults. ``pieces``: what
    ``cards`` are and who wins a showdown with them (``hub.domain.pieces``; the game's).
    """

    seats: int
    button: int
    small_blind: int
    big_blind: int
    cap: int
    pot_limit: bool = True
    cards: KnownCards | None = None
    stacks: tuple[int, ...] | None = None
    antes: tuple[int, ...] | None = None
    dead_antes: bool = False
    min_bet: int | None = None
    rules: str = "standard"
    pieces: PieceSet = CARDS
    order: str = "holdem"
    limit: bool = False  # fixed-limit betting (``pot_limit`` is then ignored)
    # A fold with checking free is taken (a cash game's, as PHH files record and PokerKit plays
    # them); a tournament console's is refused ("check instead"), as the rules say.
    free_fold: bool = False

    def __post_init__(self) -> None:
        if self.seats < 2:
            raise ValueError(f"a hand needs at least 2 seats, not {self.seats}")
        if not 1 <= self.button <= self.seats:
            raise ValueError(f"button {self.button} is not a seat of 1..{self.seats}")
        if not 0 < self.small_blind <= self.big_blind:
            raise ValueError("blinds must satisfy 0 < small blind <= big blind")
        if self.cap <= 0:
            raise ValueError("the cap must be positive")
        if self.stacks is not None and (len(self.stacks) != self.seats or min(self.stacks) <= 0):
            raise ValueError("stacks needs one positive stack per seat")
        if self.antes is not None and (len(self.antes) != self.seats or min(self.antes) < 0):
            raise ValueError("antes needs one ante (0 or more) per seat")
        if self.min_bet is not None and self.min_bet <= 0:
            raise ValueError("the minimum bet must be positive")
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {self.order!r}")
        if self.order == "rps" and self.seats < 3:
            raise ValueError("RPS Poker needs at least 3 seats (two blinds and the dealer)")
        if self.rules not in RULES:
            raise ValueError(f"rules must be one of {', '.join(RULES)}, not {self.rules!r}")
        if self.cards is not None:
            # Cards from a DeckOrder are distinct by construction; hand-written ones (PHH
            # imports, tests) are not, and a duplicate would rank hands that cannot exist.
            seen: set[str] = set()
            for seat in sorted(self.cards.hole):
                for card in self.cards.hole[seat]:
                    if card in seen:
                        raise ValueError(f"card {card} dealt twice (hole cards of seat {seat})")
                    seen.add(card)
            for card in self.cards.board:
                if card in seen:
                    raise ValueError(f"card {card} dealt twice (board)")
                seen.add(card)

    def starting_stack(self, seat: int) -> int:
        return self.cap if self.stacks is None else self.stacks[seat - 1]

    def ante(self, seat: int) -> int:
        return 0 if self.antes is None else self.antes[seat - 1]

    @property
    def smallest_bet(self) -> int:
        """The least a bet or raise adds (an all-in for less aside)."""
        return self.big_blind if self.min_bet is None else self.min_bet

    @property
    def increment_floor(self) -> int:
        """The increment to beat when a street opens: the big blind, or 0 by PokerKit's rules."""
        return 0 if self.rules == "pokerkit" else self.big_blind


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """One thing that happened: ``added`` chips put in, ``to`` the seat's street bet after it."""

    seat: int
    kind: str
    added: int
    to: int
    street: str


@dataclass(frozen=True)
class Legal:
    """What the seat to act may do: ``call`` is the chips a call adds; ``min_to``/``max_to``
    bound a bet or raise (``None``: no bet or raise allowed)."""

    fold: bool
    check: bool
    call: int | None
    min_to: int | None
    max_to: int | None


@dataclass(frozen=True)
class Pot:
    amount: int
    eligible: frozenset[int]


_NOTHING = Legal(False, False, None, None, None)


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


class Hand:
    """A hand in play. ``verify`` raises exactly what ``act`` would; a rejection changes nothing."""

    # Once betting is over (showdown) no chip moves: the pots are laid out once, when it
    # ends, for the several readers of a showdown (a win reads them three times).
    _final_pots: list[Pot] | None = None

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

    # ----------------------------------------------------------------- reading the state

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

    def board_visible(self) -> tuple[str, ...]:
        if self.spec.cards is None:
            return ()
        return tuple(self.spec.cards.board[: self._board_count])

    def legal(self, seat: int) -> Legal:
        if seat != self.to_act or self.street not in STREETS:
            return _NOTHING
        to_call = self._to_call(seat)
        bounds = self._raise_bounds(seat)
        return Legal(
            fold=to_call > 0 or self.spec.free_fold,
            check=to_call == 0,
            call=to_call if to_call > 0 else None,
            min_to=bounds[0] if bounds else None,
            max_to=bounds[1] if bounds else None,
        )

    def pots(self) -> list[Pot]:
        """Main pot then side pots, layered by committed amounts; folded chips stay in.
        Dead antes start the main pot, which every player still in may win."""
        if self.street == "showdown" and self._final_pots is not None:
            return list(self._final_pots)
        return self._layered_pots()

    def _layered_pots(self) -> list[Pot]:
        live = [s for s in self.committed if s not in self.folded]
        layered = self.committed
        pots: list[Pot] = []
        if self._dead:
            layered = {s: c - self._ante_paid(s) for s, c in self.committed.items()}
            pots.append(Pot(self._dead, frozenset(live)))
        # Every layer runs from one committed amount to the next, so each seat with chips past
        # the layer's floor has the whole layer in: (level - previous) x those seats.
        amounts = sorted(c for c in layered.values() if c > 0)
        previous = 0
        for i, level in enumerate(amounts):
            if level == previous:
                continue
            amount = (level - previous) * (len(amounts) - i)
            eligible = frozenset(s for s in live if layered[s] >= level)
            previous = level
            if pots and (not eligible or pots[-1].eligible == eligible):
                pots[-1] = Pot(pots[-1].amount + amount, pots[-1].eligible)
            else:
                pots.append(Pot(amount, eligible))
        return pots

    # ----------------------------------------------------------------- acting

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

    # ----------------------------------------------------------------- showdown

    def computed_winners(self) -> frozenset[int] | None:
        """Seats that win chips of a contested pot by the known cards (``None``: cards unknown)."""
        if self.spec.cards is None or self.street != "showdown":
            return None
        return frozenset(s for pot, ws in self._card_awards() if len(pot.eligible) > 1 for s in ws)

    def if_ended_now(self) -> dict[int, int] | None:
        """The result if the hand ended now: no more betting, the known board dealt out and
        every pot awarded by the cards (the commentators' projection). None: cards unknown."""
        if self.result is not None:
            return dict(self.result)
        if self.spec.cards is None:
            return None
        clone = self.copy()
        clone.street = "showdown"
        return clone.settle(None)

    def settle(self, winners: Iterable[int] | None = None) -> dict[int, int]:
        """Award every pot at showdown (``None``: by the known cards); returns the result."""
        if self.street == "complete":
            raise Rejection("hand_over", "the hand is already complete")
        if self.street != "showdown":
            raise Rejection("hand_in_progress", "betting is not finished: no showdown yet")
        if winners is None:
            if self.spec.cards is None:
                raise Rejection("bad_winner", "no cards known: declare the winners")
            awards = self._card_awards()
        else:
            awards = self._declared_awards(frozenset(winners))
        won = {s: 0 for s in self.committed}
        all_to_first = self.spec.rules == "pokerkit"
        if all_to_first:
            awards = _merge_after_killing(awards)
        for pot, ordered in awards:
            share, odd = divmod(pot.amount, len(ordered))
            for i, s in enumerate(ordered):
                if all_to_first:
                    won[s] += share + (odd if i == 0 else 0)
                else:
                    won[s] += share + (1 if i < odd else 0)
        self._complete(won)
        assert self.result is not None
        return dict(self.result)

    # ----------------------------------------------------------------- internals

    def _left(self, seat: int) -> int:
        return seat % self.spec.seats + 1

    def _right(self, seat: int) -> int:
        return (seat - 2) % self.spec.seats + 1

    def _order_from(self, first: int) -> list[int]:
        """Every seat clockwise starting at ``first``."""
        n = self.spec.seats
        return [(first - 1 + i) % n + 1 for i in range(n)]

    def _odd_chip_order(self, seats: Iterable[int]) -> tuple[int, ...]:
        chosen = set(seats)
        return tuple(s for s in self._order_from(self._left(self.spec.button)) if s in chosen)

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

    def _ante_paid(self, seat: int) -> int:
        return min(self.spec.ante(seat), self.spec.starting_stack(seat))

    def _post(self, seat: int, kind: str, blind: int) -> None:
        chips = min(blind, self.stack(seat))
        if self.spec.rules == "pokerkit":  # PokerKit: from the stack before antes come back
            chips = min(chips, self.spec.starting_stack(seat) - self._ante_paid(seat))
        self._put(seat, chips)
        self.actions.append(ActionRecord(seat, kind, chips, self.street_bet[seat], "preflop"))

    def _live(self) -> list[int]:
        return [s for s in self.committed if s not in self.folded]

    def _can_still_act(self) -> set[int]:
        return {s for s in self.committed if s not in self.folded and s not in self.all_in}

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

    def _complete(self, won: Mapping[int, int]) -> None:
        self.street = "complete"
        self.to_act = None
        self.result = {s: won[s] - self.committed[s] for s in sorted(self.committed)}

    def _card_awards(self) -> list[tuple[Pot, tuple[int, ...]]]:
        cards = self.spec.cards
        assert cards is not None
        pots = self.pots()
        winners = self.spec.pieces.winners_by_pot(
            pots, cards.hole, cards.board, self.spec.button, self.spec.seats
        )
        return list(zip(pots, winners, strict=True))

    def _declared_awards(self, declared: frozenset[int]) -> list[tuple[Pot, tuple[int, ...]]]:
        if not declared:
            raise Rejection("bad_winner", "declare at least one winner")
        for s in sorted(declared):
            if not isinstance(s, int) or not 1 <= s <= self.spec.seats:
                raise Rejection("bad_winner", f"seat {s} is not a seat of 1..{self.spec.seats}")
            if s in self.folded:
                raise Rejection("bad_winner", f"seat {s} folded and cannot win a pot")
        awards = []
        for i, pot in enumerate(self.pots()):
            chosen = declared & pot.eligible
            if not chosen:
                if len(pot.eligible) != 1:
                    name = "main pot" if i == 0 else "side pot"
                    raise Rejection(
                        "bad_winner",
                        f"{name} of {pot.amount} between seats {_seat_list(pot.eligible)}"
                        " has no declared winner",
                    )
                chosen = pot.eligible
            awards.append((pot, self._odd_chip_order(chosen)))
        return awards


def _merge_after_killing(
    awards: list[tuple[Pot, tuple[int, ...]]],
) -> list[tuple[Pot, tuple[int, ...]]]:
    """PokerKit kills every hand that wins nothing before it pays, so pots next to each other
    whose remaining players are the same become one pot (and one set of odd chips)."""
    alive = {s for _, winners in awards for s in winners}
    merged: list[tuple[Pot, tuple[int, ...]]] = []
    for pot, winners in awards:
        left = pot.eligible & alive
        if merged and merged[-1][0].eligible == left:
            merged[-1] = (Pot(merged[-1][0].amount + pot.amount, left), winners)
        else:
            merged.append((Pot(pot.amount, frozenset(left)), winners))
    return merged


def _seat_list(seats: Iterable[int]) -> str:
    """``"2 and 5"``, ``"1, 2 and 5"``: seats as officials say them."""
    ordered = [str(s) for s in sorted(seats)]
    return ordered[0] if len(ordered) == 1 else ", ".join(ordered[:-1]) + " and " + ordered[-1]
