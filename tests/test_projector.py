"""The projector (``hub.roles.projector``): the feed published by a read model that follows the
journal, beside an ingest that only decides, journals and answers (``Ingest(feed=False)``).

Run on the memory bus and on Redis: the projector's documents equal the payloads of the
ingest's own engine for every topic; refusals and console links (not journaled) reach the
operator desk through the notes; edges' snapshot requests are answered; a restarted projector
continues every topic's seq; a second projector waits and takes over."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from hub.bus.base import Bus, Message
from hub.bus.redis import RedisBus
from hub.engine.core import Engine
from hub.roles.ingest import Ingest
from hub.roles.projector import Projector
from hub.wire import codec
from hub.wire.channels import Channels
from hub.wire.topics import LIVE, PUBLIC
from tests.feedclient import FeedClient
from tests.hubharness import SAMPLE, session_events, unique_tournament

pytestmark = pytest.mark.asyncio
ROOT = Path(__file__).resolve().parent.parent


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def write_and_read(
    bus: Bus, clock: Callable[[], float] = time.time, **projecting: Any
) -> AsyncIterator[tuple[Ingest, Projector]]:
    """An ingest that leaves the feed to a projector, and that projector, running on ``bus``."""
    config, decks = unique_tournament("proj")
    ingest = Ingest(bus, Engine(config, decks), clock=clock, feed=False)
    projector = Projector(bus, Engine(config, decks), clock=clock, **projecting)
    await ingest.start()
    await projector.start()
    try:
        yield ingest, projector
    finally:
        await projector.stop()
        await ingest.stop()


async def feed_session(ingest: Ingest, events: list[dict[str, Any]], batch: int = 40) -> None:
    names = ingest.names
    for start in range(0, len(events), batch):
        chunk = events[start : start + batch]
        await ingest.handle_batch(
            [Message(names.console(e["table"]), codec.pack(e), time.monotonic()) for e in chunk]
        )


def same_documents(projector: Projector, engine: Engine) -> list[tuple[str, str]]:
    """The topics whose published document differs from ``engine``'s payload (the desk's
    clock reading ``at`` aside: each side reads its own)."""
    differ = []
    for key in engine.topic_keys():
        _, document = projector.store.snapshot(key)
        expected = engine.payload(key)
        if key[1] == "ops":
            document = {**document, "at": None}
            expected = {**(expected or {}), "at": None}
        if document != expected:
            differ.append(key)
    return differ


async def test_projector_documents_equal_the_ingest_engine_payloads(bus: Bus) -> None:
    clock = Clock()
    async with write_and_read(bus, clock, tick_interval=0.05) as (ingest, projector):
        assert ingest.store is None and projector.ready
        events = session_events(ingest.tournament)
        half = len(events) // 2
        await feed_session(ingest, events[:half])
        await until(lambda: projector.position == ingest.last_position)
        await until(lambda: not same_documents(projector, ingest.engine))
        await feed_session(ingest, events[half:])
        clock.now += 3600  # every finished deal is past its release delay
        ingest.engine.tick(clock())
        await until(lambda: projector.position == ingest.last_position)
        await until(lambda: not same_documents(projector, ingest.engine))
        public = projector.store.snapshot((PUBLIC, "standings"))[1]
        assert public == ingest.engine.payload((PUBLIC, "standings"))
        deals = range(1, ingest.engine.state.config.deals + 1)
        assert any(projector.engine.release.deal_released(d) for d in deals)


async def test_refusals_and_links_reach_the_desk_through_the_notes(bus: Bus) -> None:
    async with write_and_read(bus, tick_interval=0.05) as (ingest, projector):
        bad = {"v": 1, "tournament": ingest.tournament, "table": 2, "console": "table2"}
        bad |= {"seq": 1, "type": "fold", "seat": 3}  # no hand started: refused, seq used up
        channel = ingest.names.console(2)
        await ingest.handle_batch([Message(channel, codec.pack(bad), time.monotonic())])

        def desk() -> dict[str, Any]:
            return projector.store.snapshot((LIVE, "ops"))[1]

        await until(lambda: bool(desk()["rejections"]))
        (refusal,) = desk()["rejections"]
        assert refusal == ingest.engine.desk.rejections[-1]
        assert refusal["table"] == 2 and refusal["console"] == "table2" and refusal["seq"] == 1
        row = next(t for t in desk()["tables"] if t["table"] == 2)
        assert row["rejections"] == 1
        # Nobody listened for table2's answer: the desk shows its console as not connected.
        assert ingest.engine.desk.links == {"table2": False}
        await until(lambda: projector.engine.desk.links == {"table2": False})


async def test_the_notes_stay_bounded_under_garbage(bus: Bus) -> None:
    """Every refused message was one more notes entry, carrying the wire's texts whole: a
    flood of garbage grew ``dup:{t}:notes`` without end. It is trimmed, each entry cut."""
    from hub.roles.notes import MAXLEN, refusal_note

    async with write_and_read(bus, tick_interval=0.05) as (ingest, projector):
        channel = ingest.names.console(2)
        huge = "x" * 20_000
        for start in range(0, 3 * MAXLEN, 500):
            batch = [
                {"v": 1, "tournament": ingest.tournament, "table": 2, "console": f"{n}{huge}"}
                | {"seq": 1, "type": "fold", "seat": 3, "note": huge}
                for n in range(start, start + 500)
            ]
            now = time.monotonic()
            await ingest.handle_batch([Message(channel, codec.pack(e), now) for e in batch])
        entries, after = [], "0-0"
        while page := await bus.read(ingest.names.notes, after, 1000):
            entries += page
            after = page[-1][0]
        assert len(entries) <= MAXLEN + 100  # MAXLEN ~: at most one more node of 100
        assert max(len(data) for _, data in entries) < 4096
        desk, ours = projector.engine.desk.rejections, ingest.engine.desk.rejections
        await until(lambda: bool(desk) and desk[-1] == ours[-1])  # the desk is still fed
        # A refusal quoting the wire at length is cut, not carried whole.
        long = {"table": 2, "console": huge, "seq": 1, "code": "x", "message": huge, "at": 0.0}
        assert len(refusal_note(long)) < 1024
        assert codec.unpack(refusal_note(long))["refusal"]["seq"] == 1


async def test_edges_snapshot_requests_are_answered_by_the_projector(bus: Bus) -> None:
    async with write_and_read(bus) as (ingest, projector):
        names = ingest.names
        replies = bus.subscribe(names.reply("edge-1"))
        await replies.ready()
        try:
            ask = {"op": "snapshots", "id": "r1", "reply": "edge-1", "keys": ["live|standings"]}
            await bus.publish(names.control, codec.pack(ask))
            answer = await asyncio.wait_for(anext(replies), 5)
            assert codec.unpack(answer.data) == {"ok": True, "id": "r1"}
            with pytest.raises(TimeoutError):  # the projector's answer only, not the ingest's
                await asyncio.wait_for(anext(replies), 0.3)
            assert "live|standings" in await bus.hgetall(names.topics)
            assert "live|standings" in await bus.hgetall(names.topic_seqs)
            await projector.stop()  # then nobody answers: the ingest leaves them to it
            await bus.publish(names.control, codec.pack({**ask, "id": "r2"}))
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(anext(replies), 0.5)
        finally:
            await replies.aclose()


async def test_a_restarted_projector_continues_the_seqs_and_a_second_one_waits(bus: Bus) -> None:
    config, decks = unique_tournament("proj")
    ingest = Ingest(bus, Engine(config, decks), feed=False)
    first = Projector(bus, Engine(config, decks), lease_ttl=1.0)
    await ingest.start()
    await first.start()
    events = session_events(config.id)
    try:
        await feed_session(ingest, events[:60])
        await until(lambda: first.position == ingest.last_position)
        await first.feed.publish()
        key = (LIVE, "standings")
        before = first.store.seq(key)
        assert before >= 1
        second = Projector(bus, Engine(config, decks), lease_ttl=1.0)
        await second.start()
        assert second.standby and not second.ready
        await first.stop()  # a clean stop: saves the seqs and snapshots, frees the lease
        await until(lambda: second.ready)
        assert second.store.seq(key) >= before  # never back
        frames: list[int] = []
        second.feed.on_frame = lambda k, frame: frames.append(frame.seq) if k == key else None
        await feed_session(ingest, events[60:120])
        await until(lambda: second.position == ingest.last_position)
        await until(lambda: bool(frames))
        assert min(frames) > before
        await until(lambda: not same_documents(second, ingest.engine))  # a loaded machine
        await second.stop()
    finally:
        await first.stop()
        await ingest.stop()


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(command: list[str], expect: str, *, env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub", "serve", *command],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    line = ""
    while expect not in line:
        line = proc.stdout.readline()
        assert line or proc.poll() is None, f"{command} exited"
        assert time.monotonic() < deadline, f"{command} did not start"
    return proc


@pytest.mark.redis
async def test_serve_ingest_with_a_separate_projector_process(
    redis_url: str, tmp_path: Path
) -> None:
    """`serve --role ingest --feed separate` and `serve --role projector`: events a console
    publishes come out of the ingest's own websocket as the projector published them; a
    control surface's unsigned command with the operator token in the header is taken on the
    ingest's own port (as `--role ingest` takes it: docs/companion.md), not refused as an
    edge's relay would be, and the projector's `control` topic shows it there."""
    tournament = f"proj-{uuid.uuid4().hex[:8]}"
    config = tmp_path / "event.toml"
    config.write_text(SAMPLE.read_text().replace('id = "ifp-demo"', f'id = "{tournament}"', 1))
    token = "projector-test-commentator-token"
    operator = f"projector-test-operator-{uuid.uuid4().hex}"
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "DUPLICAST_COMMENTATOR_TOKEN": token,
        "DUPLICAST_OPERATOR_TOKEN": operator,
    }
    common = ["--config", str(config), "--redis", redis_url]
    port = _port()
    procs = []
    try:
        procs.append(_start(["--role", "projector", *common], "duplicast projector", env=env))
        procs.append(
            _start(
                ["--role", "ingest", "--feed", "separate", "--port", str(port), *common],
                "duplicast ingest",
                env=env,
            )
        )
        async with FeedClient(f"ws://127.0.0.1:{port}/ws", token) as client:
            await client.subscribe(["table:3", "standings"])
            await client.wait_for(lambda c: "table:3" in c.states)
            bus = RedisBus(redis_url)
            await bus.connect()
            names = Channels(tournament)
            try:
                events = [e for e in session_events(tournament) if e["table"] == 3][:12]
                for event in events:
                    await bus.publish(names.console(3), codec.pack(event))

                def finished_the_hand(c: FeedClient) -> bool:  # the 12 events end one hand
                    table = c.states["table:3"]
                    return table.get("last_deal") == events[0]["deal"]

                await client.wait_for(finished_the_hand, timeout=20)
                await client.wait_for(lambda c: c.seqs.get("standings", 0) >= 1)
            finally:
                await bus.close()
            assert not client.gaps and not client.errors
        ready = urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5)
        assert json.loads(ready.read()) == {"ready": True}
        export = urllib.request.urlopen(
            urllib.request.Request(
                f"http://127.0.0.1:{port}/api/export/phh",
                headers={"Authorization": f"Bearer {token}"},
            ),
            timeout=30,
        )
        assert export.status == 200 and export.headers["x-phh-hands"] == "0"  # none released
        # A Stream Deck's button (Companion's generic HTTP module: it cannot sign).
        bearer = {"Authorization": f"Bearer {operator}", "Content-Type": "application/json"}
        posted = urllib.request.urlopen(
            urllib.request.Request(
                f"http://127.0.0.1:{port}/api/control/preview",
                data=json.dumps({"slot": "seat", "value": {"seat": 3}}).encode(),
                headers=bearer,
                method="POST",
            ),
            timeout=10,
        )
        assert posted.status == 200 and json.loads(posted.read())["ok"] is True
        read = {"Authorization": f"Bearer {operator}"}

        def control() -> dict[str, Any]:
            url = f"http://127.0.0.1:{port}/api/control"
            got = urllib.request.urlopen(urllib.request.Request(url, headers=read), timeout=5)
            return dict(json.loads(got.read()))

        await until(lambda: control()["preview_text"] == "seat · seat 3")
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                assert proc.wait(15) == 0
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise


async def test_an_ingest_with_a_separate_feed_is_ready_only_holding_the_lease() -> None:
    """`serve --role ingest --feed separate` serves as an edge does (``WriterSource``); its
    /readyz says whether the ingest writes, not only whether the edge follows the feed."""
    from hub.bus.memory import MemoryBus
    from hub.cli.serve import WriterSource

    config, decks = unique_tournament("proj")
    bus = MemoryBus()
    first = Ingest(bus, Engine(config, decks), feed=False, lease_ttl=0.4)
    second = Ingest(bus, Engine(config, decks), feed=False, lease_ttl=0.4)
    source = WriterSource(bus, config.id, second, answer_timeout=0.2)
    projector = Projector(bus, Engine(config, decks))  # what its edge side follows
    await first.start()
    await projector.start()
    await source.start()
    await second.start()
    try:
        assert second.standby
        assert not source.ready()
        assert source.metrics is second.metrics
        # A command on its port: unavailable in standby (its engine is not the journal's)...
        clear = {"op": "preview", "action": "clear"}
        answer = await source.control(clear)
        assert answer["code"] == "unavailable" and "standby" in answer["error"]
        await first.stop()
        await until(lambda: source.ready())
        assert second.ready and not second.standby
        # ... and taken by its own ingest once it writes (unsigned: its client showed the token)
        assert (await source.control(clear))["ok"] is True
        assert second.engine.desk.version == 1
        await asyncio.sleep(1.5)  # past the edge side's first sync (it went 503 there)
        assert source.ready()
    finally:
        await source.stop()
        await projector.stop()
        await second.stop()
        await first.stop()


async def test_the_projector_outlives_a_redis_outage(tmp_path: Path) -> None:
    """Redis gone for longer than the bus's retries: the projector's loops keep trying and
    follow the journal again once it is back (its own Redis, stopped and started)."""
    from redis_server import RedisServer

    from hub.bus.redis import RetryPolicy

    config, decks = unique_tournament("proj")
    with RedisServer(tmp_path) as server:
        bus = RedisBus(server.url, retry=RetryPolicy(deadline=0.3, base=0.01, cap=0.05))
        await bus.connect()
        projector = Projector(bus, Engine(config, decks), lease_ttl=30.0)
        await projector.start()
        try:
            names = Channels(config.id)
            first = session_events(config.id)[0]
            server.stop()
            await asyncio.sleep(1.5)  # several failed reads, each past the retry deadline
            await asyncio.to_thread(server.start)
            record = {"kind": "console", **first, "at": time.time()}
            position = await bus.append(names.journal, codec.pack(record))
            await until(lambda: projector.position == position, timeout=15)
            table = projector.store.snapshot((LIVE, f"table:{first['table']}"))[1]
            assert table["deal"] == first["deal"]
        finally:
            await projector.stop()
            await bus.close()
