"""RPS Poker (hub.domain.games.rps.rules): worked examples computed by hand, one rule per test."""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from hub.domain.cards import FULL_DECK
from hub.domain.deck import DeckOrder
from hub.domain.errors import Rejection
from hub.domain.games.rps.rules import (
    RpsHand,
    Score,
    best,
    dealer_sequence,
    outcome,
    parse_throws,
    score,
)
from hub.domain.games.spec import HandSpec

DEALER = "RRPSPSRRP"  # gambit RRP, flop S, turn PS, river RRP


def four(mode: str = "sequence", sequence: str | None = DEALER, **kw: object) -> RpsHand:
    """Four seats, dealer (button) 4: seat 2 posts the small blind, seat 3 the big blind (the
    two seats right of the dealer), seat 1 (left of the dealer) acts first, the dealer last."""
    args: dict[str, object] = dict(
        seats=4, button=4, small_blind=50, big_blind=100, cap=10000, order="rps"
    )
    args.update(kw)
    return RpsHand(HandSpec(**args), mode=mode, sequence=sequence)  # type: ignore[arg-type]


def state(hand: RpsHand) -> dict[str, object]:
    """A hand's whole state, its betting round's included (that class has no ``==``)."""
    return {**vars(hand), "betting": vars(hand.betting)}


def code_of(call, *args: object) -> str:  # type: ignore[no-untyped-def]
    hand = call.__self__
    before = copy.deepcopy(state(hand))
    with pytest.raises(Rejection) as info:
        call(*args)
    assert state(hand) == before  # a rejection changes nothing
    return info.value.code


def throw_round(hand: RpsHand, throws: dict[int, str]) -> None:
    for seat, t in throws.items():
        hand.throw(seat, t)


# ------------------------------------------------------------------ scoring by hand


def test_one_throw() -> None:
    assert outcome("P", "R") == 1 and outcome("R", "S") == 1 and outcome("S", "P") == 1
    assert outcome("R", "P") == -1 and outcome("S", "S") == 0


def test_showdown_of_three_players_against_the_dealer_best_points_difference_wins() -> None:
    # dealer  R R P S P S R R P
    # seat 1  P R R S S R P S P : W D L D W W W L D -> 4 wins, 2 losses: 4-2, +2
    # seat 2  R P S R P P R P S : D W W W D L D W W -> 5 wins, 1 loss:   5-1, +4
    # seat 3  S S S P R R S S S : L L W L L W L L W -> 3 wins, 6 losses: 3-6, -3
    assert score("PRRSSRPSP", DEALER) == Score(2, 4, 2)
    assert score("RPSRPPRPS", DEALER) == Score(4, 5, 1)
    assert score("SSSPRRSSS", DEALER) == Score(-3, 3, 6)
    scores = {1: Score(2, 4, 2), 2: Score(4, 5, 1), 3: Score(-3, 3, 6), 4: Score(0, 0)}
    assert best(scores, dealer=4) == {2}


def test_a_tie_on_points_difference_goes_to_more_wins_6_3_beats_5_2() -> None:
    # dealer R x9; seat 1 PPPPPPSSS: 6 wins (P>R), 3 losses (S<R): 6-3, +3
    #              seat 2 PPPPPSSRR: 5 wins, 2 losses, 2 draws:    5-2, +3
    one, two = score("PPPPPPSSS", "R" * 9), score("PPPPPSSRR", "R" * 9)
    assert (one, two) == (Score(3, 6, 3), Score(3, 5, 2)) and str(one) == "6-3"
    assert best({1: one, 2: two, 4: Score(0, 0)}, dealer=4) == {1}


def test_the_dealer_scores_0_0_and_wins_every_tie_with_him() -> None:
    # dealer R x9; seat 1 PPPSSSRRR: 3 wins, 3 losses: 3-3, 0 = the dealer's 0-0: the dealer
    # wins (a player must beat the dealer), though seat 1 has more wins than his 0.
    even = score("PPPSSSRRR", "R" * 9)
    assert even == Score(0, 3, 3)
    assert best({1: even, 4: Score(0, 0)}, dealer=4) == {4}
    # With the dealer folded, the same 0 against a -1 wins.
    assert best({1: even, 2: score("SRRRRRRRR", "R" * 9)}, dealer=None) == {1}


# ------------------------------------------------------------------ the dealer's sequence


