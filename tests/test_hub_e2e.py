"""The hub end to end on real Redis: consoles → ingest → journal → feed → websocket clients."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import Counter
from typing import Any

import httpx
import pytest

from hub.bus.base import Message
from hub.bus.redis import RedisBus
from hub.client.logreplay import replay_log
from hub.domain.scoring import full_recompute
from hub.engine.core import Engine
from hub.roles.embedded import IngestSource
from hub.wire import codec
from hub.wire.patch import apply_patch
from tests.feedclient import FeedClient
from tests.hubharness import (
    COMMENTATOR,
    OPERATOR,
    edge_hub,
    ingest_hub,
    offline,
    session_events,
    unique_tournament,
)

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


@pytest.fixture
async def redis_bus(redis_url: str) -> Any:
    bus = RedisBus(redis_url)
    await bus.connect()
    created: list[str] = []
    bus.created = created  # type: ignore[attr-defined]
    try:
        yield bus
    finally:
        for tid in created:
            names = ("journal", "topics", "consoles", "rejected", "ingest", "ingest:token")
            keys = [f"dup:{tid}:{n}" for n in names]
            await bus.delete(*keys)
        await bus.close()


def track(bus: Any, tournament: str) -> None:
    bus.created.append(tournament)


def live_topics(config: Any) -> list[str]:
    seats = range(1, config.seats + 1)
    topics = ["standings", "onair", "ticker"]
    topics += [f"seat:{s}" for s in seats] + [f"table:{t}" for t in config.tables]
    topics += [f"deal:{d}" for d in range(1, config.deals + 1)]
    return topics


async def test_session_through_redis_equals_offline_replay(redis_bus: Any) -> None:
    config, decks = unique_tournament()
    track(redis_bus, config.id)
    events = session_events(config.id)
    expected = offline(config, decks, events)
    async with ingest_hub(redis_bus, config, decks) as (source, server):
        async with (
            FeedClient(server.ws_url, COMMENTATOR) as live,
            FeedClient(server.ws_url) as public,
        ):
            await live.subscribe(live_topics(config))
            await public.subscribe(["standings", "ticker"])
            report = await replay_log(redis_bus, config.id, events, on_reject=lambda _: None)
            assert report.accepted == len(events) and report.rejected == 0
            want = expected.standings_json()
            await live.wait_for(lambda c: c.states.get("standings") == want, timeout=20)
            await public.wait_for(
                lambda c: (
                    c.states.get("standings", {}).get("like_for_like") == want["like_for_like"]
                ),
                timeout=20,
            )
            assert live.gaps == [] and public.gaps == []
            assert live.errors == [] and public.errors == []
            # REST mirrors the snapshot.
            async with httpx.AsyncClient(base_url=server.url) as http:
                body = (await http.get("/api/standings")).json()
                assert body["data"]["like_for_like"] == want["like_for_like"]
                assert "running" not in body["data"]
                operator = {"authorization": f"Bearer {OPERATOR}"}
                metrics = (await http.get("/metrics", headers=operator)).text
                assert 'duplicast_events_total{result="accepted"}' in metrics
        # The journal holds exactly the accepted events, in order.
        journal = await redis_bus.read(f"dup:{config.id}:journal", "0-0", 10_000)
        assert len(journal) == len(events)
        first = codec.unpack(journal[0][1])
        assert first["seq"] == events[0]["seq"] and first["type"] == events[0]["type"]
        # Restart: a fresh ingest rebuilds the same state from the journal.
        before = {k: source.engine.payload(k) for k in source.engine.topic_keys()}
        seqs = {k: source.store.seq(k) for k in source.store.keys()}
    rebuilt = IngestSource(redis_bus, Engine(config, decks), own_bus=False)
    await rebuilt.ingest.start()
    try:
        after = {k: rebuilt.engine.payload(k) for k in rebuilt.engine.topic_keys()}
        before.pop(("live", "ops"))
        after.pop(("live", "ops"))
        assert after == before
        # Feed seqs continue where they were: clients never see a seq go back.
        for key, seq in seqs.items():
            assert rebuilt.store.seq(key) >= seq
    finally:
        await rebuilt.ingest.stop()


async def test_bad_input_is_rejected_with_codes_and_journals_nothing(redis_bus: Any) -> None:
    config, decks = unique_tournament("bad")
    track(redis_bus, config.id)
    prefix = f"dup:{config.id}"
    async with ingest_hub(redis_bus, config, decks) as (source, _server):
        acks = redis_bus.subscribe(f"{prefix}:ack:*")
        errors = redis_bus.subscribe(f"{prefix}:errors:*")
        await acks.ready()
        await errors.ready()

        def event(seq: int, **fields: Any) -> dict[str, Any]:
            base = {"v": 1, "tournament": config.id, "table": 1, "console": "table1", "seq": seq}
            return {**base, **fields}

        deal = config.deal_orders[1][0]
        cases: list[tuple[int, Any, str]] = [
            (1, {**event(1, type="fold"), "seat": "x"}, "bad_schema"),
            (1, event(2, type="bet", seat=1), "bad_schema"),
            (1, {**event(3, type="undo"), "tournament": "nope"}, "unknown_tournament"),
            (1, event(4, type="fold", seat=1), "hand_not_started"),
            (1, event(5, type="start", deal=99), "unknown_deal"),
            (1, event(7, type="start", deal=deal), "seq_gap"),
        ]
        # Table 1's console on other tables' channels: refused on those channels' error
        # channels, and table 1's seq 6 is not used up by them (issue #9.1).
        foreign = [(2, event(6, type="undo")), (3, {**event(6, type="undo"), "table": 3})]
        for table, payload in foreign:
            await redis_bus.publish(f"{prefix}:console:{table}", codec.pack(payload))
        for table, payload, _code in cases:
            await redis_bus.publish(f"{prefix}:console:{table}", codec.pack(payload))
        # Nothing in these names a console: they are answered on the table's error channel.
        unaddressed = [
            b"\xc1\xff not msgpack",
            codec.pack([1, 2, 3]),
            codec.pack({k: v for k, v in event(10, type="undo").items() if k != "console"}),
        ]
        for data in unaddressed:
            await redis_bus.publish(f"{prefix}:console:1", data)
        got: list[dict[str, Any]] = []
        async with asyncio.timeout(10):
            async for message in acks:
                got.append(codec.unpack(message.data))
                if len(got) == len(cases):
                    break
            answered = [await errors.__anext__() for _ in [*foreign, *unaddressed]]
        assert [a["code"] for a in got] == [code for *_, code in cases]
        assert all(a["ok"] is False and a["error"] for a in got)
        assert got[-1]["expected"] == 6
        # (the order of answers within one batch is not part of the protocol)
        by_channel = sorted(
            (m.channel.rsplit(":", 1)[1], codec.unpack(m.data)["code"]) for m in answered
        )
        assert by_channel == [
            ("1", "bad_schema"),
            ("1", "bad_schema"),
            ("1", "bad_schema"),
            ("2", "wrong_channel"),
            ("3", "wrong_channel"),
        ]
        errors_text = " ".join(codec.unpack(m.data)["error"] for m in answered)
        assert "not msgpack" in errors_text and "map" in errors_text
        assert "'console'" in errors_text
        # No event journaled (only the refusals that used up a seq, as `refused` records:
        # issue #20.12); the hub still takes a good event.
        assert await journaled(redis_bus, prefix) == {"refused": 5}
        await redis_bus.publish(
            f"{prefix}:console:1", codec.pack(event(6, type="start", deal=deal))
        )
        async with asyncio.timeout(10):
            ok = codec.unpack((await acks.__anext__()).data)
        assert ok["ok"] is True and ok["seq"] == 6 and ok["position"]
        assert await journaled(redis_bus, prefix) == {"refused": 5, "console": 1}
        assert source.ready()
        await acks.aclose()
        await errors.aclose()


async def journaled(bus: Any, prefix: str) -> dict[str, int]:
    """The journal's records by kind."""
    records = [codec.unpack(data) for _, data in await bus.read(f"{prefix}:journal")]
    return dict(Counter(record["kind"] for record in records))


