"""The ``suggestions`` family: the deal x seat comparisons worth airing (``hub.engine.suggest``).

The live list moves with every hand's events (an all-in, a settle, a dispute and its
confirmation are hand events); the public's with the releases and the corrections of a
released deal. A ``Ranking`` keeps both once someone asks for one of them, moved deal by deal;
the builder computes the list from scratch (the oracle the projections are tested against).
"""

from __future__ import annotations

from typing import Any

from hub.engine import suggest
from hub.engine.changes import (
    DealReleased,
    ReleasedDealCorrected,
    ReleasedResultCorrected,
    RosterChanged,
)
from hub.engine.families.base import EngineView, Feed, Reading, TopicKeys
from hub.engine.families.hands import HAND_EVENTS
from hub.wire.topics import AUDIENCES, LIVE, PUBLIC, TopicKey

__all__ = ["SUGGESTIONS"]

PUBLIC_EVENTS = (DealReleased, ReleasedDealCorrected, ReleasedResultCorrected)


def suggestions_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    if isinstance(event, RosterChanged):  # the reasons name teams
        return [k[a]["suggestions"] for a in AUDIENCES]
    if isinstance(event, PUBLIC_EVENTS):
        return [k[PUBLIC]["suggestions"]]
    return [k[LIVE]["suggestions"]]


def _suggestions(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    engine = read.engine
    return suggest.suggestions_payload(engine.state, engine.release.deal_released, audience)


def _ranking(engine: EngineView) -> suggest.Ranking:
    return suggest.Ranking(engine.state, engine.release.deal_released)


EVENTS = (*HAND_EVENTS, *PUBLIC_EVENTS, RosterChanged)
SUGGESTIONS = Feed(
    "suggestions",
    EVENTS,
    suggestions_keys,
    _suggestions,
    moves=EVENTS,
    model=_ranking,
    lazy=(PUBLIC, LIVE),
    audiences=(PUBLIC, LIVE),  # not on the program feed
    route="/api/suggestions",
    delta="replace of the entries that moved (the public's: released deals only)",
)
