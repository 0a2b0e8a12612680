"""What the engine says happened: typed events, emitted after every change of state.

Projections (topic payloads) move by these events instead of being rebuilt on every change: an
``ActionApplied`` appends one row where the action shows, a ``HandSettled`` moves the standings
by one hand, a ``DealReleased`` opens a deal to the public. Each topic family in
``hub.engine.families`` declares the events that touch it (by class).

`TournamentState.apply` returns the events an applied console event caused (hand events,
``PenaltyApplied``, ``StageFilled``, ``Notable``); the engine's parts add the rest (release:
``DealReleased``, ``ReleasedDealCorrected``, ``ReleasedResultCorrected``; the desk:
``OnAirChanged``, ``CuesChanged``, ``PreviewChanged``, ``PlayoutChanged``, ``ClockChanged``,
``TickerItem``, ``Rejected``, ``LinkChanged``; the roster: ``RosterChanged``). ``Notable``
is for the engine only: its desk turns it into ticker items, the projections never see it.

Each event is a frozen ``msgspec.Struct``: immutable and hashable as a frozen dataclass, made in
C (~0.1 µs against ~0.6 µs; an action makes one).

``routed_by`` names the fields the topics an event touches depend on (an action's index does
not: every action of a hand touches the same topics): the projections route an event once per
class and those fields (``hub.engine.projections``). A class without it is routed every time;
``tests/test_families.py`` checks every routed event of a played session against a fresh route.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

import msgspec

__all__ = [
    "ActionApplied",
    "ClockChanged",
    "CuesChanged",
    "DealReleased",
    "EngineEvent",
    "EventKind",
    "HandRewound",
    "HandSettled",
    "HandStarted",
    "LinkChanged",
    "Notable",
    "OnAirChanged",
    "PenaltyApplied",
    "PlayoutChanged",
    "PreviewChanged",
    "Rejected",
    "ReleasedDealCorrected",
    "ReleasedResultCorrected",
    "RosterChanged",
    "StageFilled",
    "TickerItem",
]


class EventKind(StrEnum):
    """The kind of an engine event: its class name (what a topic family's ``touched_by`` lists)."""

    HAND_STARTED = "HandStarted"
    ACTION_APPLIED = "ActionApplied"
    HAND_REWOUND = "HandRewound"
    HAND_SETTLED = "HandSettled"
    PENALTY_APPLIED = "PenaltyApplied"
    STAGE_FILLED = "StageFilled"
    NOTABLE = "Notable"
    DEAL_RELEASED = "DealReleased"
    RELEASED_DEAL_CORRECTED = "ReleasedDealCorrected"
    RELEASED_RESULT_CORRECTED = "ReleasedResultCorrected"
    TICKER_ITEM = "TickerItem"
    ON_AIR_CHANGED = "OnAirChanged"
    CUES_CHANGED = "CuesChanged"
    PREVIEW_CHANGED = "PreviewChanged"
    PLAYOUT_CHANGED = "PlayoutChanged"
    REJECTED = "Rejected"
    LINK_CHANGED = "LinkChanged"
    CLOCK_CHANGED = "ClockChanged"
    ROSTER_CHANGED = "RosterChanged"


class HandStarted(msgspec.Struct, frozen=True):
    kind: ClassVar[EventKind] = EventKind.HAND_STARTED
    routed_by: ClassVar[tuple[str, ...]] = ("table", "deal")
    table: int
    deal: int


class ActionApplied(msgspec.Struct, frozen=True):
    """One betting action, the ``index``-th of the hand (a hand that it completed is also
    ``HandSettled``)."""

    kind: ClassVar[EventKind] = EventKind.ACTION_APPLIED
    routed_by: ClassVar[tuple[str, ...]] = ("table", "deal")
    table: int
    deal: int
    index: int


class HandRewound(msgspec.Struct, frozen=True):
    """The hand was rebuilt without a counted result moving: a correction took actions back
    (undo, reopen, the start undone), a dealer error redealt its cards, or a game input (RPS
    throws) moved it."""

    kind: ClassVar[EventKind] = EventKind.HAND_REWOUND
    routed_by: ClassVar[tuple[str, ...]] = ("table", "deal")
    table: int
    deal: int


class HandSettled(msgspec.Struct, frozen=True):
    """The hand's counted result appeared, changed or left (complete, void, disputed,
    confirmed, reopened, or its start undone)."""

    kind: ClassVar[EventKind] = EventKind.HAND_SETTLED
    routed_by: ClassVar[tuple[str, ...]] = ("table", "deal")
    table: int
    deal: int
    status: str


class PenaltyApplied(msgspec.Struct, frozen=True):
    """The tournament director took chips or points off the player in (table, seat): the
    standings of both audiences move at once (a penalty tells nothing of any deal)."""

    kind: ClassVar[EventKind] = EventKind.PENALTY_APPLIED
    routed_by: ClassVar[tuple[str, ...]] = ("table",)  # (console:{t})
    table: int
    seat: int
    chips: int = 0
    points: int = 0


class StageFilled(msgspec.Struct, frozen=True):
    """A start fixed the teams of a stage (from the standings of the stage before): what shows
    them is rebuilt: the standings, the seats, the rosters of its ``tables`` and the live
    travellers of its ``deals``."""

    kind: ClassVar[EventKind] = EventKind.STAGE_FILLED
    routed_by: ClassVar[tuple[str, ...]] = ("tables", "deals")
    stage: str
    tables: tuple[int, ...]
    deals: tuple[int, ...]


class Notable(msgspec.Struct, frozen=True):
    """A moment worth a ticker line (an all-in, a void): the engine's desk words it and says
    which audiences see it now (``TickerItem``). The engine's only."""

    kind: ClassVar[EventKind] = EventKind.NOTABLE
    item: dict[str, Any]


class DealReleased(msgspec.Struct, frozen=True):
    """Every table of every group completed the deal, and the delay passed: now public."""

    kind: ClassVar[EventKind] = EventKind.DEAL_RELEASED
    routed_by: ClassVar[tuple[str, ...]] = ("deal",)
    deal: int


class ReleasedDealCorrected(msgspec.Struct, frozen=True):
    """A hand of a deal the public sees moved without its result moving (reopened, its actions
    re-entered): the public's deal and travellers show the correction as it happens."""

    kind: ClassVar[EventKind] = EventKind.RELEASED_DEAL_CORRECTED
    routed_by: ClassVar[tuple[str, ...]] = ("deal",)
    deal: int


class ReleasedResultCorrected(msgspec.Struct, frozen=True):
    """A counted result of a deal the public sees changed: the public board moved, and the
    public's standings, seats, ticker, deal and travellers show it at once."""

    kind: ClassVar[EventKind] = EventKind.RELEASED_RESULT_CORRECTED
    routed_by: ClassVar[tuple[str, ...]] = ("table", "deal")
    table: int
    deal: int


class TickerItem(msgspec.Struct, frozen=True):
    kind: ClassVar[EventKind] = EventKind.TICKER_ITEM
    routed_by: ClassVar[tuple[str, ...]] = ("audience",)
    audience: str
    item: dict[str, Any]


class OnAirChanged(msgspec.Struct, frozen=True):
    kind: ClassVar[EventKind] = EventKind.ON_AIR_CHANGED
    routed_by: ClassVar[tuple[str, ...]] = ()
    slot: str


class CuesChanged(msgspec.Struct, frozen=True):
    """The operator's cue list moved (a cue added, moved or removed)."""

    kind: ClassVar[EventKind] = EventKind.CUES_CHANGED
    routed_by: ClassVar[tuple[str, ...]] = ()


class PreviewChanged(msgspec.Struct, frozen=True):
    """The hub's preview moved (a control surface's: a slot's selection or a cue loaded,
    cleared; docs/companion.md)."""

    kind: ClassVar[EventKind] = EventKind.PREVIEW_CHANGED
    routed_by: ClassVar[tuple[str, ...]] = ()


class PlayoutChanged(msgspec.Struct, frozen=True):
    """A playout (CasparCG, SPX, an OGraf renderer) reported a graphic played or stopped
    (``POST /api/playout``, docs/overlays.md)."""

    kind: ClassVar[EventKind] = EventKind.PLAYOUT_CHANGED
    routed_by: ClassVar[tuple[str, ...]] = ()


class Rejected(msgspec.Struct, frozen=True):
    kind: ClassVar[EventKind] = EventKind.REJECTED
    routed_by: ClassVar[tuple[str, ...]] = ("table",)  # (console:{t})
    table: int | None
    code: str


class LinkChanged(msgspec.Struct, frozen=True):
    kind: ClassVar[EventKind] = EventKind.LINK_CHANGED
    routed_by: ClassVar[tuple[str, ...]] = ()
    console: str
    connected: bool


class ClockChanged(msgspec.Struct, frozen=True):
    """The operator moved the session clock, or a level ended, or the time ran out."""

    kind: ClassVar[EventKind] = EventKind.CLOCK_CHANGED
    routed_by: ClassVar[tuple[str, ...]] = ()
    status: str
    level: int


class RosterChanged(msgspec.Struct, frozen=True):
    """The operator corrected a team's roster (a player's name, a substitute, the team's name
    or colour): every topic that shows the team's names or colours is rebuilt, in every
    audience (a name tells nothing of any deal)."""

    kind: ClassVar[EventKind] = EventKind.ROSTER_CHANGED
    routed_by: ClassVar[tuple[str, ...]] = ()  # every table and traveller, whichever team
    team: str


EngineEvent = (
    HandStarted
    | ActionApplied
    | HandRewound
    | HandSettled
    | PenaltyApplied
    | StageFilled
    | Notable
    | DealReleased
    | ReleasedDealCorrected
    | ReleasedResultCorrected
    | TickerItem
    | OnAirChanged
    | CuesChanged
    | PreviewChanged
    | PlayoutChanged
    | Rejected
    | LinkChanged
    | ClockChanged
    | RosterChanged
)
