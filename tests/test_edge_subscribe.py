"""Subscribing through an edge after a played session (issue #30 item 1).

A full 12-deal session (``duplicast console simulate --pace 0``) through a real ingest, two real
edges and the shipped deploy/nginx.conf, on a Redis of the test's own. The edge answered a
subscribe with its stored snapshot and every delta since (up to ~100 per busy topic): a client
subscribing about nine busy topics or more (the commentator desk subscribes ~33) overflowed
its queue before it could read anything and was closed 4008 "client too slow", every try. Now
a subscribe costs at most ``1 + CATCH_UP_DELTAS`` frames per topic and that first burst never
counts against the client.

- every topic a role may read (public, commentator, operator), through an edge: one snapshot
  each, and the connection stays open;
- the desk in Chromium through nginx shows every table;
- after an edge restart, 60 desks reconnecting at once all load (``bench/desk_storm.py``
  does 500 from four processes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import websockets
from playwright.sync_api import Browser, expect

from hub.engine.families import topic_space
from hub.files.config import load_config
from hub.serve.feed import CATCH_UP_DELTAS
from tests.browser import new_page
from tests.nginx import Nginx, free_port
from tests.redis_server import RedisServer
from tests.test_lb import start_hub, start_hubs, stop

pytestmark = [pytest.mark.redis]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
COMMENTATOR = "Zq3Z-vYp8_Lw2mXc7RtB9sHd-commentator"
OPERATOR = "Zq3Z-vYp8_Lw2mXc7RtB9sHd-operator"
TOKENS = {"public": None, "commentator": COMMENTATOR, "operator": OPERATOR}
MAX_TOPICS = 64  # Limits.max_topics: topics one connection may subscribe to


@dataclass
class Venue:
    redis: str
    env: dict[str, str]
    lb: Nginx
    edges: list[int]
    processes: dict[str, subprocess.Popen[str]] = field(default_factory=dict)


def hub_env(tmp: Path) -> dict[str, str]:
    """What a venue's processes are given: this environment but its ``DUPLICAST_`` settings,
    the commentator and operator tokens, nginx on loopback as a trusted proxy, and a state
    directory of the test's own."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")},
        "DUPLICAST_COMMENTATOR_TOKEN": COMMENTATOR,
        "DUPLICAST_OPERATOR_TOKEN": OPERATOR,
        "DUPLICAST_TRUSTED_PROXIES": "127.0.0.1",
        "XDG_STATE_HOME": str(tmp / "state"),
    }


@contextlib.contextmanager
def ingest_and_edges(
    redis: str, env: dict[str, str], config: Path = SAMPLE
) -> Iterator[tuple[dict[str, subprocess.Popen[str]], list[int]]]:
    """A real ingest and two real edges on ``redis`` for ``config``'s tournament: the processes
    by name (``ingest``, ``edge1``, ``edge2``: whatever the dict holds at the end is stopped,
    by its pid) and the edges' ports."""
    processes: dict[str, subprocess.Popen[str]] = {}
    try:
        processes["ingest"] = start_hubs(("ingest", redis, free_port(), env), config=config)[0]
        ports = [free_port(), free_port()]
        edges = start_hubs(*[("edge", redis, port, env) for port in ports], config=config)
        processes.update(zip(("edge1", "edge2"), edges, strict=True))
        yield processes, ports
    finally:
        for process in reversed(processes.values()):
            stop(process)


def upstreams(ports: list[int]) -> dict[str, str]:
    """The shipped nginx.conf's two edges: these ports on loopback."""
    return {"edge1:8000": f"127.0.0.1:{ports[0]}", "edge2:8000": f"127.0.0.1:{ports[1]}"}


