"""The piecepack sample through the whole hub on real Redis: consoles, ingest, journal, feed.

The sample session goes through the console protocol to an ingest on Redis; live and public
websocket clients watch. Until every table has played a deal, no public message holds a tile
of it; once the session is over the public sees every deal's tiles, and the standings equal
the offline replay's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from hub.bus.redis import RedisBus
from hub.client.logreplay import replay_log
from hub.domain.games.piecepack.tiles import is_tile
from hub.files.config import load_config
from hub.files.decks import load_decks
from tests.feedclient import FeedClient
from tests.hubharness import COMMENTATOR, ingest_hub, offline, session_events

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "piecepack.toml"
SESSION = ROOT / "samples" / "piecepack-session.jsonl"
TILE_CODE = re.compile(r'"[NA2-5][bw][shdc]"')


def first_release(config: Any, decks: Any, events: list[dict[str, Any]]) -> int:
    """How many events of the session it takes until some deal is complete at every table."""
    engine = offline(config, decks, [])
    for i, event in enumerate(events, 1):
        assert engine.submit(event, 0.0).ok
        if any(engine.release.released("A", d) for d in range(1, config.deals + 1)):
            return i
    raise AssertionError("no deal released")


async def test_piecepack_session_through_redis_releases_tiles_only_when_every_table_played(
    redis_url: str,
) -> None:
    config = dataclasses.replace(load_config(SAMPLE), id=f"pp-{uuid.uuid4().hex[:8]}")
    decks = load_decks(config, SAMPLE.parent, dict(os.environ))
    events = session_events(config.id, SESSION)
    cut = first_release(config, decks, events) - 1  # the last event before a release
    before = offline(config, decks, events[:cut]).standings_json()
    expected = offline(config, decks, events).standings_json()
    deals = [f"deal:{d}" for d in range(1, config.deals + 1)]
    compares = [f"compare:{d}:1" for d in range(1, config.deals + 1)]
    bus = RedisBus(redis_url)
    await bus.connect()
    try:
        async with (
            ingest_hub(bus, config, decks) as (_source, server),
            FeedClient(server.ws_url, COMMENTATOR) as live,
            FeedClient(server.ws_url) as public,
        ):
            await live.subscribe(["standings", *deals])
            await public.subscribe(["standings", "table:1", *deals, *compares])
            report = await replay_log(bus, config.id, events[:cut], on_reject=print)
            assert report.accepted == cut and report.rejected == 0
            await live.wait_for(lambda c: c.states.get("standings") == before, timeout=20)
            # Every table has played some deals, none has been played by all four: the
            # live desk sees tiles, the public nothing of any deal.
            started = [live.states[t] for t in deals if live.states.get(t, {}).get("board")]
            assert started and all(d["game"] == "piecepack-holdem" for d in started)
            assert all(is_tile(t) for d in started for t in d["board"])
            public_text = json.dumps(public.log)
            assert not TILE_CODE.search(public_text), "a tile reached the public early"
            assert public.states["standings"]["deals"]["complete"] == {"A": []}
            assert all(not public.states.get(t) for t in deals + compares)
            report = await replay_log(bus, config.id, events[cut:], on_reject=print)
            assert report.rejected == 0
            await public.wait_for(
                lambda c: (
                    c.states.get("standings", {}).get("like_for_like") == expected["like_for_like"]
                ),
                timeout=20,
            )
            for topic in deals:
                await public.wait_for(lambda c, t=topic: bool(c.states.get(t)), timeout=10)
                deal = public.states[topic]
                assert deal["game"] == "piecepack-holdem"
                assert len(deal["board"]) == 5 and all(map(is_tile, deal["board"]))
            assert public.gaps == [] and public.errors == []
            assert public.states["standings"]["game"] == "piecepack-holdem"
        journal = await bus.read(f"dup:{config.id}:journal", "0-0", 10_000)
        assert len(journal) == len(events)
    finally:
        names = ("journal", "topics", "consoles", "rejected", "ingest", "ingest:token")
        await bus.delete(*[f"dup:{config.id}:{n}" for n in names])
        await bus.close()
