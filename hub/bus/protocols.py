"""The bus's four concerns as protocols, so each user names the part it needs.

A transport (``RedisBus``, ``MemoryBus``) implements all four; ``hub.bus.base.Bus`` is their
union for code that needs everything (the ingest, the projector). The edge, the feed
publisher and the console type theirs ``PubSubHashes``, the export ``Journal``, the lease
holder ``Leases``: a reader sees at a glance what a component may do to the bus, and a test
double needs only that part.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from hub.bus.base import Fence, ReadRate, Subscription

__all__ = ["Hashes", "Journal", "Leases", "PubSub", "PubSubHashes"]


@runtime_checkable
class PubSub(Protocol):
    """Lossy publish/subscribe on glob patterns (console events, acks, the feed)."""

    async def publish(self, channel: str, data: bytes) -> int:
        """Publish; how many subscribers received it."""
        ...

    async def publish_many(self, messages: Sequence[tuple[str, bytes]]) -> list[int]:
        """Publish ``(channel, data)`` pairs in order; the receiver count of each."""
        ...

    def subscribe(
        self,
        pattern: str,
        *,
        buffer: int | None = None,
        max_bytes: int | None = None,
        rate: ReadRate | None = None,
    ) -> Subscription:
        """Messages on every channel matching ``pattern`` from now on (``Bus.subscribe``)."""
        ...


@runtime_checkable
class Journal(Protocol):
    """Append-only streams whose ids sort in append order (the journal, the notes)."""

    async def append(self, stream: str, data: bytes) -> str:
        """Append one entry; its id. Durable once it returns."""
        ...

    async def append_many(
        self,
        stream: str,
        items: Sequence[bytes],
        *,
        fence: Fence | None = None,
        maxlen: int | None = None,
    ) -> list[str]:
        """Append ``items`` in order, all or none, fenced by a lease when asked."""
        ...

    async def read(
        self, stream: str, after: str = "0-0", count: int = 1000
    ) -> list[tuple[str, bytes]]:
        """Entries strictly after ``after``, oldest first, at most ``count``."""
        ...

    async def tail(
        self, stream: str, after: str, count: int = 1000, *, wait: float = 1.0
    ) -> list[tuple[str, bytes]]:
        """Like ``read``, waiting up to ``wait`` seconds for the next entry."""
        ...


@runtime_checkable
class Hashes(Protocol):
    """Hashes of small values and plain keys (snapshots, seqs, the epoch)."""

    async def hset(self, key: str, field: str, value: bytes) -> None: ...

    async def hset_many(self, key: str, fields: Mapping[str, bytes]) -> None: ...

    async def hgetall(self, key: str) -> dict[str, bytes]: ...

    async def hmget(self, key: str, fields: Iterable[str]) -> dict[str, bytes]: ...

    async def hdel(self, key: str, fields: Iterable[str]) -> None: ...

    async def get(self, key: str) -> bytes | None: ...

    async def set(self, key: str, value: bytes) -> None: ...

    async def set_once(self, key: str, value: bytes) -> bytes: ...

    async def delete(self, *keys: str) -> None: ...


@runtime_checkable
class Leases(Protocol):
    """Leases with fencing tokens (``Bus.claim``): one writer per journal, one projector."""

    async def claim(self, key: str, owner: str, ttl: float, *, token: int | None = None) -> int:
        """Take or renew the lease; the fencing token held, 0 when ``owner`` may not."""
        ...

    async def release(self, key: str, owner: str) -> None:
        """Give the lease up at once if ``owner`` holds it."""
        ...


class PubSubHashes(PubSub, Hashes, Protocol):
    """Pub/sub and hashes: what the feed's ends use (the publisher sends frames and persists
    seqs and snapshots; an edge hears the feed and starts from the snapshots), and a console
    (events out, acks in; the served tables and the event epoch read)."""
