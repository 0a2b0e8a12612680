"""Issue #31's tail: a tick of the ingest's clock publishes the feed only when the ingest is
idle, under load no publish starts while one is under way, and batches that come close
together share one publish (``FeedPublisher.follow``).

Traced at 240-480 tables (docs/performance.md), the tick's publish waited for the engine, built
the feed between a batch's journal append and its acks, and held the acks 0.7-1.6 s."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest

from hub.bus.memory import MemoryBus
from hub.engine.core import Engine
from hub.roles.ingest import Ingest
from hub.roles.publisher import FEED_GATHER, FEED_INTERVAL, FeedPublisher
from tests.hubharness import unique_tournament

pytestmark = pytest.mark.asyncio


def counting(publisher: FeedPublisher) -> list[float]:
    """Replace ``publisher.publish`` by one that records when it was called."""
    calls: list[float] = []

    async def publish() -> None:
        calls.append(time.monotonic())

    publisher.publish = publish  # type: ignore[method-assign]
    return calls


async def test_under_load_no_publish_starts_while_one_is_under_way() -> None:
    """A publish under way takes the changes once the engine is let go: a follow that came
    meanwhile has nothing of its own to add."""
    config, decks = unique_tournament("cadence")
    publisher = FeedPublisher(MemoryBus(), Engine(config, decks))
    calls = counting(publisher)
    async with publisher._lock:  # a publish under way
        await publisher.follow(waiting=True)
    assert calls == []
    await publisher.follow(waiting=True)  # (the first under load: at once)
    assert len(calls) == 1


async def test_a_tick_publishes_only_when_the_ingest_is_idle() -> None:
    """No message waits and no batch holds the engine: a tick publishes at once. Messages
    wait, or a batch is being decided and journaled: the batch's feed step will (a tick's
    publish would build the feed between that batch's journal append and its acks)."""
    config, decks = unique_tournament("cadence")
    ingest = Ingest(MemoryBus(), Engine(config, decks), tick_interval=0.01)
    await ingest.start()
    try:
        assert ingest.feed is not None
        calls = counting(ingest.feed)
        busy = SimpleNamespace(pending=3)
        ingest.intake = busy  # type: ignore[assignment]
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


async def test_events_close_together_share_one_publish() -> None:
    """Nothing waits: the first batch after a quiet spell is published at once; the batches
    that follow within ``FEED_INTERVAL`` are published once, ``FEED_GATHER`` after the first
    of them (one flush of the projections for all of them), never later."""
    config, decks = unique_tournament("cadence")
    publisher = FeedPublisher(MemoryBus(), Engine(config, decks))
    calls = counting(publisher)
    await publisher.follow(waiting=False)
    assert len(calls) == 1  # a quiet spell before: at once
    started = time.monotonic()
    for _ in range(3):  # three batches within the gather window
        await publisher.follow(waiting=False)
        await publisher.follow(waiting=True)
    assert len(calls) == 1
    await asyncio.sleep(FEED_GATHER * 5)
    assert len(calls) == 2  # one publish for the three batches
    assert calls[1] - started >= FEED_GATHER * 0.9
    await asyncio.sleep(FEED_INTERVAL)  # a quiet spell again: at once
    await publisher.follow(waiting=False)
    assert len(calls) == 3


async def test_a_stop_publishes_the_gathered_changes_before_saving() -> None:
    """A publish put off by ``FEED_GATHER`` and called off by the stop (``withdraw``) is made
    by ``save`` before the snapshots are saved: they hold the last batch."""
    config, decks = unique_tournament("cadence")
    publisher = FeedPublisher(MemoryBus(), Engine(config, decks))
    calls = counting(publisher)
    await publisher.follow(waiting=False)
    await publisher.follow(waiting=False)  # put off
    publisher.withdraw()
    await asyncio.sleep(FEED_GATHER * 3)
    assert len(calls) == 1  # called off
    await publisher.save()
    assert len(calls) == 2
