"""No feed channel message over ``FEED_MESSAGE_LIMIT`` at 720 tables (issue #31).

Redis queues every message of the feed channel for every edge: at 720 tables a traveller or
the standings went out whole (1-4 MB in both formats, snapshot or rebuilt delta), and Redis's
pub/sub output limit cut the edges' subscriptions. Here an ingest's publisher and an edge
share a real Redis; two groups of a 720-table tournament play a deal (every topic is still
tournament-sized: 720 rows, 720 teams); every message on the channel is read raw, and the
edge ends with every topic the ingest has, equal to it.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Any

import pytest

from hub.bus.redis import RedisBus
from hub.engine.core import Engine
from hub.engine.simulate import simulate_session
from hub.roles.edge import EdgeSource
from hub.roles.publisher import FeedPublisher
from hub.serve.feed import (
    FEED_MESSAGE_LIMIT,
    FeedReader,
    Frame,
    encode_feed,
    encode_snapshot,
    feed_messages,
    snapshot_field,
)
from hub.wire.channels import Channels
from hub.wire.codec import unpack
from hub.wire.topics import TopicKey
from tests.factories import make_config, make_decks

pytestmark = pytest.mark.redis


async def answer_control(
    bus: RedisBus, names: Channels, publisher: FeedPublisher, up: asyncio.Event
) -> None:
    """The ingest's side of the control channel, for snapshot requests only."""
    control = bus.subscribe(names.control)
    await control.ready()
    up.set()
    try:
        async for message in control:
            publisher.request(unpack(message.data))
            await publisher.publish()
    finally:
        await control.aclose()


async def read_raw(
    bus: RedisBus, names: Channels, sizes: list[int], kinds: list[str], up: asyncio.Event
) -> None:
    feed = bus.subscribe(names.feed)
    await feed.ready()
    up.set()
    try:
        async for message in feed:
            sizes.append(len(message.data))
            msg: dict[str, Any] = unpack(message.data)
            kinds.append("notice" if msg.get("h") else "part" if "n" in msg else "frame")
    finally:
        await feed.aclose()


async def test_no_feed_message_over_64_kb_at_720_tables(redis_url: str) -> None:
    config = make_config(seats=6, groups=120, deals=1, tid=f"t720-{uuid.uuid4().hex[:8]}")
    assert len(config.tables) == 720
    decks = make_decks(config)
    names = Channels(config.id)
    bus = RedisBus(redis_url)
    await bus.connect()
    engine = Engine(config, decks, release_delay=0.0)
    engine.start_feed()
    publisher = FeedPublisher(bus, engine)
    sizes: list[int] = []
    kinds: list[str] = []
    up = [asyncio.Event(), asyncio.Event()]
    tasks = [
        asyncio.create_task(answer_control(bus, names, publisher, up[0])),
        asyncio.create_task(read_raw(bus, names, sizes, kinds, up[1])),
    ]
    edge = EdgeSource(bus, config.id, answer_timeout=60)  # (2,191 topics made at once: slow)
    tables = [*config.groups["G0"].tables, *config.groups["G1"].tables]
    events = list(simulate_session(config, decks, random.Random(7), tables=tables, mean_gap=1.0))
    half = len(events) // 2
    try:
        for event in up:  # (the subscriptions above are up)
            await asyncio.wait_for(event.wait(), 10)
        await edge.start()
        assert edge.store.live
        # The topics made only when asked for (a desk follows them): the edge asks the writer,
        # as it does for a subscriber or a REST read.
        held = [("live", "compare:1:2"), ("live", "dealstats:1"), ("live", "suggestions")]
        held.append(("public", "suggestions"))
        for key in held:
            assert edge.store.unknown(key)
            await asyncio.wait_for(edge.store.ensure(key), 60)
            assert not edge.store.unknown(key) and edge.store.seq(key) > 0
        for i, event in enumerate(events[:half], 1):
            engine.submit(event, float(i))
            if i % 50 == 0:  # (a 20 ms flush under load: about every 50 events)
                await publisher.publish()
        await publisher.publish()
        unheld = ("live", "compare:1:3")  # made for nobody: never on the feed
        assert unheld not in publisher.store.keys() and edge.store.seq(unheld) == 0
        # The writer restarts (a rebuild, a takeover): a new engine replays what was applied;
        # every topic an event touches then goes out whole (a snapshot), tournament-sized, and
        # so do the topics made on demand that the writer before had made (the edge holds them).
        engine = Engine(config, decks, release_delay=0.0)
        for i, event in enumerate(events[:half], 1):
            engine.submit(event, float(i))
        publisher.use(engine)
        await publisher.resume()
        engine.start_feed()
        publisher.serve()
        for i, event in enumerate(events[half:], half + 1):
            engine.submit(event, float(i))
            if i % 50 == 0:
                await publisher.publish()
        await publisher.publish()
        keys = list(publisher.store.keys())
        assert set(held) <= set(keys)

        def differ() -> list[Any]:  # (a topic no event moved since the restart: seq aside)
            return [k for k in keys if edge.store.snapshot(k)[1] != publisher.store.snapshot(k)[1]]

        for _ in range(200):  # until the edge has what the ingest sent
            if not differ():
                break
            await asyncio.sleep(0.05)
        assert not differ()
    finally:
        await edge.stop()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await bus.close()
    assert max(sizes) <= FEED_MESSAGE_LIMIT, f"a feed message of {max(sizes):,} bytes"
    # The snapshots too big for the channel went through the hash (the edge read each from
    # there), and no gap was healed.
    assert "notice" in kinds, set(kinds)
    assert edge.gaps == 0 and edge.malformed == 0


