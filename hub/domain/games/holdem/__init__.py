"""Texas hold'em (game "holdem"): the betting machine every poker game builds on (``hand``),
and its declaration, `PokerGame` (``game``)."""
