"""Property tests of ``Hand``, and differential tests against PokerKit as the oracle.

PokerKit's player index 0 is the seat left of the button (heads-up: the big blind), so seat
``s`` is index ``(s - button - 1) % seats``. Pot limit is composed from PokerKit's own parts
(``PotLimitPokerMixin`` + Texas hold'em), as it ships no pot-limit hold'em class.
"""

from __future__ import annotations

import pickle
import random
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from pokerkit import (
    Automation,
    BettingStructure,
    NoLimitTexasHoldem,
    PotLimitPokerMixin,
    State,
    TexasHoldemMixin,
    UnfixedLimitHoldem,
)

from hub.domain.bots import STYLES, choose_action
from hub.domain.errors import Rejection
from hub.domain.games.holdem.hand import Hand
from hub.domain.games.records import Pot
from hub.domain.games.spec import HandSpec

FULL_DECK = [r + s for r in "23456789TJQKA" for s in "cdhs"]
AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)


@dataclass(frozen=True)
class Cards:
    hole: dict[int, tuple[str, str]]
    board: tuple[str, ...]


class PotLimitTexasHoldem(PotLimitPokerMixin, TexasHoldemMixin, UnfixedLimitHoldem):
    """Pot-limit Texas hold'em composed from PokerKit's parts (the oracle for pot limit)."""

    betting_structure: ClassVar[BettingStructure] = BettingStructure.POT_LIMIT


def random_spec(rng: random.Random, pot_limit: bool, unequal: bool = False) -> HandSpec:
    seats = rng.choice([2, 3, 4, 6, 6, 9])
    deck = FULL_DECK[:]
    rng.shuffle(deck)
    hole = {s: (deck[2 * s], deck[2 * s + 1]) for s in range(1, seats + 1)}
    cap = rng.choice([1000, 2000, 10000])
    stacks = tuple(rng.choice([150, 777, 1500, cap]) for _ in range(seats)) if unequal else None
    return HandSpec(
        seats=seats,
        button=rng.randint(1, seats),
        small_blind=50,
        big_blind=100,
        cap=cap,
        pot_limit=pot_limit,
        cards=Cards(hole, tuple(deck[30:35])),
        stacks=stacks,
    )


def play_with_bots(spec: HandSpec, rng: random.Random) -> Hand:
    hand = Hand(spec)
    while hand.to_act is not None:
        seat = hand.to_act
        kind, amount = choose_action(hand, seat, rng, rng.choice([*STYLES, None]))
        hand.act(seat, kind, amount)
    if hand.street == "showdown":
        hand.settle(None)
    return hand


# ------------------------------------------------------------------ properties


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32), st.booleans(), st.booleans())
def test_random_legal_play_never_raises_and_conserves_chips(
    seed: int, pot_limit: bool, unequal: bool
) -> None:
    rng = random.Random(seed)
    spec = random_spec(rng, pot_limit, unequal)
    hand = play_with_bots(spec, rng)
    assert hand.street == "complete" and hand.result is not None
    assert sum(hand.result.values()) == 0
    for seat, score in hand.result.items():
        assert -spec.starting_stack(seat) <= score
        assert hand.committed[seat] <= spec.starting_stack(seat)
    assert Hand.replay(spec, _moves(hand)).committed == hand.committed


def _moves(hand: Hand) -> list[tuple[int, str, int | None]]:
    return [
        (a.seat, a.kind, a.to if a.kind in ("bet", "raise") else None)
        for a in hand.actions
        if a.kind not in ("small_blind", "big_blind")
    ]