def test_dealer_sequence_reads_each_throw_from_a_card_chosen_among_a_multiple_of_3() -> None:
    # A deck in FULL_DECK order: every card is the first of those left, rank 0: all rock.
    assert dealer_sequence(DeckOrder(FULL_DECK)) == "R" * 9
    # The card at position 1 is one of the 51 left: its rank k among them gives throw k mod 3,
    # so over the 51 possible cards each throw comes exactly 17 times (uniform).
    counts: Counter[str] = Counter()
    for k in range(51):
        rest = list(FULL_DECK[1:])
        second = rest.pop(k)
        counts[dealer_sequence(DeckOrder((FULL_DECK[0], second, *rest)))[0]] += 1
    assert counts == {"R": 17, "P": 17, "S": 17}
    # Position 0 (52 left, not a multiple of 3) gives no throw: moving its card changes nothing
    # of the first throw as long as the card at position 1 keeps its rank among those left.
    swapped = (FULL_DECK[5], *FULL_DECK[:5], *FULL_DECK[6:])
    assert dealer_sequence(DeckOrder(swapped))[0] == "R"


def test_throws_are_checked_round_by_round() -> None:
    assert parse_throws("rps", 0) == "RPS"
    with pytest.raises(Rejection, match="the flop is 1 throw, got 2") as info:
        parse_throws("RP", 1)
    assert info.value.code == "bad_throws"
    with pytest.raises(Rejection, match="unknown throw 'X'"):
        parse_throws("RXP", 0)


# ------------------------------------------------------------------ a whole hand


def test_order_blinds_right_of_the_dealer_first_left_of_him_dealer_last_pot_limit() -> None:
    hand = four()
    # Blinds: seat 2 (small, 50) and seat 3 (big, 100), the two seats right of dealer 4.
    assert [(a.seat, a.kind, a.added) for a in hand.actions] == [
        (2, "small_blind", 50),
        (3, "big_blind", 100),
    ]
    # No betting before the gambit's throws are in (seat 1 first: left of the dealer).
    assert hand.to_act == 1
    assert code_of(hand.act, 1, "call") == "throws_pending"
    assert code_of(hand.throw, 4, "RRR") == "not_allowed"  # the dealer's come from the deal
    assert code_of(hand.throw, 1, "RR") == "bad_throws"
    throw_round(hand, {1: "RPS", 2: "SRP"})
    hand.throw(2, "RPP")  # changed before the last player threw: allowed
    assert hand.dealer_throws() == []
    hand.throw(3, "PPS")  # the last one: the dealer's gambit RRP is turned over
    assert hand.dealer_throws() == ["RRP"]
    assert code_of(hand.throw, 1, "PPP") == "not_allowed"  # turned over: no more changes
    # Gambit betting. Pot-limit: seat 1's most is high + pot + (high - mine) = 100 + 150 + 100.
    assert hand.legal(1).max_to == 350
    hand.act(1, "raise", 350)
    hand.act(2, "call")  # adds 300
    hand.act(3, "fold")
    assert hand.to_act == 4  # the dealer last
    hand.act(4, "call")  # adds 350; pot 350 x 3 + 100 = 1150
    assert (hand.street, hand.pot, hand.to_act) == ("flop", 1150, 1)
    assert code_of(hand.throw, 3, "R") == "not_allowed"  # folded
    assert code_of(hand.act, 1, "check") == "throws_pending"
    throw_round(hand, {1: "S", 2: "R"})
    assert hand.dealer_throws() == ["RRP", "S"]
    # Flop: seat 1 (left of the dealer) first again; seat 2 bets the pot, 1150.
    hand.act(1, "check")
    assert hand.legal(2).max_to == 1150
    hand.act(2, "bet", 1150)
    hand.act(4, "call")
    hand.act(1, "call")  # pot 1150 + 3 x 1150 = 4600
    throw_round(hand, {1: "PP", 2: "SR"})
    for seat in (1, 2, 4):
        hand.act(seat, "check")
    throw_round(hand, {1: "RPS", 2: "PRS"})
    assert hand.dealer_throws() == ["RRP", "S", "PS", "RRP"]
    hand.act(1, "bet", 1000)
    hand.act(2, "fold")
    hand.act(4, "call")  # pot 4600 + 2000 = 6600
    assert (hand.street, hand.pot) == ("showdown", 6600)
    # Seat 1: RPS S PP RPS against RRP S PS RRP: D W W D D L D W W -> 4-1, +3: beats the
    # dealer's 0-0 and wins 6600. Chip-scores: seat 1 6600 - (350 + 1150 + 1000) = +4100,
    # seat 2 -(350 + 1150) = -1500, seat 3 -100 (its big blind), seat 4 -2500; sum 0.
    assert hand.seat_score(1) == Score(3, 4, 1)
    assert hand.computed_winners() == {1}
    assert hand.settle(None) == {1: 4100, 2: -1500, 3: -100, 4: -2500}


