"""The tournament director's rulings in the engine (issue #22.2): the operator's `confirm` names
its official (`by`, required) and may give a reason, journaled like a void's; a ruling without
`by` changes nothing; the corrections log says who, what and why for every correction, the
consoles' too."""

from __future__ import annotations

import copy
from typing import Any

from hub.engine.core import Engine
from tests.test_corrections import Console, engine_with, operator, rebuilt_from_journal


def disputed(engine: Engine) -> Console:
    """Table 1's deal 1 disputed: seat 2 declared, the cards say seat 3."""
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.passive_to("showdown")
    c.ok("win", seats=[2])
    assert status(engine) == "disputed"
    return c


def status(engine: Engine, table: int = 1) -> str:
    hand = engine.state.hand(table, 1)
    assert hand is not None
    return str(hand.status)


def everything(engine: Engine) -> dict[Any, Any]:
    """Every topic's payload, but when the desk was last read (``ops``' ``at``)."""
    out = {key: copy.deepcopy(engine.payload(key)) for key in engine.topic_keys()}
    for key, payload in out.items():
        if key[1] == "ops" and payload is not None:
            payload.pop("at")
    return out


def test_an_operator_confirm_without_by_changes_nothing() -> None:
    engine = engine_with()
    disputed(engine)
    before = everything(engine)
    for fields in ({}, {"by": ""}, {"by": None}, {"reason": "the cards speak"}):
        out = operator(engine, "confirm", deal=1, **fields)
        assert not out.ok and out.code == "bad_request", out.ack
        assert "'by'" in str(out.message)
        assert out.record is None  # nothing journaled
    assert everything(engine) == before
    assert status(engine) == "disputed"
    # the refusals used up no operator seq: the next ruling is the operator's first event
    out = operator(engine, "confirm", deal=1, by="TD Ana")
    assert out.ok and out.record["seq"] == 1


def test_an_operator_confirm_is_journaled_with_its_official_and_reason() -> None:
    engine = engine_with()
    disputed(engine)
    out = operator(engine, "confirm", deal=1, seats=[2], by="TD Ana", reason="seat 3 mucked")
    assert out.ok
    record = out.record
    assert (record["console"], record["type"]) == ("operator", "confirm")
    assert (record["by"], record["note"], record["seats"]) == ("TD Ana", "seat 3 mucked", [2])
    entry = engine.payload(("live", "ops"))["corrections"][-1]
    assert entry["type"] == "confirm" and entry["by"] == "TD Ana"
    assert entry["reason"] == "seat 3 mucked"
    # without a reason: the official alone
    c = Console(engine, 2)
    c.ok("start", deal=1)
    c.passive_to("showdown")
    c.ok("win", seats=[2])
    assert operator(engine, "confirm", deal=1, by="TD Bo", table=2).ok
    entry = engine.payload(("live", "ops"))["corrections"][-1]
    assert (entry["table"], entry["by"], entry["reason"]) == (2, "TD Bo", None)
    # the journal gives the same log back
    rebuilt = rebuilt_from_journal(engine)
    assert rebuilt.state.corrections == engine.state.corrections
    assert rebuilt.payload(("live", "standings")) == engine.payload(("live", "standings"))


def test_a_console_confirm_needs_no_official_and_names_its_console() -> None:
    engine = engine_with()
    c = disputed(engine)
    c.ok("confirm", deal=1, note="the floor agreed")
    entry = engine.state.corrections[-1]
    assert entry["type"] == "confirm" and entry["console"] == "table1"
    assert entry["reason"] == "the floor agreed" and "by" not in entry


def test_a_console_confirm_that_names_its_official_logs_it() -> None:
    """Issue #30 item 7: the console page's dispute confirm carries the official (`by`)."""
    engine = engine_with()
    c = disputed(engine)
    c.ok("confirm", deal=1, by="TD Ana Ruiz")
    entry = engine.state.corrections[-1]
    assert (entry["type"], entry["console"], entry["by"]) == ("confirm", "table1", "TD Ana Ruiz")
    assert rebuilt_from_journal(engine).state.corrections == engine.state.corrections


def test_consoles_undo_and_reopen_say_who_and_why() -> None:
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.ok("call", seat=1)
    c.ok("undo", note="wrong seat")
    c.fold_out()
    c.ok("reopen", deal=1)
    log = engine.payload(("live", "ops"))["corrections"]
    assert [(e["type"], e["console"], e.get("reason")) for e in log] == [
        ("undo", "table1", "wrong seat"),
        ("reopen", "table1", None),
    ]


def test_void_and_penalty_without_by_change_nothing() -> None:
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.fold_out()
    before = everything(engine)
    assert operator(engine, "void", deal=1, reason="foreign card").code == "bad_request"
    assert operator(engine, "penalty", seat=2, chips=10, reason="late").code == "bad_request"
    assert operator(engine, "penalty", seat=2, chips=10, reason="late", by="  ").code == (
        "bad_request"
    )
    assert everything(engine) == before
    # a ruling is not the table's console: the desk's console row keeps its own
    assert operator(engine, "void", deal=1, reason="foreign card", by="TD Ana").ok
    row = engine.payload(("live", "ops"))["tables"][0]
    assert (row["console"], row["last_seq"]) == ("table1", c.seq)
