"""Issue #31's tail: a tick of the ingest's clock publishes the feed only when the ingest is
idle, under load no publish starts while one is under way, and batches that come close
together share one publish (``FeedPublisher.follow``).

Traced at 240-480 tables (docs/performance.md), the tick's publish waited for the engine, built
the feed between a batch's journal append and its acks, and held the acks 0.7-1.6 s."""

from __future__ import annotations

import asyncio
import random
import time
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.bus.memory import MemoryBus
from hub.engine.changes import ActionApplied
from hub.engine.core import Engine
from hub.engine.families import FEEDS
from hub.engine.families.base import CADENCE
from hub.engine.families.projection import Projection, projected_board, projection_payload
from hub.engine.simulate import simulate_session
from hub.roles.ingest import Ingest
from hub.roles.publisher import (
    FEED_GATHER,
    FEED_INTERVAL,
    FEED_SHARE,
    FEED_SPACING_MAX,
    FeedPublisher,
)
from hub.wire.topics import LIVE
from tests.hubharness import unique_tournament
from tests.test_engine_properties import run
from tests.test_projections import Client


def counting(publisher: FeedPublisher) -> list[float]:
    """Replace ``publisher.publish`` by one that records when it was called."""
    calls: list[float] = []

    async def publish(*, paced: bool = False) -> None:
        calls.append(time.monotonic())

    publisher.publish = publish  # type: ignore[method-assign]
    return calls


@pytest.mark.asyncio
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


@pytest.mark.asyncio
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


@pytest.mark.asyncio
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

    async def publish(*, paced: bool = False) -> None:
        calls.append(time.monotonic())
        end = time.thread_time() + cpu[0]
        while time.thread_time() < end:
            pass

    publisher.publish = publish  # type: ignore[method-assign]
    return calls


@pytest.mark.asyncio
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


@pytest.mark.asyncio
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


# -- the families kept at a cadence (``Family.cadence``): the commentators' projection and the
# statistics, which every action at every table moved anew (issue #31)

CADENCED = sorted(f.name for f in FEEDS.values() if f.cadence)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_families_left_for_later_catch_up_to_their_builders(seed: int, noise: bool) -> None:
    """After every event the feed is flushed leaving a random few of the cadenced families for
    later: exactly those that only actions moved since are left (a settle, a start, a roster
    fix, a release move them at once), none of their topics is in the flush's changes, and
    every other topic is its builder's. Every few events, and at the end, a flush leaves
    nothing: then every topic, in the engine and in a client that applied the deltas, is its
    builder's payload (what was left for later was kept, not lost)."""
    rng = random.Random(seed)
    client = Client()
    steps = 0

    def check(engine: Engine) -> None:
        nonlocal steps
        projections = engine.projecting.projections
        if not projections.active:
            engine.start_feed()
            client.subscribe_all(engine)
        engine.tick(float(steps))
        steps += 1
        full = steps % 7 == 0
        later = frozenset() if full else frozenset(n for n in CADENCED if rng.random() < 0.7)
        pressing = {  # (what the families declare: any event of theirs but an action)
            name
            for item in engine.projecting.handed
            if not isinstance(item, (dict, ActionApplied))
            for name in CADENCED
            if isinstance(item, FEEDS[name].events)
        }
        changes = engine.projecting.flush(later)
        together = {"stats", "dealstats"}  # (one mover: left for later together or not)
        expected = later - pressing
        if not together <= expected:
            expected -= together
        assert projections.deferred == expected
        for change in changes:
            assert change.key[1].split(":")[0] not in projections.deferred, change.key
        client.apply(changes)
        for key in engine.topic_keys():
            if key[1].split(":")[0] not in projections.deferred:
                assert_equal_to_builder(engine, client, key)

    engine, _ = run(seed, corrections_noise=noise, after_each=check)
    engine.tick(float("inf"))
    client.take(engine)
    for key in engine.topic_keys():
        assert_equal_to_builder(engine, client, key)
    assert steps > 10


def assert_equal_to_builder(engine: Engine, client: Client, key: Any) -> None:
    built = engine.payload(key)
    rec = engine.projecting.projections.docs.get(key)
    if rec is None:
        return  # (a topic made on demand nobody asked for)
    doc = rec.doc
    if key[1] == "ops":  # (the time of the last event it shows: a seq gap is not one)
        built = {**built, "at": doc["at"]}
    assert doc == built, key
    assert client.states[key] == built, key


@pytest.mark.parametrize("noise", [False, True])
def test_the_projection_keeps_its_scoreboard_and_its_hands_wait_with_it(noise: bool) -> None:
    """The projection's scoreboard is its model's (``Projection.board``, issue #31 item 1), not
    the generic ``Projections``': a flush that leaves the projection for later leaves its
    board as it was (the hands its events moved wait, noted, with it); a flush that moves it
    sets them, and its board is then one made from scratch."""
    steps = deferred = 0

    def check(engine: Engine) -> None:
        nonlocal steps, deferred
        projections = engine.projecting.projections
        if not projections.active:
            engine.start_feed()
            engine.projecting.materialize((LIVE, "projection"))
        assert not hasattr(projections, "board")
        model = projections.movers["projection"]
        assert isinstance(model, Projection)
        before = model.board.as_dict()
        steps += 1
        engine.projecting.flush(frozenset({"projection"}) if steps % 4 else frozenset())
        if "projection" in projections.deferred:
            deferred += 1
            assert model.board.as_dict() == before
        else:
            assert model.board.as_dict() == projected_board(engine.state).as_dict()

    engine, _ = run(5, corrections_noise=noise, after_each=check)
    engine.projecting.flush()
    assert engine.payload((LIVE, "projection")) == projection_payload(
        engine.state, projected_board(engine.state)
    )
    assert deferred > 10


