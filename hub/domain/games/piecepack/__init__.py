"""Piecepack hold'em (game "piecepack-holdem"): hold'em played with 48 dual piecepack tiles."""
