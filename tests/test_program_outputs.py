"""Program outputs (issue #23 item 2, "per output if wanted"): ``[broadcast.outputs]`` names
more program outputs, each its own delay; ``?feed=program&output=NAME`` reads one. Each output
is a delayed engine of its own, and none shows anything of a deal the real engine has not
released."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import tomllib
from pathlib import Path
from typing import Any

import pytest
import websockets

from hub.bus.memory import MemoryBus
from hub.client.logreplay import replay_log
from hub.domain.config import ConfigError, TournamentConfig, parse_config
from hub.engine.core import Engine
from hub.engine.families import FAMILIES, topic_space
from hub.engine.simulate import simulate_session
from hub.roles.edge import EdgeSource
from hub.serve.auth import Auth
from hub.serve.fanout import Fanout
from hub.serve.feed import IngestFeed
from hub.serve.http import create_app, serve
from hub.serve.origins import OriginPolicy
from hub.serve.service import FeedService
from hub.wire.control_request import ControlRequest
from hub.wire.patch import apply_patch
from hub.wire.topics import LIVE, PROGRAM, TopicSpace, key_for, kind, program_outputs
from tests.factories import config_data, make_decks
from tests.hubharness import OVERLAYS, auth, ingest_hub, session_events, unique_tournament
from tests.test_program import Mirror, run_with_snapshot, shown_deals

ROOT = Path(__file__).resolve().parent.parent
STREAM, VENUE = 30.0, 8.0  # the default output ("program") and the venue's screens
VENUE_AUDIENCE = "program:venue"


def outputs_config(delay: Any = STREAM, **outputs: Any) -> TournamentConfig:
    data = config_data(seats=3, deals=3)
    data["broadcast"] = {"delay": delay, "outputs": outputs or {"venue": VENUE}}
    return parse_config(data, "<test>")


CONFIG = outputs_config()
DECKS = make_decks(CONFIG)
DELAYS = {PROGRAM: STREAM, VENUE_AUDIENCE: VENUE}


def session(seed: int) -> list[dict[str, Any]]:
    return list(simulate_session(CONFIG, DECKS, random.Random(seed), corrections=True))


# ---------------------------------------------------------------------- configuration


def _load(extra: str) -> TournamentConfig:
    text = (ROOT / "samples" / "ifp6.toml").read_text() + "\n" + extra
    return parse_config(tomllib.loads(text), "event.toml", text)


def test_outputs_are_named_with_their_delays() -> None:
    config = _load('[broadcast]\ndelay = "20m"\n[broadcast.outputs]\nvenue = "5m"\npress = 1200\n')
    assert config.program_delay == 1200.0
    assert config.program_outputs == {"venue": 300.0, "press": 1200.0}
    # one audience per delay: the press output shows what the default one shows
    assert program_outputs(config) == {
        "program": ("program", 1200.0),
        "venue": ("program:venue", 300.0),
        "press": ("program", 1200.0),
    }
    space = topic_space(config)
    assert space.output(None) == space.output("program") == "program"
    assert space.output("venue") == "program:venue" and space.output("press") == "program"
    assert space.output("nope") is None
    assert _load('[broadcast]\ndelay = "20m"\n').program_outputs == {}  # as before outputs


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('[broadcast.outputs]\nvenue = "5m"\n',
         "broadcast.outputs: needs [broadcast] delay, the delay of the default output 'program'"),
        ('[broadcast]\ndelay = "20m"\n[broadcast.outputs]\n"big screen" = "5m"\n',
         "broadcast.outputs.big screen: an output's name goes in URLs (output=big screen): 1 to"
         " 32 letters, digits, '-' or '_'"),
        ('[broadcast]\ndelay = "20m"\n[broadcast.outputs]\nprogram = "5m"\n',
         "broadcast.outputs.program: 'program' is the default output: its delay is"
         " [broadcast] delay"),
        ('[broadcast]\ndelay = "20m"\n[broadcast.outputs]\nvenue = "soon"\n',
         "broadcast.outputs.venue: expected seconds or a duration like '20m' or '1h30m' (at most"
         " a day), got 'soon'"),
        ('[broadcast]\ndelay = "20m"\n[broadcast.outputs]\nvenue = -5\n',
         "broadcast.outputs.venue: expected seconds or a duration like '20m' or '1h30m' (at most"
         " a day), got -5"),
        ('[broadcast]\ndelay = "20m"\n[broadcast.outputs]\nvenue = "25h"\n',
         "broadcast.outputs.venue: expected seconds or a duration like '20m' or '1h30m' (at most"
         " a day), got '25h'"),
    ],
)  # fmt: skip
def test_bad_outputs_are_named_at_their_line(extra: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(extra)
    assert str(caught.value).endswith(message), str(caught.value)
    lines = (ROOT / "samples" / "ifp6.toml").read_text().count("\n") + 1
    assert caught.value.line is not None and caught.value.line > lines  # at the key, not the file
    assert str(caught.value).startswith(f"event.toml:{caught.value.line}: broadcast.outputs")


def test_an_output_is_a_program_audience() -> None:
    assert kind(VENUE_AUDIENCE) == PROGRAM and kind("live") == "live"
    assert key_for(VENUE_AUDIENCE, "table:1", FAMILIES) == (VENUE_AUDIENCE, "table:1")
    assert key_for(VENUE_AUDIENCE, "projection", FAMILIES) == (LIVE, "projection")  # refused before


# ---------------------------------------------------------------------- the engine


def program_keys(engine: Engine) -> list[tuple[str, str]]:
    return [k for k in engine.topic_keys() if kind(k[0]) == PROGRAM]


def test_each_output_is_a_delayed_engine_of_its_own() -> None:
    engine = Engine(CONFIG, DECKS)
    assert engine.program is not None
    assert {a: f.delay for a, f in engine.program.feeds.items()} == DELAYS
    keys = program_keys(engine)
    assert {a for a, _ in keys} == set(DELAYS)
    assert len(keys) == 2 * len([k for k in keys if k[0] == PROGRAM])
    one = Engine(outputs_config(press=STREAM, booth=VENUE), DECKS)  # equal delays share one
    assert one.program is not None and set(one.program.feeds) == {PROGRAM, "program:booth"}


def test_two_outputs_show_the_same_moment_at_their_own_delay() -> None:
    """The first start of the session: each output's table shows it (held: the deal is not
    released) no earlier than ``at + delay`` of that output, the venue first."""
    engine = Engine(CONFIG, DECKS)
    engine.start_feed()
    first = session(3)[0]
    assert engine.submit(first, 100.0).ok
    table = f"table:{first['table']}"
    shown: dict[str, float] = {}
    now = 100.0
    while now < 100.0 + STREAM + 1:
        engine.tick(now)
        for change in engine.projecting.flush():
            audience, name = change.key
            payload = change.payload or {}
            moment = name == table and payload.get("deal") == first["deal"]
            if moment and kind(audience) == PROGRAM and audience not in shown:
                shown[audience] = now
        now += 0.25
    assert shown == {VENUE_AUDIENCE: 100.0 + VENUE, PROGRAM: 100.0 + STREAM}
    held = {"held": True, "deal": first["deal"], "reason": "hand in progress"}
    for audience in DELAYS:
        assert engine.payload((audience, table)) == {**held, "table": first["table"]}


@pytest.mark.parametrize("seed", [2, 9])
def test_no_output_shows_a_deal_before_its_release(seed: int) -> None:
    """After every tick, on every output: each topic is its builder's payload (the client that
    applied the patches holds the same), none shows play of a deal not released, and each
    output is, for a released deal, what the live table was its own delay ago."""
    records: list[dict[str, Any]] = []
    engine = Engine(CONFIG, DECKS)
    engine.start_feed()
    mirror = Mirror(engine)
    compared = {a: 0 for a in DELAYS}
    now = 0.0

    def check() -> None:
        mirror.take(engine)
        for key, doc in mirror.docs.items():
            assert doc == engine.payload(key), key
            for deal in shown_deals(key[1], doc):
                assert engine.release.deal_released(deal), (key, deal, now)
        for audience, delay in DELAYS.items():
            reference = Engine(CONFIG, DECKS, program=False)
            for record in records:
                if record["at"] <= now - delay:
                    reference.restore(record)
            for t in CONFIG.tables:
                doc = engine.payload((audience, f"table:{t}"))
                if doc is not None and not doc.get("held"):
                    assert doc == reference.payload((LIVE, f"table:{t}")), (audience, t, now)
                    compared[audience] += 1

    for event in session(seed):
        while now + 5.0 < event["ts"]:
            now += 5.0
            engine.tick(now)
            check()
        now = max(now, event["ts"])
        out = engine.submit(event, now)
        assert out.ok and out.record is not None
        records.append(out.record)
        engine.tick(now)
        check()
    for _ in range(int(STREAM / 5) + 2):
        now += 5.0
        engine.tick(now)
        check()
    assert all(n > 10 for n in compared.values()), compared


def test_snapshots_carry_every_output_and_restore_them() -> None:
    """A snapshot mid-session plus the records after it gives every output the engine that
    ran throughout has; the records awaited are written once; a snapshot written before the
    venue output existed starts it from the real engine's state."""
    events = session(11)
    full = Engine(CONFIG, DECKS)
    half = len(events) // 2
    records, snap = run_with_snapshot(full, events, half)
    now = events[-1]["ts"] + VENUE / 2
    full.tick(now)
    program = snap["program"]
    assert set(program["outputs"]) == {VENUE_AUDIENCE}
    assert (
        program["waiting"]
        == len(program["pending"])
        > program["outputs"][VENUE_AUDIENCE]["waiting"]
    )

    resumed = Engine(CONFIG, DECKS)
    resumed.restore_snapshot(snap)
    for record in records[half + 1 :]:
        resumed.restore(record)
    resumed.tick(now)
    assert resumed.program is not None and full.program is not None
    for audience in DELAYS:
        mine, theirs = resumed.program.feeds[audience], full.program.feeds[audience]
        assert len(mine.pending) == len(theirs.pending) > 0
    for key in program_keys(full):
        assert resumed.payload(key) == full.payload(key), key

    older = Engine(CONFIG, DECKS)  # a snapshot of a hub with the default output only
    older.restore_snapshot(
        {**snap, "program": {k: v for k, v in program.items() if k != "outputs"}}
    )
    for record in records[half + 1 :]:
        older.restore(record)
    older.tick(now + STREAM)
    assert older.program is not None
    assert not older.program.feeds[VENUE_AUDIENCE].pending
    full.tick(now + STREAM)
    for key in program_keys(full):
        assert older.payload(key) == full.payload(key), key


