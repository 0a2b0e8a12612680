"""The embedded bus: the same contract as Redis, inside one process (demo and test double).

It mimics Redis where callers could notice: glob patterns, stream ids ``"ms-seq"`` that only
grow, exclusive ``read`` after an id, and lossy pub/sub. A subscriber that falls more than its
buffer (10,000 messages by default) behind loses the newest messages and counts them in
``Subscription.dropped``, as Redis would disconnect a client past its output buffer limit:
a slow consumer never grows memory without bound or slows the publisher.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import fnmatch
import re
import time
from collections.abc import Callable, Iterable, Sequence

from hub.bus.base import (
    DEFAULT_SUBSCRIPTION_BUFFER,
    DEFAULT_SUBSCRIPTION_BYTES,
    BufferedSubscription,
    Bus,
    Fence,
    LeaseLost,
    Message,
    ReadRate,
    parse_id,
    token_key,
)

__all__ = ["MemoryBus", "MemorySubscription"]


class MemorySubscription(BufferedSubscription):
    """Registered with its bus the moment it is created: nothing published after is missed."""

    def __init__(
        self,
        bus: MemoryBus,
        pattern: str,
        maxsize: int,
        max_bytes: int,
        rate: ReadRate | None = None,
    ) -> None:
        super().__init__(pattern, maxsize, max_bytes, rate)
        self._bus = bus
        self.matches: Callable[[str], object] = re.compile(fnmatch.translate(pattern)).match
        bus._subscriptions.add(self)

    async def ready(self) -> None:
        return None

    async def aclose(self) -> None:
        self._bus._subscriptions.discard(self)
        self._clear()
        self._finish()


class _Stream:
    __slots__ = ("data", "grew", "ids", "keys")

    def __init__(self) -> None:
        self.keys: list[tuple[int, int]] = []
        self.ids: list[str] = []
        self.data: list[bytes] = []
        self.grew = asyncio.Event()  # set (and replaced) on every append: wakes ``tail``


class MemoryBus(Bus):
    def __init__(
        self,
        *,
        subscription_buffer: int = DEFAULT_SUBSCRIPTION_BUFFER,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._subscription_buffer = subscription_buffer
        self._clock = clock
        self._subscriptions: set[MemorySubscription] = set()
        self._streams: dict[str, _Stream] = {}
        self._hashes: dict[str, dict[str, bytes]] = {}
        self._strings: dict[str, bytes] = {}
        self._leases: dict[str, tuple[str, float]] = {}  # key -> (owner, expires at)
        self._tokens: dict[str, int] = {}  # token_key(lease) -> latest fencing token issued

    async def connect(self) -> None:
        return None

    async def close(self) -> None:
        for sub in list(self._subscriptions):
            sub._finish()
        self._subscriptions.clear()

    async def publish(self, channel: str, data: bytes) -> int:
        message = Message(channel, bytes(data), time.monotonic())
        receivers = 0
        for sub in self._subscriptions:
            if sub.matches(channel):
                sub._deliver(message)
                receivers += 1
        return receivers

    def subscribe(
        self,
        pattern: str,
        *,
        buffer: int | None = None,
        max_bytes: int | None = None,
        rate: ReadRate | None = None,
    ) -> MemorySubscription:
        size = self._subscription_buffer if buffer is None else buffer
        return MemorySubscription(
            self, pattern, size, max_bytes or DEFAULT_SUBSCRIPTION_BYTES, rate
        )

    async def append(self, stream: str, data: bytes) -> str:
        entries = self._streams.setdefault(stream, _Stream())
        ms = int(self._clock() * 1000)
        last = entries.keys[-1] if entries.keys else (0, 0)
        # Like Redis: the wall clock may step back, the ids never do.
        key = (ms, 0) if ms > last[0] else (last[0], last[1] + 1)
        entry_id = f"{key[0]}-{key[1]}"
        entries.keys.append(key)
        entries.ids.append(entry_id)
        entries.data.append(bytes(data))
        entries.grew.set()
        entries.grew = asyncio.Event()
        return entry_id

    async def append_many(
        self,
        stream: str,
        items: Sequence[bytes],
        *,
        fence: Fence | None = None,
        maxlen: int | None = None,
    ) -> list[str]:
        if fence is not None and not self._fenced_ok(fence):
            raise LeaseLost(f"{fence.owner} does not hold {fence.key}")
        ids = [await self.append(stream, data) for data in items]
        entries = self._streams.get(stream)
        if maxlen is not None and entries is not None and len(entries.keys) > maxlen:
            excess = len(entries.keys) - maxlen
            del entries.keys[:excess], entries.ids[:excess], entries.data[:excess]
        return ids

    def _holder(self, key: str) -> str | None:
        held = self._leases.get(key)
        if held is None or held[1] <= self._clock():
            return None
        return held[0]

    def _fenced_ok(self, fence: Fence) -> bool:
        holder = self._holder(fence.key)
        if fence.token is None:
            return holder == fence.owner
        latest = self._tokens.get(token_key(fence.key))
        return holder in (None, fence.owner) and latest == fence.token

    async def claim(self, key: str, owner: str, ttl: float, *, token: int | None = None) -> int:
        holder, counter = self._holder(key), token_key(key)
        if holder is None:
            latest = self._tokens.get(counter, 0)
            if token is None:
                self._tokens[counter] = latest = latest + 1
            elif token != latest:
                return 0
        elif holder != owner:
            return 0
        self._leases[key] = (owner, self._clock() + ttl)
        return self._tokens.get(counter, 0)

    async def release(self, key: str, owner: str) -> None:
        if self._holder(key) == owner:
            del self._leases[key]

    async def read(
        self, stream: str, after: str = "0-0", count: int = 1000
    ) -> list[tuple[str, bytes]]:
        if count < 1:
            raise ValueError(f"count must be at least 1, not {count}")
        start = parse_id(after)
        entries = self._streams.get(stream)
        if entries is None:
            return []
        i = bisect.bisect_right(entries.keys, start)
        j = min(i + count, len(entries.keys))
        return list(zip(entries.ids[i:j], entries.data[i:j], strict=True))

    async def tail(
        self, stream: str, after: str, count: int = 1000, *, wait: float = 1.0
    ) -> list[tuple[str, bytes]]:
        found = await self.read(stream, after, count)
        if found or wait <= 0:
            return found
        grew = self._streams.setdefault(stream, _Stream()).grew
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(grew.wait(), wait)
        return await self.read(stream, after, count)

    async def hset(self, key: str, field: str, value: bytes) -> None:
        self._hashes.setdefault(key, {})[field] = bytes(value)

    async def hgetall(self, key: str) -> dict[str, bytes]:
        return dict(self._hashes.get(key, {}))

    async def hmget(self, key: str, fields: Iterable[str]) -> dict[str, bytes]:
        found = self._hashes.get(key, {})
        return {name: found[name] for name in fields if name in found}

    async def get(self, key: str) -> bytes | None:
        return self._strings.get(key)

    async def set(self, key: str, value: bytes) -> None:
        self._strings[key] = bytes(value)

    async def set_once(self, key: str, value: bytes) -> bytes:
        return self._strings.setdefault(key, bytes(value))

    async def hdel(self, key: str, fields: Iterable[str]) -> None:
        found = self._hashes.get(key)
        if found is not None:
            for field in fields:
                found.pop(field, None)

    async def delete(self, *keys: str) -> None:
        for key in keys:
            self._streams.pop(key, None)
            self._hashes.pop(key, None)
            self._strings.pop(key, None)
            self._leases.pop(key, None)
            self._tokens.pop(key, None)
