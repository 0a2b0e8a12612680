"""The bus interface every transport implements (after encode/broadcaster's backend shape).

Four facilities, all bytes in, bytes out:
- pub/sub with glob patterns (console events, acks, the feed channel);
- an append-only journal stream with ids that sort in append order (Redis stream semantics);
- a hash of small values (latest topic snapshots, so edges can start or heal a gap);
- a lease with a fencing token: one ingest writes a tournament's journal. ``claim`` takes a
  free lease with a new token (a counter that only grows, kept after the lease expires) or
  renews it; ``append_many(..., fence=Fence(key, owner, token))`` refuses (``LeaseLost``)
  unless no one has claimed the lease since that token was issued, checked where the append
  happens (inside Redis, atomically). So a paused or partitioned ingest can never write after a
  successor took over, while a lone ingest whose lease merely ran out during a Redis outage
  takes it back with the same token and carries on.
"""

from __future__ import annotations

import abc
import asyncio
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Self

from hub.redact import redacted_url as redacted_url  # re-exported (hub.bus, hub.bus.redis)

DEFAULT_SUBSCRIPTION_BUFFER = 10_000
"""Messages a subscription holds for a slow consumer before it drops (and counts) new ones."""
DEFAULT_SUBSCRIPTION_BYTES = 256 * 1024 * 1024
"""Bytes of message data a subscription holds before it drops (and counts) new ones: a count
alone does not bound memory when a publisher sends large messages."""


class BusUnavailable(ConnectionError):
    """The bus could not be reached at start (``connect``): the message names where and why,
    in one line a command can print as it is."""


class LeaseLost(RuntimeError):
    """The writer no longer holds the journal's lease: nothing was appended."""


@dataclass(frozen=True, slots=True)
class Fence:
    """``append_many`` writes only while ``owner``'s claim of the lease at ``key`` is the
    latest one: with ``token``, while the lease's token is still ``token`` and no one else
    holds the lease (it may have expired meanwhile: no one has written since); without a token
    (older callers), only while ``owner`` holds the lease."""

    key: str
    owner: str
    token: int | None = None


@dataclass(frozen=True, slots=True)
class ReadRate:
    """How fast a subscription reads at most (a token bucket ``burst`` seconds deep): past it,
    a transport that reads (Redis) leaves the rest unread, where it queues at the server, and
    a server that bounds that queue (``client-output-buffer-limit pubsub``) cuts the
    connection, which the subscription then opens again. A flood on one channel so costs the
    reader a bounded share of its CPU whatever its rate. The memory bus does not read."""

    messages: float  # per second
    bytes: float  # per second
    burst: float = 1.0  # seconds


@dataclass(frozen=True, slots=True)
class Message:
    """One pub/sub message. ``arrived``: when the transport received it (``time.monotonic``;
    0.0 when not known), for lag metrics; not part of equality."""

    channel: str
    data: bytes
    arrived: float = field(default=0.0, compare=False)


class Subscription(abc.ABC):
    """An async iterator of ``Message`` for one glob pattern, returned by ``Bus.subscribe``.

    ``subscribe`` is a plain (not async) call so the subscription exists before the caller's
    next line. The memory bus registers at once; Redis registers in the background, so
    ``await sub.ready()`` before publishing anything whose answer must not be missed.
    Messages that arrive while the consumer's buffer is full are dropped and counted in
    ``dropped`` (pub/sub is lossy by design; consumers detect gaps by seq).

    Besides one message at a time (``async for``), ``take`` hands over every message already
    received at once: a consumer that works in batches pays one wake-up per burst, not one per
    message.
    """

    dropped: int

    @abc.abstractmethod
    async def ready(self) -> None:
        """Return once the pattern is registered: later publishes will be delivered."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Unsubscribe; iteration then stops. Idempotent."""

    def __aiter__(self) -> Self:
        return self

    @abc.abstractmethod
    async def __anext__(self) -> Message: ...

    async def take(self, limit: int | None = None) -> list[Message]:
        """Wait for the next message, then return it with every message already received
        after it (at most ``limit`` in all), oldest first; ``[]`` once the subscription has
        ended (an error that ended it is raised instead, as iteration would)."""
        try:
            return [await anext(self)]
        except StopAsyncIteration:
            return []

    @property
    def pending(self) -> int:
        """Messages received and not yet taken (0 when the transport does not know)."""
        return 0


