"""What the engine says happened: typed events, emitted after every change of state.

Projections (topic payloads) move by these events instead of being rebuilt on every change: an
``ActionApplied`` appends one row where the action shows, a ``HandSettled`` moves the standings
by one hand, a ``DealReleased`` opens a deal to the public. Each topic family in
``hub.topicnames`` names the events that touch it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "ActionApplied",
    "ClockChanged",
    "DealReleased",
    "EngineEvent",
    "HandRewound",
    "HandSettled",
    "HandStarted",
    "LinkChanged",
    "OnAirChanged",
    "PenaltyApplied",
    "Rejected",
    "TickerItem",
]


@dataclass(frozen=True, slots=True)
class HandStarted:
    table: int
    deal: int


@dataclass(frozen=True, slots=True)
class ActionApplied:
    """One betting action, the ``index``-th of the hand (a hand that it completed is also
    ``HandSettled``)."""

    table: int
    deal: int
    index: int


@dataclass(frozen=True, slots=True)
class HandRewound:
    """A correction took actions back (undo, reopen): the hand's action list shrank."""

    table: int
    deal: int


@dataclass(frozen=True, slots=True)
class HandSettled:
    """The hand's counted result appeared, changed or left (complete, void, disputed,
    confirmed, reopened, or its start undone)."""

    table: int
    deal: int
    status: str


@dataclass(frozen=True, slots=True)
class PenaltyApplied:
    """The tournament director took chips or points off the player in (table, seat): the
    standings of both audiences move at once (a penalty tells nothing of any deal)."""

    table: int
    seat: int


@dataclass(frozen=True, slots=True)
class DealReleased:
    """Every table of every group completed the deal, and the delay passed: now public."""

    deal: int


@dataclass(frozen=True, slots=True)
class TickerItem:
    audience: str
    item: dict[str, Any]


@dataclass(frozen=True, slots=True)
class OnAirChanged:
    slot: str


@dataclass(frozen=True, slots=True)
class Rejected:
    table: int | None
    code: str


@dataclass(frozen=True, slots=True)
class LinkChanged:
    console: str
    connected: bool


@dataclass(frozen=True, slots=True)
class ClockChanged:
    """The operator moved the session clock, or a level ended, or the time ran out."""

    status: str
    level: int


EngineEvent = (
    HandStarted
    | ActionApplied
    | HandRewound
    | HandSettled
    | PenaltyApplied
    | DealReleased
    | TickerItem
    | OnAirChanged
    | Rejected
    | LinkChanged
    | ClockChanged
)
