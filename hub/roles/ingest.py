"""Ingest: console channels in, journal and acknowledgements and feed updates out.

Order of effects for one event (what makes delivery at-least-once and the effect exactly-once):
1. the engine validates and applies it in memory (a refusal changes nothing);
2. an accepted event is appended to the journal stream, and so is a refusal that used up the
   console's seq (a ``refused`` record: ``hub.engine.refusals``); only then
3. the console gets its acknowledgement, carrying the journal position;
4. topic payloads that changed are diffed and published on the feed channel, by the ingest
   itself (``feed=True``: one process, role ``all`` and the default ``ingest``) or by a projector
   in another process that replays the journal (``feed=False``, ``hub.roles.projector``: the
   ingest's
   core then only decides, journals and answers; it writes what the journal does not hold, the
   refusals and the consoles' links, on ``dup:{t}:notes`` for the projector).
If the process dies between 1 and 2 the event was never acknowledged, so the console resends it
and the rebuilt state (journal replay) never saw it: nothing lost, nothing doubled. Messages are
taken in batches: a burst costs one payload rebuild and one feed update per changed topic.

One writer per tournament: the ingest holds a lease (``dup:{t}:ingest``, ``hub.bus.lease``)
that it renews every third of its time to live, with a fencing token (``dup:{t}:ingest:token``,
one more on every claim of a free lease), and every journal append is fenced by that token
inside Redis. A second
ingest started by mistake (or a standby) waits, not ready, until the lease is free. A lease
that merely ran out (a Redis outage longer than its time to live) is taken back with the same
token, provided no one claimed it since: a lone ingest survives an outage of any length. An
ingest whose token is no longer the latest (someone else claimed the lease: a long pause, a
partition) cannot append any more: it stops and says so (``lost`` is set; ``duplicast serve``
then exits non-zero so its supervisor restarts it into standby). Its unacknowledged events are
resent by the consoles to the new holder.

Every event gets an answer, and a refused one's answer is persisted first so a resend after a
restart is told the same refusal (``hub.roles.ingest_answers``). A batch goes through a
pipeline of stages, each handing it on to the next: decided in memory, the engine held
(``hub.roles.ingest_decide``); journaled, then the engine let go (``hub.roles.ingest_journal``);
answered (``hub.roles.ingest_answers``); then the feed, handed the batch with whether each
console listened, publishing when it is due (``hub.roles.publisher``).

The event epoch (``dup:{t}:epoch``) is written by the first ingest that starts on a Redis (and
database) and kept by every later one: the consoles key their outboxes to it, so an outbox of a
rehearsal on another Redis is never taken for this event's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from hub.bus.base import Bus, Fence, LeaseLost, Message, Subscription
from hub.bus.lease import LeaseHolder
from hub.engine.core import Engine, Outcome
from hub.metrics import Metrics
from hub.roles.engine_store import FIELD as SNAPSHOT_FIELD
from hub.roles.ingest_answers import Answering, Waiting
from hub.roles.ingest_decide import Decider
from hub.roles.ingest_journal import Applying, Journaling, positioned, restore_engine
from hub.roles.intake import TABLE_BUFFER, TABLE_BYTES, TABLE_RATE, FairIntake
from hub.roles.publisher import FeedPublisher
from hub.roles.signed import SignedIntake
from hub.serve.feed import Frame, IngestFeed, TopicKey
from hub.tasks import bounded, cancel_and_wait
from hub.wire import codec
from hub.wire.channels import Channels

log = logging.getLogger("duplicast.ingest")

BATCH = 512
LEASE_TTL = 5.0  # seconds; a successor waits at most this long after a crash
STOP_STEP = 1.0  # seconds; each step of stop() that talks to the bus waits at most this long
ENGINE_SNAPSHOT_EVERY = 10_000  # journal records between two engine snapshots (restart cost)


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
        self.tournament = engine.state.config.id
        self.names = Channels(self.tournament)
        # Held while a batch or command applies and journals (journal order == apply order);
        # the feed publisher takes the engine's changes only once it is let go.
        self.applying = Applying()
        # feed=False: a projector in another process publishes the feed (module docstring)
        self.feed = (
            FeedPublisher(
                bus, engine, store=store, on_frame=on_frame, settled=self.applying.settled
            )
            if feed
            else None
        )
        self.clock = clock
        self.tick_interval = tick_interval
        self.ready = False
        self.ready_once = False  # it served once: persist its snapshots on stop
        self.replayed = 0
        self.epoch = ""  # this Redis's event epoch (``dup:{t}:epoch``), read at start
        self.lease = LeaseHolder(
            bus, self.names.lease, name="ingest", ttl=lease_ttl, log=log, fenced=True
        )
        self.on_lost = on_lost
        self.on_ready = on_ready  # called once the ingest is ready (its store live)
        # The pipeline a batch goes through, each stage handing it on to the next:
        # decide -> journal -> answer (links, notes) -> the feed (module docstring).
        refused: dict[str, int] = {}  # undecodable messages of a batch, by code
        self.answering = Answering(
            self.names, self.metrics, bus=bus, engine=engine, feed=self.feed, refused=refused
        )
        self.journal = Journaling(
            bus,
            self.names,
            engine,
            self.metrics,
            applying=self.applying,
            lease=self.lease,
            then=self.answering.take,
            every=ENGINE_SNAPSHOT_EVERY,
        )
        on_snapshots = self.feed.request if self.feed is not None else None
        # the keys signed web console events and operator commands are checked with (none
        # until ``serve`` gives them: ``Auth.keyring``; then nothing signed is accepted)
        self.signed = SignedIntake(on_refused=self.metrics.signature_refused)
        self.decider = Decider(
            self.names,
            engine,
            on_snapshots=on_snapshots,
            signed=self.signed,
            metrics=self.metrics,
            applying=self.applying,
            then=self.journal.take,
            noting=self.feed is None,
        )
        self.decider.refused = refused
        self.restored_from: str | None = None  # journal position of the snapshot used
        self.timings: dict[str, float] = {}  # seconds of each phase of the last rebuild
        self._tasks: list[asyncio.Task[None]] = []
        self._subs: list[Subscription] = []
        self.intake: FairIntake | None = None  # the consoles' subscriptions, once running
        self._stopping = False

    @property
    def last_position(self) -> str:
        """The journal position the engine stands at (the last record applied)."""
        return self.journal.position

    @last_position.setter
    def last_position(self, position: str) -> None:
        self.journal.position = position

    @property
    def engine_snapshot_every(self) -> int:
        """Journal records between two engine snapshots (restart cost)."""
        return self.journal.every

    @engine_snapshot_every.setter
    def engine_snapshot_every(self, every: int) -> None:
        self.journal.every = every

    # ------------------------------------------------------------------ the lease
    @property
    def owner(self) -> str:
        return self.lease.owner

    @property
    def token(self) -> int:
        """The fencing token of our claim of the lease (0: none)."""
        return self.lease.token

    @property
    def fence(self) -> Fence:
        """What every journal append is checked against (``hub.bus.lease``)."""
        return self.lease.fence

    @property
    def lease_ttl(self) -> float:
        return self.lease.ttl

    @lease_ttl.setter
    def lease_ttl(self, ttl: float) -> None:
        self.lease.ttl = ttl

    @property
    def standby(self) -> bool:
        """Another ingest holds the lease: this one waits for it, not ready."""
        return self.lease.standby

    @property
    def lost(self) -> bool:
        """Another ingest claimed the lease since this one held it: it stopped."""
        return self.lease.lost

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Take the lease and start; if another ingest holds it, wait for it in the background
        (``standby``, not ready) and start once it is free."""
        self._stopping = False
        if await self.lease.claim():
            await self._run()
            return
        log.warning("standby: another ingest holds %s; waiting for it", self.fence.key)
        self._tasks.append(asyncio.create_task(self._wait_for_lease(), name="ingest-standby"))

    async def _wait_for_lease(self) -> None:
        await self.lease.wait()
        await self._run()

    async def _run(self) -> None:
        """Rebuild, then listen: each table's console channel on a subscription of its own,
        read into fair batches (``hub.roles.intake``), and the control channel."""
        tables = sorted(
            {t for group in self.engine.state.config.groups.values() for t in group.tables}
        )
        await self.bus.set(self.names.tables, ",".join(map(str, tables)).encode())
        made = new_epoch().encode()  # after the tables: a console that sees the epoch sees them
        self.epoch = (await self.bus.set_once(self.names.epoch, made)).decode("utf-8", "replace")
        log.info(
            "event epoch %s (%s)", self.epoch, "new" if made == self.epoch.encode() else "kept"
        )
        await self.rebuild()
        consoles = [
            self.bus.subscribe(channel, buffer=TABLE_BUFFER, max_bytes=TABLE_BYTES, rate=TABLE_RATE)
            for t in tables
            for channel in (self.names.console(t), self.names.web(t))
        ]
        control = self.bus.subscribe(self.names.control)
        self._subs += [*consoles, control]
        await asyncio.gather(*(sub.ready() for sub in self._subs))
        self.intake = self.decider.intake = FairIntake(consoles, batch=BATCH)
        self.metrics.watch_intake(self.intake)
        for name, source in (("consoles", self.intake), ("control", control)):
            self._tasks.append(asyncio.create_task(self._process(source), name=f"ingest {name}"))
        self._tasks.append(asyncio.create_task(self._ticker(), name="ingest-release"))
        keeping = self.lease.keep(self._lease_lost)
        self._tasks.append(asyncio.create_task(keeping, name="ingest-lease"))
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
            if self.journal.since:
                await bounded(self.save_engine(), STOP_STEP, "saving the engine snapshot")
        if subs:
            closing = asyncio.gather(*(sub.aclose() for sub in subs), return_exceptions=True)
            await bounded(closing, STOP_STEP, "closing the ingest's subscriptions")
        await self.lease.release(STOP_STEP)

    def _lose_lease(self) -> None:
        """A fenced append was refused: the lease is lost (``_lease_lost``, once)."""
        if self.lease.lose():
            self._lease_lost()

    def _lease_lost(self) -> None:
        """Memory may now be ahead of the journal: stop taking events, tell the process."""
        log.critical(
            "lost the ingest lease %s: another ingest writes the journal now; stopping",
            self.fence.key,
        )
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
        found = await restore_engine(self.bus, self.names, self.engine, self.answering.restore)
        self.replayed += found.replayed
        self.last_position = found.position
        await self._restore_nonces()
        self.restored_from = found.snapshot_at or self.restored_from
        self.timings = found.timings
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

    async def _restore_nonces(self) -> None:
        """The signed commands' nonces journaled within the window (journal ids are times):
        a retry or a replay after a restart is still answered, not applied again."""
        since = int((time.time() - self.signed.window) * 1000)
        after = f"{max(since, 0)}-0"
        while page := await self.bus.read(self.names.journal, after, 1000):
            records = []
            for entry_id, data in page:
                after = entry_id
                with contextlib.suppress(Exception):
                    record = codec.unpack(data)
                    if isinstance(record, dict) and "key" in record:  # a signed command's
                        records.append((entry_id, record))
            self.signed.restore(records)

    async def save_engine(self) -> bool:
        """Persist the engine's snapshot with the journal position it stands at; not when a
        batch was applied but never journaled (an append cut short): the engine is then ahead
        of the journal, and only the journal may say what happened."""
        async with self.applying.lock:
            if self.applying.unjournaled:
                log.warning("no engine snapshot: a batch was applied but not journaled")
                return False
            data = self.journal.snapshot()
        await self.bus.hset(self.names.engine, SNAPSHOT_FIELD, data)
        return True

    # ------------------------------------------------------------------ loops
    async def _process(self, sub: Subscription | FairIntake) -> None:
        """Take what the subscription(s) received, a batch at a time, into the pipeline; its
        last stage publishes the feed when nothing waits, else at most every
        ``FEED_INTERVAL``."""
        while not self._stopping:
            batch = await (sub.take() if isinstance(sub, FairIntake) else sub.take(BATCH))
            if not batch or self._stopping:  # closed; or stopping (the lease lost meanwhile)
                return
            try:
                await self.handle_batch(batch, sub)
            except asyncio.CancelledError:
                raise
            except LeaseLost:
                self._lose_lease()
                return
            except Exception:  # a bug must not take the tournament down
                log.exception("ingest failed on a batch of %d messages", len(batch))
                self.metrics.reject("internal_error")
                continue

    async def _ticker(self) -> None:
        """The clock's changes (a deal released, say), published at once when the ingest is
        idle: no message waits and no batch holds the engine. Else the batch's own feed step
        takes them (``FeedPublisher.follow``): a tick's publish would wait for the engine and
        build the feed between the batch's journal append and its acks, holding the acks
        (issue #31: 0.7-1.6 s at 240-480 tables)."""
        while not self._stopping:
            await asyncio.sleep(self.tick_interval)
            self.engine.tick(self.clock())
            busy = self.applying.lock.locked() or (self.intake is not None and self.intake.pending)
            if self.feed is not None and not busy:
                await self.feed.follow(waiting=False)

    # ------------------------------------------------------------------ messages
    async def handle(self, channel: str, data: bytes) -> None:
        """One message (a batch of one), then the feed."""
        await self.handle_batch([Message(channel, data, time.monotonic())])
        await self._publish()

    @contextlib.asynccontextmanager
    async def _applying(self) -> AsyncIterator[None]:
        """Hold the engine while it applies and journals (journal order == apply order, also
        against operator commands); the feed waits meanwhile (``Applying.settled``)."""
        await self.applying.hold()
        try:
            yield
        finally:
            self.applying.release()

    async def handle_batch(self, batch: Sequence[Message], source: Waiting | None = None) -> None:
        """A burst of messages into the pipeline, in arrival order: the engine held, decided
        (``Decider.take``), journaled in one append and the engine let go (``Journaling``),
        answered: refusals and the consoles' seq high-water marks, then the acks
        (``Answering``); the feed, handed the batch's links, when ``source`` (where the batch
        came from) has nothing waiting or ``FEED_INTERVAL`` passed (``FeedPublisher.take``;
        None: the caller publishes the feed). Each stage hands the batch on; a batch costs a
        few round trips whatever its size; the order of effects per event is unchanged."""
        now = self.clock()
        await self.applying.hold()
        await self.decider.take(batch, now, source)

    async def control(self, command: dict[str, Any]) -> Outcome:
        """An operator command (in-process): validated, journaled, applied. A signed one is
        verified as on the control channel; an unsigned one is taken (this process
        authenticated its client: role ``all``)."""
        async with self._applying():
            self.applying.unjournaled = True
            outcome = self.decider.control(command, self.clock(), trusted=True)
            if outcome.record is not None:
                try:
                    (position,) = await self.journal.append([outcome.record])
                except LeaseLost:
                    self._lose_lease()
                    message = "this ingest lost its lease; retry on the active one"
                    return Outcome(
                        ok=False,
                        ack={"ok": False, "code": "not_ready", "error": message},
                        code="not_ready",
                        message=message,
                    )
                positioned(outcome, position)
                self.journal.since += 1
            self.applying.unjournaled = False
        return outcome

    async def control_now(self, command: dict[str, Any]) -> dict[str, Any]:
        """In-process control (role all): apply and publish at once."""
        outcome = await self.control(command)
        await self._publish()
        return outcome.ack

    # ------------------------------------------------------------------ feed
    async def _publish(self) -> None:
        """The feed of what changed (when this ingest publishes it: ``feed=True``)."""
        if self.feed is not None:
            await self.feed.publish()

    @property
    def store(self) -> IngestFeed | None:
        """The feed's store (None: a projector elsewhere publishes the feed)."""
        return None if self.feed is None else self.feed.store
