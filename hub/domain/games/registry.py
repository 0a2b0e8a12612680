"""The games by ``[tournament] game``: the hub's own, then those other packages declare.

A game is a `Game` object (``base``). The hub's own four are listed here; any installed
distribution adds more with an entry point of the group ``duplicast.games`` naming its game
object, e.g. in its ``pyproject.toml``::

    [project.entry-points."duplicast.games"]
    highcard = "highcard.game:HIGHCARD"

Reading the installed distributions is I/O, not the domain's: the ``duplicast`` command finds
them at start-up (``hub.cli.main.register_installed_games``) and adds each with `register`.

Nothing else of the hub names a game: the config check, the engine, the views, the CLI's
sub-commands and the overlays' game modules read this registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hub.domain import pieces
from hub.domain.console_event import Apply, ConsoleEvent
from hub.domain.deck import DeckOrder, deck_order_from_cards
from hub.domain.games.base import Game, GameDefaults, Rules
from hub.domain.games.holdem.game import HOLDEM
from hub.domain.games.mahjong.game import MAHJONG
from hub.domain.games.piecepack.game import PIECEPACK
from hub.domain.games.rps.game import RPS

ENTRY_POINTS = "duplicast.games"  # the entry-point group a third party's game is declared in

games: dict[str, Game] = {g.name: g for g in (HOLDEM, PIECEPACK, MAHJONG, RPS)}
"""The games by name: the hub's own, then those `register` adds (an installed game, a test's)."""


def game_of(name: str) -> Game:
    """The game named ``name`` (a checked configuration's ``game``)."""
    return games[name]


def order_from_text(text: str, rehearsal: bool = False) -> DeckOrder:
    """A deck order from its codes run together (a deck file's line, the plain export's), of
    the game that claims it (``Game.order_from_text``: mahjong's walls by their length, an order
    of a game's own pieces by its first piece: 48 piecepack tiles), else of the 52 cards."""
    for game in games.values():
        own = game.order_from_text(text, rehearsal)
        if own is not None:
            return own
    return deck_order_from_cards(text, rehearsal)


def order_words() -> str:
    """What a deck file's line may hold after its deal, in words: an order of each piece set
    the games play, or a game's own kind ("52 cards, 48 piecepack tiles or a wall of 136
    tiles")."""
    kinds = [pieces.CARDS.described]
    for game in games.values():
        own = getattr(game, "pieces", None)
        for words in (own.described if own is not None else "", getattr(game, "order_words", "")):
            if words and words not in kinds:
                kinds.append(words)
    return " or ".join(kinds) if len(kinds) < 3 else f"{', '.join(kinds[:-1])} or {kinds[-1]}"


def overlays() -> dict[str, str]:
    """Each game's overlay module (``Game.overlay``) by the game's name, as the hub serves it
    with its topics (``GET /api/topics``); a game without one is drawn as hold'em."""
    return {g.name: g.overlay for g in games.values() if g.overlay is not None}


def pads() -> dict[str, list[dict[str, Any]]]:
    """Each game's console-pad entries (``Game.pad``, ``PadEntry.as_dict``) by the game's name,
    as the hub serves them with its topics (``GET /api/topics``): the console page reads a
    game's declaration there once (its service worker keeps it), not in every ``console:{t}``
    topic, whose ``pad`` names only the entries legal now (docs/console.md)."""
    return {g.name: [e.as_dict() for e in getattr(g, "pad", ())] for g in games.values()}


def overlay_dirs() -> dict[str, str]:
    """The directories of the games that serve their own overlay module, by game name."""
    return {g.name: g.overlay_dir for g in games.values() if g.overlay_dir is not None}


def section_hint(section: str) -> str | None:
    """The refusal of a game's own config section in another game's file (None: no game's)."""
    return next((g.section_hint for g in games.values() if g.section == section), None)


def refusal(game: Rules, event_type: str) -> str | None:
    """Why ``game`` refuses a console event type (None: it plays it): its own words
    (``Game.refusal``), else those of the game that declares the type (``Game.foreign``, with
    that game's ``title``): "'throws' belongs to RPS Poker, not this game"."""
    if event_type in game.handlers:
        return None
    own = game.refusal(event_type)
    if own is not None:
        return own
    owner = next((g for g in games.values() if event_type in g.handlers), None)
    if owner is None:  # no game declares it (it was never decoded): nobody's
        return f"'{event_type}' is not an event of this game"
    title = getattr(owner, "title", "") or owner.name
    words = getattr(owner, "foreign", GameDefaults.foreign)
    return str(words).format(type=event_type, title=title)


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


EVENT_CLASSES: dict[str, type[ConsoleEvent]] = {}
"""Every game's console event class by its ``type`` (kept in place as games are added)."""
EVENT_HANDLERS: dict[str, Apply] = {}
"""How the engine applies each console event type (kept in place as games are added)."""
_listeners: list[Callable[[], None]] = []


def on_events(listener: Callable[[], None]) -> None:
    """Call ``listener`` now and whenever a game is added (the engine rebuilds its union,
    decoders and handlers from `EVENT_CLASSES` and `EVENT_HANDLERS`)."""
    _listeners.append(listener)
    listener()


def register(game: Game) -> None:
    """Add a game (a test's toy game, say): its events join the union the hub decodes, its
    own piece set (``pieces``) the sets the hub knows."""
    games[game.name] = game
    _refresh()


def _refresh() -> None:
    for game in games.values():  # which piece sets exist: the games' (`pieces.PIECE_SETS`)
        own = getattr(game, "pieces", None)  # (a test's game may bring only its events)
        if own is not None:
            pieces.register(own)
    classes, handlers = _events()
    EVENT_CLASSES.clear()
    EVENT_CLASSES.update(classes)
    EVENT_HANDLERS.clear()
    EVENT_HANDLERS.update(handlers)
    for listener in _listeners:
        listener()


_refresh()