def test_a_dealer_who_chooses_reveals_after_every_player_and_before_the_betting() -> None:
    hand = four(mode="chosen", sequence=None)
    hand.throw(1, "RRR")
    assert code_of(hand.reveal, "PPP") == "throws_pending"  # seats 2 and 3 have not thrown
    throw_round(hand, {2: "SSS", 3: "PPP"})
    assert code_of(hand.act, 1, "call") == "throws_pending"  # the dealer's not turned over
    assert code_of(hand.reveal, "PP") == "bad_throws"
    hand.reveal("PSR")
    assert code_of(hand.throw, 1, "SSS") == "not_allowed"
    assert code_of(hand.reveal, "RRR") == "not_allowed"
    hand.act(1, "fold")
    hand.act(2, "fold")
    hand.act(3, "check")  # the dealer has not called the big blind yet: he acts last
    assert hand.to_act == 4
    hand.act(4, "fold")  # seat 3 wins the blinds: +50 from seat 2
    assert hand.street == "complete" and hand.result == {1: 0, 2: -50, 3: 50, 4: 0}
    assert hand.dealer_throws() == ["PSR"]


def _to_showdown(hand: RpsHand, throws: dict[int, str]) -> None:
    """Everyone calls the big blind and checks down; ``throws``: each seat's nine."""
    for a, b in [(0, 3), (3, 4), (4, 6), (6, 9)]:
        throw_round(hand, {s: t[a:b] for s, t in throws.items()})
        for seat in (1, 2, 3, 4):  # left of the dealer first, the dealer last
            legal = hand.legal(seat)
            if legal.call:
                hand.act(seat, "call")
            elif legal.check:
                hand.act(seat, "check")


def test_a_tie_with_the_dealer_goes_to_the_dealer() -> None:
    hand = four(sequence="R" * 9)
    # Seats 1 and 2: PPPSSSRRR, 3-3, 0; seat 3: SSSSSSSSS, 0-9, -9; dealer 0-0 wins the ties.
    _to_showdown(hand, {1: "PPPSSSRRR", 2: "PPPSSSRRR", 3: "S" * 9})
    assert hand.computed_winners() == {4}
    # Every seat put in 100: the dealer wins 400, +300.
    assert hand.settle(None) == {1: -100, 2: -100, 3: -100, 4: 300}


def test_a_three_way_tie_goes_to_the_play_off_winner_the_console_declares() -> None:
    hand = four(sequence="R" * 9)
    # Seats 1, 2, 3 throw the same PPPPSSRRR: 4 wins, 2 losses, +2 each: tied past the wins.
    _to_showdown(hand, {1: "PPPPSSRRR", 2: "PPPPSSRRR", 3: "PPPPSSRRR"})
    assert hand.computed_winners() is None  # a play-off decides
    assert code_of(hand.settle, None) == "bad_winner"
    assert code_of(hand.settle, [4]) == "bad_winner"  # the dealer is not in the play-off
    assert code_of(hand.settle, [1, 2]) == "bad_winner"  # one play-off winner, not two
    assert hand.settle([2]) == {1: -100, 2: 300, 3: -100, 4: -100}


def test_a_declaration_against_the_throws_is_refused() -> None:
    hand = four(sequence="R" * 9)
    _to_showdown(hand, {1: "P" * 9, 2: "S" * 9, 3: "R" * 9})
    assert hand.computed_winners() == {1}
    assert code_of(hand.settle, [2]) == "bad_winner"


def test_an_all_in_before_the_river_waits_for_every_throw() -> None:
    hand = four(sequence="R" * 9, cap=300)
    throw_round(hand, {1: "PPP", 2: "SSS", 3: "SSS"})
    hand.act(1, "raise", 300)  # all-in (cap 300)
    for seat in (2, 3, 4):
        hand.act(seat, "fold")
    assert hand.street == "complete"  # a fold-out needs no more throws
    assert hand.dealer_throws() == ["RRR"]  # only the rounds the table turned over
    hand = four(sequence="R" * 9, cap=300)
    throw_round(hand, {1: "PPP", 2: "SSS", 3: "SSS"})
    hand.act(1, "raise", 300)
    hand.act(2, "fold")
    hand.act(3, "fold")
    hand.act(4, "call")
    assert hand.street == "showdown" and hand.round_index() == 1
    assert code_of(hand.settle, None) == "throws_pending"
    for t in ("P", "PP", "PPP"):
        hand.throw(1, t)
    assert hand.computed_winners() == {1}
    # Seat 1: P x9 against R x9: 9-0. It wins 300 + 300 + 50 + 100: +450.
    assert hand.settle(None) == {1: 450, 2: -50, 3: -100, 4: -300}
    # Thrown to the end after the betting closed: all four rounds were turned over.
    assert hand.dealer_throws() == ["RRR", "R", "RR", "RRR"]


