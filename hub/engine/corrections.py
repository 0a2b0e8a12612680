"""Corrections of a table's hands: confirm a disputed or reopened hand, undo, void (a misdeal
or the operator's), reopen, and the dealer errors (an exposed hole card, a board card turned
early). Each handler takes the tournament state and returns the engine events it caused, or
raises `Rejection` having changed nothing.
"""

from __future__ import annotations

from typing import Any, Protocol

from hub.domain.config import TournamentConfig
from hub.domain.dealing import card_position
from hub.domain.errors import Rejection
from hub.domain.eventscore import EventScoreboard
from hub.domain.games.base import Hand
from hub.domain.games.spec import HandSpec
from hub.domain.scoring import Scoreboard
from hub.domain.states import Street
from hub.engine.changes import EngineEvent, HandRewound, HandSettled
from hub.engine.events import DEALER_ERRORS, OPERATOR_CONSOLE, ConsoleEvent
from hub.engine.hands import (
    COMPLETE,
    DISPUTED,
    IN_PROGRESS,
    MISDEAL_ACTIONS,
    SHOWDOWN,
    STREETS,
    TERMINAL,
    VOID,
    HandState,
    Input,
    TableState,
)


class HandMachine(Protocol):
    """What a correction uses of `hub.engine.tournament.TournamentState` (which imports
    this module: named here, not imported)."""

    config: TournamentConfig
    board: Scoreboard | EventScoreboard
    corrections: list[dict[str, Any]]

    def current_hand(self, table: TableState, event: ConsoleEvent) -> HandState: ...
    def replay_hand(self, deal_no: int, inputs: list[Input]) -> tuple[HandSpec, Hand]: ...
    def rebuild(self, state: HandState, inputs: list[Input]) -> None: ...
    def after_betting(
        self,
        table: TableState,
        current: HandState,
        now: float,
        notable: tuple[dict[str, Any], ...] = (),
    ) -> list[EngineEvent]: ...
    def finish(
        self,
        table: TableState,
        current: HandState,
        status: str,
        now: float,
        notable: tuple[dict[str, Any], ...] = (),
    ) -> list[EngineEvent]: ...


__all__ = [
    "log_correction",
    "misdeal_too_late",
    "on_confirm",
    "on_early",
    "on_exposed",
    "on_reopen",
    "on_undo",
    "on_void",
]


def on_confirm(
    s: HandMachine, table: TableState, event: ConsoleEvent, now: float
) -> list[EngineEvent]:
    assert event.deal is not None
    target = table.hands.get(event.deal)
    if target is None:
        raise Rejection(
            "wrong_deal", f"deal {event.deal} has not been played at table {table.table}"
        )
    if target.status == DISPUTED:
        trial = target.hand.copy()
        winners = event.seats
        trial.settle(winners)
        target.hand = trial
        target.winners = tuple(winners) if winners else target.computed
        target.settled_by = "declared" if winners else "cards"
        target.declared = None
        log_correction(s, table, target, "confirm", now, event)
        return s.finish(table, target, COMPLETE, now)
    if target.reopened and target is table.current:
        if target.hand.street == Street.COMPLETE:
            log_correction(s, table, target, "confirm", now, event)
            return s.finish(table, target, COMPLETE, now)
        raise Rejection(
            "not_allowed",
            f"deal {event.deal} at table {table.table} is not finished: "
            + ("declare the winners" if target.status == SHOWDOWN else "betting is open"),
        )
    raise Rejection(
        "not_disputed",
        f"deal {event.deal} at table {table.table} is neither disputed nor reopened",
    )


def on_undo(
    s: HandMachine, table: TableState, event: ConsoleEvent, now: float
) -> list[EngineEvent]:
    if event.deal is not None:
        ended = event.deal if event.deal in table.hands else None
    else:
        ended = table.last_finished
    if table.current is None and ended is not None:
        # undo only reaches into the hand in progress; a finished hand is reopened first.
        raise Rejection(
            "hand_not_started",
            f"no hand is in progress at table {table.table}: deal {ended} has ended; "
            f"send 'reopen' for deal {ended} first, then 'undo'",
        )
    current = s.current_hand(table, event)
    if not current.inputs:
        # Undoing the start itself: the deal goes back to not played.
        del table.hands[current.deal]
        table.current = None
        log_correction(s, table, current, "undo", now, event)
        if current.reopened:  # e.g. start, void, reopen, undo: no inputs to take back
            s.board.set_result(table.table, current.deal, None)
        return [HandRewound(table.table, current.deal)]
    s.rebuild(current, current.inputs[:-1])
    current.winners = None
    current.settled_by = None
    log_correction(s, table, current, "undo", now, event)
    return [HandRewound(table.table, current.deal), *s.after_betting(table, current, now)]


def on_void(
    s: HandMachine, table: TableState, event: ConsoleEvent, now: float
) -> list[EngineEvent]:
    """A misdeal (the console's, before two players acted after the blinds), or the
    operator's void of any hand of the table, with the official and a reason."""
    operator = event.console == OPERATOR_CONSOLE
    if operator and (not event.note or not event.by):
        raise Rejection("bad_request", "an operator void needs 'by' and a reason")
    if event.deal is None or (table.current and table.current.deal == event.deal):
        target = s.current_hand(table, event)
    else:
        found = table.hands.get(event.deal)
        if found is None:
            raise Rejection(
                "wrong_deal",
                f"deal {event.deal} has not been played at table {table.table}",
            )
        target = found
    if target.status == VOID:
        raise Rejection("not_allowed", f"deal {target.deal} is already void")
    if not operator:
        why = misdeal_too_late(target, table.current)
        if why:
            raise Rejection(
                "not_allowed",
                f"deal {target.deal} at table {table.table} {why} (only the operator "
                "can void it, with a reason)",
            )
    log_correction(s, table, target, "void", now, event)
    return s.finish(
        table,
        target,
        VOID,
        now,
        ({"kind": "void", "table": table.table, "deal": target.deal, "seat": None},),
    )


