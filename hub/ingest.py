"""Ingest: console channels in, journal and acknowledgements and feed updates out.

Order of effects for one event (what makes delivery at-least-once and the effect exactly-once):
1. the engine validates and applies it in memory (a refusal changes nothing);
2. an accepted event is appended to the journal stream; only then
3. the console gets its acknowledgement, carrying the journal position;
4. topic payloads that changed are diffed and published on the feed channel.
If the process dies between 1 and 2 the event was never acknowledged, so the console resends it
and the rebuilt state (journal replay) never saw it: nothing lost, nothing doubled. Messages are
taken in batches: a burst costs one payload rebuild and one feed update per changed topic.

One writer per tournament: the ingest holds a lease (``dup:{t}:ingest``) that it renews every
third of its time to live, with a fencing token (``dup:{t}:ingest:token``, one more on every
claim of a free lease), and every journal append is fenced by that token inside Redis. A second
ingest started by mistake (or a standby) waits, not ready, until the lease is free. A lease
that merely ran out (a Redis outage longer than its time to live) is taken back with the same
token, provided no one claimed it since: a lone ingest survives an outage of any length. An
ingest whose token is no longer the latest (someone else claimed the lease: a long pause, a
partition) cannot append any more: it stops and says so (``lost`` is set; ``duplicast serve``
then exits non-zero so its supervisor restarts it into standby). Its unacknowledged events are
resent by the consoles to the new holder.

Every event gets an answer: on ``dup:{t}:ack:{console}``, or, when nothing in it names a
console (not msgpack, not a map, no console field), on ``dup:{t}:errors:{table}``. A refused
event's answer is persisted (``dup:{t}:rejected``) with the consoles' seq high-water marks
(``dup:{t}:consoles``), so a resend after a restart is told the same refusal.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from hub import codec
from hub.bus.base import Bus, Fence, LeaseLost
from hub.engine.core import Engine, Outcome, TopicKey
from hub.feed import (
    TopicStore,
    control_channel,
    encode_snapshot,
    encode_update,
    feed_channel,
    load_snapshots,
    snapshot_field,
    snapshots_key,
)
from hub.metrics import Metrics
from hub.tasks import bounded, cancel_and_wait

log = logging.getLogger("duplicast.ingest")

BATCH = 512
LEASE_TTL = 5.0  # seconds; a successor waits at most this long after a crash
STOP_STEP = 1.0  # seconds; each step of stop() that talks to the bus waits at most this long


def channels(tournament: str) -> dict[str, str]:
    prefix = f"dup:{tournament}"
    return {
        "console": f"{prefix}:console:*",
        "control": control_channel(tournament),
        "journal": f"{prefix}:journal",
        "feed": feed_channel(tournament),
        "topics": snapshots_key(tournament),
        "consoles": f"{prefix}:consoles",
        "rejected": f"{prefix}:rejected",
        "lease": f"{prefix}:ingest",
        "ack": f"{prefix}:ack:",
        "errors": f"{prefix}:errors:",
    }


class Ingest:
    """The single writer of a tournament: owns the Engine, the journal and the feed seqs."""

    def __init__(
        self,
        bus: Bus,
        engine: Engine,
        *,
        store: TopicStore | None = None,
        on_update: Callable[[Any], None] | None = None,
        clock: Callable[[], float] = time.time,
        tick_interval: float = 0.25,
        metrics: Metrics | None = None,
        lease_ttl: float = LEASE_TTL,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        self.metrics = metrics or Metrics()
        self.bus = bus
        self.engine = engine
        self.tournament = engine.config.id
        self.names = channels(self.tournament)
        self.store = store or TopicStore()
        self.on_update = on_update
        self.clock = clock
        self.tick_interval = tick_interval
        self.ready = False
        self.standby = False
        self.lost = False
        self.replayed = 0
        self.last_position = "0-0"
        self.lease_ttl = lease_ttl
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.token = 0  # fencing token of our claim of the lease (0: none)
        self.fence = Fence(self.names["lease"], self.owner)
        self.on_lost = on_lost
        self._queue: asyncio.Queue[tuple[str, bytes, float]] = asyncio.Queue(maxsize=50_000)
        self._lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        self._subs: list[Any] = []
        self._stopping = False

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Take the lease and start; if another ingest holds it, wait for it in the background
        (``standby``, not ready) and start once it is free."""
        self._stopping = False
        self.lost = False
        token = await self.bus.claim(self.fence.key, self.owner, self.lease_ttl)
        if token:
            self._hold(token)
            await self._run()
            return
        self.standby = True
        log.warning("standby: another ingest holds %s; waiting for it", self.fence.key)
        self._tasks.append(asyncio.create_task(self._wait_for_lease(), name="ingest-standby"))

    def _hold(self, token: int) -> None:
        self.token = token
        self.fence = Fence(self.names["lease"], self.owner, token)

    async def _wait_for_lease(self) -> None:
        while True:
            try:
                token = await self.bus.claim(self.fence.key, self.owner, self.lease_ttl)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: a standby keeps waiting, it does not die
                log.warning("standby could not reach the ingest lease: %s", exc)
                token = 0
            if token:
                break
            await asyncio.sleep(self.lease_ttl / 4)
        self._hold(token)
        self.standby = False
        log.warning("took over %s", self.fence.key)
        await self._run()

    async def _run(self) -> None:
        await self.rebuild()
        for pattern in (self.names["console"], self.names["control"]):
            sub = self.bus.subscribe(pattern)
            await sub.ready()
            self._subs.append(sub)
            self._tasks.append(asyncio.create_task(self._read(sub), name=f"ingest-read {pattern}"))
        self._tasks.append(asyncio.create_task(self._process(), name="ingest-process"))
        self._tasks.append(asyncio.create_task(self._ticker(), name="ingest-release"))
        self._tasks.append(asyncio.create_task(self._keep_lease(), name="ingest-lease"))
        self.ready = True
        log.info("ingest ready for %s after replaying %d records", self.tournament, self.replayed)

    async def stop(self) -> None:
        """Stop within a few seconds whatever the bus does (a Redis that stopped answering
        leaves each step hanging; each is bounded and, if need be, left behind). The lease is
        released when the bus answers in time, else it simply runs out."""
        self.ready = False
        self._stopping = True
        await cancel_and_wait(self._tasks, grace=STOP_STEP / 4, attempts=4)
        subs, self._subs = self._subs, []
        self._tasks.clear()
        if subs:
            closing = asyncio.gather(*(sub.aclose() for sub in subs), return_exceptions=True)
            await bounded(closing, STOP_STEP, "closing the ingest's subscriptions")
        if not self.lost and not self.standby and self.token:
            releasing = self.bus.release(self.fence.key, self.owner)
            await bounded(releasing, STOP_STEP, "releasing the ingest lease")
        self.standby = False

    async def _keep_lease(self) -> None:
        while not self._stopping:
            await asyncio.sleep(self.lease_ttl / 3)
            try:  # renews it, or takes it back with our token if it ran out meanwhile
                held = await self.bus.claim(
                    self.fence.key, self.owner, self.lease_ttl, token=self.token
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the appends are fenced: keep trying, they will tell
                log.warning("could not renew the ingest lease: %s", exc)
                continue
            if held != self.token:  # someone claimed it since: our token is stale
                self._lose_lease()
                return

    def _lose_lease(self) -> None:
        """Memory may now be ahead of the journal: stop taking events, tell the process."""
        if self.lost:
            return
        log.critical(
            "lost the ingest lease %s: another ingest writes the journal now; stopping",
            self.fence.key,
        )
        self.lost = True
        self.ready = False
        self._stopping = True
        if self.on_lost is not None:
            self.on_lost()

    async def rebuild(self) -> None:
        """Replay the journal into the engine, then continue the feed seqs where they were."""
        after = "0-0"
        while True:
            page = await self.bus.read(self.names["journal"], after, 1000)
            if not page:
                break
            for entry_id, data in page:
                record = codec.unpack(data)
                self.engine.restore(record, position=entry_id)
                self.replayed += 1
                after = entry_id
        self.last_position = after
        if self.engine.restore_skipped:
            log.warning(
                "journal holds %d records applied before (same console and seq): skipped",
                self.engine.restore_skipped,
            )
        rejected: dict[tuple[str, int], dict[str, Any]] = {}
        for name, packed in (await self.bus.hgetall(self.names["rejected"])).items():
            seq_text, _, console = name.partition(":")
            answer = codec.unpack(packed)
            if seq_text.isdigit() and isinstance(answer, dict):
                rejected[(console, int(seq_text))] = answer
        self.engine.sequencer.restore_rejected(rejected)
        persisted = await self.bus.hgetall(self.names["consoles"])
        self.engine.sequencer.restore({k: int(v) for k, v in persisted.items()})
        for key, (seq, payload) in (await load_snapshots(self.bus, self.tournament)).items():
            self.store.seed(key, seq, payload)
        self.engine.tick(self.clock())
        await self._publish(set(self.engine.topic_keys()))

    # ------------------------------------------------------------------ loops
    async def _read(self, sub: Any) -> None:
        async for message in sub:
            await self._queue.put((message.channel, message.data, time.monotonic()))

    async def _process(self) -> None:
        while not self._stopping:
            batch = [await self._queue.get()]
            while len(batch) < BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                changed = await self.handle_batch(batch)
            except asyncio.CancelledError:
                raise
            except LeaseLost:
                self._lose_lease()
                return
            except Exception:  # a bug must not take the tournament down
                log.exception("ingest failed on a batch of %d messages", len(batch))
                self.metrics.reject("internal_error")
                continue
            if changed:
                await self._publish_or_log(changed)

    async def _ticker(self) -> None:
        while not self._stopping:
            await asyncio.sleep(self.tick_interval)
            changed = self.engine.tick(self.clock())
            if changed:
                await self._publish_or_log(changed)

    async def _publish_or_log(self, changed: set[TopicKey]) -> None:
        """A feed publish that fails (the bus gave up after its retry deadline: a long Redis
        outage) must not end the loop that called it: the journal and the acks carry on."""
        try:
            await self._publish(changed)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("feed publish failed (%s); continuing", exc)

    # ------------------------------------------------------------------ messages
    async def handle(self, channel: str, data: bytes) -> set[TopicKey]:
        """One message (a batch of one)."""
        return await self.handle_batch([(channel, data, time.monotonic())])

    async def handle_batch(self, batch: Sequence[tuple[str, bytes, float]]) -> set[TopicKey]:
        """Apply a burst of messages in arrival order, journal every accepted record in one
        append, then answer: refusals and the consoles' seq high-water marks, then the acks.
        A batch costs a few round trips whatever its size; the order of effects per event is
        unchanged. Items are (channel, data, monotonic time of arrival)."""
        now = self.clock()
        changed: set[TopicKey] = set()
        # (channel, data, the console it answers; None for an error channel)
        answers: list[tuple[str, bytes, str | None]] = []
        seqs: dict[str, bytes] = {}
        refusals: dict[str, bytes] = {}
        async with self._lock:  # journal order == apply order, also against operator commands
            decided: list[tuple[Outcome, Any, str]] = []
            for channel, data, _ in batch:
                try:
                    outcome, raw = self._decide(channel, data, now, answers)
                except Exception:  # a bug in one event must not lose the rest of the batch
                    log.exception("ingest failed on a message from %s", channel)
                    self.metrics.reject("internal_error")
                    continue
                if outcome is not None:
                    decided.append((outcome, raw, channel))
            records = [o.record for o, _, _ in decided if o.record is not None]
            positions = iter(await self._journal(records))
            for outcome, _, _ in decided:
                if outcome.record is not None:
                    position = next(positions)
                    outcome.ack["position"] = position
                    console, seq = outcome.record.get("console"), outcome.record.get("seq")
                    if isinstance(console, str) and isinstance(seq, int):
                        self.engine.sequencer.set_position(console, seq, position)
        for outcome, raw, channel in decided:
            changed |= outcome.changed
            if raw is _CONTROL:  # operator commands from an edge: journaled, not acked here
                continue
            if outcome.record is not None:
                self.metrics.event("accepted")
            elif outcome.duplicate:
                self.metrics.event("duplicate")
            else:
                self.metrics.event("rejected")
                self.metrics.reject(outcome.code or "unknown")
                if outcome.seq_advanced and outcome.console is not None:
                    last = self.engine.sequencer.last(outcome.console)
                    seqs[outcome.console] = str(last).encode()
                    refusals[f"{outcome.ack['seq']}:{outcome.console}"] = codec.pack(outcome.ack)
            if outcome.console is not None:
                ack_channel = self.names["ack"] + outcome.console
                answers.append((ack_channel, codec.pack(outcome.ack), outcome.console))
            elif not outcome.ok:  # nothing names a console: answer on the table's error channel
                errors = f"{self.names['errors']}{_table_of(channel)}"
                answers.append((errors, codec.pack(outcome.ack), None))
        # A refused event's answer and seq are persisted before the answer goes out: a
        # restarted hub expects the next seq and repeats the refusal to a resend.
        await self.bus.hset_many(self.names["rejected"], refusals)
        await self.bus.hset_many(self.names["consoles"], seqs)
        receivers = await self.bus.publish_many([(c, data) for c, data, _ in answers])
        done = time.monotonic()
        for _, _, arrived in batch:
            self.metrics.ingest_lag(max(0.0, done - arrived))
        links = {
            console: n > 0
            for (_, _, console), n in zip(answers, receivers, strict=True)
            if console is not None
        }
        if links:
            changed |= self.engine.note_links(links)
        return changed

    def _decide(
        self,
        channel: str,
        data: bytes,
        now: float,
        answers: list[tuple[str, bytes, str | None]],
    ) -> tuple[Outcome | None, Any]:
        """Decode and apply one message in memory (no I/O). Undecodable console messages are
        answered on the table's error channel (nothing in them says which console sent them)."""
        if channel == self.names["control"]:
            try:
                command = codec.unpack(data)
            except codec.CodecError:
                return None, None
            if not isinstance(command, dict):
                return None, None
            return self.engine.control(command, now), _CONTROL
        table = _table_of(channel)
        try:
            raw = codec.unpack(data)
        except codec.CodecError as exc:
            self.metrics.event("rejected")
            self.metrics.reject("bad_schema")
            log.warning("undecodable event on %s: %s", channel, exc)
            answer = {
                "seq": None,
                "ok": False,
                "code": "bad_schema",
                "error": f"not msgpack: {exc}",
            }
            answers.append((f"{self.names['errors']}{table}", codec.pack(answer), None))
            return None, None
        return self.engine.submit(raw, now, channel_table=table), raw

    async def control(self, command: dict[str, Any]) -> Outcome:
        """An operator command (from an edge or in-process): validated, journaled, applied."""
        async with self._lock:
            outcome = self.engine.control(command, self.clock())
            if outcome.record is not None:
                try:
                    (outcome.ack["position"],) = await self._journal([outcome.record])
                except LeaseLost:
                    self._lose_lease()
                    message = "this ingest lost its lease; retry on the active one"
                    return Outcome(
                        ok=False,
                        ack={"ok": False, "code": "not_ready", "error": message},
                        code="not_ready",
                        message=message,
                    )
        return outcome

    async def _journal(self, records: list[dict[str, Any]]) -> list[str]:
        """Append until it is durable. The engine has already applied the records, so giving up
        would leave memory ahead of the journal: instead the ingest waits for the bus to come
        back (consoles keep their events in their outboxes meanwhile and resend them)."""
        if not records:
            return []
        packed = [codec.pack(record) for record in records]
        delay = 0.05
        while True:
            try:
                positions = await self.bus.append_many(
                    self.names["journal"], packed, fence=self.fence
                )
            except (asyncio.CancelledError, LeaseLost):
                raise
            except Exception as exc:
                log.warning("journal append failed (%s); retrying in %.2f s", exc, delay)
                self.metrics.reject("journal_retry")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
                continue
            self.last_position = positions[-1]
            return positions

    async def control_now(self, command: dict[str, Any]) -> dict[str, Any]:
        """In-process control (role all): apply and publish at once."""
        outcome = await self.control(command)
        if outcome.changed:
            await self._publish(outcome.changed)
        return outcome.ack

    # ------------------------------------------------------------------ feed
    async def _publish(self, keys: set[TopicKey]) -> None:
        snapshots: dict[str, bytes] = {}
        updates: list[tuple[str, bytes]] = []
        for key in sorted(keys):
            payload = self.engine.payload(key)
            if payload is None:
                continue
            update = self.store.put(key, payload)
            if update is None:
                continue
            seq, data = self.store.snapshot(key)
            snapshots[snapshot_field(key)] = encode_snapshot(seq, data)
            updates.append((self.names["feed"], encode_update(update)))
            if self.on_update is not None:
                self.on_update(update)
        # Snapshots first: an edge that notices a gap reloads them and finds these updates.
        await self.bus.hset_many(self.names["topics"], snapshots)
        await self.bus.publish_many(updates)


_CONTROL = object()  # marks an operator command among a batch's decided outcomes


def _table_of(channel: str) -> int | None:
    tail = channel.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0