def test_edges_ask_for_snapshots_of_outputs_the_tournament_has() -> None:
    engine = Engine(CONFIG, DECKS)
    asked = ControlRequest(
        {"op": "snapshots", "keys": ["program:venue|table:1", "program:nope|table:1",
                                     "program|table:1", "program:venue|projection"]}
    )  # fmt: skip
    assert engine.topics_named(asked.keys) == [(VENUE_AUDIENCE, "table:1"), (PROGRAM, "table:1")]
    everything = engine.topics_named(ControlRequest({"op": "snapshots"}).keys)
    assert (VENUE_AUDIENCE, "standings") in everything and (PROGRAM, "onair") in everything


# ---------------------------------------------------------------------- through an edge


async def test_an_edge_serves_each_output_from_the_feed_channel() -> None:
    """Ingest and a separate edge on one bus: the venue output's frames travel under their
    own audience (feed channel, snapshot hash) and the edge refuses an output the
    tournament lacks, knowing the outputs from the tournament file as the ingest does."""
    config, decks = unique_tournament("progedge")
    config = dataclasses.replace(config, program_delay=2.0, program_outputs={"venue": 0.3})
    first = session_events(config.id)[0]
    table = f"table:{first['table']}"
    bus = MemoryBus()
    await bus.connect()
    edge = EdgeSource(bus, config.id, topics=topic_space(config))
    async with ingest_hub(bus, config, decks):
        server = await serve(create_app(edge, overlays_dir=OVERLAYS, auth=auth()), "127.0.0.1", 0)
        try:
            url = f"{server.ws_url}?feed=program&output=venue"
            async with websockets.connect(url) as venue:
                assert json.loads(await venue.recv())["type"] == "hello"
                await venue.send(json.dumps({"op": "subscribe", "topics": [table]}))
                snapshot = json.loads(await asyncio.wait_for(venue.recv(), 5))
                assert snapshot["type"] == "snapshot" and snapshot["topic"] == table
                report = await replay_log(bus, config.id, [first], on_reject=print)
                assert report.rejected == 0
                state = snapshot["data"]
                while not state.get("held"):
                    message = json.loads(await asyncio.wait_for(venue.recv(), 5))
                    if message["type"] == "snapshot":
                        state = message["data"]
                    elif message["type"] == "delta":
                        state = apply_patch(state, message["patch"])
                assert state == {
                    "held": True,
                    "deal": first["deal"],
                    "reason": "hand in progress",
                    "table": first["table"],
                }
            async with websockets.connect(f"{server.ws_url}?feed=program&output=nope") as bad:
                assert json.loads(await bad.recv())["code"] == "unknown_output"
        finally:
            await server.stop()


