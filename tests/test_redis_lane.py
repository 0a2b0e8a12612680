"""The bus's lean connection (``hub.bus.redis_lane``): replies matched to their commands in
order whatever happens to a caller or the connection, redis-py's errors, and a connection that
is lost, silent or refused failing what is in flight and coming back for the next command."""

from __future__ import annotations

import asyncio
import time

import hiredis
import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from hub.bus.redis import RedisBus
from hub.bus.redis_lane import HEADS, Lane, lane_for, publishes

pytestmark = pytest.mark.redis


def lane(url: str, **kw: float) -> Lane:
    made = lane_for(url, **kw)
    assert made is not None
    return made


async def test_concurrent_callers_get_their_own_replies_in_order(
    redis_url: str, key_prefix: str
) -> None:
    one = lane(redis_url)
    key = f"{key_prefix}:n"

    async def incr(n: int) -> list[int]:
        return await one.execute([("INCRBY", key, 1)] * n)

    results = await asyncio.gather(*(incr(n) for n in (1, 3, 2, 5)))
    assert sorted(v for r in results for v in r) == list(range(1, 12))
    for r in results:  # a caller's pipeline is answered whole and in its order
        assert r == list(range(r[0], r[0] + len(r)))
    one.close()


async def test_error_replies_are_redis_py_exceptions_and_the_stream_stays_in_step(
    redis_url: str, key_prefix: str
) -> None:
    one = lane(redis_url)
    await one.call("SET", f"{key_prefix}:s", "x")
    replies = await one.execute(
        [
            ("HSET", f"{key_prefix}:s", "f", "v"),
            ("EVALSHA", "0" * 40, 0),
            ("GET", f"{key_prefix}:s"),
        ]
    )
    assert type(replies[0]) is ResponseError and "WRONGTYPE" in str(replies[0])
    assert isinstance(replies[1], NoScriptError)
    assert replies[2] == b"x"
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        await one.call("HSET", f"{key_prefix}:s", "f", "v")
    assert await one.call("PING") == b"PONG"
    one.close()


async def test_a_cancelled_caller_keeps_its_place_so_the_next_gets_its_own_reply(
    redis_url: str, key_prefix: str
) -> None:
    one = lane(redis_url)
    waiting = asyncio.ensure_future(one.call("BLPOP", f"{key_prefix}:nothing", "0.3"))
    await asyncio.sleep(0.05)
    waiting.cancel()
    assert await one.call("ECHO", "mine") == b"mine"  # not BLPOP's nil
    one.close()


async def test_the_bus_loads_its_script_again_after_redis_forgot_it(
    redis_url: str, key_prefix: str
) -> None:
    bus = RedisBus(redis_url)
    await bus.connect()
    stream = f"{key_prefix}:journal"
    first = await bus.append_many(stream, [b"a", b"b"], maxlen=100)
    admin = aioredis.Redis.from_url(redis_url)
    await admin.script_flush()
    await admin.aclose()
    second = await bus.append_many(stream, [b"c"], maxlen=100)  # NOSCRIPT, loaded, run
    assert [v for _, v in await bus.read(stream)] == [b"a", b"b", b"c"]
    assert [i for i, _ in await bus.read(stream)] == [*first, *second]
    await bus.close()


async def test_login_and_database_as_the_url_says(redis_url: str, key_prefix: str) -> None:
    other_db = redis_url.rsplit("/", 1)[0] + "/3"
    one = lane(other_db)
    await one.call("SET", f"{key_prefix}:db", "three")
    admin = aioredis.Redis.from_url(other_db)
    assert await admin.get(f"{key_prefix}:db") == b"three"
    await admin.delete(f"{key_prefix}:db")
    await admin.aclose()
    one.close()
    refused = lane(redis_url.replace("redis://", "redis://nobody:wrong@"))
    with pytest.raises(RedisConnectionError, match="setup"):
        await refused.call("PING")
    refused.close()


class Silent:
    """A TCP server that reads commands and answers none, or closes at once (``cut``)."""

    def __init__(self, cut: bool = False) -> None:
        self.cut = cut
        self.connections = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self.cut:
            await reader.read(100)
            writer.close()
            return
        while await reader.read(1000):
            pass
        writer.close()


async def serve(handler: Silent) -> tuple[asyncio.Server, str]:
    server = await asyncio.start_server(handler.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"redis://127.0.0.1:{port}/0"


async def test_a_silent_redis_times_out_what_is_in_flight_and_the_next_command_reconnects() -> None:
    handler = Silent()
    server, url = await serve(handler)
    one = lane(url, timeout=0.2)
    started = time.monotonic()
    calls = [asyncio.ensure_future(one.call("PING")) for _ in range(3)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(r, RedisTimeoutError) for r in results), results
    assert 0.15 < time.monotonic() - started < 2.0
    with pytest.raises(RedisTimeoutError):
        await one.call("PING")
    assert handler.connections == 2  # the timed-out connection was dropped, not reused
    one.close()
    server.close()
    await server.wait_closed()


async def test_a_lost_connection_fails_what_is_in_flight_and_the_next_command_reconnects() -> None:
    handler = Silent(cut=True)
    server, url = await serve(handler)
    one = lane(url, timeout=5.0)
    with pytest.raises(RedisConnectionError):
        await one.call("PING")
    with pytest.raises(RedisConnectionError):
        await one.call("PING")
    assert handler.connections == 2
    server.close()
    await server.wait_closed()
    with pytest.raises(RedisConnectionError):  # nobody listening: refused, at once
        await one.call("PING")
    one.close()


@pytest.mark.parametrize(
    "messages",
    [
        [("dup:t:feed", b"x" * 700), ("dup:t:ack:c1", b""), ("dup:t:feed", b"\r\n" * 9)],
        [("dup:é:ack:ç", b"\x00" * 100_000)],
        [],
    ],
)
def test_publishes_are_packed_as_hiredis_packs_them(messages: list[tuple[str, bytes]]) -> None:
    heads: dict[str, bytes] = {}
    packed = b"".join(hiredis.pack_command(("PUBLISH", c, d)) for c, d in messages)
    assert publishes(messages, heads) == packed
    assert publishes(messages, heads) == packed  # (again, from the heads remembered)


def test_publishes_leave_other_types_to_hiredis_and_keep_their_heads_bounded() -> None:
    with pytest.raises(TypeError):  # as hiredis refuses it
        publishes([("c", bytearray(b"ab"))], {})  # type: ignore[list-item]
    assert publishes([(b"c", b"d")], {}) == hiredis.pack_command(("PUBLISH", b"c", b"d"))  # type: ignore[list-item]
    heads = {str(n): b"" for n in range(HEADS)}
    publishes([("new", b"d")], heads)
    assert list(heads) == ["new"]


async def test_publish_answers_each_message_with_its_receivers(
    redis_url: str, key_prefix: str
) -> None:
    one = lane(redis_url)
    assert await one.publish([(f"{key_prefix}:a", b"1"), (f"{key_prefix}:b", b"2")]) == [0, 0]
    one.close()


def test_tls_urls_stay_with_redis_py() -> None:
    assert lane_for("rediss://127.0.0.1:6380/0") is None
    assert lane_for("unix:///tmp/redis.sock?db=2") is not None
