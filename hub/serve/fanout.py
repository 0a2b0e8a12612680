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

A client whose socket stops draining keeps a short queue; its backpressure (conflation of
stale topics, closing a client too slow) is ``hub.serve.feedclient``'s.

Updates arrive already encoded: ``publish(key, frames)`` takes one ``Outgoing`` per wire format
and never decodes or re-encodes it. What a (re)subscribing or conflated client gets first comes
from the store's ``catch_up(key, fmt, resume)``. Per-topic state lives only while the topic has
subscribers.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Mapping

from hub.engine.families import FAMILIES
from hub.serve.feedclient import CatchUp, Client, Sink
from hub.serve.limits import Limits
from hub.wire.frames import Outgoing
from hub.wire.topics import TopicKey, key_for

__all__ = ["Fanout"]

log = logging.getLogger(__name__)


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
        """``store``: what new subscribers get first (``hub.serve.feed``'s stores). ``flush_delay``:
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
        # told of each web console's client as it leaves (hub.serve.service: its answers)
        self.console_left: Callable[[Client], None] | None = None

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
            self._forget(client, key_for(client.audience, topic, FAMILIES))
        client.topics.clear()
        client.stale.clear()
        if client.console is not None and self.console_left is not None:
            self.console_left(client)

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
        key = key_for(client.audience, topic, FAMILIES)
        self._settle()
        client.drop_topic(topic)
        outs = self.store.catch_up(key, client.format, resume)
        for out in outs:  # bounded per topic, and not counted against the client's queue
            client.enqueue(topic, out, burst=True)
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
        self._forget(client, key_for(client.audience, topic, FAMILIES))

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
                    client._burst = client._burst_bytes = 0
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
