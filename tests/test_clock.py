"""The session clock (issue #12.6): configuration, the operator's commands, journal replay and
snapshots, the clock topic, and enforcing or flagging the end of the session's time."""

from __future__ import annotations

from typing import Any

import pytest

from hub.domain.clock import Clock, ClockSpec, Level
from hub.domain.config import ConfigError, parse_config
from hub.domain.errors import Rejection
from hub.engine.core import Engine
from tests.factories import config_data, make_decks
from tests.test_engine import ev

LEVELS = [{"minutes": 10}, {"minutes": 5, "break": True}, {"minutes": 10, "name": "Final"}]


def clocked(on_time_up: str = "flag") -> Engine:
    data = config_data(seats=3, deals=4)
    data["clock"] = {"levels": LEVELS, "on_time_up": on_time_up}
    config = parse_config(data, "<test>")
    return Engine(config, make_decks(config))


def clock_topic(engine: Engine) -> dict[str, Any]:
    payload = engine.payload(("public", "clock"))
    assert payload is not None
    return payload


# -- the clock itself ---------------------------------------------------------------------------


def test_levels_time_left_pause_adjust_and_over() -> None:
    clock = Clock(ClockSpec((Level(600), Level(300, True), Level(600, name="Final"))))
    assert ClockSpec(clock.spec.levels).names() == ["Level 1", "Break", "Final"]
    assert clock.read(0).status == "not_started"
    clock.apply({"action": "start"}, 100.0)
    r = clock.read(400.0)
    assert (r.status, r.level, r.level_left, r.session_left) == ("running", 0, 300.0, 1200.0)
    clock.apply({"action": "pause"}, 400.0)
    r = clock.read(10_000.0)  # paused: nothing moves
    assert (r.status, r.level, r.level_left) == ("paused", 0, 300.0)
    clock.apply({"action": "start"}, 10_000.0)  # resume
    assert clock.read(10_300.0).level == 1  # into the break
    clock.apply({"action": "adjust", "seconds": 60}, 10_300.0)  # one more minute of level 1
    r = clock.read(10_300.0)
    assert (r.level, r.level_left) == (0, 60.0)
    clock.apply({"action": "level", "level": 3}, 10_300.0)
    r = clock.read(10_450.0)
    assert (r.level, r.level_left, r.session_left) == (2, 450.0, 450.0)
    assert not clock.time_up(10_899.0) and clock.time_up(10_900.0)
    r = clock.read(20_000.0)
    assert (r.status, r.level, r.level_left, r.session_left) == ("over", 2, 0.0, 0.0)
    assert clock.next_change(10_450.0) == 10_900.0


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        ({"action": "explode"}, "must be one of"),
        ({"action": "adjust"}, "needs 'seconds'"),
        ({"action": "adjust", "seconds": True}, "needs 'seconds'"),
        ({"action": "adjust", "seconds": 10**9}, "at most"),
        ({"action": "level", "level": 4}, "from 1 to 3"),
        ({"action": "level", "level": 0}, "from 1 to 3"),
    ],
)
def test_bad_commands_are_refused(command: dict[str, Any], fragment: str) -> None:
    with pytest.raises(Rejection) as refused:
        Clock.check(command, 3)
    assert refused.value.code == "bad_request" and fragment in refused.value.message


@pytest.mark.parametrize(
    ("clock", "key", "fragment"),
    [
        ({"levels": []}, "clock.levels", "no levels"),
        ({"levels": [{"minutes": 0}]}, "clock.levels[0].minutes", "minutes > 0"),
        ({"levels": [{"minutes": 5, "brake": True}]}, "clock.levels[0].brake", "did you mean"),
        ({"levels": [{"minutes": 5}], "on_time_up": "stop"}, "clock.on_time_up", "enforce"),
        ({"levels": [{"minutes": 5, "break": "yes"}]}, "clock.levels[0].break", "true or false"),
    ],
)
def test_configuration_errors_name_the_key(clock: dict[str, Any], key: str, fragment: str) -> None:
    data = config_data()
    data["clock"] = clock
    with pytest.raises(ConfigError) as failed:
        parse_config(data, "<test>")
    assert failed.value.key == key and fragment in str(failed.value)


