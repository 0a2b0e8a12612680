"""``/ws``: a websocket connection with no task of its own.

``FeedSocket`` is one connection as a plain ``asyncio.Protocol``: uvicorn hands it each
websocket upgrade (its documented ``ws`` setting takes a protocol class, ``protocol(service)``),
websockets' sans-I/O ``ServerProtocol`` does the handshake and reads what the client sends, the
connection's ``Session`` (hub.serve.session) answers it under the rules of the ``FeedService``
(hub.serve.service), and the fan-out writes the frames it built once per update straight to the
transport.

Why not uvicorn's own websocket protocol and an ASGI endpoint: that runs a task, an ASGI scope
and a receive queue per connection, ~30 KiB each at 10,000 idle clients, and wraps each write in
an await. A ``FeedSocket`` is the protocol object, the sans-I/O parser and the fan-out's
``Client``: it costs nothing between messages, and keepalive is one sweep over all
connections (one ping frame, built once, ``Keepalive``), not a timer each.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import socket
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol
from urllib.parse import parse_qs

from websockets.datastructures import Headers
from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

from hub.serve.fanout import Fanout
from hub.serve.feedclient import Client
from hub.serve.proxies import TrustedProxies
from hub.serve.session import Session
from hub.wire.codec import to_json
from hub.wire.frames import Outgoing, build_frame

__all__ = ["Admission", "FeedSocket", "Keepalive", "protocol"]

wire_log = logging.getLogger(f"{__name__}.wire")
"""websockets' own per-connection messages ("connection open", "closed"): one line per client
is noise at 10,000 clients; warnings and errors still show (set its level to see the rest)."""
wire_log.setLevel(logging.WARNING)

MAX_MESSAGE = 1 << 16
"""Largest message a client may send (a subscribe to every topic is a few KiB)."""

PING_INTERVAL = 20.0
"""Keepalive: every connection gets a ping this often (its turn in the sweep comes this often
when the loop keeps time; later when it is loaded)."""

PONG_TIMEOUT = 30.0
"""A ping that nothing answered (no pong, no message) this long after it was sent: the
connection is cut at its next turn. Only a ping sent and unanswered counts, never silence by
itself: a listen-only client whose turn came late under load was cut ~40 s after it connected,
before it had ever been pinged (issue #30 item 2)."""

KEEPALIVE_STEP = 0.1
"""The pings of one interval are spread over it in steps this long: answering a pong costs
~40 us in the sans-I/O parser, so 10,000 pings at once would stall the fan-out ~0.5 s (seen in
the edge bench as the p99); spread, each step pings and hears ~50 of them."""

CLOSE_TIMEOUT = 5.0
"""After our close frame (or the client's), the TCP connection is cut if still open then."""

_PING = Frame(Opcode.PING, b"").serialize(mask=False)  # the same bytes for everyone


class Admission(Protocol):
    """What a connection asks of its service (``hub.serve.service.FeedService``): whether and as
    whom it may join the fan-out, and the session that then answers it."""

    proxies: TrustedProxies
    fanout: Fanout

    def origin_allowed(self, origin: str | None, host: str | None, address: str | None) -> bool: ...

    def admit(self, query: Mapping[str, str], address: str | None) -> tuple[Any, str, Any]: ...

    def join(
        self,
        sink: Any,
        role: Any,
        fmt: str,
        address: str | None,
        query: Mapping[str, str] | None = None,
    ) -> Client: ...

    def start(self, client: Client) -> Session: ...


class Keepalive:
    """The raw connections of one service and their keepalive: one sweep over all of them
    (one ping frame, built once), not a timer each."""

    def __init__(self) -> None:
        self.sockets: set[FeedSocket] = set()
        self.cuts = 0  # connections cut for a ping they never answered
        self._keepalive: asyncio.Task[None] | None = None

    def watch(self, sock: FeedSocket) -> None:
        self.sockets.add(sock)
        if self._keepalive is None or self._keepalive.done():
            self._keepalive = asyncio.get_running_loop().create_task(
                self._keep_alive(), name="ws-keepalive"
            )

    async def _keep_alive(self) -> None:
        """One ping frame to every open connection per interval, a few connections at a time
        (``KEEPALIVE_STEP``). A connection whose last ping went unanswered for
        ``PONG_TIMEOUT`` is a suspect at its turn, and cut at the next step only if still
        nothing came from it: the loop has polled its sockets in between, so a pong that
        waited in the kernel while the loop was held up (a long callback, a GC pause) has
        been read by then. Stops with the last connection."""
        ring: list[FeedSocket] = []
        suspects: list[FeedSocket] = []
        i = 0
        while self.sockets:
            await asyncio.sleep(KEEPALIVE_STEP)
            now = time.monotonic()
            for sock in suspects:
                if sock in self.sockets and sock.expire():
                    self.cuts += 1
            suspects = []
            if i >= len(ring):
                ring, i = list(self.sockets), 0
            share = max(1, math.ceil(len(ring) * KEEPALIVE_STEP / PING_INTERVAL))
            for sock in ring[i : i + share]:
                if sock in self.sockets and sock.keepalive(now):
                    suspects.append(sock)
            i += share

    async def stop(self) -> None:
        task = self._keepalive
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def protocol(service: Admission) -> type[FeedSocket]:
    """The protocol class for uvicorn's ``ws`` setting, bound to ``service``, with a keepalive
    of its own (``FeedSocket.sweep``; stop it with the server)."""
    bound = {"service": service, "sweep": Keepalive(), "__slots__": ()}
    return type("FeedSocket", (FeedSocket,), bound)


def set_sndbuf(transport: asyncio.BaseTransport, size: int) -> None:
    """Cap the kernel send buffer of a client socket. Autotuned, it grows to megabytes that a
    reader which stopped fills for seconds before the server can notice; capped, a stalled
    reader shows in the transport buffer within ``size`` bytes and the kernel memory held for
    it is bounded. (128 KiB still carries ~100 MB/s at 1 ms RTT, ~1 MB/s at 100 ms.)"""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)


