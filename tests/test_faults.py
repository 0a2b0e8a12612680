"""Faults on real processes: the hub killed with SIGKILL mid-session, Redis restarted.

A `duplicast serve` process runs on a private redis-server (AOF, fsync always, as in
production) while consoles in this test replay the sample session through their outboxes. The
hub is killed without warning part-way, a new one is started (it waits for the dead one's lease
to expire, then rebuilds from the journal), and later Redis itself is restarted. When every event
is acknowledged: the journal holds each (console, seq) exactly once, and both the journal and the
new hub's public standings equal an offline replay of the session. Everything runs on loopback,
bounded in time; every process started here is stopped by its pid.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis_server import RedisServer, free_port

from hub.bus.redis import RedisBus
from hub.client.logreplay import replay_log
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.wire import codec
from tests.hubharness import SESSION, offline, session_events

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "ifp6.toml"


class Hub:
    """One `duplicast serve --role all` process."""

    def __init__(self, redis_url: str, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log.open("ab")
        command = [sys.executable, "-m", "hub", "serve", "--config", str(SAMPLE)]
        command += ["--redis", redis_url, "--role", "all", "--host", "127.0.0.1"]
        command += ["--port", str(self.port)]
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, env=dict(os.environ)
        )

    async def ready(self, timeout: float = 30.0) -> None:
        async with httpx.AsyncClient(base_url=self.url, timeout=1.0) as http:
            async with asyncio.timeout(timeout):
                while True:
                    assert self.process.poll() is None, "the hub exited"
                    try:
                        if (await http.get("/readyz")).status_code == 200:
                            return
                    except httpx.TransportError:
                        pass
                    await asyncio.sleep(0.1)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        self.log.close()


async def journal_length(bus: RedisBus, stream: str) -> int:
    return len(await bus.read(stream, "0-0", 100_000))


async def test_hub_sigkill_and_redis_restart_lose_nothing_and_double_nothing(
    tmp_path: Path,
) -> None:
    config = load_config(SAMPLE)
    decks = load_decks(config, SAMPLE.parent, dict(os.environ))
    events = session_events(config.id, SESSION)
    journal = f"dup:{config.id}:journal"
    redis = RedisServer(tmp_path / "redis", extra=("--appendfsync", "always"))
    redis.start()
    hubs: list[Hub] = []
    bus = RedisBus(redis.url)
    try:
        await bus.connect()
        hubs.append(Hub(redis.url, tmp_path / "hub1.log"))
        await hubs[-1].ready()
        # Each console at most 100 events/s (6 consoles: the session takes >= 3.6 s): pipelined,
        # a hub that acks sooner under load journaled the whole session before this test's
        # journal poll saw a third of it, and nothing was killed mid-session (CI, stop 40).
        consoles = asyncio.create_task(
            replay_log(bus, config.id, events, pace=0.01, on_reject=lambda _: None, timeout=0.5)
        )
        async with asyncio.timeout(60):  # a third of the session in, kill the hub
            while await journal_length(bus, journal) < len(events) // 3:
                await asyncio.sleep(0.05)
        hubs[-1].kill()
        killed_at = await journal_length(bus, journal)
        hubs.append(Hub(redis.url, tmp_path / "hub2.log"))
        await hubs[-1].ready()  # after the dead hub's lease ran out
        async with asyncio.timeout(60):  # two thirds in, restart Redis under everyone
            while await journal_length(bus, journal) < 2 * len(events) // 3:
                await asyncio.sleep(0.05)
        redis.restart()
        report = await asyncio.wait_for(consoles, 120)
        assert report.accepted == len(events) and report.rejected == 0
        assert killed_at < len(events)
        entries = await bus.read(journal, "0-0", 100_000)
        records = [codec.unpack(data) for _, data in entries]
        twice = [k for k, n in Counter((r["console"], r["seq"]) for r in records).items() if n > 1]
        assert twice == [] and len(records) == len(events)
        expected = offline(config, decks, events).standings_json()
        replayed = [{k: v for k, v in r.items() if k not in ("kind", "at")} for r in records]
        rebuilt = offline(config, decks, replayed).standings_json()
        assert rebuilt == expected
        async with httpx.AsyncClient(base_url=hubs[-1].url, timeout=5.0) as http:
            async with asyncio.timeout(30):
                while True:
                    body: Any = (await http.get("/api/standings")).json()
                    if body["data"]["like_for_like"] == expected["like_for_like"]:
                        break
                    await asyncio.sleep(0.2)
    finally:
        for hub in hubs:
            hub.kill()
        await bus.close()
        redis.stop()
