"""Message bus: one small interface, an in-memory and a Redis implementation, bytes only."""

from hub.bus.base import Bus, BusUnavailable, Message, Subscription, redacted_url

__all__ = ["Bus", "BusUnavailable", "Message", "Subscription", "open_bus", "redacted_url"]


def open_bus(url: str | None) -> Bus:
    """``None`` or ``memory://`` gives the embedded bus; ``redis://...`` gives Redis."""
    if url is None or url.startswith("memory:"):
        from hub.bus.memory import MemoryBus

        return MemoryBus()
    if url.startswith(("redis://", "rediss://", "unix://")):
        from hub.bus.redis import RedisBus

        return RedisBus(url)
    raise ValueError(f"unknown bus URL scheme: {url!r} (use memory:// or redis://)")
