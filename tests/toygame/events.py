"""High card's console events, declared as a game declares them (issue #31 item 3): Struct
classes tagged by their wire ``type`` (``Game.events``) and how the engine applies each
(``Game.handlers``); the hub builds its event union and handlers from every game's.

A seat stays in with its own event, ``stay``, applied as a betting action (the hand's ``act``);
``fold`` and ``win`` are hold'em's classes (one class per type across the games). On a hub
without that API (before the console-event schema of #31 item 3 is merged) the game declares
none and a seat stays with hold'em's ``check``: ``STAY`` is the type to send.
"""

from __future__ import annotations

from typing import Any

EVENTS: tuple[Any, ...] = ()
HANDLERS: dict[str, Any] = {}
STAY = "check"

try:
    from hub.domain.console_event import (
        SHARED_EVENTS,
        SHARED_HANDLERS,
        ConsoleEvent,
        Positive,
    )
    from hub.domain.games.holdem.events import Fold, Win
except ImportError:
    pass
else:

    class Stay(ConsoleEvent, tag="stay", frozen=True, kw_only=True):
        """A seat stays in the hand: its card goes to the showdown."""

        seat: Positive

    EVENTS = (*SHARED_EVENTS, Stay, Fold, Win)
    HANDLERS = {**SHARED_HANDLERS, "stay": "action", "fold": "action", "win": "win"}
    STAY = "stay"
