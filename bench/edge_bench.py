"""Edge fan-out side by side with its peers, one workload, one run (DESIGN §6).

    python bench/edge_bench.py --quick            # 1-2 minute smoke
    python bench/edge_bench.py                    # the full sweep (~10-20 min)
    python bench/edge_bench.py --servers edge,websockets --points 10k@10

Every server gets its messages by Redis PUBLISH from a separate publisher process, and the
clients run in another separate process (raw-socket websocket clients on one event loop; for
Socket.IO they speak engine.io v4 over websocket). Servers:

- ``edge``: our edge as deployed: ``duplicast serve --role edge --reuse-port`` on the sample
  tournament (``hub.roles.edge.EdgeSource`` reading the v2 feed channel and forwarding each frame's
  bytes, ``hub.serve.feedsocket`` on uvicorn, uvloop, ``tune_gc``), run inside the bench's server
  process so that its GC probe sees it. ``edgex2``: two of them on one port (SO_REUSEPORT),
  what ``duplicast serve --role edge --processes 2`` starts. The publisher writes the v2 feed
  (``encode_feed``) with consecutive seqs after a seq-0 snapshot put in the snapshot hash.
- ``naive``: Starlette + ``broadcaster`` (Redis), ``await websocket.send_text`` per client.
- ``websockets``: the ``websockets`` library server with ``broadcast()``.
- ``socketio``: Socket.IO 4.8 on node with ``@socket.io/redis-adapter`` (``bench/socketio``;
  ``npm ci`` there first).

Each point: a fresh server process; N clients connect and subscribe; the server's RSS growth
over the N idle connections gives KiB per connection; the publisher then publishes at R Hz for
D seconds, each message carrying its publish time; the clients record publish→receive latency
of every frame. Server CPU per delivered frame comes from /proc/PID/stat of the server process;
GC pauses of our edge from ``gc.callbacks`` in its process. Keepalive pings are off in the
peers for the length of a point; our edge keeps its one sweep every 20 s (one ping frame per
client, answered by the bench clients), so at most one sweep falls in a point.
Loopback only; every process this bench starts is ended by its pid.

Load generator (``--clients``): ``c`` (the default when a C compiler is found) is
``bench/wsclients.c``, built on demand into ``bench/.build/`` (gitignored): the clients and the
orchestrator protocol of the Python ``run_clients`` (``--clients python``, kept), in one epoll
loop, every reading client parsing every frame. Why: on this 2-core machine the load generator
runs beside the server, and the Python clients took 53-59 % of a core at 10k x 10 Hz, about
half of the second core. The C clients measure latency to the kernel's receive time of the
bytes (SO_TIMESTAMPNS), not to their own read, and pause 1 ms between small batches of events
so that one wakeup serves many sockets: at 1k x 10 Hz they took ~4.5-5.3 µs of CPU per frame
against 6.8-8.3 for the Python clients (same run). Most of what remains is the kernel's TCP
receive path (recv and the ACK it sends), which no client avoids. Each point records which
generator ran (``load_generator``) and its CPU (``clients_cpu_pct``).

Load generator priority (``--load-priority``): ``idle`` (the default) runs it under Linux's
``SCHED_IDLE`` policy, ``normal`` as any process. The clients stand in for 10,000 browsers on
other machines, whose CPU is not the server's; at equal priority, on two cores, the scheduler
hands them about a third of the CPU in the middle of each publish pass (they are woken by the
very frames being sent), which no deployment sees. Under ``SCHED_IDLE`` they run on what the
servers leave: they still receive and parse every frame (``delivered_pct``), and latency is
taken at the kernel's receive time of the bytes, so it is not their scheduling that is
measured. Same for every server. Each point records it (``load_priority``).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import gc
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import msgpack  # noqa: E402
import private_redis  # noqa: E402

SAMPLE_CONFIG = ROOT / "samples" / "ifp6.toml"
# One run's names on Redis, shared with its child processes through the environment: two runs
# on one Redis (say, the bench smoke test of two checkouts) must not hear each other.
RUN = os.environ.setdefault("DUPLICAST_BENCH_RUN", f"{os.getpid()}-{os.urandom(3).hex()}")
TOURNAMENT = f"bench-{RUN}"  # the tournament our edge serves: the sample under this id
TOPIC = "standings"
TEXT_CHANNEL = f"bench:text:{RUN}"
SERVERS = ("edge", "edgex2", "naive", "websockets", "socketio")
PAYLOAD_BYTES = 206
CLK = getattr(time, "CLOCK_MONOTONIC", 1)


def now_ns() -> int:
    """A clock shared by all processes of the machine (CLOCK_MONOTONIC)."""
    return time.clock_gettime_ns(CLK)


def raise_nofile() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# -- the messages -----------------------------------------------------------------------------


def client_message(seq: int, sent_ns: int) -> bytes:
    """The JSON client delta, ~206 bytes, carrying its publish time as ``t0``."""
    head = {
        "type": "delta",
        "topic": TOPIC,
        "seq": seq,
        "patch": [{"op": "replace", "path": "/t0", "value": sent_ns}],
    }
    body = json.dumps(head, separators=(",", ":"))
    pad = PAYLOAD_BYTES - len(body) - len(',{"op":"add","path":"/pad","value":""}')
    head["patch"].append({"op": "add", "path": "/pad", "value": "x" * max(pad, 0)})
    return json.dumps(head, separators=(",", ":")).encode()


def encode_feed(
    audience: str, topic: str, seq: int, full: bool, json_msg: bytes, msgpack_msg: bytes
) -> bytes:
    """The feed wire format v2 on ``dup:{tournament}:feed``; ``hub.serve.feed.encode_feed`` when
    this
    tree has it, else the same map built here."""
    try:
        from hub.serve.feed import encode_feed as hub_encode  # type: ignore[attr-defined]
    except ImportError:
        hub_encode = None
    if hub_encode is not None:
        with contextlib.suppress(TypeError):
            out: bytes = hub_encode(audience, topic, seq, full, json_msg, msgpack_msg)
            return out
    return msgpack.packb(
        {"v": 2, "a": audience, "t": topic, "s": seq, "f": full, "j": json_msg, "m": msgpack_msg},
        use_bin_type=True,
    )


def wire_message(kind: str, seq: int, sent_ns: int) -> tuple[str, bytes]:
    """(channel, bytes) the publisher sends for one update to a server of ``kind``."""
    text = client_message(seq, sent_ns)
    if kind == "edge":
        as_msgpack = msgpack.packb(json.loads(text), use_bin_type=True)
        return f"dup:{TOURNAMENT}:feed", encode_feed("public", TOPIC, seq, False, text, as_msgpack)
    return TEXT_CHANNEL, text


# -- servers ----------------------------------------------------------------------------------


def _install_gc_probe(stats_path: str) -> None:
    """GC pauses of this process: reset on SIGUSR1, written to ``stats_path`` on SIGUSR2."""
    state: dict[str, Any] = {"pauses": array("d"), "start": 0.0}

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            state["start"] = time.perf_counter()
        else:
            state["pauses"].append((time.perf_counter() - state["start"]) * 1000)
            state.setdefault("gens", []).append(info.get("generation", -1))

    def reset(*_: Any) -> None:
        state["pauses"] = array("d")
        state["gens"] = []

    def dump(*_: Any) -> None:
        pauses = sorted(state["pauses"])
        gens = state.get("gens", [])
        Path(stats_path).write_text(
            json.dumps(
                {
                    "gc_collections": len(pauses),
                    "gc_max_ms": round(pauses[-1], 2) if pauses else 0.0,
                    "gc_over_10ms": sum(1 for p in pauses if p > 10),
                    "gc_full": sum(1 for g in gens if g == 2),
                }
            )
        )

    gc.callbacks.append(callback)
    signal.signal(signal.SIGUSR1, reset)
    signal.signal(signal.SIGUSR2, dump)


def _run_edge(port: int, redis_url: str) -> int:
    """Our edge as deployed: ``duplicast serve --role edge`` (``hub.roles.edge.EdgeSource`` on the
    Redis bus, ``hub.serve.feedsocket`` on uvicorn, uvloop, ``tune_gc``), run in this process so the
    GC probe sees it; ``--reuse-port`` so that two copies share the port (``edgex2``). The
    topic's starting snapshot (seq 0) is put in the snapshot hash, as an ingest would."""
    import redis

    from hub.cli.main import main as duplicast
    from hub.serve.feed import Frame, encode_snapshot, snapshot_field
    from hub.wire.channels import Channels
    from hub.wire.frames import Outgoing

    snapshot = json.dumps({"type": "snapshot", "topic": TOPIC, "seq": 0, "data": {}}).encode()
    frame = Frame(
        0,
        True,
        {
            "json": Outgoing(snapshot, True),
            "msgpack": Outgoing(msgpack.packb(json.loads(snapshot)), False),
        },
    )
    client = redis.Redis.from_url(redis_url)
    client.hset(
        Channels(TOURNAMENT).topics, snapshot_field(("public", TOPIC)), encode_snapshot(frame)
    )
    client.close()
    _answer_snapshot_requests(redis_url)
    config = edge_config()
    if not config.exists():  # the sample tournament under this run's id
        text = SAMPLE_CONFIG.read_text(encoding="utf-8")
        config.write_text(text.replace('id = "ifp-demo"', f'id = "{TOURNAMENT}"', 1))
    for role in ("COMMENTATOR", "OPERATOR"):
        os.environ.setdefault(f"DUPLICAST_{role}_TOKEN", base64.b64encode(os.urandom(24)).decode())
    os.environ.setdefault("DUPLICAST_LOG", "WARNING")
    return duplicast(
        [
            "serve", "--role", "edge", "--config", str(config), "--redis", redis_url,
            "--port", str(port), "--reuse-port", "--max-per-address", "1000000",
        ]
    )  # fmt: skip


