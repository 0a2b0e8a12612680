"""The journal back to an event log: `duplicast export --events`.

Every record the ingest journaled, in journal order, as the JSON Lines `duplicast replay` reads,
so any live event can be rescored offline and archived as a plain file. A console event keeps
its fields (``v``, ``tournament``, ``table``, ``console``, ``seq``, ``type``, ...) and gets as
``ts`` the hub's clock when it applied it (the ``at`` of the record: the clock a replay runs
on). A `confirm` from the operator panel stays an event of the ``operator`` console, and an
on-air change becomes ``{"op": "onair", "slot", "value", "ts"}`` (a roster fix ``{"op":
"roster", "team", "player", "was", "name", ..., "ts"}``): `replay` applies them as the operator
commands they were, through the same checks.

A refusal that used up a console's seq is a line of its own,
``{"refused": {"console", "seq", "table", "code", "error"}, "event": <as sent>, "ts"}``: `replay`
marks that seq answered as the hub did (without it, every later event of that console was a
``seq_gap``). The first line, ``{"journal": {"tournament", "epoch", "format"}}``, says every
other line was accepted by the hub unless marked ``refused``: `replay` exits non-zero if it
refuses one.
``ts`` is the hub's clock at full precision (a clock boundary replays on the same side).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from hub.bus.protocols import Journal
from hub.engine.admission import RECORD_META
from hub.engine.refusals import REFUSED
from hub.wire import codec
from hub.wire.channels import Channels

PAGE = 1000  # journal records read per request


FORMAT = 2  # 2: refused records and the header line


def header(tournament: str, epoch: str | None = None) -> dict[str, Any]:
    """The export's first line: what `replay` needs to know the log is a journal, and which
    hub wrote it (its event epoch)."""
    return {"journal": {"tournament": tournament, "epoch": epoch, "format": FORMAT}}


def log_line(record: Mapping[str, Any]) -> dict[str, Any]:
    """One journal record as one event of a replayable log."""
    at = record.get("at")
    if record.get("kind") == REFUSED:
        line: dict[str, Any] = {
            "refused": {k: record.get(k) for k in ("console", "seq", "table", "code", "error")},
            "event": record.get("event"),
        }
    elif record.get("kind") == "control":
        line = {k: v for k, v in record.items() if k not in RECORD_META}
    else:
        line = {k: v for k, v in record.items() if k not in (*RECORD_META, "ts")}
    if isinstance(at, int | float):
        line["ts"] = float(at)
    return line


async def journal_events(bus: Journal, tournament: str) -> AsyncIterator[dict[str, Any]]:
    """The tournament's journal from its first record, as replayable events."""
    stream = Channels(tournament).journal
    after = "0-0"
    while True:
        page = await bus.read(stream, after, PAGE)
        if not page:
            return
        for entry_id, data in page:
            record = codec.unpack(data)
            if isinstance(record, dict):
                yield log_line(record)
            after = entry_id


def dumps(event: Mapping[str, Any]) -> str:
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False)
