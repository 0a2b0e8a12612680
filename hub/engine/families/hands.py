"""The families that show hands: ``table`` (one table's live hand) and ``projection`` (the
standings as if every hand in play ended now); the travellers, ``deal`` and ``compare``, are
``hub.engine.families.travellers``'. The projections move them in place by each hand's
events."""

from __future__ import annotations

from typing import Any

from hub.domain.states import Role
from hub.engine import projection_view, views
from hub.engine.changes import (
    ActionApplied,
    DealReleased,
    HandRewound,
    HandSettled,
    HandStarted,
    ReleasedDealCorrected,
    ReleasedResultCorrected,
    RosterChanged,
    StageFilled,
)
from hub.engine.families.base import Feed, Reading, TopicKeys
from hub.engine.showdown import showdown_payload
from hub.wire.topics import AUDIENCES, LIVE, PUBLIC, TopicKey

__all__ = ["HAND_EVENTS", "PROJECTION", "TABLE"]

HAND_EVENTS = (HandStarted, ActionApplied, HandRewound, HandSettled)
# A released deal corrected: the public's deal and travellers are rebuilt.
CORRECTED = (ReleasedDealCorrected, ReleasedResultCorrected)


def table_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    # the public table shows the latest released deal's showdown (also once corrected)
    if isinstance(event, (DealReleased, *CORRECTED)):
        return list(k[PUBLIC]["table"].values())
    if isinstance(event, StageFilled):  # the rosters of the stage's tables
        return [k[a]["table"][t] for a in AUDIENCES for t in event.tables]
    if isinstance(event, RosterChanged):  # names and colours: every table, every audience
        return [key for a in AUDIENCES for key in k[a]["table"].values()]
    return [k[LIVE]["table"][event.table]]


def projection_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    return [k[LIVE]["projection"]]


def _table(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    engine = read.engine
    table = engine.state.tables[args[0]]
    released = engine.released_deals(table.group)
    public_deal = max(released, default=None)
    showdown = None
    if public_deal is not None and audience != LIVE:
        showdown = showdown_payload(engine.state.hand(table.table, public_deal), engine.state.game)
    if public_deal is None and engine._public_teams(table.group):
        public_deal = table.order[0]
    return views.table_payload(
        engine.state,
        table,
        live=audience == LIVE,
        released_deals=len(released),
        public_deal=public_deal,
        public_showdown=showdown,
    )


def _projection(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    engine = read.engine
    board = engine.projections.board or projection_view.projected_board(engine.state)
    return projection_view.projection_payload(engine.state, board)


TABLE = Feed(
    "table",
    (*HAND_EVENTS, DealReleased, *CORRECTED, StageFilled, RosterChanged),
    table_keys,
    _table,
    moves=(ActionApplied,),
    params=("table",),
    route="/api/tables/{table:int}",
    delta="live: one action adds one row at /actions/- and replaces the seat fields it moved"
    " (equity only when a card is dealt or someone folds)",
    program=LIVE,
    held=True,
)
PROJECTION = Feed(
    "projection",
    (*HAND_EVENTS, RosterChanged),
    projection_keys,
    _projection,
    audiences=(LIVE,),
    role=Role.COMMENTATOR,
    route="/api/projection",
    delta="replace of the hands and rows that moved",
    mover=projection_view.Projection,
)
