"""The bus contract, run on the memory bus and on Redis; then Redis faults on a private server."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from pathlib import Path

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis_server import RedisServer, free_port

from hub.bus import open_bus
from hub.bus.base import (
    BufferedSubscription,
    Bus,
    Fence,
    LeaseLost,
    Message,
    ReadRate,
    Subscription,
    parse_id,
)
from hub.bus.lease import LeaseHolder
from hub.bus.memory import MemoryBus
from hub.bus.protocols import Hashes, Journal, Leases, PubSub, PubSubHashes
from hub.bus.redis import RedisBus, RetryPolicy

QUIET = 0.2  # how long "nothing arrives" is watched for


async def receive(sub: Subscription, n: int, timeout: float = 5.0) -> list[Message]:
    async def take() -> list[Message]:
        return [await anext(sub) for _ in range(n)]

    return await asyncio.wait_for(take(), timeout)


async def assert_nothing_more(sub: Subscription) -> None:
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(anext(sub), QUIET)


# --- pub/sub -------------------------------------------------------------------------------


async def test_pattern_subscription_sees_matching_channels_only(bus: Bus, key_prefix: str) -> None:
    sub = bus.subscribe(f"{key_prefix}:console:*")
    await sub.ready()
    await bus.publish(f"{key_prefix}:console:1", b"one")
    await bus.publish(f"{key_prefix}:ack:c1", b"not for us")
    await bus.publish(f"{key_prefix}:console:12", b"twelve")
    got = await receive(sub, 2)
    assert got == [
        Message(f"{key_prefix}:console:1", b"one"),
        Message(f"{key_prefix}:console:12", b"twelve"),
    ]
    await assert_nothing_more(sub)
    await sub.aclose()


async def test_no_cross_talk_between_subscriptions(bus: Bus, key_prefix: str) -> None:
    acks_a = bus.subscribe(f"{key_prefix}:ack:a")
    acks_b = bus.subscribe(f"{key_prefix}:ack:b")
    everything = bus.subscribe(f"{key_prefix}:*")
    for sub in (acks_a, acks_b, everything):
        await sub.ready()
    await bus.publish(f"{key_prefix}:ack:a", b"A")
    await bus.publish(f"{key_prefix}:ack:b", b"B")
    assert [m.data for m in await receive(acks_a, 1)] == [b"A"]
    assert [m.data for m in await receive(acks_b, 1)] == [b"B"]
    assert [m.data for m in await receive(everything, 2)] == [b"A", b"B"]
    for sub in (acks_a, acks_b, everything):
        await assert_nothing_more(sub)
        await sub.aclose()


async def test_order_is_preserved_and_bytes_are_exact(bus: Bus, key_prefix: str) -> None:
    sub = bus.subscribe(f"{key_prefix}:feed")
    await sub.ready()
    payloads = [bytes([i % 256]) * (i % 7) + i.to_bytes(4, "big") for i in range(500)]
    payloads.append(b"")
    payloads.append(bytes(range(256)))
    for data in payloads:
        await bus.publish(f"{key_prefix}:feed", data)
    got = await receive(sub, len(payloads))
    assert [m.data for m in got] == payloads
    assert all(isinstance(m.data, bytes) and isinstance(m.channel, str) for m in got)
    await sub.aclose()


async def test_messages_before_subscribe_are_not_delivered(bus: Bus, key_prefix: str) -> None:
    await bus.publish(f"{key_prefix}:feed", b"too early")
    sub = bus.subscribe(f"{key_prefix}:feed")
    await sub.ready()
    await bus.publish(f"{key_prefix}:feed", b"on time")
    assert [m.data for m in await receive(sub, 1)] == [b"on time"]
    await sub.aclose()


async def test_closed_subscription_stops_and_others_continue(bus: Bus, key_prefix: str) -> None:
    closing = bus.subscribe(f"{key_prefix}:feed")
    staying = bus.subscribe(f"{key_prefix}:feed")
    await closing.ready()
    await staying.ready()

    async def consume() -> list[bytes]:
        return [m.data async for m in closing]

    consumer = asyncio.create_task(consume())
    await bus.publish(f"{key_prefix}:feed", b"1")
    await asyncio.sleep(0.1)
    await closing.aclose()
    assert await asyncio.wait_for(consumer, 2.0) == [b"1"]
    await closing.aclose()  # idempotent
    await bus.publish(f"{key_prefix}:feed", b"2")
    assert [m.data for m in await receive(staying, 2)] == [b"1", b"2"]
    with pytest.raises(StopAsyncIteration):
        await anext(closing)
    await staying.aclose()


async def test_bus_close_ends_subscriptions(bus: Bus, key_prefix: str) -> None:
    sub = bus.subscribe(f"{key_prefix}:feed")
    await sub.ready()
    waiting = asyncio.create_task(anext(sub))
    await asyncio.sleep(0.05)
    await bus.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(waiting, 2.0)


async def test_take_hands_over_every_message_received_at_once(bus: Bus, key_prefix: str) -> None:
    sub = bus.subscribe(f"{key_prefix}:console:*")
    await sub.ready()
    waiting = asyncio.create_task(sub.take())
    await asyncio.sleep(0.05)
    assert not waiting.done()  # it waits for the first message
    before = time.monotonic()
    await bus.publish(f"{key_prefix}:console:1", b"first")
    first = await asyncio.wait_for(waiting, 5.0)
    assert first == [Message(f"{key_prefix}:console:1", b"first")]
    assert before <= first[0].arrived <= time.monotonic()  # when the transport received it
    await bus.publish_many([(f"{key_prefix}:console:{i}", bytes([i])) for i in range(10)])
    deadline = time.monotonic() + 5.0
    while sub.pending < 10 and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert sub.pending == 10
    got = await sub.take(limit=4)
    assert [m.data for m in got] == [bytes([i]) for i in range(4)]
    assert sub.pending == 6
    got = await sub.take()  # the rest, oldest first
    assert [m.data for m in got] == [bytes([i]) for i in range(4, 10)]
    assert all(a.arrived <= b.arrived for a, b in itertools.pairwise(got))
    assert sub.pending == 0
    with pytest.raises(ValueError):
        await sub.take(limit=0)
    await sub.aclose()
    assert await asyncio.wait_for(sub.take(), 2.0) == []  # ended


async def test_take_and_iteration_share_one_buffer(bus: Bus, key_prefix: str) -> None:
    sub = bus.subscribe(f"{key_prefix}:feed")
    await sub.ready()
    for data in (b"1", b"2", b"3"):
        await bus.publish(f"{key_prefix}:feed", data)
    assert [m.data for m in await receive(sub, 1)] == [b"1"]
    deadline = time.monotonic() + 5.0
    while sub.pending < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert [m.data for m in await sub.take()] == [b"2", b"3"]
    await bus.close()
    assert await asyncio.wait_for(sub.take(), 2.0) == []  # the bus closed: it ended


async def test_subscription_buffer_size_per_subscription(bus: Bus, key_prefix: str) -> None:
    small = bus.subscribe(f"{key_prefix}:feed", buffer=3)
    await small.ready()
    for i in range(5):
        await bus.publish(f"{key_prefix}:feed", bytes([i]))
    deadline = time.monotonic() + 5.0
    while small.dropped < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert small.dropped == 2
    assert [m.data for m in await small.take()] == [b"\x00", b"\x01", b"\x02"]
    await small.aclose()
    with pytest.raises(ValueError):
        bus.subscribe(f"{key_prefix}:feed", buffer=0)


async def test_a_subscription_buffer_is_bounded_in_bytes_too(bus: Bus, key_prefix: str) -> None:
    """A count alone does not bound memory: 300-KB messages fill 1 MB after three."""
    sub = bus.subscribe(f"{key_prefix}:big", buffer=100, max_bytes=1_000_000)
    await sub.ready()
    for i in range(5):
        await bus.publish(f"{key_prefix}:big", bytes([i]) * 300_000)
    async with asyncio.timeout(5):
        while sub.pending + sub.dropped < 5:
            await asyncio.sleep(0.01)
    assert (sub.pending, sub.dropped) == (3, 2)
    assert [m.data[0] for m in await sub.take()] == [0, 1, 2]
    await bus.publish(f"{key_prefix}:big", b"room again")
    assert (await receive(sub, 1))[0].data == b"room again"
    await sub.aclose()


async def test_one_channel_subscription_and_a_consumer_of_several(
    bus: Bus, key_prefix: str
) -> None:
    """A pattern without glob characters is that one channel (on Redis: SUBSCRIBE, which an
    ACL allows by its channel patterns); ``notify`` and ``take_nowait`` let one consumer wait
    on several subscriptions at once."""
    one = bus.subscribe(f"{key_prefix}:console:1")
    two = bus.subscribe(f"{key_prefix}:console:2")
    assert isinstance(one, BufferedSubscription) and isinstance(two, BufferedSubscription)
    woken = asyncio.Event()
    for sub in (one, two):
        sub.notify(woken.set)
        await sub.ready()
    assert one.take_nowait() == []
    await bus.publish(f"{key_prefix}:console:10", b"not table 1")
    await bus.publish(f"{key_prefix}:console:2", b"two")
    await asyncio.wait_for(woken.wait(), 5)
    async with asyncio.timeout(5):
        while not two.pending:
            await asyncio.sleep(0.01)
    assert [m.data for m in two.take_nowait(10)] == [b"two"]
    await assert_nothing_more(one)
    for sub in (one, two):
        await sub.aclose()


def test_message_arrival_time_is_not_part_of_equality() -> None:
    assert Message("c", b"d", 1.0) == Message("c", b"d", 2.0) == Message("c", b"d")
    assert hash(Message("c", b"d", 1.0)) == hash(Message("c", b"d"))
    assert Message("c", b"d").arrived == 0.0


# --- journal streams -----------------------------------------------------------------------


async def test_append_ids_increase_and_read_pages(bus: Bus, key_prefix: str) -> None:
    stream = f"{key_prefix}:journal"
    ids = [await bus.append(stream, f"entry {i}".encode()) for i in range(25)]
    keys = [parse_id(i) for i in ids]
    assert keys == sorted(keys) and len(set(keys)) == 25

    pages: list[list[tuple[str, bytes]]] = []
    after = "0-0"
    while page := await bus.read(stream, after=after, count=10):
        pages.append(page)
        after = page[-1][0]
    assert [len(p) for p in pages] == [10, 10, 5]
    flat = [entry for page in pages for entry in page]
    assert flat == [(i, f"entry {n}".encode()) for n, i in enumerate(ids)]

    assert await bus.read(stream, after=ids[-1]) == []
    assert await bus.read(stream, after=ids[11], count=2) == flat[12:14]
    assert await bus.read(stream, after="0") == flat
    assert await bus.read(stream) == flat


async def test_append_many_keeps_order_and_interleaves_with_append(
    bus: Bus, key_prefix: str
) -> None:
    stream = f"{key_prefix}:journal"
    first = await bus.append(stream, b"single")
    batch = [f"batch {i}".encode() for i in range(300)]
    ids = await bus.append_many(stream, batch)
    assert await bus.append_many(stream, []) == []
    one = await bus.append_many(stream, [b"alone"])
    last = await bus.append(stream, b"after")
    keys = [parse_id(i) for i in [first, *ids, *one, last]]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    entries = await bus.read(stream, count=1000)
    assert entries == list(
        zip([first, *ids, *one, last], [b"single", *batch, b"alone", b"after"], strict=True)
    )


async def test_publish_many_and_hset_many(bus: Bus, key_prefix: str) -> None:
    sub = bus.subscribe(f"{key_prefix}:ack:*")
    await sub.ready()
    messages = [(f"{key_prefix}:ack:{i % 3}", f"m{i}".encode()) for i in range(20)]
    await bus.publish_many(messages)
    await bus.publish_many([])
    heard = await receive(sub, 20)
    assert [(m.channel, m.data) for m in heard] == messages
    await sub.aclose()
    key = f"{key_prefix}:snapshots"
    await bus.hset(key, "standings", b"old")
    await bus.hset_many(key, {"standings": b"new", "table:1": b"t1"})
    await bus.hset_many(key, {})
    assert await bus.hgetall(key) == {"standings": b"new", "table:1": b"t1"}


async def test_read_of_missing_stream_and_bad_arguments(bus: Bus, key_prefix: str) -> None:
    assert await bus.read(f"{key_prefix}:nothing") == []
    with pytest.raises(ValueError):
        await bus.read(f"{key_prefix}:nothing", after="yesterday")
    with pytest.raises(ValueError):
        await bus.read(f"{key_prefix}:nothing", count=0)


async def test_tail_follows_a_stream_as_it_grows(bus: Bus, key_prefix: str) -> None:
    """What the projector follows the journal with: what is there at once, else the next
    entry as soon as it is appended, else nothing after the wait."""
    stream = f"{key_prefix}:journal"
    first = await bus.append(stream, b"a")
    assert await bus.tail(stream, "0-0", wait=5.0) == [(first, b"a")]
    started = time.monotonic()
    assert await bus.tail(stream, first, wait=0.2) == []
    assert time.monotonic() - started >= 0.15
    waiting = asyncio.ensure_future(bus.tail(stream, first, count=10, wait=5.0))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    second = await bus.append(stream, b"b")
    assert await asyncio.wait_for(waiting, 2.0) == [(second, b"b")]
    with pytest.raises(ValueError):
        await bus.tail(stream, first, count=0)


async def test_delete_removes_streams_and_hashes(bus: Bus, key_prefix: str) -> None:
    await bus.append(f"{key_prefix}:journal", b"x")
    await bus.hset(f"{key_prefix}:snap", "standings", b"{}")
    await bus.delete(f"{key_prefix}:journal", f"{key_prefix}:snap", f"{key_prefix}:absent")
    await bus.delete()
    assert await bus.read(f"{key_prefix}:journal") == []
    assert await bus.hgetall(f"{key_prefix}:snap") == {}


async def test_publish_counts_the_receivers(bus: Bus, key_prefix: str) -> None:
    """The ingest learns from an ack's receiver count whether its console is connected."""
    channel = f"{key_prefix}:ack:pad1"
    assert await bus.publish(channel, b"to nobody") == 0
    one, two = bus.subscribe(channel), bus.subscribe(f"{key_prefix}:ack:*")
    await one.ready()
    await two.ready()
    assert await bus.publish(channel, b"x") == 2
    assert await bus.publish_many([(channel, b"y"), (f"{key_prefix}:other", b"z")]) == [2, 0]
    await one.aclose()
    await two.aclose()


