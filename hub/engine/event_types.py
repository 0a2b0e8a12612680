"""Console event types (protocol v1): a tagged union of msgspec Structs on ``type``.

One frozen class per event type; every field an event may carry is on every type (protocol v1
lets a betting action carry a note, say), so the tournament reads ``event.seat`` of any event,
and a type's required fields are its class's (``Bet.amount`` is an ``int``). The protocol's
bounds are the fields' ``Annotated`` types, which msgspec checks as it decodes
(``events.decode_event``); ``events.parse_event`` builds the same classes from a map.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import Meta

VERSION: Literal[1] = 1
MAX_NAME = 64
MAX_NOTE = 500
MAX_INT = 2**53
Version = Literal[1]
Name = Annotated[str, Meta(min_length=1, max_length=MAX_NAME)]
Positive = Annotated[int, Meta(ge=1, lt=MAX_INT)]
Natural = Annotated[int, Meta(ge=0, lt=MAX_INT)]
SeatList = Annotated[
    tuple[Annotated[int, Meta(ge=1, lt=100)], ...], Meta(min_length=1, max_length=10)
]
Note = Annotated[str, Meta(max_length=MAX_NOTE)]
Card = Annotated[int, Meta(ge=1, le=2)]
ThrowText = Annotated[str, Meta(min_length=1, max_length=9)]


class ConsoleEvent(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=True
):
    """One checked console event: a tagged union on ``type``, one Struct per event type (the
    game's own ones declared with its game below); ``type`` is each class's tag. Every field
    an event may carry is on every type (protocol v1 lets a betting action carry a note, say),
    so the tournament reads ``event.seat`` of any event; a type's required fields are its
    class's (``Bet.amount`` is an ``int``)."""

    type: ClassVar[str]
    # The bounds (Annotated) are protocol v1's; `decode_event` checks them as it decodes.
    v: Version  # 1: the protocol version
    tournament: Name
    table: Positive
    console: Name
    seq: Positive
    ts: float | None = None
    deal: Positive | None = None
    seat: Positive | None = None
    amount: Natural | None = None
    seats: SeatList | None = None
    note: Note | None = None
    card: Card | None = None  # exposed: the seat's first (1) or second (2) hole card
    points: Natural | None = None  # penalty: IFP points taken off
    by: Name | None = None  # the official who ordered an operator void or a penalty
    throws: ThrowText | None = None  # RPS Poker: "RPS", one letter per throw of the round
    # The table's `moves` (console:{t}) the entry was made on: refused `stale` when the table
    # moved since (a second tablet, a screen that changed under the tap). None: not checked.
    after: Natural | None = None

    def as_record(self) -> dict[str, Any]:
        """The event as a plain mapping with only the fields it carries (journal form)."""
        out: dict[str, Any] = {
            "v": VERSION,
            "tournament": self.tournament,
            "table": self.table,
            "console": self.console,
            "seq": self.seq,
            "type": self.type,
        }
        # Field by field, in the order of _OPTIONAL + _MAHJONG (a loop of getattr costs twice).
        if self.ts is not None:
            out["ts"] = self.ts
        if self.deal is not None:
            out["deal"] = self.deal
        if self.seat is not None:
            out["seat"] = self.seat
        if self.amount is not None:
            out["amount"] = self.amount
        if self.seats is not None:
            out["seats"] = list(self.seats)
        if self.note is not None:
            out["note"] = self.note
        if self.card is not None:
            out["card"] = self.card
        if self.points is not None:
            out["points"] = self.points
        if self.by is not None:
            out["by"] = self.by
        if self.throws is not None:
            out["throws"] = self.throws
        if self.after is not None:
            out["after"] = self.after
        return out


# -------------------------------------------------------------------- every game's events
class Start(ConsoleEvent, tag="start", frozen=True, kw_only=True):
    type = "start"
    deal: Positive


class Fold(ConsoleEvent, tag="fold", frozen=True, kw_only=True):
    type = "fold"
    seat: Positive


class Check(ConsoleEvent, tag="check", frozen=True, kw_only=True):
    type = "check"
    seat: Positive


class Call(ConsoleEvent, tag="call", frozen=True, kw_only=True):
    type = "call"
    seat: Positive


class Bet(ConsoleEvent, tag="bet", frozen=True, kw_only=True):
    type = "bet"
    seat: Positive
    amount: Natural


class Raise(ConsoleEvent, tag="raise", frozen=True, kw_only=True):
    type = "raise"
    seat: Positive
    amount: Natural


class Win(ConsoleEvent, tag="win", frozen=True, kw_only=True):
    type = "win"
    seats: SeatList


class Undo(ConsoleEvent, tag="undo", frozen=True, kw_only=True):
    type = "undo"


class Reopen(ConsoleEvent, tag="reopen", frozen=True, kw_only=True):
    type = "reopen"
    deal: Positive


class Void(ConsoleEvent, tag="void", frozen=True, kw_only=True):
    type = "void"


class Confirm(ConsoleEvent, tag="confirm", frozen=True, kw_only=True):
    type = "confirm"
    deal: Positive


class Penalty(ConsoleEvent, tag="penalty", frozen=True, kw_only=True):
    type = "penalty"
    seat: Positive
    note: Note
    by: Name


# -------------------------------------------------------------------- card games (dealer errors)
class Exposed(ConsoleEvent, tag="exposed", frozen=True, kw_only=True):
    type = "exposed"
    seat: Positive
    card: Card


class Early(ConsoleEvent, tag="early", frozen=True, kw_only=True):
    type = "early"


# -------------------------------------------------------------------- MCR mahjong (games/mahjong)
class Result(ConsoleEvent, tag="result", frozen=True, kw_only=True):
    """A mahjong hand's result: a win (``seat``, ``fan``, ``discarder`` or ``self_draw``) or
    a ``draw``."""

    type = "result"
    fan: Natural | None = None  # the winner's fan total
    discarder: Positive | None = None  # the seat whose discard won
    self_draw: Literal[True] | None = None  # won on a tile from the winner's wall
    draw: Literal[True] | None = None  # nobody won

    def as_record(self) -> dict[str, Any]:
        out = super().as_record()
        if self.fan is not None:
            out["fan"] = self.fan
        if self.discarder is not None:
            out["discarder"] = self.discarder
        if self.self_draw is not None:
            out["self_draw"] = self.self_draw
        if self.draw is not None:
            out["draw"] = self.draw
        return out


# -------------------------------------------------------------------- RPS Poker (games/rps)
class Throws(ConsoleEvent, tag="throws", frozen=True, kw_only=True):
    type = "throws"
    seat: Positive
    throws: ThrowText


class Reveal(ConsoleEvent, tag="reveal", frozen=True, kw_only=True):
    type = "reveal"
    throws: ThrowText


AnyEvent = (
    Start
    | Fold
    | Check
    | Call
    | Bet
    | Raise
    | Win
    | Undo
    | Reopen
    | Void
    | Confirm
    | Penalty
    | Exposed
    | Early
    | Result
    | Throws
    | Reveal
)
EVENT_CLASSES: dict[str, type[ConsoleEvent]] = {
    cls.type: cls
    for cls in (
        Start,
        Fold,
        Check,
        Call,
        Bet,
        Raise,
        Win,
        Undo,
        Reopen,
        Void,
        Confirm,
        Penalty,
        Exposed,
        Early,
        Result,
        Throws,
        Reveal,
    )
}
