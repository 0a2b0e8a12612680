"""Message bus: four small protocols (``hub.bus.protocols``: pub/sub, journal streams, hashes,
leases), an in-memory and a Redis implementation of all four, bytes only; one lease holder
(``hub.bus.lease``) for every single-writer role."""

from hub.bus.base import Bus, BusUnavailable, Message, Subscription, redacted_url
from hub.bus.protocols import Hashes, Journal, Leases, PubSub, PubSubHashes

__all__ = [
    "Bus",
    "BusUnavailable",
    "Hashes",
    "Journal",
    "Leases",
    "Message",
    "PubSub",
    "PubSubHashes",
    "Subscription",
    "open_bus",
    "redacted_url",
]


def open_bus(url: str | None) -> Bus:
    """``None`` or ``memory://`` gives the embedded bus; ``redis://``, ``rediss://`` (TLS) or
    ``unix:///path/to/redis.sock?db=0`` (Redis on the same machine) give Redis."""
    if url is None or url.startswith("memory:"):
        from hub.bus.memory import MemoryBus

        return MemoryBus()
    if url.startswith(("redis://", "rediss://", "unix://")):
        from hub.bus.redis import RedisBus

        return RedisBus(url)
    raise ValueError(
        f"unknown bus URL scheme: {url!r} (use memory://, redis://, rediss:// or unix://)"
    )


def _is_each_protocol(bus: Bus) -> tuple[PubSub, Journal, Hashes, Leases]:
    """Never called: where mypy checks that a ``Bus`` (so each transport) is all four."""
    return bus, bus, bus, bus
