"""Hand-made worked examples of the hold'em rules, one rule per test."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
from pokerkit import Automation, NoLimitTexasHoldem

from hub.domain.errors import Rejection
from hub.domain.games.holdem.hand import Hand
from hub.domain.games.records import ActionRecord, Legal, Pot
from hub.domain.games.spec import HandSpec


@dataclass(frozen=True)
class Cards:
    hole: dict[int, tuple[str, str]]
    board: tuple[str, ...]


def six(**kw: object) -> Hand:
    """Six seats, button 6 (so seat 1 = SB, 2 = BB, 3 first to act), blinds 50/100, cap 10,000."""
    args: dict[object, object] = dict(seats=6, button=6, small_blind=50, big_blind=100, cap=10000)
    args.update(kw)
    return Hand(HandSpec(**args))  # type: ignore[arg-type]


def code_of(hand: Hand, seat: int, kind: str, amount: int | None = None) -> str:
    before = copy.deepcopy(vars(hand))
    with pytest.raises(Rejection) as info:
        hand.act(seat, kind, amount)
    assert vars(hand) == before  # a rejection changes nothing
    assert not hand.can_act(seat, kind, amount)
    return info.value.code


# ------------------------------------------------------------------ blinds and order


def test_blinds_post_themselves_and_action_starts_left_of_the_big_blind() -> None:
    hand = six()
    assert hand.actions == [
        ActionRecord(1, "small_blind", 50, 50, "preflop"),
        ActionRecord(2, "big_blind", 100, 100, "preflop"),
    ]
    assert (hand.street, hand.to_act, hand.pot) == ("preflop", 3, 150)
    assert hand.committed == {1: 50, 2: 100, 3: 0, 4: 0, 5: 0, 6: 0}


def test_heads_up_button_posts_small_blind_acts_first_preflop_and_last_after() -> None:
    hand = Hand(HandSpec(seats=2, button=2, small_blind=50, big_blind=100, cap=10000))
    assert hand.committed == {1: 100, 2: 50}
    assert hand.to_act == 2
    hand.act(2, "call")
    assert hand.to_act == 1  # the big blind's option
    assert hand.legal(1) == Legal(False, True, None, 200, 300)  # 100 + pot 200 + 0 to call
    hand.act(1, "check")
    assert (hand.street, hand.to_act) == ("flop", 1)  # big blind first after the flop
    hand.act(1, "check")
    assert hand.to_act == 2


def test_postflop_action_starts_left_of_the_button_and_skips_folded_seats() -> None:
    hand = six(button=3)  # SB 4, BB 5, first to act 6
    for seat in (6, 1, 2, 3):
        hand.act(seat, "call")
    hand.act(4, "fold")
    hand.act(5, "check")
    assert (hand.street, hand.to_act) == ("flop", 5)  # 4 folded


# ------------------------------------------------------------------ pot limit


def test_pot_limit_maxima_preflop_worked_example() -> None:
    hand = six()
    # UTG: calls 100 (pot 250), raises by the pot: 100 + 150 + 100 = 350.
    assert hand.legal(3).max_to == 350
    hand.act(3, "raise", 350)
    # Next: high 350 + pot (50 + 100 + 350 = 500) + call 350 = 1200 (calls to pot 850,
    # raises by 850: 350 + 850 = 1200).
    assert hand.legal(4).max_to == 1200
    for seat in (4, 5, 6):
        hand.act(seat, "fold")
    # SB (50 in): 350 + 500 + (350 - 50) = 1150.
    assert hand.legal(1) == Legal(True, False, 300, 600, 1150)
    hand.act(1, "call")
    # BB (100 in), pot now 800: 350 + 800 + 250 = 1400.
    assert hand.legal(2).max_to == 1400
    assert code_of(hand, 2, "raise", 1401) == "over_pot_limit"
    hand.act(2, "raise", 1400)
    assert hand.pot == 350 + 350 + 1400
    # Back to seat 3 (350 in), facing 1,050 more: 1400 + pot 2100 + 1050 = 4550.
    assert hand.to_act == 3
    assert hand.legal(3).max_to == 4550


def test_pot_limit_postflop_bet_is_at_most_the_pot_and_raise_counts_the_call() -> None:
    hand = six()
    hand.act(3, "raise", 300)
    for seat in (4, 5, 6):
        hand.act(seat, "fold")
    hand.act(1, "call")
    hand.act(2, "call")
    assert (hand.street, hand.pot) == ("flop", 900)
    assert hand.legal(1) == Legal(False, True, None, 100, 900)
    hand.act(1, "bet", 900)
    # Seat 2: 900 + (900 + 900) + 900 = 3600.
    assert hand.legal(2) == Legal(True, False, 900, 1800, 3600)


def test_pot_limit_maximum_is_capped_by_the_stack() -> None:
    hand = six(cap=1000)
    hand.act(3, "raise", 350)
    assert hand.legal(4).max_to == 1000  # the pot allows 1200, the stack only 1000
    assert code_of(hand, 4, "raise", 1100) == "over_cap"  # over the stack before over the pot


def test_no_limit_allows_any_raise_up_to_the_stack() -> None:
    hand = six(pot_limit=False)
    assert hand.legal(3) == Legal(True, False, 100, 200, 10000)
    hand.act(3, "raise", 10000)
    assert hand.all_in == frozenset({3})
    assert code_of(hand, 4, "raise", 10001) == "not_allowed"  # can only call all-in or fold
    assert hand.legal(4) == Legal(True, False, 10000, None, None)


# ------------------------------------------------------------------ minimum raise


def test_min_raise_is_the_largest_increment_of_the_street() -> None:
    hand = six()
    assert hand.legal(3).min_to == 200  # the big blind counts as a bet of 100
    hand.act(3, "raise", 350)  # increment 250
    assert hand.legal(4).min_to == 600
    assert code_of(hand, 4, "raise", 599) == "below_min_raise"
    hand.act(4, "raise", 1000)  # increment 650
    assert hand.legal(5).min_to == 1650


def test_min_bet_postflop_is_the_big_blind_but_all_in_for_less_is_allowed() -> None:
    stacks = (10000, 10000, 150, 10000, 10000, 10000)
    hand = six(stacks=stacks, pot_limit=False)
    hand.act(3, "call")
    for seat in (4, 5, 6):
        hand.act(seat, "fold")
    hand.act(1, "call")
    hand.act(2, "check")
    assert hand.street == "flop"
    assert code_of(hand, 1, "bet", 99) == "below_min_raise"
    hand.act(1, "check")
    hand.act(2, "check")
    assert hand.legal(3) == Legal(False, True, None, 50, 50)  # 50 behind: all-in for less
    hand.act(3, "bet", 50)
    assert hand.all_in == frozenset({3})
    # Seat 1 checked and now faces less than a full bet: it may only call or fold (the same
    # rule as a short all-in raise). PokerKit would let it raise here; capped play with equal
    # stacks never meets the case.
    assert hand.legal(1) == Legal(True, False, 50, None, None)


# ------------------------------------------------------------------ short all-in


def _short_all_in_hand() -> Hand:
    """Three seats (button 3): seat 2 has 1,600 chips, the others 10,000; all limp, then on the
    flop seat 1 bets 1,000, seat 2 goes all-in to 1,500 (+500, less than a full raise), seat 3
    calls 1,500."""
    hand = Hand(HandSpec(3, 3, 50, 100, 10000, pot_limit=False, stacks=(10000, 1600, 10000)))
    hand.act(3, "call")
    hand.act(1, "call")
    hand.act(2, "check")
    hand.act(1, "bet", 1000)
    hand.act(2, "raise", 1500)
    hand.act(3, "call")
    return hand


def test_a_short_all_in_does_not_reopen_the_betting_for_a_player_who_acted() -> None:
    hand = _short_all_in_hand()
    assert hand.all_in == frozenset({2})
    assert hand.to_act == 1
    assert hand.legal(1) == Legal(True, False, 500, None, None)
    assert code_of(hand, 1, "raise", 3000) == "not_allowed"
    hand.act(1, "call")
    assert (hand.street, hand.to_act) == ("turn", 1)


def test_a_short_all_in_still_lets_a_player_who_has_not_acted_raise() -> None:
    hand = Hand(HandSpec(3, 3, 50, 100, 10000, pot_limit=False, stacks=(10000, 1600, 10000)))
    hand.act(3, "call")
    hand.act(1, "call")
    hand.act(2, "check")
    hand.act(1, "bet", 1000)
    hand.act(2, "raise", 1500)
    assert hand.legal(3).min_to == 2500  # has not acted this street: may raise by 1,000


def test_pokerkit_agrees_that_the_short_all_in_does_not_reopen() -> None:
    state = NoLimitTexasHoldem.create_state(
        (
            Automation.ANTE_POSTING,
            Automation.BET_COLLECTION,
            Automation.BLIND_OR_STRADDLE_POSTING,
            Automation.CARD_BURNING,
            Automation.HOLE_DEALING,
            Automation.BOARD_DEALING,
        ),
        False,
        0,
        (50, 100),
        100,
        (10000, 1600, 10000),  # index 0 = SB = seat 1
        3,
    )
    state.check_or_call()
    state.check_or_call()
    state.check_or_call()
    state.complete_bet_or_raise_to(1000)
    state.complete_bet_or_raise_to(1500)
    state.check_or_call()
    assert state.actor_index == 0
    assert not state.can_complete_bet_or_raise_to()


# ------------------------------------------------------------------ pots


def _three_all_ins() -> Hand:
    """Four seats (button 4) with 500, 1,000, 2,000 and 3,000 chips: seat 3 shoves, all call."""
    cards = Cards(
        {1: ("Ah", "Ad"), 2: ("Kh", "Kd"), 3: ("Qh", "Qd"), 4: ("Jh", "Jd")},
        ("2c", "7s", "9c", "3s", "4d"),
    )
    hand = Hand(
        HandSpec(4, 4, 50, 100, 3000, pot_limit=False, cards=cards, stacks=(500, 1000, 2000, 3000))
    )
    hand.act(3, "raise", 2000)
    hand.act(4, "call")
    hand.act(1, "call")
    hand.act(2, "call")
    return hand


def test_side_pots_with_three_all_ins_of_different_sizes() -> None:
    hand = _three_all_ins()
    assert hand.all_in == frozenset({1, 2, 3})
    assert (hand.street, hand.to_act) == ("showdown", None)
    assert hand.board_visible() == ("2c", "7s", "9c", "3s", "4d")
    assert hand.pots() == [
        Pot(2000, frozenset({1, 2, 3, 4})),
        Pot(1500, frozenset({2, 3, 4})),
        Pot(2000, frozenset({3, 4})),
    ]
    assert hand.computed_winners() == frozenset({1, 2, 3})
    result = hand.settle(None)
    assert result == {1: 1500, 2: 500, 3: 0, 4: -2000}
    assert hand.street == "complete" and hand.result == result


def test_declared_winners_take_the_pots_they_are_eligible_for() -> None:
    hand = _three_all_ins()
    assert code_of_settle(hand, [1]) == "bad_winner"  # side pots have no declared winner
    with pytest.raises(Rejection, match="side pot of 1500 between seats 2, 3 and 4"):
        hand.settle([1])
    # Seats 1 and 4 split the main pot (both eligible); seat 4 alone takes both side pots.
    assert hand.settle([1, 4]) == {1: 500, 2: -1000, 3: -2000, 4: 2500}


def test_folded_chips_stay_in_the_pot_and_uncalled_chips_come_back() -> None:
    hand = six(pot_limit=False, stacks=(10000, 10000, 10000, 10000, 10000, 700))
    hand.act(3, "raise", 300)
    hand.act(4, "fold")
    hand.act(5, "fold")
    hand.act(6, "raise", 700)  # all-in
    hand.act(1, "fold")
    hand.act(2, "raise", 2000)
    hand.act(3, "fold")
    # Layers: 50 from each of 1 (folded), 100s..., seat 2's 1,300 above 700 comes back.
    assert hand.street == "showdown"
    assert hand.pots() == [Pot(50 + 300 + 700 + 700, frozenset({2, 6})), Pot(1300, frozenset({2}))]
    assert hand.settle([6]) == {1: -50, 2: -700, 3: -300, 4: 0, 5: 0, 6: 1050}


def test_split_pot_odd_chip_goes_first_left_of_the_button() -> None:
    cards = Cards(
        {1: ("Ah", "2d"), 2: ("Ad", "3c"), 3: ("Kc", "Kd")}, ("As", "Ks", "Qh", "Jd", "Td")
    )
    hand = Hand(HandSpec(3, 1, 25, 50, 1000, pot_limit=False, cards=cards))  # SB 2, BB 3
    hand.act(1, "call")
    hand.act(2, "call")
    hand.act(3, "raise", 101)
    hand.act(1, "call")
    hand.act(2, "call")
    hand.act(2, "check")
    hand.act(3, "check")
    hand.act(1, "check")
    for _ in range(2):
        for seat in (2, 3, 1):
            hand.act(seat, "check")
    assert hand.street == "showdown" and hand.pot == 303
    # Broadway for everyone: 303 = 101 * 3, no odd chip; declare two winners instead.
    assert hand.computed_winners() == frozenset({1, 2, 3})
    assert hand.copy().settle(None) == {1: 0, 2: 0, 3: 0}
    # 303 between seats 3 and 1: 151 each and the odd chip to seat 3 (seat 2 is left of the
    # button 1, then seat 3, then seat 1): seat 3 gets 152 (+51), seat 1 151 (+50).
    assert hand.settle([1, 3]) == {1: 50, 2: -101, 3: 51}


def code_of_settle(hand: Hand, winners: list[int] | None) -> str:
    before = copy.deepcopy(vars(hand))
    with pytest.raises(Rejection) as info:
        hand.settle(winners)
    assert vars(hand) == before
    return info.value.code


# ------------------------------------------------------------------ completion


def test_fold_out_completes_the_hand_at_once() -> None:
    hand = six()
    hand.act(3, "raise", 300)
    for seat in (4, 5, 6, 1, 2):
        hand.act(seat, "fold")
    assert (hand.street, hand.to_act) == ("complete", None)
    assert hand.result == {1: -50, 2: -100, 3: 150, 4: 0, 5: 0, 6: 0}
    assert hand.board_visible() == ()


def test_board_visible_follows_the_street_reached() -> None:
    board = ("2c", "7s", "9c", "3s", "4d")
    cards = Cards({1: ("Ah", "Ad"), 2: ("Kh", "Kd"), 3: ("Qh", "Qd")}, board)
    hand = Hand(HandSpec(3, 3, 50, 100, 10000, cards=cards))
    assert hand.board_visible() == ()
    for seat in (3, 1):
        hand.act(seat, "call")
    hand.act(2, "check")
    assert hand.board_visible() == board[:3]
    for seat in (1, 2, 3):
        hand.act(seat, "check")
    assert hand.board_visible() == board[:4]
    hand.act(1, "bet", 100)
    hand.act(2, "fold")
    hand.act(3, "fold")
    assert hand.street == "complete" and hand.board_visible() == board[:4]
    assert six().board_visible() == ()  # no cards known


def test_a_card_dealt_twice_is_refused() -> None:
    board = ("2c", "7s", "9c", "3s", "4d")
    with pytest.raises(ValueError, match="card Ah dealt twice"):
        HandSpec(3, 3, 50, 100, 10000, cards=Cards({1: ("Ah", "Kd"), 2: ("Ah", "Qd")}, board))
    with pytest.raises(ValueError, match="card Ad dealt twice"):
        HandSpec(3, 3, 50, 100, 10000, cards=Cards({1: ("Ad", "Ad")}, board))
    with pytest.raises(ValueError, match="card 9c dealt twice"):
        HandSpec(3, 3, 50, 100, 10000, cards=Cards({1: ("9c", "Kd")}, board))
    with pytest.raises(ValueError, match="card 7s dealt twice"):
        HandSpec(3, 3, 50, 100, 10000, cards=Cards({1: ("Ah", "Kd")}, ("2c", "7s", "7s")))
    # Distinct cards, or no cards at all, are fine.
    HandSpec(3, 3, 50, 100, 10000, cards=Cards({1: ("Ah", "Kd"), 2: ("Qh", "Qd")}, board))
    HandSpec(3, 3, 50, 100, 10000)


def test_all_in_with_one_player_left_to_act_runs_out_the_board() -> None:
    hand = six(cap=1000)
    hand.act(3, "raise", 350)
    hand.act(4, "raise", 1000)
    for seat in (5, 6, 1, 2):
        hand.act(seat, "fold")
    hand.act(3, "call")
    assert (hand.street, hand.to_act) == ("showdown", None)
    assert code_of(hand, 3, "check") == "hand_over"


def test_actions_replay_and_copy() -> None:
    hand = six()
    hand.act(3, "raise", 350)
    hand.act(4, "call", 350)
    record = hand.act(5, "fold")
    assert record == ActionRecord(5, "fold", 0, 0, "preflop")
    assert hand.actions[-2] == ActionRecord(4, "call", 350, 350, "preflop")
    moves = [(a.seat, a.kind, a.to if a.kind == "raise" else None) for a in hand.actions[2:]]
    again = Hand.replay(hand.spec, moves)
    assert vars(again) == vars(hand)
    clone = hand.copy()
    clone.act(6, "fold")
    assert hand.to_act == 6 and 6 not in hand.folded and clone.to_act == 1


# ------------------------------------------------------------------ every rejection code


def test_every_rejection_code() -> None:
    hand = six()
    assert code_of(hand, 2, "call") == "out_of_turn"
    with pytest.raises(Rejection, match="seat 3 is to act, not seat 2"):
        hand.act(2, "call")
    assert code_of(hand, 7, "call") == "unknown_seat"
    assert code_of(hand, 0, "call") == "unknown_seat"
    assert code_of(hand, 3, "jump") == "not_allowed"
    assert code_of(hand, 3, "check") == "not_allowed"
    assert code_of(hand, 3, "bet", 300) == "not_allowed"  # the big blind is a bet: raise
    assert code_of(hand, 3, "raise", None) == "bad_amount"
    assert code_of(hand, 3, "raise", 0) == "bad_amount"
    assert code_of(hand, 3, "raise", -5) == "bad_amount"
    assert code_of(hand, 3, "call", 50) == "bad_amount"  # a call adds 100
    assert code_of(hand, 3, "raise", 150) == "below_min_raise"
    assert code_of(hand, 3, "raise", 351) == "over_pot_limit"
    assert code_of(hand, 3, "raise", 10001) == "over_cap"
    for seat in (3, 4, 5, 6, 1):
        hand.act(seat, "call")
    assert code_of(hand, 2, "fold") == "not_allowed"  # nothing to call
    assert code_of(hand, 2, "call") == "not_allowed"
    with pytest.raises(Rejection, match="check instead of folding"):
        hand.act(2, "fold")
    assert code_of_settle(hand, None) == "hand_in_progress"
    hand.act(2, "check")
    assert code_of(hand, 1, "raise", 200) == "not_allowed"  # no bet on the flop: bet
    for _ in range(3):
        for seat in range(1, 7):
            hand.act(seat, "check")
    assert hand.street == "showdown"
    assert code_of(hand, 1, "check") == "hand_over"
    assert code_of_settle(hand, None) == "bad_winner"  # no cards known
    assert code_of_settle(hand, []) == "bad_winner"
    assert code_of_settle(hand, [9]) == "bad_winner"
    hand.settle([4])
    assert code_of_settle(hand, [4]) == "hand_over"
    assert code_of(hand, 1, "check") == "hand_over"


def test_a_folded_seat_cannot_be_declared_winner() -> None:
    hand = six()
    hand.act(3, "fold")
    for seat in (4, 5, 6, 1):
        hand.act(seat, "call")
    hand.act(2, "check")
    for _ in range(3):
        for seat in (1, 2, 4, 5, 6):
            hand.act(seat, "check")
    with pytest.raises(Rejection, match="seat 3 folded"):
        hand.settle([3])


# ------------------------------------------------------------------ antes (PHH hands only)


def test_antes_are_posted_before_the_blinds_and_are_no_bet() -> None:
    hand = six(antes=(25,) * 6, stacks=(10000, 10000, 10000, 10000, 10000, 10))
    assert [(a.seat, a.kind, a.added) for a in hand.actions[:6]] == [
        (s, "ante", 25 if s < 6 else 10) for s in range(1, 7)
    ]
    assert hand.all_in == {6}  # the whole stack went in as the ante
    assert hand.pot == 5 * 25 + 10 + 150 and hand.high_bet == 100
    assert hand.legal(3).call == 100  # the ante does not count towards the call
    assert hand.legal(3).max_to == 100 + 285 + 100  # pot limit: the antes are in the pot
    assert six(antes=(25,) * 6, pot_limit=False).legal(3).max_to == 10000 - 25  # all-in


def test_layered_antes_cap_a_short_player_and_dead_antes_do_not() -> None:
    def fold_to_all_in(dead: bool) -> Hand:
        spec = dict(seats=3, button=3, small_blind=50, big_blind=100, cap=1000, pot_limit=False)
        hand = Hand(HandSpec(**spec, stacks=(1000, 1000, 300), antes=(0, 0, 100), dead_antes=dead))  # type: ignore[arg-type]
        hand.act(3, "raise", 200)  # all-in: 100 ante + 200
        hand.act(1, "call")
        hand.act(2, "fold")
        return hand

    layered = fold_to_all_in(False)
    # Layered: seat 3's ante is part of its 300, so its last 100 is uncalled and comes back.
    assert [(p.amount, set(p.eligible)) for p in layered.pots()] == [(500, {1, 3}), (100, {3})]
    # Dead: the ante is the main pot's own money; seat 3's 200 is matched, all 600 contested.
    dead = fold_to_all_in(True)
    assert [(p.amount, set(p.eligible)) for p in dead.pots()] == [(600, {1, 3})]