async def _ack(sub: Any) -> dict[str, Any]:
    async with asyncio.timeout(10):
        return dict(codec.unpack((await sub.__anext__()).data))


async def test_resends_after_a_restart_get_the_original_answer(redis_bus: Any) -> None:
    """A refused event resent after the hub restarted is refused again with the same code (not
    re-acked as accepted); an accepted one is re-acked with its journal position. The hub also
    learns from each ack's receiver count whether the console is connected."""
    config, decks = unique_tournament("resend")
    track(redis_bus, config.id)
    prefix = f"dup:{config.id}"
    deal = config.deal_orders[1][0]

    def event(seq: int) -> bytes:
        return codec.pack(
            {"v": 1, "tournament": config.id, "table": 1, "console": "table1", "seq": seq}
            | {"type": "start", "deal": deal}
        )

    acks = redis_bus.subscribe(f"{prefix}:ack:table1")
    await acks.ready()
    async with ingest_hub(redis_bus, config, decks) as (source, _server):
        await redis_bus.publish(f"{prefix}:console:1", event(1))
        accepted = await _ack(acks)
        await redis_bus.publish(f"{prefix}:console:1", event(2))
        refused = await _ack(acks)
        assert accepted["ok"] and accepted["position"]
        assert refused["code"] == "hand_in_progress"
        assert source.engine.desk.links == {"table1": True}
        ops = source.engine.payload(("live", "ops"))
        assert ops is not None and ops["tables"][0]["connected"] is True
    async with ingest_hub(redis_bus, config, decks) as (source, _server):
        for seq, original in ((2, refused), (1, accepted)):
            await redis_bus.publish(f"{prefix}:console:1", event(seq))
            again = await _ack(acks)
            assert again == {**original, "duplicate": True}
        assert await journaled(redis_bus, prefix) == {"console": 1, "refused": 1}
        await acks.aclose()  # the console goes away: its next ack reaches nobody
        await redis_bus.publish(f"{prefix}:console:1", event(3))
        async with asyncio.timeout(10):
            while source.engine.desk.links.get("table1") is not False:
                await asyncio.sleep(0.02)
        ops = source.engine.payload(("live", "ops"))
        assert ops is not None and ops["tables"][0]["connected"] is False


