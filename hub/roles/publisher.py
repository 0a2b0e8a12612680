"""The feed's writer: an engine's topic changes out as frames, encoded once, in seq order.

Whoever holds the projecting engine owns one: the ingest itself (role ``all``, ``ingest``
with ``--feed inline``), or a projector that replays the journal in its own process
(``hub.roles.projector``). It publishes every change as a frame on the feed channel, in
messages of at most ``FEED_MESSAGE_LIMIT`` bytes (``hub.serve.feed.feed_messages``), keeps each
topic's seq persisted at most ``SNAPSHOT_EVERY`` deltas behind (what a restart continues
above), and writes snapshots only when someone needs them: edges that start or heal ask on
the control channel (``{"op": "snapshots"}``), a snapshot too big for the channel goes there
instead, and a clean stop saves them all.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from hub.bus.protocols import PubSubHashes
from hub.engine.core import Engine
from hub.engine.families import FEEDS
from hub.serve.feed import SNAPSHOT_EVERY, Frame, IngestFeed, TopicKey, feed_messages
from hub.wire.channels import Channels
from hub.wire.control_request import ControlRequest

__all__ = [
    "FEED_GATHER",
    "FEED_INTERVAL",
    "FEED_SHARE",
    "FEED_SPACING_MAX",
    "Answered",
    "ControlRequest",
    "FeedPublisher",
    "Waiting",
]

log = logging.getLogger("duplicast.ingest")

FEED_INTERVAL = 0.02
"""Under load (messages waiting after a batch), the feed is published at most this often:
one flush of the projections then covers many batches (a topic touched by every batch is
rebuilt and diffed once, not each time). When nothing waits it is published at once. Acks
are never held back."""

FEED_SHARE = 0.25
"""Under load (messages waiting after a batch), the feed's publishes take about this share of
the ingest's time at most: the next one waits the last one's CPU time x (1 / FEED_SHARE - 1)
after it (never less than ``FEED_INTERVAL``, never more than ``FEED_SPACING_MAX``). A flush's
cost grows slower than the events it covers (a topic moved by many events is rebuilt and
diffed once, and goes out as one frame): at 60 tables, 400 events a flush cost 104 µs an event,
100 events 176, 20 events 269 (``bench/projection_bench.py --publish --every N``). So when
the ingest falls behind its publishes cover more events each and cost less per event, and the
edges and their clients get fewer frames (issue #31). When nothing waits, nothing changes."""

FEED_SPACING_MAX = 0.25
"""The longest the feed waits between two publishes under load (seconds)."""

FEED_GATHER = 0.004
"""When nothing waits but the feed went out less than ``FEED_INTERVAL`` ago (events coming one
by one, close together: 60 tables at one event a second each), the feed is published this
long after the batch rather than at once, so that one flush of the projections (one pass of
the movers, one publish) covers the events that arrive meanwhile (issue #31). The first
event after a quiet spell is published at once; acks are never held back."""


class Waiting(Protocol):
    """Where a batch came from, as the feed stage asks it: does more wait (``pending``)."""

    @property
    def pending(self) -> int: ...


class Answered(Protocol):
    """An answered batch, as the feed stage takes it (``hub.roles.ingest_answers.Batch``):
    whether each console it answered listened, and where it came from (None: its caller
    publishes the feed)."""

    @property
    def links(self) -> Mapping[str, bool]: ...
    @property
    def source(self) -> Waiting | None: ...


class FeedPublisher:
    """Frames out of one engine's changes (see the module docstring)."""

    def __init__(
        self,
        bus: PubSubHashes,
        engine: Engine,
        *,
        store: IngestFeed | None = None,
        on_frame: Callable[[TopicKey, Frame], None] | None = None,
        settled: asyncio.Event | None = None,
    ) -> None:
        self.bus = bus
        # Set while the engine stands for the journal (the ingest clears it while a batch it
        # applied is being journaled): changes are only taken then, never a state that is
        # ahead of the journal. None: every change is journaled already (a projector).
        self.settled = settled
        self.names = Channels(engine.state.config.id)
        self._feed = self.names.feed  # (a property that formats it: asked once a publish)
        self.store = store or IngestFeed()
        self.on_frame = on_frame
        self._lock = asyncio.Lock()  # feed messages go out in seq order
        self._requests: list[ControlRequest] = []
        self._published = 0.0  # monotonic time of the last publish after a batch
        self._cost = 0.0  # the CPU seconds of that publish (``spacing``)
        self._gathering: asyncio.Task[None] | None = None  # a publish due in FEED_GATHER
        self._owed = False  # that publish was called off by ``withdraw``
        # The topics the writer before this one made (``resume``): those made on demand are
        # made again by the next publish and go out whole (``Engine.hold``).
        self._held: list[TopicKey] = []
        # The families kept at a cadence (``Family.cadence``): when each may move next (the
        # monotonic clock), and the publish due when the first one left for later may.
        self._cadence = {f.name: f.cadence for f in FEEDS.values() if f.cadence}
        self._next: dict[str, float] = {}
        self._pacing: asyncio.TimerHandle | None = None
        self._paced: asyncio.Task[None] | None = None
        self.use(engine)

    def use(self, engine: Engine) -> None:
        """Publish this engine's changes from now on (a rebuilt or new engine): its feed's
        part (``hub.engine.projecting``), where the engine hands each change, is this
        writer's; the store materializes topics through it."""
        self.engine = engine
        self.projecting = engine.projecting
        self.store.materialize = self.projecting.materialize

    @property
    def caught_up(self) -> bool:
        """Every change handed to the engine's feed part so far was taken by a publish that
        has ended: none waits for a publish under way, for ``FEED_GATHER`` or the spacing
        (what a harness that played events waits for before it reads the hub). The families
        a cadence left for later with moves waiting are ``projecting.waiting``: their
        publish is due within the cadence."""
        return (
            not self.projecting.handed
            and not self._lock.locked()
            and self._gathering is None
            and (self._paced is None or self._paced.done())
        )

    def request(self, command: dict[str, Any]) -> None:
        """An edge asked for snapshots: answered with the next ``publish``."""
        self._requests.append(ControlRequest(command))

    async def resume(self) -> None:
        """After a rebuild: the seqs continue above what was persisted. A crashed writer may
        have published up to SNAPSHOT_EVERY - 1 deltas past a topic's persisted seq: continue
        after all of them, with a snapshot. Until ``serve``, the store serves no client: its
        payloads are not the journal's yet. The topics made on demand that the writer before
        made are made again by the next publish (someone asked for each: its edges' copies
        would otherwise stay as they are, as no event makes one)."""
        self.store.live = False
        self.store.restart()
        self._held = []
        for field, value in (await self.bus.hgetall(self.names.topic_seqs)).items():
            audience, _, topic = field.partition("|")
            if value.isdigit() and topic:
                self.store.seed((audience, topic), int(value) + SNAPSHOT_EVERY)
                self._held.append((audience, topic))

    def serve(self) -> None:
        """The writer is ready: its store stands for the journal; clients may be served."""
        self.store.live = True

    def withdraw(self) -> None:
        """The writer stops or lost its lease: its store no longer stands for the journal."""
        self.store.live = False
        if self._gathering is not None:  # (a clean stop's ``save`` publishes it first)
            self._gathering.cancel()
            self._gathering = None
            self._owed = True
        if self._pacing is not None:  # (what a cadence left for later: ``save`` too)
            self._pacing.cancel()
            self._pacing = None
            self._owed = True
        if self._paced is not None and not self._paced.done():
            self._paced.cancel()
            self._owed = True

    async def take(self, batch: Answered) -> None:
        """The ingest pipeline's feed stage: an answered batch. Whether each console it
        answered listened (``Batch.links``, the ops topic's ``connected``) goes with the
        batch's changes, to the engine's feed part (noted at the next flush, in order); then
        the feed when it is due (``follow``; a batch with no source: its caller publishes)."""
        self.projecting.links(batch.links)
        if batch.source is not None:
            await self.follow(bool(batch.source.pending))

    async def follow(self, waiting: bool) -> None:
        """The feed after a batch (the ingest pipeline's last step) or a tick of an idle
        ingest: when nothing waits, at once after a quiet spell, else ``FEED_GATHER`` later
        (one publish then covers the batches that come meanwhile); when messages wait, at
        most every ``FEED_INTERVAL``; and not while another publish is under way or due (it
        takes the changes once the engine is let go: a batch journaled meanwhile is in it;
        issue #31)."""
        if self._gathering is not None:
            return  # a publish is due within FEED_GATHER: it takes this batch's changes
        since = time.monotonic() - self._published
        if waiting and (self._lock.locked() or since < self.spacing):
            return
        if since < FEED_INTERVAL and not waiting and FEED_GATHER > 0:
            self._gathering = asyncio.get_running_loop().create_task(self._gather())
            return
        await self._publish_timed()

    @property
    def spacing(self) -> float:
        """Seconds between two publishes while messages wait: ``FEED_INTERVAL``, or more when
        the last publish cost more than ``FEED_SHARE`` of that (``FEED_SHARE``)."""
        spaced = self._cost * (1.0 / FEED_SHARE - 1.0)
        return min(FEED_SPACING_MAX, max(FEED_INTERVAL, spaced))

    async def _publish_timed(self) -> None:
        """``publish_logged`` at the families' cadences (``paced``), its CPU time kept
        (``spacing``) and its end (``follow``)."""
        cpu = time.thread_time()
        await self.publish_logged(paced=True)
        self._cost = time.thread_time() - cpu
        self._published = time.monotonic()

    async def _gather(self) -> None:
        """The publish ``follow`` put off by ``FEED_GATHER``."""
        try:
            await asyncio.sleep(FEED_GATHER)
        finally:
            self._gathering = None  # (from here on, a batch's follow may publish or gather)
        await self._publish_timed()

    async def publish_logged(self, *, paced: bool = False) -> None:
        """``publish``; one that fails (the bus gave up after its retry deadline: a long Redis
        outage) is logged and does not end the loop that called it: the journal and the acks
        carry on."""
        try:
            await self.publish(paced=paced)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("feed publish failed (%s); continuing", exc)

    async def publish(self, *, paced: bool = False) -> None:
        """Turn what changed in the engine into frames (encoded once), persist the seqs and
        snapshots that are due, answer snapshot requests, and publish the frames in seq order.
        The changes are the flush of the engine's feed part (``Projecting.flush``: what the
        engine and the answers handed it, noted in order, the documents moved), taken while
        the engine is ``settled`` (never a state half journaled). ``paced`` (the pipeline's
        publishes): the families kept at a cadence move at most once per cadence by actions
        (``Family.cadence``); what they leave goes out in a publish due when they may move."""
        async with self._lock:
            settled = self.settled
            while settled is not None and not settled.is_set():
                await settled.wait()
            if self._held:
                self.engine.hold(self._held)
                self._held = []
            if paced and self._cadence:
                now = time.monotonic()
                nexts = self._next
                changes = self.projecting.flush(frozenset(n for n, t in nexts.items() if t > now))
                self._pace(now)
            else:
                changes = self.projecting.flush()
                if self._cadence:
                    self._pace(time.monotonic())
            frames: list[tuple[str, bytes]] = []
            stored: list[TopicKey] = []  # snapshots too big for the channel: in the hash
            feed, store, on_frame = self._feed, self.store, self.on_frame
            publish = store.publish
            for change in changes:  # (the hot path: ~12 frames an action)
                frame = publish(change)
                if frame is None:
                    continue
                key = change.key
                messages, in_hash = feed_messages(key, frame)
                for message in messages:
                    frames.append((feed, message))
                if in_hash:
                    stored.append(key)
                if on_frame is not None:
                    on_frame(key, frame)
            if store.made:  # (topics made for a reader here since the last publish: rare)
                for key, frame in store.take_made(c.key for c in changes):
                    messages, in_hash = feed_messages(key, frame)
                    frames.extend((feed, m) for m in messages)
                    if in_hash:
                        stored.append(key)
            # Before the frames: a topic is never SNAPSHOT_EVERY deltas ahead of its persisted
            # seq (what a restart continues from).
            # (every topic's: one made outside a publish, for a reader that asked first, is
            # due too: it has no frame in the feed, and its seq is what an edge heals from;
            # reading only the topics this publish moved left an edge without a released
            # deal's public topic: tests/test_site.py)
            due = store.unsaved(at_least=SNAPSHOT_EVERY)
            requests: Sequence[ControlRequest] = self._requests  # (edges' requests: rare)
            asked = stored
            if requests:
                self._requests = []
                named = self.engine.topics_named
                asked = [key for request in requests for key in named(request.keys)] + stored
            else:  # (one that comes while this publish awaits is the next one's)
                requests = ()
            if asked:  # edges start and heal from these (the feed's notices of the stored too)
                await self.bus.hset_many(self.names.topics, store.snapshots(asked))
                due.extend(asked)
            if due:
                await self.bus.hset_many(self.names.topic_seqs, store.seqs(due))
            if requests:
                ok = {"ok": True}
                answers = [a for r in requests if (a := r.answer(self.names, ok)) is not None]
                if answers:
                    await self.bus.publish_many(answers)
            if frames:
                await self.bus.publish_many(frames)

    def _pace(self, now: float) -> None:
        """After a flush: each family kept at a cadence that moved may move again one cadence
        from now; if some were left for later with moves waiting (``waiting``), a publish is
        due when the first of those may move (at 60 tables they then move twice a second, not
        at every action; with nothing waiting, no publish: an idle feed stays idle)."""
        deferred = self.projecting.deferred
        nexts = self._next
        for name, cadence in self._cadence.items():
            if name not in deferred:
                nexts[name] = now + cadence
        waiting = self.projecting.waiting  # (those left that have moves)
        if waiting and self._pacing is None and self.store.live:
            due = min(nexts[name] for name in waiting)
            loop = asyncio.get_running_loop()
            self._pacing = loop.call_at(loop.time() + max(0.0, due - now), self._paced_due)

    def _paced_due(self) -> None:
        """The publish that moves the families a cadence left for later (``_pace``). If the
        paced publish before it is still under way (it left a family that may move sooner
        than its own frames are out: the bus's awaits outlast the gap), this one is due when
        that one ends, not dropped: dropped, what it was to move waited for the next event,
        and after a session's last one for ever."""
        self._pacing = None
        if not self.store.live:
            return
        running = self._paced
        if running is not None and not running.done():
            running.add_done_callback(lambda _: self._paced_due())
            return
        self._paced = asyncio.get_running_loop().create_task(self._publish_timed())

    async def save(self) -> None:
        """On a clean stop: every topic's seq, then its snapshot (what edges that start while
        no writer runs serve); first the publish a stop called off, if the engine stands for
        the journal (the changes of the last ``FEED_GATHER``)."""
        if self._owed and (self.settled is None or self.settled.is_set()):
            self._owed = False
            await self.publish()
        async with self._lock:
            keys = list(self.store.keys())
            await self.bus.hset_many(self.names.topic_seqs, self.store.seqs(keys))
            await self.bus.hset_many(self.names.topics, self.store.snapshots(keys))