def _expected_code(hand: Hand, seat: int, kind: str, amount: int | None) -> str | None:
    """The rejection code the rules give, derived from ``legal`` (None: accepted)."""
    if hand.street in ("showdown", "complete"):
        return "hand_over"
    if not 1 <= seat <= hand.spec.seats:
        return "unknown_seat"
    if seat != hand.to_act:
        return "out_of_turn"
    legal = hand.legal(seat)
    if kind == "fold":
        return None if legal.fold else "not_allowed"
    if kind == "check":
        return None if legal.check else "not_allowed"
    if kind == "call":
        return None if legal.call is not None else "not_allowed"
    if (kind == "bet") != (hand.high_bet == 0):
        return "not_allowed"
    if amount is None or amount <= 0:
        return "bad_amount"
    if legal.min_to is None or legal.max_to is None:
        return "not_allowed"
    if amount > hand.street_bet[seat] + hand.stack(seat):
        return "over_cap"
    if amount > legal.max_to:
        return "over_pot_limit"
    if amount < legal.min_to:
        return "below_min_raise"
    return None


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32), st.booleans(), st.booleans())
@example(seed=48160, pot_limit=True, unequal=True)  # an all-in for one chip: min_to is 1
def test_illegal_actions_are_rejected_with_the_right_code_and_change_nothing(
    seed: int, pot_limit: bool, unequal: bool
) -> None:
    rng = random.Random(seed)
    spec = random_spec(rng, pot_limit, unequal)
    hand = Hand(spec)
    boundary_codes: set[str] = set()
    pot_limit_binding = False  # some decision had a pot-limit maximum below all-in

    def check(seat: int, kind: str, amount: int | None) -> str | None:
        expected = _expected_code(hand, seat, kind, amount)
        before = pickle.loads(pickle.dumps(vars(hand)))  # a deep copy, ~10x faster than copy's
        try:
            hand.verify(seat, kind, amount)
            got = None
        except Rejection as rejection:
            got = rejection.code
        assert got == expected, (seat, kind, amount, hand.legal(seat))
        assert hand.can_act(seat, kind, amount) == (expected is None)
        if expected is not None:
            try:
                hand.act(seat, kind, amount)
            except Rejection:
                pass
            assert vars(hand) == before
        return got

    while True:
        boundaries = _boundary_amounts(hand)
        for _ in range(6):
            seat = rng.choice([hand.to_act or 1, rng.randint(0, spec.seats + 1)])
            kind = rng.choice(["fold", "check", "call", "bet", "raise"])
            amount = rng.choice(
                [None, 0, -1, rng.randint(1, spec.cap + 200), spec.cap + 1, *boundaries]
            )
            if kind in ("fold", "check", "call"):
                amount = None
            check(seat, kind, amount)
        if hand.to_act is None:
            break
        seat = hand.to_act
        legal = hand.legal(seat)
        if legal.min_to is not None and legal.max_to is not None:
            # Every boundary, every time: one chip below the minimum, one above the maximum,
            # one above all-in; the codes follow from the rules, not from _expected_code.
            kind = "raise" if hand.high_bet else "bet"
            all_in = hand.street_bet[seat] + hand.stack(seat)
            over_max = "over_cap" if legal.max_to == all_in else "over_pot_limit"
            pot_limit_binding |= legal.max_to < all_in
            # (An all-in for a single chip has min_to 1: one below is no amount at all.)
            below_min = "below_min_raise" if legal.min_to > 1 else "bad_amount"
            assert check(seat, kind, legal.min_to - 1) == below_min
            assert check(seat, kind, legal.max_to + 1) == over_max
            assert check(seat, kind, all_in + 1) == "over_cap"
            assert check(seat, kind, legal.min_to) is None
            assert check(seat, kind, legal.max_to) is None
            boundary_codes |= {below_min, over_max, "over_cap"}
        hand.act(seat, *choose_action(hand, seat, rng))
    if boundary_codes:
        assert "over_cap" in boundary_codes
        assert "below_min_raise" in boundary_codes or boundary_codes <= {
            "bad_amount",
            "over_cap",
        }
    if pot_limit_binding:
        assert pot_limit and "over_pot_limit" in boundary_codes


