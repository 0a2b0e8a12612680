"""Piecepack hold'em's plug-in: hold'em with the 48 tiles (``hub.domain.pieces``: ranking,
showdown and equity come with the piece set)."""

from __future__ import annotations

from hub.domain.games.base import PokerGame
from hub.domain.pieces import TILES

PIECEPACK = PokerGame("piecepack-holdem", TILES)