def _answer_snapshot_requests(redis_url: str) -> None:
    """Stand in for the writer an edge syncs with: an edge serves a topic with no data (the
    bench's seq-0 snapshot) only once a writer answered its ``snapshots`` request (issue #20.11:
    before that it sends nothing rather than an empty snapshot). A daemon thread answers them
    ``ok`` on the edge's reply channel, as the ingest's publisher does; the snapshot is in the
    hash already."""
    import threading

    import redis

    from hub.wire import codec
    from hub.wire.channels import Channels

    names = Channels(TOURNAMENT)

    def answer() -> None:
        client = redis.Redis.from_url(redis_url)
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(names.control)
        for message in pubsub.listen():
            try:
                command = codec.unpack(message["data"])
            except codec.CodecError:
                continue
            if isinstance(command, dict) and command.get("op") == "snapshots":
                reply, rid = command.get("reply"), command.get("id")
                if isinstance(reply, str) and isinstance(rid, str):
                    client.publish(names.reply(reply), codec.pack({"ok": True, "id": rid}))

    threading.Thread(target=answer, name="bench-writer", daemon=True).start()


async def _serve_naive(port: int, redis_url: str) -> None:
    import redis.asyncio as aioredis
    import uvicorn
    from broadcaster import Broadcast, BroadcastBackend, Event
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    class RedisPubSub(BroadcastBackend):
        """broadcaster's Redis backend, minus a start-up race: with redis-py 8 its listener
        can start before the subscription exists, end at once and never listen again (seen
        here: nothing delivered). Same interface, same PUBLISH/SUBSCRIBE."""

        def __init__(self, url: str) -> None:
            self.conn = aioredis.Redis.from_url(url)
            self.pubsub = self.conn.pubsub()
            self.subscribed = asyncio.Event()

        async def connect(self) -> None:
            pass

        async def disconnect(self) -> None:
            await self.pubsub.aclose()
            await self.conn.aclose()

        async def subscribe(self, channel: str) -> None:
            await self.pubsub.subscribe(channel)
            self.subscribed.set()

        async def unsubscribe(self, channel: str) -> None:
            await self.pubsub.unsubscribe(channel)

        async def publish(self, channel: str, message: Any) -> None:
            await self.conn.publish(channel, message)

        async def next_published(self) -> Event:
            await self.subscribed.wait()
            while True:
                message = await self.pubsub.get_message(ignore_subscribe_messages=True, timeout=1)
                if message is not None:
                    return Event(message["channel"].decode(), message["data"].decode())

    broadcast = Broadcast(backend=RedisPubSub(redis_url))
    clients: set[WebSocket] = set()

    async def endpoint(websocket: WebSocket) -> None:
        await websocket.accept()
        clients.add(websocket)
        try:
            while True:
                await websocket.receive_text()
        except WebSocketDisconnect:
            pass
        finally:
            clients.discard(websocket)

    async def relay() -> None:
        async with broadcast.subscribe(channel=TEXT_CHANNEL) as subscriber:
            async for event in subscriber:  # type: ignore[union-attr]
                for websocket in list(clients):
                    try:
                        await websocket.send_text(event.message)
                    except Exception:
                        clients.discard(websocket)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        await broadcast.connect()
        task = asyncio.create_task(relay())
        yield
        task.cancel()
        await broadcast.disconnect()

    app = Starlette(routes=[WebSocketRoute("/ws", endpoint)], lifespan=lifespan)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        backlog=4096,
        ws_ping_interval=None,
        ws_per_message_deflate=False,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.02)
    print("listening", flush=True)
    await task