def _boundary_amounts(hand: Hand) -> list[int]:
    """The amounts next to the limits of the seat to act: ``min_to - 1``, ``max_to + 1`` and
    all-in + 1 (empty when it may not bet or raise)."""
    seat = hand.to_act
    if seat is None:
        return []
    legal = hand.legal(seat)
    if legal.min_to is None or legal.max_to is None:
        return []
    all_in = hand.street_bet[seat] + hand.stack(seat)
    return [legal.min_to - 1, legal.min_to, legal.max_to, legal.max_to + 1, all_in + 1]


# ------------------------------------------------------------------ PokerKit oracle


def oracle(spec: HandSpec) -> State:
    n, b = spec.seats, spec.button
    stacks = [spec.starting_stack((b + i) % n + 1) for i in range(n)]
    args: tuple[Any, ...] = (AUTOMATIONS, False, 0, (50, 100), 100, stacks, n)
    if spec.pot_limit:
        return PotLimitTexasHoldem(*args[:5])(stacks, n)
    return NoLimitTexasHoldem.create_state(*args)


def deal_oracle(state: State, spec: HandSpec) -> None:
    """Burn and deal the same cards as ``spec.cards`` whenever PokerKit asks."""
    assert spec.cards is not None
    n, b = spec.seats, spec.button
    while True:
        if state.can_burn_card():
            state.burn_card("??")
        elif state.can_deal_hole():
            index = state.hole_dealee_index
            assert index is not None
            state.deal_hole("".join(spec.cards.hole[(b + index) % n + 1]))
        elif state.can_deal_board():
            count = state.board_dealing_count
            assert count is not None
            dealt = len(state.board_cards)  # one list per board card (single board)
            state.deal_board("".join(spec.cards.board[dealt : dealt + count]))
        else:
            return


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32), st.booleans())
def test_matches_pokerkit_legal_bounds_and_results(seed: int, pot_limit: bool) -> None:
    rng = random.Random(seed)
    spec = random_spec(rng, pot_limit)
    n, b = spec.seats, spec.button
    hand = Hand(spec)
    state = oracle(spec)
    deal_oracle(state, spec)
    while hand.to_act is not None:
        seat = hand.to_act
        assert state.actor_index == (seat - b - 1) % n
        legal = hand.legal(seat)
        assert (legal.call or 0) == state.checking_or_calling_amount
        assert legal.min_to == state.min_completion_betting_or_raising_to_amount
        assert legal.max_to == state.max_completion_betting_or_raising_to_amount
        _boundaries_agree_with_pokerkit(hand, seat, state)
        kind, amount = choose_action(hand, seat, rng)
        hand.act(seat, kind, amount)
        if kind == "fold":
            state.fold()
        elif kind in ("check", "call"):
            state.check_or_call()
        else:
            state.complete_bet_or_raise_to(amount)
        deal_oracle(state, spec)
    assert state.actor_index is None
    if hand.street == "showdown":
        hand.settle(None)
    deal_oracle(state, spec)
    assert not state.status
    assert hand.result is not None
    oracle_result = {
        (b + i) % n + 1: state.stacks[i] - spec.starting_stack((b + i) % n + 1) for i in range(n)
    }
    if _three_way_odd_split(hand):
        assert sum(oracle_result.values()) == 0  # PokerKit hands odd chips out differently
    else:
        assert hand.result == oracle_result


def _boundaries_agree_with_pokerkit(hand: Hand, seat: int, state: State) -> None:
    """One chip either side of each limit: we and PokerKit accept and refuse the same."""
    kind = "raise" if hand.high_bet else "bet"
    for amount in _boundary_amounts(hand):
        ours = hand.can_act(seat, kind, amount)
        assert ours == state.can_complete_bet_or_raise_to(amount), (kind, amount)


