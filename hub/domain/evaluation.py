"""Hand strength and pot winners, on phevaluator (C: ~1 µs per 7-card hand here).

Why phevaluator: showdowns sit on the ingest path (20,000 events/s target), where PokerKit's own
evaluator (~270 µs per 7-card hand, ~260x ours; ``bench/evaluator_bench.py``) would dominate.
Callers see ``strength`` (lower is better, comparable across any 5 to 7 cards) and never
phevaluator's card ids.

Why the private ``_pheval``: the public ``evaluate_cards`` turns every card into a ``Card`` in
Python: 5.2 µs per 7-card hand against 1.3 µs for ``strength`` with its own id table, same run
(``bench/evaluator_bench.py``). The version is pinned exactly in pyproject.toml, and
tests/test_evaluation.py fails by name if an upgrade moves or changes those functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any, Protocol

from phevaluator import _pheval

RANKS = "23456789TJQKA"
SUITS = "cdhs"
# phevaluator's card id: rank index * 4 + suit index (clubs, diamonds, hearts, spades).
_CARD_ID = {r + s: i * 4 + j for i, r in enumerate(RANKS) for j, s in enumerate(SUITS)}
_EVALUATE = {5: _pheval.evaluate_5cards, 6: _pheval.evaluate_6cards, 7: _pheval.evaluate_7cards}
# Upper bounds of phevaluator's rank classes (7462 distinct 5-card hands, 1 = royal flush).
_CATEGORIES = (
    (1, "Royal flush"),
    (10, "Straight flush"),
    (166, "Four of a kind"),
    (322, "Full house"),
    (1599, "Flush"),
    (1609, "Straight"),
    (2467, "Three of a kind"),
    (3325, "Two pair"),
    (6185, "Pair"),
    (7462, "High card"),
)


class PotLike(Protocol):
    """What ``winners_by_pot`` reads of a pot (``holdem.Pot`` satisfies it)."""

    @property
    def eligible(self) -> frozenset[int]: ...


def strength(hole: Iterable[str], board: Iterable[str]) -> int:
    """Rank of the best five of ``hole`` + ``board`` (5 to 7 cards): lower is stronger."""
    cards = [*hole, *board]
    try:
        ids = [_CARD_ID[c] for c in cards]
        evaluate = _EVALUATE[len(ids)]
    except KeyError as exc:
        raise ValueError(f"cannot evaluate cards {cards}: {exc}") from None
    return int(evaluate(*ids))


def hand_category(hole: Iterable[str], board: Iterable[str]) -> str:
    """ "Full house", "Pair", ...: the best hand's category (works before the flop)."""
    cards = [*hole, *board]
    if len(cards) < 5:
        ranks = [c[0] for c in cards]
        return "Pair" if len(set(ranks)) < len(ranks) else "High card"
    rank = strength(cards[:2], cards[2:])
    return next(name for top, name in _CATEGORIES if rank <= top)


_WORDS = {
    r: w
    for r, w in zip(
        RANKS,
        "two three four five six seven eight nine ten jack queen king ace".split(),  # noqa: SIM905
        strict=True,
    )
}


def _word(rank: str, plural: bool = False) -> str:
    word = _WORDS[rank]
    return (word + "es" if word == "six" else word + "s") if plural else word


def best_five(cards: Sequence[str]) -> tuple[str, ...]:
    """The five of ``cards`` (5 to 7) that make the best hand."""
    if len(cards) == 5:
        return tuple(cards)
    return min(combinations(cards, 5), key=lambda five: strength(five[:2], five[2:]))


def _by_count(cards: Iterable[str]) -> list[str]:
    """The ranks of ``cards``, most repeated first, then highest (each rank once)."""
    ranks = [c[0] for c in cards]
    return sorted(set(ranks), key=lambda r: (ranks.count(r), RANKS.index(r)), reverse=True)


def hand_name(hole: Iterable[str], board: Iterable[str]) -> str:
    """The best hand as television names it: "Flush, king high", "Full house, queens full of
    fives", "Straight, ten high", "Two pair, aces and kings", "Pair of jacks", "High card, ace"
    (works before the flop, on the cards there are)."""
    cards = [*hole, *board]
    category = hand_category(cards[:2], cards[2:])
    five = best_five(cards) if len(cards) >= 5 else cards
    ranks = _by_count(five)
    top = ranks[0]
    if category in ("Straight", "Straight flush"):
        high = "5" if set(c[0] for c in five) == set("A2345") else top
        return f"{category}, {_word(high)} high"
    if category == "Flush":
        return f"Flush, {_word(top)} high"
    if category == "Royal flush":
        return category
    if category == "Four of a kind" or (len(cards) < 5 and [c[0] for c in cards].count(top) == 4):
        return f"Four of a kind, {_word(top, True)}"
    if category == "Full house":
        return f"Full house, {_word(top, True)} full of {_word(ranks[1], True)}"
    counts = [[c[0] for c in five].count(r) for r in ranks]
    if counts[0] == 3:
        return f"Three of a kind, {_word(top, True)}"
    if counts[:2] == [2, 2]:
        return f"Two pair, {_word(top, True)} and {_word(ranks[1], True)}"
    if counts[0] == 2:
        return f"Pair of {_word(top, True)}"
    return f"High card, {_word(top)}"


def winners_by_pot(
    pots: Sequence[PotLike],
    hole: Mapping[int, tuple[str, str]],
    board: Sequence[str],
    button: int,
    seats: int,
) -> list[tuple[int, ...]]:
    """For each pot, its best eligible hands, in odd-chip order (seat order left of the button)."""
    ranks = {s: strength(hole[s], board[:5]) for pot in pots for s in pot.eligible}
    return best_by_pot(pots, ranks, button, seats, min)


def best_by_pot(
    pots: Sequence[PotLike],
    values: Mapping[int, Any],
    button: int,
    seats: int,
    best: Callable[[Iterable[Any]], Any],
) -> list[tuple[int, ...]]:
    """For each pot, the eligible seats whose hand value is the ``best`` (``min`` for
    strengths, where lower is stronger; ``max`` for values where greater is), in odd-chip
    order: any game's ranking of hands shares the pots the same way."""
    order = [(button + i) % seats + 1 for i in range(seats)]
    result: list[tuple[int, ...]] = []
    for pot in pots:
        top = best(values[s] for s in pot.eligible)
        result.append(tuple(s for s in order if s in pot.eligible and values[s] == top))
    return result