class BufferedSubscription(Subscription):
    """A subscription fed by its transport through a bounded buffer.

    The transport calls ``_deliver`` (never blocks; drops when full), ``_finish`` (iteration
    ends once the buffer is empty) or ``_fail`` (the consumer sees the error instead of a
    listener dying silently in the background).
    """

    def __init__(
        self,
        pattern: str,
        maxsize: int = DEFAULT_SUBSCRIPTION_BUFFER,
        max_bytes: int = DEFAULT_SUBSCRIPTION_BYTES,
        rate: ReadRate | None = None,
    ) -> None:
        if maxsize < 1 or max_bytes < 1:
            raise ValueError("subscription buffer must hold at least one message")
        self.pattern = pattern
        self.dropped = 0
        self._maxsize = maxsize
        self._max_bytes = max_bytes
        self.rate = rate
        self._bytes = 0  # data bytes buffered
        self._buffer: deque[Message] = deque()
        self._notify: Callable[[], None] | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self._error: BaseException | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
        if self._notify is not None:
            self._notify()

    def notify(self, callback: Callable[[], None] | None) -> None:
        """Call ``callback`` (never blocking) whenever a message is buffered or the
        subscription ends: how one consumer waits on several subscriptions at once (and takes
        from each with ``take_nowait``)."""
        self._notify = callback

    def _deliver(self, message: Message) -> None:
        if self._closed:
            return
        size = len(message.data)
        if len(self._buffer) >= self._maxsize or self._bytes + size > self._max_bytes:
            self.dropped += 1
            return
        self._bytes += size
        self._buffer.append(message)
        self._wake()

    def _finish(self) -> None:
        self._closed = True
        self._wake()

    def _clear(self) -> None:
        self._buffer.clear()
        self._bytes = 0

    def _fail(self, error: BaseException) -> None:
        self._error = error
        self._finish()

    @property
    def pending(self) -> int:
        return len(self._buffer)

    @property
    def throttled(self) -> bool:
        """Reading at its ``rate`` limit (never, for a transport that does not read)."""
        return False

    @property
    def pending_bytes(self) -> int:
        """Data bytes received and not yet taken."""
        return self._bytes

    async def _wait(self) -> bool:
        """Wait until a message is buffered (True) or the subscription ended with an empty
        buffer (False; the error that ended it, if any, is raised once)."""
        while not self._buffer:
            if self._closed:
                if self._error is not None:
                    error, self._error = self._error, None
                    raise error
                return False
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return True

    async def __anext__(self) -> Message:
        if not self._buffer and not await self._wait():
            raise StopAsyncIteration
        message = self._buffer.popleft()
        self._bytes -= len(message.data)
        return message

    async def take(self, limit: int | None = None) -> list[Message]:
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        if not self._buffer and not await self._wait():
            return []
        return self.take_nowait(limit)

    def take_nowait(self, limit: int | None = None) -> list[Message]:
        """What is buffered now, oldest first, at most ``limit``; ``[]`` if nothing is (an
        error that ended the subscription is raised once, as ``take`` would)."""
        buffer = self._buffer
        if not buffer:
            if self._closed and self._error is not None:
                error, self._error = self._error, None
                raise error
            return []
        if limit is None or len(buffer) <= limit:
            taken = list(buffer)
            buffer.clear()
            self._bytes = 0
            return taken
        popleft = buffer.popleft
        taken = [popleft() for _ in range(limit)]
        self._bytes -= sum(len(m.data) for m in taken)
        return taken


