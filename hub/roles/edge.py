"""An edge process: holds websocket clients, follows the ingest through the bus (DESIGN §2).

It subscribes to the feed channel once and forwards each frame's bytes, as the ingest encoded
them, to the subscribed clients: it never decodes or re-encodes a payload (only a REST read
decodes one). It starts from the snapshot hash, after asking the ingest to bring the hash up to
date. A frame that skips a seq (pub/sub is lossy) makes it ask the ingest for that topic's
snapshot, reload it from the hash and send clients the snapshot: clients never see a gap. A
topic it never saw (one the writer makes only when asked: the live travellers) is asked for
by name before a subscriber or a REST read is answered, again every second while no writer
answers.

Operator commands go to the ingest on the control channel with a request id; the ingest answers
on this edge's reply channel, and the operator gets that answer (or a clear error when no ingest
answers). An edge needs no deck key: cards reach it only inside the payloads of started deals.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from pathlib import Path
from typing import Any

from hub.bus import Bus, open_bus
from hub.bus.base import Subscription
from hub.bus.protocols import PubSubHashes
from hub.domain.numbers import find_bad_number
from hub.metrics import Metrics
from hub.roles.console_relay import ConsoleRelay
from hub.serve.auth import Auth
from hub.serve.edge_feed import EdgeFeed, load_snapshots
from hub.serve.fanout import Fanout
from hub.serve.feed import HISTORY, FeedMessage, FeedReader, Frame, snapshot_field
from hub.serve.http import create_app, serve
from hub.serve.limits import Limits
from hub.tasks import cancel_and_wait
from hub.wire.channels import Channels
from hub.wire.codec import CodecError, pack, unpack_map
from hub.wire.topics import TopicKey, TopicSpace

__all__ = ["EdgeSource", "run_edge"]

log = logging.getLogger(__name__)

ANSWER_TIMEOUT = 3.0
"""Seconds an edge waits for the ingest to answer an operator command or snapshot request."""
SYNC_INTERVAL = 1.0
"""Seconds between an edge's requests for the writer's snapshots while none has answered."""
ASKING_MAX = 4096
"""The most topics an edge asks the writer for at once (those it never saw that subscribers
want); more wait for a later subscribe."""


class EdgeSource:
    """A ``FeedSource`` fed by the bus instead of an engine."""

    def __init__(
        self,
        bus: PubSubHashes,
        tournament: str,
        *,
        topics: TopicSpace | None = None,
        limits: Limits | None = None,
        heal_attempts: int = 5,
        heal_delay: float = 0.05,
        answer_timeout: float = ANSWER_TIMEOUT,
    ) -> None:
        self.bus = bus
        self.tournament = tournament
        self.topics = topics
        self.names = Channels(tournament)
        # live once the writer's snapshots are read: before, "no data yet" is not ours to say
        self.store = EdgeFeed(live=False, on_behind=self._behind, on_unknown=self._unknown)
        self.fanout = Fanout(self.store, limits)
        self.store.on_taken = self.fanout.publish  # a frame taken goes on to the clients
        self.consoles = ConsoleRelay(bus, tournament)  # the web consoles' events and answers
        self.gaps = 0  # frames that revealed a gap
        self.malformed = 0  # feed messages that were not frames
        self._reader = FeedReader()  # (puts the parts of a big delta together)
        self.id = uuid.uuid4().hex[:12]
        self._heal_attempts = heal_attempts
        self._heal_delay = heal_delay
        self._answer_timeout = answer_timeout
        self._subscription: Subscription | None = None
        self._replies: Subscription | None = None
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._refreshing: set[TopicKey] = set()
        self._refreshed: dict[TopicKey, int] = {}  # the seq each topic last asked a refresh at
        # Topics never seen that subscribers or REST reads asked for, each with the futures of
        # the reads waiting for the writer's answer; the task that asks for them.
        self._asking: dict[TopicKey, list[asyncio.Future[None]]] = {}
        self._asker: asyncio.Task[None] | None = None
        # Topics whose snapshot is being read from the hash after the feed's notice, each with
        # the feed's messages of it that came meanwhile (applied after it, in order).
        self._fetching: dict[TopicKey, list[FeedMessage]] = {}
        self._fetchers: set[asyncio.Task[None]] = set()

    def ready(self) -> bool:
        """In sync with a writer (its snapshots read: ``store.live``) and following the feed
        and the replies (their readers running). The catch-up task that waits for a writer
        at the start ends once one answered: that is no reason to be unready (it was, and
        an edge beside a separate feed answered 503 for ever after its first second: issue
        #30 item 2)."""
        followers = self._tasks[:2]  # the replies' reader, the feed's reader
        return self.store.live and len(followers) == 2 and not any(t.done() for t in followers)

    def check_topic(self, role: str, topic: object, table: int | None = None) -> str | None:
        """Why ``role`` may not subscribe to ``topic`` (a topic outside the tournament is
        unknown), or None (``table``: a console's own)."""
        if self.topics is None:
            from hub.serve.auth import check_topic

            return check_topic(role, topic, table)
        return self.topics.check(role, topic, table)

    async def start(self) -> None:
        """Subscribe first, then have the ingest bring the snapshot hash up to date and read
        it: a frame published in between is either in the snapshot (ignored by seq) or
        arrives after it."""
        self._subscription = self.bus.subscribe(self.names.feed)
        await self._subscription.ready()
        self._replies = self.bus.subscribe(self.names.reply(self.id))
        await self._replies.ready()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._read_replies(), name="edge-replies"),
        ]
        answer = await self.request({"op": "snapshots"})  # "unavailable" when no writer runs
        await self._load(None)
        self.store.live = bool(answer.get("ok"))
        self._tasks.append(loop.create_task(self._consume(), name="edge-feed"))
        if not self.store.live:
            self._tasks.append(loop.create_task(self._sync(), name="edge-sync"))

    async def _sync(self) -> None:
        """Until a writer answers: what the snapshot hash held is served as the last good
        state, nothing more (no empty snapshot for a topic it lacks, 503 over REST); then
        every topic is read again and the store is live."""
        while True:
            await asyncio.sleep(SYNC_INTERVAL)
            answer = await self.request({"op": "snapshots"})
            if answer.get("ok"):
                await self._load(None)
                self.store.live = True
                # Every subscriber afresh: one to a topic with no data was sent nothing
                # while no writer could say so (``catch_up``), and would wait for ever
                # (a phone on the site's deal page before the deal's release).
                self.fanout.refresh()
                log.info("edge in sync with the writer of %s", self.tournament)
                return

    def _behind(self, key: TopicKey) -> None:
        """A client resumed ahead of this edge's copy of ``key``: fetch the writer's."""
        if key not in self._refreshing and self._tasks:
            self._refreshing.add(key)
            asyncio.get_running_loop().create_task(self._refresh(key))

    def _unknown(self, key: TopicKey) -> asyncio.Future[None] | None:
        """A subscriber or a REST read wants ``key``, which this edge never saw: ask the
        writer (with the other topics asked for meanwhile); the future is done once it
        answered (or the edge stopped)."""
        if not self._tasks:  # not started, or stopped
            return None
        if key not in self._asking and len(self._asking) >= ASKING_MAX:
            return None  # (a name any client may choose, on an edge given no topics: bounded)
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        self._asking.setdefault(key, []).append(done)
        if self._asker is None or self._asker.done():
            self._asker = loop.create_task(self._ask(), name="edge-ask")
        return done

    async def _ask(self) -> None:
        """Ask the writer for the topics in ``_asking`` (one request for all that are asked
        for in this turn of the loop) and load what the hash then holds; a topic it has no
        data of gets the empty snapshot at seq 0 (what the writer's store answers). The reads
        waiting are let go after each request (a REST read of a topic still unknown is
        answered 503); while no writer answers, what the hash holds is served and the rest
        asked for again every ``SYNC_INTERVAL``."""
        try:
            while self._asking:
                await asyncio.sleep(0)  # (the other subscriptions of this message)
                keys = list(self._asking)
                wanted = [snapshot_field(k) for k in keys]
                answered = bool((await self.request({"op": "snapshots", "keys": wanted})).get("ok"))
                await self._load(set(keys))
                for key in keys:
                    if answered and self.store.empty(key):
                        self.fanout.publish(key, Frame.snapshot(key[1], 0, {}).outs)
                    waiting = self._asking.pop(key, [])
                    if not answered and self.store.unknown(key):
                        self._asking[key] = []  # asked for again
                    for done in waiting:
                        if not done.done():
                            done.set_result(None)
                if not answered:
                    await asyncio.sleep(SYNC_INTERVAL)
        finally:
            if self._asker is asyncio.current_task():
                self._asker = None

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []
        await cancel_and_wait(list(self._fetchers))
        if self._asker is not None:
            await cancel_and_wait([self._asker])
        for waiting in self._asking.values():
            for done in waiting:
                done.cancel()
        self._asking.clear()
        await self.consoles.stop()
        for sub in (self._subscription, self._replies):
            if sub is not None:
                with contextlib.suppress(Exception):
                    await sub.aclose()
        for waiter in self._waiting.values():
            waiter.cancel()

    async def _load(self, keys: set[TopicKey] | None) -> None:
        """Seed topics (all, or ``keys``) from the snapshot hash; clients get what is newer."""
        for key, frame in (await self._snapshots(keys)).items():
            if self.store.seed(key, frame):
                self.fanout.publish(key, frame.outs)

    async def _snapshots(self, keys: set[TopicKey] | None) -> dict[TopicKey, Frame]:
        """The snapshot hash's frames: all of them, or only ``keys``'s fields (a refresh or a
        heal reads one topic, not every topic's snapshot)."""
        topics = self.names.topics
        if keys is None:
            return load_snapshots(await self.bus.hgetall(topics))
        found = load_snapshots(await self.bus.hmget(topics, [snapshot_field(k) for k in keys]))
        return {key: frame for key, frame in found.items() if key in keys}

    async def _consume(self) -> None:
        assert self._subscription is not None
        async for message in self._subscription:
            try:
                feed = self._reader.read(message.data)
            except CodecError as exc:
                self.malformed += 1
                log.warning("ignoring a malformed feed message: %s", exc)
                continue
            if feed is None:  # a part of a frame
                continue
            held = self._fetching.get(feed.key)
            if held is not None:  # (its snapshot being read from the hash: after it)
                held.append(feed)
            elif feed.stored:
                self._fetching[feed.key] = []
                fetcher = asyncio.get_running_loop().create_task(self._fetch_held(feed))
                self._fetchers.add(fetcher)
                fetcher.add_done_callback(self._fetchers.discard)
            else:
                await self._take(feed)

    async def _take(self, feed: FeedMessage) -> None:
        try:
            if feed.stored:
                await self.fetch(feed.key, feed.frame.seq)
            else:
                await self.receive(feed.key, feed.frame)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("failed to apply feed frame %s seq %d", feed.key, feed.frame.seq)

    async def _fetch_held(self, notice: FeedMessage) -> None:
        """A notice's snapshot read from the hash, then the feed's messages of its topic that
        came meanwhile, in order; the feed's other topics go on meanwhile (a multi-MB
        snapshot's read held every topic's frames behind it: issue #31's tail at 480 tables)."""
        held = self._fetching[notice.key]
        try:
            await self._take(notice)
            while held:
                await self._take(held.pop(0))
        finally:
            del self._fetching[notice.key]

    async def receive(self, key: TopicKey, frame: Frame) -> None:
        """Apply one frame from the feed: the store hands it on to the fan-out (or heal the
        gap it reveals)."""
        applied = self.store.apply(key, frame)
        if applied is None:
            return  # already in the snapshot we started from
        if applied:
            if self.store.behind(key) > HISTORY // 2 and self._may_refresh(key, frame.seq):
                # Keep the snapshot new subscribers start from close to the head.
                self._refreshing.add(key)
                asyncio.get_running_loop().create_task(self._refresh(key))
            return
        self.gaps += 1
        await self._heal(key, frame)

    async def fetch(self, key: TopicKey, seq: int) -> None:
        """The feed's notice of a snapshot too big for it: read it from the snapshot hash,
        where the writer put it first (a later one is as good), and send it to clients; if
        the hash has none that recent, the writer is asked for it (as a gap is healed)."""
        if seq <= self.store.seq(key):
            return
        found = (await self._snapshots({key})).get(key)
        if found is None or found.seq < seq:
            self.gaps += 1
            await self.request({"op": "snapshots", "keys": [snapshot_field(key)]})
            found = (await self._snapshots({key})).get(key)
        if found is not None and self.store.seed(key, found):
            self.fanout.publish(key, found.outs)

    def _may_refresh(self, key: TopicKey, seq: int) -> bool:
        """One refresh of a topic at a time, and the next only ``HISTORY // 4`` frames later:
        a hash that answers behind the edge does not make it ask at every frame."""
        if key in self._refreshing or seq < self._refreshed.get(key, 0) + HISTORY // 4:
            return False
        self._refreshed[key] = seq
        return True

    async def _refresh(self, key: TopicKey) -> None:
        try:
            await self.request({"op": "snapshots", "keys": [snapshot_field(key)]})
            await self._load({key})
        except Exception as exc:
            log.info("could not refresh the snapshot of %s: %s", key, exc)
        finally:
            self._refreshing.discard(key)

    async def _heal(self, key: TopicKey, frame: Frame) -> None:
        """Have the ingest persist the topic's snapshot, reload it from the hash (retrying
        briefly while the hash lags the feed), send it to clients, then apply ``frame`` if it
        follows."""
        await self.request({"op": "snapshots", "keys": [snapshot_field(key)]})
        for attempt in range(self._heal_attempts):
            found = (await self._snapshots({key})).get(key)
            if found is not None and found.seq >= frame.seq - 1:
                if self.store.seed(key, found):
                    self.fanout.publish(key, found.outs)
                break
            if attempt + 1 < self._heal_attempts:
                await asyncio.sleep(self._heal_delay)
        # taken: the store hands it on to the fan-out
        taken = frame.seq == self.store.seq(key) + 1 and self.store.apply(key, frame)
        if not taken and frame.seq > self.store.seq(key):
            log.warning(
                "topic %s: snapshot hash at seq %d lags frame %d",
                key,
                self.store.seq(key),
                frame.seq,
            )

    # -- asking the ingest --

    async def request(self, command: dict[str, Any]) -> dict[str, Any]:
        """Send a command to the ingest and wait for its answer (``{"ok": ...}``); never
        raises but for cancellation: no ingest, no answer or no bus is an ``unavailable``
        answer."""
        rid = uuid.uuid4().hex
        try:
            message = pack({**command, "id": rid, "reply": self.id})
        except CodecError as exc:  # the command's fault, not the bus's
            return _refused("bad_request", str(exc))
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = waiter
        try:
            receivers = await self.bus.publish(self.names.control, message)
            if receivers == 0:
                return _unavailable("no ingest is running for this tournament")
            return await asyncio.wait_for(waiter, self._answer_timeout)
        except TimeoutError:
            return _unavailable(f"the ingest did not answer within {self._answer_timeout:g} s")
        except Exception as exc:
            return _unavailable(f"bus unavailable: {exc}")
        finally:
            self._waiting.pop(rid, None)

    async def _read_replies(self) -> None:
        assert self._replies is not None
        async for message in self._replies:
            answer = unpack_map(message.data)
            if answer is None:
                continue
            waiter = self._waiting.get(str(answer.get("id")))
            if waiter is not None and not waiter.done():
                answer.pop("id", None)
                waiter.set_result(answer)

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        """An operator command, executed by the ingest: its answer, or why there is none. A
        number the ingest would refuse (NaN, an infinity, an integer msgpack cannot carry) is
        refused here, as the ingest would: it is the command that is wrong, not the ingest
        that is unavailable."""
        found = find_bad_number(command)
        if found is not None:
            return _refused("bad_request", f"field '{found[0]}': {found[1]}")
        return await self.request(command)


def _unavailable(message: str) -> dict[str, Any]:
    return _refused("unavailable", message)


def _refused(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "code": code, "error": message}


async def run_edge(
    bus: Bus | str | None,
    tournament: str,
    *,
    topics: TopicSpace | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    overlays_dir: str | Path | None = None,
    auth: Auth | None = None,
    metrics: Metrics | None = None,
) -> None:
    """Run an edge until the server stops (SIGINT/SIGTERM or cancellation)."""
    owned = not isinstance(bus, Bus)
    the_bus = open_bus(bus) if not isinstance(bus, Bus) else bus
    if owned:
        await the_bus.connect()
    try:
        source = EdgeSource(the_bus, tournament, topics=topics)
        app = create_app(source, overlays_dir=overlays_dir, auth=auth, metrics=metrics)
        running = await serve(app, host, port)
        log.info("edge for %s listening on %s", tournament, running.url)
        try:
            await running.task
        finally:
            await running.stop()
    finally:
        if owned:
            await the_bus.close()
