"""Issue #30 item 7: a penalty can be withdrawn. The withdrawal is an operator command
(``{"op": "withdraw", "penalty": N, "by", "reason"}``) journaled as a control record: the
penalty stays listed, marked withdrawn (who, why, when), the corrections log says so, and every
score moves back exactly as a full recompute without that penalty says, on the live and public
boards, after a journal replay, a snapshot restore and `export --events` + `replay`."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hub.bus.memory import MemoryBus
from hub.cli.replay import replay
from hub.domain.scoring import full_recompute
from hub.engine.core import Engine
from hub.files.eventlog import log_line
from tests.test_archive import faulty_session, load_game, play_live
from tests.test_corrections import JOURNAL, Console, engine_with, operator, rebuilt_from_journal


def played() -> Engine:
    """Deal 1 played at every table (a fold-out each)."""
    engine = engine_with()
    for t in engine.state.config.tables:
        c = Console(engine, t)
        c.ok("start", deal=1)
        c.fold_out()
    engine.tick(float("inf"))  # released: the public board has the deal
    return engine


def standings(engine: Engine, audience: str) -> Any:
    return engine.payload((audience, "standings"))


def oracle(engine: Engine) -> dict[str, Any]:
    """The board from scratch: the counted results and the penalties not withdrawn."""
    kept = [
        (p["table"], p["seat"], p["chips"], p["points"])
        for p in engine.state.penalties
        if "withdrawn" not in p
    ]
    board = full_recompute(engine.state.layout, engine.state.board.results(), kept)
    return board.as_dict()


def test_a_withdrawn_penalty_moves_every_score_back_and_is_journaled() -> None:
    engine = played()
    before = {a: standings(engine, a) for a in ("public", "live")}
    out = operator(engine, "penalty", seat=3, chips=500, reason="slow play", by="TD Ana")
    assert out.ok
    assert operator(engine, "penalty", seat=2, points=1, reason="phone", by="TD Ana").ok
    penalties = engine.payload(("live", "ops"))["penalties"]
    assert [p["id"] for p in penalties] == [1, 2]
    assert standings(engine, "public") != before["public"]
    # refused: no official, no reason, no such penalty; nothing journaled
    for fields, code in (
        ({"penalty": 1, "reason": "wrong seat"}, "bad_request"),
        ({"penalty": 1, "by": "TD Bo"}, "bad_request"),
        ({"penalty": 9, "by": "TD Bo", "reason": "x"}, "unknown_penalty"),
        ({"penalty": True, "by": "TD Bo", "reason": "x"}, "bad_request"),
    ):
        refused = operator(engine, "withdraw", **fields)
        assert not refused.ok and refused.code == code, refused.ack
        assert refused.record is None
    out = operator(engine, "withdraw", penalty=1, by="TD Bo", reason="wrong seat")
    assert out.ok
    assert out.record == {
        "kind": "control",
        "op": "withdraw",
        "penalty": 1,
        "by": "TD Bo",
        "reason": "wrong seat",
        "at": 100.0,
    }
    assert operator(engine, "withdraw", penalty=1, by="TD Bo", reason="x").code == "not_allowed"
    ops = engine.payload(("live", "ops"))
    assert ops["penalties"][0]["withdrawn"] == {"by": "TD Bo", "reason": "wrong seat", "at": 100.0}
    assert "withdrawn" not in ops["penalties"][1]
    assert ops["corrections"][-1] == {
        "table": 1,
        "seat": 3,
        "type": "withdraw",
        "penalty": 1,
        "by": "TD Bo",
        "reason": "wrong seat",
        "at": 100.0,
    }
    assert engine.state.board.as_dict() == oracle(engine)
    # only the points penalty is left: seat 3's row has no penalty any more
    assert operator(engine, "withdraw", penalty=2, by="TD Bo", reason="x").ok
    for audience in ("public", "live"):
        assert standings(engine, audience) == before[audience]
    # journal, snapshot, export --events + replay: the same
    assert standings(rebuilt_from_journal(engine), "public") == standings(engine, "public")
    restored = Engine(engine.state.config, engine.state.decks)
    restored.restore_snapshot(engine.snapshot())
    for audience in ("public", "live"):
        assert standings(restored, audience) == standings(engine, audience)
    assert restored.state.penalties == engine.state.penalties
    lines = [dict(log_line(r)) for r in JOURNAL[id(engine)]]
    assert {"op": "withdraw", "penalty": 1, "by": "TD Bo", "reason": "wrong seat"} | {
        "ts": 100.0
    } in lines
    replayed = Engine(engine.state.config, engine.state.decks)
    assert replay(engine.state.config, [dict(x) for x in lines], replayed, "export") == []
    assert replayed.state.penalties == engine.state.penalties
    assert standings(replayed, "live") == standings(engine, "live")


def test_a_penalty_withdrawn_before_its_session_shows_never_reaches_the_public() -> None:
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.fold_out()  # not released yet: the public board has no session to count a penalty in
    assert operator(engine, "penalty", seat=3, chips=80, reason="late", by="TD").ok
    assert operator(engine, "withdraw", penalty=1, by="TD", reason="not late").ok
    engine.tick(float("inf"))
    rows = [r for b in standings(engine, "public")["like_for_like"]["seats"] for r in b["rows"]]
    assert not any("penalty" in r for r in rows)


# (op, seat, chips, points) for a penalty; ("withdraw", n) for a withdrawal of the n-th
STEP = st.one_of(
    st.tuples(
        st.just("penalty"),
        st.integers(1, 3),
        st.integers(0, 1000),
        st.integers(0, 2),
        st.integers(1, 2),
    ),
    st.tuples(st.just("withdraw"), st.integers(1, 12)),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(STEP, max_size=12))
def test_withdrawals_match_a_full_recompute(steps: list[tuple[Any, ...]]) -> None:
    """Any sequence of penalties and withdrawals (some refused) after a played deal: the live
    board is the full recompute of the penalties left; the public board, the journal's replay
    and the snapshot agree; an engine given only the penalties left shows the same."""
    engine = played()
    for step in steps:
        if step[0] == "penalty":
            _, seat, chips, points, table = step
            operator(engine, "penalty", table=table, seat=seat, chips=chips, points=points)
            operator(
                engine,
                "penalty",
                table=table,
                seat=seat,
                chips=chips,
                points=points,
                by="TD",
                reason="r",
            )
        else:
            operator(engine, "withdraw", penalty=step[1], by="TD", reason="r")
    assert engine.state.board.as_dict() == oracle(engine)
    plain = played()
    for p in engine.state.penalties:
        if "withdrawn" not in p:
            fields = {k: p[k] for k in ("table", "seat", "chips", "points")}
            assert operator(plain, "penalty", **fields, by="TD", reason="r").ok
    for audience in ("public", "live"):
        assert standings(plain, audience) == standings(engine, audience)
    rebuilt = rebuilt_from_journal(engine)
    assert standings(rebuilt, "public") == standings(engine, "public")
    restored = Engine(engine.state.config, engine.state.decks)
    restored.restore_snapshot(engine.snapshot())
    assert standings(restored, "live") == standings(engine, "live")


def test_a_negative_amount_is_refused_naming_the_field_the_page_shows() -> None:
    engine = played()
    for field in ("chips", "points"):
        out = operator(engine, "penalty", seat=3, reason="r", by="TD", **{field: -500})
        assert out.code == "bad_request"
        assert out.message == f"'{field}' must be a whole number, 0 or more"
    out = operator(engine, "penalty", seat=0, chips=5, reason="r", by="TD")
    assert out.message == "'seat' must be a whole number, 1 or more"
    assert engine.state.penalties == []


async def test_an_event_with_stages_restores_its_withdrawals_from_a_snapshot() -> None:
    """The staged sample event played with faults and operator commands (penalties, some
    withdrawn, each in the session its table played): a snapshot restores both audiences'
    standings exactly."""
    config, decks, events = load_game("holdem-stages")
    faults = faulty_session(config, events, random.Random("holdem-stages:1"))
    bus = MemoryBus()
    await bus.connect()
    live = await play_live(bus, config, decks, faults)
    try:
        penalties = live.engine.state.penalties
        assert any("withdrawn" in p for p in penalties) and all("session" in p for p in penalties)
        restored = Engine(config, decks)
        restored.restore_snapshot(live.engine.snapshot())
        assert restored.standings_json() == live.engine.standings_json()
        assert standings(restored, "public") == standings(live.engine, "public")
    finally:
        await live.stop()
        await bus.close()
