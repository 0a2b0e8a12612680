"""The ingest's side of the journal: read back at start (the rebuild), appended to per batch.

At start the engine is restored from its latest snapshot (``hub.roles.engine_store``) and the
journal after it, then given the persisted refusal answers and seq high-water marks. Each
batch's records are appended in one fenced call, retried until durable: the engine has applied
them already, so giving up would leave memory ahead of the journal.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hub.bus.base import Bus, Fence, LeaseLost
from hub.engine.core import Engine
from hub.metrics import Metrics
from hub.roles.engine_store import UnusableSnapshot, restore_snapshot
from hub.wire import codec
from hub.wire.channels import Channels

__all__ = ["Restored", "append_durably", "restore_engine"]

log = logging.getLogger("duplicast.ingest")

PAGE = 1000  # journal records read at once


@dataclass(slots=True)
class Restored:
    """What a rebuild found: where the journal ends, how much it replayed, how long it took."""

    position: str = "0-0"  # the last journal record applied
    replayed: int = 0  # journal records replayed (after the snapshot, if one was used)
    snapshot_at: str | None = None  # journal position of the snapshot used
    timings: dict[str, float] = field(default_factory=dict)  # seconds: snapshot, journal


async def restore_engine(
    bus: Bus,
    names: Channels,
    engine: Engine,
    refusals: Callable[[Mapping[str, bytes]], dict[tuple[str, int], dict[str, Any]]],
) -> Restored:
    """Restore ``engine`` from the bus; ``refusals`` reads the persisted refusal answers
    (``Answering.restore``)."""
    started = time.perf_counter()
    found = Restored()
    after = found.snapshot_at = await _snapshot(bus, names, engine)
    after = after or "0-0"
    found.timings["snapshot"] = time.perf_counter() - started
    while page := await bus.read(names.journal, after, PAGE):
        for entry_id, data in page:
            engine.restore(codec.unpack(data), position=entry_id)
            found.replayed += 1
            after = entry_id
    found.position = after
    if engine.admission.restore_skipped:
        log.warning(
            "journal holds %d records applied before (same console and seq): skipped",
            engine.admission.restore_skipped,
        )
    answers = refusals(await bus.hgetall(names.rejected))
    persisted = await bus.hgetall(names.seqs)
    engine.restore_answers(answers, {k: int(v) for k, v in persisted.items()})
    found.timings["journal"] = time.perf_counter() - started - found.timings["snapshot"]
    return found


async def _snapshot(bus: Bus, names: Channels, engine: Engine) -> str | None:
    """Take the engine's latest snapshot; the journal position it stands at (None: none)."""
    try:
        position = await restore_snapshot(bus, names, engine)
    except UnusableSnapshot as exc:
        log.warning("not using the engine snapshot (%s): replaying the whole journal", exc)
        return None
    if position is not None:
        log.info("engine restored from its snapshot at %s", position)
    return position


async def append_durably(
    bus: Bus, stream: str, records: list[dict[str, Any]], fence: Fence, metrics: Metrics
) -> list[str]:
    """Append until it is durable; the entry ids. Instead of giving up, the ingest waits for
    the bus to come back (consoles keep their events in their outboxes meanwhile and resend
    them); a lost lease (``LeaseLost``) is raised at once."""
    if not records:
        return []
    packed = [codec.pack(record) for record in records]
    delay = 0.05
    while True:
        try:
            return await bus.append_many(stream, packed, fence=fence)
        except (asyncio.CancelledError, LeaseLost):
            raise
        except Exception as exc:
            log.warning("journal append failed (%s); retrying in %.2f s", exc, delay)
            metrics.reject("journal_retry")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)