# --- the journal lease ---------------------------------------------------------------------


async def test_lease_has_one_holder_and_fences_appends(bus: Bus, key_prefix: str) -> None:
    lease, stream = f"{key_prefix}:ingest", f"{key_prefix}:journal"
    assert await bus.claim(lease, "a", 30.0)
    assert await bus.claim(lease, "a", 30.0)  # renewal by the holder
    assert not await bus.claim(lease, "b", 30.0)
    ids = await bus.append_many(stream, [b"1"], fence=Fence(lease, "a"))
    with pytest.raises(LeaseLost):
        await bus.append_many(stream, [b"2", b"3"], fence=Fence(lease, "b"))
    with pytest.raises(LeaseLost):
        await bus.append_many(stream, [b"4"], fence=Fence(lease, "b"))
    assert [entry_id for entry_id, _ in await bus.read(stream)] == ids
    await bus.release(lease, "b")  # not b's: nothing happens
    assert not await bus.claim(lease, "b", 30.0)
    await bus.release(lease, "a")
    assert await bus.claim(lease, "b", 30.0)
    with pytest.raises(LeaseLost):  # a's lease is gone: its writes are refused
        await bus.append_many(stream, [b"5"], fence=Fence(lease, "a"))
    await bus.append_many(stream, [b"6"], fence=Fence(lease, "b"))
    assert [data for _, data in await bus.read(stream)] == [b"1", b"6"]


