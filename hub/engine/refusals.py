"""Refused events in the journal: the ``refused`` record.

A refused event that used up its console's seq (the console moved on past it) is journaled as
``{"kind": "refused", "console", "seq", "table", "code", "error", "event", "at"}``: the answer
it got and the event as the console sent it. The journal then accounts for every seq of every
console, so a rebuild (`Engine.restore`) knows the seq was answered, and with what, however old
it is, and an export replays exactly: without it the export had a hole at each refused seq and
the replay refused everything that console sent after it as ``seq_gap``. A refusal changed no
state, so restoring one only marks the seq answered.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hub.domain.console_event import ConsoleEvent

REFUSED = "refused"
MAX_EVENT_TEXT = 4096  # characters of an event kept as text when it is not plain JSON data


def refused_record(
    console: str,
    seq: int,
    ack: Mapping[str, Any],
    raw: Any,
    table: int | None,
    now: float,
) -> dict[str, Any]:
    """The journal record of a refusal that used up ``seq``."""
    return {
        "kind": REFUSED,
        "console": console,
        "seq": seq,
        "table": table,
        "code": ack.get("code"),
        "error": ack.get("error"),
        "event": archivable(raw),
        "at": now,
    }


def refusal_answer(record: Mapping[str, Any]) -> dict[str, Any]:
    """The answer a ``refused`` record's event got (what a resend of its seq is told)."""
    return {
        "seq": int(record["seq"]),
        "ok": False,
        "code": record.get("code"),
        "error": record.get("error"),
    }


def archivable(raw: Any) -> Any:
    """The event as JSON data if it is that (the archive is JSON Lines): a checked event (a
    `ConsoleEvent` the hub decoded, then refused) as its journal form; else its text, cut (a
    console can send msgpack that JSON cannot hold: bytes, non-string keys)."""
    if isinstance(raw, ConsoleEvent):
        return raw.as_record()
    try:
        json.dumps(raw, allow_nan=False)
    except (TypeError, ValueError):
        return {"unreadable": repr(raw)[:MAX_EVENT_TEXT]}
    return raw
