"""The equity of a hand in the live payloads: each street's chances and outs, computed once.

A hand's figures move only when a card is dealt or a player folds (an all-in closes the
betting, then the board is dealt out street by street), so they are computed per spot (who is
still in, the board) and kept: every other action of the hand, every rebuild of a payload, and
every other table that reaches the same spot of the deal (all tables play the deal's cards) finds
them made. The folded players' cards are dead.

Three views of a hand: each street's figures as its cards come (the players who saw them: what
a split screen compares street by street), the figures now (the players still in: what the live
table shows, moving with each fold), and, when the betting ended before the river with two or
more players in (all-in), the figures at that moment, before the board was dealt out.

Payload fields (``docs/protocol.md``): the live table's ``equity`` (``hand_equity``), each of its
seats' ``equity`` (``seat_equity``), and each traveller row's ``equity`` for its seat
(``traveller_equity``).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping
from typing import Any

from hub.domain.equity import equity
from hub.domain.holdem import STREETS, Hand
from hub.engine.tournament import HandState

__all__ = ["hand_equity", "seat_equity", "traveller_equity"]

Holes = tuple[tuple[int, tuple[str, str]], ...]
_BOARD = {"preflop": 0, "flop": 3, "turn": 4, "river": 5}
_DONE = ("showdown", "complete")

# Per hand engine (a correction replaces it): the figures of its last state asked for.
_MEMO: weakref.WeakKeyDictionary[Hand, tuple[tuple[int, str], dict[str, Any]]] = (
    weakref.WeakKeyDictionary()
)


def hand_equity(h: HandState) -> dict[str, Any] | None:
    """The live table's ``equity`` (None when the hub does not know the cards): ``street`` (the
    latest the board reached), ``streets`` (one entry per street reached, for the players who
    saw its cards), ``now`` (the players still in) and ``runout`` (the players all in when the
    betting ended before the river, on the board of that moment; else None). An entry:
    ``street``, ``exact``, ``error``, ``seats`` (seat -> ``win``, ``tie``, ``outs``)."""
    cards = h.spec.cards
    if cards is None:
        return None
    hand = h.hand
    state = (len(hand.actions), hand.street)
    memo = _MEMO.get(hand)
    if memo is not None and memo[0] == state:
        return memo[1]
    holes: Holes = tuple(sorted(cards.hole.items()))
    board = hand.board_visible()
    reached = [s for s in STREETS if _BOARD[s] <= len(board)]
    folds = {a.seat: STREETS.index(a.street) for a in hand.actions if a.kind == "fold"}

    def entry(street: str, live: frozenset[int]) -> dict[str, Any]:
        return _figures(holes, live, board[: _BOARD[street]], street)

    def seen(street: str) -> frozenset[int]:  # the players in when the street's cards came
        return frozenset(s for s, _ in holes if folds.get(s, 9) >= STREETS.index(street))

    now = frozenset(s for s, _ in holes if s not in folds)
    acted = max((STREETS.index(a.street) for a in hand.actions), default=0)
    ended = hand.street in _DONE and len(now) > 1 and acted < len(reached) - 1
    block = {
        "street": reached[-1],
        "streets": [entry(street, seen(street)) for street in reached],
        "now": entry(reached[-1], now),
        "runout": entry(STREETS[acted], now) if ended else None,
    }
    _MEMO[hand] = (state, block)
    return block


def seat_equity(block: Mapping[str, Any] | None, seat: int) -> dict[str, Any] | None:
    """A seat's figures now (None: folded, or cards unknown)."""
    if block is None:
        return None
    found: dict[str, Any] | None = block["now"]["seats"].get(str(seat))
    return found


def traveller_equity(block: Mapping[str, Any] | None, seat: int) -> dict[str, Any] | None:
    """A traveller row's ``equity`` for its seat: ``streets`` (street -> the seat's figures as
    the street's cards came, None once it had folded), ``now`` and ``runout`` (with its
    ``street``; None unless the seat was all in when the betting ended before the river)."""
    if block is None:
        return None
    key = str(seat)
    runout = block["runout"]
    mine = runout["seats"].get(key) if runout is not None else None
    return {
        "streets": {entry["street"]: entry["seats"].get(key) for entry in block["streets"]},
        "now": block["now"]["seats"].get(key),
        "runout": None if mine is None else {"street": runout["street"], **mine},
    }


@functools.lru_cache(maxsize=4096)
def _figures(
    holes: Holes, live: frozenset[int], board: tuple[str, ...], street: str
) -> dict[str, Any]:
    """One street's figures for the players in ``live`` (shared by every payload: never
    edited)."""
    hole = dict(holes)
    dead = tuple(c for s, cs in holes if s not in live for c in cs)
    result = equity({s: hole[s] for s in live}, board, dead)
    return {
        "street": street,
        "exact": result.exact,
        "error": round(result.error, 4),
        "seats": {
            str(s): {
                "win": round(result.win[s], 4),
                "tie": round(result.tie[s], 4),
                "outs": list(result.outs[s]),
            }
            for s in sorted(live)
        },
    }
