"""``/ws`` as served by ``hub.serve.feedsocket``: no task per connection, keepalive by one sweep,
fragmented messages, ordered operator commands, the Starlette fallback speaking the same
protocol. Real uvicorn on loopback, real websockets clients."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import struct
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from hub.serve import feedsocket
from hub.serve import session as feedsession
from hub.serve.fanout import Fanout
from hub.serve.http import RunningServer, create_app, serve
from hub.serve.limits import Limits
from tests.test_server import AUTH, FakeSource


@contextlib.asynccontextmanager
async def running(source: FakeSource, **options: Any) -> AsyncIterator[RunningServer]:
    server = await serve(create_app(source, auth=AUTH, **options))
    try:
        yield server
    finally:
        await server.stop()


async def recv(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    return message


def server_tasks() -> int:
    """Tasks running uvicorn's or the hub's code (the websockets clients run their own)."""
    count = 0
    for task in asyncio.all_tasks():
        code = getattr(task.get_coro(), "cr_code", None)
        filename = code.co_filename if code is not None else ""
        count += "uvicorn" in filename or os.sep + "hub" + os.sep in filename
    return count


async def test_connections_hold_no_task_of_their_own() -> None:
    """100 subscribed clients: the server runs the same tasks as with one (the ASGI path ran
    one per connection), and every client gets each update."""
    source = FakeSource()
    source.put(("public", "standings"), {"n": 0})
    async with running(source) as server:
        first = await websockets.connect(server.ws_url, compression=None)
        await recv(first)
        await first.send(json.dumps({"op": "subscribe", "topics": ["standings"]}))
        await recv(first)
        with_one = server_tasks()
        clients = [await websockets.connect(server.ws_url, compression=None) for _ in range(100)]
        for ws in clients:
            assert (await recv(ws))["type"] == "hello"
            await ws.send(json.dumps({"op": "subscribe", "topics": ["standings"]}))
            assert (await recv(ws))["type"] == "snapshot"
        assert server_tasks() == with_one  # uvicorn's and ours: none more for 100 clients
        source.put(("public", "standings"), {"n": 1})
        for ws in [first, *clients]:
            delta = await recv(ws)
            assert delta["type"] == "delta" and delta["patch"] == [
                {"op": "replace", "path": "/n", "value": 1}
            ]
        for ws in [first, *clients]:
            await ws.close()


async def test_keepalive_pings_everyone_and_cuts_the_silent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(feedsocket, "PING_INTERVAL", 0.2)
    monkeypatch.setattr(feedsocket, "PONG_TIMEOUT", 0.1)
    source = FakeSource()
    async with running(source) as server:
        # a polite client answers pings (websockets does it by itself) and stays
        polite = await websockets.connect(server.ws_url, compression=None, ping_interval=None)
        await recv(polite)
        # a raw client that completes the handshake and then never sends a byte
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        received = b""
        with contextlib.suppress(ConnectionError):
            while chunk := await asyncio.wait_for(reader.read(4096), 5):
                received += chunk
        assert received.startswith(b"HTTP/1.1 101")
        assert b"\x89\x00" in received  # it was pinged before being cut
        assert (await polite.ping()) is not None  # still open, after 5+ intervals
        await asyncio.sleep(0.1)
        await polite.send(json.dumps({"op": "ping"}))
        assert (await recv(polite))["type"] == "pong"
        writer.close()
        await polite.close()


async def mute_client(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A raw client that completes the handshake and then never sends a byte."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    return reader, writer


def listeners(url: str, count: int, stop: threading.Event, out: dict[str, Any]) -> None:
    """``count`` listen-only clients on a loop of this thread's own (they answer pings while
    the server's loop is held up, as clients elsewhere would), until ``stop``: how many were
    closed, and how many were pinged."""

    async def main() -> None:
        clients = [
            await websockets.connect(url, compression=None, ping_interval=None)
            for _ in range(count)
        ]
        out["connected"] = len(clients)
        pings = [0] * count
        for n, ws in enumerate(clients):
            original = ws.protocol.receive_data  # count the pings each one answered

            def counting(data: bytes, n: int = n, original: Any = original) -> None:
                pings[n] += data.count(b"\x89\x00")
                original(data)

            ws.protocol.receive_data = counting  # type: ignore[method-assign]
        while not stop.is_set():
            await asyncio.sleep(0.05)
        out["closed"] = sum(ws.state is not websockets.protocol.State.OPEN for ws in clients)
        out["pinged"] = min(pings)
        for ws in clients:
            await ws.close()

    asyncio.run(main())


async def test_a_held_up_loop_cuts_no_client_that_answers_pings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue #30 item 2: the server's loop blocked on purpose, six times for 3 ping intervals
    each: none of 40 listen-only clients that answer pings is cut (the sweep cut any client
    silent for two intervals when its turn came, pinged or not); a client that never
    answers is cut."""
    monkeypatch.setattr(feedsocket, "PING_INTERVAL", 0.5)
    monkeypatch.setattr(feedsocket, "PONG_TIMEOUT", 0.25)
    monkeypatch.setattr(feedsocket, "KEEPALIVE_STEP", 0.02)
    source = FakeSource()
    async with running(source) as server:
        stop, out = threading.Event(), {}
        thread = threading.Thread(target=listeners, args=(server.ws_url, 40, stop, out))
        thread.start()
        try:
            while "connected" not in out:
                await asyncio.sleep(0.05)
            reader, writer = await mute_client(server.port)
            sweep = next(iter(source.fanout.clients)).sink.sweep
            for hold in (0.37, 0.61, 0.23, 0.89, 0.5, 0.05):
                await asyncio.sleep(hold)
                time.sleep(1.5)  # the whole loop held up: a long callback, a GC pause
            await asyncio.sleep(1.0)
            received = b""
            with contextlib.suppress(ConnectionError):
                while chunk := await asyncio.wait_for(reader.read(4096), 5):
                    received += chunk
            assert received.startswith(b"HTTP/1.1 101") and b"\x89\x00" in received
            writer.close()
        finally:
            stop.set()
            await asyncio.to_thread(thread.join, 30)
        assert out["closed"] == 0
        assert out["pinged"] >= 3  # each was pinged, and answered, all along
        assert sweep.cuts == 1  # the mute one
        for _ in range(200):  # the listeners' closes, read by the server's loop in its time
            if not source.fanout.clients:
                break
            await asyncio.sleep(0.05)
        assert len(source.fanout.clients) == 0