async def test_lease_expires_when_not_renewed(bus: Bus, key_prefix: str) -> None:
    lease = f"{key_prefix}:ingest"
    assert await bus.claim(lease, "a", 0.2)
    assert not await bus.claim(lease, "b", 0.2)
    await asyncio.sleep(0.35)
    assert await bus.claim(lease, "b", 30.0)
    with pytest.raises(LeaseLost):
        await bus.append_many(f"{key_prefix}:journal", [b"x"], fence=Fence(lease, "a"))


async def test_claim_issues_growing_tokens_and_renewal_keeps_them(
    bus: Bus, key_prefix: str
) -> None:
    lease = f"{key_prefix}:ingest"
    first = await bus.claim(lease, "a", 30.0)
    assert first >= 1
    assert await bus.claim(lease, "a", 30.0) == first  # renewal: same token
    assert await bus.claim(lease, "a", 30.0, token=first) == first
    await bus.release(lease, "a")
    second = await bus.claim(lease, "b", 30.0)
    assert second > first  # a free lease claimed afresh: a newer token
    await bus.release(lease, "b")
    assert not await bus.claim(lease, "a", 30.0, token=first)  # stale: b claimed since


async def test_an_expired_lease_with_no_successor_still_fences_for_its_holder(
    bus: Bus, key_prefix: str
) -> None:
    """A Redis outage longer than the lease: the lease ran out, but no one claimed it since,
    so its holder's token still writes and takes the lease back (same token)."""
    lease, stream = f"{key_prefix}:ingest", f"{key_prefix}:journal"
    token = await bus.claim(lease, "a", 0.2)
    fence = Fence(lease, "a", token)
    await asyncio.sleep(0.35)
    await bus.append_many(stream, [b"1", b"2"], fence=fence)
    assert await bus.claim(lease, "a", 30.0, token=token) == token
    assert not await bus.claim(lease, "b", 30.0)
    await bus.append_many(stream, [b"3"], fence=fence)
    assert [data for _, data in await bus.read(stream)] == [b"1", b"2", b"3"]


