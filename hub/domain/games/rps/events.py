"""RPS Poker's console events (hub.domain.games.rps.rules): a player's throws for the round,
the dealer's turned over; and the refusal of a ``throws`` its type refuses (any event may carry
the field: protocol v1's envelope, ``ConsoleEvent.throws``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hub.domain.console_event import ConsoleEvent, Positive, Sentence, ThrowText


def _throws(name: str, value: Any) -> str:
    return "field 'throws' must be a string of 1 to 9 throws (R, P, S)"


SENTENCES: Mapping[str, Sentence] = {"throws": _throws}


class Throws(ConsoleEvent, tag="throws", frozen=True, kw_only=True):
    sentences = SENTENCES
    seat: Positive
    throws: ThrowText


class Reveal(ConsoleEvent, tag="reveal", frozen=True, kw_only=True):
    sentences = SENTENCES
    throws: ThrowText
