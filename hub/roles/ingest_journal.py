"""The ingest's side of the journal: read back at start (the rebuild), appended to per batch.

At start the engine is restored from its latest snapshot (``hub.roles.engine_store``) and the
journal after it, then given the persisted refusal answers and seq high-water marks. Each
batch's records are appended in one fenced call, retried until durable: the engine has applied
them already, so giving up would leave memory ahead of the journal.

``Journaling`` is the journal stage of the ingest's pipeline (decide → journal → answer →
notes and feed): it takes a decided batch from ``hub.roles.ingest_decide``, appends it, writes
each ack's position where the event's answer and its re-acks read it (``Outcome.positions``),
lets go of the engine (``Applying``), saves the engine's snapshot when one is due, and hands the
batch on to the answer stage.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hub.bus.base import Bus, Fence, LeaseLost
from hub.engine.core import Engine
from hub.metrics import Metrics
from hub.roles.engine_store import FIELD as SNAPSHOT_FIELD
from hub.roles.engine_store import UnusableSnapshot, pack_snapshot, restore_snapshot
from hub.roles.ingest_answers import Batch
from hub.wire import codec
from hub.wire.channels import Channels

if TYPE_CHECKING:
    from hub.bus.lease import LeaseHolder
    from hub.engine.outcome import Outcome

__all__ = ["Applying", "Journaling", "Restored", "append_durably", "restore_engine"]

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
    packed = [codec.pack_plain(record) for record in records]
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


class Applying:
    """Journal order == apply order: one batch (or operator command) applies and journals at a
    time. The decide stage takes hold, the journal stage lets go once the batch is appended;
    the feed waits meanwhile (``settled`` is clear) and takes the engine's changes only while
    the engine stands for the journal. ``unjournaled``: a batch was applied but its append did
    not return (the engine is ahead of the journal: no engine snapshot may be taken)."""

    __slots__ = ("lock", "settled", "unjournaled")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.settled = asyncio.Event()
        self.settled.set()
        self.unjournaled = False

    async def hold(self) -> None:
        await self.lock.acquire()
        self.settled.clear()

    def release(self) -> None:
        self.settled.set()
        self.lock.release()


class Journaling:
    """The journal stage (module docstring); keeps where the journal ends (``position``) and
    how many records were appended since the last engine snapshot (``since``)."""

    def __init__(
        self,
        bus: Bus,
        names: Channels,
        engine: Engine,
        metrics: Metrics,
        *,
        applying: Applying,
        lease: LeaseHolder,
        then: Callable[[Batch], Awaitable[None]],
        every: int,
    ) -> None:
        self.bus = bus
        self.names = names
        self._stream = names.journal  # (a property that formats it: asked once a batch)
        self.engine = engine
        self.metrics = metrics
        self.applying = applying
        self.lease = lease  # its fence checks every append
        self.then = then  # the answer stage
        self.every = every  # journal records between two engine snapshots
        self.position = "0-0"  # the last journal record applied
        self.since = 0  # journal records since the last engine snapshot

    async def take(self, batch: Batch) -> None:
        """Append the batch's records in one call, durably, while the decide stage's hold on
        the engine lasts; then the snapshot if due, and the batch to the answer stage. An
        append cut short (lease lost, cancelled) leaves ``unjournaled`` set and raises."""
        accepted = batch.accepted
        try:
            positions = await self.append([o.record for o in accepted if o.record is not None])
            for outcome, position in zip(accepted, positions, strict=True):
                positioned(outcome, position)
            self.applying.unjournaled = False
            snapshot = self.snapshot_due(len(accepted))
        finally:
            self.applying.release()
        if snapshot is not None:
            await self.bus.hset(self.names.engine, SNAPSHOT_FIELD, snapshot)
        await self.then(batch)

    async def append(self, records: list[dict[str, Any]]) -> list[str]:
        """Append until it is durable (``append_durably``); the entry ids."""
        positions = await append_durably(
            self.bus, self._stream, records, self.lease.fence, self.metrics
        )
        if positions:
            self.position = positions[-1]
        return positions

    def snapshot_due(self, journaled: int) -> bytes | None:
        """The engine's snapshot, once ``every`` records were journaled since the last one
        (taken while the engine stands at ``position``)."""
        self.since += journaled
        if self.since < self.every:
            return None
        return self.snapshot()

    def snapshot(self) -> bytes:
        """The engine's snapshot at ``position`` (the count since the last one restarts)."""
        self.since = 0
        return pack_snapshot(self.position, self.engine)


def positioned(outcome: Outcome, position: str) -> None:
    """``outcome.record`` is in the journal at ``position``: its ack carries it, and so does
    any re-ack of its seq (written where the engine's sequencer reads it). A refusal journaled
    keeps its answer."""
    if not outcome.ok:
        return
    outcome.ack["position"] = position
    record = outcome.record or {}
    seq = record.get("seq")
    if outcome.positions is not None and isinstance(seq, int):
        outcome.positions[seq] = position
