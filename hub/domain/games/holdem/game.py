"""Texas hold'em's plug-in: `PokerGame` as it is (52 cards, hold'em betting, PHH, equity)."""

from __future__ import annotations

from hub.domain.games.base import PokerGame
from hub.domain.pieces import CARDS

HOLDEM = PokerGame("holdem", CARDS, overlay="holdem.js")