async def test_a_connection_reset_is_a_quiet_goodbye() -> None:
    """A client gone without a close frame (a TCP reset: venue Wi-Fi, a killed OBS) is removed
    without an error: no close frame is serialized for it (1006 may not be sent, and websockets
    refuses it), so no traceback per lost client reaches the loop's exception handler."""
    source = FakeSource()
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    try:
        async with running(source) as server:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            key = base64.b64encode(os.urandom(16)).decode()
            writer.write(
                (
                    f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                    f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
                ).encode()
            )
            assert (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)).startswith(
                b"HTTP/1.1 101"
            )
            await asyncio.wait_for(reader.read(64), 5)  # the hello
            assert len(source.fanout.clients) == 1
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()  # RST, no close frame
            for _ in range(100):
                if not source.fanout.clients:
                    break
                await asyncio.sleep(0.05)
            assert not source.fanout.clients
            await asyncio.sleep(0.1)
    finally:
        loop.set_exception_handler(None)
    assert errors == []


async def test_fragmented_message_is_one_request() -> None:
    source = FakeSource()
    source.put(("public", "standings"), {"n": 0})
    async with (
        running(source) as server,
        websockets.connect(server.ws_url, compression=None) as ws,
    ):
        await recv(ws)
        text = json.dumps({"op": "subscribe", "topics": ["standings"]})
        await ws.send(iter([text[:5], text[5:17], text[17:]]))  # three frames
        assert (await recv(ws))["type"] == "snapshot"


@pytest.mark.parametrize("raw", [True, False], ids=["feedsocket", "asgi"])
async def test_messages_after_a_command_are_answered_after_it_in_order(raw: bool) -> None:
    source = FakeSource()
    release = asyncio.Event()
    plain_control = source.control

    async def slow_control(command: dict[str, Any]) -> dict[str, Any]:
        await release.wait()
        return await plain_control(command)

    source.control = slow_control  # type: ignore[method-assign]
    async with running(source, raw_frames=raw) as server:
        url = f"{server.ws_url}?token=op-secret"
        async with websockets.connect(url, compression=None) as ws:
            await recv(ws)
            await ws.send(json.dumps({"op": "onair", "slot": "main", "value": {"deal": 1}}))
            await ws.send(json.dumps({"op": "ping"}))
            await ws.send(json.dumps({"op": "nonsense"}))
            with pytest.raises(TimeoutError):
                await recv(ws, timeout=0.3)  # nothing overtakes the command
            release.set()
            assert (await recv(ws)) == {"type": "ok", "op": "onair"}
            assert (await recv(ws)) == {"type": "pong"}
            assert (await recv(ws))["code"] == "bad_request"


