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

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
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


def _by_count(ranks: list[str]) -> list[str]:
    """``ranks`` each once, most repeated first, then highest."""
    return sorted(set(ranks), key=lambda r: (ranks.count(r), RANKS.index(r)), reverse=True)


def _straight_top(ranks: Iterable[str]) -> str:
    """The top of the highest straight among ``ranks`` (the wheel's is the five)."""
    have = {RANKS.index(r) for r in ranks}
    if len(RANKS) - 1 in have:
        have.add(-1)  # the ace also plays low
    for top in range(len(RANKS) - 1, 2, -1):
        if all(top - k in have for k in range(5)):
            return RANKS[top]
    raise ValueError(f"no straight in {sorted(ranks)}")


def hand_name(hole: Iterable[str], board: Iterable[str]) -> str:
    """The best hand as television names it: "Flush, king high", "Full house, queens full of
    fives", "Straight, ten high", "Two pair, aces and kings", "Pair of jacks", "High card, ace"
    (works before the flop, on the cards there are). The ranks named are read off all the
    cards once the category is known (no search of the best five)."""
    cards = [*hole, *board]
    category = hand_category(cards[:2], cards[2:])
    if category == "Royal flush":
        return category
    ranks = [c[0] for c in cards]
    if category in ("Flush", "Straight flush"):
        suits = [c[1] for c in cards]
        suit = max(set(suits), key=suits.count)
        suited = [c[0] for c in cards if c[1] == suit]
        if category == "Flush":
            return f"Flush, {_word(max(suited, key=RANKS.index))} high"
        return f"Straight flush, {_word(_straight_top(suited))} high"
    if category == "Straight":
        return f"Straight, {_word(_straight_top(ranks))} high"
    by = _by_count(ranks)
    top = by[0]
    if category == "Four of a kind":
        return f"Four of a kind, {_word(top, True)}"
    if category == "Full house":
        pair = next(r for r in by[1:] if ranks.count(r) >= 2)
        return f"Full house, {_word(top, True)} full of {_word(pair, True)}"
    if category == "Three of a kind":
        return f"Three of a kind, {_word(top, True)}"
    if category == "Two pair":
        return f"Two pair, {_word(top, True)} and {_word(by[1], True)}"
    if category == "Pair":
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
    river = tuple(board[:5])
    ranks = {s: _ranked((*hole[s], *river)) for pot in pots for s in pot.eligible}
    return best_by_pot(pots, ranks, button, seats, min)


@functools.lru_cache(maxsize=8192)
def _ranked(cards: tuple[str, ...]) -> int:
    """``strength`` of a seat's hole cards and the board, made once: the projection plays
    every hand in play out at each of its actions, and every table plays the deal's cards
    (8,192 hands hold every seat of ~1,000 deals, a day's play at a few hundred tables)."""
    return strength(cards, ())


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