async def test_a_newer_claim_fences_the_older_token_for_good(bus: Bus, key_prefix: str) -> None:
    lease, stream = f"{key_prefix}:ingest", f"{key_prefix}:journal"
    old = await bus.claim(lease, "a", 0.2)
    await asyncio.sleep(0.35)
    new = await bus.claim(lease, "b", 30.0)
    assert new > old
    with pytest.raises(LeaseLost):
        await bus.append_many(stream, [b"stale"], fence=Fence(lease, "a", old))
    await bus.append_many(stream, [b"fresh"], fence=Fence(lease, "b", new))
    await bus.release(lease, "b")  # free again, but a's token is no longer the latest
    with pytest.raises(LeaseLost):
        await bus.append_many(stream, [b"stale"], fence=Fence(lease, "a", old))
    assert not await bus.claim(lease, "a", 30.0, token=old)
    assert [data for _, data in await bus.read(stream)] == [b"fresh"]


# --- the lease holder (hub.bus.lease), on each transport ------------------------------------

HOLDER_LOG = logging.getLogger("test.lease")


def holder(bus: Leases, key: str, ttl: float, *, fenced: bool = True) -> LeaseHolder:
    return LeaseHolder(bus, key, name="ingest", ttl=ttl, log=HOLDER_LOG, fenced=fenced)