async def _serve_websockets(port: int, redis_url: str) -> None:
    import redis.asyncio as aioredis
    from websockets.asyncio.server import ServerConnection, broadcast, serve

    clients: set[ServerConnection] = set()

    async def handler(websocket: ServerConnection) -> None:
        clients.add(websocket)
        try:
            async for _ in websocket:
                pass
        finally:
            clients.discard(websocket)

    client = aioredis.Redis.from_url(redis_url)
    pubsub = client.pubsub()
    await pubsub.subscribe(TEXT_CHANNEL)
    async with serve(
        handler, "127.0.0.1", port, compression=None, backlog=4096, ping_interval=None
    ):
        print("listening", flush=True)
        while True:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            if message is not None:
                broadcast(clients, message["data"].decode())


def run_server(kind: str, port: int, redis_url: str, stats_path: str) -> None:
    raise_nofile()
    _install_gc_probe(stats_path)
    if kind == "edge":
        sys.exit(_run_edge(port, redis_url))
    serve_fn = {"naive": _serve_naive, "websockets": _serve_websockets}[kind]
    try:
        import uvloop

        uvloop.run(serve_fn(port, redis_url))
    except ImportError:
        asyncio.run(serve_fn(port, redis_url))


# -- publisher --------------------------------------------------------------------------------