PACED = [("live", "projection"), ("live", "stats"), ("live", "ops")]  # (a topic each)


@pytest.mark.asyncio
async def test_the_projection_moves_at_most_once_a_cadence_and_catches_up() -> None:
    """Actions every few ms, each followed by the pipeline's (paced) publish: the table's
    topic moves at each, the projection and the statistics at most once per ``CADENCE`` (but
    at once for an event other than an action); once the actions stop, what they moved goes
    out within the cadence, with no event and no tick to carry it (the publisher's own timer):
    the last frames equal the builders'."""
    config, decks = unique_tournament("cadence")
    engine = Engine(config, decks, release_delay=0.0)
    frames: dict[str, list[float]] = {}
    publisher = FeedPublisher(
        MemoryBus(),
        engine,
        on_frame=lambda key, frame: frames.setdefault(key[1], []).append(time.monotonic()),
    )
    engine.start_feed()
    publisher.serve()
    for key in PACED:
        publisher.store.snapshot(key)
    events = list(simulate_session(config, decks, random.Random(3), mean_gap=1.0))
    started = time.monotonic()
    actions = others = 0
    for i, event in enumerate(events[:120], 1):
        out = engine.submit(event, float(i))
        assert out.ok, out.ack
        if any(  # (it handed the feed more than an action: a start, a settle, a fold-out's)
            not isinstance(item, (dict, ActionApplied)) for item in engine.projecting.handed
        ):
            others += 1
        else:
            actions += 1
        await publisher._publish_timed()
        await asyncio.sleep(0.004)
    took = time.monotonic() - started
    for i, event in enumerate(events[120:], 121):  # until an action's publish leaves some
        assert engine.submit(event, float(i)).ok
        await publisher._publish_timed()
        if "projection" in publisher.projecting.projections.deferred:
            break
    else:
        raise AssertionError("no action's publish left the projection for later")
    table = sum(len(v) for k, v in frames.items() if k.startswith("table:"))
    assert table >= actions  # (every action: its table's frame at once)
    most = took / CADENCE + 2 + 2 * others  # (a settle may move it twice: start and win)
    for _, name in PACED:  # (the operator's desk too: a table's last event, twice a second)
        assert 1 < len(frames[name]) <= most, (name, len(frames[name]), most)
        assert len(frames[name]) < actions / 3, name
    deals = {k: len(v) for k, v in frames.items() if k.startswith("deal:")}  # (pots, per deal)
    assert deals and all(n <= most for n in deals.values()), (deals, most)
    assert sum(deals.values()) < actions / 3, (deals, actions)
    await asyncio.sleep(CADENCE * 1.5)  # no event, no tick: the publisher's own timer
    assert publisher.projecting.projections.deferred == frozenset()
    for key in [*PACED, *(("live", name) for name in deals)]:
        assert publisher.store.snapshot(key)[1] == engine.payload(key), key


class SlowBus(MemoryBus):
    """A bus whose feed messages take ``delay`` to go out (a Redis a loaded machine answers
    late): a publish stays under way that long after its flush."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    async def publish_many(self, messages: Any) -> None:
        await asyncio.sleep(self.delay)
        await super().publish_many(messages)


@pytest.mark.asyncio
async def test_a_family_due_while_the_paced_publish_is_under_way_still_moves() -> None:
    """The projection may move 50 ms from now and the operator's desk 100 ms from now; an
    action moves both. The publisher's timer publishes the projection at 50 ms and leaves the
    desk for 50 ms later, but that publish's frames take 300 ms to go out: the desk's timer
    comes while it is under way. What the action moved on the desk still goes out (it waited
    for the next event before: after a session's last event, for ever)."""
    config, decks = unique_tournament("paceddue")
    engine = Engine(config, decks, release_delay=0.0)
    bus = SlowBus(0.0)
    publisher = FeedPublisher(bus, engine)
    engine.start_feed()
    publisher.serve()
    for key in PACED:
        publisher.store.snapshot(key)
    events = list(simulate_session(config, decks, random.Random(3), mean_gap=1.0))
    i = 0
    for i, event in enumerate(events, 1):  # up to the first action after a start
        assert engine.submit(event, float(i)).ok
        await publisher.publish()
        if event["type"] == "call" and i > 20:
            break
    desk = ("live", "ops")
    sharing = publisher.projecting.projections._sharing
    assert "ops" not in sharing["projection"], "the test needs the desk on a mover of its own"
    now = time.monotonic()
    publisher._next = {
        name: now + (0.1 if name in sharing["ops"] else 0.05) for name in publisher._cadence
    }
    action = next(e for e in events[i:] if e["type"] == "call")
    assert engine.submit(action, float(i + 1)).ok
    await publisher._publish_timed()  # (the pipeline's: leaves every family for later)
    assert {"projection", "ops"} <= publisher.projecting.projections.deferred
    assert publisher.store.snapshot(desk)[1] != engine.payload(desk)  # (the action moved it)
    bus.delay = 0.3  # (from the timer's publish on)
    await asyncio.sleep(1.0)
    assert publisher.projecting.projections.waiting == frozenset()
    assert publisher._pacing is None, "nothing waits: no publish is due (an idle feed idles)"
    for key in PACED:
        assert publisher.store.snapshot(key)[1] == engine.payload(key), key
