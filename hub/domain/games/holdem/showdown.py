"""Poker's showdown package of a settled hand (hold'em's, and the games played on its
``Hand``: piecepack, RPS Poker): who won each pot, with what, and every hand shown.

What television shows when a pot is decided ("Main pot 2,400: seat 2 and seat 5 split, Two
pair, aces and kings"; "Side pot 800: seat 4"): each pot (main, then side pots) with its
amount, its winners in odd-chip order, each winner's share (the odd chip named) and the
winning hand's name; and the name of every hand shown at showdown. A hand decided by folds
names its winner and shows no hand (the winner did not show). The game names a hand
(``Game.seat_name``: hold'em "Flush, king high", piecepack tiles' categories, RPS Poker's
throws against the dealer's); mahjong has its own block (``games.mahjong.views``).

``h`` is the engine's ``HandState`` (the domain may not import the engine): read are its
``hand``, ``status``, ``settled_by``, ``winners``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hub.domain.games.holdem.hand import Hand
from hub.domain.games.holdem.settlement import split
from hub.domain.states import HandStatus

SeatName = Callable[[Hand, int], "str | None"]


def poker_showdown(h: Any, seat_name: SeatName) -> dict[str, Any] | None:
    """The showdown block of a complete hand (None while in play, disputed or void):
    ``pots`` [{``amount``, ``kind`` main|side, ``winners`` [seats], ``shares`` {seat: chips},
    ``hand`` the winning hand's name, None when uncontested or unknown}], ``hands`` {seat:
    name for every player who showed}; ``runout`` is the engine's (None here)."""
    if h.status != HandStatus.COMPLETE:
        return None
    hand: Hand = h.hand
    declared = h.winners if h.settled_by == "declared" else None
    awards = hand.awards(declared)
    live = [s for s in sorted(hand.committed) if s not in hand.folded]
    names = {s: seat_name(hand, s) for s in live} if len(live) > 1 else {}
    all_to_first = hand.spec.odd_chip_rule == "all-to-first"
    pots = []
    for i, (pot, winners) in enumerate(awards):
        contested = len(pot.eligible) > 1
        shares = split(pot.amount, winners, all_to_first=all_to_first)
        pots.append(
            {
                "amount": pot.amount,
                "kind": "main" if i == 0 else "side",
                "winners": list(winners),
                "shares": {str(s): chips for s, chips in shares.items()},
                "hand": names.get(winners[0]) if contested else None,
            }
        )
    return {
        "deal": h.deal,
        "pots": pots,
        "hands": {str(s): name for s, name in names.items() if name is not None},
        "runout": None,
    }


def card_name(hand: Hand, seat: int) -> str | None:
    """A seat's hand by the known cards (pieces), as the game's piece set names it."""
    cards = hand.spec.cards
    if cards is None:
        return None
    return hand.spec.pieces.hand_name(cards.hole[seat], cards.board)
