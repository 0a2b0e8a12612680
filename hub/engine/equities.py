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
from collections.abc import Mapping, Sequence
from typing import Any

from hub.domain.equity import Runouts
from hub.domain.games.base import Hand
from hub.domain.states import BETTING_STREETS as STREETS
from hub.domain.states import Street
from hub.engine.tournament import VOID, HandState

__all__ = [
    "equity_block",
    "figures",
    "hand_equity",
    "hand_traveller_equity",
    "seat_equity",
    "traveller_equity",
]

Holes = tuple[tuple[int, tuple[str, str]], ...]
_BOARD: dict[str, int] = {Street.PREFLOP: 0, Street.FLOP: 3, Street.TURN: 4, Street.RIVER: 5}
_DONE = (Street.SHOWDOWN, Street.COMPLETE)

# Per hand engine (a correction replaces it): the figures of its last state asked for, with
# what they were made from (an action that deals no card and folds no one keeps the very same
# block: payloads that show it compare it by identity) and its traveller views, seat by seat.
_MEMO: weakref.WeakKeyDictionary[Hand, _Memo] = weakref.WeakKeyDictionary()


class _Memo:
    __slots__ = ("block", "inputs", "state", "travellers")

    def __init__(self, state: tuple[int, str], inputs: tuple[Any, ...], block: dict[str, Any]):
        self.state = state
        self.inputs = inputs
        self.block = block
        self.travellers: dict[int, dict[str, Any] | None] = {}


def hand_equity(h: HandState) -> dict[str, Any] | None:
    """The live table's ``equity`` of a hand (``equity_block``); None when the hub does not
    know the cards, or the hand was voided (a misdeal: its cards do not count). Made once per
    state of the hand: later calls (every seat, every traveller row) find it."""
    memo = _memo(h)
    return None if memo is None else memo.block


def hand_traveller_equity(h: HandState, seat: int) -> dict[str, Any] | None:
    """``traveller_equity(hand_equity(h), seat)``, made once per block and seat."""
    memo = _memo(h)
    if memo is None:
        return None
    travellers = memo.travellers
    if seat not in travellers:
        travellers[seat] = traveller_equity(memo.block, seat)
    return travellers[seat]


# The hand asked for last (every seat of a table, every traveller row asks in turn): found
# without the weak dictionary's lookup.
_last: tuple[Hand | None, _Memo | None] = (None, None)


def _memo(h: HandState) -> _Memo | None:
    cards = h.spec.cards
    if cards is None or h.status == VOID or not h.spec.pieces.equity:
        return None  # (no equity for piecepack tiles: hub.domain.pieces)
    hand = h.hand
    state = (len(hand.actions), hand.street)
    global _last
    memo = _last[1] if _last[0] is hand else _MEMO.get(hand)
    if memo is not None and memo.state == state:
        _last = (hand, memo)
        return memo
    actions = hand.actions
    if memo is None or memo.state[0] > len(actions):
        folds = tuple((a.seat, a.street) for a in actions if a.kind == "fold")
    else:  # (a hand's actions only grow: the folds of those the memo saw, and the new ones')
        folds = memo.inputs[1]
        for i in range(memo.state[0], len(actions)):
            a = actions[i]
            if a.kind == "fold":
                folds += ((a.seat, a.street),)
    inputs = (
        tuple(hand.board_visible()),
        folds,
        actions[-1].street if actions else "preflop",
        hand.street in _DONE,
    )
    if memo is not None and memo.inputs == inputs:
        memo.state = state
        _last = (hand, memo)
        return memo
    block = equity_block(
        cards.hole,
        inputs[0],
        dict(inputs[1]),
        last_street=inputs[2],
        over=inputs[3],
    )
    memo = _MEMO[hand] = _Memo(state, inputs, block)
    _last = (hand, memo)
    return memo


def equity_block(
    hole: Mapping[int, tuple[str, str]],
    board: Sequence[str],
    folds: Mapping[int, str],
    *,
    last_street: str,
    over: bool,
) -> dict[str, Any]:
    """A hand's figures from its cards: every seat's ``hole``, the ``board`` dealt so far,
    the street each folded seat folded on, the street of the last action and whether the
    betting is ``over``. Keys: ``street`` (the latest the board reached), ``streets`` (one
    entry per street reached, for the players who saw its cards), ``now`` (the players still
    in) and ``runout`` (the players all in when the betting ended before the river, on the
    board of that moment; else None). An entry: ``street``, ``exact``, ``error``, ``seats``
    (seat -> ``win``, ``tie``, ``outs``)."""
    holes: Holes = tuple(sorted(hole.items()))
    board = tuple(board)
    reached = [s for s in STREETS if _BOARD[s] <= len(board)]
    folded = {seat: STREETS.index(street) for seat, street in folds.items()}

    def entry(street: str, live: frozenset[int]) -> dict[str, Any]:
        return figures(holes, live, board[: _BOARD[street]], street)

    def saw(street: str) -> frozenset[int]:  # the players in when the street's cards came
        return frozenset(
            s for s, _ in holes if folded.get(s, len(STREETS)) >= STREETS.index(street)
        )

    now = frozenset(s for s, _ in holes if s not in folded)
    ended = over and len(now) > 1 and STREETS.index(last_street) < len(reached) - 1
    return {
        "street": reached[-1],
        "streets": [entry(street, saw(street)) for street in reached],
        "now": entry(reached[-1], now),
        "runout": entry(last_street, now) if ended else None,
    }


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
    # Plain str keys: orjson refuses a str subclass (a Street) as a key, and the feed would
    # then encode every compare message with the stdlib's JSON, ~4x slower (issue #21).
    return {
        "streets": {str(entry["street"]): entry["seats"].get(key) for entry in block["streets"]},
        "now": block["now"]["seats"].get(key),
        "runout": None if mine is None else {"street": runout["street"], **mine},
    }


@functools.lru_cache(maxsize=4096)
def figures(
    holes: Holes, live: frozenset[int], board: tuple[str, ...], street: str
) -> dict[str, Any]:
    """One street's figures for the players in ``live``, the others' cards dead (cached; the
    result is shared by every payload that shows it: never edit it)."""
    result = _runouts(holes, board).equity(live)
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


@functools.lru_cache(maxsize=1024)
def _runouts(holes: Holes, board: tuple[str, ...]) -> Runouts:
    """Every seat's hand of a deal ranked on the run-outs of one board and tallied for every
    group of seats (a few KB each, whatever the street), kept while deals are in play: 1,024
    boards hold every street of 256 deals, so a table that reaches a deal long after another
    (each table plays the deals in its own order) finds it, and each fold is a lookup."""
    return Runouts(dict(holes), board)
