"""Fan-out throughput: a naive Starlette loop vs ``hub.serve.fanout`` (DESIGN §6).

Run by hand: ``.venv/bin/python bench/fanout_bench.py [--clients 500] [--updates 200]``.

The server runs in this process; the clients run in a child process (so their parsing does not
count against the server's CPU). For each mode, N clients subscribe, the server publishes U small
updates as fast as it can, and we report delivered frames per second (wall clock, until every
client got every update) and the server's CPU time per delivered frame.

- ``naive``: Starlette websocket endpoint; the publisher awaits ``send_text`` per client.
- ``fanout``: ``hub.serve.http`` + ``hub.serve.fanout`` (encode once, pre-built frames, no awaits).
- ``fanout-5ms``: the same with ``flush_delay=0.005``: a burst is coalesced into one write per
  client.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from hub.serve.auth import Auth
from hub.serve.fanout import Fanout
from hub.serve.feed import PayloadFeed
from hub.serve.http import create_app, serve
from hub.serve.limits import Limits
from hub.wire.codec import to_json

KEY = ("public", "standings")


def payload(n: int) -> dict[str, Any]:
    """About 200 bytes of JSON, like a standings delta."""
    return {
        "n": n,
        "teams": [{"team": t, "points": (n * t) % 37, "chips": n * 10} for t in range(4)],
    }


# -- server side ------------------------------------------------------------------------------


class Source:
    tournament = "bench"

    def __init__(self, flush_delay: float = 0.0) -> None:
        self.store = PayloadFeed()
        # every bench client comes from 127.0.0.1: no per-address cap (it guards a venue)
        limits = Limits(max_per_address=1_000_000)
        self.fanout = Fanout(self.store, flush_delay=flush_delay, limits=limits)
        self.store.put(KEY, payload(0))

    def ready(self) -> bool:
        return True

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        return {"ok": False}

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class Naive:
    def __init__(self) -> None:
        self.clients: set[WebSocket] = set()

    async def endpoint(self, websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text('{"type":"hello"}')
        try:
            await websocket.receive_text()  # the subscribe
            await websocket.send_text('{"type":"snapshot"}')
            self.clients.add(websocket)
            while True:
                await websocket.receive_text()
        except WebSocketDisconnect:
            pass
        finally:
            self.clients.discard(websocket)

    async def publish(self, n: int) -> None:
        text = to_json({"type": "delta", "topic": "standings", "seq": n, "data": payload(n)})
        message = text.decode()
        for websocket in list(self.clients):
            try:
                await websocket.send_text(message)
            except Exception:
                self.clients.discard(websocket)


async def measure(mode: str, clients: int, updates: int) -> tuple[float, float]:
    """(frames per second, server CPU microseconds per frame)."""
    if mode == "naive":
        naive = Naive()
        app: Any = Starlette(routes=[WebSocketRoute("/ws", naive.endpoint)])
    else:
        source = Source(0.005 if mode == "fanout-5ms" else 0.0)
        app = create_app(source, auth=Auth())
    server = await serve(app)
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--client",
        server.ws_url,
        str(clients),
        str(updates),
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        assert (await child.stdout.readline()).strip() == b"ready"
        cpu0, t0 = time.process_time(), time.perf_counter()
        for n in range(2, updates + 2):
            if mode == "naive":
                await naive.publish(n)
            else:
                update = source.store.put(KEY, payload(n))
                assert update is not None
                source.fanout.publish(KEY, update.outs)
            await asyncio.sleep(0)
        line = await child.stdout.readline()
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        assert line.strip() == b"done", line
    finally:
        await child.wait()
        await server.stop()
    frames = clients * updates
    return frames / wall, cpu / frames * 1e6


# -- client side (child process) --------------------------------------------------------------


class _Counter(asyncio.Protocol):
    """A minimal websocket client: handshake, then count frames without decoding them
    (the websockets library would cost more CPU per frame than the server under test)."""

    def __init__(self, host: str, path: str, done: asyncio.Future[None], want: int) -> None:
        self.host, self.path, self.done, self.want = host, path, done, want
        self.buffer = b""
        self.upgraded = False
        self.frames = 0
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(
            f"GET {self.path} HTTP/1.1\r\nHost: {self.host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )

    def send_text(self, text: str) -> None:
        data = text.encode()
        assert self.transport is not None and len(data) < 126
        self.transport.write(bytes([0x81, 0x80 | len(data)]) + b"\0\0\0\0" + data)

    def data_received(self, data: bytes) -> None:
        buf = self.buffer + data
        if not self.upgraded:
            head, sep, buf = buf.partition(b"\r\n\r\n")
            if not sep:
                self.buffer = head
                return
            assert head.startswith(b"HTTP/1.1 101"), head
            self.upgraded = True
        i, n = 0, len(buf)
        while n - i >= 2:
            size = buf[i + 1] & 0x7F
            start = i + 2
            if size == 126:
                if n - i < 4:
                    break
                size = int.from_bytes(buf[i + 2 : i + 4], "big")
                start = i + 4
            elif size == 127:
                if n - i < 10:
                    break
                size = int.from_bytes(buf[i + 2 : i + 10], "big")
                start = i + 10
            if n - start < size:
                break
            i = start + size
            self.frames += 1
            if self.frames == 1:
                self.send_text('{"op":"subscribe","topics":["standings"]}')
            if self.frames == self.want and not self.done.done():
                self.done.set_result(None)
        self.buffer = buf[i:]


async def clients_main(url: str, clients: int, updates: int) -> None:
    """Connect, wait for hello + snapshot on every client, then for every update."""
    hostport, _, path = url.removeprefix("ws://").partition("/")
    host, port = hostport.rsplit(":", 1)
    loop = asyncio.get_running_loop()
    subscribed = [loop.create_future() for _ in range(clients)]
    protocols = []
    for fut in subscribed:
        _, proto = await loop.create_connection(
            lambda fut=fut: _Counter(hostport, "/" + path, fut, 2), host, int(port)
        )
        protocols.append(proto)
    await asyncio.gather(*subscribed)
    finished = []
    for proto in protocols:
        proto.done = loop.create_future()
        proto.want = 2 + updates
        finished.append(proto.done)
    print("ready", flush=True)
    await asyncio.gather(*finished)
    print("done", flush=True)
    for proto in protocols:
        assert proto.transport is not None
        proto.transport.close()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        asyncio.run(clients_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--updates", type=int, default=200)
    args = parser.parse_args()
    rates, cpus = {}, {}
    for mode in ("naive", "fanout", "fanout-5ms"):
        rates[mode], cpus[mode] = asyncio.run(measure(mode, args.clients, args.updates))
        print(
            f"{mode:>10}: {rates[mode]:>9,.0f} frames/s delivered (wall; bounded by the client"
            f" process), {cpus[mode]:5.2f} us server CPU/frame = {1e6 / cpus[mode]:>9,.0f}"
            " frames per CPU-second"
        )
    for mode in ("fanout", "fanout-5ms"):
        print(
            f"{mode:>10} vs naive: {rates[mode] / rates['naive']:.1f}x wall,"
            f" {cpus['naive'] / cpus[mode]:.1f}x server CPU efficiency"
        )


if __name__ == "__main__":
    main()
