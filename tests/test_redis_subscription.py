"""The Redis subscription's reader (``hub.bus.redis_subscription``): a protocol that parses
what arrives with hiredis and delivers it straight into the subscription's buffer, a chunk at
a time; past the read rate it pauses reading; a cut connection resubscribes."""

from __future__ import annotations

import asyncio
import itertools
import random
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from redis_server import RedisServer, free_port

from hub.bus.base import Message, ReadRate
from hub.bus.redis import RedisBus, RetryPolicy
from hub.bus.redis_subscription import YIELD_EVERY, RedisSubscription, _Reader

FAST_RETRY = RetryPolicy(deadline=15.0, base=0.02, cap=0.2)


def message(channel: bytes, data: bytes) -> bytes:
    """A RESP2 pub/sub message as Redis sends it to a SUBSCRIBE."""
    parts = [b"message", channel, data]
    return b"*3\r\n" + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def pmessage(pattern: bytes, channel: bytes, data: bytes) -> bytes:
    parts = [b"pmessage", pattern, channel, data]
    return b"*4\r\n" + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


class FakeBus:
    _retry = FAST_RETRY
    _rng = random.Random(0)

    def __init__(self) -> None:
        self._subscriptions: set[Any] = set()

    def _subscriber(self) -> dict[str, Any]:  # pragma: no cover - never connects here
        raise AssertionError("these subscriptions are fed by hand")


class FakeTransport:
    """Records what the reader does to its connection."""

    def __init__(self) -> None:
        self.reading = True
        self.pauses = 0
        self.aborted = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def pause_reading(self) -> None:
        assert self.reading
        self.reading = False
        self.pauses += 1

    def resume_reading(self) -> None:
        assert not self.reading
        self.reading = True

    def abort(self) -> None:
        self.aborted = True

    def is_closing(self) -> bool:
        return self.aborted


def hand_fed(rate: ReadRate | None = None, pattern: str = "t:console:1") -> RedisSubscription:
    """A subscription made outside a loop (so its connecting task never starts)."""
    return RedisSubscription(FakeBus(), pattern, 100_000, 1 << 30, rate)  # type: ignore[arg-type]


def test_a_chunk_of_many_messages_is_parsed_a_bounded_step_at_a_time() -> None:
    sub = hand_fed()

    async def feed() -> None:
        reader = _Reader(sub, setup=1)  # one login reply (AUTH) before the confirmation
        transport = FakeTransport()
        reader.connection_made(transport)  # type: ignore[arg-type]
        confirm = b"*3\r\n$9\r\nsubscribe\r\n$11\r\nt:console:1\r\n:1\r\n"
        chunk = b"+OK\r\n" + confirm
        chunk += b"".join(message(b"t:console:1", b"%d" % i) for i in range(300))
        reader.data_received(chunk[:-3])  # the last message cut short, as a read may end
        assert sub._registered.is_set()
        assert sub.pending == YIELD_EVERY  # the rest waits in the reader, reading paused
        assert not transport.reading
        steps = [sub.pending]
        while sub.pending < 299:
            await asyncio.sleep(0)  # one pass of the loop: at most one more step
            steps.append(sub.pending)
        assert all(b - a <= YIELD_EVERY for a, b in itertools.pairwise(steps))
        assert transport.reading  # all parsed: reading again
        reader.data_received(chunk[-3:])
        assert [m.data for m in sub.take_nowait()] == [b"%d" % i for i in range(300)]
        assert not transport.aborted and not reader.ended.done()

    asyncio.run(feed())


def test_pattern_messages_are_stamped_when_parsed() -> None:
    sub = hand_fed(pattern="t:console:*")

    async def feed() -> None:
        reader = _Reader(sub, setup=0)
        reader.connection_made(FakeTransport())  # type: ignore[arg-type]
        before = time.monotonic()
        reader.data_received(pmessage(b"t:console:*", b"t:console:7", b"\x81\xa1a\x01"))
        (got,) = sub.take_nowait()
        assert got == Message("t:console:7", b"\x81\xa1a\x01")
        assert before <= got.arrived <= time.monotonic()

    asyncio.run(feed())


def test_past_its_rate_the_reader_pauses_reading_until_the_bucket_allows() -> None:
    rate = ReadRate(messages=1000, bytes=1e9, burst=0.02)  # 20 messages of burst
    sub = hand_fed(rate)

    async def feed() -> None:
        reader = _Reader(sub, setup=0)
        transport = FakeTransport()
        reader.connection_made(transport)  # type: ignore[arg-type]
        t0 = time.monotonic()
        reader.data_received(b"".join(message(b"t:console:1", b"x") for _ in range(200)))
        # The burst (and PAY_EVERY, 0.01 s of reading, more) is read at once; then the
        # bucket is empty and reading waits, paused
        assert 20 <= sub.pending <= 33
        assert not transport.reading
        throttled = []
        while sub.pending < 200:
            throttled.append(sub.throttled)
            await asyncio.sleep(0.005)
        assert sum(throttled) > len(throttled) / 2  # mostly waiting for the bucket
        elapsed = time.monotonic() - t0
        # 200 messages at 1000/s with 20 of burst: about 0.18 s, never much less
        assert elapsed >= 0.15, elapsed
        await asyncio.sleep(0.05)  # (the last messages' time at the rate, then it reads on)
        assert transport.pauses == 1 and transport.reading  # paused while it held more

    asyncio.run(feed())


