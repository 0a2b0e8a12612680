"""The ``showdown`` field of the live table, the traveller rows and the public's released
table: the game's showdown package of a settled hand (``Game.showdown``; poker's:
``hub.domain.games.holdem.showdown``) plus, for an all-in run-out, each street's equity
from the all-in on (``equities``).

Made once per settled state of a hand (a correction replaces the hand's engine or moves its
status): every payload that shows it, and every rebuild, shares the same block.
"""

from __future__ import annotations

import weakref
from typing import Any

from hub.domain.games.base import Hand, Showdown
from hub.domain.states import BETTING_STREETS as STREETS
from hub.engine.equities import hand_equity
from hub.engine.tournament import COMPLETE, HandState

__all__ = ["runout", "showdown_payload"]

_MEMO: weakref.WeakKeyDictionary[Hand, tuple[Any, dict[str, Any] | None]] = (
    weakref.WeakKeyDictionary()
)


def showdown_payload(h: HandState | None, game: Showdown) -> dict[str, Any] | None:
    """``{"deal", "pots", "hands", "runout"}`` (mahjong: ``mahjong`` beside empty pots) of a
    complete hand; None for no hand, a hand in play, disputed or void."""
    if h is None or h.status != COMPLETE:
        return None
    stamp = (h.status, h.settled_by, h.winners, len(h.hand.actions), len(h.inputs))
    found = _MEMO.get(h.hand)
    if found is not None and found[0] == stamp:
        return found[1]
    block = game.showdown(h)
    if block is not None and block["pots"]:
        block["runout"] = runout(h)
        block.update(shown_cards(h, block))
    _MEMO[h.hand] = (stamp, block)
    return block


def shown_cards(h: HandState, block: dict[str, Any]) -> dict[str, Any]:
    """The cards the package is about (issue #30 item 4: a live table keeps them on screen
    beside it): ``board`` as the hand ended, ``cards`` {seat: hole} of every hand shown
    (``hands``; none for a hand won by folds). Empty for a game with no known cards."""
    dealt = h.hand.spec.cards
    if dealt is None:
        return {}
    return {
        "board": list(h.hand.board_visible()),
        "cards": {seat: list(dealt.hole[int(seat)]) for seat in block.get("hands", {})},
    }


def runout(h: HandState) -> list[dict[str, Any]] | None:
    """When the betting ended all in before the river with two or more players in: each
    street from the all-in on, ``{"street", "equity": {seat: % to win}, "tie": {seat: % to
    tie}}`` for the players all in (the river's: who won). None otherwise."""
    block = hand_equity(h)
    if block is None or block["runout"] is None:
        return None
    start = STREETS.index(block["runout"]["street"])
    out = []
    for entry in block["streets"][start:]:
        seats = {s: v for s, v in entry["seats"].items() if s in block["runout"]["seats"]}
        out.append(
            {
                "street": str(entry["street"]),
                "equity": {s: round(v["win"] * 100, 1) for s, v in seats.items()},
                "tie": {s: round(v["tie"] * 100, 1) for s, v in seats.items()},
            }
        )
    return out