async def test_lease_holder_keeps_its_lease_and_a_standby_takes_over_on_release(
    bus: Bus, key_prefix: str
) -> None:
    key = f"{key_prefix}:ingest"
    first, second = holder(bus, key, 0.3), holder(bus, key, 0.3)
    assert await first.claim() and first.fence == Fence(key, first.owner, first.token)
    assert not await second.claim() and second.standby and not second.token
    lost: list[str] = []
    keeping = asyncio.create_task(first.keep(lambda: lost.append("first")))
    waiting = asyncio.create_task(second.wait())
    await asyncio.sleep(0.6)  # two lease lives: renewed, so the standby still waits
    assert not waiting.done() and not lost
    keeping.cancel()
    await first.release(1.0)  # at once: no wait for the lease to run out
    await asyncio.wait_for(waiting, 1.0)
    assert second.token > first.token and not second.standby and not first.lost
    await second.release(1.0)
    assert await bus.claim(key, "someone", 5.0)  # released: free for anyone


async def test_lease_holder_says_once_that_it_lost_its_lease(bus: Bus, key_prefix: str) -> None:
    key = f"{key_prefix}:ingest"
    first = holder(bus, key, 0.2)
    assert await first.claim()
    await asyncio.sleep(0.3)  # ran out (a long pause) and someone else claimed it since
    other = await bus.claim(key, "other", 30.0)
    lost: list[str] = []
    await asyncio.wait_for(first.keep(lambda: lost.append("first")), 1.0)
    assert lost == ["first"] and first.lost and not first.lose()
    await first.release(1.0)  # lost: not ours to release
    assert await bus.claim(key, "other", 30.0) == other


