"""What the engine's parts add to the events the tournament state answered.

`TournamentState.apply` answers the events a console event caused; the parts around it react,
in order: a ``Notable`` is worded on the ticker (the desk), a ``HandSettled`` puts its swings
on the ticker and moves the release (a public deal's result corrected at once, else the deal
tracked and released when due), a ``PenaltyApplied`` moves the public board, and a hand of a
public deal corrected shows to the public (``ReleasedDealCorrected``). `tick` releases what is
due and moves the clock. Each yields the engine events to announce, one at a time: the engine
announces each before the next is made, as it did when these were its own methods.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from hub.engine.changes import (
    ActionApplied,
    EngineEvent,
    HandRewound,
    HandSettled,
    HandStarted,
    Notable,
    PenaltyApplied,
    ReleasedDealCorrected,
    TickerItem,
)
from hub.engine.desk import Desk
from hub.engine.release import Release
from hub.engine.ticker import swing_items
from hub.engine.tournament import TournamentState
from hub.wire.topics import PUBLIC

__all__ = ["after", "tick"]

_HAND_MOVES = (ActionApplied, HandStarted, HandRewound)
_HAND_MOVE_CLASSES = frozenset(_HAND_MOVES)


def after(
    events: Sequence[EngineEvent], now: float, state: TournamentState, release: Release, desk: Desk
) -> Iterable[EngineEvent]:
    """The events one applied console event caused, with what the parts add to them."""
    if len(events) == 1:
        only = events[0]
        if type(only) in _HAND_MOVE_CLASSES and only.deal not in release.deals:  # type: ignore[union-attr]
            return events  # (most events: one action of a deal in play; nothing to add)
    return _reacted(events, now, state, release, desk)


def _reacted(
    events: Sequence[EngineEvent], now: float, state: TournamentState, release: Release, desk: Desk
) -> Iterator[EngineEvent]:
    settles = any(isinstance(e, HandSettled) for e in events)
    for event in events:
        if isinstance(event, _HAND_MOVES):
            yield event
            if not settles and release.deal_released(event.deal):
                # A correction of a released deal (reopened, its actions re-entered) shows to
                # the public as it happens.
                yield ReleasedDealCorrected(event.deal)
        elif isinstance(event, Notable):
            yield from desk.add_ticker(event.item, state, release.deal_released)
        elif isinstance(event, HandSettled):
            yield from settled(event, now, state, release, desk)
        elif isinstance(event, PenaltyApplied):
            release.public_penalty(
                {"table": event.table, "seat": event.seat}
                | {"chips": event.chips, "points": event.points}
            )
            yield event
        else:
            yield event


def settled(
    event: HandSettled, now: float, state: TournamentState, release: Release, desk: Desk
) -> Iterator[EngineEvent]:
    """A hand's counted result moved: the standings, its swings on the ticker, and the deal's
    release (a deal already public shows the correction at once)."""
    yield event
    for item in swing_items(state, event.table, event.deal):
        yield from desk.add_ticker(item, state, release.deal_released)
    corrected = release.correct(event.table, event.deal)
    if corrected is not None:
        yield corrected
    elif release.track(event.deal, now):
        yield from tick(now, release, desk)


def tick(now: float, release: Release, desk: Desk) -> Iterator[EngineEvent]:
    """The clock's level moved, and the deals whose delay has passed are released (with the
    ticker items they held back)."""
    yield from desk.clock_changed(now)
    for deal_no in release.due(now):
        yield release.release(deal_no)
        if desk.ticker.release(deal_no):
            yield TickerItem(PUBLIC, {})
