"""The ingest's lease and fencing token (issue #9): a lone ingest survives a Redis outage of any
length (its lease runs out, no one else claims it, it takes it back with the same token and
carries on), while an ingest whose token is stale (someone claimed since) writes nothing; and
``stop()`` is bounded even when Redis stops answering (SIGSTOP)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from redis_server import RedisServer

from hub.bus.base import LeaseLost
from hub.bus.memory import MemoryBus
from hub.bus.redis import RedisBus
from hub.engine.core import Engine
from hub.roles.ingest import Ingest
from hub.wire import codec
from tests.hubharness import unique_tournament

pytestmark = pytest.mark.asyncio


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def event(tournament: str, seq: int, **fields: Any) -> bytes:
    base = {"v": 1, "tournament": tournament, "table": 1, "console": "table1", "seq": seq}
    return codec.pack(base | fields)


def journal(ingest: Ingest) -> str:
    return ingest.names.journal


async def test_lone_ingest_takes_its_expired_lease_back_and_loses_nothing() -> None:
    """The bus's clock jumps past the lease (an outage during which nothing was renewed): the
    next append still lands, the lease is taken back with the same token, nothing is lost."""
    config, decks = unique_tournament("lease")
    clock = Clock()
    bus = MemoryBus(clock=clock)
    ingest = Ingest(bus, Engine(config, decks), lease_ttl=5.0)
    await ingest.start()
    try:
        token = ingest.token
        assert token >= 1
        channel = f"dup:{config.id}:console:1"
        await ingest.handle(
            channel, event(config.id, 1, type="start", deal=config.deal_orders[1][0])
        )
        clock.now += 60.0  # the outage: the lease ran out long ago, no one else claimed it
        seat = ingest.engine.state.tables[1].current.hand.to_act
        await ingest.handle(channel, event(config.id, 2, type="fold", seat=seat))
        assert not ingest.lost
        assert len(await bus.read(journal(ingest))) == 2
        assert await bus.claim(ingest.fence.key, ingest.owner, 5.0, token=token) == token
        assert not await bus.claim(ingest.fence.key, "someone-else", 5.0)
    finally:
        await ingest.stop()


async def test_ingest_with_a_stale_token_is_fenced_and_steps_down() -> None:
    """After its lease ran out another ingest claimed it (a newer token): the first one's
    appends are refused and it steps down, even once the newer one has released the lease."""
    config, decks = unique_tournament("lease")
    clock = Clock()
    bus = MemoryBus(clock=clock)
    lost = asyncio.Event()
    first = Ingest(bus, Engine(config, decks), lease_ttl=0.3, on_lost=lost.set)
    await first.start()
    try:
        channel = f"dup:{config.id}:console:1"
        clock.now += 60.0
        successor = await bus.claim(first.fence.key, "successor", 5.0)
        assert successor > first.token
        await bus.release(first.fence.key, "successor")  # free again, but the token moved on
        with pytest.raises(LeaseLost):
            await first.handle(
                channel, event(config.id, 1, type="start", deal=config.deal_orders[1][0])
            )
        async with asyncio.timeout(5):  # its lease keeper notices too
            await lost.wait()
        assert first.lost and not first.ready
        assert await bus.read(journal(first)) == []
    finally:
        await first.stop()


@pytest.mark.redis
async def test_stop_is_bounded_while_redis_does_not_answer(tmp_path: Path) -> None:
    """A Redis that stops answering (SIGSTOP) must not hang ``stop()``: every step that talks
    to it is bounded; the lease then simply runs out."""
    config, decks = unique_tournament("stop")
    server = RedisServer(tmp_path / "redis")
    server.start()
    assert server.process is not None
    pid = server.process.pid
    bus = RedisBus(server.url)
    ingest = Ingest(bus, Engine(config, decks), lease_ttl=1.0)
    stopped = False
    try:
        await bus.connect()
        await ingest.start()
        assert ingest.ready
        os.kill(pid, signal.SIGSTOP)
        stopped = True
        await asyncio.sleep(0.5)  # the lease keeper is now waiting on Redis
        started = time.monotonic()
        waiter = asyncio.ensure_future(ingest.stop())
        done, _ = await asyncio.wait({waiter}, timeout=10.0)
        took = time.monotonic() - started
        assert done, "Ingest.stop() hung on a Redis that does not answer"
        assert took < 6.0
        started = time.monotonic()
        closing = asyncio.ensure_future(bus.close())  # and so does closing the bus
        done, _ = await asyncio.wait({closing}, timeout=10.0)
        assert done and time.monotonic() - started < 4.0, "RedisBus.close() hung"
    finally:
        if stopped:
            os.kill(pid, signal.SIGCONT)
        server.stop()
        with_timeout = asyncio.ensure_future(bus.close())
        await asyncio.wait({with_timeout}, timeout=5.0)


class FlakyClaims(MemoryBus):
    """A memory bus whose ``claim`` fails (as Redis past its retry deadline) while ``down``."""

    down = False

    async def claim(self, key: str, owner: str, ttl: float, *, token: int | None = None) -> int:
        if self.down:
            raise ConnectionError("Redis is away")
        return await super().claim(key, owner, ttl, token=token)


async def test_a_standby_keeps_waiting_through_bus_errors() -> None:
    config, decks = unique_tournament("standby")
    bus = FlakyClaims()
    lease = f"dup:{config.id}:ingest"
    assert await bus.claim(lease, "first", 30.0)
    standby = Ingest(bus, Engine(config, decks), lease_ttl=0.2)
    await standby.start()
    try:
        assert standby.standby and not standby.ready
        bus.down = True
        await asyncio.sleep(0.3)  # several failed claims: the standby task must survive them
        bus.down = False
        await bus.release(lease, "first")
        async with asyncio.timeout(5):
            while not standby.ready:
                await asyncio.sleep(0.02)
        assert standby.token >= 2 and not standby.standby
    finally:
        await standby.stop()