async def test_an_unfenced_lease_holder_takes_a_free_lease_back_on_renewal(
    bus: Bus, key_prefix: str
) -> None:
    """The projector's: a lease that ran out and is free is simply claimed again (a fenced
    holder would take it back only with its token still the latest)."""
    key = f"{key_prefix}:projector"
    first = holder(bus, key, 0.2, fenced=False)
    assert await first.claim()
    await asyncio.sleep(0.3)
    assert await bus.claim(key, "other", 0.05)
    await asyncio.sleep(0.1)  # the other's claim ran out too: free, with a newer token
    keeping = asyncio.create_task(first.keep(lambda: None))
    await asyncio.sleep(0.15)
    assert not keeping.done() and not first.lost
    assert not await bus.claim(key, "other", 30.0)  # renewed: held by first
    keeping.cancel()
    await first.release(1.0)


# --- each transport is each protocol -------------------------------------------------------


@pytest.mark.parametrize("protocol", [PubSub, Journal, Hashes, Leases, PubSubHashes])
def test_each_transport_implements_each_protocol(bus: Bus, protocol: type) -> None:
    """The contract above is run per protocol (pub/sub, journal streams, hashes, leases); the
    users type their bus by the ones they need: each transport must be every one of them."""
    assert isinstance(bus, protocol)


# --- hashes --------------------------------------------------------------------------------


async def test_hash_set_get_overwrite(bus: Bus, key_prefix: str) -> None:
    key = f"{key_prefix}:snapshots"
    assert await bus.hgetall(key) == {}
    await bus.hset(key, "standings", b"\x81\xa1a\x01")
    await bus.hset(key, "table:1", b"one")
    await bus.hset(key, "table:1", b"uno")
    assert await bus.hgetall(key) == {"standings": b"\x81\xa1a\x01", "table:1": b"uno"}
    result = await bus.hgetall(key)
    result["table:1"] = b"changed by the caller"
    assert (await bus.hgetall(key))["table:1"] == b"uno"


async def test_set_once_keeps_the_first_value(bus: Bus, key_prefix: str) -> None:
    """What the event epoch is made with: the first writer's value, kept; deleted with the
    tournament's data."""
    key = f"{key_prefix}:epoch"
    assert await bus.get(key) is None
    assert await bus.set_once(key, b"first") == b"first"
    assert await bus.set_once(key, b"second") == b"first"
    assert await bus.get(key) == b"first"
    await bus.delete(key)
    assert await bus.get(key) is None


# --- memory bus specifics ------------------------------------------------------------------


async def test_memory_subscription_is_registered_by_subscribe_itself() -> None:
    bus = MemoryBus()
    sub = bus.subscribe("feed")  # no ready(), no iteration yet
    await bus.publish("feed", b"right after")
    assert (await receive(sub, 1))[0].data == b"right after"


async def test_memory_slow_subscriber_drops_and_counts() -> None:
    bus = MemoryBus(subscription_buffer=3)
    slow = bus.subscribe("feed")
    for i in range(5):
        await bus.publish("feed", bytes([i]))
    assert slow.dropped == 2
    assert [m.data for m in await receive(slow, 3)] == [b"\x00", b"\x01", b"\x02"]
    await bus.publish("feed", b"later")
    assert (await receive(slow, 1))[0].data == b"later"


async def test_memory_ids_never_go_back_when_the_clock_does() -> None:
    now = [1000.0]
    bus = MemoryBus(clock=lambda: now[0])
    first = await bus.append("j", b"a")
    second = await bus.append("j", b"b")
    now[0] = 999.0
    third = await bus.append("j", b"c")
    now[0] = 1001.0
    fourth = await bus.append("j", b"d")
    assert [first, second, third, fourth] == ["1000000-0", "1000000-1", "1000000-2", "1001000-0"]
    after_first = await bus.read("j", after="1000000")
    assert after_first == [("1000000-1", b"b"), ("1000000-2", b"c"), ("1001000-0", b"d")]


