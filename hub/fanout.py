"""Fan-out: deliver each topic update to every subscribed client without waiting on any one.

After python-websockets' ``broadcast()``: encode once per wire format (and, for the uvicorn
sans-I/O protocol, build the websocket frame once: server frames are unmasked, so the bytes are
the same for every client), then write to each socket without awaiting.

``publish`` records the update; one ``call_soon`` flush per loop iteration sends it. The
steady state is a client with nothing queued whose socket drains: the flush hands the frame
straight to its transport's ``write`` (``Client.direct``: one attribute and one call per client
per update, nothing checked per frame). The sink tells its client when that must stop
(``Client.sink_changed``: asyncio's ``pause_writing``/``resume_writing``, a close). Anything
else (a queued hello or catch-up, a stale topic, a socket above its high-water mark, a non-raw
sink) takes the general path: a bounded queue per client, written in a single ``write`` by the
same flush. So do several updates published in one loop iteration, so that several topics
changed by one event still cost one syscall per client. A client is back on the direct path
once its queue is written.

A client whose socket stops draining keeps a short queue. When the queue overflows, its
queued deltas are dropped and their topics marked *stale*: once the socket drains, the client
gets each stale topic's latest snapshot instead of the backlog (conflation). A client that
overflows repeatedly, or stays stale too long, is closed with ``CLOSE_TOO_SLOW``; it may
reconnect and resume.

Updates arrive already encoded: ``publish(key, frames)`` takes one ``Outgoing`` per wire format
and never decodes or re-encodes it. What a (re)subscribing or conflated client gets first comes
from the store's ``catch_up(key, fmt, resume)``. Per-topic state lives only while the topic has
subscribers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from websockets.frames import Frame, Opcode

from hub.codec import pack, to_json
from hub.topicnames import TopicKey

__all__ = [
    "CLOSE_TOO_SLOW",
    "AsgiSink",
    "CatchUp",
    "Client",
    "Fanout",
    "Limits",
    "Outgoing",
    "Sink",
    "build_frame",
]

log = logging.getLogger(__name__)

CLOSE_TOO_SLOW = 4008
"""Close code for a client that cannot keep up (reason ``"client too slow"``)."""

FORMATS = ("json", "msgpack")

TEXT, BINARY = Opcode.TEXT, Opcode.BINARY


def build_frame(payload: bytes, text: bool) -> bytes:
    """One unfragmented, unmasked server frame (RFC 6455 §5.2), no extensions, serialized by
    websockets (the library that parses the client's side): the header rules stay theirs.
    Built once per update per format, so its few microseconds are not per client."""
    return Frame(TEXT if text else BINARY, payload).serialize(mask=False)


class Outgoing:
    """One encoded message; the websocket frame and the str form are built on first use.
    ``seq``: the topic seq of a snapshot or delta (-1: a message of no topic)."""

    __slots__ = ("_frame", "_text", "payload", "seq", "text")

    def __init__(self, payload: bytes, text: bool, seq: int = -1) -> None:
        self.payload = payload
        self.text = text
        self.seq = seq
        self._frame: bytes | None = None
        self._text: str | None = None

    @classmethod
    def encode(cls, message: dict[str, Any], fmt: str) -> Outgoing:
        if fmt == "msgpack":
            return cls(pack(message), False)
        return cls(to_json(message), True)

    @property
    def frame(self) -> bytes:
        if self._frame is None:
            self._frame = build_frame(self.payload, self.text)
        return self._frame

    @property
    def as_str(self) -> str:
        if self._text is None:
            self._text = self.payload.decode()
        return self._text


@runtime_checkable
class CatchUp(Protocol):
    """Where the fan-out gets what a (re)subscribing client must receive first."""

    def catch_up(self, key: TopicKey, fmt: str, resume: int | None) -> list[Outgoing]:
        """The missed deltas after ``resume`` when they are still known, else the current
        snapshot (possibly followed by later deltas), encoded for ``fmt``."""
        ...


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


def set_sndbuf(transport: asyncio.BaseTransport, size: int) -> None:
    """Cap the kernel send buffer of a client socket. Autotuned, it grows to megabytes that a
    reader which stopped fills for seconds before the server can notice; capped, a stalled
    reader shows in the transport buffer within ``size`` bytes and the kernel memory held for
    it is bounded. (128 KiB still carries ~100 MB/s at 1 ms RTT, ~1 MB/s at 100 ms.)"""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)


def set_congestion(transport: asyncio.BaseTransport, name: str) -> None:
    """Choose a client socket's TCP congestion control (Linux; elsewhere, or if the kernel
    does not allow ``name`` to this process, the system's stays). The feed is frames of a few
    hundred bytes to a few KiB at most tens of times a second: the congestion window never
    limits it, and Reno (which Linux allows every process) costs the least per packet. BBR, a
    common system default, keeps a model updated on every ACK and paces every packet; with
    10,000 clients on loopback at 10 Hz, Reno took the two-edge p99 from 50-52 to 42-43 ms
    (docs/performance.md)."""
    option = getattr(socket, "TCP_CONGESTION", None)
    sock = transport.get_extra_info("socket")
    if option is None or sock is None or not name:
        return
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.IPPROTO_TCP, option, name.encode())


class AsgiSink:
    """Portable fallback through the ASGI ``send`` (any server); one await per frame."""

    raw = False

    def __init__(self, websocket: Any, close_timeout: float = 5.0) -> None:
        self._ws = websocket
        self._close_timeout = close_timeout
        self._open = True
        self._closing: asyncio.Task[None] | None = None

    def is_open(self) -> bool:
        return self._open

    def buffered(self) -> int:
        return 0

    def write(self, data: bytes) -> None:
        raise TypeError("AsgiSink takes messages through send()")

    def writer(self) -> None:
        return None

    async def send(self, out: Outgoing) -> None:
        if not self._open:
            return
        try:
            if out.text:
                await self._ws.send({"type": "websocket.send", "text": out.as_str})
            else:
                await self._ws.send({"type": "websocket.send", "bytes": out.payload})
        except Exception:
            self._open = False

    def close(self, code: int, reason: str) -> None:
        if not self._open:
            return
        self._open = False
        self._closing = asyncio.get_running_loop().create_task(self._close(code, reason))

    async def _close(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self._ws.send({"type": "websocket.close", "code": code, "reason": reason}),
                self._close_timeout,
            )


# -- clients ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-client buffering policy."""

    max_frames: int = 256  # queued frames before the client's topics are conflated
    max_bytes: int = 1 << 20  # queued bytes, likewise
    high_water: int = 256 << 10  # transport buffer above which we stop writing
    slow_timeout: float = 5.0  # stale, or socket not draining, for longer than this: closed
    close_grace: float = 1.0  # after the close frame: cut off if nothing drains for this long
    sndbuf: int = 128 << 10  # kernel send buffer per client socket (0: the kernel's autotuning)
    congestion: str = "reno"  # TCP congestion control per client socket ("": the system's)
    max_topics: int = 64  # topics one connection may subscribe to
    max_per_address: int = 256  # connections from one client address (a venue's OBS machines)
    max_overflows: int = 3  # overflows within overflow_window: closed
    overflow_window: float = 10.0
    poll: float = 0.02  # how often a backed-up client's socket is checked


class Client:
    """One websocket client: role, wire format, subscriptions and a bounded outgoing queue."""

    __slots__ = (
        "_blocked_since",
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
        "direct",
        "fanout",
        "floors",
        "format",
        "limits",
        "role",
        "sink",
        "stale",
        "topics",
    )

    def __init__(
        self,
        fanout: Fanout,
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

    def enqueue(self, topic: str | None, out: Outgoing) -> None:
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
        if len(self._queue) > self.limits.max_frames or self._queued_bytes > self.limits.max_bytes:
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
                for out in self.fanout.store.catch_up((self.audience, topic), self.format, None):
                    self.enqueue(topic, out)

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
        """Wait for a backed-up socket to drain, then write; the task ends once caught up."""
        limits = self.limits
        while not self.closed and self.sink.is_open():
            if self.sink.buffered() <= limits.high_water // 2:
                self._blocked_since = None
                self._write_all()
                if self.sink.buffered() <= limits.high_water:
                    return
            elif self._blocked_since is None:
                self._blocked_since = time.monotonic()
            if self._too_slow():
                self.kill()
                return
            await asyncio.sleep(limits.poll)

    async def _drain_asgi(self) -> None:
        while not self.closed and self.sink.is_open():
            while self._queue:
                out = self._queue.pop(0)  # at most limits.max_frames long
                self._queue_topics.pop(0)
                self._queued_bytes -= len(out.payload)
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


def _enqueue_all(clients: set[Client], topic: str, out: Outgoing) -> None:
    """The general path for one frame: into every client's queue."""
    for client in list(clients):  # a copy: enqueue may close (and remove) a client
        client.enqueue(topic, out)


# -- the registry -----------------------------------------------------------------------------


class Fanout:
    """Clients and their subscriptions; ``publish`` is synchronous and O(1), its flush
    O(subscribers)."""

    def __init__(
        self, store: CatchUp, limits: Limits | None = None, flush_delay: float = 0.0
    ) -> None:
        """``store``: what new subscribers get first (``hub.feed``'s stores). ``flush_delay``:
        0 writes at the end of the current loop
        iteration; a few milliseconds coalesce a burst of updates into one write per client
        (fewer syscalls, that much more latency)."""
        self.store = store
        self.limits = limits or Limits()
        self.flush_delay = flush_delay
        self.clients: set[Client] = set()
        self.frames_sent = 0
        self.frames_dropped = 0
        self.slow_closes = 0
        self.refused: Counter[str] = Counter()  # connections refused at admission, by code
        # (audience, topic) -> format -> subscribers; a key exists only while it has any
        self._subs: dict[TopicKey, dict[str, set[Client]]] = {}
        self._addresses: Counter[str] = Counter()
        self._dirty: list[Client] = []
        self._pending: list[tuple[TopicKey, Mapping[str, Outgoing]]] = []  # since the flush
        self._flush_handle: asyncio.Handle | asyncio.TimerHandle | None = None

    def may_connect(self, address: str | None) -> bool:
        """False when ``address`` already holds ``limits.max_per_address`` connections."""
        return address is None or self._addresses[address] < self.limits.max_per_address

    def add(
        self, sink: Sink, role: str, audience: str, fmt: str = "json", address: str | None = None
    ) -> Client:
        client = Client(self, sink, role, audience, fmt, self.limits, address)
        self.clients.add(client)
        if address is not None:
            self._addresses[address] += 1
        return client

    def remove(self, client: Client) -> None:
        """Forget a client (idempotent); ``Client.close`` calls it."""
        if client not in self.clients:
            return
        self.clients.discard(client)
        if client.address is not None:
            self._addresses[client.address] -= 1
            if self._addresses[client.address] <= 0:
                del self._addresses[client.address]
        for topic in client.topics:
            self._forget(client, (client.audience, topic))
        client.topics.clear()
        client.stale.clear()

    def _forget(self, client: Client, key: TopicKey) -> None:
        """Drop one subscription; the topic's entry goes with its last subscriber."""
        by_format = self._subs.get(key)
        if by_format is None:
            return
        clients = by_format.get(client.format)
        if clients is not None:
            clients.discard(client)
            if not clients:
                del by_format[client.format]
        if not by_format:
            del self._subs[key]

    def roles(self) -> Counter[str]:
        return Counter(c.role for c in self.clients)

    def topics(self) -> int:
        """Topics with at least one subscriber (the only ones the fan-out keeps state for)."""
        return len(self._subs)

    def addresses(self) -> int:
        return len(self._addresses)

    def subscribed(self, key: TopicKey) -> int:
        by_format = self._subs.get(key)
        return 0 if by_format is None else sum(len(s) for s in by_format.values())

    def subscribe(self, client: Client, topic: str, resume: int | None = None) -> str | None:
        """Subscribe and queue what the client needs first (``store.catch_up``: the missed
        deltas when its ``resume`` seq is still known, else the current snapshot). Returns
        ``"too_many_topics"`` when the client is at ``limits.max_topics``, else None."""
        if client.closed:
            return None
        if topic not in client.topics and len(client.topics) >= self.limits.max_topics:
            return "too_many_topics"
        key = (client.audience, topic)
        self._settle()
        client.drop_topic(topic)
        outs = self.store.catch_up(key, client.format, resume)
        for out in outs:
            client.enqueue(topic, out)
        if client.closed:
            return None
        if not outs and resume is not None and resume > self._seq(key):
            client.hold_above(topic, resume)  # ahead of the store: whatever follows, newer
        client.topics.add(topic)
        by_format = self._subs.get(key)
        if by_format is None:
            by_format = self._subs[key] = {}
        clients = by_format.get(client.format)
        if clients is None:
            clients = by_format[client.format] = set()
        clients.add(client)
        return None

    def _seq(self, key: TopicKey) -> int:
        """The store's seq of ``key`` (0 for a store that does not say)."""
        seq = getattr(self.store, "seq", None)
        return int(seq(key)) if seq is not None else 0

    def refresh(self) -> None:
        """Send every subscriber a fresh catch-up of each topic it holds, in place of anything
        queued for it (the store turned live: a takeover or a rebuild; what clients hold may be
        another writer's). Through the stale-topic path: nothing older follows."""
        self._settle()
        for client in list(self.clients):
            if client.closed or not client.topics:
                continue
            pairs = zip(client._queue_topics, client._queue, strict=True)
            client._replace_queue([(t, o) for t, o in pairs if t is None])  # (floors stay)
            client.stale.update(client.topics)
            client._rearm()
            if not client._dirty:
                client._dirty = True
                self._mark_dirty(client)

    def unsubscribe(self, client: Client, topic: str) -> None:
        client.topics.discard(topic)
        client.drop_topic(topic)
        self._forget(client, (client.audience, topic))

    def publish(self, key: TopicKey, frames: Mapping[str, Outgoing]) -> None:
        """Send an update, already encoded once per wire format (``frames[fmt]``), to every
        subscriber, in the next flush. Nothing is decoded or re-encoded. Call it right after
        the store changed, with no await in between."""
        if key not in self._subs:
            return
        if self.flush_delay > 0:  # a flush delay asks for coalescing: queue at once
            self._enqueue(key, frames)
            return
        self._pending.append((key, frames))
        if self._flush_handle is None:
            self._schedule_flush()

    def _settle(self) -> None:
        """Queue the updates published since the last flush for their current subscribers
        (before a subscription changes: a new subscriber's catch-up already holds them)."""
        pending, self._pending = self._pending, []
        for key, frames in pending:
            self._enqueue(key, frames)

    def _frames(
        self, key: TopicKey, frames: Mapping[str, Outgoing]
    ) -> list[tuple[set[Client], Outgoing]]:
        """(subscribers, frame) per wire format of a topic's subscribers."""
        by_format = self._subs.get(key)
        if not by_format:
            return []
        out = []
        for fmt, clients in by_format.items():
            frame = frames.get(fmt)
            if frame is None:
                log.warning(
                    "update of %s has no %s frame; %s client(s) skipped", key, fmt, len(clients)
                )
            else:
                out.append((clients, frame))
        return out

    def _enqueue(self, key: TopicKey, frames: Mapping[str, Outgoing]) -> None:
        """The general path: the update into every subscriber's queue."""
        for clients, out in self._frames(key, frames):
            _enqueue_all(clients, key[1], out)

    def _send(self, key: TopicKey, frames: Mapping[str, Outgoing]) -> None:
        """The direct path: the update written at once to each client on it (``direct``),
        queued for the others."""
        topic = key[1]
        max_bytes = self.limits.max_bytes
        for clients, out in self._frames(key, frames):
            if len(out.payload) > max_bytes:
                _enqueue_all(clients, topic, out)  # overflows: the topic goes stale
                continue
            frame = out.frame
            targets = list(clients)  # a copy: a write or an enqueue may remove a client
            missed = 0
            # the hot loop (10,000 clients per update): one attribute and one call per client
            for client in targets:
                write = client.direct
                if write is not None:
                    try:  # free in CPython >= 3.11 unless it raises
                        write(frame)
                    except Exception:
                        log.exception("writing to a %s client failed", client.role)
                        client.close(1011, "internal error")
                        missed += 1
                else:
                    client.enqueue(topic, out)
                    missed += 1
            self.frames_sent += len(targets) - missed

    def _mark_dirty(self, client: Client) -> None:
        self._dirty.append(client)
        if self._flush_handle is None:
            self._schedule_flush()

    def _schedule_flush(self) -> None:
        loop = asyncio.get_running_loop()
        if self.flush_delay > 0:
            self._flush_handle = loop.call_later(self.flush_delay, self.flush)
        else:
            self._flush_handle = loop.call_soon(self.flush)

    def flush(self) -> None:
        """Send what was published since the last flush, then write every dirty client's
        queue (normally scheduled by ``publish``). One update goes the direct path; several
        go through the queues, so that a client gets them all in one write."""
        self._flush_handle = None
        pending, self._pending = self._pending, []
        if len(pending) == 1:
            self._send(*pending[0])
        else:
            for key, frames in pending:
                self._enqueue(key, frames)
        dirty, self._dirty = self._dirty, []
        high_water = self.limits.high_water
        sent = 0
        for client in dirty:
            try:
                queue = client._queue
                sink = client.sink
                writer = client._writer
                if (  # the common case, inlined: one frame for a raw socket that drains
                    len(queue) == 1
                    and sink.raw
                    and not client.closed
                    and not client.stale
                    and (writer is None or writer.done())
                    and sink.buffered() <= high_water
                ):
                    client._dirty = False
                    sink.write(queue[0].frame)
                    queue.clear()
                    client._queue_topics.clear()
                    client._queued_bytes = 0
                    client._rearm()
                    sent += 1
                else:
                    client.flush()
            except Exception:
                log.exception("flushing a %s client failed", client.role)
                client.close(1011, "internal error")
        self.frames_sent += sent

    async def close_all(self, code: int = 1001, reason: str = "server shutting down") -> None:
        for client in list(self.clients):
            client.close(code, reason)
            await client.aclose()