async def test_one_ingest_writes_a_tournament_at_a_time(redis_bus: Any) -> None:
    """A second ingest waits (not ready) while the first holds the lease and takes over when it
    stops; an ingest whose lease was taken cannot append any more and stops."""
    config, decks = unique_tournament("lease")
    track(redis_bus, config.id)
    prefix = f"dup:{config.id}"
    deal = config.deal_orders[1][0]
    acks = redis_bus.subscribe(f"{prefix}:ack:table1")
    await acks.ready()

    def event(seq: int, **fields: Any) -> bytes:
        base = {"v": 1, "tournament": config.id, "table": 1, "console": "table1", "seq": seq}
        return codec.pack(base | fields)

    second = IngestSource(redis_bus, Engine(config, decks), own_bus=False)
    second.ingest.lease_ttl = 1.0
    async with ingest_hub(redis_bus, config, decks) as (_first, _server):
        await second.start()
        assert second.ingest.standby and not second.ready()
        await redis_bus.publish(f"{prefix}:console:1", event(1, type="start", deal=deal))
        assert (await _ack(acks))["ok"]
    # The first stopped (and gave the lease up): the second takes over and rebuilds.
    async with asyncio.timeout(10):
        while not second.ready():
            await asyncio.sleep(0.05)
    assert second.engine.state.tables[1].current is not None
    assert len(await redis_bus.read(f"{prefix}:journal")) == 1
    # Someone else takes the lease (a successor after a long pause): the second is fenced.
    await redis_bus.delete(f"{prefix}:ingest")
    assert await redis_bus.claim(f"{prefix}:ingest", "successor", 30.0)
    seat = second.engine.state.tables[1].current.hand.to_act
    await redis_bus.publish(f"{prefix}:console:1", event(2, type="fold", seat=seat))
    async with asyncio.timeout(10):
        await second.lost.wait()
    assert not second.ready() and second.ingest.lost
    assert len(await redis_bus.read(f"{prefix}:journal")) == 1  # nothing written after
    await second.stop()
    await acks.aclose()


