"""Issue #20 item 6: one console flooding its own channel must not stall the other tables.

A console may publish anything on its table's channel (the Redis ACL allows it): 300-KB
msgpack maps, or a million tiny bad events. The ingest refuses an oversized message on its
length, before decoding it; reads each table's channel on a subscription of its own; builds its
batches round-robin over the tables (a fair share from each); bounds each table's queue in
messages and bytes; and resubscribes at once when Redis cuts a subscription, the consoles
resending what was not acknowledged: nothing lost, nothing doubled.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis_server import RedisServer

from hub.bus.base import Message
from hub.bus.memory import MemoryBus
from hub.bus.redis import RedisBus
from hub.client.logreplay import replay_log
from hub.engine.core import Engine
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.roles.ingest import Ingest
from hub.roles.intake import ERROR_LOGS, TABLE_BUFFER, TABLE_BYTES
from hub.wire import codec
from hub.wire.channels import Channels
from tests.hubharness import SAMPLE, SESSION, session_events, unique_tournament

pytestmark = pytest.mark.asyncio

BIG = codec.pack({f"k{i}": "x" * 295 for i in range(1000)})  # a ~300-KB msgpack map


def first_event(tournament: str, table: int) -> dict[str, Any]:
    """The sample session's first event of ``table`` (seq 1 of its console: accepted)."""
    return next(e for e in session_events(tournament) if e["table"] == table)


async def answers(bus: MemoryBus, channel: str, n: int) -> list[dict[str, Any]]:
    sub = bus.subscribe(channel)
    got: list[dict[str, Any]] = []
    async with asyncio.timeout(30):
        async for message in sub:
            got.append(codec.unpack(message.data))
            if len(got) == n:
                break
    await sub.aclose()
    return got


async def test_an_oversized_event_is_refused_too_large_without_being_decoded() -> None:
    config, decks = unique_tournament("flood")
    names = Channels(config.id)
    assert len(BIG) > 300_000
    with pytest.raises(codec.TooLarge):
        codec.unpack_event(BIG)
    with pytest.raises(codec.CodecError, match="max_map_len"):
        codec.unpack_event(codec.pack({str(i): 0 for i in range(2000)}))
    bus = MemoryBus()
    ingest = Ingest(bus, Engine(config, decks))
    await ingest.start()
    try:
        waiting = asyncio.create_task(answers(bus, names.errors(2), 1))
        await asyncio.sleep(0)
        await bus.publish(names.console(2), BIG)
        (answer,) = await waiting
        assert answer["ok"] is False and answer["code"] == "too_large", answer
        assert "bytes exceeds" in answer["error"]
        assert (
            'duplicast_rejects_total{code="too_large"} 1.0'
            in ingest.metrics.render(private=True).decode()
        )
    finally:
        await ingest.stop()


async def test_a_flooding_table_does_not_hold_back_another_tables_event() -> None:
    """3,000 bad events from table 2 are all waiting when table 3's event arrives: it goes out
    in the first or second batch, not behind the whole flood (the 7th batch of 512)."""
    config, decks = unique_tournament("flood")
    names = Channels(config.id)
    bus = MemoryBus()
    ingest = Ingest(bus, Engine(config, decks))
    batches: list[list[str]] = []
    handle = ingest.handle_batch

    async def spy(batch: Sequence[Message], source: Any = None) -> None:
        batches.append([m.channel for m in batch])
        await handle(batch, source)

    ingest.handle_batch = spy  # type: ignore[method-assign]
    await ingest.start()
    try:
        event = first_event(config.id, 3)
        acked = asyncio.create_task(answers(bus, names.ack(event["console"]), 1))
        errors = bus.subscribe(names.errors(2))
        await asyncio.sleep(0)
        for _ in range(3000):  # none of these publishes yields: all wait for the ingest
            await bus.publish(names.console(2), b"\xc1")
        await bus.publish(names.console(3), codec.pack(event))
        (ack,) = await acked
        assert ack["ok"] is True, ack
        first = next(i for i, b in enumerate(batches) if names.console(3) in b)
        assert first <= 1, f"table 3's event waited for {first} batches of the flood"
        rejects = 'duplicast_rejects_total{code="bad_schema"} 3000.0'
        async with asyncio.timeout(30):  # every bad event refused and counted...
            while rejects not in ingest.metrics.render(private=True).decode():
                await asyncio.sleep(0.05)
        # ... but while table 2 had more waiting than a batch took, only a sample was answered
        # on its error channel (ERROR_LOGS a second); the rest, once it no longer flooded
        assert ERROR_LOGS <= errors.pending < 3000
    finally:
        await ingest.stop()


async def test_each_tables_queue_is_bounded_in_messages_and_bytes() -> None:
    config, decks = unique_tournament("flood")
    names = Channels(config.id)
    bus = MemoryBus()
    ingest = Ingest(bus, Engine(config, decks))
    await ingest.start()
    try:
        for _ in range(TABLE_BUFFER + 500):  # none yields: the ingest reads nothing meanwhile
            await bus.publish(names.console(2), b"\xc1")
        for _ in range(30):
            await bus.publish(names.console(4), BIG)
        assert ingest.intake is not None
        assert ingest.intake.dropped == 500 + 30 - TABLE_BYTES // len(BIG)
        await asyncio.sleep(0.5)
        text = ingest.metrics.render(private=True).decode()
        assert f"duplicast_ingest_dropped_total {float(ingest.intake.dropped)}" in text
    finally:
        await ingest.stop()


@pytest.mark.redis
@pytest.mark.timeout(120)
async def test_cut_subscriptions_resubscribe_and_lose_nothing(tmp_path: Path) -> None:
    """Redis cuts every pub/sub connection (CLIENT KILL TYPE pubsub, as it does past its
    output buffer limit) ten times while the consoles replay the sample session: the ingest
    resubscribes each time and counts it; every event is answered, journaled exactly once."""
    config = load_config(SAMPLE)
    decks = load_decks(config, SAMPLE.parent, dict(os.environ))
    events = session_events(config.id, SESSION)[:600]
    redis = RedisServer(tmp_path / "redis")
    redis.start()
    bus = RedisBus(redis.url)
    admin = aioredis.Redis.from_url(redis.url)
    ingest = Ingest(bus, Engine(config, decks))
    try:
        await bus.connect()
        await ingest.start()
        rejected: list[str] = []
        replay = asyncio.create_task(
            replay_log(bus, config.id, events, on_reject=rejected.append, timeout=0.3, pace=0.01)
        )
        for _ in range(10):
            await asyncio.sleep(0.3)
            await admin.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
        async with asyncio.timeout(90):
            await replay
        assert not rejected
        journal = await bus.read(Channels(config.id).journal, "0-0", 100_000)
        keys = Counter(
            (r["console"], r["seq"]) for r in (codec.unpack(d) for _, d in journal) if "seq" in r
        )
        assert len(keys) == len(events) and set(keys.values()) == {1}
        assert ingest.intake is not None and ingest.intake.resubscribed >= 10
        text = ingest.metrics.render(private=True).decode()
        assert "duplicast_ingest_resubscribes_total" in text
    finally:
        await ingest.stop()
        await admin.aclose()
        await bus.close()
        redis.stop()
