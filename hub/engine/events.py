"""Console events (protocol v1): the schema check that stands between the wire and the core.

A console event arrives as a plain mapping (decoded msgpack or a JSON Lines row). `parse_event`
turns it into a typed `ConsoleEvent` or refuses it with `bad_schema` naming the field, so nothing
malformed ever reaches the tournament state.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from typing import Any

from hub.domain.errors import Rejection

VERSION = 1
ACTION_TYPES = frozenset({"fold", "check", "call", "bet", "raise"})
# Dealer errors a table reports (hub.domain.dealing.redeal says which card replaced which).
DEALER_ERRORS = frozenset({"exposed", "early"})
# RPS Poker (hub.domain.rps): a player's throws for the round, the dealer's turned over.
THROW_TYPES = frozenset({"throws", "reveal"})
EVENT_TYPES = (
    ACTION_TYPES
    | DEALER_ERRORS
    | {"start", "win", "undo", "reopen", "void", "confirm", "penalty"}
    | {"result"}  # mahjong: a hand's result (docs/mahjong.md)
    | THROW_TYPES
)
# The reserved console name of the operator desk: its events are the hub's own.
OPERATOR_CONSOLE = "operator"

_REQUIRED = ("v", "tournament", "table", "console", "seq", "type")
_OPTIONAL = ("ts", "deal", "seat", "amount", "seats", "note", "card", "points", "by", "throws")
# A mahjong `result`: winner in `seat`, `fan`, and `discarder` or `self_draw`; or `draw`.
_MAHJONG = ("fan", "discarder", "self_draw", "draw")
_KNOWN = frozenset(_REQUIRED + _OPTIONAL + _MAHJONG)
# Fields each type needs beyond the envelope.
_NEEDS: dict[str, tuple[str, ...]] = {
    "start": ("deal",),
    "fold": ("seat",),
    "check": ("seat",),
    "call": ("seat",),
    "bet": ("seat", "amount"),
    "raise": ("seat", "amount"),
    "win": ("seats",),
    "undo": (),
    "reopen": ("deal",),
    "void": (),
    "confirm": ("deal",),
    "exposed": ("seat", "card"),
    "early": (),
    "penalty": ("seat", "note", "by"),
    "result": (),
    "throws": ("seat", "throws"),
    "reveal": ("throws",),
}
MAX_NAME = 64
MAX_NOTE = 500
MAX_INT = 2**53


@dataclass(frozen=True)
class ConsoleEvent:
    tournament: str
    table: int
    console: str
    seq: int
    type: str
    ts: float | None = None
    deal: int | None = None
    seat: int | None = None
    amount: int | None = None
    seats: tuple[int, ...] | None = None
    note: str | None = None
    card: int | None = None  # exposed: the seat's first (1) or second (2) hole card
    points: int | None = None  # penalty: IFP points taken off
    by: str | None = None  # the official who ordered an operator void or a penalty
    fan: int | None = None  # mahjong result: the winner's fan total
    discarder: int | None = None  # mahjong result: the seat whose discard won
    self_draw: bool | None = None  # mahjong result: won on a tile from the winner's wall
    draw: bool | None = None  # mahjong result: nobody won
    throws: str | None = None  # RPS Poker: "RPS", one letter per throw of the round

    @classmethod
    def plain(
        cls,
        tournament: str,
        table: int,
        console: str,
        seq: int,
        type: str,
        ts: float | None,
        deal: int | None,
        seat: int | None,
        amount: int | None,
    ) -> ConsoleEvent:
        """``ConsoleEvent(tournament, ..., amount)``, every other field None, built in one step:
        the frozen ``__init__`` sets the 19 fields one ``object.__setattr__`` at a time (1.3 µs
        of the 2 µs `parse_event` takes); this hands the instance its whole ``__dict__``."""
        event = object.__new__(cls)
        fields = dict(_NO_FIELDS)
        fields["tournament"], fields["table"], fields["console"] = tournament, table, console
        fields["seq"], fields["type"], fields["ts"] = seq, type, ts
        fields["deal"], fields["seat"], fields["amount"] = deal, seat, amount
        object.__setattr__(event, "__dict__", fields)
        return event

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
        if self.fan is not None:
            out["fan"] = self.fan
        if self.discarder is not None:
            out["discarder"] = self.discarder
        if self.self_draw is not None:
            out["self_draw"] = self.self_draw
        if self.draw is not None:
            out["draw"] = self.draw
        return out


_NO_FIELDS = dict.fromkeys(f.name for f in dataclass_fields(ConsoleEvent))


def _bad(message: str) -> Rejection:
    return Rejection("bad_schema", message)


def _int(raw: Mapping[str, Any], name: str, *, low: int = 0) -> int:
    value = raw[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"field '{name}' must be an integer, got {type(value).__name__}")
    if value < low:
        raise _bad(f"field '{name}' must be at least {low}, got {value}")
    if value >= MAX_INT:
        raise _bad(f"field '{name}' is too large: at most {MAX_INT - 1} (2^53 - 1), got {value}")
    return value


def _name(raw: Mapping[str, Any], name: str) -> str:
    value = raw[name]
    if not isinstance(value, str) or not value or len(value) > MAX_NAME:
        raise _bad(f"field '{name}' must be a non-empty string of at most {MAX_NAME} characters")
    return value


def parse_event(raw: Any) -> ConsoleEvent:
    """Check one decoded event against protocol v1; raises `Rejection('bad_schema', ...)`."""
    if type(raw) is dict:
        plain = _parse_plain(raw)
        if plain is not None:
            return plain
    return _parse_checked(raw)


# The shape nearly every event has: the envelope, ``ts`` and at most deal, seat and amount, of
# a type that needs nothing else (a betting action, start, undo, reopen, confirm, ...); per
# type, whether it needs its deal, seat, amount.
_PLAIN_KEYS = frozenset((*_REQUIRED, "ts", "deal", "seat", "amount"))
_PLAIN_NEEDS = {
    kind: ("deal" in needs, "seat" in needs, "amount" in needs)
    for kind, needs in _NEEDS.items()
    if kind != "result" and set(needs) <= {"deal", "seat", "amount"}
}


def _parse_plain(raw: dict[str, Any]) -> ConsoleEvent | None:
    """The event of a well-formed plain-shaped map, checked with exact types only (a third
    of `_parse_checked`'s time); None for anything else, which `_parse_checked` then accepts
    alike or refuses with its message. It accepts nothing that `_parse_checked` refuses."""
    if not _PLAIN_KEYS.issuperset(raw):
        return None
    try:
        v, kind, table, seq = raw["v"], raw["type"], raw["table"], raw["seq"]
        tournament, console = raw["tournament"], raw["console"]
    except KeyError:
        return None
    if type(v) is not int or v != VERSION or type(kind) is not str:
        return None
    needs = _PLAIN_NEEDS.get(kind)
    if needs is None:
        return None
    if type(tournament) is not str or not 0 < len(tournament) <= MAX_NAME:
        return None
    if type(console) is not str or not 0 < len(console) <= MAX_NAME:
        return None
    if type(table) is not int or not 1 <= table < MAX_INT:
        return None
    if type(seq) is not int or not 1 <= seq < MAX_INT:
        return None
    get = raw.get
    ts, deal, seat, amount = get("ts"), get("deal"), get("seat"), get("amount")
    if ts is not None and (type(ts) is not float or ts - ts != 0.0):  # NaN, ±inf: not 0
        return None
    need_deal, need_seat, need_amount = needs
    if deal is None:
        if need_deal:
            return None
    elif type(deal) is not int or not 1 <= deal < MAX_INT:
        return None
    if seat is None:
        if need_seat:
            return None
    elif type(seat) is not int or not 1 <= seat < MAX_INT:
        return None
    if amount is None:
        if need_amount:
            return None
    elif type(amount) is not int or not 0 <= amount < MAX_INT:
        return None
    return ConsoleEvent.plain(tournament, table, console, seq, kind, ts, deal, seat, amount)


def _parse_checked(raw: Any) -> ConsoleEvent:
    """Every check of protocol v1 in turn, naming the first field that fails."""
    if not isinstance(raw, Mapping):
        raise _bad(f"an event must be a map, got {type(raw).__name__}")
    for key in raw:
        if key not in _KNOWN:
            raise _bad(f"unknown field {str(key)[:40]!r}")
    for key in _REQUIRED:
        if key not in raw:
            raise _bad(f"missing field '{key}'")
    if raw["v"] != VERSION or isinstance(raw["v"], bool):
        raise _bad(f"unsupported protocol version {raw['v']!r} (this hub speaks v{VERSION})")
    kind = raw["type"]
    if not isinstance(kind, str) or kind not in EVENT_TYPES:
        raise _bad(f"unknown event type {str(kind)[:40]!r}")
    for key in _NEEDS[kind]:
        if raw.get(key) is None:
            raise _bad(f"a '{kind}' event needs field '{key}'")
    ts = raw.get("ts")
    if ts is not None and (isinstance(ts, bool) or not isinstance(ts, int | float)):
        raise _bad("field 'ts' must be a number")
    if isinstance(ts, int) and not -MAX_INT < ts < MAX_INT:  # as every other integer field
        raise _bad("field 'ts' must be a number from -(2^53 - 1) to 2^53 - 1")
    if isinstance(ts, float) and not math.isfinite(ts):  # NaN and ±inf: JSON cannot hold them
        raise _bad(f"field 'ts' must be a finite number, not {ts}")
    seats: tuple[int, ...] | None = None
    if raw.get("seats") is not None:
        value = raw["seats"]
        if not isinstance(value, list | tuple) or not value or len(value) > 10:
            raise _bad("field 'seats' must be a list of 1 to 10 seat numbers")
        if any(isinstance(s, bool) or not isinstance(s, int) or not 0 < s < 100 for s in value):
            raise _bad("field 'seats' must hold seat numbers (positive integers)")
        if len(set(value)) != len(value):
            raise _bad("field 'seats' names a seat twice")
        seats = tuple(sorted(value))
    note = raw.get("note")
    if note is not None and (not isinstance(note, str) or len(note) > MAX_NOTE):
        raise _bad(f"field 'note' must be a string of at most {MAX_NOTE} characters")
    card = _int(raw, "card", low=1) if raw.get("card") is not None else None
    if card is not None and card > 2:
        raise _bad(f"field 'card' must be 1 or 2 (the seat's first or second card), got {card}")
    mahjong = _mahjong_fields(raw, kind)
    return ConsoleEvent(
        **mahjong,
        tournament=_name(raw, "tournament"),
        table=_int(raw, "table", low=1),
        console=_name(raw, "console"),
        seq=_int(raw, "seq", low=1),
        type=kind,
        ts=float(ts) if ts is not None else None,
        deal=_int(raw, "deal", low=1) if raw.get("deal") is not None else None,
        seat=_int(raw, "seat", low=1) if raw.get("seat") is not None else None,
        amount=_int(raw, "amount", low=0) if raw.get("amount") is not None else None,
        seats=seats,
        note=note,
        card=card,
        points=_int(raw, "points") if raw.get("points") is not None else None,
        by=_name(raw, "by") if raw.get("by") is not None else None,
        throws=_throws(raw) if raw.get("throws") is not None else None,
    )


def _mahjong_fields(raw: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """The fields of a mahjong ``result`` (refused on any other type): a draw names nothing
    else; a win names its winner (``seat``), ``fan`` and exactly one of ``discarder`` and
    ``self_draw``."""
    given = [name for name in _MAHJONG if raw.get(name) is not None]
    if kind != "result":
        if given:
            raise _bad(f"field '{given[0]}' belongs to a 'result' event")
        return {}
    for flag in ("self_draw", "draw"):
        if raw.get(flag) is not None and raw[flag] is not True:
            raise _bad(f"field '{flag}' must be true when given")
    if raw.get("draw"):
        extra = [n for n in ("seat", "fan", "discarder", "self_draw") if raw.get(n) is not None]
        if extra:
            raise _bad(f"a drawn hand has no winner: field '{extra[0]}' does not belong")
        return {"draw": True}
    if raw.get("seat") is None or raw.get("fan") is None:
        raise _bad("a 'result' needs the winner's 'seat' and 'fan' (or 'draw': true)")
    if (raw.get("discarder") is None) == (raw.get("self_draw") is None):
        raise _bad("a win needs exactly one of 'discarder' (a seat) and 'self_draw': true")
    out: dict[str, Any] = {"fan": _int(raw, "fan")}
    if raw.get("discarder") is not None:
        out["discarder"] = _int(raw, "discarder", low=1)
    else:
        out["self_draw"] = True
    return out


def _throws(raw: Mapping[str, Any]) -> str:
    value = raw["throws"]
    if not isinstance(value, str) or not 0 < len(value) <= 9:
        raise _bad("field 'throws' must be a string of 1 to 9 throws (R, P, S)")
    return value
