"""A web console's ``event`` op (docs/protocol.md §3): a signed event (``{"op": "event",
"signed": JSON text, "sig": hex}``, ``hub.wire.signing``) checked against what the console's
token binds and handed to the process's relay, which publishes it on the table's web channel
for the ingest to verify (``hub.roles.signed``): an edge never holds a console's signing key,
so it relays events and cannot make one. The hub's answer comes later, as an ``ack`` frame;
what is answered here is only why the event did not leave (``bad_request``: the page must not
send it again as it is; ``unavailable``: it keeps it and sends it again)."""

from __future__ import annotations

from typing import Any, Protocol

from hub.serve.feedclient import Client
from hub.wire.codec import MAX_EVENT_BYTES, CodecError, from_json, pack

__all__ = ["Relay", "completed", "console_event"]


def error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message, **extra}


class Relay(Protocol):
    """What the op needs of ``hub.roles.console_relay.ConsoleRelay``."""

    async def send(self, console: str, table: int, envelope: dict[str, Any]) -> str | None: ...


def completed(seat: Any, tournament: str, event: Any) -> dict[str, Any] | str:
    """The event as its console's channel carries it (``v``, ``tournament``, ``table`` and
    ``console`` filled in), or why it is refused: not a map, another table, console or
    tournament named, too large."""
    if not isinstance(event, dict) or not all(isinstance(k, str) for k in event):
        return "'event' must be a map of field names to values (docs/protocol.md §1.2)"
    mine = {"tournament": tournament, "table": seat.table, "console": seat.console}
    for field, value in mine.items():
        if field in event and event[field] != value:
            return (
                f"this console ({seat.console}, table {seat.table}) writes {field} {value!r}, "
                f"not {event[field]!r}: leave '{field}' out, the hub fills it in"
            )
    full = {"v": 1, **event, **mine}
    try:
        size = len(pack(full))
    except CodecError as exc:
        return f"the event cannot be encoded: {exc}"
    if size > MAX_EVENT_BYTES:
        return f"the event is {size} bytes encoded, over the {MAX_EVENT_BYTES} a console may send"
    return full


async def console_event(
    relay: Relay | None, tournament: str, client: Client, request: dict[str, Any]
) -> dict[str, Any] | None:
    """Act on ``{"op": "event", "event": {...}}``; the error to answer, or None (sent)."""
    seat = client.console
    if seat is None:
        return error("forbidden", "only a table's console sends events (a console token)")
    text, sig = request.get("signed"), request.get("sig")
    if not isinstance(text, str) or not isinstance(sig, str):
        why = "a console event is signed: {'op': 'event', 'signed': its JSON, 'sig': hex}"
        return error("unsigned", why, op="event")
    try:
        event = from_json(text)
    except CodecError as exc:
        return error("bad_request", f"'signed' is not a JSON event: {exc}", op="event")
    seq = event.get("seq") if isinstance(event, dict) else None
    extra = {"seq": seq} if seq is not None else {}
    full = completed(seat, tournament, event)
    if isinstance(full, str):
        return error("bad_request", full, op="event", **extra)
    if full != event:
        why = "a signed event names its own v, tournament, table and console"
        return error("bad_request", why, op="event", **extra)
    if relay is None:
        return error("unavailable", "this server relays no console events", op="event", **extra)
    envelope = {"console": seat.console, "signed": text, "sig": sig}
    problem = await relay.send(seat.console, seat.table, envelope)
    if problem is not None:
        return error("unavailable", problem, op="event", **extra)
    return None
