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
from hub.roles.publisher import (
    FEED_GATHER,
    FEED_INTERVAL,
    FEED_SHARE,
    FEED_SPACING_MAX,
    FeedPublisher,
)
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


def costing(publisher: FeedPublisher, cpu: list[float]) -> list[float]:
    """Replace ``publisher.publish`` by one that burns ``cpu[0]`` CPU seconds (this thread's)
    and records when it was called."""
    calls: list[float] = []

    async def publish() -> None:
        calls.append(time.monotonic())
        end = time.thread_time() + cpu[0]
        while time.thread_time() < end:
            pass

    publisher.publish = publish  # type: ignore[method-assign]
    return calls


async def test_under_load_publishes_are_spaced_by_their_cost() -> None:
    """Messages wait: the next publish comes the last one's CPU x (1 / FEED_SHARE - 1) after
    it, so the feed takes about FEED_SHARE of the ingest's time and a publish covers more
    events; a cheap one keeps FEED_INTERVAL; the spacing is bounded by FEED_SPACING_MAX. When
    nothing waits, an expensive publish does not delay the next one beyond FEED_GATHER."""
    config, decks = unique_tournament("cadence")
    publisher = FeedPublisher(MemoryBus(), Engine(config, decks))
    cpu = [0.03]
    calls = costing(publisher, cpu)
    await publisher.follow(waiting=True)
    ended = time.monotonic()
    assert len(calls) == 1
    spacing = publisher.spacing
    assert 0.03 * (1 / FEED_SHARE - 1) <= spacing < 0.06 * (1 / FEED_SHARE - 1)
    assert spacing > FEED_INTERVAL
    cpu[0] = 0.0
    while time.monotonic() - ended < spacing * 0.8:  # batch after batch, messages waiting
        await publisher.follow(waiting=True)
        await asyncio.sleep(0.002)
    assert len(calls) == 1
    await asyncio.sleep(ended + spacing * 1.1 - time.monotonic())
    await publisher.follow(waiting=True)
    assert len(calls) == 2  # past the spacing: published
    assert publisher.spacing == FEED_INTERVAL  # that one was cheap
    cpu[0] = 1.0 * FEED_SPACING_MAX
    await asyncio.sleep(FEED_INTERVAL)
    await publisher.follow(waiting=True)
    assert len(calls) == 3
    assert publisher.spacing == FEED_SPACING_MAX
    cpu[0] = 0.0  # nothing waits: gathered, not spaced
    await publisher.follow(waiting=False)
    await asyncio.sleep(FEED_GATHER * 5)
    assert len(calls) == 4


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
