"""Seven-card strengths for many hands at once: numpy lookups in tables made from phevaluator.

Why not ``evaluation.strength`` in a loop: equity ranks run-outs by the hundred thousand (a
6-way preflop estimate within ±0.5 % samples 100,000 boards, 600,000 hands). One ``strength``
call costs ~1.3 µs from Python (~0.26 µs of it phevaluator's C code, the rest the call and the
card lookups), so that would take ~0.8 s; here numpy does a few table lookups per hand for the
whole batch, ~10 ms in all (``bench/equity_bench.py``). The tables hold phevaluator's own ranks
(built once per process from it, ~0.2 s, 15.7 MB), so a strength here equals
``evaluation.strength`` of the same cards: lower is stronger (tests check random hands).

How: a hand without a flush is ranked by its multiset of ranks alone. Each rank has a key
(``RANK_KEYS``, SKPokerEval's: the sums over every multiset of 7 ranks, none more than 4
times, are distinct) and a hand's sum indexes ``noflush``. A card also counts its suit (4 bits
per suit), so a hand's sum says whether 5 of its 7 cards share a suit; then that suit's 13-bit
rank mask indexes ``flush`` (with 5 of 7 cards in one suit no full house or quads is possible,
so the flush is the hand). Hands are sums of per-card values, so a board's sum is taken once
and each player adds the sum of his two cards.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from phevaluator import _pheval

from hub.domain.cards import RANKS, SUITS

# phevaluator's card id (as in ``evaluation``): rank index * 4 + suit index (c, d, h, s).
_CARD_ID = {r + s: i * 4 + j for i, r in enumerate(RANKS) for j, s in enumerate(SUITS)}

__all__ = ["CARD_BITS", "CARD_KEYS", "StrengthTables", "card_ids", "strengths", "tables"]

Array = npt.NDArray[np.int64]

RANK_KEYS = (0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181)
_NOFLUSH_SIZE = 4 * RANK_KEYS[12] + 3 * RANK_KEYS[11] + 1  # the largest 7-rank sum, plus one
_SUIT_SHIFT = 32  # a key: the rank-key sum below bit 32, the suit counts (4 bits each) above
_RANK_MASK = (1 << _SUIT_SHIFT) - 1

_ids = np.arange(52, dtype=np.int64)  # phevaluator's card ids: rank index * 4 + suit index
CARD_BITS: Array = np.left_shift(1, 16 * (_ids & 3) + (_ids >> 2)).astype(np.int64)
"""Per card: one bit, 16 bits per suit (13 used): a hand's sum holds each suit's rank mask."""
CARD_KEYS: Array = np.array(
    [RANK_KEYS[i >> 2] | (1 << (_SUIT_SHIFT + 4 * (i & 3))) for i in range(52)], dtype=np.int64
)
"""Per card: its rank key plus one in its suit's counter; a hand's sum is its lookup key."""


@dataclass(frozen=True)
class StrengthTables:
    noflush: npt.NDArray[np.uint16]  # rank-key sum -> strength of a hand without a flush
    flush: npt.NDArray[np.uint16]  # 13-bit rank mask of 5+ suited cards -> their strength
    flush_suit: npt.NDArray[np.int64]  # suit counters -> suit + 1 when one has 5+, else 0


@functools.cache
def tables() -> StrengthTables:
    """Build the tables once per process, from phevaluator's ranks."""
    ranks = np.array(list(itertools.combinations_with_replacement(range(13), 7)), np.int64)
    ranks = ranks[~(ranks[:, 4:] == ranks[:, :-4]).any(axis=1)]  # no rank more than 4 times
    # Suits dealt round-robin along the sorted ranks: equal ranks get distinct suits, and no
    # suit gets more than 2 cards, so no flush.
    ids = ranks * 4 + np.arange(7) % 4
    noflush = np.zeros(_NOFLUSH_SIZE, np.uint16)
    evaluate7 = _pheval.evaluate_7cards
    noflush[np.array(RANK_KEYS)[ranks].sum(axis=1)] = [evaluate7(*row) for row in ids.tolist()]
    evaluate = {5: _pheval.evaluate_5cards, 6: _pheval.evaluate_6cards, 7: evaluate7}
    flush = np.zeros(1 << 13, np.uint16)
    for mask in range(1 << 13):
        suited = [r * 4 for r in range(13) if mask >> r & 1]  # clubs
        if 5 <= len(suited) <= 7:
            flush[mask] = evaluate[len(suited)](*suited)
    counters = np.arange(1 << 16, dtype=np.int64)
    flush_suit = np.zeros(1 << 16, np.int64)
    for suit in range(4):
        flush_suit[(counters >> (4 * suit)) & 15 >= 5] = suit + 1
    return StrengthTables(noflush, flush, flush_suit)


def card_ids(cards: Iterable[str]) -> list[int]:
    """phevaluator's ids of canonical cards (``ValueError`` for anything else)."""
    try:
        return [_CARD_ID[c] for c in cards]
    except KeyError as exc:
        raise ValueError(f"not a card: {exc.args[0]!r}") from None


def strengths(bits: Array, keys: Array) -> npt.NDArray[np.uint16]:
    """Strengths of 7-card hands given as sums of ``CARD_BITS`` and of ``CARD_KEYS`` of their
    cards (one hand per element); lower is stronger, as ``evaluation.strength``."""
    t = tables()
    out: npt.NDArray[np.uint16] = t.noflush[keys & _RANK_MASK]
    suits = t.flush_suit[keys >> _SUIT_SHIFT]
    rows = np.flatnonzero(suits)
    if rows.size:
        shift = (suits[rows] - 1) * 16
        out[rows] = t.flush[(bits[rows] >> shift) & 0x1FFF]
    return out