def test_open_bus_picks_the_transport() -> None:
    assert isinstance(open_bus(None), MemoryBus)
    assert isinstance(open_bus("memory://"), MemoryBus)
    assert isinstance(open_bus("redis://127.0.0.1:6379/0"), RedisBus)
    with pytest.raises(ValueError, match="unknown bus URL"):
        open_bus("kafka://x")


# --- Redis faults (a private redis-server, killed and restarted) ---------------------------

FAST_RETRY = RetryPolicy(deadline=15.0, base=0.02, cap=0.2)


@pytest.mark.redis
async def test_a_unix_socket_url_carries_the_whole_bus(tmp_path: Path) -> None:
    """``DUPLICAST_REDIS_URL=unix:///run/redis/redis.sock`` (Redis beside the hub, on a socket
    file): the journal's script, the lease, a subscription and the batched publishes all go
    through it. redis-py's client was given TCP keepalive for every URL, which its unix
    connection refuses: the hub failed at connect."""
    sock = tmp_path / "redis.sock"
    extra = ("--unixsocket", str(sock), "--unixsocketperm", "700")
    with RedisServer(tmp_path, extra=extra):
        bus = open_bus(f"unix://{sock}?db=0")
        assert isinstance(bus, RedisBus)
        await bus.connect()
        try:
            assert await bus.claim("dup:u:lease", "me", 5.0) > 0
            sub = bus.subscribe("dup:u:*")
            await sub.ready()
            ids = await bus.append_many("dup:u:journal", [b"one", b"two"])
            assert [d for _, d in await bus.read("dup:u:journal")] == [b"one", b"two"]
            assert len(ids) == 2
            assert await bus.publish_many([("dup:u:a", b"x"), ("dup:u:b", b"y")]) == [1, 1]
            assert [m.data for m in await receive(sub, 2)] == [b"x", b"y"]
            await sub.aclose()
        finally:
            await bus.close()


@pytest.mark.redis
async def test_redis_subscription_and_append_survive_a_restart(tmp_path: Path) -> None:
    with RedisServer(tmp_path) as server:
        bus = RedisBus(server.url, retry=FAST_RETRY)
        await bus.connect()
        sub = bus.subscribe("dup:t:feed")
        await sub.ready()
        await bus.publish("dup:t:feed", b"before")
        assert (await receive(sub, 1))[0].data == b"before"
        first = await bus.append("dup:t:journal", b"first")

        server.stop()
        appending = asyncio.create_task(bus.append("dup:t:journal", b"second"))
        await asyncio.sleep(0.5)
        assert not appending.done()  # retrying while the server is down
        await asyncio.to_thread(server.start)
        second = await asyncio.wait_for(appending, 10.0)
        assert parse_id(second) > parse_id(first)
        # AOF kept the entry appended before the crash, and the retry added exactly one.
        assert await bus.read("dup:t:journal") == [(first, b"first"), (second, b"second")]

        # The subscription re-subscribes by itself; publish until it hears us again.
        deadline = time.monotonic() + 10.0
        heard: Message | None = None
        while heard is None and time.monotonic() < deadline:
            await bus.publish("dup:t:feed", b"after")
            try:
                heard = await asyncio.wait_for(anext(sub), 0.1)
            except TimeoutError:
                pass
        assert heard == Message("dup:t:feed", b"after")
        assert sub.reconnects >= 1
        await bus.close()


