"""The commentators' cadenced topics catch up behind nginx once the consoles go quiet (issue #31).

``projection``, ``stats`` and ``dealstats`` keep a cadence (``Family.cadence``): the ingest's
paced publishes leave them for later while only actions moved them, and what they left goes
out when due with no event to carry it (``FeedPublisher._pace``). tests/test_feed_cadence.py
tests that in process; here, as the event meets it: a Redis of the test's own, a real
``serve --role ingest``, two real edges and the shipped deploy/nginx.conf in front, the sample
session played by real consoles (``duplicast console replay``) up to a cut in the middle of
hands, where every table's last events are actions (so the cadenced topics are owing when the
consoles stop).

A commentator connected through nginx before the last events applies the deltas it gets: its
documents end equal to the builders' for the ingest's journal (replayed here into an engine of
the test's own) within the cadence and a margin; while the events came it saw fewer projection
frames than actions (at most about one a cadence, and those other events pushed). A commentator
subscribing afterwards, and the REST routes, serve the same documents.

What carries the owed topics once the consoles are quiet is the publisher's timer, and, in an
ingest process, its clock's tick too: every 0.25 s an idle ingest publishes (paced), and a
family whose cadence has passed moves then (``Ingest._ticker``). Either one alone passes this
test (with the timer cut, the last frames came ~0.15 s later); with both cut it fails, the
commentator's documents staying behind the journal's.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.bus.redis import RedisBus
from hub.engine.changes import ActionApplied
from hub.engine.core import Engine
from hub.engine.families import FEEDS
from hub.engine.families.base import CADENCE
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.roles.ingest_journal import restore_engine
from hub.serve.feed import CATCH_UP_DELTAS
from hub.wire.channels import Channels
from tests.feedclient import FeedClient
from tests.hubharness import SAMPLE, session_events
from tests.nginx import Nginx
from tests.redis_server import RedisServer
from tests.test_edge_subscribe import COMMENTATOR, hub_env, ingest_and_edges, upstreams

pytestmark = [pytest.mark.redis]

ROOT = Path(__file__).resolve().parent.parent
CUT = 943  # events of the sample session played: every table's last TAIL are plain actions
PLAYING = 120  # of which the last ones, played while the commentator watches
TAIL = 5
PACE = 0.12  # seconds between two events of one console while the commentator watches
MARGIN = 3.0  # past the cadence, for the last frames to reach the commentator (a loaded box)
# What moves a cadenced family at the next publish, whatever its cadence: any event it
# declares but an action.
PRESSING = tuple(c for f in FEEDS.values() if f.cadence for c in f.events if c is not ActionApplied)


@dataclass
class Cut:
    """The session up to ``CUT``, split where the commentator starts watching."""

    before: list[dict[str, Any]]
    watched: list[dict[str, Any]]
    actions: int  # of ``watched``: plain actions (they move the cadenced families, paced)
    others: int  # the rest (each moves them at the next publish)
    deals: list[int]  # the deals at the tables at the cut, and those released by then


def session_cut() -> Cut:
    """The sample session to ``CUT``, played into an engine here: which events were plain
    actions (nothing else the cadenced families declare was handed to the feed), checking
    the cut ends on them at every table, in the middle of hands."""
    config = load_config(SAMPLE)
    engine = Engine(config, load_decks(config, SAMPLE.parent, dict(os.environ)))
    engine.start_feed()
    events = session_events(config.id)[:CUT]
    plain: list[bool] = []
    last: dict[int, list[bool]] = defaultdict(list)
    for event in events:
        out = engine.submit(event, float(event["ts"]))
        assert out.ok, out.ack
        handed = list(engine.projecting.handed)
        engine.projecting.flush()
        action = any(isinstance(i, ActionApplied) for i in handed)
        plain.append(action and not any(isinstance(i, PRESSING) for i in handed))
        last[event["table"]].append(plain[-1])
    assert set(last) == set(config.tables)
    for table, flags in last.items():
        assert all(flags[-TAIL:]), f"table {table}'s last events are not all plain actions"
    ops = engine.payload(("live", "ops"))
    assert ops is not None
    playing = [t["deal"] for t in ops["tables"]]
    assert None not in playing, "a deal at every table at the cut"
    released = [r["deal"] for r in ops["release"] if r["released"]]
    watched = plain[-PLAYING:]
    return Cut(
        events[:-PLAYING],
        events[-PLAYING:],
        sum(watched),
        len(watched) - sum(watched),
        sorted({*playing, *released}),
    )


@dataclass
class Venue:
    redis: str
    env: dict[str, str]
    lb: Nginx
    tmp: Path


def replay_command(log: Path, redis: str, *, pace: float = 0.0) -> list[str]:
    return [
        sys.executable, "-m", "hub", "console", "replay", "--tournament", "ifp-demo",
        "--redis", redis, "--no-outbox", "--pace", str(pace), str(log),
    ]  # fmt: skip


def write_log(path: Path, events: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


@pytest.fixture(scope="module")
def cut() -> Cut:
    return session_cut()


@pytest.fixture(scope="module")
def venue(tmp_path_factory: pytest.TempPathFactory, cut: Cut) -> Iterator[Venue]:
    """Redis, ingest, two edges and nginx, the session played up to where the commentator
    starts watching."""
    tmp = tmp_path_factory.mktemp("cadence")
    env = hub_env(tmp)
    with RedisServer(tmp / "redis") as redis, ingest_and_edges(redis.url, env) as (_, ports):
        played = subprocess.run(
            replay_command(write_log(tmp / "before.jsonl", cut.before), redis.url),
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert played.returncode == 0, played.stderr[-2000:]
        with Nginx(tmp / "nginx", upstreams(ports)) as lb:
            yield Venue(redis.url, env, lb, tmp)


async def journal_documents(redis: str, keys: list[tuple[str, str]]) -> dict[str, Any]:
    """The builders' documents for the ingest's journal: an engine of the test's own,
    restored from that journal as the ingest restores its own, at the ingest's clock."""
    config = load_config(SAMPLE)
    engine = Engine(config, load_decks(config, SAMPLE.parent, dict(os.environ)))
    bus = RedisBus(redis)
    await bus.connect()
    try:
        await restore_engine(bus, Channels(config.id), engine, lambda _: {})
    finally:
        await bus.close()
    engine.tick(time.time())
    documents = {key[1]: engine.payload(key) for key in keys}
    assert None not in documents.values(), documents
    return documents


