"""Ingest: console channels in, journal and acknowledgements and feed updates out.

Order of effects for one event (what makes delivery at-least-once and the effect exactly-once):
1. the engine validates and applies it in memory (a refusal changes nothing);
2. an accepted event is appended to the journal stream, and so is a refusal that used up the
   console's seq (a ``refused`` record: ``hub.engine.refusals``); only then
3. the console gets its acknowledgement, carrying the journal position;
4. topic payloads that changed are diffed and published on the feed channel, by the ingest
   itself (``feed=True``: one process, role ``all`` and the default ``ingest``) or by a projector
   in another process that replays the journal (``feed=False``, ``hub.projector``: the ingest's
   core then only decides, journals and answers; it writes what the journal does not hold, the
   refusals and the consoles' links, on ``dup:{t}:notes`` for the projector).
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

The event epoch (``dup:{t}:epoch``) is written by the first ingest that starts on a Redis (and
database) and kept by every later one: the consoles key their outboxes to it, so an outbox of a
rehearsal on another Redis is never taken for this event's.
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
from hub.bus.base import Bus, Fence, LeaseLost, Message, Subscription
from hub.channels import Channels
from hub.engine.core import Engine, Outcome
from hub.feed import Frame, IngestFeed, TopicKey
from hub.intake import (
    ERROR_LOGS,
    TABLE_BUFFER,
    TABLE_BYTES,
    TABLE_RATE,
    FairIntake,
    PerSecond,
)
from hub.metrics import Metrics
from hub.notes import MAXLEN as NOTES_MAXLEN
from hub.notes import link_notes, refusal_note
from hub.publisher import ControlRequest, FeedPublisher
from hub.tasks import bounded, cancel_and_wait

log = logging.getLogger("duplicast.ingest")

BATCH = 512
LEASE_TTL = 5.0  # seconds; a successor waits at most this long after a crash
STOP_STEP = 1.0  # seconds; each step of stop() that talks to the bus waits at most this long


ENGINE_SNAPSHOT_EVERY = 10_000  # journal records between two engine snapshots (restart cost)
MAX_REFUSALS = 1000  # refusals whose answer is kept per console (older ones: "refused")
NAME_CACHE = 4096  # channel names remembered (per console, per console channel)
FEED_INTERVAL = 0.02
"""Under load (messages waiting after a batch), the feed is published at most this often:
one flush of the projections then covers many batches (a topic touched by every batch is
rebuilt and diffed once, not each time). When nothing waits it is published at once. Acks
are never held back."""


def new_epoch() -> str:
    """An event epoch: when the hub first started on this Redis, and a random part (two
    Redis servers or databases never share one)."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + uuid.uuid4().hex[:12]


