"""Console events (protocol v1): the schema check that stands between the wire and the core.

A console event arrives as msgpack bytes, a JSON Lines row or a plain mapping; every form goes
through the same msgspec Structs (``hub.domain.console_event`` and each game's own, the union
of every game's in the registry). `decode_event` (`decode_event_json`) decodes well-formed bytes
straight into the event's class; `parse_event` converts a mapping into the same class or
refuses it with `bad_schema` naming the fault, so nothing malformed reaches the tournament.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Union

import msgspec

from hub.domain.console_event import MAX_INT as MAX_INT  # re-exported: bounds seqs
from hub.domain.console_event import OPERATOR_CONSOLE as OPERATOR_CONSOLE  # re-exported
from hub.domain.console_event import ConsoleEvent as ConsoleEvent  # re-exported
from hub.domain.console_event import Layout, layout_of, refusal
from hub.domain.games.registry import EVENT_CLASSES, EVENT_HANDLERS, on_events

# Built from the registry, and again when a game is added (`registry.on_events`).
EVENT_TYPES: set[str] = set()
ACTION_TYPES: set[str] = set()
# Dealer errors a table reports (hub.domain.dealing.redeal says which card replaced which).
DEALER_ERRORS: set[str] = set()
AnyEvent: Any = None
_DECODER: msgspec.msgpack.Decoder[ConsoleEvent]
_JSON_DECODER: msgspec.json.Decoder[ConsoleEvent]
_LAYOUT: Layout


def _build() -> None:
    global AnyEvent, _DECODER, _JSON_DECODER, _LAYOUT
    for names, hows in ((ACTION_TYPES, ("action",)), (DEALER_ERRORS, ("exposed", "early"))):
        names.clear()
        names.update(k for k, how in EVENT_HANDLERS.items() if how in hows)
    EVENT_TYPES.clear()
    EVENT_TYPES.update(EVENT_CLASSES)
    AnyEvent = Union[tuple(EVENT_CLASSES.values())]  # type: ignore[valid-type]  # noqa: UP007
    _DECODER = msgspec.msgpack.Decoder(AnyEvent)
    _JSON_DECODER = msgspec.json.Decoder(AnyEvent)
    _LAYOUT = layout_of(EVENT_CLASSES)


on_events(_build)
_Invalid = msgspec.ValidationError


def parse_event(raw: Any) -> ConsoleEvent:
    """Check one decoded event against protocol v1; raises `Rejection('bad_schema', ...)`."""
    if type(raw) is dict:
        event = _convert(raw)
        if event is not None:
            return event
    elif isinstance(raw, ConsoleEvent):  # decoded straight from bytes (`decode_event`)
        return raw
    elif isinstance(raw, Mapping):
        raw = dict(raw)
        event = _convert(raw)
        if event is not None:
            return event
    raise refusal(raw, _LAYOUT)


def _convert(raw: dict[Any, Any]) -> ConsoleEvent | None:
    """The event of a mapping msgspec takes (a field given as None is not given, as protocol
    v1 reads it); None for one it refuses."""
    kind = raw.get("type")
    cls = EVENT_CLASSES.get(kind) if type(kind) is str else None
    if cls is None:
        return None
    try:  # (a Struct: msgspec keeps its compiled checks, not a union's)
        return msgspec.convert(raw, cls, strict=True)
    except _Invalid:
        if None not in raw.values():
            return None
    try:
        return msgspec.convert({k: v for k, v in raw.items() if v is not None}, cls, strict=True)
    except _Invalid:
        return None


def decode_event_json(line: bytes | str) -> ConsoleEvent | None:
    """A JSON Lines event decoded straight into its class, as `decode_event` does msgpack:
    None for anything else (then ``json.loads`` and `parse_event`, which names the fault)."""
    try:
        event: ConsoleEvent = _JSON_DECODER.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return event


def decode_event(data: bytes) -> ConsoleEvent | None:
    """The event of a msgpack message, decoded straight into its class (6x faster than
    decoding to a dict and `parse_event`); None for anything else: then decode the message
    (``hub.wire.codec.unpack``, which bounds its size first; so must the caller before this)
    and `parse_event` it, which names the fault (tests/test_console_events_golden.py)."""
    try:
        event: ConsoleEvent = _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return event
