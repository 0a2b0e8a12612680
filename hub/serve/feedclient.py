"""One fan-out client: its subscriptions, its bounded queue, and how it keeps up or is let go.

The steady state is a client with nothing queued whose socket drains: ``Client.direct`` is its
sink's ``write``, which the fan-out calls once per update with no check per frame; the sink
tells its client when that must stop (``sink_changed``). Anything else goes through a bounded
queue, written in a single ``write``.

What a subscribe (or a stale topic's snapshot) queues first is a *burst*: a bounded number of
frames per topic (``hub.serve.feed.CATCH_UP_DELTAS``), queued whole and never counted against
the queue's limits, since the client could not have read any of it yet (issue #30 item 1).

A client whose socket stops draining keeps a short queue. When the queue overflows, its
queued deltas are dropped and their topics marked *stale*: once the socket drains, the client
gets each stale topic's latest snapshot instead of the backlog (conflation). A client that
overflows repeatedly, or stays stale too long, is closed with ``CLOSE_TOO_SLOW``; it may
reconnect and resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from hub.engine.families import FAMILIES
from hub.serve.limits import Limits
from hub.wire.frames import FORMATS, Outgoing
from hub.wire.topics import TopicKey, key_for

__all__ = ["CLOSE_TOO_SLOW", "CatchUp", "Client", "Registry", "Sink"]

log = logging.getLogger(__name__)

CLOSE_TOO_SLOW = 4008
"""Close code for a client that cannot keep up (reason ``"client too slow"``)."""


@runtime_checkable
class CatchUp(Protocol):
    """Where the fan-out gets what a (re)subscribing client must receive first."""

    def catch_up(self, key: TopicKey, fmt: str, resume: int | None) -> list[Outgoing]:
        """The missed deltas after ``resume`` when they are still known, else the current
        snapshot (possibly followed by later deltas), encoded for ``fmt``."""
        ...


class Registry(Protocol):
    """What a client needs of the fan-out that holds it (``hub.serve.fanout.Fanout``): the store its
    catch-ups come from, the counters it keeps, and the flush that writes it."""

    store: CatchUp
    frames_sent: int
    frames_dropped: int
    slow_closes: int

    def remove(self, client: Client) -> None: ...

    def _mark_dirty(self, client: Client) -> None: ...

    def _settle(self) -> None: ...


# -- sinks: where a client's bytes go ---------------------------------------------------------


class Sink(Protocol):
    """The socket end of one client. ``raw`` sinks take whole frames synchronously."""

    raw: bool

    def is_open(self) -> bool: ...

    def buffered(self) -> int:
        """Bytes written but not yet accepted by the kernel."""
        ...

    def write(self, data: bytes) -> None: ...

    def writer(self) -> Callable[[bytes], None] | None:
        """Where whole frames may be written with no check per frame (the transport's own
        ``write``), or None while the sink cannot take them so (closing, paused by flow
        control, not raw). When this changes, the sink calls its client's ``sink_changed``."""
        ...

    async def send(self, out: Outgoing) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


# -- clients ----------------------------------------------------------------------------------


