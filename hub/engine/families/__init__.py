"""Every topic family, each declared once (``Family``): its wire facts, its audience and
programme policy, the engine events that touch it, the topics of it each event touches, the
builder of its payload and its model. The projections route each event by these declarations
(``hub.engine.projections``); ``Payloads`` builds any topic's payload from them; the program
feed, the REST routes, the subscription checks (``TopicSpace``), ``TopicKeys`` and the hub's
list of topics (``topic_list``) read them. A family added here is a topic of the hub, with no
other edit.

Payloads are plain JSON-friendly dicts, one per audience: *live* (commentators, operators) sees
everything as it happens, hole cards included; *public* sees a deal only once every table of
its group has completed it (plus the release delay): until then public payloads hold nothing of
it: no cards, actions, chip-scores, comparison rows, nor standings that count it."""

from __future__ import annotations

from typing import Any

from hub.engine.changes import Notable
from hub.engine.families.base import (
    EVERY,
    NOW,
    Command,
    EngineView,
    Family,
    Feed,
    Model,
    Mover,
    Reading,
    TopicKeys,
)
from hub.engine.families.console import CONSOLE
from hub.engine.families.control import CONTROL
from hub.engine.families.desk import CLOCK, ONAIR, OPS, TICKER
from hub.engine.families.hands import TABLE
from hub.engine.families.payloads import Payloads
from hub.engine.families.projection import PROJECTION
from hub.engine.families.released import RELEASED
from hub.engine.families.scores import SEAT, STANDINGS
from hub.engine.families.stats import DEALSTATS, STATS
from hub.engine.families.suggestions import SUGGESTIONS
from hub.engine.families.travellers import COMPARE, DEAL
from hub.wire.topics import PROGRAM, TopicKey, TopicSpace, kind

__all__ = [
    "EVERY",
    "FAMILIES",
    "FEEDS",
    "NOW",
    "UNDECLARED",
    "Command",
    "EngineView",
    "Family",
    "Feed",
    "Model",
    "Mover",
    "Payloads",
    "Reading",
    "TopicKeys",
    "feeds_of",
    "made_on_demand",
    "topic_list",
    "topic_name",
    "topic_space",
    "touched_by",
]

FAMILIES: dict[str, Family] = {
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
        STATS,
        DEALSTATS,
        OPS,
        CONSOLE,
        CONTROL,
        RELEASED,
    )
}
FEEDS = FAMILIES  # (the name the engine's read side used for it)

# Engine events no family declares: the engine turns them into others (``Notable``: the desk
# words it as a ``TickerItem``).
UNDECLARED: tuple[type, ...] = (Notable,)


def feeds_of(event_class: type) -> tuple[Family, ...]:
    """The families an event of this class touches (in ``FAMILIES`` order)."""
    return tuple(f for f in FAMILIES.values() if event_class in f.events)


def made_on_demand(key: TopicKey) -> bool:
    """Is ``key`` of an audience whose topics its family makes only when someone asks for one
    (``Family.lazy``; a program output's topic: its source's)? An edge asks the writer for
    such a topic by name before it answers anyone about it."""
    fam = FAMILIES.get(key[1].partition(":")[0])
    if fam is None:
        return False
    audience = fam.program if kind(key[0]) == PROGRAM else key[0]
    return audience in fam.lazy


def touched_by(family: str) -> tuple[str, ...]:
    """The names of the engine events that touch ``family`` (for the documentation)."""
    return tuple(e.__name__ for e in FAMILIES[family].events)


def topic_name(family_name: str, *args: int) -> str:
    """Build a topic name (the one place names are put together)."""
    return FAMILIES[family_name].name_of(*args)


def topic_space(config: Any) -> TopicSpace:
    """Every topic of a tournament (``TopicSpace.of`` with the declared families)."""
    return TopicSpace.of(FAMILIES, config)


def topic_list() -> list[dict[str, Any]]:
    """What a client may know of every family (``GET /api/topics``: the browser builds topic
    names and knows who reads them from this, not from names of its own)."""
    return [f.facts() for f in FAMILIES.values()]
