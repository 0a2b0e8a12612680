"""The engine's read side: every topic family of ``hub.wire.topics.FAMILIES`` declared once with
the engine events that touch it, the topics of it each event touches, and the builder of its
payload (``Feed``). The projections route each event by these declarations
(``hub.engine.projections``); ``Payloads`` builds any topic's payload from them."""

from __future__ import annotations

from hub.engine.changes import Notable
from hub.engine.families.base import EngineView, Feed, Model, Mover, Reading, TopicKeys
from hub.engine.families.console import CONSOLE
from hub.engine.families.desk import CLOCK, ONAIR, OPS, TICKER
from hub.engine.families.hands import COMPARE, DEAL, PROJECTION, TABLE
from hub.engine.families.payloads import Payloads
from hub.engine.families.scores import SEAT, STANDINGS
from hub.engine.families.suggestions import SUGGESTIONS
from hub.wire.topics import FAMILIES

__all__ = [
    "FEEDS",
    "UNDECLARED",
    "EngineView",
    "Feed",
    "Model",
    "Mover",
    "Payloads",
    "Reading",
    "TopicKeys",
    "feeds_of",
    "touched_by",
]

FEEDS: dict[str, Feed] = {
    f.name: f
    for f in (
        STANDINGS,
        SEAT,
        TABLE,
        DEAL,
        COMPARE,
        ONAIR,
        TICKER,
        CLOCK,
        PROJECTION,
        SUGGESTIONS,
        OPS,
        CONSOLE,
    )
}
if FEEDS.keys() != FAMILIES.keys():  # pragma: no cover - a family without its feed, or the reverse
    raise ImportError(f"topic families {sorted(FAMILIES)} and feeds {sorted(FEEDS)} differ")

# Engine events no family declares: the engine turns them into others (``Notable``: the desk
# words it as a ``TickerItem``).
UNDECLARED: tuple[type, ...] = (Notable,)


def feeds_of(event_class: type) -> tuple[Feed, ...]:
    """The families an event of this class touches (in ``FEEDS`` order)."""
    return tuple(f for f in FEEDS.values() if event_class in f.events)


def touched_by(family: str) -> tuple[str, ...]:
    """The names of the engine events that touch ``family`` (for the documentation)."""
    return tuple(e.__name__ for e in FEEDS[family].events)