def test_limit_betting_a_small_bet_then_a_big_bet_four_bets_a_round() -> None:
    hand = four(sequence="R" * 9, limit=True, pot_limit=False)
    throw_round(hand, {1: "PPP", 2: "SSS", 3: "SSS"})
    # Gambit: a raise is one big blind (100) above the high bet; the blind is the first bet.
    assert (hand.legal(1).min_to, hand.legal(1).max_to) == (200, 200)
    hand.act(1, "raise", 200)  # 2nd bet
    hand.act(2, "raise", 300)  # 3rd
    hand.act(3, "raise", 400)  # 4th: capped
    assert hand.legal(4).min_to is None and hand.legal(4).call == 400
    assert code_of(hand.act, 4, "raise", 500) == "not_allowed"
    for seat in (4, 1, 2):
        hand.act(seat, "call")
    throw_round(hand, {1: "P", 2: "S", 3: "S"})
    assert hand.legal(1).max_to == 100  # flop: still the small bet
    for seat in (1, 2, 3, 4):
        hand.act(seat, "check")
    throw_round(hand, {1: "PP", 2: "SS", 3: "SS"})
    assert (hand.legal(1).min_to, hand.legal(1).max_to) == (200, 200)  # turn: the big bet
    assert code_of(hand.act, 1, "bet", 400) == "over_pot_limit"


# ------------------------------------------------------------------ odds for commentators


def test_chances_to_win_with_one_throw_to_come() -> None:
    from hub.domain.games.rps.odds import chances

    # Seat 1 at +1 (1-0), seat 2 at 0 (0-0), the dealer (seat 4) in; one throw to come, each
    # player's a win, a draw or a loss a third of the time, independently:
    #   seat 1 ends W (2,2), D (1,1) or L (0,1); seat 2 ends W (1,1), D (0,0) or L (-1,0).
    #   seat 1 wins: (2,2): 1/3; (1,1): seat 2 below 2/3, tied 1/3 (half the play-off):
    #     1/3 x (2/3 + 1/6) = 5/18; (0,1): the dealer's. Total 6/18 + 5/18 = 11/18.
    #   seat 2 wins only at (1,1): seat 1 below (0,1) 1/3, tied 1/3 -> 1/3 x (1/3 + 1/6) = 3/18.
    #   the dealer wins when both end at 0 or below: 1/3 x 2/3 = 4/18. 11 + 3 + 4 = 18.
    odds = chances({1: Score(1, 1, 0), 2: Score(0, 0), 4: Score(0, 0)}, dealer=4, k=1)
    assert odds == pytest.approx({1: 11 / 18, 2: 3 / 18, 4: 4 / 18})
    # Alone against the dealer from 0-0 with one throw: only a win beats him, 1/3.
    assert chances({1: Score(0, 0), 4: Score(0, 0)}, dealer=4, k=1) == pytest.approx(
        {1: 1 / 3, 4: 2 / 3}
    )


def test_the_seeds_odds_tables_follow_from_three_throws() -> None:
    from hub.domain.games.rps.odds import outcomes

    # After the gambit (3 throws) a hand is w-l with w + d + l = 3: 3!/(w! d! l!) of 27 ways.
    start = outcomes(Score(0, 0), 3)  # keys (diff, wins)
    by_record = {f"{w}-{w - diff}": round(p * 27) for (diff, w), p in start.items()}
    assert by_record == {
        "3-0": 1, "2-0": 3, "2-1": 3, "1-0": 3, "1-1": 6,
        "0-0": 1, "1-2": 3, "0-1": 3, "0-2": 3, "0-3": 1,
    }  # fmt: skip
    # The change over the flop and turn (3 throws), or on the river (3): +-3 1 in 27, +-2 3,
    # +-1 6 (w1 d2 and w2 l1: 3 + 3), no change 7 (d3 and w1 d1 l1: 1 + 6).
    change: dict[int, int] = {}
    for (diff, _), p in start.items():
        change[diff] = change.get(diff, 0) + round(p * 27)
    assert change == {3: 1, 2: 3, 1: 6, 0: 7, -1: 6, -2: 3, -3: 1}
