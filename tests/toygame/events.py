"""High card's console events, declared as a game declares them (issue #31 item 3): Struct
classes tagged by their wire ``type`` (``Game.events``) and how the engine applies each
(``Game.handlers``); the hub builds its event union and handlers from every game's.

A seat stays in with its own event, ``stay``, applied as a betting action (the hand's ``act``);
``fold`` and ``win`` are hold'em's classes (one class per type across the games).
"""

from __future__ import annotations

from hub.domain.console_event import SHARED_EVENTS, SHARED_HANDLERS, Apply, ConsoleEvent, Positive
from hub.domain.games.holdem.events import Fold, Win


class Stay(ConsoleEvent, tag="stay", frozen=True, kw_only=True):
    """A seat stays in the hand: its card goes to the showdown."""

    seat: Positive


STAY = "stay"
EVENTS: tuple[type[ConsoleEvent], ...] = (*SHARED_EVENTS, Stay, Fold, Win)
HANDLERS: dict[str, Apply] = {**SHARED_HANDLERS, STAY: "action", "fold": "action", "win": "win"}