@pytest.mark.parametrize("raw", [True, False], ids=["feedsocket", "asgi"])
async def test_both_transports_run_one_session_stack(
    raw: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``FeedSocket`` and the ASGI ``/ws`` hand every message to the same sans-I/O
    ``feedsession.Session``, so they answer alike: a command that fails inside the ingest is an
    ``internal_error`` answer and the session goes on (the ASGI loop used to die with it)."""
    received: list[bool] = []
    real = feedsession.Session.receive

    def spy(self: feedsession.Session, data: bytes | str, text: bool) -> None:
        received.append(text)
        real(self, data, text)

    monkeypatch.setattr(feedsession.Session, "receive", spy)
    source = FakeSource()

    async def broken_control(command: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("the ingest fell over")

    source.control = broken_control  # type: ignore[method-assign]
    async with running(source, raw_frames=raw) as server:
        ws = await websockets.connect(f"{server.ws_url}?token=op-secret")
        await recv(ws)
        await ws.send(json.dumps({"op": "clock", "action": "start"}))
        await ws.send(json.dumps({"op": "ping"}))
        failed = await recv(ws)
        assert (failed["code"], failed["op"]) == ("internal_error", "clock")
        assert await recv(ws) == {"type": "pong"}
        await ws.close()
    assert received == [True, True]


async def test_other_websocket_paths_are_404() -> None:
    async with running(FakeSource()) as server:
        with pytest.raises(websockets.InvalidStatus) as refused:
            await websockets.connect(f"ws://127.0.0.1:{server.port}/elsewhere")
        assert refused.value.response.status_code == 404


async def test_asgi_fallback_speaks_the_same_protocol() -> None:
    """``raw_frames=False``: Starlette's websocket route, the same sessions."""
    source = FakeSource()
    source.put(("public", "standings"), {"n": 0})
    async with running(source, raw_frames=False) as server:
        async with websockets.connect(server.ws_url, compression=None) as ws:
            assert (await recv(ws))["type"] == "hello"
            (client,) = source.fanout.clients
            assert type(client.sink).__name__ == "AsgiSink"
            await ws.send(json.dumps({"op": "subscribe", "topics": ["standings", "nope:1"]}))
            answers = [await recv(ws), await recv(ws)]
            assert {a["type"] for a in answers} == {"snapshot", "error"}
        async with websockets.connect(f"{server.ws_url}?token=wrong") as ws:
            assert (await recv(ws))["code"] == "unauthorized"


async def test_clock_commands_need_the_operator() -> None:
    source = FakeSource()
    async with running(source) as server:
        async with websockets.connect(server.ws_url) as public:
            await recv(public)
            await public.send(json.dumps({"op": "clock", "action": "start"}))
            assert (await recv(public))["code"] == "forbidden"
        async with websockets.connect(f"{server.ws_url}?token=op-secret") as operator:
            await recv(operator)
            await operator.send(json.dumps({"op": "clock", "action": "adjust", "seconds": 60}))
            assert (await recv(operator)) == {"type": "ok", "op": "clock"}
    assert source.commands == [{"op": "clock", "action": "adjust", "seconds": 60}]


def congestion_of(source: FakeSource) -> str:
    (client,) = source.fanout.clients
    sock = client.sink.transport.get_extra_info("socket")  # type: ignore[attr-defined]
    name: bytes = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    return name.rstrip(b"\0").decode()


@pytest.mark.skipif(not hasattr(socket, "TCP_CONGESTION"), reason="Linux only")
async def test_client_sockets_use_reno_unless_told_otherwise() -> None:
    """The feed's sockets use Reno (cheapest per packet; the feed never fills a window), and
    ``Limits(congestion="")`` keeps the system's choice."""
    system = Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    for limits, expected in ((Limits(), "reno"), (Limits(congestion=""), system)):
        source = FakeSource()
        source.fanout = Fanout(source.store, limits)
        async with running(source) as server:
            ws = await websockets.connect(server.ws_url, compression=None)
            assert (await recv(ws))["type"] == "hello"
            assert congestion_of(source) == expected
            await ws.close()
