"""A Redis (P)SUBSCRIBE on a connection of its own, kept alive through Redis outages and
read at a bounded rate (``hub.bus.redis`` gives the failure policy).

The connection is read by an ``asyncio.Protocol``: what arrives is parsed by hiredis's reader
in ``data_received`` and every message goes straight into the subscription's buffer, no task,
stream reader or coroutine per message (as ``hub.bus.redis_lane`` reads its replies). A task
per subscription only connects, logs in, subscribes and waits for the connection to end.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import time
from collections.abc import Callable
from typing import Any, Protocol, cast

import hiredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from hub.bus.base import BufferedSubscription, Message, ReadRate
from hub.bus.redis_lane import connect, error_of, login
from hub.bus.redis_retry import TRANSIENT_ERRORS, RetryPolicy

__all__ = ["CLOSE_ATTEMPTS", "CLOSE_GRACE", "RedisSubscription"]

log = logging.getLogger("hub.bus.redis")

YIELD_EVERY = 64
"""Messages a connection's reader parses in one go before it lets the event loop run other
callbacks (reading paused meanwhile): one chunk read off a flooded connection holds hundreds
of messages, which would otherwise hold the loop, and every other table's subscription, for
tens of ms."""
PAY_EVERY = 0.01
"""Seconds of reading at the ``ReadRate`` a connection runs up before it checks the bucket."""
CONNECT_TIMEOUT = 2.0  # seconds, as the bus's own connections (``RedisBus._client``)
KEEPALIVE = {"TCP_KEEPIDLE": 30, "TCP_KEEPINTVL": 5, "TCP_KEEPCNT": 3}
"""TCP keepalive of a subscribed connection (redis-py's defaults, which it had before): a
quiet table's connection to a Redis that vanished is found dead within a minute."""
CLOSE_GRACE = 0.25  # seconds a stopping subscription loop gets per cancellation
CLOSE_ATTEMPTS = 4

_pack: Callable[[tuple[Any, ...]], bytes] = hiredis.pack_command


class Subscribing(Protocol):
    """What a subscription needs of its bus (``RedisBus``): where Redis is and how to log in
    (``hub.bus.redis_lane.address_for``), its retry policy, and the set of open
    subscriptions it closes with itself."""

    _retry: RetryPolicy
    _rng: random.Random
    _subscriptions: set[Any]

    def _subscriber(self) -> dict[str, Any]: ...


class _Reader(asyncio.Protocol):
    """One subscribed connection. Its replies, in order: one per login command, then the
    (P)SUBSCRIBE confirmation, then the messages (RESP2: ``[b"pmessage", pattern, channel,
    data]`` or ``[b"message", channel, data]``). ``ended`` gets the error that ends it."""

    def __init__(self, sub: RedisSubscription, setup: int) -> None:
        self.sub = sub
        self.reader = hiredis.Reader(replyError=ResponseError)
        self.setup = setup  # login replies still to come
        self.ended: asyncio.Future[BaseException] = asyncio.get_running_loop().create_future()
        self.debt = 0.0  # seconds of reading at the sub's rate not yet paid for (``_pace``)
        self.paused = False  # reading paused: the reader holds replies not parsed yet
        self.later: asyncio.Handle | None = None  # when parsing them goes on
        rate = sub.rate
        self.per_message = 0.0 if rate is None else 1.0 / rate.messages
        self.per_byte = 0.0 if rate is None else 1.0 / rate.bytes

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # (uvloop's is not a subclass)
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            for name, value in KEEPALIVE.items():
                if hasattr(socket, name):
                    sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)

    def data_received(self, data: bytes) -> None:
        if self.ended.done():
            return
        self.reader.feed(data)
        if not self.paused:
            self._parse()

    def connection_lost(self, exc: Exception | None) -> None:
        detail = f": {exc}" if exc else ""
        self.end(RedisConnectionError(f"Connection closed by server{detail}."))

    def end(self, error: BaseException) -> None:
        """Stop reading and close the connection; ``error`` ends it (its task raises it, if
        it still waits: a cancelled task has cancelled ``ended``)."""
        if self.later is not None:
            self.later.cancel()
            self.later = None
        if not self.ended.done():
            self.ended.set_result(error)
        if not self.transport.is_closing():
            self.transport.abort()

    def _go_on(self) -> None:
        self.later = None
        if not self.ended.done():
            self._parse()

    def _parse(self) -> None:
        """Hand what the reader holds to the subscription, ``YIELD_EVERY`` messages at most;
        then, or past the subscription's rate, pause reading and go on later."""
        sub = self.sub
        gets = self.reader.gets
        deliver = sub._deliver
        now = time.monotonic
        per_message, per_byte = self.per_message, self.per_byte
        n = 0
        try:
            while True:
                if n == YIELD_EVERY or self.debt > PAY_EVERY:
                    wait = sub._pace(self.debt)
                    self.debt = 0.0
                    if n == YIELD_EVERY or wait > 0:
                        if not self.paused:
                            self.paused = True
                            self.transport.pause_reading()
                        loop = asyncio.get_running_loop()
                        if wait > 0:
                            self.later = loop.call_later(wait, self._go_on)
                        else:
                            self.later = loop.call_soon(self._go_on)
                        return
                reply = gets()
                if reply is False:
                    break
                if isinstance(reply, Exception):
                    self.end(error_of(reply))  # a refused login or (P)SUBSCRIBE (an ACL)
                    return
                if self.setup:
                    self.setup -= 1
                    continue
                kind = reply[0]
                if kind == b"pmessage":
                    data = reply[3]
                    deliver(Message(reply[2].decode("utf-8", "replace"), data, now()))
                elif kind == b"message":
                    data = reply[2]
                    deliver(Message(reply[1].decode("utf-8", "replace"), data, now()))
                else:
                    if kind == b"psubscribe" or kind == b"subscribe":
                        sub._subscribed()
                    continue
                n += 1
                if per_message:
                    self.debt += max(per_message, len(data) * per_byte)
        except hiredis.ProtocolError as exc:
            self.end(RedisConnectionError(f"Redis protocol error: {exc}"))
            return
        except Exception as exc:  # a bug: ends the subscription, logged with its traceback
            self.end(exc)
            return
        if self.paused:
            self.paused = False
            self.transport.resume_reading()


