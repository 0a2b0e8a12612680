"""``hub.serve.httpguard``: incomplete HTTP requests are bounded in time and in number, in a real
uvicorn (``hub.serve.http.serve``) over loopback; complete requests and websockets are untouched."""

from __future__ import annotations

import asyncio
import json
import resource
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import websockets

from hub.serve.http import RunningServer, create_app, serve
from tests.redis_server import RedisServer, free_port
from tests.test_server import AUTH, FakeSource

HALF = b"GET /healthz HTTP/1.1\r\nHost: x\r\n"  # no blank line: the head never ends


@pytest.fixture
async def guarded(request: pytest.FixtureRequest) -> AsyncIterator[RunningServer]:
    timeout, limit = getattr(request, "param", (1.0, 8))
    running = await serve(
        create_app(FakeSource(), auth=AUTH), request_timeout=timeout, max_pending=limit
    )
    try:
        yield running
    finally:
        await running.stop()


async def half_sent(server: RunningServer, data: bytes = HALF) -> asyncio.StreamReader:
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(data)
    await writer.drain()
    reader.writer = writer  # type: ignore[attr-defined]  # kept alive with the reader
    return reader


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> float:
    """Seconds until the server closed the connection (EOF or reset); fails past ``seconds``."""
    start = time.monotonic()
    try:
        while await asyncio.wait_for(reader.read(4096), seconds):
            pass
    except ConnectionError:
        pass
    return time.monotonic() - start


async def still_open(reader: asyncio.StreamReader, seconds: float = 0.3) -> bool:
    try:
        await asyncio.wait_for(reader.read(1), seconds)
    except TimeoutError:
        return True
    return False


async def test_a_half_sent_request_is_closed_at_the_deadline(guarded: RunningServer) -> None:
    reader = await half_sent(guarded)
    took = await closed_within(reader, 10)
    assert 0.5 < took < 5  # request_timeout=1: not before, and not much after


async def test_a_trickled_request_is_closed_however_its_bytes_arrive(
    guarded: RunningServer,
) -> None:
    """One byte every 0.2 s: each cancels uvicorn's own keep-alive timer, not ours."""
    reader, writer = await asyncio.open_connection(guarded.host, guarded.port)
    start = time.monotonic()
    try:
        for byte in HALF * 10:
            writer.write(bytes([byte]))
            await asyncio.sleep(0.2)
            if reader.at_eof() or time.monotonic() - start > 8:
                break
        await closed_within(reader, 5)
        assert time.monotonic() - start < 5
    finally:
        writer.close()


