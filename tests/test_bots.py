"""Bots: always legal, and varied enough to exercise every path of a hand."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

import pytest

from hub.domain.bots import STYLES, choose_action
from hub.domain.games.holdem.hand import Hand
from hub.domain.games.spec import HandSpec

FULL_DECK = [r + s for r in "23456789TJQKA" for s in "cdhs"]


@dataclass(frozen=True)
class Cards:
    hole: dict[int, tuple[str, str]]
    board: tuple[str, ...]


def simulate(hands: int, seed: int, style: str | None = None) -> Counter[str]:
    rng = random.Random(seed)
    seen: Counter[str] = Counter()
    for _ in range(hands):
        deck = FULL_DECK[:]
        rng.shuffle(deck)
        cards = Cards({s: (deck[2 * s], deck[2 * s + 1]) for s in range(1, 7)}, tuple(deck[20:25]))
        hand = Hand(HandSpec(6, rng.randint(1, 6), 50, 100, 10000, cards=cards))
        while hand.to_act is not None:
            seat = hand.to_act
            kind, amount = choose_action(hand, seat, rng, style)
            assert hand.can_act(seat, kind, amount)
            legal = hand.legal(seat)
            if kind in ("bet", "raise") and amount == legal.max_to:
                seen["max_raise"] += 1
            if kind in ("bet", "raise") and amount == legal.min_to:
                seen["min_raise"] += 1
            hand.act(seat, kind, amount)
            seen[kind] += 1
        seen["all_in_hand"] += bool(hand.all_in)
        if hand.street == "showdown":
            seen["showdown"] += 1
            result = hand.settle(None)
            seen["split"] += sum(1 for v in result.values() if v > 0) > 1
        assert hand.result is not None and sum(hand.result.values()) == 0
    return seen


def test_mixed_styles_produce_every_kind_of_hand() -> None:
    seen = simulate(600, seed=3)
    for key in ("fold", "check", "call", "bet", "raise", "max_raise", "min_raise", "all_in_hand"):
        assert seen[key] > 0, key
    assert seen["showdown"] > 50
    assert seen["split"] > 0


@pytest.mark.parametrize("style", STYLES)
def test_each_style_is_legal(style: str) -> None:
    simulate(60, seed=11, style=style)


def test_styles_differ() -> None:
    tight, aggressive = simulate(150, 5, "tight"), simulate(150, 5, "aggressive")
    assert tight["fold"] / sum(tight.values()) > aggressive["fold"] / sum(aggressive.values())
    assert aggressive["raise"] > tight["raise"]


def test_not_to_act_is_an_error() -> None:
    hand = Hand(HandSpec(3, 3, 50, 100, 1000))
    with pytest.raises(ValueError):
        choose_action(hand, 1, random.Random(0))