async def test_public_client_sees_no_deal_before_every_table_completed_it(
    redis_bus: Any,
) -> None:
    """Every message a public client receives is checked against the journal position at which
    it was published: a deal it mentions must be complete at every table by then."""
    config, decks = unique_tournament("rel")
    track(redis_bus, config.id)
    events = session_events(config.id)
    orders = {tuple(config.deal_orders[t]) for t in config.tables}
    assert len(orders) > 1, "the sample must have tables playing deals in different orders"
    positions: dict[tuple[str, str, int], str] = {}
    async with ingest_hub(redis_bus, config, decks) as (source, server):
        ingest = source.ingest
        assert ingest.feed is not None
        forward = ingest.feed.on_frame
        assert forward is not None

        def stamp(key: Any, frame: Any) -> None:
            positions[(key[0], key[1], frame.seq)] = ingest.last_position
            forward(key, frame)

        ingest.feed.on_frame = stamp
        seats = range(1, config.seats + 1)
        topics = ["standings", "ticker"] + [f"table:{t}" for t in config.tables]
        topics += [f"seat:{s}" for s in seats]
        topics += [f"deal:{d}" for d in range(1, config.deals + 1)]
        topics += [f"compare:{d}:{s}" for d in range(1, config.deals + 1) for s in seats]
        async with FeedClient(server.ws_url) as public:
            await public.subscribe(topics)
            await replay_log(redis_bus, config.id, events, on_reject=lambda _: None)
            final = offline(config, decks, events).standings_json()["like_for_like"]
            await public.wait_for(
                lambda c: c.states.get("standings", {}).get("like_for_like") == final, 20
            )
            received = list(public.log)
    # Rebuild, from the journal, which deals were complete at every table at each position.
    journal = await redis_bus.read(f"dup:{config.id}:journal", "0-0", 100_000)
    engine = Engine(config, decks)
    complete_at: dict[str, set[int]] = {"0-0": set()}
    results_at: dict[str, dict[Any, Any]] = {"0-0": {}}
    for entry_id, data in journal:
        engine.restore(codec.unpack(data))
        complete_at[entry_id] = set(engine.state.board.completed_deals("A"))
        results_at[entry_id] = engine.state.board.results()
    checked = 0
    seen: set[str] = set()
    states: dict[str, Any] = {}
    for message in received:
        if message.get("type") not in ("snapshot", "delta") or message["seq"] == 0:
            continue
        topic = message["topic"]
        position = positions.get(("public", topic, message["seq"]), "0-0")
        done = complete_at[position]
        if message["type"] == "snapshot":
            states[topic] = message["data"]
        else:
            states[topic] = apply_patch(states[topic], message["patch"])
        data = states[topic]
        if topic.startswith(("deal:", "compare:")):
            assert int(topic.split(":")[1]) in done, (topic, position)
        if topic == "ticker":
            assert {i["deal"] for i in data.get("items", [])} <= done
        if topic.startswith("table:"):
            keys = {"table", "group", "deals_total", "seats", "released", "showdown"}
            assert set(data) <= keys
            showdown = data.get("showdown")  # a released deal's only
            assert showdown is None or showdown["deal"] in done, (showdown, done)
            assert data.get("released", 0) <= len(done)
            assert all("hole" not in s for s in data.get("seats", []))
        if topic == "standings" and "like_for_like" in data:
            assert "running" not in data
            counted = {k: v for k, v in results_at[position].items() if k[1] in done}
            oracle = full_recompute(source.engine.state.layout, counted).as_dict()
            teams = [
                {k: row[k] for k in ("group", "team", "rank", "points", "chips")}
                for row in data["like_for_like"]["teams"]
            ]
            assert teams == oracle["like_for_like"]["teams"], position
        checked += 1
        seen.add(topic)
    # Every deal's traveller, comparisons, the standings and every table were checked (a count
    # of frames was asked before: it moves with how many events a publish covers).
    assert {f"deal:{d}" for d in range(1, config.deals + 1)} <= seen
    assert any(topic.startswith("compare:") for topic in seen)
    assert {"standings", *(f"table:{t}" for t in config.tables)} <= seen
    assert checked > 50