async def test_a_keep_alive_connection_has_the_deadline_for_its_next_request(
    guarded: RunningServer,
) -> None:
    reader = await half_sent(guarded, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    status = await asyncio.wait_for(reader.readline(), 5)
    assert b" 200 " in status
    await asyncio.sleep(0.1)
    reader.writer.write(b"GET /he")  # type: ignore[attr-defined]
    took = await closed_within(reader, 10)
    assert took < 5


async def test_every_connection_sends_its_answers_at_once(guarded: RunningServer) -> None:
    """TCP_NODELAY on every accepted connection: without it each answer after the first on a
    kept-alive connection waited for the client's delayed ACK (~40 ms, Nagle's algorithm; the
    listening socket's proto was 0, so asyncio never set it)."""
    async with httpx.AsyncClient(base_url=f"http://{guarded.host}:{guarded.port}") as client:
        for _ in range(2):  # the same kept-alive connection twice
            assert (await client.get("/healthz")).status_code == 200
        connections = list(guarded.server.server_state.connections)
        assert len(connections) == 1
        sock = connections[0].transport.get_extra_info("socket")  # type: ignore[attr-defined]
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


@pytest.mark.parametrize("guarded", [(30.0, 8)], indirect=True)
async def test_past_the_limit_the_oldest_incomplete_requests_are_closed(
    guarded: RunningServer,
) -> None:
    readers = [await half_sent(guarded) for _ in range(12)]  # limit 8
    for reader in readers[:4]:
        assert await closed_within(reader, 2) < 2
    for reader in readers[4:]:
        assert await still_open(reader)
    assert guarded.pending is not None and guarded.pending.dropped == 4
    metrics = guarded.server.config.app.state.metrics.render(private=True).decode()
    assert "duplicast_http_incomplete_dropped_total 4.0" in metrics
    assert "duplicast_http_incomplete_requests 8.0" in metrics
    async with httpx.AsyncClient(base_url=guarded.url) as http:
        assert (await http.get("/healthz")).status_code == 200


@pytest.mark.parametrize("guarded", [(1.0, 4)], indirect=True)
async def test_complete_requests_and_websockets_are_never_dropped(guarded: RunningServer) -> None:
    async with websockets.connect(guarded.ws_url, compression=None) as ws:
        assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "hello"
        readers = [await half_sent(guarded) for _ in range(10)]
        await asyncio.sleep(2.5)  # past the timeout, with the limit overrun
        await ws.send(json.dumps({"op": "ping"}))
        assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "pong"
        for reader in readers:
            await closed_within(reader, 5)


async def test_the_h11_protocol_is_guarded_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where httptools is not installed uvicorn parses with h11: the same bound holds."""
    from hub.serve import httpguard

    monkeypatch.setattr(httpguard, "HttpToolsProtocol", None)
    running = await serve(create_app(FakeSource(), auth=AUTH), request_timeout=1.0)
    try:
        reader = await half_sent(running, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert b" 200 " in await asyncio.wait_for(reader.readline(), 5)
        reader.writer.write(b"GET /he")  # type: ignore[attr-defined]
        assert await closed_within(reader, 10) < 5
        assert await closed_within(await half_sent(running), 10) < 5
        async with websockets.connect(running.ws_url, compression=None) as ws:
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "hello"
            await asyncio.sleep(1.5)
            await ws.send(json.dumps({"op": "ping"}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "pong"
    finally:
        await running.stop()


# -- a real `duplicast serve` under a flood of half-sent requests ---------------------------

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
FLOOD = 1100
LIMIT = 1024  # the open-file limit the edge runs under (a common service default)


def low_file_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


def room_for(count: int) -> None:
    """This test process holds ``count`` sockets: raise its own soft limit if needed."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < count + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 1024), hard))
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < count + 256:
        pytest.skip(f"open-file limit {soft} too low for {count} sockets")


def flood(port: int, count: int) -> list[socket.socket]:
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(HALF)
        sock.setblocking(False)
        socks.append(sock)
    return socks


def is_closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(4096) == b""  # EOF
    except BlockingIOError:
        return False
    except OSError:
        return True  # reset


async def test_a_flood_of_half_sent_requests_locks_no_client_out(
    tmp_path: Path,
) -> None:
    room_for(FLOOD)
    port = free_port()
    with RedisServer(tmp_path / "redis") as redis:
        command = [sys.executable, "-m", "hub", "serve", "--config", str(SAMPLE)]
        command += ["--redis", redis.url, "--port", str(port), "--request-timeout", "8"]
        hub = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, text=True, preexec_fn=low_file_limit
        )
        socks: list[socket.socket] = []
        try:
            assert hub.stdout is not None
            line = await asyncio.to_thread(hub.stdout.readline)
            assert "duplicast all" in line, line
            started = time.monotonic()
            socks = await asyncio.to_thread(flood, port, FLOOD)
            flooded = time.monotonic() - started
            # a websocket and a REST call still get through, promptly
            t0 = time.monotonic()
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws", compression=None) as ws:
                assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "hello"
                ws_seconds = time.monotonic() - t0
                async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                    t0 = time.monotonic()
                    reply = await http.get("/api/standings", timeout=10)
                    rest_seconds = time.monotonic() - t0
                assert reply.status_code == 200 and reply.json()["topic"] == "standings"
                await ws.send(json.dumps({"op": "ping"}))
                assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "pong"
            assert ws_seconds < 5 and rest_seconds < 5, (ws_seconds, rest_seconds)
            # every half-sent connection is closed: the oldest past the bound at once, the
            # rest once the timeout passes
            deadline = time.monotonic() + 8 + 20
            open_ = list(socks)
            while open_ and time.monotonic() < deadline:
                open_ = [s for s in open_ if not is_closed(s)]
                await asyncio.sleep(0.2)
            print(
                f"flood of {FLOOD} in {flooded:.1f} s; websocket {ws_seconds:.2f} s, "
                f"REST {rest_seconds:.2f} s; all closed {time.monotonic() - started:.1f} s"
            )
            assert not open_, f"{len(open_)} half-sent connections still open"
        finally:
            for sock in socks:
                sock.close()
            hub.terminate()
            try:
                hub.wait(20)
            except subprocess.TimeoutExpired:
                hub.kill()
                hub.wait()
