"""Console events (protocol v1): the schema check that stands between the wire and the core.

A console event arrives as msgpack bytes, a JSON Lines row or a plain mapping. `decode_event`
(`decode_event_json`) decodes well-formed bytes straight into the event's class
(``event_types``); `parse_event` turns a mapping into the same typed `ConsoleEvent` or refuses
it with `bad_schema` naming the field, so nothing malformed ever reaches the tournament state.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

import msgspec

from hub.domain.errors import Rejection
from hub.engine.event_types import (
    EVENT_CLASSES,
    MAX_NAME,
    MAX_NOTE,
    VERSION,
    AnyEvent,
    Result,
)
from hub.engine.event_types import (
    MAX_INT as MAX_INT,  # re-exported: the engine bounds seqs with it
)
from hub.engine.event_types import (
    ConsoleEvent as ConsoleEvent,  # re-exported: the engine's event type
)

ACTION_TYPES = frozenset({"fold", "check", "call", "bet", "raise"})
# Dealer errors a table reports (hub.domain.dealing.redeal says which card replaced which).
DEALER_ERRORS = frozenset({"exposed", "early"})
# RPS Poker (hub.domain.games.rps.rules): a player's throws for the round, the dealer's turned over.
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
_OPTIONAL = (
    *("ts", "deal", "seat", "amount", "seats", "note", "card", "points", "by", "throws"),
    "after",
)
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
    elif isinstance(raw, ConsoleEvent):  # decoded straight from msgpack (`decode_event`)
        return raw
    return _parse_checked(raw)


# The shape nearly every event has: the envelope, ``ts`` and at most deal, seat and amount, of
# a type that needs nothing else (a betting action, start, undo, reopen, confirm, ...); per
# type, whether it needs its deal, seat, amount.
_PLAIN_KEYS = frozenset((*_REQUIRED, "ts", "deal", "seat", "amount", "after"))
_PLAIN_NEEDS = {
    kind: ("deal" in needs, "seat" in needs, "amount" in needs)
    for kind, needs in _NEEDS.items()
    if kind != "result" and set(needs) <= {"deal", "seat", "amount"}
}
_PLAIN_CLASS = {kind: EVENT_CLASSES[kind] for kind in _PLAIN_NEEDS}


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
    after = get("after")
    if after is not None and (type(after) is not int or not 0 <= after < MAX_INT):
        return None
    return _PLAIN_CLASS[kind](
        v=VERSION,
        tournament=tournament,
        table=table,
        console=console,
        seq=seq,
        ts=ts,
        deal=deal,
        seat=seat,
        amount=amount,
        after=after,
    )


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
    return EVENT_CLASSES[kind](
        **mahjong,
        v=VERSION,
        tournament=_name(raw, "tournament"),
        table=_int(raw, "table", low=1),
        console=_name(raw, "console"),
        seq=_int(raw, "seq", low=1),
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
        after=_int(raw, "after") if raw.get("after") is not None else None,
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


_DECODER = msgspec.msgpack.Decoder(AnyEvent)
_JSON_DECODER = msgspec.json.Decoder(AnyEvent)


def decode_event_json(line: bytes | str) -> ConsoleEvent | None:
    """A JSON Lines event decoded straight into its class, as `decode_event` does msgpack:
    None for anything it is not sure of (then ``json.loads`` and `parse_event`)."""
    try:
        event: ConsoleEvent = _JSON_DECODER.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return event if _sure(event) else None


def decode_event(data: bytes) -> ConsoleEvent | None:
    """The event of a msgpack message, decoded straight into its class (6x faster than
    decoding to a dict and `parse_event`); None for anything it is not sure of: then decode the
    message (``hub.wire.codec.unpack``, which bounds its size first; so must the caller before this)
    and `parse_event` it, which accepts it alike or refuses it with its exact message. It
    accepts nothing `parse_event` refuses (tests/test_console_events_golden.py)."""
    try:
        event: ConsoleEvent = _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return event if _sure(event) else None


def _sure(event: ConsoleEvent) -> bool:
    """The checks of protocol v1 that the types do not hold (False: the full check decides)."""
    ts, seats = event.ts, event.seats
    if ts is not None and not -MAX_INT < ts < MAX_INT:  # NaN, inf; ints out of range (as float)
        return False
    if seats is not None and any(a >= b for a, b in pairwise(seats)):
        return False  # unsorted or twice: parse_event sorts them or names the fault
    return type(event) is not Result or _plain_result(event)


def _plain_result(event: Result) -> bool:
    """A well-formed result: a draw naming nothing else, or a win with seat, fan and exactly
    one of discarder and self_draw."""
    if event.draw:
        return (
            event.seat is None
            and event.fan is None
            and event.discarder is None
            and (event.self_draw is None)
        )
    if event.seat is None or event.fan is None:
        return False
    return (event.discarder is None) != (event.self_draw is None)