async def test_two_edges_deliver_identical_feeds(redis_bus: Any) -> None:
    config, decks = unique_tournament("edges")
    track(redis_bus, config.id)
    events = [e for e in session_events(config.id) if e["table"] in (1, 2)][:300]
    topics = ["standings", "table:1", "table:2", "ticker"]
    async with (
        ingest_hub(redis_bus, config, decks) as (_source, _ingest_server),
        edge_hub(redis_bus, config.id) as (_e1, server1),
        edge_hub(redis_bus, config.id) as (_e2, server2),
        FeedClient(server1.ws_url, COMMENTATOR) as one,
        FeedClient(server2.ws_url, COMMENTATOR) as two,
    ):
        await one.subscribe(topics)
        await two.subscribe(topics)
        await one.wait_for(lambda c: len(c.states) == len(topics))
        await two.wait_for(lambda c: len(c.states) == len(topics))
        report = await replay_log(redis_bus, config.id, events, on_reject=lambda _: None)
        assert report.rejected == 0
        want = offline(config, decks, events).payload(("live", "table:1"))
        for client in (one, two):
            await client.wait_for(lambda c: c.states.get("table:1") == want, timeout=20)
        await asyncio.sleep(0.3)
        assert one.states == two.states
        assert one.seqs == two.seqs
        assert one.gaps == [] and two.gaps == []

        def deltas(c: FeedClient) -> list[tuple[str, int]]:
            return [(m["topic"], m["seq"]) for m in c.log if m.get("type") == "delta"]

        assert deltas(one) == deltas(two)


async def test_ingest_restarted_mid_session_loses_and_doubles_nothing(redis_bus: Any) -> None:
    """The ingest stops abruptly while consoles stream a session (their events published in
    between are lost on pub/sub); a new ingest rebuilds from the journal, consoles resend, and
    the result equals a clean replay: nothing lost, nothing applied twice."""
    config, decks = unique_tournament("restart")
    track(redis_bus, config.id)
    events = session_events(config.id)
    expected = offline(config, decks, events)
    first = IngestSource(redis_bus, Engine(config, decks), own_bus=False)
    await first.ingest.start()
    sending = asyncio.create_task(
        replay_log(redis_bus, config.id, events, on_reject=lambda _: None, timeout=0.3)
    )
    async with asyncio.timeout(30):
        while first.engine.state.events_applied < len(events) // 3:
            await asyncio.sleep(0.01)
    await first.ingest.stop()  # cancels mid-batch, possibly between journal and ack
    await asyncio.sleep(0.5)  # consoles keep publishing into the void meanwhile
    second = IngestSource(redis_bus, Engine(config, decks), own_bus=False)
    await second.ingest.start()
    try:
        # From the engine snapshot taken on the way down, or the journal if the stop cut a
        # batch short between applying and journaling it.
        assert second.engine.state.events_applied >= len(events) // 3
        async with asyncio.timeout(60):
            report = await sending
        assert report.rejected == 0 and report.accepted + report.duplicates >= len(events)
        assert second.engine.standings_json() == expected.standings_json()
        journal = await redis_bus.read(f"dup:{config.id}:journal", "0-0", 10_000)
        keys = [(r["console"], r["seq"]) for r in (codec.unpack(d) for _, d in journal)]
        assert len(keys) == len(set(keys)) == len(events)
    finally:
        await second.ingest.stop()


