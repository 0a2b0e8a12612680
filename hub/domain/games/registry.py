"""The games by ``[tournament] game``: a new game is one folder and one line here."""

from __future__ import annotations

from hub.domain.games.base import Game
from hub.domain.games.holdem.game import HOLDEM
from hub.domain.games.mahjong.game import MAHJONG
from hub.domain.games.piecepack.game import PIECEPACK
from hub.domain.games.rps.game import RPS

games: dict[str, Game] = {g.name: g for g in (HOLDEM, PIECEPACK, MAHJONG, RPS)}


def game_of(name: str) -> Game:
    """The game named ``name`` (a checked configuration's ``game``)."""
    return games[name]


def section_hint(section: str) -> str | None:
    """The refusal of a game's own config section in another game's file (None: no game's)."""
    return next((g.section_hint for g in games.values() if g.section == section), None)
