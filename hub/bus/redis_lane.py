"""One lean, pipelined Redis connection for the commands the ingest sends per event.

At 60 tables each console event is a pass of its own (nothing to batch at one event a second
per table): its journal append, its acknowledgement, the feed's frames, each one round trip.
Through redis-py's asyncio client one round trip costs 140-240 µs of CPU (a task and a timer
per write for its socket timeout, a connection taken from the pool and given back, retry and
event-dispatch wrappers, measured); through this connection about 30: the commands are packed
by hiredis, written at once, and their replies parsed by hiredis's reader and handed to the
futures waiting for them, in order. ``hub.bus.redis.RedisBus`` sends its journal appends,
publishes and hash writes here and everything else through redis-py.

Failure behaviour is redis-py's, so the bus's retry policy (``hub.bus.redis_retry``) means the
same: a lost or refused connection fails every command in flight with redis-py's
``ConnectionError``, a reply that has not come within ``timeout`` with its ``TimeoutError``
(the connection is then dropped: a late reply must never answer the next command), an error
reply is returned as the exception redis-py makes of it (``NoPermissionError``...). The next
command connects again (login and database as the URL says). A caller that stops waiting
(cancelled) keeps its place in the queue, so replies stay matched to their commands.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

import hiredis
from redis._parsers.base import BaseParser
from redis.asyncio.connection import SSLConnection, parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["Lane", "address_for", "connect", "error_of", "lane_for", "login", "publishes"]

Command = Sequence[bytes | str | int | float]
P = TypeVar("P", bound=asyncio.Protocol)

# (hiredis's stub types its argument as a tuple of one; it packs a tuple of any length)
_pack: Callable[[tuple[Any, ...]], bytes] = hiredis.pack_command


HEADS = 4096  # channels whose PUBLISH head is remembered (``publishes``)


def publishes(messages: Sequence[tuple[str, bytes]], heads: dict[str, bytes]) -> bytes:
    """One ``PUBLISH`` per (channel, data), packed as ``hiredis.pack_command`` packs it, byte
    for byte, without its C formatting of every length (``sprintf``: ~7,000 instructions a
    command): the part before the data's length is the same for every message on a channel,
    remembered in ``heads``; only bytes data and str channels (anything else: hiredis)."""
    parts: list[bytes] = []
    add = parts.extend
    for channel, data in messages:
        head = heads.get(channel)
        if head is None:
            if type(channel) is not str:
                return b"".join([_pack(("PUBLISH", c, d)) for c, d in messages])
            name = channel.encode()
            if len(heads) >= HEADS:  # channel names may come from the wire: keep it bounded
                heads.clear()
            head = heads[channel] = b"*3\r\n$7\r\nPUBLISH\r\n$%d\r\n%b\r\n$" % (len(name), name)
        if type(data) is not bytes:
            return b"".join([_pack(("PUBLISH", c, d)) for c, d in messages])
        add((head, b"%d\r\n" % len(data), data, b"\r\n"))
    return b"".join(parts)


class _Pending:
    """The replies one ``execute`` waits for."""

    __slots__ = ("future", "left", "replies", "sent")

    def __init__(self, future: asyncio.Future[list[Any]], count: int, sent: float) -> None:
        self.future = future
        self.left = count
        self.replies: list[Any] = []
        self.sent = sent


def error_of(reply: Exception) -> Any:
    """An error reply as redis-py's parsers make it (``NOPERM``: ``NoPermissionError``,
    ``NOSCRIPT``: ``NoScriptError``...)."""
    return BaseParser.parse_error(str(reply))  # type: ignore[no-untyped-call]


class _Protocol(asyncio.Protocol):
    def __init__(self, lane: Lane) -> None:
        self.lane = lane
        self.reader = hiredis.Reader(replyError=ResponseError)
        self.dropped = False  # failed once: whatever it says later answers nothing

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # (uvloop's is not a subclass)

    def data_received(self, data: bytes) -> None:
        if self.dropped:
            return
        self.reader.feed(data)
        pending = self.lane._pending
        try:
            while (reply := self.reader.gets()) is not False:
                if not pending:  # a reply nobody asked for: the stream is out of step
                    raise hiredis.ProtocolError("unexpected reply")
                waiting = pending[0]
                if isinstance(reply, Exception):
                    reply = error_of(reply)
                waiting.replies.append(reply)
                waiting.left -= 1
                if not waiting.left:
                    pending.popleft()
                    if not waiting.future.done():
                        waiting.future.set_result(waiting.replies)
        except hiredis.ProtocolError as exc:
            self.lane._drop(self, RedisConnectionError(f"Redis protocol error: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        detail = f": {exc}" if exc else ""
        self.lane._drop(self, RedisConnectionError(f"Connection closed by server{detail}."))


class Lane:
    """A single pipelined connection (module docstring); ``execute`` sends commands in one
    write and returns their replies in order."""

    def __init__(
        self,
        address: dict[str, Any],
        *,
        timeout: float = 5.0,
        connect_timeout: float = 2.0,
    ) -> None:
        self.address = address  # host/port or path; username, password, db
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._protocol: _Protocol | None = None
        self._connecting: asyncio.Future[_Protocol] | None = None
        self._pending: collections.deque[_Pending] = collections.deque()
        self._live: _Protocol | None = None  # the connection the commands in flight are on
        self._watch: asyncio.TimerHandle | None = None
        self._heads: dict[str, bytes] = {}  # channel -> its PUBLISH's packed head (publishes)

    def execute(self, commands: Sequence[Command]) -> Awaitable[list[Any]]:
        """Every command's reply, in order (an error reply as its exception, not raised).
        Connected, the commands are written now and their replies' future returned (no
        coroutine made per call: the caller awaits it at once, as it awaited ``execute``)."""
        protocol = self._protocol
        if protocol is None:
            return self._connected(lambda p: self._send(p, commands))
        return self._send(protocol, commands)

    async def _connected(self, send: Callable[[_Protocol], asyncio.Future[list[Any]]]) -> list[Any]:
        """``send`` once connected (``_connect``)."""
        return await send(await self._connect())

    async def call(self, *command: bytes | str | int | float) -> Any:
        """One command's reply; an error reply is raised."""
        (reply,) = await self.execute([command])
        if isinstance(reply, Exception):
            raise reply
        return reply

    def publish(self, messages: Sequence[tuple[str, bytes]]) -> Awaitable[list[Any]]:
        """``execute`` of one ``PUBLISH`` per message, written as hiredis packs them (the
        same bytes: ``publishes``)."""
        protocol = self._protocol
        if protocol is None:
            return self._connected(lambda p: self._publish(p, messages))
        return self._publish(protocol, messages)

    def _publish(
        self, protocol: _Protocol, messages: Sequence[tuple[str, bytes]]
    ) -> asyncio.Future[list[Any]]:
        return self._write(protocol, publishes(messages, self._heads), len(messages))

    def _send(self, protocol: _Protocol, commands: Sequence[Command]) -> asyncio.Future[list[Any]]:
        if len(commands) == 1:
            data = _pack(tuple(commands[0]))
        else:
            data = b"".join([_pack(tuple(c)) for c in commands])
        return self._write(protocol, data, len(commands))

    def _write(self, protocol: _Protocol, data: bytes, count: int) -> asyncio.Future[list[Any]]:
        """``data``, ``count`` commands packed, written at once; the future of their replies."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Any]] = loop.create_future()
        self._pending.append(_Pending(future, count, loop.time()))
        self._live = protocol
        protocol.transport.write(data)
        if self._watch is None:
            self._watch = loop.call_later(self.timeout, self._check)
        return future

    async def _connect(self) -> _Protocol:
        """Connect (one attempt shared by every caller meanwhile), log in, pick the database."""
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._open())
        connecting = self._connecting
        try:
            return await asyncio.shield(connecting)
        finally:
            if connecting.done() and self._connecting is connecting:
                self._connecting = None

    async def _open(self) -> _Protocol:
        protocol = await connect(self.address, lambda: _Protocol(self), self.connect_timeout)
        setup = login(self.address)
        if setup:
            try:
                replies = await self._send(protocol, setup)
            except BaseException:
                protocol.transport.abort()
                raise
            for reply in replies:
                if isinstance(reply, Exception):
                    protocol.transport.abort()
                    raise RedisConnectionError(f"Redis refused the connection's setup: {reply}")
        self._protocol = protocol
        return protocol

    def _check(self) -> None:
        """The watchdog: the oldest command waiting past ``timeout`` drops the connection."""
        self._watch = None
        if not self._pending:
            return
        loop = asyncio.get_running_loop()
        late = self._pending[0].sent + self.timeout - loop.time()
        if late <= 0:
            if self._live is not None:
                self._drop(self._live, RedisTimeoutError("Timeout reading from Redis"))
            return
        self._watch = loop.call_later(late, self._check)

    def _drop(self, protocol: _Protocol, exc: Exception) -> None:
        """``protocol``'s connection is unusable: every command in flight fails with ``exc``."""
        if protocol.dropped:  # (its own connection_lost, after we dropped it)
            return
        protocol.dropped = True
        if self._protocol is protocol:
            self._protocol = None
        if self._live is not protocol:  # the commands in flight are on another connection
            protocol.transport.abort()
            return
        self._live = None
        pending, self._pending = self._pending, collections.deque()
        for waiting in pending:
            if not waiting.future.done():
                waiting.future.set_exception(exc)
        protocol.transport.abort()

    def close(self) -> None:
        """Close the connection; commands in flight fail (``ConnectionError``)."""
        protocol = self._protocol
        if protocol is not None:
            self._drop(protocol, RedisConnectionError("Connection closed by the client."))
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None


