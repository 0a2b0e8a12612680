import pytest

from hub.domain.cards import FULL_DECK
from hub.domain.dealing import deal, deal_sequence
from hub.domain.deck import DeckOrder, seeded_deck_order

ORDER = seeded_deck_order("dealing")
C = ORDER.cards


def test_six_seats_button_six():
    dealt = deal(ORDER, button=6, seats=6)
    assert dealt.hole[1] == (C[0], C[6])
    assert dealt.hole[2] == (C[1], C[7])
    assert dealt.hole[6] == (C[5], C[11])
    assert dealt.board == (C[13], C[14], C[15], C[17], C[19])
    assert dealt.flop == (C[13], C[14], C[15])
    assert dealt.turn == C[17]
    assert dealt.river == C[19]


def test_six_seats_button_three_starts_at_seat_four():
    dealt = deal(ORDER, button=3, seats=6)
    assert dealt.hole[4] == (C[0], C[6])
    assert dealt.hole[6] == (C[2], C[8])
    assert dealt.hole[1] == (C[3], C[9])
    assert dealt.hole[3] == (C[5], C[11])
    assert dealt.board == (C[13], C[14], C[15], C[17], C[19])


def test_heads_up_the_non_button_gets_the_first_card():
    dealt = deal(ORDER, button=1, seats=2)
    assert dealt.hole == {1: (C[1], C[3]), 2: (C[0], C[2])}
    assert dealt.board == (C[5], C[6], C[7], C[9], C[11])


def test_ten_seats_wrap_and_board():
    dealt = deal(DeckOrder(FULL_DECK), button=10, seats=10)
    assert dealt.hole[1] == (FULL_DECK[0], FULL_DECK[10])
    assert dealt.board == tuple(FULL_DECK[i] for i in (21, 22, 23, 25, 27))


def test_no_card_dealt_twice():
    dealt = deal(ORDER, button=2, seats=9)
    cards = [c for pair in dealt.hole.values() for c in pair] + list(dealt.board)
    assert len(cards) == len(set(cards)) == 23
    assert sorted(dealt.hole) == list(range(1, 10))


def test_deal_sequence_and_bad_arguments():
    assert deal_sequence(4, 6) == [5, 6, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="button 7"):
        deal(ORDER, button=7, seats=6)
    with pytest.raises(ValueError, match=r"2\.\.22 seats"):
        deal(ORDER, button=1, seats=1)