# -- in the engine ------------------------------------------------------------------------------


def test_operator_commands_are_journaled_and_replay_to_the_same_clock() -> None:
    engine = clocked()
    engine.start_feed()
    assert clock_topic(engine)["status"] == "not_started"
    records = []
    for command, now in [
        ({"op": "clock", "action": "start"}, 1000.0),
        ({"op": "clock", "action": "pause"}, 1300.0),
        ({"op": "clock", "action": "adjust", "seconds": -120}, 1400.0),
        ({"op": "clock", "action": "start"}, 1500.0),
    ]:
        out = engine.control(command, now)
        assert out.ok and out.record is not None and out.record["op"] == "clock"
        records.append(out.record)
    topic = clock_topic(engine)
    assert topic["status"] == "running" and topic["as_of"] == 1500.0
    assert (topic["level"], topic["name"], topic["level_left"]) == (1, "Level 1", 180.0)
    assert (topic["big_blind"], topic["next"]["name"]) == (100, "Break")
    changes = {c.key: c for c in engine.projecting.flush()}
    assert ("public", "clock") in changes and ("live", "clock") in changes
    # a second engine fed the journal, and one restored from a snapshot, read the same
    again = clocked()
    for record in records:
        again.restore(record)
    assert clock_topic(again) == topic
    restored = clocked()
    restored.restore_snapshot(engine.snapshot())
    assert clock_topic(restored) == topic
    refused = engine.control({"op": "clock", "action": "level", "level": 9}, 1600.0)
    assert not refused.ok and refused.code == "bad_request" and refused.record is None


def test_a_level_ending_moves_the_topic_by_the_tick() -> None:
    engine = clocked()
    engine.start_feed()
    engine.control({"op": "clock", "action": "start"}, 0.0)
    engine.projecting.flush()
    engine.tick(599.0)
    assert engine.projecting.flush() == []  # nothing moved by itself yet
    engine.tick(601.0)
    (change,) = [c for c in engine.projecting.flush() if c.key == ("public", "clock")]
    assert change.payload["name"] == "Break" and change.payload["break"] is True
    # read at the moment the break began, whenever the tick came: the same after a restart
    assert (change.payload["as_of"], change.payload["level_left"]) == (600.0, 300.0)


def test_no_clock_configured() -> None:
    data = config_data()
    config = parse_config(data, "<test>")
    engine = Engine(config, make_decks(config))
    assert clock_topic(engine) == {"configured": False}
    out = engine.control({"op": "clock", "action": "start"}, 0.0)
    assert not out.ok and out.code == "not_allowed"


@pytest.mark.parametrize("on_time_up", ["flag", "enforce"])
def test_time_up_is_flagged_or_enforced(on_time_up: str) -> None:
    engine = clocked(on_time_up)
    engine.control({"op": "clock", "action": "start"}, 0.0)
    end = 25 * 60
    first = {t: engine.state.config.deal_orders[t][0] for t in (1, 2)}  # each table's own order
    assert engine.submit(ev(1, 1, "start", deal=first[1]), end - 1).ok
    late = engine.submit(ev(2, 1, "start", deal=first[2]), end + 1)
    assert clock_topic(engine)["status"] in ("running", "over")
    engine.tick(end + 1)
    assert clock_topic(engine)["status"] == "over"
    if on_time_up == "flag":
        assert late.ok
    else:
        assert not late.ok and late.code == "time_up" and "add time" in (late.message or "")
        engine.control({"op": "clock", "action": "adjust", "seconds": 300}, end + 2)
        assert engine.submit(ev(2, 2, "start", deal=first[2]), end + 3).ok
