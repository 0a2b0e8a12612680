"""The games by ``[tournament] game``: a new game is one folder and one line here."""

from __future__ import annotations

from hub.domain.console_event import Apply, ConsoleEvent
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


def _events() -> tuple[dict[str, type[ConsoleEvent]], dict[str, Apply]]:
    """Every game's console events by their tag, and how the engine applies each: a type two
    games play is one class, applied alike."""
    classes: dict[str, type[ConsoleEvent]] = {}
    handlers: dict[str, Apply] = {}
    for game in games.values():
        for cls in game.events:
            if classes.setdefault(cls.type, cls) is not cls:
                raise TypeError(f"two classes of console event {cls.type!r}")
        for kind, how in game.handlers.items():
            if handlers.setdefault(kind, how) != how:
                raise TypeError(f"console event {kind!r} applied two ways")
        if set(game.handlers) != {cls.type for cls in game.events}:
            raise TypeError(f"game {game.name!r}: its handlers are not its events'")
    return classes, handlers


EVENT_CLASSES, EVENT_HANDLERS = _events()
"""Every game's console event class by its ``type``; how the engine applies each type."""
