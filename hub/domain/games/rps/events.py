"""RPS Poker's console events (hub.domain.games.rps.rules): a player's throws for the round,
the dealer's turned over."""

from __future__ import annotations

from hub.domain.console_event import ConsoleEvent, Positive, ThrowText


class Throws(ConsoleEvent, tag="throws", frozen=True, kw_only=True):
    seat: Positive
    throws: ThrowText


class Reveal(ConsoleEvent, tag="reveal", frozen=True, kw_only=True):
    throws: ThrowText
