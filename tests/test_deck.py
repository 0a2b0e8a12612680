import hashlib
import random

import pytest

from hub.domain.cards import FULL_DECK
from hub.domain.deck import (
    DeckOrder,
    commitment,
    commitment_text,
    deck_order_from_cards,
    random_deck_order,
    random_deck_orders,
    seeded_deck_order,
    seeded_deck_orders,
)

FIXED = (
    "2h Ts 2s 8c 2d 8h Kc 8d 2c Ks 4s 9c Qc Qs 9d 9s 3h 7s Jd Js Ad Qd Tc 5h As 7h Ac 3s Th Td "
    "6c 5d 5c 3c 7d Jh 4c 5s Qh Ah Jc Kd 7c 4d 9h 6s Kh 8s 3d 4h 6h 6d"
)


def test_deck_order_validates_52_distinct_cards():
    DeckOrder(FULL_DECK)
    with pytest.raises(ValueError, match="52 cards, got 51"):
        DeckOrder(FULL_DECK[:51])
    with pytest.raises(ValueError, match="card 2c twice"):
        DeckOrder(("2c", *FULL_DECK[1:51], "2c"))
    with pytest.raises(ValueError, match="not a canonical card"):
        DeckOrder(("ah", *FULL_DECK[1:]))


def test_random_deck_order_is_a_shuffle_and_not_rehearsal():
    order = random_deck_order()
    assert sorted(order.cards) == sorted(FULL_DECK)
    assert not order.rehearsal
    assert repr(order) == "DeckOrder(<secret>)"
    assert not random_deck_order(random.SystemRandom()).rehearsal


def test_random_deck_order_from_a_non_csprng_is_reproducible_and_marked_rehearsal() -> None:
    order = random_deck_order(random.Random(1))
    assert order == random_deck_order(random.Random(1))
    assert order.rehearsal
    assert repr(order) != "DeckOrder(<secret>)"


def test_random_deck_orders_differ_per_deal():
    orders = random_deck_orders(3)
    assert sorted(orders) == [1, 2, 3]
    assert len({o.cards for o in orders.values()}) == 3
    assert not any(o.rehearsal for o in orders.values())


def test_random_deck_orders_from_a_non_csprng_are_marked_rehearsal() -> None:
    orders = random_deck_orders(3, random.Random(7))
    assert orders == random_deck_orders(3, random.Random(7))
    assert all(o.rehearsal for o in orders.values())
    assert not any(o.rehearsal for o in random_deck_orders(2, random.SystemRandom()).values())


def test_seeded_deck_order_is_reproducible_and_marked_rehearsal():
    order = seeded_deck_order("fixed")
    assert order.rehearsal
    assert " ".join(order.cards) == FIXED
    assert seeded_deck_order("other") != order


def test_seeded_deck_orders_number_deals_from_one():
    orders = seeded_deck_orders("demo", 4)
    assert sorted(orders) == [1, 2, 3, 4]
    assert orders[2] == seeded_deck_order("demo:2")
    assert all(o.rehearsal for o in orders.values())


def test_deck_order_from_cards_accepts_loose_spellings():
    loose = [card.lower() for card in FULL_DECK]
    assert deck_order_from_cards(loose).cards == FULL_DECK
    assert deck_order_from_cards(" ".join(FULL_DECK), rehearsal=True).rehearsal


def test_commitment_is_sha256_of_the_documented_canonical_text():
    orders = {2: seeded_deck_order("b"), 1: seeded_deck_order("a")}
    text = f"duplicast-decks-v1\n1:{''.join(orders[1].cards)}\n2:{''.join(orders[2].cards)}\n"
    assert commitment_text(orders) == text
    assert commitment(orders) == hashlib.sha256(text.encode()).hexdigest()


def test_commitment_is_stable():
    assert commitment({1: seeded_deck_order("fixed")}) == (
        "fc36d5a9ed6c6cf0b3c77ea22fcf369b6c5de3346513554a7a833656147c3a33"
    )
    assert commitment(seeded_deck_orders("ifp-demo", 12)) == (
        "6f5e69423b089cbea7e96ddb78b5fca4366a6c816f1d3c39924194ab4dda5ea3"
    )


def test_commitment_changes_with_any_card_or_deal_number():
    order = seeded_deck_order("fixed")
    swapped = DeckOrder(order.cards[1::-1] + order.cards[2:])
    assert commitment({1: order}) != commitment({1: swapped})
    assert commitment({1: order}) != commitment({2: order})