def run_publisher(kind: str, redis_url: str, rate: float, seconds: float) -> None:
    """PUBLISH at ``rate`` Hz for ``seconds`` (paced on the clock, no drift); prints a JSON
    line with what it sent."""
    import redis

    client = redis.Redis.from_url(redis_url)
    client.ping()  # connected before the first timestamp
    # Encode one message before the clock starts: the first call imports hub.serve.feed (~0.1 s),
    # which, timed inside the first update, showed as a stall of the edge (every run until
    # 2026-11-23 had this one slow update in its edge p99 at 1k and 5k clients).
    wire_message(kind, 0, now_ns())
    interval = 1.0 / rate
    count = int(rate * seconds)
    start = time.monotonic()
    first = last = 0
    for seq in range(1, count + 1):
        target = start + (seq - 1) * interval
        delay = target - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        sent = now_ns()
        first = first or sent
        last = sent
        channel, data = wire_message(kind, seq, sent)
        client.publish(channel, data)
    print(json.dumps({"published": count, "first_ns": first, "last_ns": last}), flush=True)


# -- clients ----------------------------------------------------------------------------------

_T0 = re.compile(rb't0\\?",\\?"value\\?":(\d+)')


def masked_frame(opcode: int, payload: bytes) -> bytes:
    """A client's websocket frame (final, masked) carrying ``payload``."""
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, 0x80 | n))
    elif n < 65536:
        head = bytes((0x80 | opcode, 0xFE)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 0xFF)) + n.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def ws_handshake(buf: bytearray) -> bool:
    """The server's handshake response at the head of ``buf``: False while it is incomplete,
    True once a 101 is taken off ``buf``; anything else raises ``RuntimeError`` (its start)."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return False
    if not buf.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(bytes(buf[:200]).decode(errors="replace"))
    del buf[: end + 4]
    return True


class WsClient(asyncio.Protocol):
    """A minimal websocket client (RFC 6455; unmasked server frames, no extensions)."""

    def __init__(self, pool: ClientPool, kind: str, stall: bool, sampler: bool) -> None:
        self.pool = pool
        self.kind = kind
        self.stall = stall
        self.sampler = sampler  # parses every frame; the others count bytes once subscribed
        self.counting = False
        self.count_next = False
        self.buf = bytearray()
        self.open = False
        self.transport: asyncio.Transport | None = None  # uvloop's is not a subclass
        self.ready = asyncio.get_running_loop().create_future()
        self.closed_code: int | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        key = base64.b64encode(os.urandom(16)).decode()
        path = "/socket.io/?EIO=4&transport=websocket" if self.kind == "socketio" else "/ws"
        transport.write(
            (
                f"GET {path} HTTP/1.1\r\nHost: {self.pool.host}:{self.pool.port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )

    def send_text(self, text: bytes) -> None:
        assert self.transport is not None
        self.transport.write(masked_frame(0x1, text))

    def data_received(self, data: bytes) -> None:
        if self.counting:
            self.pool.counted_bytes += len(data)
            return
        buf = self.buf
        buf += data
        if not self.open:
            try:
                if not ws_handshake(buf):
                    return
            except RuntimeError as exc:
                if not self.ready.done():
                    self.ready.set_exception(exc)
                return
            self.open = True
            if self.kind == "edge":
                self.send_text(b'{"op":"subscribe","topics":["' + TOPIC.encode() + b'"]}')
            elif self.kind != "socketio":
                self._subscribed()  # the peers send every client everything
        now = now_ns()
        pool = self.pool
        i = 0
        n_buf = len(buf)
        while n_buf - i >= 2:
            start = i
            op = buf[i] & 0x0F
            n = buf[i + 1] & 0x7F
            j = i + 2
            if n == 126:
                if n_buf - i < 4:
                    break
                n = int.from_bytes(buf[j : j + 2], "big")
                j += 2
            elif n == 127:
                if n_buf - i < 10:
                    break
                n = int.from_bytes(buf[j : j + 8], "big")
                j += 8
            if n_buf - j < n:
                break
            payload = bytes(buf[j : j + n])
            i = j + n
            if op == 0x8:
                self.closed_code = int.from_bytes(payload[:2], "big") if n >= 2 else 1005
                pool.closes[self.closed_code] = pool.closes.get(self.closed_code, 0) + 1
            elif op == 0x9:
                self._pong(payload)
            else:
                self._message(payload, now, i - start)
        del buf[:i]
        if self.count_next and not buf:
            self.counting = True

    def _pong(self, payload: bytes) -> None:
        assert self.transport is not None
        mask = os.urandom(4)
        body = bytes(b ^ mask[k % 4] for k, b in enumerate(payload))
        self.transport.write(bytes([0x8A, 0x80 | len(payload)]) + mask + body)

    def _message(self, payload: bytes, now: int, size: int) -> None:
        pool = self.pool
        match = _T0.search(payload)
        if match is not None:
            sent = int(match.group(1))
            if sent >= pool.window_start:
                pool.frames += 1
                pool.sampled_bytes += size
                pool.latencies.append((now - sent) // 1000)
                worst = pool.worst.get(sent, 0)
                if now - sent > worst:
                    pool.worst[sent] = now - sent
            return
        if self.kind == "socketio":
            if payload[:1] == b"0":
                self.send_text(b"40")
            elif payload == b"2":
                self.send_text(b"3")
            elif payload[:2] == b"40":
                self._subscribed()
        elif b'"snapshot"' in payload:
            self._subscribed()

    def _subscribed(self) -> None:
        if not self.ready.done():
            self.ready.set_result(None)
        if self.stall and self.transport is not None:
            self.transport.pause_reading()
        elif not self.sampler:
            self.count_next = True  # once this read is parsed

    def connection_lost(self, exc: Exception | None) -> None:
        self.pool.lost += 1
        if not self.ready.done():
            self.ready.set_exception(ConnectionError("closed during the handshake"))


class ClientPool:
    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.frames = 0  # parsed by the samplers
        self.sampled_bytes = 0  # their size on the wire
        self.counted_bytes = 0  # received by the others
        self.latencies: array[int] = array("q")
        self.worst: dict[int, int] = {}  # publish time (ns) -> the slowest sampled arrival (ns)
        self.window_start = 1 << 62
        self.closes: dict[int, int] = {}
        self.lost = 0


async def run_clients(kind: str, url: str, n: int, stalled: int, sample: int = 10) -> None:
    """Connect ``n`` clients (the first ``stalled`` stop reading once subscribed), print
    ``connected``, then read ``start NS`` / ``stop`` lines on stdin; print results as JSON.

    Every ``sample``-th client parses every frame and records its latency; the others only
    count bytes (a Python client parsing 100,000 frames/s would be the bottleneck on two
    cores). Frames delivered = the samplers' frames + the others' bytes / the samplers' mean
    frame size (every update has the same size)."""
    raise_nofile()
    host, port = url.split(":")
    pool = ClientPool(host, int(port))
    loop = asyncio.get_running_loop()
    clients: list[WsClient] = []
    sem = asyncio.Semaphore(200)

    async def one(i: int) -> None:
        async with sem:
            for attempt in range(5):
                try:
                    _, proto = await loop.create_connection(
                        lambda: WsClient(pool, kind, i < stalled, i % sample == 0), host, int(port)
                    )
                    await asyncio.wait_for(proto.ready, 30)
                    clients.append(proto)
                    return
                except (OSError, ConnectionError, TimeoutError):
                    await asyncio.sleep(0.2 * (attempt + 1))
            raise RuntimeError("a client could not connect")

    await asyncio.gather(*(one(i) for i in range(n)))
    print("connected", flush=True)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = (await reader.readline()).decode().split()
        if not line or line[0] == "stop":
            break
        if line[0] == "start":
            pool.window_start = int(line[1])
            pool.frames = pool.sampled_bytes = pool.counted_bytes = 0
            pool.latencies = array("q")
            pool.worst = {}
    lat = sorted(pool.latencies)
    # The slowest updates (their slowest sampled client) and when in the window they were
    # published: one stall shows as one update, a slow pass as many in a row.
    slowest = sorted(pool.worst.items(), key=lambda kv: -kv[1])[:5]

    def pct(p: float) -> float:
        return round(lat[min(len(lat) - 1, int(p * len(lat)))] / 1000, 2) if lat else -1.0

    print(
        json.dumps(
            {
                "frames": pool.frames
                + round(pool.counted_bytes * pool.frames / max(1, pool.sampled_bytes)),
                "sampled_frames": pool.frames,
                "p50_ms": pct(0.50),
                "p99_ms": pct(0.99),
                "p999_ms": pct(0.999),
                "max_ms": round(lat[-1] / 1000, 2) if lat else -1.0,
                "slowest_updates": [
                    {"at_s": round((sent - pool.window_start) / 1e9, 2), "ms": round(ns / 1e6, 1)}
                    for sent, ns in slowest
                ],
                "closes": pool.closes,
                "lost": pool.lost,
            }
        ),
        flush=True,
    )
    for client in clients:
        if client.transport is not None:
            client.transport.abort()


# -- orchestration ----------------------------------------------------------------------------


WSCLIENTS_SOURCE = HERE / "wsclients.c"
BUILD_DIR = HERE / ".build"  # gitignored


def c_compiler() -> str | None:
    return shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


def default_load_generator() -> str:
    return "c" if c_compiler() and WSCLIENTS_SOURCE.exists() else "python"


def c_binary(source: Path, hint: str = "") -> Path:
    """``source`` (a C file of ``bench/``) compiled into ``bench/.build/`` under its stem,
    rebuilt when the source is newer; built under a temporary name and renamed, so that two
    runs at once do not race. ``hint``: what to do without a compiler."""
    binary = BUILD_DIR / source.stem
    if binary.exists() and binary.stat().st_mtime >= source.stat().st_mtime:
        return binary
    compiler = c_compiler()
    if compiler is None:
        raise RuntimeError(f"no C compiler for bench/{source.name}{hint}")
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    partial = BUILD_DIR / f"{source.stem}.{os.getpid()}.tmp"
    subprocess.run([compiler, "-O2", "-o", str(partial), str(source)], check=True)
    os.replace(partial, binary)
    return binary


def wsclients_binary() -> Path:
    """``bench/wsclients.c`` compiled (``c_binary``)."""
    return c_binary(WSCLIENTS_SOURCE, " (use --clients python)")


PRIORITIES = ("idle", "normal")


def load_priority(priority: str) -> Any:
    """A ``preexec_fn`` giving the load generator its scheduling policy (see the docstring)."""
    if priority not in PRIORITIES:
        raise ValueError(f"unknown load priority {priority!r}")
    if priority == "normal":
        return None

    def idle() -> None:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))

    return idle


def clients_command(
    load_generator: str, kind: str, address: str, clients: int, stalled: int
) -> list[str]:
    """The load generator's command line; both speak the ``run_clients`` protocol."""
    if load_generator == "c":
        return [str(wsclients_binary()), kind, address, str(clients), str(stalled), TOPIC]
    return [sys.executable, __file__, "_clients", kind, address, str(clients), str(stalled)]


