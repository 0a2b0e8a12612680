"""The equity of a hand in the live payloads: each street's chances and outs, computed once.

A hand's figures move only when a card is dealt or a player folds (an all-in closes the
betting, then the board is dealt out and each street of the run-out gets its figures), so they
are computed per spot (who is still in, the board) and kept: every other action of the hand,
every rebuild of a payload, and every other table that reaches the same spot of the deal (all
tables play the deal's cards) finds them made. A street's figures are those of the players
still in at its end (or now, on the street in play). The folded players' cards are dead.

Payload fields (``docs/protocol.md``): the live table's ``equity`` (``hand_equity``), each of its
seats' ``equity`` (``seat_equity``), and each traveller row's ``equity`` for its seat, street
by street (``traveller_equity``).
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
    """The live table's ``equity``: ``street`` (of the latest figures), ``runout`` (the street
    the betting ended on when the board was then dealt out, else None) and ``streets``, one
    entry per street the board reached: ``street``, ``exact``, ``error``, ``seats`` (seat ->
    ``win``, ``tie``, ``outs``). None when the hub does not know the cards."""
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
    streets = []
    for street in reached:
        last = STREETS.index(street)
        out = {a.seat for a in hand.actions if a.kind == "fold" and STREETS.index(a.street) <= last}
        live = frozenset(s for s, _ in holes if s not in out)
        streets.append(_figures(holes, live, board[: _BOARD[street]], street))
    acted = max((STREETS.index(a.street) for a in hand.actions), default=0)
    runout = STREETS[acted] if hand.street in _DONE and acted < len(reached) - 1 else None
    block = {"street": reached[-1], "runout": runout, "streets": streets}
    _MEMO[hand] = (state, block)
    return block


def seat_equity(block: Mapping[str, Any] | None, seat: int) -> dict[str, Any] | None:
    """A seat's figures on the latest street (None: folded, or cards unknown)."""
    if block is None:
        return None
    found: dict[str, Any] | None = block["streets"][-1]["seats"].get(str(seat))
    return found


def traveller_equity(block: Mapping[str, Any] | None, seat: int) -> dict[str, Any]:
    """A traveller row's ``equity``: street -> the seat's figures there (None once folded)."""
    if block is None:
        return {}
    return {entry["street"]: entry["seats"].get(str(seat)) for entry in block["streets"]}


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
