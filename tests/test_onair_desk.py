"""The operator's on-air desk in the engine: slot values checked, Cut, undo of the last take, the
cue list, and a journal replay (or an engine snapshot and the journal after it, or an exported
log through `Engine.control`) that gives every one of them back."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.engine.core import Engine
from hub.engine.cues import CUES_MAX
from hub.engine.onair import TAKES_KEPT
from hub.files.eventlog import log_line
from tests.factories import make_config, make_decks

CONFIG = make_config(seats=3, deals=4)
OPS = ("live", "ops")
ONAIR = ("live", "onair")
LABELLED = {"op": "cue", "action": "add", "slot": "seat", "value": {}, "label": 3}


@pytest.fixture
def engine() -> Engine:
    return Engine(CONFIG, make_decks(CONFIG))


def desk_state(engine: Engine) -> tuple[Any, Any, Any]:
    ops = engine.payload(OPS)
    assert ops is not None
    return copy.deepcopy((engine.payload(ONAIR), ops["cues"], ops["undo_take"]))


def ok(engine: Engine, command: dict[str, Any], now: float = 1.0) -> dict[str, Any]:
    out = engine.control(command, now)
    assert out.ok, out.ack
    assert out.record is not None
    return out.record


def refused(engine: Engine, command: dict[str, Any], code: str, words: str) -> None:
    before = desk_state(engine)
    out = engine.control(command, 2.0)
    assert not out.ok and out.code == code, out.ack
    assert words in str(out.message), out.message
    assert out.record is None
    assert desk_state(engine) == before  # nothing changed


def slot(engine: Engine, name: str) -> dict[str, Any]:
    payload = engine.payload(ONAIR)
    assert payload is not None
    return dict(payload["slots"][name])


# ---------------------------------------------------------------- slot values
@pytest.mark.parametrize(
    ("command", "code", "words"),
    [
        ({"op": "onair", "slot": "main", "value": {}}, "bad_request", "unknown on-air slot"),
        ({"op": "onair", "slot": "compare", "value": {"deal": 9}}, "unknown_deal", "deals 1 to 4"),
        ({"op": "onair", "slot": "compare", "value": {"deal": 0}}, "unknown_deal", "deal 0"),
        ({"op": "onair", "slot": "compare", "value": {"deal": "3"}}, "bad_request", "whole"),
        ({"op": "onair", "slot": "seat", "value": {"seat": 4}}, "unknown_seat", "seats 1 to 3"),
        ({"op": "onair", "slot": "table", "value": {"table": 7}}, "unknown_table", "table 7"),
        (
            {"op": "onair", "slot": "compare", "value": {"tables": [1, 9]}},
            "unknown_table",
            "table 9",
        ),
        ({"op": "onair", "slot": "compare", "value": {"tables": [1, 1]}}, "bad_request", "twice"),
        ({"op": "onair", "slot": "compare", "value": {"mode": "fast"}}, "bad_request", "sync"),
        ({"op": "onair", "slot": "leaderboard", "value": {"group": "Z"}}, "bad_request", "'Z'"),
        ({"op": "onair", "slot": "leaderboard", "value": {"group": {}}}, "bad_request", "group"),
        ({"op": "onair", "slot": "ticker", "value": {"visible": "yes"}}, "bad_request", "true"),
        ({"op": "onair", "slot": "ticker", "value": {"cut": 1}}, "bad_request", "'cut'"),
        ({"op": "undo_take"}, "not_allowed", "nothing to undo"),
        ({"op": "cue", "action": "add", "slot": "seat", "value": {"deal": 5}}, "unknown_deal", ""),
        ({"op": "cue", "action": "add", "slot": "nope", "value": {}}, "bad_request", "slot"),
        (LABELLED, "bad_request", "'label'"),
        ({"op": "cue", "action": "remove", "cue": 1}, "bad_request", "no cue 1"),
        ({"op": "cue", "action": "move", "cue": 1, "to": 0}, "bad_request", "no cue 1"),
        ({"op": "cue", "action": "play"}, "bad_request", "unknown cue action"),
    ],
)
def test_bad_commands_say_why_and_change_nothing(
    engine: Engine, command: dict[str, Any], code: str, words: str
) -> None:
    refused(engine, command, code, words)


def test_a_good_value_still_carries_keys_the_hub_does_not_know(engine: Engine) -> None:
    ok(engine, {"op": "onair", "slot": "compare", "value": {"deal": 4, "tables": [3, 1], "x": 1}})
    want = {"visible": False, "deal": 4, "seat": 1, "tables": [3, 1], "x": 1}
    assert slot(engine, "compare") == want


def test_null_unsets_a_key(engine: Engine) -> None:
    ok(engine, {"op": "onair", "slot": "compare", "value": {"deal": 2, "tables": [1, 3]}})
    ok(engine, {"op": "onair", "slot": "compare", "value": {"tables": None, "mode": None}})
    assert slot(engine, "compare") == {
        "visible": False,
        "deal": 2,
        "seat": 1,
        "tables": None,
        "mode": None,
    }


def test_cut_belongs_to_the_change_that_carries_it(engine: Engine) -> None:
    ok(engine, {"op": "onair", "slot": "seat", "value": {"seat": 2, "visible": True, "cut": True}})
    assert slot(engine, "seat") == {"visible": True, "seat": 2, "cut": True}
    ok(engine, {"op": "onair", "slot": "seat", "value": {"seat": 3}})
    assert slot(engine, "seat") == {"visible": True, "seat": 3}
    ok(engine, {"op": "onair", "slot": "seat", "value": {"seat": 1, "cut": False}})
    assert "cut" not in slot(engine, "seat")


# ---------------------------------------------------------------- undo take
def test_undo_take_restores_each_previous_value_in_turn(engine: Engine) -> None:
    first = slot(engine, "compare")
    ok(engine, {"op": "onair", "slot": "compare", "value": {"deal": 2, "seat": 3, "visible": True}})
    second = slot(engine, "compare")
    ok(engine, {"op": "onair", "slot": "seat", "value": {"seat": 2, "visible": True}}, 5.0)
    ok(engine, {"op": "onair", "slot": "compare", "value": {"deal": 4, "cut": True}}, 7.0)
    ok(engine, {"op": "onair", "slot": "compare", "value": {"deal": 4}}, 8.0)  # the same again
    undo = engine.payload(OPS)["undo_take"]  # type: ignore[index]
    assert undo == {"slot": "compare", "value": second, "at": 7.0, "depth": 3}
    ok(engine, {"op": "undo_take"})
    assert slot(engine, "compare") == second  # the cut is not restored: the undo mixes
    ok(engine, {"op": "undo_take", "cut": True})
    assert slot(engine, "seat") == {"visible": False, "seat": 1, "cut": True}
    ok(engine, {"op": "undo_take"})
    assert slot(engine, "compare") == first
    assert engine.payload(OPS)["undo_take"] is None  # type: ignore[index]
    refused(engine, {"op": "undo_take"}, "not_allowed", "nothing to undo")


def test_takes_kept_are_bounded(engine: Engine) -> None:
    for i in range(TAKES_KEPT + 5):
        ok(engine, {"op": "onair", "slot": "seat", "value": {"seat": 1 + i % 3}})
    assert len(engine.desk.takes) == TAKES_KEPT


# ---------------------------------------------------------------- cue list
def cue_ids(engine: Engine) -> list[int]:
    return [c["id"] for c in engine.payload(OPS)["cues"]]  # type: ignore[index]


def test_cue_list_add_move_remove(engine: Engine) -> None:
    add = {"op": "cue", "action": "add"}
    ok(engine, {**add, "slot": "compare", "value": {"deal": 2, "seat": 1, "tables": [1, 2]}})
    ok(engine, {**add, "slot": "seat", "value": {"seat": 3, "visible": True}, "label": "Seat 3"})
    ok(engine, {**add, "slot": "leaderboard", "value": {"scope": "overall"}})
    cues = engine.payload(OPS)["cues"]  # type: ignore[index]
    assert cues[1] == {"id": 2, "slot": "seat", "value": {"seat": 3}, "label": "Seat 3"}
    assert cues[0]["value"] == {"deal": 2, "seat": 1, "tables": [1, 2]}
    ok(engine, {"op": "cue", "action": "move", "cue": 3, "to": 0})
    assert cue_ids(engine) == [3, 1, 2]
    ok(engine, {"op": "cue", "action": "move", "cue": 3, "to": 2})
    assert cue_ids(engine) == [1, 2, 3]
    refused(engine, {"op": "cue", "action": "move", "cue": 1, "to": 3}, "bad_request", "0 to 2")
    ok(engine, {"op": "cue", "action": "remove", "cue": 2})
    ok(engine, {**add, "slot": "table", "value": {"table": 2}})
    assert cue_ids(engine) == [1, 3, 4]  # ids are never reused
    # Cues are not on-air changes: nothing to take back.
    refused(engine, {"op": "undo_take"}, "not_allowed", "nothing to undo")


def test_the_cue_list_is_bounded(engine: Engine) -> None:
    for _ in range(CUES_MAX):
        ok(engine, {"op": "cue", "action": "add", "slot": "ticker", "value": {}})
    refused(
        engine,
        {"op": "cue", "action": "add", "slot": "ticker", "value": {}},
        "bad_request",
        "full",
    )


# ---------------------------------------------------------------- replay
SLOTS = ("leaderboard", "seat", "table", "compare", "ticker", "nope")
values = st.fixed_dictionaries(
    {},
    optional={
        "visible": st.booleans(),
        "cut": st.booleans(),
        "deal": st.integers(0, 5),
        "seat": st.integers(1, 4),
        "table": st.integers(1, 4),
        "tables": st.lists(st.integers(1, 3), max_size=3, unique=True),
        "mode": st.sampled_from(["live", "sync", "x"]),
    },
)
commands = st.one_of(
    st.builds(lambda s, v: {"op": "onair", "slot": s, "value": v}, st.sampled_from(SLOTS), values),
    st.builds(lambda c: {"op": "undo_take", **({"cut": True} if c else {})}, st.booleans()),
    st.builds(
        lambda s, v, label: (
            {"op": "cue", "action": "add", "slot": s, "value": v}
            | ({"label": label} if label else {})
        ),
        st.sampled_from(SLOTS),
        values,
        st.sampled_from(["", "Deal 2 seat 1"]),
    ),
    st.builds(lambda i: {"op": "cue", "action": "remove", "cue": i}, st.integers(0, 6)),
    st.builds(
        lambda i, to: {"op": "cue", "action": "move", "cue": i, "to": to},
        st.integers(0, 6),
        st.integers(-1, 5),
    ),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(commands, max_size=30), st.data())
def test_the_journal_rebuilds_slots_takes_and_cues(
    script: list[dict[str, Any]], data: st.DataObject
) -> None:
    live = Engine(CONFIG, make_decks(CONFIG))
    records = []
    for i, command in enumerate(script):
        before = desk_state(live)
        out = live.control(command, float(i))
        if out.ok:
            assert out.record is not None
            records.append(out.record)
        else:
            assert desk_state(live) == before and out.record is None
    want = desk_state(live)
    # The journal replayed from the first record.
    replayed = Engine(CONFIG, make_decks(CONFIG))
    for record in records:
        replayed.restore(record)
    assert desk_state(replayed) == want
    # An engine snapshot part-way, then the journal after it.
    cut = data.draw(st.integers(0, len(records)))
    first = Engine(CONFIG, make_decks(CONFIG))
    for record in records[:cut]:
        first.restore(record)
    resumed = Engine(CONFIG, make_decks(CONFIG))
    resumed.restore_snapshot(first.snapshot())
    for record in records[cut:]:
        resumed.restore(record)
    assert desk_state(resumed) == want
    # The exported log (`export --events`) through the operator's checks, as `replay` does.
    offline = Engine(CONFIG, make_decks(CONFIG))
    for record in records:
        line = log_line(record)
        assert offline.control(line, line["ts"]).ok
    assert desk_state(offline) == want
