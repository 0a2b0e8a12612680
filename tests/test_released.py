"""The ``released`` family (issue #34.6; ``hub.engine.families.released``): the small public
topic the results site follows instead of the standings. On random sessions, followed as a
client does (snapshot, then the deltas through JSON), it never names a deal the engine has
not released (the embargo), names every one it has, says ``complete`` only once every deal
is, and its version moves at every release; a release's delta is a few operations, whatever
the tournament's size; the engine's snapshot keeps the version; the hub lists the family.
(Its mover equals its builder after every event: tests/test_projections.py, ``MOVED``.)"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.domain.config import parse_config
from hub.engine.core import Engine
from hub.engine.families import FAMILIES, topic_list
from hub.engine.release import SHOWN
from hub.engine.simulate import simulate_session
from hub.serve.feed import Frame
from hub.wire.patch import apply_patch, clone
from hub.wire.topics import LIVE, PROGRAM, PUBLIC
from tests.factories import config_data, make_config, make_decks

CONFIG = make_config(seats=3, deals=4)
DECKS = make_decks(CONFIG)
KEY = (PUBLIC, "released")


def released_now(engine: Engine) -> list[int]:
    return [d for d in range(1, CONFIG.deals + 1) if engine.release.deal_released(d)]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from([0.0, 3.0]))
def test_the_public_topic_names_exactly_the_released_deals(seed: int, delay: float) -> None:
    engine = Engine(CONFIG, DECKS, release_delay=delay)
    engine.start_feed()
    first = engine.projecting.materialize(KEY)
    assert first is not None and first["released"] == [] and first["complete"] is False
    held = clone(first)
    versions = [first["version"]]
    releases = 0
    now = 0.0
    for event in simulate_session(CONFIG, DECKS, random.Random(seed)):
        now += 1.0
        assert engine.submit(event, now).ok
        engine.tick(now)
        for change in engine.projecting.flush():
            if change.key != KEY:
                continue
            assert change.patch is not None  # (made above: moved from then on)
            patch = json.loads(json.dumps(change.patch))  # as on the wire
            # a delta names no deal but a released one (the embargo, in the delta itself)
            for op in patch:
                if op["path"].startswith("/released"):
                    assert op["value"] in released_now(engine), (op, released_now(engine))
            held = apply_patch(held, patch)
        now_released = released_now(engine)
        assert held["released"] == now_released
        assert held["complete"] is (len(now_released) == CONFIG.deals)
        assert held == engine.payload(KEY) == engine.payload((LIVE, "released"))
        if len(now_released) > releases:  # a release moved the version
            assert held["version"] > versions[-1]
            releases = len(now_released)
        assert held["version"] >= versions[-1]
        versions.append(held["version"])
    engine.tick(float("inf"))
    for change in engine.projecting.flush():
        if change.key == KEY:
            held = apply_patch(held, json.loads(json.dumps(change.patch)))
    assert held["released"] == list(range(1, CONFIG.deals + 1)) and held["complete"] is True
    assert held["version"] >= CONFIG.deals  # (one per release at least)


def test_a_release_is_a_small_delta_at_sixty_tables() -> None:
    """60 tables in groups of 6 (the site bench's tournament): the public standings' delta at
    a release is tens of kilobytes; the ``released`` topic's a few operations, under 200 bytes
    as the feed encodes it."""
    config = make_config(seats=6, deals=2, groups=10)
    assert len(config.tables) == 60
    decks = make_decks(config)
    engine = Engine(config, decks, release_delay=0)
    engine.start_feed()
    assert engine.projecting.materialize(KEY) is not None
    assert engine.projecting.materialize((PUBLIC, "standings")) is not None
    sizes: dict[str, list[int]] = {"released": [], "standings": []}
    for event in simulate_session(config, decks, random.Random(5), mean_gap=1.0):
        at = float(event["ts"])
        assert engine.submit(event, at).ok
        engine.tick(at)
        for change in engine.projecting.flush():
            if change.key[0] == PUBLIC and change.key[1] in sizes and change.patch:
                frame = Frame.delta(change.key[1], 2, change.patch)
                sizes[change.key[1]].append(len(frame.outs["json"].payload))
    assert len(sizes["released"]) >= config.deals
    assert max(sizes["released"]) < 200, sizes["released"]
    assert min(sizes["standings"]) > 10_000, sizes["standings"]


def test_the_snapshot_keeps_the_version() -> None:
    engine = Engine(CONFIG, DECKS, release_delay=0)
    events = list(simulate_session(CONFIG, DECKS, random.Random(2)))
    assert all(engine.submit(e, float(e["ts"])).ok for e in events)
    engine.tick(float(events[-1]["ts"]))
    version = engine.release.version
    assert version >= CONFIG.deals
    data = engine.snapshot()
    assert data["public_version"] == version
    again = Engine(CONFIG, DECKS, release_delay=0)
    again.restore_snapshot(data)
    assert again.payload(KEY) == engine.payload(KEY)
    older = {k: v for k, v in data.items() if k != "public_version"}  # (written before it)
    old = Engine(CONFIG, DECKS, release_delay=0)
    old.restore_snapshot(older)
    assert old.release.version == 0
    assert old.payload(KEY) == {**engine.payload(KEY), "version": 0}  # type: ignore[dict-item]


def test_every_event_that_moves_what_the_public_sees_is_declared() -> None:
    family = FAMILIES["released"]
    assert family.events == SHOWN
    assert family.program == PUBLIC and PROGRAM in family.audiences
    assert not family.embargo and not family.lazy
    listed = {f["name"]: f for f in topic_list()}
    assert listed["released"]["route"] == "/api/released"


def test_the_program_feed_shows_the_programmes_releases() -> None:
    """On the program feed the topic is the delayed engine's public one: a deal released now
    is in it once the programme's delay has passed, not before."""
    data = config_data(seats=3, deals=2)
    data["broadcast"] = {"delay": 100}
    config = parse_config(data, "<test>")
    decks = make_decks(config)
    engine = Engine(config, decks, release_delay=0)
    engine.start_feed()
    program = (PROGRAM, "released")
    now = 0.0
    for event in simulate_session(config, decks, random.Random(3)):
        now = float(event["ts"])
        assert engine.submit(event, now).ok
        engine.tick(now)
    public, shown = engine.payload(KEY), engine.payload(program)
    assert public is not None and public["released"] == [1, 2]
    assert shown is None or shown["released"] != [1, 2]
    engine.tick(now + 101)
    shown = engine.payload(program)
    assert shown is not None and shown["released"] == [1, 2] and shown["complete"] is True


@pytest.mark.parametrize("subscribed", [False, True])
def test_a_flush_hands_the_released_topic_out_after_what_it_tells_of(subscribed: bool) -> None:
    """An edge applies a flush's frames in order: the ``released`` frame that has the site's
    pages read again comes after the public standings' and deals' frames of the same flush,
    whether it is a delta or, first touched, the whole topic (the standings already made)."""
    engine = Engine(CONFIG, DECKS, release_delay=0)
    engine.start_feed()
    assert engine.projecting.materialize((PUBLIC, "standings")) is not None
    if subscribed:
        assert engine.projecting.materialize(KEY) is not None
    told = 0
    for event in simulate_session(CONFIG, DECKS, random.Random(4)):
        assert engine.submit(event, float(event["ts"])).ok
        engine.tick(float(event["ts"]))
        keys = [c.key for c in engine.projecting.flush()]
        if KEY not in keys:
            continue
        told += 1
        public = [k for k in keys if k[0] == PUBLIC and k[1].split(":")[0] in ("standings", "deal")]
        assert all(keys.index(k) < keys.index(KEY) for k in public), keys
    assert told >= CONFIG.deals