def test_an_error_reply_ends_the_connection_with_redis_pys_exception() -> None:
    from redis.exceptions import AuthenticationError, NoPermissionError

    sub = hand_fed()

    async def feed() -> None:
        reader = _Reader(sub, setup=1)
        transport = FakeTransport()
        reader.connection_made(transport)  # type: ignore[arg-type]
        reader.data_received(b"-WRONGPASS invalid username-password pair\r\n")
        assert isinstance(reader.ended.result(), AuthenticationError)  # a retry may help
        assert transport.aborted
        reader = _Reader(sub, setup=0)
        reader.connection_made(FakeTransport())  # type: ignore[arg-type]
        reader.data_received(b"-NOPERM User t has no permissions to access a channel\r\n")
        assert isinstance(reader.ended.result(), NoPermissionError)  # refused: no retry

    asyncio.run(feed())


def kill_pubsub_clients(port: int) -> int:
    """CLIENT KILL TYPE pubsub on a raw connection: how many Redis cut."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        sock.sendall(b"CLIENT KILL TYPE pubsub\r\n")
        reply = sock.recv(64)
    assert reply.startswith(b":"), reply
    return int(reply[1:].split(b"\r\n")[0])


@pytest.mark.redis
async def test_a_cut_connection_resubscribes_at_once(tmp_path: Path) -> None:
    with RedisServer(tmp_path) as server:
        bus = RedisBus(server.url)  # the first retry within RetryPolicy().base (50 ms)
        await bus.connect()
        sub = bus.subscribe("t:console:1")
        glob = bus.subscribe("t:console:*")
        for s in (sub, glob):
            await s.ready()
        await bus.publish("t:console:1", b"before")
        for s in (sub, glob):
            assert [m.data for m in await asyncio.wait_for(s.take(), 5)] == [b"before"]
        t0 = time.monotonic()
        assert kill_pubsub_clients(server.port) == 2
        async with asyncio.timeout(5):
            while True:
                if await bus.publish("t:console:1", b"after") == 2:
                    break
                await asyncio.sleep(0.01)
        assert time.monotonic() - t0 < 1.0
        assert sub.reconnects == 1 and glob.reconnects == 1
        for s in (sub, glob):  # (one may have heard a publish or two before the other)
            async with asyncio.timeout(5):
                heard = [m.data for m in await s.take()]
                while heard[-1:] != [b"after"] or s.pending:
                    heard += [m.data for m in await s.take()]
            assert set(heard) == {b"after"}
        await sub.aclose()  # unsubscribed at once: Redis counts one receiver left
        async with asyncio.timeout(2):
            while await bus.publish("t:console:1", b"closed") != 1:
                await asyncio.sleep(0.01)
        await bus.close()


@pytest.mark.redis
async def test_a_flood_is_read_at_the_rate_and_the_loop_keeps_turning(tmp_path: Path) -> None:
    """Thousands of messages waiting on one connection are read at its rate, in order, a
    bounded step per pass of the loop (a ticker task sees at most YIELD_EVERY per tick)."""
    with RedisServer(tmp_path) as server:
        bus = RedisBus(server.url, retry=FAST_RETRY)
        await bus.connect()
        sub = bus.subscribe("t:flood", rate=ReadRate(messages=20_000, bytes=1e9, burst=0.05))
        await sub.ready()
        delivered = [0]
        sub.notify(lambda: delivered.__setitem__(0, delivered[0] + 1))
        steps: list[int] = []

        async def tick() -> None:
            while True:
                seen = delivered[0]
                await asyncio.sleep(0)
                steps.append(delivered[0] - seen)

        ticker = asyncio.create_task(tick())
        t0 = time.monotonic()
        await bus.publish_many([("t:flood", b"%06d" % i) for i in range(6000)])
        got: list[bytes] = []
        async with asyncio.timeout(10):
            while len(got) < 6000:
                got += [m.data for m in await sub.take()]
        elapsed = time.monotonic() - t0
        ticker.cancel()
        assert got == [b"%06d" % i for i in range(6000)]
        assert sub.dropped == 0 and sub.reconnects == 0
        assert elapsed >= (6000 - 1000) / 20_000, elapsed  # the rate, less its burst
        assert 0 < max(steps) <= YIELD_EVERY, max(steps)
        await bus.close()


@pytest.mark.redis
async def test_a_tls_url_subscribes_over_tls(tmp_path: Path) -> None:
    """``rediss://``: the subscription's connection speaks TLS with the context redis-py
    makes of the URL's ``ssl_*`` options (its CA here), as the bus's other commands."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make a certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    port = free_port()
    tls = ("--tls-port", str(port), "--tls-cert-file", str(cert), "--tls-key-file", str(key),
           "--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no")  # fmt: skip
    try:
        server = RedisServer(tmp_path / "redis", extra=tls)
        server.start()
    except RuntimeError:
        pytest.skip("this redis-server speaks no TLS")
    try:
        bus = RedisBus(f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={cert}", retry=FAST_RETRY)
        await bus.connect()
        assert bus._lane is None  # (commands on redis-py's TLS connections)
        sub = bus.subscribe("t:console:1")
        await asyncio.wait_for(sub.ready(), 5)
        assert await bus.publish("t:console:1", b"over tls") == 1
        assert [m.data for m in await asyncio.wait_for(sub.take(), 5)] == [b"over tls"]
        await bus.close()
    finally:
        server.stop()