class Bus(abc.ABC):
    """A transport: the four protocols of ``hub.bus.protocols`` together (pub/sub, journal
    streams, hashes, leases), and its connection. Code that uses only some of them types its
    parameter by those."""

    @abc.abstractmethod
    async def connect(self) -> None: ...

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the transport; every open subscription stops iterating."""

    @abc.abstractmethod
    async def publish(self, channel: str, data: bytes) -> int:
        """Publish; returns how many subscribers received it (0: nobody is listening)."""

    @abc.abstractmethod
    def subscribe(
        self,
        pattern: str,
        *,
        buffer: int | None = None,
        max_bytes: int | None = None,
        rate: ReadRate | None = None,
    ) -> Subscription:
        """Messages on every channel matching the glob ``pattern`` from now on.

        ``buffer``: how many received messages it holds for a slow consumer before it drops
        new ones (default: the bus's ``subscription_buffer``); ``max_bytes``: how many bytes of
        message data (default ``DEFAULT_SUBSCRIPTION_BYTES``), whichever limit comes first.
        Each subscription is read on its own (on Redis: its own connection), so a flood on one
        cannot delay the messages of another behind it; ``rate`` bounds how fast it is read.

        The iterator survives transport errors (it reconnects with backoff); messages published
        while disconnected are lost, as with Redis pub/sub: callers detect gaps by seq.
        Messages published by one task, one awaited ``publish`` after another, arrive in order.
        """

    @abc.abstractmethod
    async def append(self, stream: str, data: bytes) -> str:
        """Append to a journal stream; returns the entry id. Durable once it returns.

        It either returns the id or raises: callers may rely on nothing being lost silently.
        """

    @abc.abstractmethod
    async def append_many(
        self,
        stream: str,
        items: Sequence[bytes],
        *,
        fence: Fence | None = None,
        maxlen: int | None = None,
    ) -> list[str]:
        """Append ``items`` in order, all or none; their entry ids. Durable once it returns.

        The ingest journals a whole batch of accepted events with one call, so a batch costs
        one round trip, not one per event. With ``fence``, raises ``LeaseLost`` (appending
        nothing) unless ``fence.owner`` holds the lease ``fence.key``. With ``maxlen``, the
        stream keeps about its last ``maxlen`` entries (Redis ``MAXLEN ~``: whole nodes of
        up to 100 entries are dropped, so a little more is kept): for streams that only
        inform (the notes), never for the journal.
        """

    @abc.abstractmethod
    async def claim(self, key: str, owner: str, ttl: float, *, token: int | None = None) -> int:
        """Take the lease ``key`` for ``ttl`` seconds or renew it; the fencing token held, or
        0 (falsy) when ``owner`` may not hold it.

        - held by ``owner``: renewed; its token is returned;
        - held by someone else: 0;
        - free, ``token`` None: taken with a new token (one more than any issued before);
        - free, ``token`` given (taking back a lease that ran out): taken with that same token
          only if it is still the latest issued (no one claimed the lease since), else 0.
        """

    @abc.abstractmethod
    async def release(self, key: str, owner: str) -> None:
        """Give the lease up at once if ``owner`` holds it (a clean stop: no wait for a
        successor)."""

    @abc.abstractmethod
    async def read(
        self, stream: str, after: str = "0-0", count: int = 1000
    ) -> list[tuple[str, bytes]]:
        """Entries strictly after id ``after``, oldest first, at most ``count``."""

    @abc.abstractmethod
    async def tail(
        self, stream: str, after: str, count: int = 1000, *, wait: float = 1.0
    ) -> list[tuple[str, bytes]]:
        """Like ``read``, but when nothing follows ``after`` yet, wait up to ``wait`` seconds
        for the next entry (``[]`` if none came): how a reader follows a journal as it grows
        without polling it."""

    @abc.abstractmethod
    async def hset(self, key: str, field: str, value: bytes) -> None: ...

    async def publish_many(self, messages: Sequence[tuple[str, bytes]]) -> list[int]:
        """Publish ``(channel, data)`` pairs in order (one round trip where possible); the
        receiver count of each.

        At least once: a transport that retries may deliver some of them twice, which every
        consumer tolerates (acks by seq, feed updates by per-topic seq).
        """
        return [await self.publish(channel, data) for channel, data in messages]

    async def hset_many(self, key: str, fields: Mapping[str, bytes]) -> None:
        """Set several fields of one hash at once."""
        for name, value in fields.items():
            await self.hset(key, name, value)

    @abc.abstractmethod
    async def hgetall(self, key: str) -> dict[str, bytes]: ...

    async def hmget(self, key: str, fields: Iterable[str]) -> dict[str, bytes]:
        """Those of ``fields`` the hash holds (an edge healing one topic reads one field,
        not the whole snapshot hash)."""
        wanted = set(fields)
        return {name: value for name, value in (await self.hgetall(key)).items() if name in wanted}

    async def get(self, key: str) -> bytes | None:
        """The value of a plain key (None: not set)."""
        raise NotImplementedError

    async def set(self, key: str, value: bytes) -> None:
        """Set a plain key (the last writer's value stands)."""
        raise NotImplementedError

    async def set_once(self, key: str, value: bytes) -> bytes:
        """Set ``key`` to ``value`` unless it is set; the value it holds (the first writer's:
        an identity made once and kept, such as the event epoch)."""
        raise NotImplementedError

    @abc.abstractmethod
    async def hdel(self, key: str, fields: Iterable[str]) -> None:
        """Remove fields of a hash (missing ones are ignored)."""

    @abc.abstractmethod
    async def delete(self, *keys: str) -> None: ...


def token_key(lease: str) -> str:
    """Where a lease's latest fencing token lives (it outlives the lease itself)."""
    return f"{lease}:token"


def parse_id(entry_id: str) -> tuple[int, int]:
    """A stream id ``"ms-seq"`` (or bare ``"ms"``, meaning ``"ms-0"``) as a sortable pair."""
    ms, sep, seq = entry_id.partition("-")
    try:
        parsed = (int(ms), int(seq) if sep else 0)
    except ValueError:
        raise ValueError(f"bad stream id {entry_id!r} (expected 'ms-seq')") from None
    if parsed[0] < 0 or parsed[1] < 0:
        raise ValueError(f"bad stream id {entry_id!r} (negative)")
    return parsed