async def test_a_snapshot_read_from_the_hash_holds_back_its_own_topic_only(redis_url: str) -> None:
    """The feed's notice of a snapshot in the hash: while the edge reads it there (held here
    until released), the feed's other topics go on, and the frames of its own topic that came
    meanwhile follow it, in order, no gap (at 480 tables a multi-MB read held every topic)."""
    tid = f"fetch-{uuid.uuid4().hex[:8]}"
    names = Channels(tid)
    big, small = ("live", "standings"), ("live", "table:1")
    release = asyncio.Event()
    reading: list[TopicKey] = []

    class HeldHash(EdgeSource):
        async def _snapshots(self, keys: set[TopicKey] | None) -> dict[TopicKey, Frame]:
            if keys is not None and big in keys:
                reading.append(big)
                await release.wait()
            return await super()._snapshots(keys)

    bus = RedisBus(redis_url)
    await bus.connect()
    edge = HeldHash(bus, tid, answer_timeout=0.2)  # (no writer answers: the hash is served)
    try:
        await edge.start()
        snapshot = Frame.snapshot(big[1], 5, {"rows": ["x" * 100] * 50})
        await bus.hset(names.topics, snapshot_field(big), encode_snapshot(snapshot))
        (notice,), stored = feed_messages(big, snapshot, limit=1024)
        assert stored
        await bus.publish(names.feed, notice)
        await bus.publish(names.feed, encode_feed(big, Frame.delta(big[1], 6, [])))
        await bus.publish(names.feed, encode_feed(small, Frame.snapshot(small[1], 1, {"a": 1})))
        for _ in range(100):  # the other topic's frame, while the snapshot is being read
            if edge.store.seq(small) == 1:
                break
            await asyncio.sleep(0.02)
        assert edge.store.seq(small) == 1 and reading == [big] and edge.store.seq(big) == 0
        release.set()
        for _ in range(100):
            if edge.store.seq(big) == 6:
                break
            await asyncio.sleep(0.02)
        assert edge.store.seq(big) == 6 and edge.gaps == 0
    finally:
        release.set()
        await edge.stop()
        await bus.close()


def test_a_reader_puts_parts_together_and_drops_a_frame_missing_one() -> None:
    from hub.serve.feed import Frame, feed_messages

    patch = [{"op": "add", "path": "/rows/-", "value": "x" * 300} for _ in range(1000)]
    frame = Frame.delta("compare:1:1", 5, patch)
    messages, stored = feed_messages(("live", "compare:1:1"), frame, limit=4096)
    assert not stored and len(messages) > 2 and max(map(len, messages)) <= 4096
    reader = FeedReader()
    out = [reader.read(m) for m in messages]
    assert out[:-1] == [None] * (len(messages) - 1)
    last = out[-1]
    assert last is not None and last.key == ("live", "compare:1:1") and last.frame.seq == 5
    assert last.frame.outs["json"].payload == frame.outs["json"].payload
    # A part lost: nothing comes out of that frame, and the next frame reads as ever.
    assert [reader.read(m) for m in messages[:1] + messages[2:]] == [None] * (len(messages) - 1)
    small = Frame.delta("compare:1:1", 6, patch[:1])
    (one,), _ = feed_messages(("live", "compare:1:1"), small, limit=4096)
    got = reader.read(one)
    assert got is not None and got.frame.seq == 6
    snapshot = Frame.snapshot("standings", 1, {"rows": ["x" * 300] * 100})
    (notice,), stored = feed_messages(("live", "standings"), snapshot, limit=4096)
    found = reader.read(notice)
    assert stored and found is not None and found.stored and found.frame.seq == 1


def test_a_group_released_joins_a_traveller_by_its_rows() -> None:
    """A released group's tables join the public traveller in the middle (groups in order):
    its rows are added where they go and the others' moved fields set, not the whole list
    replaced (at 720 tables that was a 3 MB delta per release)."""
    from hub.wire.patch import apply_patch, diff

    def rows(tables: list[int], swing: int) -> list[dict[str, Any]]:
        return [{"table": t, "actions": [{"i": 0}] * 20, "swing": swing} for t in tables]

    old = {"rows": rows([1, 2, 3, 7, 8, 9], 0), "average": 1}
    new = {"rows": rows([1, 2, 3, 4, 5, 6, 7, 8, 9], 5), "average": 2}
    ops = diff(old, new)
    assert apply_patch(old, ops) == new
    assert [op["path"] for op in ops if op["op"] == "add"] == ["/rows/3", "/rows/4", "/rows/5"]
    assert not [op for op in ops if op["path"] == "/rows"]
    assert len(ops) == 3 + 6 + 1