class Client:
    """One websocket client: role, wire format, subscriptions and a bounded outgoing queue."""

    __slots__ = (
        "_blocked_since",
        "_burst",
        "_burst_bytes",
        "_dirty",
        "_overflows",
        "_queue",
        "_queue_topics",
        "_queued_bytes",
        "_stale_since",
        "_wake",
        "_writer",
        "address",
        "audience",
        "close_code",
        "closed",
        "console",
        "direct",
        "fanout",
        "floors",
        "format",
        "limits",
        "proof",
        "role",
        "sink",
        "stale",
        "topics",
    )

    def __init__(
        self,
        fanout: Registry,
        sink: Sink,
        role: str,
        audience: str,
        fmt: str,
        limits: Limits,
        address: str | None = None,
    ) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}")
        self.fanout = fanout
        self.sink = sink
        self.role = role
        self.audience = audience
        self.format = fmt
        self.limits = limits
        self.address = address
        self.console: Any = None  # a web console's seat (hub.serve.auth.ConsoleSeat)
        # Opened with a token's session proof (what every edge holds), not the token: its
        # commands count only signed (hub.serve.service.FeedService.command).
        self.proof = False
        self.topics: set[str] = set()
        self.stale: set[str] = set()
        # topic -> the seq the client resumed from, ahead of the store (a lagging edge): no
        # frame at or below it is sent, so the client never sees its seqs go back
        self.floors: dict[str, int] | None = None
        self.closed = False
        self.close_code: int | None = None
        # the queue as two parallel lists: appending existing objects allocates nothing the
        # garbage collector tracks (a (topic, out) tuple per client per update did, and under
        # load those tuples lived long enough to be promoted and trigger full collections)
        # (lists, not deques: an empty deque holds a 64-slot block, ~1.2 KiB per client for
        # the pair; the queue is emptied whole on every write)
        self._queue: list[Outgoing] = []
        self._queue_topics: list[str | None] = []
        self._queued_bytes = 0
        # of the queue: frames (and their bytes) of a subscribe's catch-up, not yet written
        # (not counted against max_frames / max_bytes)
        self._burst = 0
        self._burst_bytes = 0
        self._dirty = False
        self._writer: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None  # only the ASGI writer waits on it
        self._stale_since: float | None = None
        self._blocked_since: float | None = None  # the socket stopped draining
        self._overflows: deque[float] | None = None  # times of recent overflows
        # the sink's write while this client may be written to directly (nothing queued, no
        # stale topic, no writer, the socket open and draining); None sends updates through
        # the queue. Kept by _rearm at every change of those conditions.
        self.direct: Callable[[bytes], None] | None = None
        self._rearm()

    @property
    def queued(self) -> int:
        return len(self._queue)

    def _rearm(self) -> None:
        """Recompute ``direct`` (see there)."""
        writer = self._writer
        if (
            self.closed
            or self._queue
            or self._dirty
            or self.stale
            or self.floors
            or (writer is not None and not writer.done())
        ):
            self.direct = None
        else:
            self.direct = self.sink.writer()

    def sink_changed(self) -> None:
        """The sink's ``writer()`` may have changed (flow control paused or resumed, closing)."""
        self._rearm()

    # -- producing (synchronous, never blocks) --

    def send(self, message: dict[str, Any]) -> None:
        """Queue a message that belongs to no topic (hello, error, pong)."""
        self.enqueue(None, Outgoing.encode(message, self.format))

    def enqueue(self, topic: str | None, out: Outgoing, *, burst: bool = False) -> None:
        """Queue ``out`` (of ``topic``; None: a control message). ``burst``: part of what a
        subscribe sends first (bounded per topic by the store), which does not count against
        the queue's limits: a client is slow when it does not read, not because it asked for
        many topics at once."""
        if self.closed or (topic is not None and topic in self.stale):
            if topic is not None:
                self.fanout.frames_dropped += 1
            return
        if self.floors is not None and topic in self.floors and not self._above_floor(topic, out):
            return
        self.direct = None  # queued frames go first
        self._queue.append(out)
        self._queue_topics.append(topic)
        self._queued_bytes += len(out.payload)
        if burst:
            self._burst += 1
            self._burst_bytes += len(out.payload)
        elif (
            len(self._queue) - self._burst > self.limits.max_frames
            or self._queued_bytes - self._burst_bytes > self.limits.max_bytes
        ):
            self._overflow()
            if self.closed:
                return
        if not self._dirty:
            self._dirty = True
            self.fanout._mark_dirty(self)

    def hold_above(self, topic: str, seq: int) -> None:
        """The client resumed ``topic`` at ``seq``, ahead of the store: send nothing of it at
        or below ``seq`` (the store's copy lags; the frames above follow)."""
        if self.floors is None:
            self.floors = {}
        self.floors[topic] = seq
        self._rearm()

    def _above_floor(self, topic: str, out: Outgoing) -> bool:
        """Whether ``out`` goes past the floor of ``topic`` (which then no longer applies)."""
        assert self.floors is not None
        if out.seq <= self.floors[topic]:
            self.fanout.frames_dropped += 1
            return False
        del self.floors[topic]
        if not self.floors:
            self.floors = None
        return True

    def drop_topic(self, topic: str) -> None:
        """Forget queued frames, staleness and floor of a topic (re-subscribe, unsubscribe)."""
        if self.floors is not None and self.floors.pop(topic, None) is not None and not self.floors:
            self.floors = None
        self.stale.discard(topic)
        if topic in self._queue_topics:
            pairs = zip(self._queue_topics, self._queue, strict=True)
            self._replace_queue([(t, o) for t, o in pairs if t != topic])

    def _replace_queue(self, entries: list[tuple[str | None, Outgoing]]) -> None:
        self.fanout.frames_dropped += len(self._queue) - len(entries)
        self._queue = [o for _, o in entries]
        self._queue_topics = [t for t, _ in entries]
        self._queued_bytes = sum(len(o.payload) for _, o in entries)
        # (which entries were a burst is not kept: at most what is left stays exempt)
        self._burst = min(self._burst, len(self._queue))
        self._burst_bytes = min(self._burst_bytes, self._queued_bytes)

    def _overflow(self) -> None:
        """Conflate: drop every queued topic frame; those topics get a snapshot later."""
        now = time.monotonic()
        if self._overflows is None:
            self._overflows = deque()
        self._overflows.append(now)
        while self._overflows and now - self._overflows[0] > self.limits.overflow_window:
            self._overflows.popleft()
        if len(self._overflows) >= self.limits.max_overflows:
            self.kill()
            return
        kept: list[tuple[str | None, Outgoing]] = []
        for topic, out in zip(self._queue_topics, self._queue, strict=True):
            if topic is None:
                kept.append((topic, out))
            else:
                self.stale.add(topic)
        if len(kept) > self.limits.max_frames:
            self.kill()  # only control frames are queued: the client is not reading at all
            return
        self._replace_queue(kept)
        if self._stale_since is None:
            self._stale_since = now

    def kill(self, code: int = CLOSE_TOO_SLOW, reason: str = "client too slow") -> None:
        """Close a client that cannot keep up."""
        if self.closed:
            return
        self.fanout.slow_closes += 1
        log.info("closing slow %s client (%s)", self.role, reason)
        self.close(code, reason)

    def close(self, code: int = 1000, reason: str = "") -> None:
        if self.closed:
            return
        self.closed = True
        self.direct = None
        self.close_code = code
        self.fanout.frames_dropped += len(self._queue)
        self._queue.clear()
        self._queue_topics.clear()
        self._queued_bytes = 0
        self._burst = self._burst_bytes = 0
        self.fanout.remove(self)
        self.sink.close(code, reason)
        if self._wake is not None:
            self._wake.set()

    # -- writing --

    def flush(self) -> None:
        """Write what is queued if the socket can take it; otherwise let the writer wait."""
        self._dirty = False
        if self.closed:
            return
        if not self.sink.raw:
            self._start_writer()
            return
        if self.sink.buffered() > self.limits.high_water:
            if self._blocked_since is None:
                self._blocked_since = time.monotonic()
            self._start_writer()
            return
        if self._writer is not None and not self._writer.done():
            return  # the writer is catching up; it will flush
        self._write_all()
        self._rearm()

    def _write_all(self) -> None:
        """Raw sinks: everything queued in one write, then snapshots of stale topics."""
        for _ in range(2):
            queue = self._queue
            if queue:
                n = len(queue)
                data = queue[0].frame if n == 1 else b"".join([out.frame for out in queue])
                queue.clear()
                self._queue_topics.clear()
                self._queued_bytes = 0
                self._burst = self._burst_bytes = 0
                self.sink.write(data)
                self.fanout.frames_sent += n
            if not self.stale:
                return
            self._resolve_stale()

    def _resolve_stale(self) -> None:
        self.fanout._settle()  # a snapshot read now already holds what is pending
        stale, self.stale = self.stale, set()
        self._stale_since = None
        for topic in stale:
            if topic in self.topics:
                key = key_for(self.audience, topic, FAMILIES)
                for out in self.fanout.store.catch_up(key, self.format, None):
                    self.enqueue(topic, out, burst=True)

    def _start_writer(self) -> None:
        if self._wake is None:
            self._wake = asyncio.Event()
        self._wake.set()
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._run_writer())

    async def _run_writer(self) -> None:
        try:
            if self.sink.raw:
                await self._drain_raw()
            else:
                await self._drain_asgi()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("writer of a %s client failed", self.role)
            self.close(1011, "internal error")
        finally:
            self._writer = None  # done: the direct path may resume
            self._rearm()

    async def _drain_raw(self) -> None:
        """Wait for a backed-up socket to drain, then write; the task ends once caught up.
        "Blocked" is a socket that takes nothing: one that drains, however slowly (a desk
        reading its first snapshots over a busy link), restarts the clock at every poll."""
        limits = self.limits
        last = self.sink.buffered()
        while not self.closed and self.sink.is_open():
            buffered = self.sink.buffered()
            if buffered <= limits.high_water // 2:
                self._blocked_since = None
                self._write_all()
                if self.sink.buffered() <= limits.high_water:
                    return
                buffered = self.sink.buffered()
            elif self._blocked_since is None or buffered < last:
                self._blocked_since = time.monotonic()
            last = buffered
            if self._too_slow():
                self.kill()
                return
            await asyncio.sleep(limits.poll)

    async def _drain_asgi(self) -> None:
        while not self.closed and self.sink.is_open():
            while self._queue:
                out = self._queue.pop(0)  # at most limits.max_frames long (+ a burst)
                self._queue_topics.pop(0)
                self._queued_bytes -= len(out.payload)
                self._burst = min(self._burst, len(self._queue))
                self._burst_bytes = min(self._burst_bytes, self._queued_bytes)
                await self.sink.send(out)
                self.fanout.frames_sent += 1
                if self._too_slow():
                    self.kill()
                    return
            if self.stale:
                self._resolve_stale()
                continue
            wake = self._wake
            assert wake is not None  # set by _start_writer
            wake.clear()
            await wake.wait()

    def _too_slow(self) -> bool:
        """Stale, or its socket not draining, for longer than ``slow_timeout``."""
        since = self._stale_since
        if since is None or (self._blocked_since is not None and self._blocked_since < since):
            since = self._blocked_since
        return since is not None and time.monotonic() - since > self.limits.slow_timeout

    async def aclose(self) -> None:
        """Stop the writer (the connection is gone)."""
        self.close()
        if self._writer is not None and not self._writer.done():
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
