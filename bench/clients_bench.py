"""Many websocket clients: memory per connection and publish-to-receive latency (DESIGN §6).

Run by hand: ``.venv/bin/python bench/clients_bench.py --clients 10000 --hz 10 --seconds 10``.

The hub's real server (``hub.serve.http`` + ``hub.serve.fanout``) runs in a child process, so its
resident
memory is its own: it is read from ``/proc/{pid}/status`` before the clients connect and once
all of them are subscribed, and the difference divided by the number of clients is the memory
per connection. Then the server publishes a standings update ``--hz`` times a second, each
carrying the wall-clock time it was published; every client counts its frames and ``--probes``
of them also parse each frame for that time: the latency distribution is theirs.

Baseline, measured in the same run: the same clients connected to a bare uvicorn/Starlette
websocket endpoint that accepts and holds the connection (the least any Python websocket server
spends per connection). The server's memory is reported as a ratio to it.

The clients run in this process with a minimal protocol (no websocket library), so their CPU
cost per frame is small; on a 2-core machine they still share the CPU with the server, so the
end-to-end latency figures are an upper bound of what the server alone would give. The server
also reports, per update, the time from publish to its last socket write (``server_write_ms``):
the server's own share of the latency.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KEY = ("public", "standings")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


# -- the server (child process) ---------------------------------------------------------------


def payload(n: int) -> dict[str, Any]:
    """About 250 bytes of JSON, like a standings delta, with the time it was published."""
    return {
        "n": n,
        "t": time.time(),
        "teams": [{"team": t, "points": (n * t) % 37, "chips": n * 10} for t in range(4)],
    }


async def server_main(mode: str, hz: float) -> None:
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    from hub.serve.auth import Auth
    from hub.serve.fanout import Fanout
    from hub.serve.feed import PayloadFeed
    from hub.serve.http import create_app, serve

    class Source:
        tournament = "bench"

        def __init__(self) -> None:
            self.store = PayloadFeed()
            self.fanout = Fanout(self.store)
            self.store.put(KEY, payload(0))

        def ready(self) -> bool:
            return True

        async def control(self, command: dict[str, Any]) -> dict[str, Any]:
            return {"ok": False}

        async def start(self) -> None: ...

        async def stop(self) -> None: ...

    async def hold(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text('{"type":"hello"}')
        try:
            await websocket.receive_text()
            await websocket.send_text('{"type":"snapshot"}')
            while True:
                await websocket.receive_text()
        except WebSocketDisconnect:
            pass

    source = Source()
    if mode == "bare":
        app: Any = Starlette(routes=[WebSocketRoute("/ws", hold)])
    else:
        app = create_app(source, auth=Auth())
    server = await serve(app, backlog=4096)
    print(server.port, flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    assert (await reader.readline()).strip() == b"go"
    if mode != "bare":
        n = 1
        period = 1.0 / hz
        next_at = loop.time()
        writes: list[float] = []  # publish until the last socket write, server side only
        while not reader.at_eof():
            n += 1
            t0 = time.perf_counter()
            update = source.store.put(KEY, payload(n))
            assert update is not None
            source.fanout.publish(KEY, update.outs)
            written = loop.create_future()  # runs after the fan-out's flush (call_soon order)
            loop.call_soon(written.set_result, None)
            await written
            writes.append(time.perf_counter() - t0)
            next_at += period
            try:
                line = await asyncio.wait_for(reader.readline(), max(0.0, next_at - loop.time()))
            except TimeoutError:
                continue
            if not line or line.strip() == b"stop":
                break
        print(json.dumps(writes), flush=True)
    else:
        await reader.readline()
    await server.stop()


# -- the clients (this process) ---------------------------------------------------------------


class Client(asyncio.Protocol):
    def __init__(self, host: str, probe: bool, ready: asyncio.Future[None]) -> None:
        self.host, self.probe, self.ready = host, probe, ready
        self.buffer = b""
        self.upgraded = False
        self.frames = 0
        self.latencies: list[float] = []
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(
            f"GET /ws HTTP/1.1\r\nHost: {self.host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ready.done():
            self.ready.set_exception(ConnectionError(f"closed before subscribing: {exc}"))

    def data_received(self, data: bytes) -> None:
        now = time.time()
        buf = self.buffer + data
        if not self.upgraded:
            head, sep, buf = buf.partition(b"\r\n\r\n")
            if not sep:
                self.buffer = head
                return
            self.upgraded = True
        i, n = 0, len(buf)
        while n - i >= 2:
            size, start = buf[i + 1] & 0x7F, i + 2
            if size == 126:
                if n - i < 4:
                    break
                size, start = int.from_bytes(buf[i + 2 : i + 4], "big"), i + 4
            if n - start < size:
                break
            self.frames += 1
            if self.frames == 1:
                text = b'{"op":"subscribe","topics":["standings"]}'
                self.transport.write(bytes([0x81, 0x80 | len(text)]) + b"\0\0\0\0" + text)
            elif self.frames == 2 and not self.ready.done():
                self.ready.set_result(None)
            elif self.probe and self.frames > 2:
                message = json.loads(buf[start : start + size])
                ops = message.get("patch") or []
                t = next((op["value"] for op in ops if op.get("path") == "/t"), None)
                if t is not None:
                    self.latencies.append(now - t)
            i = start + size
        self.buffer = buf[i:]


async def run(mode: str, clients: int, probes: int, hz: float, seconds: float) -> dict[str, Any]:
    child = subprocess.Popen(
        [sys.executable, __file__, "--server", mode, str(hz)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        port = int(child.stdout.readline())
        await asyncio.sleep(0.3)
        before = rss_kib(child.pid)
        loop = asyncio.get_running_loop()
        every = max(1, clients // max(1, probes))
        protocols: list[Client] = []
        t0 = time.perf_counter()
        for k in range(clients):
            ready = loop.create_future()
            _, proto = await loop.create_connection(
                lambda ready=ready, k=k: Client(f"127.0.0.1:{port}", k % every == 0, ready),
                "127.0.0.1",
                port,
            )
            protocols.append(proto)
            if k % 200 == 199:  # let the server keep up with the handshakes
                await asyncio.gather(*(p.ready for p in protocols[-200:]))
        await asyncio.gather(*(p.ready for p in protocols))
        connect_s = time.perf_counter() - t0
        await asyncio.sleep(1.0)
        after = rss_kib(child.pid)
        result: dict[str, Any] = {
            "mode": mode,
            "clients": clients,
            "connect_seconds": round(connect_s, 2),
            "server_rss_kib_before": before,
            "server_rss_kib_after": after,
            "kib_per_client": round((after - before) / clients, 2),
        }
        if mode != "bare":
            frames0 = sum(p.frames for p in protocols)
            child.stdin.write(b"go\n")
            child.stdin.flush()
            await asyncio.sleep(seconds)
            delivered = sum(p.frames for p in protocols) - frames0
            latencies = sorted(x for p in protocols for x in p.latencies)
            q = statistics.quantiles(latencies, n=100) if len(latencies) > 100 else []
            result |= {
                "hz": hz,
                "seconds": seconds,
                "frames_delivered": delivered,
                "frames_expected": int(clients * hz * seconds),
                "latency_samples": len(latencies),
                "latency_ms_p50": round(1000 * q[49], 2) if q else None,
                "latency_ms_p99": round(1000 * q[98], 2) if q else None,
                "latency_ms_max": round(1000 * latencies[-1], 2) if latencies else None,
                "server_rss_kib_end": rss_kib(child.pid),
            }
        else:
            child.stdin.write(b"go\n")
            child.stdin.flush()
        child.stdin.write(b"stop\n")
        child.stdin.flush()
        if mode != "bare":
            writes = sorted(json.loads(await asyncio.to_thread(child.stdout.readline)))
            result["server_write_ms_p50"] = round(1000 * writes[len(writes) // 2], 2)
            result["server_write_ms_max"] = round(1000 * writes[-1], 2)
        for p in protocols:
            p.transport.close()
        return result
    finally:
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--server":
        asyncio.run(server_main(sys.argv[2], float(sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=2000)
    parser.add_argument("--probes", type=int, default=200, help="clients that time each frame")
    parser.add_argument("--hz", type=float, default=10.0, help="updates per second")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 2 * args.clients + 256)), hard))
    bare = asyncio.run(run("bare", args.clients, 0, args.hz, 0))
    hub = asyncio.run(run("hub", args.clients, args.probes, args.hz, args.seconds))
    hub["memory_ratio_to_bare"] = round(
        hub["kib_per_client"] / max(bare["kib_per_client"], 0.01), 2
    )
    text = json.dumps({"bare": bare, "hub": hub}, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