class Ingest:
    """The single writer of a tournament: owns the Engine, the journal and the feed seqs."""

    def __init__(
        self,
        bus: Bus,
        engine: Engine,
        *,
        store: IngestFeed | None = None,
        on_frame: Callable[[TopicKey, Frame], None] | None = None,
        clock: Callable[[], float] = time.time,
        tick_interval: float = 0.25,
        metrics: Metrics | None = None,
        lease_ttl: float = LEASE_TTL,
        on_lost: Callable[[], None] | None = None,
        on_ready: Callable[[], None] | None = None,
        feed: bool = True,
    ) -> None:
        self.metrics = metrics or Metrics()
        self.bus = bus
        self.engine = engine
        self.tournament = engine.config.id
        self.names = Channels(self.tournament)
        # feed=False: a projector in another process publishes the feed (module docstring)
        self.feed = FeedPublisher(bus, engine, store=store, on_frame=on_frame) if feed else None
        self.clock = clock
        self.tick_interval = tick_interval
        self.ready = False
        self.ready_once = False  # it served once: persist its snapshots on stop
        self.standby = False
        self.lost = False
        self.replayed = 0
        self.last_position = "0-0"
        self.epoch = ""  # this Redis's event epoch (``dup:{t}:epoch``), read at start
        self.lease_ttl = lease_ttl
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.token = 0  # fencing token of our claim of the lease (0: none)
        self.fence = Fence(self.names.lease, self.owner)
        self.on_lost = on_lost
        self.on_ready = on_ready  # called once the ingest is ready (its store live)
        self._lock = asyncio.Lock()
        self._refusals: dict[str, list[int]] = {}  # console -> seqs whose answer is persisted
        self._since_snapshot = 0  # journal records since the last engine snapshot
        self._unjournaled = False  # a batch was applied but not (yet) journaled
        self.engine_snapshot_every = ENGINE_SNAPSHOT_EVERY
        self.restored_from: str | None = None  # journal position of the snapshot used
        self.timings: dict[str, float] = {}  # seconds of each phase of the last rebuild
        self._tasks: list[asyncio.Task[None]] = []
        self._subs: list[Subscription] = []
        self.intake: FairIntake | None = None  # the consoles' subscriptions, once running
        self._stopping = False
        self._published = 0.0  # monotonic time of the last feed publish under load
        self._control = self.names.control
        self._tables: dict[str, int | None] = {}  # console channel -> its table (table_of)
        self._ack_channels: dict[str, str] = {}  # console -> its ack channel
        self._refused: dict[str, int] = {}  # undecodable messages of this batch, by code
        self._error_logs = PerSecond(ERROR_LOGS)  # per table

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
        self.fence = Fence(self.names.lease, self.owner, token)

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
        """Rebuild, then listen: each table's console channel on a subscription of its own,
        read into fair batches (``hub.intake``), and the control channel."""
        tables = sorted({t for group in self.engine.config.groups.values() for t in group.tables})
        await self.bus.set(self.names.tables, ",".join(map(str, tables)).encode())
        made = new_epoch().encode()  # after the tables: a console that sees the epoch sees them
        self.epoch = (await self.bus.set_once(self.names.epoch, made)).decode("utf-8", "replace")
        log.info(
            "event epoch %s (%s)", self.epoch, "new" if made == self.epoch.encode() else "kept"
        )
        await self.rebuild()
        consoles = [
            self.bus.subscribe(
                self.names.console(t), buffer=TABLE_BUFFER, max_bytes=TABLE_BYTES, rate=TABLE_RATE
            )
            for t in tables
        ]
        control = self.bus.subscribe(self.names.control)
        self._subs += [*consoles, control]
        await asyncio.gather(*(sub.ready() for sub in self._subs))
        self.intake = FairIntake(consoles, batch=BATCH)
        self.metrics.watch_intake(self.intake)
        for name, source in (("consoles", self.intake), ("control", control)):
            self._tasks.append(asyncio.create_task(self._process(source), name=f"ingest {name}"))
        self._tasks.append(asyncio.create_task(self._ticker(), name="ingest-release"))
        self._tasks.append(asyncio.create_task(self._keep_lease(), name="ingest-lease"))
        self.ready = self.ready_once = True
        if self.feed is not None:
            self.feed.serve()
        if self.on_ready is not None:
            self.on_ready()
        log.info("ingest ready for %s after replaying %d records", self.tournament, self.replayed)

    async def stop(self) -> None:
        """Stop within a few seconds whatever the bus does (a Redis that stopped answering
        leaves each step hanging; each is bounded and, if need be, left behind). The lease is
        released when the bus answers in time, else it simply runs out."""
        self.ready = False
        self._stopping = True
        if self.feed is not None:
            self.feed.withdraw()
        await cancel_and_wait(self._tasks, grace=STOP_STEP / 4, attempts=4)
        subs, self._subs = self._subs, []
        self._tasks.clear()
        if self.ready_once and not self.lost and not self.standby:
            if self.feed is not None:
                await bounded(self.feed.save(), STOP_STEP, "saving the topic snapshots")
            if self._since_snapshot:
                await bounded(self.save_engine(), STOP_STEP, "saving the engine snapshot")
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
        if self.feed is not None:
            self.feed.withdraw()
        if self.on_lost is not None:
            self.on_lost()

    async def rebuild(self) -> None:
        """Rebuild the engine: from its latest snapshot, if there is one it can take, and the
        journal after it (else the whole journal); then continue the feed seqs."""
        started = time.perf_counter()
        after = await self._restore_snapshot()
        self.timings = {"snapshot": time.perf_counter() - started}
        while True:
            page = await self.bus.read(self.names.journal, after, 1000)
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
        refusals: dict[tuple[str, int], dict[str, Any]] = {}
        for name, packed in (await self.bus.hgetall(self.names.rejected)).items():
            seq_text, _, console = name.partition(":")
            answer = codec.unpack(packed)
            if seq_text.isdigit() and isinstance(answer, dict):
                refusals[(console, int(seq_text))] = answer
                self._refusals.setdefault(console, []).append(int(seq_text))
        for seqs in self._refusals.values():
            seqs.sort()
        persisted = await self.bus.hgetall(self.names.seqs)
        self.engine.restore_answers(refusals, {k: int(v) for k, v in persisted.items()})
        self.timings["journal"] = time.perf_counter() - started - self.timings["snapshot"]
        self.engine.tick(self.clock())
        if self.feed is not None:
            await self.feed.resume()
            self.engine.start_feed()
            await self._publish()
        self.timings["feed"] = time.perf_counter() - started - sum(self.timings.values())
        log.info(
            "rebuilt in %.2f s: snapshot %.2f s, journal (%d records) %.2f s, feed %.2f s",
            time.perf_counter() - started,
            self.timings["snapshot"],
            self.replayed,
            self.timings["journal"],
            self.timings["feed"],
        )

    async def _restore_snapshot(self) -> str:
        """Take the engine's latest snapshot; the journal position to replay after."""
        found = (await self.bus.hgetall(self.names.engine)).get("snapshot")
        if found is None:
            return "0-0"
        try:
            saved = codec.unpack(found)
            self.engine.restore_snapshot(saved["engine"])
            position = str(saved["position"])
        except (codec.CodecError, ValueError, KeyError, TypeError) as exc:
            log.warning("not using the engine snapshot (%s): replaying the whole journal", exc)
            return "0-0"
        self.restored_from = position
        log.info("engine restored from its snapshot at %s", position)
        return position

    async def save_engine(self) -> bool:
        """Persist the engine's snapshot with the journal position it stands at; not when a
        batch was applied but never journaled (an append cut short): the engine is then ahead
        of the journal, and only the journal may say what happened."""
        async with self._lock:
            if self._unjournaled:
                log.warning("no engine snapshot: a batch was applied but not journaled")
                return False
            data = codec.pack({"position": self.last_position, "engine": self.engine.snapshot()})
            self._since_snapshot = 0
        await self.bus.hset(self.names.engine, "snapshot", data)
        return True

    # ------------------------------------------------------------------ loops
    async def _process(self, sub: Subscription | FairIntake) -> None:
        """Take what the subscription(s) received, a batch at a time; the feed follows each
        batch when nothing waits, else at most every ``FEED_INTERVAL``."""
        while not self._stopping:
            batch = await (sub.take() if isinstance(sub, FairIntake) else sub.take(BATCH))
            if not batch or self._stopping:  # closed; or stopping (the lease lost meanwhile)
                return
            try:
                await self.handle_batch(batch)
            except asyncio.CancelledError:
                raise
            except LeaseLost:
                self._lose_lease()
                return
            except Exception:  # a bug must not take the tournament down
                log.exception("ingest failed on a batch of %d messages", len(batch))
                self.metrics.reject("internal_error")
                continue
            if not sub.pending or time.monotonic() - self._published >= FEED_INTERVAL:
                await self._publish_or_log()
                self._published = time.monotonic()

    async def _ticker(self) -> None:
        while not self._stopping:
            await asyncio.sleep(self.tick_interval)
            self.engine.tick(self.clock())
            await self._publish_or_log()

    async def _publish_or_log(self) -> None:
        """A feed publish that fails (the bus gave up after its retry deadline: a long Redis
        outage) must not end the loop that called it: the journal and the acks carry on."""
        try:
            await self._publish()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("feed publish failed (%s); continuing", exc)

    # ------------------------------------------------------------------ messages
    async def handle(self, channel: str, data: bytes) -> None:
        """One message (a batch of one), then the feed."""
        await self.handle_batch([Message(channel, data, time.monotonic())])
        await self._publish()

    async def handle_batch(self, batch: Sequence[Message]) -> None:
        """Apply a burst of messages in arrival order, journal every accepted record in one
        append, then answer: refusals and the consoles' seq high-water marks, then the acks.
        A batch costs a few round trips whatever its size; the order of effects per event is
        unchanged. Each message's ``arrived`` (monotonic) gives its lag. The feed follows in
        ``_publish``."""
        now = self.clock()
        # (channel, data) of each answer, and the console it answers (None: an error channel)
        answers: list[tuple[str, bytes]] = []
        answered: list[str | None] = []
        seqs: dict[str, bytes] = {}
        refusals: dict[str, bytes] = {}
        forget: dict[str, list[int]] = {}
        replies: list[tuple[str, bytes]] = []
        async with self._lock:  # journal order == apply order, also against operator commands
            self._unjournaled = True  # until the append below returns
            decided: list[tuple[Outcome, Any, str]] = []
            accepted: list[Outcome] = []  # journaled: accepted, or refused using up a seq
            records: list[dict[str, Any]] = []
            notes: list[bytes] = []  # refusals for a projector elsewhere (feed=False)
            decide = self._decide
            for message in batch:
                channel = message.channel
                try:
                    outcome, raw = decide(channel, message.data, now, answers, answered)
                except Exception:  # a bug in one event must not lose the rest of the batch
                    log.exception("ingest failed on a message from %s", channel)
                    self.metrics.reject("internal_error")
                    continue
                if outcome is not None:
                    decided.append((outcome, raw, channel))
                    if outcome.record is not None:
                        accepted.append(outcome)
                        records.append(outcome.record)
                    if outcome.refusal is not None and self.feed is None:
                        notes.append(refusal_note(outcome.refusal))
            positions = await self._journal(records)
            journaled = self.engine.journaled
            for outcome, position in zip(accepted, positions, strict=True):
                journaled(outcome, position)
            self._unjournaled = False
            self._since_snapshot += len(accepted)
            snapshot = None
            if self._since_snapshot >= self.engine_snapshot_every:
                self._since_snapshot = 0
                state = {"position": self.last_position, "engine": self.engine.snapshot()}
                snapshot = codec.pack(state)
        if snapshot is not None:
            await self.bus.hset(self.names.engine, "snapshot", snapshot)
        duplicates = 0  # counted per batch: a labelled counter costs ~2 µs a call
        pack = codec.pack
        ack_channel = self._ack_channel
        for outcome, raw, channel in decided:
            if isinstance(raw, ControlRequest):  # operator commands from an edge: answered there
                reply = raw.answer(self.names, outcome.ack)
                if reply is not None:
                    replies.append(reply)
                continue
            console = outcome.console
            if not outcome.ok or outcome.record is None:  # (accepted ones: counted below)
                if outcome.duplicate:
                    duplicates += 1
                else:
                    self.metrics.event("rejected")
                    self.metrics.reject(outcome.code or "unknown")
                    if outcome.seq_advanced and console is not None:
                        seqs[console] = str(outcome.last_seq).encode()
                        seq = int(outcome.ack["seq"])
                        refusals[f"{seq}:{console}"] = pack(outcome.ack)
                        forget.setdefault(console, []).extend(self._keep_refusal(console, seq))
            if console is not None:
                answers.append((ack_channel(console), pack(outcome.ack)))
                answered.append(console)
            elif not outcome.ok:  # nothing names a console: answer on the table's error channel
                errors = self.names.errors(self.names.table_of(channel))
                answers.append((errors, pack(outcome.ack)))
                answered.append(None)
        accepted_count = sum(1 for outcome in accepted if outcome.ok)
        if accepted_count:
            self.metrics.event("accepted", accepted_count)
        if self._refused:  # undecodable ones, counted per batch (cheap under a flood)
            for code, n in self._refused.items():
                self.metrics.event("rejected", n)
                self.metrics.reject(code, n)
            self._refused.clear()
        if duplicates:
            self.metrics.event("duplicate", duplicates)
        # A refused event's answer and seq are persisted before the answer goes out: a
        # restarted hub expects the next seq and repeats the refusal to a resend. Only the
        # latest MAX_REFUSALS answers per console are kept (a resend is of a recent seq).
        if refusals:
            await self.bus.hset_many(self.names.rejected, refusals)
        old = [f"{seq}:{console}" for console, seqs_ in forget.items() for seq in seqs_]
        if old:
            await self.bus.hdel(self.names.rejected, old)
        if seqs:
            await self.bus.hset_many(self.names.seqs, seqs)
        receivers = await self.bus.publish_many(answers + replies if replies else answers)
        done = time.monotonic()
        self.metrics.ingest_lag(*[done - m.arrived if done > m.arrived else 0.0 for m in batch])
        links = {
            console: n > 0
            for console, n in zip(answered, receivers, strict=False)
            if console is not None
        }
        if links:
            if self.feed is None:
                moved = {c: up for c, up in links.items() if self.engine.links.get(c) != up}
                notes.extend(link_notes(moved))
            self.engine.note_links(links)
        if notes:  # not fenced, not retried: they only inform the operator desk
            try:
                await self.bus.append_many(self.names.notes, notes, maxlen=NOTES_MAXLEN)
            except (asyncio.CancelledError, LeaseLost):
                raise
            except Exception as exc:  # the batch is journaled and answered already
                log.warning("%d note(s) for the projector lost (%s)", len(notes), exc)

    def _ack_channel(self, console: str) -> str:
        """``Channels.ack(console)``, remembered (it is asked for once per event)."""
        channel = self._ack_channels.get(console)
        if channel is None:
            if len(self._ack_channels) >= NAME_CACHE:  # names from the wire: keep it bounded
                self._ack_channels.clear()
            channel = self._ack_channels[console] = self.names.ack(console)
        return channel

    def _keep_refusal(self, console: str, seq: int) -> list[int]:
        """Remember that ``seq``'s answer is persisted; the seqs whose answers to drop."""
        kept = self._refusals.setdefault(console, [])
        kept.append(seq)
        if len(kept) <= MAX_REFUSALS:
            return []
        dropped = kept[:-MAX_REFUSALS]
        del kept[:-MAX_REFUSALS]
        return dropped

    def _decide(
        self,
        channel: str,
        data: bytes,
        now: float,
        answers: list[tuple[str, bytes]],
        answered: list[str | None],
    ) -> tuple[Outcome | None, Any]:
        """Decode and apply one message in memory (no I/O). Undecodable console messages are
        answered on the table's error channel (nothing in them says which console sent them)."""
        if channel == self._control:
            try:
                command = codec.unpack(data)
            except codec.CodecError:
                return None, None
            if not isinstance(command, dict):
                return None, None
            if command.get("op") == "snapshots":  # an edge needs current snapshots
                if self.feed is not None:  # (else the projector answers it)
                    self.feed.request(command)
                return None, None
            request = ControlRequest(command)
            return self.engine.control(command, now), request
        table = self._tables.get(channel, -1)
        if table == -1:  # first message on this channel
            if len(self._tables) >= NAME_CACHE:  # names from the wire: keep it bounded
                self._tables.clear()
            table = self._tables[channel] = self.names.table_of(channel)
        try:  # bounded: one over MAX_EVENT_BYTES is refused on its length, never decoded
            raw = codec.unpack_event(data)
        except codec.CodecError as exc:
            self._undecodable(channel, table, exc, answers, answered)
            return None, None
        return self.engine.submit(raw, now, channel_table=table), raw

    def _undecodable(
        self,
        channel: str,
        table: int | None,
        exc: codec.CodecError,
        answers: list[tuple[str, bytes]],
        answered: list[str | None],
    ) -> None:
        """Refuse a message nothing in which names a console (``too_large``, ``bad_schema``)
        on the table's error channel. Counted per batch; logged at most ``ERROR_LOGS`` times a
        second per table, and while the table floods (``FairIntake.flooding``) answered that
        often too: a flood of garbage then costs a length check or a failed decode per
        message (its answers carry no seq: nothing could be matched to them anyway)."""
        code = "too_large" if isinstance(exc, codec.TooLarge) else "bad_schema"
        self._refused[code] = self._refused.get(code, 0) + 1
        if not self._error_logs.allow(table):
            if self.intake is not None and channel in self.intake.flooding:
                return
        else:
            log.warning("undecodable event on %s: %s", channel, exc)
        error = str(exc) if code == "too_large" else f"not msgpack: {exc}"
        answer = {"seq": None, "ok": False, "code": code, "error": error}
        answers.append((self.names.errors(table), codec.pack(answer)))
        answered.append(None)

    async def control(self, command: dict[str, Any]) -> Outcome:
        """An operator command (in-process): validated, journaled, applied."""
        async with self._lock:
            self._unjournaled = True
            outcome = self.engine.control(command, self.clock())
            if outcome.record is not None:
                try:
                    (position,) = await self._journal([outcome.record])
                except LeaseLost:
                    self._lose_lease()
                    message = "this ingest lost its lease; retry on the active one"
                    return Outcome(
                        ok=False,
                        ack={"ok": False, "code": "not_ready", "error": message},
                        code="not_ready",
                        message=message,
                    )
                self.engine.journaled(outcome, position)
                self._since_snapshot += 1
            self._unjournaled = False
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
                positions = await self.bus.append_many(self.names.journal, packed, fence=self.fence)
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
        await self._publish()
        return outcome.ack

    # ------------------------------------------------------------------ feed
    async def _publish(self) -> None:
        """The feed of what changed (when this ingest publishes it: ``feed=True``)."""
        if self.feed is not None:
            await self.feed.publish(self._lock)

    @property
    def store(self) -> IngestFeed | None:
        """The feed's store (None: a projector elsewhere publishes the feed)."""
        return None if self.feed is None else self.feed.store