class RedisSubscription(BufferedSubscription):
    """(P)SUBSCRIBE on a dedicated connection, read by a protocol (module docstring) and kept
    alive by a background task."""

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
            # Bounded, whatever happens to the cancellation: whoever closes us never hangs.
            for _ in range(CLOSE_ATTEMPTS):
                task.cancel()
                done, _ = await asyncio.wait({task}, timeout=CLOSE_GRACE)
                if done:
                    break
            else:
                log.error("subscription %r would not stop; left behind", self.pattern)

    def _subscribed(self) -> None:
        self._attempt = 0
        self._registered.set()

    async def _run(self) -> None:
        self._attempt = 0  # reconnections since the last successful PSUBSCRIBE
        try:
            while not self.closed:
                reader: _Reader | None = None
                try:
                    reader = await self._connect()
                    raise await reader.ended
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
                    if reader is not None:
                        reader.end(RedisConnectionError("Connection closed by the client."))
        except asyncio.CancelledError:
            raise
        except ResponseError as exc:  # refused (an ACL): one line, its subscriber reports it
            log.error("subscription %r refused by Redis: %s", self.pattern, exc)
            self._fail(exc)
        except Exception as exc:
            log.exception("subscription %r failed", self.pattern)
            self._fail(exc)

    async def _connect(self) -> _Reader:
        """Connect, then log in, pick the database and (P)SUBSCRIBE in one write; the
        replies are the reader's to check."""
        address = self._bus._subscriber()
        setup = login(address)
        reader = await connect(address, lambda: _Reader(self, len(setup)), CONNECT_TIMEOUT)
        commands = [*setup, (self._command, self.pattern)]
        reader.transport.write(b"".join([_pack(tuple(command)) for command in commands]))
        return reader

    def _pace(self, debt: float) -> float:
        """Pay ``debt`` seconds of reading into the read-rate bucket (``rate.burst`` s deep);
        how long to wait before reading on (0: at once). Meanwhile the unread messages queue
        in Redis."""
        rate = self.rate
        if rate is None:
            return 0.0
        now = time.monotonic()
        self._allowed = max(self._allowed, now - rate.burst) + debt
        return self._allowed - now
