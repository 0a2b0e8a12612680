"""Hand strength, names and pot winners (phevaluator underneath)."""

from __future__ import annotations

import random

import pytest
from pokerkit import StandardHighHand

from hub.domain.evaluation import hand_category, hand_name, strength, winners_by_pot
from hub.domain.games.records import Pot

FULL_DECK = [r + s for r in "23456789TJQKA" for s in "cdhs"]


# Seven cards (two hole, then the board; fewer before the flop) | category | name on air.
NAMED = """
Ah Kh Qh Jh Th 2c 3d | Royal flush | Royal flush
9h Kh Qh Jh Th 2c 3d | Straight flush | Straight flush, king high
Ac 2c 3c 4c 5c Kd Qh | Straight flush | Straight flush, five high
Ac Ad Ah As 2c 3d 4h | Four of a kind | Four of a kind, aces
Qc Qd Qh 5s 5c 3d 4h | Full house | Full house, queens full of fives
5c 5d Qh 5s Qc Qd 4h | Full house | Full house, queens full of fives
Ac Ad Ah Ks Kc 3d 4h | Full house | Full house, aces full of kings
2h 7h Kh Ks Qh 3h 4d | Flush | Flush, king high
2h 7h Ah Ks Kh 3h 4d | Flush | Flush, ace high
5c 6d 7h 8s 9c Kd Th | Straight | Straight, ten high
Ac 2d 3h 4s 5c Kd Qh | Straight | Straight, five high
Ac Kd Qh Js Tc 9d 2h | Straight | Straight, ace high
Qc Qd Qh 8s 2c Kd 4h | Three of a kind | Three of a kind, queens
6c 6d 6h 8s 2c Kd 4h | Three of a kind | Three of a kind, sixes
Ac Kd Ah Ks 2c Qd 4h | Two pair | Two pair, aces and kings
Qc 8d Qh 8s 2c Kd 4h | Two pair | Two pair, queens and eights
Qc 7d Qh 8s 2c Kd 4h | Pair | Pair of queens
Ac 7d Qh 8s 2c Kd 4h | High card | High card, ace
Ac Ad | Pair | Pair of aces
Ac Kd Qh 8s 2c | High card | High card, ace
"""


@pytest.mark.parametrize("line", NAMED.strip().splitlines())
def test_hand_names_as_television_says_them(line: str) -> None:
    cards, category, name = (part.strip() for part in line.split("|"))
    hole, board = cards.split()[:2], cards.split()[2:]
    assert hand_category(hole, board) == category
    assert hand_name(hole, board) == name


def test_hand_names_agree_with_pokerkit_on_random_hands() -> None:
    """The category leads the name, as PokerKit labels the hand, and the seven cards are named
    as PokerKit's best five of them alone are (the ranks read off all seven are the five's)."""
    rng = random.Random(11)
    for _ in range(3000):
        cards = rng.sample(FULL_DECK, 7)
        name = hand_name(cards[:2], cards[2:])
        theirs = StandardHighHand.from_game("".join(cards[:2]), "".join(cards[2:]))
        label = {"One pair": "Pair"}.get(theirs.entry.label.value, theirs.entry.label.value)
        category = hand_category(cards[:2], cards[2:])
        assert {"Royal flush": "Straight flush"}.get(category, category) == label, cards
        assert name.startswith(category), (cards, name)
        five = [str(c.rank) + str(c.suit) for c in theirs.cards]  # PokerKit's best five
        assert hand_name(five[:2], five[2:]) == name, (cards, five)


def test_strength_orders_hands_like_pokerkit() -> None:
    rng = random.Random(7)
    for _ in range(300):
        cards = rng.sample(FULL_DECK, 9)
        board = cards[4:]
        a, b = (cards[0], cards[1]), (cards[2], cards[3])
        ours = (strength(a, board) > strength(b, board)) - (strength(a, board) < strength(b, board))
        ha = StandardHighHand.from_game("".join(a), "".join(board))
        hb = StandardHighHand.from_game("".join(b), "".join(board))
        theirs = (ha < hb) - (ha > hb)  # PokerKit: greater is stronger
        assert ours == theirs


def test_strength_rejects_bad_cards() -> None:
    with pytest.raises(ValueError):
        strength(("Ah", "1x"), ("2c", "3c", "4c"))
    with pytest.raises(ValueError):
        strength(("Ah", "Kh"), ("2c",))


def test_winners_by_pot_split_and_order_left_of_button() -> None:
    hole = {1: ("2c", "3d"), 2: ("Ah", "Kh"), 3: ("9c", "5d"), 4: ("Ad", "Kd")}
    board = ("As", "Ks", "7h", "8c", "9d")
    pots = [Pot(400, frozenset({1, 2, 3, 4})), Pot(300, frozenset({1, 3})), Pot(10, frozenset({3}))]
    # Button 3: odd-chip order starts at seat 4, then 1, 2.
    assert winners_by_pot(pots, hole, board, button=3, seats=4) == [(4, 2), (3,), (3,)]


def test_the_private_phevaluator_api_we_call_is_there_and_agrees_with_the_public_one() -> None:
    """``hub.domain.evaluation`` calls phevaluator's private ``_pheval`` for speed, with the
    version pinned exactly in pyproject.toml. An upgrade that moves or changes those names
    fails here by name, not as a wrong winner at a table."""
    import tomllib
    from importlib.metadata import version
    from pathlib import Path

    import phevaluator
    from phevaluator import _pheval

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    pins = [d for d in pyproject["project"]["dependencies"] if d.startswith("phevaluator")]
    assert pins == [f"phevaluator=={version('phevaluator')}"], "pin phevaluator exactly"
    for name in ("evaluate_5cards", "evaluate_6cards", "evaluate_7cards"):
        assert callable(getattr(_pheval, name, None)), f"phevaluator._pheval.{name} is gone"
    rng = random.Random(7)
    for size in (5, 6, 7):
        for _ in range(300):
            cards = rng.sample(FULL_DECK, size)
            assert strength(cards[:2], cards[2:]) == phevaluator.evaluate_cards(*cards)