@pytest.mark.redis
async def test_redis_subscription_reads_at_its_rate_and_redis_cuts_the_rest(
    tmp_path: Path,
) -> None:
    """Past its ``ReadRate`` a subscription leaves messages unread in Redis; past Redis's
    pubsub output-buffer limit Redis cuts the connection, and the subscription is back at once
    while a subscription of another channel never noticed."""
    limit = ("--client-output-buffer-limit", "pubsub 256kb 0 0")
    with RedisServer(tmp_path / "redis", extra=limit) as server:
        bus = RedisBus(server.url, retry=FAST_RETRY)
        await bus.connect()
        slow = bus.subscribe("t:flood", rate=ReadRate(messages=50, bytes=1e9, burst=0.1))
        other = bus.subscribe("t:calm")
        for sub in (slow, other):
            await sub.ready()
        t0 = time.monotonic()
        for _ in range(30):  # 30 MB: more than the kernel's socket buffers hold
            await bus.publish_many([("t:flood", b"x" * 10_000)] * 100)
            await bus.publish("t:calm", b"calm")
        assert len(await receive(other, 30)) == 30
        async with asyncio.timeout(10):
            while not slow.reconnects:
                await asyncio.sleep(0.05)
        read = len(slow.take_nowait())
        assert read < 50 * (time.monotonic() - t0 + 0.1) + 64 + 5  # rate, burst, a yield step
        async with asyncio.timeout(10):  # resubscribed: it hears the channel again
            while not any(m.data == b"after the cut" for m in slow.take_nowait()):
                await bus.publish("t:flood", b"after the cut")
                await asyncio.sleep(0.05)
        assert other.reconnects == 0
        await bus.close()


@pytest.mark.redis
async def test_retried_append_does_not_duplicate_an_entry_whose_reply_was_lost(
    redis_url: str, key_prefix: str
) -> None:
    bus = RedisBus(redis_url, retry=FAST_RETRY)
    await bus.connect()
    client = bus._client()
    real_xadd = client.xadd

    async def xadd_then_lose_the_reply(*args: object, **kwargs: object) -> object:
        await real_xadd(*args, **kwargs)  # type: ignore[arg-type]
        raise RedisConnectionError("connection lost before the reply")

    client.xadd = xadd_then_lose_the_reply  # type: ignore[method-assign]
    stream = f"{key_prefix}:journal"
    entry_id = await bus.append(stream, b"event 1")
    assert await bus.read(stream) == [(entry_id, b"event 1")]
    # A different entry after it is appended normally by the retry path.
    second = await bus.append(stream, b"event 2")
    assert await bus.read(stream) == [(entry_id, b"event 1"), (second, b"event 2")]
    await bus.close()


@pytest.mark.redis
async def test_retried_batch_append_lands_once_whether_or_not_the_lost_attempt_did(
    redis_url: str, key_prefix: str
) -> None:
    bus = RedisBus(redis_url, retry=FAST_RETRY)
    await bus.connect()
    bus._client()
    real_script = bus._script  # how the bus runs its scripts (on its lane, or redis-py's)
    calls = {"n": 0, "land": True}

    async def run_then_lose_the_reply(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == 1:
            if calls["land"]:
                await real_script(*args, **kwargs)  # type: ignore[arg-type]
            raise RedisConnectionError("connection lost before the reply")
        return await real_script(*args, **kwargs)  # type: ignore[arg-type]

    bus._script = run_then_lose_the_reply  # type: ignore[method-assign]
    stream = f"{key_prefix}:journal"
    landed = await bus.append_many(stream, [b"a1", b"a2", b"a3"])  # first attempt landed
    assert calls["n"] == 2
    assert await bus.read(stream) == list(zip(landed, [b"a1", b"a2", b"a3"], strict=True))
    calls.update(n=0, land=False)  # first attempt never reached Redis: the retry appends
    added = await bus.append_many(stream, [b"b1", b"b2"])
    assert calls["n"] == 2
    assert await bus.read(stream) == list(
        zip([*landed, *added], [b"a1", b"a2", b"a3", b"b1", b"b2"], strict=True)
    )
    await bus.close()


@pytest.mark.redis
async def test_redis_commands_give_up_after_the_deadline() -> None:
    bus = RedisBus(f"redis://127.0.0.1:{free_port()}/0", retry=RetryPolicy(0.5, 0.02, 0.1))
    started = time.monotonic()
    with pytest.raises(RedisConnectionError):
        await bus.append("journal", b"x")
    assert 0.3 < time.monotonic() - started < 3.0
    await bus.close()


@pytest.mark.redis
async def test_redis_subscription_outside_a_loop_starts_on_first_use(
    redis_url: str, key_prefix: str
) -> None:
    bus = RedisBus(redis_url)
    sub = await asyncio.to_thread(bus.subscribe, f"{key_prefix}:feed")  # no loop in that thread
    await sub.ready()
    await bus.publish(f"{key_prefix}:feed", b"x")
    assert (await receive(sub, 1))[0].data == b"x"
    await bus.close()
