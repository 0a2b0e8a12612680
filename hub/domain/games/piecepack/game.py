"""Piecepack hold'em's plug-in: hold'em with the 48 tiles (``pieces``: ranking,
showdown and equity come with the piece set)."""

from __future__ import annotations

from hub.domain.games.base import Command
from hub.domain.games.holdem.game import PokerGame
from hub.domain.games.piecepack.pieces import TILES


def _counts() -> str:
    from hub.domain.games.piecepack.tiles import category_counts

    return "".join(f"{c.abbreviation}\t{count}\n" for c, count in category_counts().items())


COUNTS = Command(
    "piecepack-counts",
    help="Dual Piecepacks Poker: count all C(48,5) five-tile hands per hand category",
    description="Enumerate all 1,712,304 five-tile hands of the 48 dual piecepack tiles and "
    "print one line per hand category, best to worst: the seed's abbreviation (SF 0P, "
    "GF 4K, ...), a tab, the count. docs/piecepack.md compares them with the seed's table.",
    run=_counts,
)
PIECEPACK = PokerGame("piecepack-holdem", TILES, commands=(COUNTS,), overlay="piecepack-holdem.js")
