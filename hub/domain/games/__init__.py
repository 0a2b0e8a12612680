"""The games the hub scores, one folder each, every one behind the `Game` protocol (``base``);
``spec`` and ``records`` are the hand's types every game shares (none of these imports a game).

A game's folder holds its pure rules (hands, pieces, dealing, odds, bots) and its plug-in
(``game.py``: what the tournament, the views, the config check, the deck tools and the
simulator ask of a game). ``registry.games`` names them by ``[tournament] game``; nothing
outside these folders asks which game is played. This package imports nothing, so a game's
rules can be imported without loading every game.
"""