async def test_rebuild_from_the_engine_snapshot_and_the_journal_tail(redis_bus: Any) -> None:
    """Issue #8.6: the ingest snapshots its engine every N journal records; a restart after a
    crash (no snapshot on stop) takes the latest one and replays only the journal after it,
    and ends where a full replay ends."""
    config, decks = unique_tournament("snap")
    track(redis_bus, config.id)
    events = session_events(config.id)
    first = IngestSource(redis_bus, Engine(config, decks), own_bus=False)
    first.ingest.engine_snapshot_every = 500
    await first.ingest.start()
    for event in events:
        await first.ingest.handle(f"dup:{config.id}:console:{event['table']}", codec.pack(event))
    first.ingest.ready_once = False  # as a crash: no snapshot on the way down
    await first.ingest.stop()
    journal = await redis_bus.read(f"dup:{config.id}:journal", "0-0", 10_000)
    assert len(journal) == len(events)
    second = IngestSource(redis_bus, Engine(config, decks), own_bus=False)
    await second.ingest.start()
    try:
        position = second.ingest.restored_from
        assert position is not None
        done = [entry_id for entry_id, _ in journal].index(position) + 1
        assert done == 500 * (len(events) // 500)
        assert second.ingest.replayed == len(events) - done
        want = offline(config, decks, events)
        second.engine.tick(float("inf"))
        for key in want.topic_keys():
            if key != ("live", "ops"):
                assert second.engine.payload(key) == want.payload(key), key
        # A resend of an old event is answered as before, with its journal position.
        old = second.engine.submit(events[3], 0.0, channel_table=events[3]["table"])
        assert old.duplicate and old.ack["position"] == journal[3][0]
    finally:
        await second.ingest.stop()
    # A snapshot that cannot be used is set aside: the whole journal replays.
    engine_key = f"dup:{config.id}:engine"
    saved = (await redis_bus.hgetall(engine_key))["snapshot"]
    broken = codec.unpack(saved)
    broken["engine"]["version"] = 99
    await redis_bus.hset(engine_key, "snapshot", codec.pack(broken))
    other = IngestSource(redis_bus, Engine(config, decks), own_bus=False)
    await other.ingest.start()
    try:
        assert other.ingest.restored_from is None and other.ingest.replayed == len(events)
    finally:
        await other.ingest.stop()


async def test_no_engine_snapshot_while_a_batch_is_applied_but_not_journaled() -> None:
    """A stop that cuts a batch short between applying and journaling leaves the engine ahead
    of the journal: no snapshot may then record that state as the journal's."""
    from hub.bus.memory import MemoryBus
    from hub.roles.ingest import Ingest

    config, decks = unique_tournament("cut")
    bus = MemoryBus()
    await bus.connect()
    ingest = Ingest(bus, Engine(config, decks))
    await ingest.start()
    stuck = asyncio.Event()

    async def hang(*args: Any, **kwargs: Any) -> list[str]:
        stuck.set()
        await asyncio.Event().wait()
        return []

    bus.append_many = hang  # type: ignore[method-assign]
    event = session_events(config.id)[0]
    channel = f"dup:{config.id}:console:{event['table']}"
    message = Message(channel, codec.pack(event), 0.0)
    batch = asyncio.create_task(ingest.handle_batch([message]))
    await stuck.wait()
    batch.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await batch
    assert ingest.engine.state.events_applied == 1  # applied, never journaled
    assert await ingest.save_engine() is False
    assert await bus.hgetall(f"dup:{config.id}:engine") == {}
    await ingest.stop()
    assert await bus.hgetall(f"dup:{config.id}:engine") == {}


async def test_refusal_answers_persisted_are_bounded_per_console(redis_bus: Any) -> None:
    """Issue #9.8: refusal answers were persisted without bound; now the latest MAX_REFUSALS
    per console are kept (a resend is of a recent seq), older ones are deleted."""
    from hub.roles import ingest_answers as ingest_module

    config, decks = unique_tournament("bound")
    track(redis_bus, config.id)
    source = IngestSource(redis_bus, Engine(config, decks), own_bus=False)
    await source.ingest.start()
    keep = 20
    old, ingest_module.MAX_REFUSALS = ingest_module.MAX_REFUSALS, keep
    try:
        channel = f"dup:{config.id}:console:1"
        for seq in range(1, 61):
            bad = {"v": 1, "tournament": config.id, "table": 1, "console": "table1", "seq": seq}
            bad["type"] = "fold"  # no hand in progress: hand_not_started, seq used up
            await source.ingest.handle(channel, codec.pack({**bad, "seat": 1}))
        kept = await redis_bus.hgetall(f"dup:{config.id}:rejected")
        assert sorted(int(k.split(":")[0]) for k in kept) == list(range(41, 61))
        # A resend of a kept seq is told its refusal; the high-water mark holds.
        assert source.engine.admission.sequencer.expected("table1") == 61
    finally:
        ingest_module.MAX_REFUSALS = old
        await source.ingest.stop()
    restarted = IngestSource(redis_bus, Engine(config, decks), own_bus=False)
    await restarted.ingest.start()
    try:
        assert restarted.engine.admission.sequencer.expected("table1") == 61
        again = restarted.engine.submit(
            {"v": 1, "tournament": config.id, "table": 1, "console": "table1", "seq": 55,
             "type": "fold", "seat": 1}, 0.0, channel_table=1,
        )  # fmt: skip
        assert again.duplicate and again.ack["code"] == "hand_not_started"
    finally:
        await restarted.ingest.stop()


async def test_an_operator_command_on_an_edge_with_no_ingest_says_so() -> None:
    """Operator commands sent through an edge were fire-and-forget; with no ingest running the
    operator now hears so at once."""
    from hub.bus.memory import MemoryBus
    from hub.roles.edge import EdgeSource

    bus = MemoryBus()
    await bus.connect()
    edge = EdgeSource(bus, "nobody", answer_timeout=0.5)
    await edge.start()
    try:
        answer = await edge.control({"op": "onair", "slot": "ticker", "value": {"visible": False}})
        assert answer["ok"] is False and answer["code"] == "unavailable"
        assert "no ingest" in answer["error"]
        # An ingest that listens but never answers: a clear timeout, not a silent success.
        deaf = bus.subscribe("dup:nobody:control")
        await deaf.ready()
        answer = await edge.control({"op": "onair", "slot": "ticker", "value": {}})
        assert answer["code"] == "unavailable" and "did not answer" in answer["error"]
        await deaf.aclose()
    finally:
        await edge.stop()


async def test_topics_outside_the_tournament_are_refused_and_nothing_is_kept() -> None:
    """Issue #9.2: every distinct valid-looking topic name used to stay in the hub; now a name
    outside the tournament (seat 9 of 6, a deal it does not have, a table it does not have) is
    unknown_topic, over the websocket and REST alike, and leaves no state behind."""
    import httpx

    from hub.bus.memory import MemoryBus
    from tests.feedclient import FeedClient

    config, decks = unique_tournament("space")
    bus = MemoryBus()
    await bus.connect()
    async with ingest_hub(bus, config, decks) as (source, server):
        outside = [f"seat:{config.seats + 3}", f"deal:{config.deals + 1}", "table:99",
                   f"compare:{config.deals + 1}:1", "seat:100000"]  # fmt: skip
        async with FeedClient(server.ws_url) as client:
            await client.subscribe([*outside, "standings"])
            await client.wait_for(lambda c: "standings" in c.states and len(c.errors) == 5, 5)
        assert sorted(e["topic"] for e in client.errors) == sorted(outside)
        assert {e["code"] for e in client.errors} == {"unknown_topic"}
        assert source.fanout.topics() == 0  # the client left: nothing kept of any topic
        assert not any(key[1] in outside for key in source.store.keys())
        async with httpx.AsyncClient(base_url=server.url) as http:
            for path in (f"/api/seats/{config.seats + 3}", f"/api/deals/{config.deals + 1}"):
                assert (await http.get(path)).status_code == 404


async def test_demo_on_redis_refuses_to_delete_data_it_did_not_write(
    redis_bus: Any, redis_url: str, tmp_path: Any
) -> None:
    """Issue #10.9: `demo --redis` deleted the tournament's journal, topics and consoles keys at
    start without a word. Now it refuses while they exist, unless --reset."""
    from hub.cli.demo import Demo, DemoRefused
    from tests.hubharness import SAMPLE

    tid = f"demo-{uuid.uuid4().hex[:8]}"
    track(redis_bus, tid)
    config = tmp_path / "event.toml"
    config.write_text(SAMPLE.read_text().replace('id = "ifp-demo"', f'id = "{tid}"', 1))
    await redis_bus.append(f"dup:{tid}:journal", codec.pack({"kept": True}))
    refused = Demo(config_path=config, redis_url=redis_url, port=0, loop_session=False)
    with pytest.raises(DemoRefused, match="--reset"):
        await refused.start()
    assert len(await redis_bus.read(f"dup:{tid}:journal")) == 1  # untouched
    reset = Demo(config_path=config, redis_url=redis_url, port=0, loop_session=False, reset=True)
    await reset.start()
    try:
        journal = await redis_bus.read(f"dup:{tid}:journal", "0-0", 10)
        assert all(codec.unpack(d) != {"kept": True} for _, d in journal)
    finally:
        await reset.stop()


async def test_operator_voids_and_penalties_through_an_edge_reach_every_audience(
    redis_bus: Any,
) -> None:
    """The official's rulings from the operator panel on an edge: the ingest applies and
    journals them, the public standings show the penalty, a restarted ingest has them back."""
    config, decks = unique_tournament()
    track(redis_bus, config.id)
    events = session_events(config.id)[:300]
    async with ingest_hub(redis_bus, config, decks) as (source, _):
        report = await replay_log(redis_bus, config.id, events, on_reject=lambda _: None)
        assert report.rejected == 0
        async with edge_hub(redis_bus, config.id) as (_edge, server):
            desk, public = FeedClient(server.ws_url, OPERATOR), FeedClient(server.ws_url)
            async with desk, public:
                await public.subscribe(["standings"])
                await desk.subscribe(["ops"])
                table = source.engine.state.tables[1]
                played = table.last_finished
                assert played is not None
                await desk.send({"op": "void", "table": 1, "deal": played, "by": "TD"})
                await desk.send(
                    {
                        "op": "penalty",
                        "table": 1,
                        "seat": 2,
                        "chips": 300,
                        "points": 1,
                        "by": "TD Ana",
                        "reason": "slow play",
                    }
                )
                await desk.send(
                    {
                        "op": "void",
                        "table": 1,
                        "deal": played,
                        "by": "TD Ana",
                        "reason": "duplicate card found",
                    }
                )

                def ruled(c: FeedClient) -> bool:
                    oks = [m for m in c.log if m.get("type") == "ok"]
                    return len(oks) == 2 and len(c.errors) == 1

                await desk.wait_for(ruled, timeout=10)
                assert desk.errors[0]["code"] == "bad_request" and desk.errors[0]["op"] == "void"

                def penalised(c: FeedClient) -> bool:
                    teams = c.states.get("standings", {}).get("like_for_like", {}).get("teams", [])
                    return any(t.get("penalty") == {"chips": 300, "points": 1} for t in teams)

                await public.wait_for(penalised, timeout=10)
                await desk.wait_for(
                    lambda c: any(
                        k.get("reason") == "duplicate card found" and k.get("by") == "TD Ana"
                        for k in c.states.get("ops", {}).get("corrections", [])
                    ),
                    timeout=10,
                )
        assert source.engine.state.hand(1, played).status == "void"  # type: ignore[union-attr]
        before = source.engine.standings_json()
    rebuilt = IngestSource(redis_bus, Engine(config, decks), own_bus=False)
    await rebuilt.ingest.start()
    try:
        assert rebuilt.engine.standings_json() == before
        assert rebuilt.engine.state.penalties[0]["reason"] == "slow play"
    finally:
        await rebuilt.ingest.stop()


async def test_cue_list_and_undo_take_through_an_edge_survive_a_restart(redis_bus: Any) -> None:
    """The operator's cue list and on-air undo (issue #22 item 3) through an edge: the ingest
    checks, journals and applies them, `ops` shows them, a refusal says why, and an ingest
    rebuilt from the journal has the same cues, slots and takes."""
    config, decks = unique_tournament()
    track(redis_bus, config.id)
    async with ingest_hub(redis_bus, config, decks) as (source, _):
        async with edge_hub(redis_bus, config.id) as (_edge, server):
            desk = FeedClient(server.ws_url, OPERATOR)
            async with desk:
                await desk.subscribe(["ops"])
                add = {"op": "cue", "action": "add", "slot": "compare"}
                await desk.send({**add, "value": {"deal": 2, "seat": 3, "tables": [1, 4]}})
                await desk.send({**add, "value": {"deal": 99}})  # refused: no such deal
                await desk.send({"op": "cue", "action": "add", "slot": "seat", "value": {}})
                await desk.send({"op": "cue", "action": "move", "cue": 2, "to": 0})
                on = {"visible": True, "deal": 2, "seat": 3, "cut": True}
                await desk.send({"op": "onair", "slot": "compare", "value": on})
                await desk.send({"op": "onair", "slot": "seat", "value": {"seat": 4}})
                await desk.send({"op": "undo_take"})
                # Refused too: answered only after the ingest applied all of the above (`ops` can
                # show the compare slot's undo before the seat's take is even in).
                await desk.send({**add, "value": {"deal": 98}})

                def shown(c: FeedClient) -> bool:
                    ops = c.states.get("ops", {})
                    cues = [q["id"] for q in ops.get("cues", [])]
                    undo = ops.get("undo_take") or {}
                    return cues == [2, 1] and undo.get("slot") == "compare" and len(c.errors) == 2

                await desk.wait_for(shown, timeout=10)
                assert [(e["code"], e["op"]) for e in desk.errors] == [("unknown_deal", "cue")] * 2
        live = source.engine
        want = (live.desk.onair, live.desk.cues.snapshot(), live.desk.takes.snapshot())
        assert live.desk.onair["slots"]["compare"]["cut"] is True
        assert live.desk.onair["slots"]["seat"] == {"visible": False, "seat": 1}
    rebuilt = IngestSource(redis_bus, Engine(config, decks), own_bus=False)
    await rebuilt.ingest.start()
    try:
        again = rebuilt.engine
        assert (again.desk.onair, again.desk.cues.snapshot(), again.desk.takes.snapshot()) == want
    finally:
        await rebuilt.ingest.stop()