def misdeal_too_late(target: HandState, current: HandState | None) -> str:
    """Why a console may no longer void ``target`` as a misdeal ("" when it may). Each
    reason says what is true of this hand: a hand that one fold ended heads-up is
    finished, not one "two players have acted" in."""
    if target is not current:
        return "is finished: a console voids only the hand in progress"
    if target.reopened:
        return "is a reopened hand: a console voids only a hand in its first play"
    if target.acted(MISDEAL_ACTIONS):
        return (
            f"has {target.actions_taken} actions after the blinds: too late for a "
            "misdeal once two players have acted, the hand is played out"
        )
    return ""


def on_reopen(
    s: HandMachine, table: TableState, event: ConsoleEvent, now: float
) -> list[EngineEvent]:
    assert event.deal is not None
    if table.current is not None:
        raise Rejection(
            "hand_in_progress",
            f"deal {table.current.deal} is in progress at table {table.table}; "
            "finish or void it first",
        )
    target = table.hands.get(event.deal)
    if target is None or target.status not in TERMINAL:
        raise Rejection(
            "wrong_deal", f"deal {event.deal} is not a finished hand of table {table.table}"
        )
    s.rebuild(target, target.inputs)
    target.reopened = True
    target.winners = target.declared = target.computed = target.settled_by = None
    target.finished_at = None
    target.status = SHOWDOWN if target.hand.street == Street.SHOWDOWN else IN_PROGRESS
    table.current = target
    s.board.set_result(table.table, target.deal, None)
    log_correction(s, table, target, "reopen", now, event)
    settled = HandSettled(table.table, target.deal, target.status)
    return [HandRewound(table.table, target.deal), settled]


def log_correction(
    s: HandMachine,
    table: TableState,
    hand: HandState,
    kind: str,
    now: float,
    event: ConsoleEvent | None = None,
) -> None:
    """One line of the corrections log (the operator desk's who, what, why): the official
    (``by``) of an operator's command, else the console that sent it; the reason (``note``)."""
    entry: dict[str, Any] = {"table": table.table, "deal": hand.deal, "type": kind, "at": now}
    if event is not None and event.console == OPERATOR_CONSOLE:
        entry["by"], entry["reason"] = event.by, event.note
    elif event is not None:
        entry["console"] = event.console
        if event.by:  # a console's confirm of a dispute names the official who ruled
            entry["by"] = event.by
        if event.note:
            entry["reason"] = event.note
        if kind in DEALER_ERRORS:
            entry["seat"] = event.seat
    s.corrections.append(entry)
    del s.corrections[:-200]


# ----------------------------------------------------------------- dealer errors


def _dealer_error(
    s: HandMachine, table: TableState, event: ConsoleEvent, entry: Input
) -> HandState:
    current = s.current_hand(table, event)
    if current.status != IN_PROGRESS or current.hand.street == Street.COMPLETE:
        raise Rejection("hand_over", f"betting is over at table {table.table}")
    trial = [*current.inputs, entry]
    spec, hand = s.replay_hand(current.deal, trial)
    current.spec, current.hand, current.inputs = spec, hand, trial
    return current


def on_exposed(
    s: HandMachine, table: TableState, event: ConsoleEvent, now: float
) -> list[EngineEvent]:
    """A hole card exposed by the dealer: replaced by the top card of the stub."""
    assert event.seat is not None and event.card is not None
    current = s.current_hand(table, event)
    if current.actions_taken:
        raise Rejection(
            "not_allowed",
            "an exposed hole card is replaced before the first action: undo back to it",
        )
    if any(k == "exposed" for _, k, _ in current.inputs):
        raise Rejection(
            "not_allowed", "more than one hole card exposed is a misdeal: void the hand"
        )
    position = card_position(current.spec.button, s.config.seats, event.seat, event.card)
    if position < 2:
        raise Rejection(
            "not_allowed",
            f"card {position + 1} of the deal exposed is a misdeal: void the hand",
        )
    state = _dealer_error(s, table, event, (event.seat, "exposed", event.card))
    log_correction(s, table, state, "exposed", now, event)
    return [HandRewound(table.table, state.deal)]


def on_early(
    s: HandMachine, table: TableState, event: ConsoleEvent, now: float
) -> list[EngineEvent]:
    """The next board card(s) turned before the betting round closed."""
    current = s.current_hand(table, event)
    street = current.hand.street
    index = {"preflop": 0, "flop": 1, "turn": 2}.get(street)
    if index is None:
        raise Rejection("not_allowed", f"no board card comes after the {street}")
    if (0, "early", index) in current.inputs:
        raise Rejection("not_allowed", f"the {STREETS[index]} was already dealt early")
    state = _dealer_error(s, table, event, (0, "early", index))
    log_correction(s, table, state, "early", now, event)
    return [HandRewound(table.table, state.deal)]
