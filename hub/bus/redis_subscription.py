"""A Redis (P)SUBSCRIBE on a connection of its own, kept alive through Redis outages and
read at a bounded rate (``hub.bus.redis`` gives the failure policy)."""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from typing import Any, Protocol

from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ResponseError

from hub.bus.base import BufferedSubscription, Message, ReadRate
from hub.bus.redis_retry import TRANSIENT_ERRORS, RetryPolicy, quietly

__all__ = ["CLOSE_ATTEMPTS", "CLOSE_GRACE", "RedisSubscription"]

log = logging.getLogger("hub.bus.redis")

YIELD_EVERY = 64
"""Replies a subscription reads before it lets the event loop run other tasks: a reply that is
already buffered returns without suspending, so a flooded connection (hundreds of KB waiting)
would otherwise hold the loop, and every other table's subscription, for tens of ms."""
CLOSE_GRACE = 0.25  # seconds a stopping subscription loop gets per cancellation
CLOSE_ATTEMPTS = 4


class Subscribing(Protocol):
    """What a subscription needs of its bus (``RedisBus``): connections set up like the
    bus's, its retry policy, and the set of open subscriptions it closes with itself."""

    _retry: RetryPolicy
    _rng: random.Random
    _subscriptions: set[Any]

    def _subscriber(self) -> AbstractConnection: ...


class RedisSubscription(BufferedSubscription):
    """(P)SUBSCRIBE on a dedicated connection, kept alive by a background receive loop."""

    def __init__(
        self,
        bus: Subscribing,
        pattern: str,
        maxsize: int,
        max_bytes: int,
        rate: ReadRate | None = None,
    ) -> None:
        super().__init__(pattern, maxsize, max_bytes, rate)
        self._bus = bus
        self._registered = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.reconnects = 0
        self._attempt = 0
        self._allowed = 0.0  # the read-rate bucket: when what was read may have been read
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # started by the first ready() / __anext__ inside a loop
        self._start()

    @property
    def _command(self) -> str:
        """``SUBSCRIBE`` for a plain channel name, ``PSUBSCRIBE`` for a glob. Same messages,
        but Redis ACLs check them differently: a SUBSCRIBE channel is matched against the
        user's channel patterns (``&dup:t:reply:*`` lets an edge hear its own reply channel,
        whatever its id), a PSUBSCRIBE pattern must equal one of them literally."""
        return "PSUBSCRIBE" if any(c in self.pattern for c in "*?[\\") else "SUBSCRIBE"

    def _start(self) -> None:
        if self._task is None and not self.closed:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name=f"redis-psubscribe:{self.pattern}"
            )

    @property
    def throttled(self) -> bool:
        return self._allowed > time.monotonic()

    async def ready(self) -> None:
        self._start()
        if self._registered.is_set() or self._task is None:
            return
        waiter = asyncio.ensure_future(self._registered.wait())
        # Wake up also if the loop dies, so a broken subscription cannot hang its caller.
        await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if not waiter.done():
            waiter.cancel()
            raise self._error or RuntimeError(f"subscription {self.pattern!r} is closed")

    async def __anext__(self) -> Message:
        self._start()
        return await super().__anext__()

    async def take(self, limit: int | None = None) -> list[Message]:
        self._start()
        return await super().take(limit)

    async def aclose(self) -> None:
        self._bus._subscriptions.discard(self)
        self._clear()
        self._finish()
        task, self._task = self._task, None
        if task is not None and not task.done():
            # Bounded: a cancellation swallowed below (redis-py, a Redis that stopped
            # answering) must not hang whoever closes us; the loop is then left behind.
            for _ in range(CLOSE_ATTEMPTS):
                task.cancel()
                done, _ = await asyncio.wait({task}, timeout=CLOSE_GRACE)
                if done:
                    break
            else:
                log.error("subscription %r would not stop; left behind", self.pattern)

    async def _run(self) -> None:
        self._attempt = 0  # reconnections since the last successful PSUBSCRIBE
        try:
            while not self.closed:
                connection = self._bus._subscriber()
                try:
                    await connection.connect()  # type: ignore[no-untyped-call]
                    await connection.send_command(self._command, self.pattern)
                    await self._receive(connection)
                except asyncio.CancelledError:
                    raise
                except TRANSIENT_ERRORS as exc:
                    # Also how Redis cutting us off looks (past client-output-buffer-limit
                    # pubsub): what it held for us is lost; the first retry is at once.
                    delay = self._bus._retry.delay(self._attempt, self._bus._rng)
                    self._attempt += 1
                    self.reconnects += 1
                    log.warning(
                        "subscription %r lost Redis (%s); resubscribing in %.2fs",
                        self.pattern,
                        exc,
                        delay,
                    )
                    await asyncio.sleep(delay)
                finally:
                    await quietly(connection.disconnect(nowait=True))
        except asyncio.CancelledError:
            raise
        except ResponseError as exc:  # refused (an ACL): one line, its subscriber reports it
            log.error("subscription %r refused by Redis: %s", self.pattern, exc)
            self._fail(exc)
        except Exception as exc:
            log.exception("subscription %r failed", self.pattern)
            self._fail(exc)

    async def _receive(self, connection: AbstractConnection) -> None:
        """Read replies off the subscribed connection until it fails. The connection speaks
        RESP2, where a message is a plain reply ``[b"pmessage", pattern, channel, data]``:
        read with ``Connection.read_response``, one message costs about a quarter of what
        ``PubSub.listen`` spends on it (its retry wrapper, observability hooks, RESP3 push
        handling and a dict per message), measured."""
        read = connection.read_response
        deliver = self._deliver
        now = time.monotonic
        rate = self.rate
        per_message = 0.0 if rate is None else 1.0 / rate.messages
        per_byte = 0.0 if rate is None else 1.0 / rate.bytes
        debt = 0.0  # seconds of reading at ``rate`` not yet paid for (``_pace``)
        n = 0
        while True:
            n += 1
            if n % YIELD_EVERY == 0 or debt > 0.01:  # buffered replies do not yield
                await self._pace(debt, rate)
                debt = 0.0
            reply = await read(timeout=math.inf)
            kind = reply[0]
            if kind == b"pmessage":
                data = reply[3]
                deliver(Message(reply[2].decode("utf-8", "replace"), data, now()))
            elif kind == b"message":
                data = reply[2]
                deliver(Message(reply[1].decode("utf-8", "replace"), data, now()))
            else:
                if kind == b"psubscribe" or kind == b"subscribe":
                    self._attempt = 0
                    self._registered.set()
                continue
            if rate is not None:
                debt += max(per_message, len(data) * per_byte)

    async def _pace(self, debt: float, rate: ReadRate | None) -> None:
        """Let other tasks run; past ``rate`` (a token bucket ``rate.burst`` s deep), sleep
        until what was read is within it: the unread messages queue in Redis meanwhile."""
        if rate is None:
            await asyncio.sleep(0)
            return
        now = time.monotonic()
        self._allowed = max(self._allowed, now - rate.burst) + debt
        await asyncio.sleep(max(0.0, self._allowed - now))