@contextlib.contextmanager
def played_venue(tmp: Path, config: Path = SAMPLE, seed: int = 30) -> Iterator[Venue]:
    """Redis, ingest, two edges and nginx for ``config``'s tournament, after its whole session
    played by the simulated consoles (``seed``: the bots' choices)."""
    env = hub_env(tmp)
    with RedisServer(tmp / "redis") as redis, ingest_and_edges(redis.url, env, config) as hubs:
        processes, ports = hubs
        played = subprocess.run(
            [sys.executable, "-m", "hub", "console", "simulate", "--config", str(config),
             "--redis", redis.url, "--pace", "0", "--seed", str(seed), "--no-outbox"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert played.returncode == 0, played.stderr[-2000:]
        with Nginx(tmp / "nginx", upstreams(ports)) as lb:
            yield Venue(redis.url, env, lb, ports, processes)


@pytest.fixture(scope="module")
def venue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venue]:
    """The sample's venue, its session played."""
    with played_venue(tmp_path_factory.mktemp("played")) as played:
        yield played


def in_thread(coro: Any) -> Any:
    """Run ``coro`` on a loop of its own thread (Playwright's sync API holds this one's)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def role_topics(role: str) -> list[str]:
    space = topic_space(load_config(SAMPLE))
    return [t.name for t in space if space.check(role, t.name) is None]


def chunks(topics: list[str]) -> list[list[str]]:
    return [topics[i : i + MAX_TOPICS] for i in range(0, len(topics), MAX_TOPICS)]


async def subscribe_all(url: str, topics: list[str], hold: float) -> dict[str, Any]:
    """One connection subscribing ``topics`` in one message: the frames of each topic until
    every topic has its snapshot, then ``hold`` seconds more; how it ended."""
    frames: dict[str, int] = {}
    snapshots: set[str] = set()
    # no pings of its own (the edge pings, and it answers): 60 desks parsing their snapshots
    # in one loop on a loaded machine timed their own pings out and closed themselves
    connect = websockets.connect(
        url, max_size=None, compression=None, open_timeout=30, ping_interval=None
    )
    async with connect as ws:
        hello = json.loads(await asyncio.wait_for(ws.recv(), 30))
        assert hello["type"] == "hello", hello
        await ws.send(json.dumps({"op": "subscribe", "topics": topics}))

        def note(message: dict[str, Any]) -> None:
            assert message.get("type") != "error", message
            topic = message.get("topic")
            if topic is not None:
                frames[topic] = frames.get(topic, 0) + 1
                if message["type"] == "snapshot":
                    snapshots.add(topic)

        try:
            end = time.monotonic() + 30  # every snapshot by then
            while len(snapshots) < len(topics):
                left = max(0.01, end - time.monotonic())
                note(json.loads(await asyncio.wait_for(ws.recv(), left)))
            end = time.monotonic() + hold  # and nothing closes it meanwhile
            while (left := end - time.monotonic()) > 0:
                try:
                    note(json.loads(await asyncio.wait_for(ws.recv(), left)))
                except TimeoutError:
                    break
        except websockets.ConnectionClosed as exc:  # by the edge (its code), or else how
            how = exc.rcvd.code if exc.rcvd else f"sent {exc.sent.code}" if exc.sent else "lost"
            return {"closed": how, "snapshots": snapshots}
        open_after = ws.state is websockets.protocol.State.OPEN
    return {"closed": None, "open": open_after, "snapshots": snapshots, "frames": frames}


@pytest.mark.parametrize("role", ["public", "commentator", "operator"])
def test_every_topic_of_a_role_through_an_edge(venue: Venue, role: str) -> None:
    """Each topic its one snapshot (at most ``1 + CATCH_UP_DELTAS`` frames), and the connection
    open afterwards (it was closed 4008 within 0.07 s)."""
    token = TOKENS[role]
    topics = role_topics(role)
    assert len(topics) > 90  # 101-109 topics, in two connections (64 at most each)

    async def run() -> list[dict[str, Any]]:
        url = f"ws://127.0.0.1:{venue.edges[0]}/ws" + (f"?token={token}" if token else "")
        return list(await asyncio.gather(*(subscribe_all(url, c, 1.0) for c in chunks(topics))))

    results = in_thread(run())
    for part, result in zip(chunks(topics), results, strict=True):
        assert result["closed"] is None, result
        assert result["open"]
        assert result["snapshots"] == set(part)
        assert max(result["frames"].values()) <= 1 + CATCH_UP_DELTAS


DESK_TABLES = """() => [...document.querySelectorAll('[data-testid="com-table"]')]
  .filter((t) => t.querySelector('[data-testid="com-seat"]')
    && t.textContent.trim() !== '').map((t) => t.dataset.table)"""


@pytest.mark.browser
def test_the_desk_loads_through_nginx_after_the_session(browser: Browser, venue: Venue) -> None:
    """The commentator desk through the shipped nginx shows every table, on one socket (it
    used to reconnect in a loop and show "waiting for data")."""
    errors: list[str] = []
    page = new_page(browser, 1920, 1080, errors)
    sockets: list[Any] = []
    page.on("websocket", lambda ws: sockets.append(ws))
    try:
        page.goto(f"{venue.lb.url}/overlays/commentator.html?token={COMMENTATOR}")
        tables = [str(t) for t in load_config(SAMPLE).tables]
        try:
            page.wait_for_function(
                f"() => ({DESK_TABLES})().length === {len(tables)}", timeout=30000
            )
        finally:
            print(f"desk: {len(sockets)} socket(s); {page.inner_text('body')[:300]!r}")
        assert sorted(page.evaluate(DESK_TABLES)) == sorted(tables)
        expect(page.get_by_text("waiting for data")).to_have_count(0)
        page.wait_for_timeout(3000)  # nothing closes it after it loaded
        assert len(sockets) == 1
        assert not sockets[0].is_closed()
    finally:
        page.context.close()
    assert errors == []


def desk_topics() -> list[str]:
    """What a desk holds for the sample's six tables (30 topics), and the comparisons it may
    follow up to a connection's 64 (a session played at ``--pace 0`` leaves ~5 deltas per
    topic behind the edge's stored snapshot, a paced one ~100: 64 topics overflowed then)."""
    config = load_config(SAMPLE)
    topics = ["standings", "projection", "onair", "ticker", "clock", "suggestions"]
    topics += [f"table:{t}" for t in config.tables] + [f"seat:{s}" for s in range(1, 7)]
    topics += [f"deal:{d}" for d in range(1, config.deals + 1)]
    topics += [t for t in role_topics("commentator") if t.startswith("compare:")]
    assert set(topics) <= set(role_topics("commentator"))
    return topics[:MAX_TOPICS]


async def desks(url: str, count: int, topics: list[str]) -> list[dict[str, Any]]:
    gate = asyncio.Semaphore(64)  # handshakes at once (the reconnect of many desks)

    async def one() -> dict[str, Any]:
        async with gate:
            for _attempt in range(100):
                try:
                    return await subscribe_all(url, topics, 0.5)
                except (OSError, websockets.InvalidStatus, websockets.InvalidHandshake):
                    await asyncio.sleep(0.2)  # the edge is still starting
            raise AssertionError("no edge answered")

    return list(await asyncio.gather(*(one() for _ in range(count))))


def test_desks_reconnecting_after_an_edge_restart_all_load(venue: Venue) -> None:
    """One edge stops: 60 desks reconnect at once through nginx, to the edge that holds the
    session's history, and each gets every snapshot, none closed; then the other edge is
    back (bench/desk_storm.py: 500)."""
    stop(venue.processes["edge2"])
    try:
        topics = desk_topics()
        url = f"{venue.lb.ws_url}?token={COMMENTATOR}"
        results = in_thread(desks(url, 60, topics))
    finally:
        venue.processes["edge2"] = start_hub("edge", venue.redis, venue.edges[1], venue.env)
    closed = [r["closed"] for r in results if r["closed"] is not None]
    assert closed == []
    assert all(r["snapshots"] == set(topics) for r in results)
