"""RPS Poker's fields in the live table and traveller payloads (the families' builders,
``hub.engine.families``, add them through the game).

A seat's ``throws`` (its rounds so far), ``score`` (against the dealer's throws turned over so
far: ``diff``, ``wins``, ``losses``) and ``win`` (its chance to win from here, ``rps_odds``);
the hand's ``round``, ``dealer_throws`` (the rounds turned over at that table) and
``throws_awaited``. The live table is the commentators'; the traveller reaches the public only
once the deal is released at every table, as for cards.
"""

from __future__ import annotations

import weakref
from typing import Any

from hub.domain.games.rps.odds import hand_chances
from hub.domain.games.rps.rules import ROUNDS, RpsHand

_ODDS: weakref.WeakKeyDictionary[RpsHand, tuple[Any, dict[int, float] | None]] = (
    weakref.WeakKeyDictionary()
)


def chances(hand: RpsHand) -> dict[int, float] | None:
    """Each seat's chance to win (``rps_odds``), once per state of the hand."""
    stamp = (len(hand.actions), repr(hand.throws), len(hand.revealed), hand.street)
    cached = _ODDS.get(hand)
    if cached is None or cached[0] != stamp:
        cached = _ODDS[hand] = (stamp, hand_chances(hand))
    return cached[1]


def awaited(hand: RpsHand) -> list[int]:
    """The seats whose throws the round waits for (the dealer's seat: his ``reveal``)."""
    r = hand.round_index()
    if r is None or r >= len(ROUNDS) or hand.is_revealed(r):
        return []
    return hand.missing(r) or [hand.dealer]


def seat_fields(hand: object, seat: int) -> dict[str, Any]:
    """A seat's throws and score; no one is ``to_act`` while the round's throws are awaited."""
    if not isinstance(hand, RpsHand):
        return {}
    s = hand.seat_score(seat)
    out: dict[str, Any] = {
        "throws": list(hand.throws.get(seat, [])),
        "score": None if s is None else {"diff": s.diff, "wins": s.wins, "losses": s.losses},
        "win": None if (odds := chances(hand)) is None else odds.get(seat),
    }
    if awaited(hand):
        out["to_act"] = False
    return out


def hand_fields(hand: object) -> dict[str, Any]:
    if not isinstance(hand, RpsHand):
        return {}
    r = hand.round_index()
    waiting = awaited(hand)
    out: dict[str, Any] = {
        "game": "rps-poker",
        "round": None if r is None or r >= len(ROUNDS) else ROUNDS[r],
        "dealer_throws": hand.dealer_throws(),
        "throws_awaited": waiting,
    }
    if waiting:
        out["to_act"] = None
    return out