def set_congestion(transport: asyncio.BaseTransport, name: str) -> None:
    """Choose a client socket's TCP congestion control (Linux; elsewhere, or if the kernel
    does not allow ``name`` to this process, the system's stays). The feed is frames of a few
    hundred bytes to a few KiB at most tens of times a second: the congestion window never
    limits it, and Reno (which Linux allows every process) costs the least per packet. BBR, a
    common system default, keeps a model updated on every ACK and paces every packet; with
    10,000 clients on loopback at 10 Hz, Reno took the two-edge p99 from 50-52 to 42-43 ms
    (docs/performance.md)."""
    option = getattr(socket, "TCP_CONGESTION", None)
    sock = transport.get_extra_info("socket")
    if option is None or sock is None or not name:
        return
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.IPPROTO_TCP, option, name.encode())


class FeedSocket(asyncio.Protocol):
    """One ``/ws`` connection, and the fan-out's sink for it (``raw``: it takes whole frames
    synchronously). Built by uvicorn with the upgrade request already read; see the module
    docstring. ``protocol(service)`` binds the class to a service."""

    service: ClassVar[Admission]
    sweep: ClassVar[Keepalive]
    raw = True
    __slots__ = (
        "_closer",
        "_fragments",
        "_paused",
        "_server_state",
        "client",
        "conn",
        "last_seen",
        "pinged",
        "session",
        "transport",
    )

    def __init__(
        self,
        config: Any = None,
        server_state: Any = None,
        app_state: Any = None,
        _loop: Any = None,
    ) -> None:
        self._server_state = server_state
        self.conn = ServerProtocol(max_size=MAX_MESSAGE, logger=wire_log)
        self.transport: asyncio.Transport | None = None
        self.client: Client | None = None
        self.session: Session | None = None
        self.last_seen = time.monotonic()  # when it last sent anything (a pong included)
        self.pinged: float | None = None  # when our last ping was sent
        self._fragments: list[bytes] | None = None
        self._closer: asyncio.TimerHandle | None = None
        self._paused = False  # flow control: the transport's buffer is above high water

    # -- asyncio.Protocol --

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no subclass
        if self._server_state is not None:
            self._server_state.connections.add(self)
        self.sweep.watch(self)
        limits = self.service.fanout.limits
        if limits.sndbuf:
            set_sndbuf(transport, limits.sndbuf)
        set_congestion(transport, limits.congestion)
        # pause_writing above the fan-out's high-water mark (the client leaves the direct
        # path), resume_writing once half of that has drained
        transport.set_write_buffer_limits(  # type: ignore[attr-defined]
            high=limits.high_water, low=limits.high_water // 2
        )

    def data_received(self, data: bytes) -> None:
        self.last_seen = time.monotonic()
        conn = self.conn
        conn.receive_data(data)
        for event in conn.events_received():
            if isinstance(event, Frame):
                self._frame(event)
            elif isinstance(event, Request):
                self._handshake(event)
        self._write_protocol_output()

    def pause_writing(self) -> None:
        self._paused = True
        if self.client is not None:
            self.client.sink_changed()

    def resume_writing(self) -> None:
        self._paused = False
        if self.client is not None:
            self.client.sink_changed()

    def eof_received(self) -> bool | None:
        self.conn.receive_eof()
        self._write_protocol_output()
        return None  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        if self._server_state is not None:
            self._server_state.connections.discard(self)
        self.sweep.sockets.discard(self)
        if self._closer is not None:
            self._closer.cancel()
            self._closer = None
        if self.client is not None:
            self.client.close(1006, "connection lost")

    def shutdown(self) -> None:
        """uvicorn's server is stopping: a close frame (1012), then the TCP close."""
        if self.conn.state is State.OPEN:
            self.close(1012, "server restarting")
        elif self.transport is not None:
            self.transport.close()
            self._closing()

    # -- the fan-out's sink --

    def is_open(self) -> bool:
        t = self.transport
        return self.conn.state is State.OPEN and t is not None and not t.is_closing()

    def buffered(self) -> int:
        t = self.transport
        return 0 if t is None else t.get_write_buffer_size()

    def write(self, data: bytes) -> None:
        if self.is_open():
            self.transport.write(data)  # type: ignore[union-attr]

    def writer(self) -> Callable[[bytes], None] | None:
        t = self.transport
        if self._paused or t is None or self.conn.state is not State.OPEN or t.is_closing():
            return None
        return t.write

    async def send(self, out: Outgoing) -> None:
        self.write(out.frame)

    def close(self, code: int, reason: str) -> None:
        """A close frame after what is already queued, then the TCP close once the client
        answers or ``CLOSE_TIMEOUT`` passes; a client that stopped reading is cut off
        after ``limits.close_grace`` with no progress. Nothing for a connection already lost
        (``connection_lost`` closes its client with 1006, a code no frame may carry)."""
        if self.conn.state is not State.OPEN or not self.is_open():
            return
        self.conn.send_close(code, reason[:120])
        self._write_protocol_output()

    def unanswered(self) -> bool:
        """Our last ping has had no answer (nothing at all came after it)."""
        return self.pinged is not None and self.last_seen < self.pinged

    def keepalive(self, now: float) -> bool:
        """Its turn in the sweep: a ping, unless the last one is still unanswered; True (a
        suspect) when that one has been for ``PONG_TIMEOUT``."""
        if self.unanswered():
            # A ping still queued behind frames the client has not read yet has not reached
            # it: whether it reads at all is the fan-out's to judge (feedclient's slow rule)
            late = now - self.pinged > PONG_TIMEOUT  # type: ignore[operator]
            return late and not self.buffered()
        if self.is_open():
            self.transport.write(_PING)  # type: ignore[union-attr]
            self.pinged = now
        return False

    def expire(self) -> bool:
        """Cut a suspect still silent since its ping (no close frame: it is not reading);
        True if it was cut."""
        if self.unanswered() and self.transport is not None and not self.buffered():
            self.transport.abort()
            self._closing()
            return True
        return False

    # -- internals --

    def _write_protocol_output(self) -> None:
        """What the sans-I/O protocol wants sent (handshake response, pong, close frame);
        an empty item means: end of stream."""
        transport = self.transport
        if transport is None:
            return
        for data in self.conn.data_to_send():
            if data:
                transport.write(data)
            elif not transport.is_closing():
                if self.conn.state is State.CLOSED:
                    transport.close()
                elif transport.can_write_eof():
                    transport.write_eof()
        if self.conn.state is not State.OPEN:
            self._closing()
        if self.conn.close_expected() and self._closer is None:
            loop = asyncio.get_running_loop()
            self._closer = loop.call_later(CLOSE_TIMEOUT, transport.abort)
            grace = self.service.fanout.limits.close_grace
            _abort_unless_draining(transport, grace)

    def _closing(self) -> None:
        """No more frames straight to the transport (the fan-out's direct path)."""
        if self.client is not None and self.client.direct is not None:
            self.client.sink_changed()

    def _handshake(self, request: Request) -> None:
        service = self.service
        conn = self.conn
        path, _, query_string = request.path.partition("?")
        if path != "/ws":
            conn.send_response(conn.reject(404, "no websocket endpoint here\n"))
            return
        origin = request.headers.get("Origin")
        peer = self.transport.get_extra_info("peername") if self.transport else None
        peer_ip = peer[0] if isinstance(peer, tuple) else None
        address, host = service.proxies.identify(peer_ip, request.headers)
        if not service.origin_allowed(origin, host, address):
            body = to_json({"error": "forbidden_origin", "message": f"origin {origin} not allowed"})
            headers = Headers(
                [
                    ("Content-Type", "application/json"),
                    ("Content-Length", str(len(body))),
                    ("Connection", "close"),
                ]
            )
            conn.send_response(Response(403, "Forbidden", headers, body))
            return
        conn.send_response(conn.accept(request))
        if conn.state is not State.OPEN:
            return  # not a valid websocket handshake: websockets answered it (400/426)
        query = {k: v[0] for k, v in parse_qs(query_string).items()}
        role, fmt, problem = service.admit(query, address)
        if problem is not None:
            self._write_protocol_output()  # the 101 response first
            message = Outgoing.encode(problem, "msgpack" if fmt == "msgpack" else "json")
            self.transport.write(build_frame(message.payload, message.text))  # type: ignore[union-attr]
            self.close(1008, problem["message"])
            return
        self.client = service.join(self, role, fmt, address, query)
        self._write_protocol_output()  # the 101 response before the hello
        self.session = service.start(self.client)

    def _frame(self, frame: Frame) -> None:
        opcode = frame.opcode
        if opcode is Opcode.TEXT or opcode is Opcode.BINARY:
            if not frame.fin:
                self._fragments = [bytes(frame.data), b"t" if opcode is Opcode.TEXT else b"b"]
                return
            self._message(bytes(frame.data), opcode is Opcode.TEXT)
        elif opcode is Opcode.CONT and self._fragments is not None:
            self._fragments.insert(-1, bytes(frame.data))
            if frame.fin:
                parts, self._fragments = self._fragments, None
                self._message(b"".join(parts[:-1]), parts[-1] == b"t")

    def _message(self, data: bytes, text: bool) -> None:
        if self.session is not None:
            self.session.receive(data, text)


def _abort_unless_draining(transport: asyncio.WriteTransport, grace: float) -> None:
    """Abort a closing transport once its buffer made no progress for ``grace`` seconds."""
    loop = asyncio.get_running_loop()

    def check(before: int) -> None:
        if transport.is_closing() or before:
            now = transport.get_write_buffer_size()
            if not now:
                return
            if now < before:
                loop.call_later(grace, check, now)
            else:
                transport.abort()

    loop.call_later(grace, check, transport.get_write_buffer_size())