def proc_cpu_s(pid: int) -> float:
    return sum(proc_times(pid))


def proc_times(pid: int) -> tuple[float, float]:
    """User and system (kernel) CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def proc_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def started(cmd: list[str], **kw: Any) -> Iterator[subprocess.Popen[str]]:
    """A child process, ended by its pid (TERM, then KILL) whatever happens."""
    proc = subprocess.Popen(cmd, text=True, **kw)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_line(proc: subprocess.Popen[str], expected: str, timeout: float) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    os.set_blocking(proc.stdout.fileno(), True)
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    while time.monotonic() < deadline:
        if sel.select(max(0.0, deadline - time.monotonic())):
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{proc.args} exited before {expected!r}")
            if line.strip() == expected or line.startswith(expected):
                return
    raise TimeoutError(f"{proc.args}: no {expected!r} within {timeout} s")


def server_command(kind: str, port: int, redis_url: str, stats: Path) -> list[str]:
    if kind == "socketio":
        return ["node", str(HERE / "socketio" / "server.js"), str(port), TEXT_CHANNEL, redis_url]
    return [sys.executable, __file__, "_server", kind, str(port), redis_url, str(stats)]


def measure_point(
    kind: str,
    clients: int,
    rate: float,
    seconds: float,
    redis_url: str,
    stall: float,
    work: Path,
    load_generator: str = "python",
    priority: str = "normal",
) -> dict[str, Any]:
    port = free_port()
    stats = work / f"gc-{kind}-{port}.json"
    stalled = int(clients * stall)
    point: dict[str, Any] = {
        "server": kind,
        "clients": clients,
        "rate_hz": rate,
        "seconds": seconds,
        "stalled": stalled,
        "load_generator": load_generator,
        "load_priority": priority,
    }
    base, _, procs = kind.partition("x")  # "edgex2": two edge processes on one port
    copies = int(procs or 1)
    point["processes"] = copies
    log = (work / f"server-{kind}.log").open("a")
    with contextlib.ExitStack() as stack:
        stack.enter_context(log)
        servers = []
        for copy in range(copies):
            command = server_command(base, port, redis_url, stats.with_suffix(f".{copy}.json"))
            servers.append(
                stack.enter_context(started(command, stdout=subprocess.PIPE, stderr=log))
            )
        for server in servers:
            _wait_line(server, "duplicast edge for" if base == "edge" else "listening", 30)
        time.sleep(0.5)
        rss0 = sum(proc_rss_kib(server.pid) for server in servers)
        client_cmd = clients_command(load_generator, base, f"127.0.0.1:{port}", clients, stalled)
        with started(
            client_cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            preexec_fn=load_priority(priority),
        ) as pool:
            assert pool.stdin is not None and pool.stdout is not None
            _wait_line(pool, "connected", 60 + clients / 100)
            time.sleep(1.0)
            rss1 = sum(proc_rss_kib(server.pid) for server in servers)
            point["kib_per_conn"] = round((rss1 - rss0) / clients, 2)
            point["server_rss_mib"] = round(rss1 / 1024, 1)
            if base != "socketio":
                for server in servers:
                    os.kill(server.pid, signal.SIGUSR1)
            start_ns = now_ns()
            pool.stdin.write(f"start {start_ns}\n")
            pool.stdin.flush()
            sys0 = sum(proc_times(server.pid)[1] for server in servers)
            cpu0 = sum(proc_cpu_s(server.pid) for server in servers)
            load0 = proc_cpu_s(pool.pid)
            pub = subprocess.run(
                [sys.executable, __file__, "_publish", base, redis_url, str(rate), str(seconds)],
                capture_output=True,
                text=True,
                timeout=seconds * 3 + 30,
                check=True,
            )
            time.sleep(1.0)  # let the last frames arrive
            sys1 = sum(proc_times(server.pid)[1] for server in servers)
            cpu1 = sum(proc_cpu_s(server.pid) for server in servers)
            load1 = proc_cpu_s(pool.pid)
            if base != "socketio":
                for server in servers:
                    os.kill(server.pid, signal.SIGUSR2)
                time.sleep(0.2)
            pool.stdin.write("stop\n")
            pool.stdin.flush()
            result = json.loads(pool.stdout.readline())
    published = json.loads(pub.stdout)["published"]
    readers = clients - stalled
    frames = result.pop("frames")
    point.update(
        {
            "published": published,
            "frames_per_s": round(frames / seconds),
            "delivered_pct": round(100 * frames / max(1, published * readers), 2),
            "server_us_per_frame": round(1e6 * (cpu1 - cpu0) / max(1, frames), 2),
            # of which in the kernel (socket writes, and on loopback the TCP receive path of
            # the client's side, which runs in the sender's context)
            "server_sys_us_per_frame": round(1e6 * (sys1 - sys0) / max(1, frames), 2),
            "server_cpu_pct": round(100 * (cpu1 - cpu0) / (seconds + 1.0), 1),
            "clients_cpu_pct": round(100 * (load1 - load0) / (seconds + 1.0), 1),
            **result,
        }
    )
    gcs = []
    for copy in range(copies):
        path = stats.with_suffix(f".{copy}.json")
        if path.exists():
            gcs.append(json.loads(path.read_text()))
            path.unlink()
    if gcs:
        point["gc_collections"] = sum(g["gc_collections"] for g in gcs)
        point["gc_max_ms"] = max(g["gc_max_ms"] for g in gcs)
        point["gc_over_10ms"] = sum(g["gc_over_10ms"] for g in gcs)
        point["gc_full"] = sum(g["gc_full"] for g in gcs)
    return point


FULL = [(1000, 10, 0.0), (5000, 10, 0.0), (10000, 10, 0.0), (1000, 100, 0.0)]
FULL += [(1000, 200, 0.0), (1000, 300, 0.0), (1000, 100, 0.01)]
QUICK = [(200, 10, 0.0), (200, 100, 0.0), (200, 100, 0.01)]


def parse_points(spec: str) -> list[tuple[int, float, float]]:
    """``10k@10,1k@300,1k@100/1%``: clients@rate[/stalled%]."""
    points = []
    for item in spec.split(","):
        clients, _, rest = item.partition("@")
        rate, _, stall = rest.partition("/")
        n = int(float(clients.lower().replace("k", "")) * (1000 if "k" in clients.lower() else 1))
        points.append((n, float(rate), float(stall.rstrip("%")) / 100 if stall else 0.0))
    return points


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_server":
        run_server(argv[1], int(argv[2]), argv[3], argv[4])
        return 0
    if argv and argv[0] == "_publish":
        run_publisher(argv[1], argv[2], float(argv[3]), float(argv[4]))
        return 0
    if argv and argv[0] == "_clients":
        try:
            import uvloop

            uvloop.run(run_clients(argv[1], argv[2], int(argv[3]), int(argv[4])))
        except ImportError:
            asyncio.run(run_clients(argv[1], argv[2], int(argv[3]), int(argv[4])))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--redis",
        default=os.environ.get("REDIS_URL"),
        help="a Redis to use (default: $REDIS_URL, else a private one started here)",
    )
    parser.add_argument("--servers", default=",".join(SERVERS))
    parser.add_argument("--quick", action="store_true", help="small points, 3 s each")
    parser.add_argument("--points", default=None, help="e.g. 10k@10,1k@300,1k@100/1%%")
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument(
        "--clients",
        choices=("c", "python"),
        default=default_load_generator(),
        help="load generator: bench/wsclients.c (default when a C compiler is found) or the "
        "Python clients",
    )
    parser.add_argument(
        "--load-priority",
        choices=PRIORITIES,
        default="idle",
        help="the load generator's scheduling: SCHED_IDLE (default) or as any process",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "edge.json")
    args = parser.parse_args(argv)
    raise_nofile()
    points = parse_points(args.points) if args.points else (QUICK if args.quick else FULL)
    seconds = args.seconds or (3.0 if args.quick else 10.0)
    where = "bench/wsclients.c" if args.clients == "c" else "run_clients, Python"
    print(f"load generator: {args.clients} ({where}), priority {args.load_priority}", flush=True)
    with private_redis.redis_url(args.redis) as url:
        results = sweep(
            args.servers.split(","),
            points,
            seconds,
            url,
            args.out.parent,
            args.clients,
            args.load_priority,
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine(), "points": results}, indent=1))
    print(f"wrote {args.out}")
    return 0


def sweep(
    servers: list[str],
    points: list[tuple[int, float, float]],
    seconds: float,
    redis_url: str,
    work: Path,
    load_generator: str | None = None,
    priority: str = "idle",
) -> list[dict[str, Any]]:
    work.mkdir(parents=True, exist_ok=True)
    load_generator = load_generator or default_load_generator()
    if load_generator == "c":
        wsclients_binary()  # a build error shows here, once, not as an error in every point
    results = []
    for clients, rate, stall in points:
        for kind in servers:
            try:
                point = measure_point(
                    kind, clients, rate, seconds, redis_url, stall, work, load_generator, priority
                )
            except Exception as exc:  # a peer that cannot take the point is a result too
                point = {
                    "server": kind,
                    "clients": clients,
                    "rate_hz": rate,
                    "stalled": int(clients * stall),
                    "load_generator": load_generator,
                    "load_priority": priority,
                    "error": repr(exc)[:300],
                }
            print(json.dumps(point), flush=True)
            results.append(point)
    edge_config().unlink(missing_ok=True)
    return results


def edge_config() -> Path:
    """Where the edge's copy of the sample tournament (under this run's id) is written."""
    return Path(tempfile.gettempdir()) / f"duplicast-bench-{RUN}.toml"


def machine() -> dict[str, Any]:
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"nproc": os.cpu_count(), "cpu": model, "loadavg": os.getloadavg()}


if __name__ == "__main__":
    sys.exit(main())