class _Source:
    """What ``FeedService`` reads of a source to place a client: its topics, its fan-out."""

    def __init__(self, topics: TopicSpace | None) -> None:
        self.topics = topics
        self.fanout = Fanout(IngestFeed())


@pytest.mark.parametrize(
    ("config", "query", "code", "audience"),
    [
        (CONFIG, {"feed": "program"}, None, PROGRAM),
        (CONFIG, {"feed": "program", "output": "program"}, None, PROGRAM),
        (CONFIG, {"feed": "program", "output": "venue"}, None, VENUE_AUDIENCE),
        (CONFIG, {"feed": "program", "output": "Venue"}, "unknown_output", None),
        (CONFIG, {"output": "venue"}, "bad_request", None),
        (CONFIG, {}, None, "public"),
        (parse_config(config_data(), "<t>"), {"feed": "program"}, None, PROGRAM),  # as before
        (parse_config(config_data(), "<t>"), {"feed": "program", "output": "venue"},
         "unknown_output", None),
        (None, {"feed": "program", "output": "venue"}, None, VENUE_AUDIENCE),  # no file known
        (None, {"feed": "program", "output": "a b"}, "unknown_output", None),
    ],
)  # fmt: skip
def test_a_connection_reads_the_output_it_names(
    config: TournamentConfig | None, query: dict[str, str], code: str | None, audience: str | None
) -> None:
    topics = None if config is None else topic_space(config)
    service = FeedService(_Source(topics), Auth(), OriginPolicy())
    problem = service.feed_problem(query)
    assert (problem or {}).get("code") == code, problem
    if audience is not None:
        assert service.audience("public", query) == audience
    if code == "unknown_output" and config is not None:
        known = "program, venue" if config.program_outputs else "none, no [broadcast] delay"
        assert problem is not None and problem["message"].endswith(f"(outputs: {known})")