def _three_way_odd_split(hand: Hand) -> bool:
    """Whether a pot splits three or more ways with more than one odd chip left over."""
    spec = hand.spec
    assert spec.cards is not None
    from hub.domain.evaluation import winners_by_pot

    pots = hand.pots()
    if len([s for s in hand.committed if s not in hand.folded]) < 2:
        return False
    winners = winners_by_pot(pots, spec.cards.hole, spec.cards.board, spec.button, spec.seats)
    return any(len(w) > 2 and p.amount % len(w) > 1 for p, w in zip(pots, winners, strict=True))


def _sub_big_blind_all_in_this_street(hand: Hand) -> bool:
    """Whether an all-in bet or raise on this street added less than the big blind."""
    high = hand.spec.big_blind if hand.street == "preflop" else 0
    for a in hand.actions:
        if a.street == hand.street and a.kind in ("bet", "raise"):
            if a.to - high < hand.spec.big_blind and a.seat in hand.all_in:
                return True
            high = a.to
    return False


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32), st.booleans())
def test_matches_pokerkit_with_unequal_stacks_except_two_known_differences(
    seed: int, pot_limit: bool
) -> None:
    """Unequal stacks (never met in capped play) show where we part from PokerKit on purpose.

    1. PokerKit does not count the big blind as the increment to beat, so an all-in that adds
       less than the big blind reopens its betting; we apply the standard rule (it does not).
    2. With several pots, PokerKit hands out odd chips per its own order; we give each pot's
       odd chips one at a time from the left of the button. Totals still agree.
    """
    rng = random.Random(seed)
    spec = random_spec(rng, pot_limit, unequal=True)
    n, b = spec.seats, spec.button
    hand = Hand(spec)
    state = oracle(spec)
    deal_oracle(state, spec)
    while hand.to_act is not None:
        seat = hand.to_act
        assert state.actor_index == (seat - b - 1) % n
        legal = hand.legal(seat)
        assert (legal.call or 0) == state.checking_or_calling_amount
        theirs = (
            state.min_completion_betting_or_raising_to_amount,
            state.max_completion_betting_or_raising_to_amount,
        )
        if (legal.min_to, legal.max_to) != theirs:
            assert legal.min_to is None and _sub_big_blind_all_in_this_street(hand)
        kind, amount = choose_action(hand, seat, rng)  # ours is the stricter: legal there too
        hand.act(seat, kind, amount)
        if kind == "fold":
            state.fold()
        elif kind in ("check", "call"):
            state.check_or_call()
        else:
            state.complete_bet_or_raise_to(amount)
        deal_oracle(state, spec)
    if hand.street == "showdown":
        hand.settle(None)
    deal_oracle(state, spec)
    assert hand.result is not None and not state.status
    for i in range(n):
        seat = (b + i) % n + 1
        theirs_score = state.stacks[i] - spec.starting_stack(seat)
        assert abs(hand.result[seat] - theirs_score) <= len(hand.pots())


# ------------------------------------------------------------------ PokerKit's rules (PHH)