def address_for(url: str) -> dict[str, Any]:
    """Where the Redis at ``url`` is and how to log in: ``host``/``port`` or ``path``,
    ``username``, ``password``, ``db``; for a ``rediss://`` URL also ``ssl``, the context
    redis-py makes of the URL's ``ssl_*`` options."""
    address: dict[str, Any] = dict(parse_url(url))
    kind = address.pop("connection_class", None)
    if kind is SSLConnection:
        options = {name: address.pop(name) for name in list(address) if name.startswith("ssl_")}
        address["ssl"] = SSLConnection(**options).ssl_context.get()
    return address


def login(address: dict[str, Any]) -> list[Command]:
    """The commands that set up a new connection to ``address``: AUTH, SELECT (none if the
    URL gives neither a password nor a database)."""
    setup: list[Command] = []
    if address.get("password") is not None:
        user = address.get("username")
        password = address["password"]
        setup.append(("AUTH", user, password) if user else ("AUTH", password))
    if address.get("db"):
        setup.append(("SELECT", int(address["db"])))
    return setup


async def connect(address: dict[str, Any], factory: Callable[[], P], timeout: float) -> P:
    """A connection to ``address`` (``address_for``) read by ``factory()``'s protocol, within
    ``timeout`` seconds; redis-py's ``ConnectionError`` if it cannot be made."""
    loop = asyncio.get_running_loop()
    try:
        if "path" in address:
            opening = loop.create_unix_connection(factory, address["path"])
        else:
            host, port = address.get("host", "localhost"), address.get("port", 6379)
            opening = loop.create_connection(factory, host, port, ssl=address.get("ssl"))
        _, protocol = await asyncio.wait_for(opening, timeout)
    except (TimeoutError, OSError) as exc:
        raise RedisConnectionError(f"Error connecting to Redis: {exc}") from None
    return protocol


def lane_for(url: str, *, timeout: float = 5.0, connect_timeout: float = 2.0) -> Lane | None:
    """A lane to the Redis at ``url``; None for a TLS URL (redis-py alone sends commands over
    TLS here)."""
    address = address_for(url)
    if "ssl" in address:
        return None
    return Lane(address, timeout=timeout, connect_timeout=connect_timeout)
