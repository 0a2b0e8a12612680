"""How the Redis bus meets a Redis that is away: which errors are worth a retry, the
backoff between attempts, and closing a connection that may already be broken."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["TRANSIENT_ERRORS", "RetryPolicy", "quietly"]

log = logging.getLogger("hub.bus.redis")

TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    RedisConnectionError,  # includes BusyLoadingError while Redis replays its AOF
    RedisTimeoutError,
    ConnectionError,
    OSError,
)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt n sleeps uniform(0, min(cap, base * 2**n))."""

    deadline: float = 10.0
    base: float = 0.05
    cap: float = 2.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        return rng.uniform(0.0, min(self.cap, self.base * 2 ** min(attempt, 30)))


async def quietly(aw: Awaitable[Any]) -> None:
    """Close a connection that may already be broken; errors here change nothing."""
    try:
        await aw
    except asyncio.CancelledError:
        raise
    except Exception:
        log.debug("ignoring error while closing a Redis connection", exc_info=True)
