"""Issue #31's tail: under load the feed's publishes take at most ``FEED_SHARE`` of the
ingest's time (``FeedPublisher.follow``), the clock's ticks included.

At saturation the ingest published the feed after every batch, and a publish costs a part that
does not depend on the events it covers: at 480 tables that part (0.8 s) set the ingest's
throughput below the consoles' rate, and the events queued (docs/performance.md)."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest

from hub.bus.memory import MemoryBus
from hub.engine.core import Engine
from hub.roles.ingest import Ingest
from hub.roles.publisher import FEED_INTERVAL, FEED_INTERVAL_MAX, FEED_SHARE, FeedPublisher
from tests.hubharness import unique_tournament

pytestmark = pytest.mark.asyncio


def counting(publisher: FeedPublisher, took: float) -> list[float]:
    """Replace ``publisher.publish`` by one that takes ``took`` seconds (as it reports them)
    and records when it was called."""
    calls: list[float] = []

    async def publish() -> float:
        calls.append(time.monotonic())
        return took

    publisher.publish = publish  # type: ignore[method-assign]
    return calls


async def test_under_load_the_next_publish_waits_as_long_as_the_last_one_took() -> None:
    config, decks = unique_tournament("cadence")
    publisher = FeedPublisher(MemoryBus(), Engine(config, decks))
    calls = counting(publisher, 0.3)
    await publisher.follow(waiting=True)  # the first: at once
    assert len(calls) == 1
    assert publisher.interval == pytest.approx(0.3 * (1 - FEED_SHARE) / FEED_SHARE)
    await publisher.follow(waiting=True)  # messages wait, and the last publish took 0.3 s
    assert len(calls) == 1
    await publisher.follow(waiting=False)  # nothing waits: at once, whatever it cost
    assert len(calls) == 2
    publisher._published -= publisher.interval  # the interval passed
    await publisher.follow(waiting=True)
    assert len(calls) == 3


async def test_under_load_no_publish_starts_while_one_is_under_way() -> None:
    """A publish under way takes the changes once the engine is let go: a follow that came
    meanwhile has nothing of its own to add (and one that published nothing would have made
    the interval the floor again)."""
    config, decks = unique_tournament("cadence")
    publisher = FeedPublisher(MemoryBus(), Engine(config, decks))
    calls = counting(publisher, 0.0)
    async with publisher._lock:  # a publish under way
        await publisher.follow(waiting=True)
    assert calls == []
    await publisher.follow(waiting=True)
    assert len(calls) == 1


async def test_the_interval_stays_between_its_floor_and_its_ceiling() -> None:
    config, decks = unique_tournament("cadence")
    publisher = FeedPublisher(MemoryBus(), Engine(config, decks))
    counting(publisher, 0.0001)
    await publisher.follow(waiting=True)
    assert publisher.interval == FEED_INTERVAL
    counting(publisher, 60.0)
    await publisher.follow(waiting=False)
    assert publisher.interval == FEED_INTERVAL_MAX


async def test_a_tick_publishes_only_when_the_ingest_is_idle() -> None:
    """No message waits and no batch holds the engine: a tick publishes at once. Messages
    wait, or a batch is being decided and journaled: the batch's feed step will (a tick's
    publish would build the feed between that batch's journal append and its acks)."""
    config, decks = unique_tournament("cadence")
    ingest = Ingest(MemoryBus(), Engine(config, decks), tick_interval=0.01)
    await ingest.start()
    try:
        assert ingest.feed is not None
        calls = counting(ingest.feed, 0.5)
        busy = SimpleNamespace(pending=3)
        ingest.intake = busy  # type: ignore[assignment]
        ingest.feed._published = time.monotonic()
        ingest.feed.interval = 5.0  # as after a publish that took 5 s
        await asyncio.sleep(0.2)  # ~20 ticks while messages wait
        assert calls == []
        busy.pending = 0
        await ingest.applying.hold()  # a batch holds the engine
        await asyncio.sleep(0.2)
        assert calls == []
        ingest.applying.release()  # idle: the next tick publishes
        await asyncio.sleep(0.2)
        assert calls
    finally:
        await ingest.stop()
