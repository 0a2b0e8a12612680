"""The families that show the score: ``standings`` and ``seat`` (cut from the standings)."""

from __future__ import annotations

from typing import Any

from hub.engine import views
from hub.engine.changes import (
    DealReleased,
    HandSettled,
    PenaltyApplied,
    ReleasedResultCorrected,
    RosterChanged,
    StageFilled,
)
from hub.engine.families.base import EngineView, Feed, Reading, TopicKeys
from hub.wire.standings_select import select_standings
from hub.wire.topics import ANY, AUDIENCES, LIVE, PUBLIC, TopicKey

__all__ = ["SEAT", "STANDINGS", "build_standings"]


def _audiences(event: Any) -> tuple[str, ...]:
    """The live standings move as hands settle; the public's as deals are released or their
    results corrected; a penalty, a stage's teams fixed or a roster fix moves both at once."""
    if isinstance(event, HandSettled):
        return (LIVE,)
    if isinstance(event, DealReleased | ReleasedResultCorrected):
        return (PUBLIC,)
    return AUDIENCES


def standings_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    return [k[a]["standings"] for a in _audiences(event)]


def seat_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    return [key for a in _audiences(event) for key in k[a]["seat"]]


def build_standings(engine: EngineView, live: bool) -> dict[str, Any]:
    """One audience's standings payload (``Reading.standings`` keeps it until a change)."""
    config, state = engine.state.config, engine.state
    if live:
        complete = {g: sorted(state.board.completed_deals(g)) for g in config.groups}
        return views.standings_payload(
            config,
            state.board,
            live=True,
            complete=complete,
            fills=state.seating.fills,
            roster=state.roster,
        )
    deals = range(1, config.deals + 1)
    complete = {g: [d for d in deals if engine.released(g, d)] for g in config.groups}
    return views.standings_payload(
        config,
        engine.release.public_board,
        live=False,
        complete=complete,
        fills={
            stage: fill for stage, fill in state.seating.fills.items() if engine._public_teams(fill)
        },
        roster=state.roster,
    )


def _standings(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    return read.standings(audience == LIVE)


def _seat(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    return views.seat_payload(read.standings(audience == LIVE), args[0])


SCORE_EVENTS = (
    HandSettled,
    PenaltyApplied,
    DealReleased,
    ReleasedResultCorrected,
    StageFilled,
    RosterChanged,
)
STANDINGS = Feed(
    "standings",
    SCORE_EVENTS,
    standings_keys,
    _standings,
    route="/api/standings",
    delta="replace of the rows whose rank, points or chips moved",
    console=ANY,
    program=PUBLIC,
    query=("scope", "stage", "session", "group"),
    select=select_standings,
)
SEAT = Feed(
    "seat",
    SCORE_EVENTS,
    seat_keys,
    _seat,
    params=("seat",),
    route="/api/seats/{seat:int}",
    delta="replace of the rows that moved",
    console=ANY,
    program=PUBLIC,
)
