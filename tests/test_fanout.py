"""Fan-out: encode once, never wait on a client, conflate or close slow ones."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import socket
import struct
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import websockets
from websockets.frames import Frame, Opcode

import hub.wire.frames as frames_module
from hub.serve import feedsocket
from hub.serve.fanout import Fanout
from hub.serve.feed import TopicKey
from hub.serve.feedclient import CLOSE_TOO_SLOW, Client
from hub.serve.http import RunningServer, create_app, serve
from hub.serve.limits import Limits
from hub.wire.codec import to_json, unpack
from hub.wire.frames import FORMATS, Outgoing, build_frame
from hub.wire.patch import apply_patch
from tests.feedwriter import FeedWriter

STANDINGS: TopicKey = ("public", "standings")


class FakeSink:
    """A raw sink whose kernel buffer we control. Like an asyncio transport with flow control,
    it is paused (no direct writes) while its backlog is not empty, and tells its client
    (``client``, when set) when that changes."""

    raw = True

    def __init__(self) -> None:
        self.data = bytearray()
        self._backlog = 0
        self.closed: tuple[int, str] | None = None
        self.client: Client | None = None

    @property
    def backlog(self) -> int:
        return self._backlog

    @backlog.setter
    def backlog(self, size: int) -> None:
        self._backlog = size
        if self.client is not None:
            self.client.sink_changed()

    def is_open(self) -> bool:
        return self.closed is None

    def buffered(self) -> int:
        return self._backlog

    def write(self, data: bytes) -> None:
        self.data += data

    def writer(self) -> Any:
        return None if self._backlog or self.closed is not None else self.write

    async def send(self, out: Outgoing) -> None:
        self.write(out.frame)

    def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)

    def messages(self) -> list[dict[str, Any]]:
        """Parse the unmasked frames written so far."""
        out, data, i = [], bytes(self.data), 0
        while i < len(data):
            head, n = data[i], data[i + 1] & 0x7F
            i += 2
            if n == 126:
                (n,) = struct.unpack_from("!H", data, i)
                i += 2
            elif n == 127:
                (n,) = struct.unpack_from("!Q", data, i)
                i += 8
            payload = data[i : i + n]
            i += n
            out.append(json.loads(payload) if head == 0x81 else unpack(payload))
        return out


def _rfc6455_frame(payload: bytes, text: bool) -> bytes:
    """The hand-packed header the fan-out used before websockets built its frames (the
    reference the library's bytes must equal: clients saw these exact bytes)."""
    head = 0x81 if text else 0x82
    n = len(payload)
    if n < 126:
        return struct.pack("!BB", head, n) + payload
    if n < 65536:
        return struct.pack("!BBH", head, 126, n) + payload
    return struct.pack("!BBQ", head, 127, n) + payload


def test_build_frame_is_websockets_with_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every payload size class (7-bit, 16-bit and 64-bit length), text and binary: the frame
    is websockets' own serialization, byte for byte what the hand-packed header gave."""
    for size in (0, 1, 125, 126, 127, 65535, 65536, 70000):
        payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
        for text, opcode in ((True, Opcode.TEXT), (False, Opcode.BINARY)):
            expected = Frame(opcode, payload).serialize(mask=False, extensions=[])
            assert build_frame(payload, text) == expected == _rfc6455_frame(payload, text)
    assert feedsocket._PING == b"\x89\x00"  # an unmasked ping with no payload
    serialized: list[bool] = []
    real = Frame.serialize

    def spy(self: Frame, **kwargs: Any) -> bytes:
        serialized.append(kwargs["mask"])
        return real(self, **kwargs)

    monkeypatch.setattr(Frame, "serialize", spy)
    assert build_frame(b"{}", True) == b"\x81\x02{}"
    assert serialized == [False]  # built by the library, unmasked (server side)


async def test_fanout_never_encodes_a_topic_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    """Frames arrive encoded once per format (hub.serve.feed); every client gets the same bytes."""

    def refuse(obj: Any) -> bytes:
        raise AssertionError("the fan-out encoded a topic frame")

    store = FeedWriter()
    fanout = Fanout(store)
    store.put(STANDINGS, {"a": 0})
    monkeypatch.setattr(frames_module, "to_json", refuse)
    monkeypatch.setattr(frames_module, "pack", refuse)
    sinks = [FakeSink() for _ in range(5)]
    clients = [fanout.add(sink, "public", "public", "json") for sink in sinks]
    for client in clients:
        fanout.subscribe(client, "standings")
    for n in range(1, 4):
        update = store.put(STANDINGS, {"a": n})
        assert update is not None
        fanout.publish(update.key, update.outs)
    await asyncio.sleep(0)  # the flush
    first = bytes(sinks[0].data)
    assert all(bytes(sink.data) == first for sink in sinks)
    assert [m["seq"] for m in sinks[0].messages()] == [1, 2, 3, 4]
    msgpack_client = fanout.add(FakeSink(), "public", "public", "msgpack")
    fanout.subscribe(msgpack_client, "standings")
    update = store.put(STANDINGS, {"a": 9})
    assert update is not None
    fanout.publish(update.key, update.outs)
    await asyncio.sleep(0)
    assert fanout.frames_sent == 5 * 5 + 2


async def test_one_flush_writes_a_burst_in_one_write() -> None:
    store = FeedWriter()
    fanout = Fanout(store)
    writes: list[bytes] = []
    sink = FakeSink()
    sink.write = writes.append  # type: ignore[method-assign]
    client = fanout.add(sink, "public", "public", "json")
    for topic in ("standings", "table:1", "seat:1"):
        fanout.subscribe(client, topic)
    await asyncio.sleep(0)
    assert len(writes) == 1
    for topic in ("standings", "table:1", "seat:1"):
        update = store.put(("public", topic), {"x": 1})
        assert update is not None
        fanout.publish(update.key, update.outs)
    await asyncio.sleep(0)
    assert len(writes) == 2 and writes[1].count(b'"type":"snapshot"') == 3


async def wait_for(predicate: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


def replay(messages: list[dict[str, Any]]) -> dict[str, tuple[int, dict[str, Any]]]:
    """Apply a client's messages as a page would, asserting it never sees a gap."""
    state: dict[str, tuple[int, dict[str, Any]]] = {}
    for m in messages:
        if m["type"] == "snapshot":
            assert m["seq"] >= state.get(m["topic"], (0, {}))[0]
            state[m["topic"]] = (m["seq"], m["data"])
        elif m["type"] == "delta":
            seq, data = state[m["topic"]]
            assert m["seq"] == seq + 1, f"gap in {m['topic']}: {seq} -> {m['seq']}"
            state[m["topic"]] = (m["seq"], apply_patch(data, m["patch"]))
    return state


async def test_backed_up_client_is_conflated_to_latest_snapshots() -> None:
    store = FeedWriter()
    fanout = Fanout(store, Limits(max_frames=8, high_water=1000, slow_timeout=60, poll=0.005))
    fast_sink, slow_sink = FakeSink(), FakeSink()
    fast = fanout.add(fast_sink, "public", "public", "json")
    slow = fanout.add(slow_sink, "public", "public", "json")
    slow_sink.client = slow
    for client in (fast, slow):
        fanout.subscribe(client, "standings")
        fanout.subscribe(client, "table:1")
    await asyncio.sleep(0)
    slow_sink.backlog = 10_000  # its socket stopped draining
    for n in range(50):
        for topic in ("standings", "table:1"):
            update = store.put(("public", topic), {"n": n, "keep": topic})
            assert update is not None
            fanout.publish(update.key, update.outs)
        await asyncio.sleep(0)
    assert slow.stale == {"standings", "table:1"} and slow.queued <= 8
    assert fanout.frames_dropped > 0
    assert len(fast_sink.messages()) == 2 + 100  # the fast client got everything meanwhile
    slow_sink.backlog = 0
    await wait_for(lambda: not slow.stale and slow.queued == 0)
    final = {t: (50, {"n": 49, "keep": t}) for t in ("standings", "table:1")}
    assert replay(slow_sink.messages()) == final
    assert replay(fast_sink.messages()) == final
    update = store.put(STANDINGS, {"n": 50, "keep": "standings"})
    assert update is not None
    fanout.publish(update.key, update.outs)
    await asyncio.sleep(0)
    assert slow_sink.messages()[-1] == {
        "type": "delta",
        "topic": "standings",
        "seq": 51,
        "patch": [{"op": "replace", "path": "/n", "value": 50}],
    }
    assert slow_sink.closed is None and fanout.slow_closes == 0


async def test_client_stale_too_long_is_closed() -> None:
    store = FeedWriter()
    fanout = Fanout(store, Limits(max_frames=4, high_water=100, slow_timeout=0.05, poll=0.005))
    sink = FakeSink()
    client = fanout.add(sink, "public", "public", "msgpack")
    fanout.subscribe(client, "standings")
    sink.backlog = 1_000
    for n in range(10):
        update = store.put(STANDINGS, {"n": n})
        assert update is not None
        fanout.publish(update.key, update.outs)
    await wait_for(lambda: client.closed)
    assert sink.closed == (CLOSE_TOO_SLOW, "client too slow")
    assert fanout.slow_closes == 1 and client not in fanout.clients
    assert fanout.subscribed(STANDINGS) == 0


async def test_repeated_overflows_close_the_client() -> None:
    """What a subscribe sends first never counts (issue #30 item 1): nine topics' snapshots
    in a queue of 2 are no overflow. Updates the client does not read are: a topic's third
    update overflows the queue (its topic conflated), and the third overflow within the
    window closes the client."""
    store = FeedWriter()
    fanout = Fanout(store, Limits(max_frames=2, max_overflows=3, slow_timeout=60))
    sink = FakeSink()
    sink.backlog = 10**6
    client = fanout.add(sink, "public", "public", "json")
    for seat in range(1, 10):
        fanout.subscribe(client, f"seat:{seat}")
    assert not client.closed and not client.stale and client.queued == 9
    for seat in range(10, 13):
        fanout.subscribe(client, f"seat:{seat}")
        for n in range(3):
            update = store.put(("public", f"seat:{seat}"), {"n": n})
            assert update is not None
            fanout.publish(update.key, update.outs)
        fanout.flush()
        if seat < 12:
            assert not client.closed and f"seat:{seat}" in client.stale
    assert client.closed and sink.closed == (CLOSE_TOO_SLOW, "client too slow")


async def test_unsubscribe_stops_delivery() -> None:
    store = FeedWriter()
    fanout = Fanout(store)
    sink = FakeSink()
    client = fanout.add(sink, "live", "live", "json")
    fanout.subscribe(client, "table:1")
    fanout.unsubscribe(client, "table:1")
    update = store.put(("live", "table:1"), {"x": 1})
    assert update is not None
    fanout.publish(update.key, update.outs)
    await asyncio.sleep(0)
    assert sink.messages() == []  # the queued snapshot was dropped too


def direct_allowed(client: Client) -> bool:
    """When a frame may go straight to the sink: nothing queued or stale, no writer, the sink
    writable."""
    writer = client._writer
    return (
        not client.closed
        and not client._queue
        and not client._dirty
        and not client.stale
        and (writer is None or writer.done())
        and client.sink.writer() is not None
    )


@pytest.mark.parametrize("seed", range(12))
async def test_direct_path_never_skips_a_queue_and_always_comes_back(seed: int) -> None:
    """Random publishes, (re)subscriptions, control messages and sockets that stop and start
    draining: a client is never written to directly while anything of its own waits (order),
    every client sees every topic without a gap, and once all drains every client is back on
    the direct path."""
    rng = random.Random(seed)
    store = FeedWriter()
    fanout = Fanout(
        store, Limits(max_frames=6, high_water=50, slow_timeout=60, poll=0.001, max_overflows=99)
    )
    topics = ["standings", "table:1", "seat:1"]
    for topic in topics:
        store.put(("public", topic), {"n": 0})
    sinks = [FakeSink() for _ in range(5)]
    clients = []
    for sink in sinks:
        client = fanout.add(sink, "public", "public", "json")
        sink.client = client
        clients.append(client)
    counter = 0
    for _ in range(300):
        op = rng.random()
        client = rng.choice(clients)
        if op < 0.45:
            counter += 1
            update = store.put(("public", rng.choice(topics)), {"n": counter})
            assert update is not None
            fanout.publish(update.key, update.outs)
        elif op < 0.6:
            fanout.subscribe(client, rng.choice(topics))
        elif op < 0.65:
            fanout.unsubscribe(client, rng.choice(topics))
        elif op < 0.8:
            client.sink.backlog = rng.choice([0, 0, 100])  # type: ignore[attr-defined]
        elif op < 0.85:
            client.send({"type": "pong"})
        else:
            await asyncio.sleep(rng.choice([0, 0, 0.003]))
        for c in clients:
            if c.direct is not None:
                assert direct_allowed(c), "a direct write would overtake queued frames"
    for sink in sinks:
        sink.backlog = 0
    await wait_for(lambda: all(direct_allowed(c) for c in clients))
    await asyncio.sleep(0.01)
    for client, sink in zip(clients, sinks, strict=True):
        assert client.direct is not None, "a drained client stayed off the direct path"
        state = replay([m for m in sink.messages() if m.get("type") != "pong"])
        for topic in client.topics:
            assert state[topic] == store.snapshot(("public", topic))
    assert fanout.slow_closes == 0


# -- over real sockets ------------------------------------------------------------------------


class Source:
    def __init__(self, limits: Limits) -> None:
        self.tournament = "t-fan"
        self.store = FeedWriter()
        self.fanout = Fanout(self.store, limits)

    def put(self, key: TopicKey, payload: dict[str, Any]) -> None:
        update = self.store.put(key, payload)
        if update is not None:
            self.fanout.publish(update.key, update.outs)

    def ready(self) -> bool:
        return True

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        return {"ok": False, "code": "not_allowed", "error": "read-only"}

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@contextlib.asynccontextmanager
async def running(source: Source, raw: bool = True) -> AsyncIterator[RunningServer]:
    server = await serve(create_app(source, raw_frames=raw))
    try:
        yield server
    finally:
        await server.stop()


async def stalled_client(url: str) -> websockets.ClientConnection:
    """A client that reads nothing after the handshake (tiny receive buffer, tiny queue)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    host, port = url.removeprefix("ws://").split("/")[0].split(":")
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    return await websockets.connect(url, sock=sock, max_queue=1, compression=None)


async def read_all(ws: websockets.ClientConnection) -> tuple[list[dict[str, Any]], int | None]:
    messages = []
    try:
        while True:
            frame = await asyncio.wait_for(ws.recv(), 10)
            messages.append(json.loads(frame))
    except websockets.ConnectionClosed as closed:
        return messages, closed.rcvd.code if closed.rcvd else None
    except TimeoutError:
        return messages, None


BLOB = "x" * 20_000


async def flood(source: Source, fast: websockets.ClientConnection, updates: int) -> float:
    """Publish big updates while a fast client reads them all; its worst latency."""
    received: list[dict[str, Any]] = []
    worst = 0.0
    for n in range(1, updates + 1):
        sent = time.monotonic()
        source.put(STANDINGS, {"n": n, "blob": f"{BLOB}{n}", "at": sent})
        received.append(json.loads(await asyncio.wait_for(fast.recv(), 5)))
        worst = max(worst, time.monotonic() - sent)
    assert [m["seq"] for m in received] == list(range(2, updates + 2))
    return worst


async def subscribed(url: str, client: websockets.ClientConnection | None = None) -> Any:
    ws = client or await websockets.connect(url, compression=None)
    await ws.send(to_json({"op": "subscribe", "topics": ["standings"]}).decode())
    return ws


@pytest.mark.parametrize("raw", [True, False], ids=["raw-frames", "asgi-send"])
async def test_stalled_client_is_conflated_while_fast_client_keeps_up(raw: bool) -> None:
    source = Source(Limits(max_frames=16, high_water=64 << 10, slow_timeout=60))
    source.put(STANDINGS, {"n": 0, "blob": BLOB})
    async with running(source, raw) as server:
        slow = await subscribed(server.ws_url, await stalled_client(server.ws_url))
        fast = await subscribed(server.ws_url)
        assert json.loads(await fast.recv())["type"] == "hello"
        assert json.loads(await fast.recv())["seq"] == 1
        await asyncio.sleep(0.05)
        worst = await flood(source, fast, 400)  # 8 MB: more than the kernel buffers hold
        assert worst < 1.0
        assert source.fanout.frames_dropped > 0
        messages, code = await read_all_until(slow, 401)
        assert code is None
        assert replay(messages) == {"standings": (401, source.store.snapshot(STANDINGS)[1])}
        assert len(messages) < 400  # the backlog was conflated into snapshots
        assert source.fanout.slow_closes == 0
        await slow.close()
        await fast.close()


async def read_all_until(
    ws: websockets.ClientConnection, seq: int
) -> tuple[list[dict[str, Any]], int | None]:
    messages: list[dict[str, Any]] = []
    while not messages or messages[-1].get("seq") != seq:
        try:
            messages.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        except websockets.ConnectionClosed as closed:
            return messages, closed.rcvd.code if closed.rcvd else None
    return messages, None


async def test_stalled_client_is_closed_with_4008() -> None:
    source = Source(Limits(max_frames=16, high_water=64 << 10, slow_timeout=0.2))
    source.put(STANDINGS, {"n": 0, "blob": BLOB})
    async with running(source) as server:
        slow = await subscribed(server.ws_url, await stalled_client(server.ws_url))
        fast = await subscribed(server.ws_url)
        await fast.recv(), await fast.recv()
        await asyncio.sleep(0.05)
        flooding = asyncio.ensure_future(flood(source, fast, 400))
        # The slow client reads from the moment it is closed, as the flood goes on: a closing
        # socket that takes nothing for close_grace (1 s) is cut off without its close frame,
        # and on a loaded machine the flood after the close outlasted that (code None).
        await wait_for(
            lambda: (
                source.fanout.slow_closes == 1
                or (flooding.done() and flooding.exception() is not None)
            )
        )
        messages, code = await read_all(slow)
        await flooding
        assert source.fanout.slow_closes == 1
        assert code == CLOSE_TOO_SLOW
        replay(messages)  # what it did get had no gap
        assert len(source.fanout.clients) == 1  # the fast one
        await fast.close()


# -- bounded state and limits (issue #9.2, #9.8) ----------------------------------------------


async def test_topic_state_is_freed_when_the_last_subscriber_leaves() -> None:
    """Many distinct topic names subscribed once: once the sockets close, nothing is kept."""
    import gc
    import tracemalloc

    store = FeedWriter()
    fanout = Fanout(store, Limits(max_topics=64))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for batch in range(4):
            clients = [fanout.add(FakeSink(), "public", "public", fmt) for fmt in FORMATS * 50]
            for n, client in enumerate(clients):
                for k in range(50):
                    topic = f"seat:{(batch * 100 + n) * 50 + k}"
                    assert fanout.subscribe(client, topic) is None
            assert fanout.topics() == 100 * 50
            await asyncio.sleep(0)
            for client in clients:
                client.close()
            del clients, client
        assert fanout.topics() == 0 and not fanout.clients
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 256 << 10, f"{grown} bytes kept after 20,000 distinct topics"


async def test_topics_per_connection_are_limited() -> None:
    fanout = Fanout(FeedWriter(), Limits(max_topics=3))
    client = fanout.add(FakeSink(), "public", "public", "json")
    assert [fanout.subscribe(client, f"seat:{s}") for s in range(1, 5)] == [
        None,
        None,
        None,
        "too_many_topics",
    ]
    assert fanout.subscribe(client, "seat:1") is None  # already held: a reset, not a new one
    fanout.unsubscribe(client, "seat:2")
    assert fanout.subscribe(client, "seat:4") is None and fanout.topics() == 3


async def test_connections_per_address_are_counted_and_freed() -> None:
    fanout = Fanout(FeedWriter(), Limits(max_per_address=2))
    a = [fanout.add(FakeSink(), "public", "public", "json", "10.0.0.1") for _ in range(2)]
    assert not fanout.may_connect("10.0.0.1") and fanout.may_connect("10.0.0.2")
    a[0].close()
    assert fanout.may_connect("10.0.0.1")
    a[1].close()
    assert fanout.addresses() == 0


async def test_publish_takes_encoded_frames_and_never_reencodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The contract: ``publish(key, frames)`` writes ``frames[fmt].frame`` as is; new
    subscribers get what ``store.catch_up`` returns."""

    class Store:
        def __init__(self) -> None:
            self.asked: list[tuple[TopicKey, str, int | None]] = []

        def catch_up(self, key: TopicKey, fmt: str, resume: int | None) -> list[Outgoing]:
            self.asked.append((key, fmt, resume))
            return [Outgoing(f"first-{fmt}".encode(), fmt == "json")]

    def refuse(obj: Any) -> bytes:
        raise AssertionError("the fan-out encoded something")

    store = Store()
    fanout = Fanout(store)
    sinks = {fmt: FakeSink() for fmt in FORMATS}
    clients = {fmt: fanout.add(sinks[fmt], "public", "public", fmt) for fmt in FORMATS}
    monkeypatch.setattr(frames_module, "to_json", refuse)
    monkeypatch.setattr(frames_module, "pack", refuse)
    for fmt, client in clients.items():
        fanout.subscribe(client, "standings", 7 if fmt == "json" else None)
    assert store.asked == [(STANDINGS, "json", 7), (STANDINGS, "msgpack", None)]
    frames = {"json": Outgoing(b'{"x":1}', True), "msgpack": Outgoing(b"\x81\xa1x\x01", False)}
    fanout.publish(STANDINGS, frames)
    await asyncio.sleep(0)
    assert bytes(sinks["json"].data) == build_frame(b"first-json", True) + frames["json"].frame
    assert bytes(sinks["msgpack"].data) == (
        build_frame(b"first-msgpack", False) + frames["msgpack"].frame
    )
    fanout.publish(("public", "ticker"), frames)  # nobody subscribed: nothing happens
    assert fanout.topics() == 1


async def test_stalled_client_is_closed_within_six_seconds_by_default() -> None:
    """Issue #9.8: a reader that stops is closed after ~5 s (``slow_timeout``), not ~25 s."""
    source = Source(Limits())
    source.put(STANDINGS, {"n": 0, "blob": BLOB})
    async with running(source) as server:
        slow = await subscribed(server.ws_url, await stalled_client(server.ws_url))
        fast = await subscribed(server.ws_url)
        await fast.recv(), await fast.recv()
        stalled_at = time.monotonic()
        n = 0
        while source.fanout.slow_closes == 0 and time.monotonic() - stalled_at < 15:
            n += 1
            source.put(STANDINGS, {"n": n, "blob": f"{BLOB}{n}"})
            while True:  # the fast client keeps up
                if json.loads(await asyncio.wait_for(fast.recv(), 5))["seq"] == n + 1:
                    break
            await asyncio.sleep(0.01)
        took = time.monotonic() - stalled_at
        assert source.fanout.slow_closes == 1, "the stalled client was never closed"
        assert took < 6.5, f"closed after {took:.1f} s"
        assert len(source.fanout.clients) == 1
        await slow.close()
        await fast.close()


async def test_a_client_resuming_ahead_of_a_lagging_edge_never_sees_its_seqs_go_back() -> None:
    """DESIGN §7: a client that moved from a faster edge resumes at a seq this edge has not
    reached: it gets nothing at or below its seq (no older snapshot, no old delta), then the
    frames above it; the edge is told to fetch that topic."""
    from hub.serve.edge_feed import EdgeFeed
    from hub.serve.feed import Frame as FeedFrame

    behind: list[TopicKey] = []
    store = EdgeFeed(on_behind=behind.append)
    fanout = Fanout(store)
    store.seed(STANDINGS, FeedFrame.snapshot("standings", 5, {"n": 5}))
    sink = FakeSink()
    client = fanout.add(sink, "public", "public", "json")
    sink.client = client
    fanout.subscribe(client, "standings", resume=8)
    assert behind == [STANDINGS]
    for n in range(6, 11):
        frame = FeedFrame.delta("standings", n, [{"op": "replace", "path": "/n", "value": n}])
        assert store.apply(STANDINGS, frame)
        fanout.publish(STANDINGS, frame.outs)
        await asyncio.sleep(0)
    assert [m["seq"] for m in sink.messages()] == [9, 10]
    assert client.floors is None and client.direct is not None  # back on the direct path


def test_an_edge_store_says_in_one_call_whether_a_feed_frame_is_taken_old_or_a_gap() -> None:
    """``EdgeFeed.apply`` answers the edge's one question per frame (the walk of a console
    event does not go back to the store): taken (True), at or below the seq it stands at
    (None: nothing changed, nothing to send), or a gap (False: nothing changed)."""
    from hub.serve.edge_feed import EdgeFeed
    from hub.serve.feed import Frame as FeedFrame

    store = EdgeFeed()
    store.seed(STANDINGS, FeedFrame.snapshot("standings", 5, {"n": 5}))

    def delta(n: int) -> FeedFrame:
        return FeedFrame.delta("standings", n, [{"op": "replace", "path": "/n", "value": n}])

    assert store.apply(STANDINGS, delta(5)) is None  # in the snapshot already
    assert store.apply(STANDINGS, FeedFrame.snapshot("standings", 4, {"n": 4})) is None
    assert store.apply(STANDINGS, delta(6)) is True and store.seq(STANDINGS) == 6
    assert store.apply(STANDINGS, delta(6)) is None and store.seq(STANDINGS) == 6
    assert store.apply(STANDINGS, delta(8)) is False and store.seq(STANDINGS) == 6
    assert store.apply(STANDINGS, FeedFrame.snapshot("standings", 9, {"n": 9})) is True
    assert store.seq(STANDINGS) == 9