class Stamped(list[dict[str, Any]]):
    """A feed client's log that also keeps when each message arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.at: list[float] = []

    def append(self, message: dict[str, Any]) -> None:
        self.at.append(time.monotonic())
        super().append(message)


def stamped(client: FeedClient) -> list[tuple[float, dict[str, Any]]]:
    """Every message ``client`` got, with when it arrived."""
    assert isinstance(client.log, Stamped)
    return list(zip(client.log.at, client.log, strict=True))


def last_frames(client: FeedClient, topics: list[str]) -> float:
    """When the last frame of any of ``topics`` reached ``client``."""
    return max(at for at, m in stamped(client) if m.get("topic") in topics)


def deltas(client: FeedClient, topic: str, since: float) -> int:
    """The deltas of ``topic`` that ``client`` got from ``since`` on."""
    return sum(
        1
        for at, m in stamped(client)
        if at >= since and m.get("type") == "delta" and m.get("topic") == topic
    )


async def caught_up(client: FeedClient, built: dict[str, Any], timeout: float = 20) -> None:
    """Once ``client`` holds ``built``; else a failure naming the topics it holds otherwise."""
    try:
        await client.wait_for(
            lambda c: all(c.states.get(t) == d for t, d in built.items()), timeout
        )
    except TimeoutError:
        behind = sorted(t for t, d in built.items() if client.states.get(t) != d)
        pytest.fail(f"{behind}: still not the journal's documents {timeout} s on")


async def test_the_cadenced_topics_catch_up_behind_nginx(venue: Venue, cut: Cut) -> None:
    topics = ["projection", "stats", *(f"dealstats:{d}" for d in cut.deals)]
    keys = [("live", t) for t in topics]
    async with FeedClient(venue.lb.ws_url, COMMENTATOR) as watching:
        watching.log = Stamped()
        await watching.subscribe(topics)
        await watching.wait_for(lambda c: set(c.states) == set(topics), timeout=30)
        log = write_log(venue.tmp / "watched.jsonl", cut.watched)
        started = time.monotonic()
        playing = await asyncio.create_subprocess_exec(
            *replay_command(log, venue.redis, pace=PACE),
            cwd=ROOT,
            env=venue.env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(playing.communicate(), 120)
        quiet = time.monotonic()  # every event acknowledged: the consoles are quiet
        assert playing.returncode == 0, err.decode(errors="replace")[-2000:]
        built = await journal_documents(venue.redis, keys)
        await caught_up(watching, built)
        assert not watching.gaps and not watching.errors, (watching.gaps, watching.errors)
        late = last_frames(watching, topics) - quiet
        assert late <= CADENCE + MARGIN, f"the last frames came {late:.2f} s after the acks"
        # Paced: at most about one frame a cadence, and one or two for each event that was
        # not a plain action (a start, a win, an undo); fewer than the actions that moved it.
        most = (quiet + late - started) / CADENCE + 2 + 2 * cut.others
        for topic in ("projection", "stats"):
            frames = deltas(watching, topic, started)
            assert 1 <= frames <= most, (topic, frames, most, cut.actions, cut.others)
            assert frames < cut.actions, (topic, frames, cut.actions)
    async with FeedClient(venue.lb.ws_url, COMMENTATOR) as fresh:
        await fresh.subscribe(topics)
        # (a snapshot, and the deltas after it the edge keeps: CATCH_UP_DELTAS at most)
        await caught_up(fresh, built)
        first = {m["topic"]: m["type"] for m in reversed(fresh.log) if m.get("topic")}
        assert first == dict.fromkeys(topics, "snapshot") and not fresh.gaps, fresh.log
        assert len(fresh.log) <= len(topics) * (1 + CATCH_UP_DELTAS)
    routes = {"projection": "/api/projection", "stats": "/api/stats"}
    routes |= {f"dealstats:{d}": f"/api/dealstats/{d}" for d in cut.deals}
    bearer = {"Authorization": f"Bearer {COMMENTATOR}"}
    async with httpx.AsyncClient(base_url=venue.lb.url, headers=bearer, timeout=10) as http:
        for topic, route in routes.items():
            got = await http.get(route)
            assert got.status_code == 200, (route, got.text)
            assert got.json()["topic"] == topic and got.json()["data"] == built[topic], route
