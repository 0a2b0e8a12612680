"""Topics made on demand, on real processes (issues #31, #34).

The live travellers (``compare:{d}:{s}``), the live deal statistics and the suggestions are
made by the writer only when someone asks for one (``Family.lazy``): an action moves six
travellers, and commentators follow one seat's. So an edge that never saw such a topic asks
the writer for it before it answers a subscriber (never the empty snapshot at seq 0), and a
writer that restarts makes again those its predecessor had made, so that the edges' copies
move on (they stayed frozen: the edge held the old writer's copy, and no event makes one).

On a private redis-server: an ingest and an edge; a desk (a commentator's websocket on the
edge) subscribes to such topics while ``duplicast console simulate --pace`` plays; the ingest
is SIGKILLed and started again; play goes on. Every frame the desk gets is checked (no blank
snapshot, no gap, no seq going back), its topics move after the restart, and at the end it
holds what the ingest itself answers over REST. Loopback only, bounded, processes stopped by
pid.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis_server import RedisServer

from hub.wire.signing import session_proof
from tests.test_failover import (
    COMMENTATOR,
    Process,
    Watcher,
    event_config,
    process_env,
    ready,
    serve,
)

pytestmark = [pytest.mark.redis, pytest.mark.asyncio, pytest.mark.timeout(240)]

DEALS = range(1, 13)  # the sample's
SEAT = 2
TOPICS = [
    "suggestions",
    *(f"compare:{d}:{SEAT}" for d in DEALS),
    *(f"dealstats:{d}" for d in DEALS),
]


def rest_path(topic: str) -> str:
    family, *args = topic.split(":")
    if family == "compare":
        return f"/api/compare/{args[0]}/{args[1]}"
    if family == "dealstats":
        return f"/api/dealstats/{args[0]}"
    return "/api/suggestions"


async def writer_states(address: str) -> dict[str, Any]:
    """What the writer itself answers for each topic (REST on the ingest: made from its
    engine now)."""
    headers = {"authorization": f"Bearer {session_proof(COMMENTATOR)}"}
    out: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=5.0) as http:
        for topic in TOPICS:
            answer = await http.get(rest_path(topic), headers=headers)
            assert answer.status_code == 200, (topic, answer.status_code, answer.text[:200])
            out[topic] = answer.json()["data"]
    return out


async def test_a_desk_on_an_edge_follows_topics_made_on_demand_across_an_ingest_restart(
    tmp_path: Path,
) -> None:
    config = event_config(tmp_path)
    env = process_env()
    redis = RedisServer(tmp_path / "redis", extra=("--appendfsync", "always"))
    redis.start()
    procs: list[Process] = []
    desk: Watcher | None = None
    simulate: Process | None = None

    def start(role: str, name: str) -> str:
        proc, address = serve(role, config, redis.url, tmp_path / f"{name}.log", env)
        procs.append(proc)
        return address

    try:
        ingest = start("ingest", "ingest")
        await ready(ingest)
        edge = start("edge", "edge")
        await ready(edge)
        play = ["--seed", "7", "--pace", "0.1", "--no-outbox"]
        simulate = Process(
            ["console", "simulate", "--config", str(config), "--redis", redis.url, *play],
            tmp_path / "simulate.log",
            env,
        )
        desk = Watcher("desk", [edge], TOPICS)
        desk.start()
        async with asyncio.timeout(30):  # a snapshot of each, asked of the writer by name
            while len(desk.states) < len(TOPICS):
                await asyncio.sleep(0.1)
        await asyncio.sleep(3.0)  # play moves them
        procs[0].kill()  # SIGKILL: no clean stop, no snapshots saved
        before = dict(desk.seqs)
        ingest = start("ingest", "ingest-again")
        await ready(ingest, timeout=60)
        await asyncio.sleep(4.0)  # play after the restart
        moved = [t for t in TOPICS if desk.seqs[t] > before[t]]
        simulate.stop()
        simulate = None
        print(f"desk: {desk.frames} frames, {len(moved)} of {len(TOPICS)} topics moved after")
        assert "suggestions" in moved and any(t.startswith("compare:") for t in moved), moved
        assert desk.blanks == [], desk.blanks[:5]
        assert desk.regressions == [], desk.regressions[:5]
        assert desk.gaps == [], desk.gaps[:5]
        async with asyncio.timeout(30):  # the desk ends where the writer stands
            while True:
                truth = await writer_states(ingest)
                if all(desk.states[t] == truth[t] for t in TOPICS):
                    break
                await asyncio.sleep(0.5)
        assert desk.blanks == [] and desk.regressions == [] and desk.gaps == []
    finally:
        if simulate is not None:
            simulate.kill()
        if desk is not None:
            await desk.stop()
        for proc in procs:
            proc.stop()
        redis.stop()