def pokerkit_spec(rng: random.Random, pot_limit: bool) -> HandSpec:
    """Any table PHH may hold: 2-9 seats, unequal stacks, any blinds, antes of either kind."""
    seats = rng.randint(2, 9)
    deck = FULL_DECK[:]
    rng.shuffle(deck)
    hole = {s: (deck[2 * s], deck[2 * s + 1]) for s in range(1, seats + 1)}
    bb = rng.choice([2, 10, 100, 150])
    sb = rng.randint(1, bb)
    ante = rng.choice([0, 0, 1, bb // 10 or 1, bb])
    dead_antes = rng.random() < 0.5
    uneven = rng.random() < 0.5  # say, only the big blind's ante
    antes = tuple(ante if not uneven or rng.random() < 0.5 else 0 for _ in range(seats))
    return HandSpec(
        seats=seats,
        button=rng.randint(1, seats),
        small_blind=sb,
        big_blind=bb,
        cap=1,
        pot_limit=pot_limit,
        cards=Cards(hole, tuple(deck[30:35])),
        stacks=tuple(rng.randint(1, 60 * bb) for _ in range(seats)),
        antes=antes if ante else None,
        dead_antes=dead_antes,
        min_bet=rng.choice([None, bb, max(1, bb // 2)]),
        rules="pokerkit",
    )


def pokerkit_oracle(spec: HandSpec) -> State:
    n, b = spec.seats, spec.button
    order = [(b + i) % n + 1 for i in range(n)]
    antes = [spec.ante(s) for s in order]
    if n == 2:
        antes.reverse()  # PokerKit reads heads-up antes by position, like the blinds
    cls: Any = PotLimitTexasHoldem if spec.pot_limit else NoLimitTexasHoldem
    game = cls(
        AUTOMATIONS,
        not spec.dead_antes,
        antes,
        (spec.small_blind, spec.big_blind),
        spec.smallest_bet,
    )
    return game([spec.starting_stack(s) for s in order], n)  # type: ignore[no-any-return]


def pokerkit(step: Any, *args: Any) -> Any:
    """One step of the PokerKit oracle. PokerKit 0.7.7 sometimes fails one of its own internal
    checks (an ``assert`` in ``push_chips``, seen with unequal antes and stacks, e.g. seed
    401130784, no-limit): that hand has no oracle, so the example is dropped, not failed."""
    try:
        return step(*args)
    except AssertionError:
        assume(False)


# (PokerKit warns when it burns a side pot whose every player folded: such a hand is
# dropped below, so its warning is expected here, not a sign of anything in the suite's run)
@pytest.mark.filterwarnings("ignore:Due to non-standard folds, some chips will be burned")
@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32), st.booleans())
def test_pokerkit_rules_match_pokerkit_exactly_with_antes_and_any_stacks(
    seed: int, pot_limit: bool
) -> None:
    """``rules="pokerkit"``: the same legal bounds and the same chips to the last one, with
    antes (layered or dead), unequal stacks, any blinds and minimum bet (what PHH files hold)."""
    rng = random.Random(seed)
    spec = pokerkit_spec(rng, pot_limit)
    n, b = spec.seats, spec.button
    hand = Hand(spec)
    state = pokerkit_oracle(spec)
    pokerkit(deal_oracle, state, spec)
    while hand.to_act is not None:
        seat = hand.to_act
        assert state.actor_index == (seat - b - 1) % n
        legal = hand.legal(seat)
        assert (legal.call or 0) == state.checking_or_calling_amount
        assert legal.min_to == state.min_completion_betting_or_raising_to_amount
        assert legal.max_to == state.max_completion_betting_or_raising_to_amount
        kind, amount = choose_action(hand, seat, rng)
        hand.act(seat, kind, amount)
        if kind == "fold":
            pokerkit(state.fold)
        elif kind in ("check", "call"):
            pokerkit(state.check_or_call)
        else:
            pokerkit(state.complete_bet_or_raise_to, amount)
        pokerkit(deal_oracle, state, spec)
    assert state.actor_index is None
    if hand.street == "showdown":
        hand.settle(None)
    pokerkit(deal_oracle, state, spec)
    assert hand.result is not None and not state.status
    # PokerKit burns a side pot whose every player folded (it warns "some chips will be
    # burned"; our engine gives them to the pot below): no chips to compare such a hand by.
    assume(sum(state.stacks) == sum(spec.starting_stack(s) for s in range(1, n + 1)))
    theirs = {
        (b + i) % n + 1: state.stacks[i] - spec.starting_stack((b + i) % n + 1) for i in range(n)
    }
    assert hand.result == theirs


def test_standard_rules_are_the_default_and_differ_from_pokerkit_where_documented() -> None:
    """An all-in for less than the big blind reopens the betting only by PokerKit's rules."""

    def after_short_all_in(rules: str) -> Hand:
        spec = HandSpec(
            seats=3, button=3, small_blind=50, big_blind=100, cap=1000,
            pot_limit=False, stacks=(1000, 1000, 130), rules=rules,
        )  # fmt: skip
        hand = Hand(spec)
        hand.act(3, "call")
        hand.act(1, "call")
        hand.act(2, "check")  # flop: seat 3 has 30 left
        hand.act(1, "check")
        hand.act(2, "check")
        hand.act(3, "bet", 30)  # all-in for less than the big blind
        return hand

    assert HandSpec(seats=2, button=1, small_blind=1, big_blind=2, cap=9).rules == "standard"
    assert after_short_all_in("standard").legal(1).min_to is None  # call or fold only
    assert after_short_all_in("pokerkit").legal(1).min_to == 130  # 30 + the minimum bet


# ------------------------------------------------------------------ kept, not recounted


def _layered_pots(hand: Hand) -> list[Pot]:
    """``Hand.pots`` as first written: each layer's chips summed seat by seat."""
    live = [s for s in hand.committed if s not in hand.folded]
    layered = hand.committed
    pots: list[Pot] = []
    if hand.spec.dead_antes and any(hand.spec.ante(s) for s in layered):
        paid = {s: min(hand.spec.ante(s), hand.spec.starting_stack(s)) for s in layered}
        layered = {s: c - paid[s] for s, c in hand.committed.items()}
        pots.append(Pot(sum(paid.values()), frozenset(live)))
    previous = 0
    for level in sorted({c for c in layered.values() if c > 0}):
        amount = sum(min(c, level) - min(c, previous) for c in layered.values() if c > previous)
        eligible = frozenset(s for s in live if layered[s] >= level)
        previous = level
        if pots and (not eligible or pots[-1].eligible == eligible):
            pots[-1] = Pot(pots[-1].amount + amount, pots[-1].eligible)
        else:
            pots.append(Pot(amount, eligible))
    return pots


def _agrees_with_a_recount(hand: Hand) -> None:
    assert hand._high == max(hand.street_bet.values())  # what high_bet recounts
    assert hand._start == {s: hand.spec.starting_stack(s) for s in hand.committed}
    assert hand.pots() == _layered_pots(hand)
    if hand.to_act is not None:  # the seat to act is the first pending one left of the last
        assert hand.to_act in hand._pending


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from(["standard", "pokerkit", "limit", "rps"]))
def test_what_every_action_reads_is_kept_equal_to_a_recount(seed: int, kind: str) -> None:
    """``Hand`` keeps the high bet and starting stacks instead of recounting them per action,
    and lays pots out by a shortcut: after every action and every refused one (all seats, all
    kinds, amounts around the limits), they equal the recount."""
    rng = random.Random(seed)
    spec = pokerkit_spec(rng, rng.random() < 0.5) if kind == "pokerkit" else None
    if spec is None:
        spec = random_spec(rng, rng.random() < 0.5, unequal=rng.random() < 0.5)
        if kind == "limit":
            spec = replace(spec, limit=True)
        elif kind == "rps" and spec.seats >= 3:
            spec = replace(spec, order="rps")
    hand = Hand(spec)
    _agrees_with_a_recount(hand)
    while hand.to_act is not None:
        for _ in range(3):
            seat = rng.choice([hand.to_act, rng.randint(1, spec.seats)])
            amount = rng.choice(
                [None, 0, rng.randint(1, 3 * spec.big_blind), *_boundary_amounts(hand)]
            )
            try:
                hand.act(seat, rng.choice(["fold", "check", "call", "bet", "raise"]), amount)
            except Rejection:
                pass
            _agrees_with_a_recount(hand)
            if hand.to_act is None:
                break
        if hand.to_act is not None:
            hand.act(hand.to_act, *choose_action(hand, hand.to_act, rng))
            _agrees_with_a_recount(hand)
    if hand.street == "showdown":
        hand.settle(None)
    assert hand.result is not None and sum(hand.result.values()) == 0
    assert hand.pots() == _layered_pots(hand)
