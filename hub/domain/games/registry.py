"""The games by ``[tournament] game``: the hub's own, then those other packages declare.

A game is a `Game` object (``base``). The hub's own four are listed here; any installed
distribution adds more with an entry point of the group ``duplicast.games`` naming its game
object, e.g. in its ``pyproject.toml``::

    [project.entry-points."duplicast.games"]
    highcard = "highcard.game:HIGHCARD"

Nothing else of the hub names a game: the config check, the engine, the views, the CLI's
sub-commands and the overlays' game modules read this registry.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from hub.domain.games.base import Game
from hub.domain.games.holdem.game import HOLDEM
from hub.domain.games.mahjong.game import MAHJONG
from hub.domain.games.piecepack.game import PIECEPACK
from hub.domain.games.rps.game import RPS

ENTRY_POINTS = "duplicast.games"  # the entry-point group a third party's game is declared in


def _installed() -> dict[str, Game]:
    """The hub's games, then each ``duplicast.games`` entry point's (by the game's name)."""
    found: dict[str, Game] = {g.name: g for g in (HOLDEM, PIECEPACK, MAHJONG, RPS)}
    for point in sorted(entry_points(group=ENTRY_POINTS), key=lambda p: p.name):
        game = point.load()
        if game.name in found:
            raise ValueError(
                f"entry point {point.name!r} ({point.value}): game {game.name!r} is declared twice"
            )
        found[game.name] = game
    return found


games: dict[str, Game] = _installed()


def game_of(name: str) -> Game:
    """The game named ``name`` (a checked configuration's ``game``)."""
    return games[name]


def section_hint(section: str) -> str | None:
    """The refusal of a game's own config section in another game's file (None: no game's)."""
    return next((g.section_hint for g in games.values() if g.section == section), None)
