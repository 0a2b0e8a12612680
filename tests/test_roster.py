"""Live roster corrections (issue #22.5): a misspelled name, a substitute, a team's name or
colour fixed by the operator's `roster` command while the event runs. Every payload that shows
names or colours shows the fix, in every audience, through the projections as through the
builders; bad input changes nothing; the journal and a snapshot give the fix back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.cli.replay import replay
from hub.engine.core import Engine
from hub.files.eventlog import log_line
from tests.test_corrections import JOURNAL, Console, engine_with, journaled, rebuilt_from_journal
from tests.test_td import everything

TEAM = "T00"


def played() -> Engine:
    """Deal 1 played at the three tables (released to the public), deal 2 begun at table 1;
    the feed on, every topic materialised."""
    engine = engine_with()
    engine.start_feed()
    for key in engine.topic_keys():
        engine.projecting.materialize(key)
    consoles = [Console(engine, t) for t in (1, 2, 3)]
    for c in consoles:
        c.ok("start", deal=1)
        c.fold_out()
    consoles[0].ok("start", deal=2)
    engine.tick(1e9)
    engine.projecting.flush()
    return engine


def shown(engine: Engine) -> str:
    """Every payload of every audience as one text (but the corrections log, which tells the
    old name as the fix's "what")."""
    payloads = everything(engine)
    for (_, topic), payload in payloads.items():
        if topic == "ops" and payload is not None:
            payload.pop("corrections")
    return json.dumps({f"{a}/{t}": p for (a, t), p in payloads.items()}, ensure_ascii=False)


def player_at(engine: Engine, table: int, seat: int) -> tuple[str, str]:
    held = engine.state.seat_holder(table, seat, None)
    assert held is not None
    return held[0].id, held[1]


def projected_equals_built(engine: Engine) -> None:
    """The feed's documents (moved by the events) equal the builders' payloads (but when the
    desk was last read: a refused command moves the clock the ``ops`` builder reads)."""
    engine.projecting.flush()
    for key, rec in engine.projecting.projections.docs.items():
        doc, built = dict(rec.doc), engine.payload(key)
        if key[1] == "ops" and built is not None:
            doc.pop("at"), built.pop("at")
        assert doc == built, key


def fix(engine: Engine, **fields: Any) -> Any:
    """The operator's roster command (journaled when accepted), team T00 and TD Ana unless
    told otherwise."""
    command = {"op": "roster", "team": TEAM, "by": "TD Ana", **fields}
    return journaled(engine, engine.control(command, 100.0))


def test_a_misspelled_name_is_fixed_everywhere_in_every_audience() -> None:
    engine = played()
    table = engine.state.config.table_of_player(TEAM, f"{TEAM}-p1")
    seat = engine.state.config.seat_of(table, TEAM)
    old = f"{TEAM}-p1"
    assert old in shown(engine)
    out = fix(engine, seat=seat, name="Ana Núñez", reason="spelling")
    assert out.ok, out.ack
    record = out.record
    assert record["kind"] == "control" and record["op"] == "roster"
    assert (record["player"], record["was"], record["name"]) == (old, old, "Ana Núñez")
    text = shown(engine)
    assert old not in text and "Ana Núñez" in text
    for audience in ("public", "live"):
        seats = engine.payload((audience, f"seat:{seat}"))["like_for_like"]["rows"]
        assert "Ana Núñez" in {r["player"] for r in seats}
        table_seats = engine.payload((audience, f"table:{table}"))["seats"]
        assert table_seats[seat - 1]["player"] == "Ana Núñez"
        rows = engine.payload((audience, f"compare:1:{seat}"))["rows"]
        assert "Ana Núñez" in {r["player"] for r in rows}
    assert engine.state.corrections[-1] == {
        "type": "roster",
        "team": TEAM,
        "what": f"{TEAM}: {old} → Ana Núñez",
        "by": "TD Ana",
        "reason": "spelling",
        "at": 100.0,
    }
    projected_equals_built(engine)
    # named by the name shown now: a second fix (a substitute takes the seat)
    assert fix(engine, player="Ana Núñez", name="Bo Sub").ok
    assert player_at(engine, table, seat) == (TEAM, "Bo Sub")
    assert engine.state.corrections[-1]["what"] == f"{TEAM}: Ana Núñez → Bo Sub"
    projected_equals_built(engine)


def test_a_team_colour_and_name_are_fixed_everywhere() -> None:
    engine = played()
    colour = engine.state.config.teams[TEAM].colour
    assert fix(engine, colour="#aabbcc", team_name="Team Fixed").ok
    text = shown(engine)
    assert colour not in text and "#AABBCC" in text and "Team Fixed" in text
    for audience in ("public", "live"):
        teams = engine.payload((audience, "standings"))["like_for_like"]["teams"]
        row = next(t for t in teams if t["team"] == TEAM)
        assert (row["colour"], row["name"]) == ("#AABBCC", "Team Fixed")
    projected_equals_built(engine)


@pytest.mark.parametrize(
    "fields",
    [
        {"by": None, "seat": 1, "name": "X"},
        {"by": " ", "colour": "#aabbcc"},
        {"team": "NOPE", "colour": "#aabbcc"},
        {"team": None, "colour": "#aabbcc"},
        {"colour": "red"},
        {"colour": "#aabbc"},
        {},
        {"seat": 9, "name": "X"},
        {"seat": "1", "name": "X"},
        {"player": "nobody", "name": "X"},
        {"seat": 1},
        {"seat": 1, "name": ""},
        {"seat": 1, "name": "x" * 65},
        {"name": "X"},
        {"seat": 1, "name": "X", "reason": "r" * 501},
        {"team_name": 5},
    ],
)
def test_bad_roster_commands_change_nothing(fields: dict[str, Any]) -> None:
    engine = played()
    before = everything(engine)
    out = fix(engine, **fields)
    assert not out.ok and out.code == "bad_request", out.ack
    assert out.record is None
    assert everything(engine) == before
    assert engine.projecting.flush() == [] or all(c.patch == [] for c in engine.projecting.flush())


def test_the_journal_and_a_snapshot_give_the_fixes_back() -> None:
    engine = played()
    table, seat = 2, 1
    team, old = player_at(engine, table, seat)
    out = fix(engine, team=team, table=table, name="New Name")
    assert out.ok, out.ack
    assert fix(engine, team=team, colour="#010203").ok
    Console(engine, 1).send("fold", seat=1)  # play goes on (whatever its answer)
    rebuilt = rebuilt_from_journal(engine)
    assert everything(rebuilt) == everything(engine)
    assert player_at(rebuilt, table, seat) == (team, "New Name")
    restored = Engine(engine.state.config, engine.state.decks)
    restored.restore_snapshot(engine.snapshot())
    assert everything(restored) == everything(engine)
    assert restored.state.roster.info(restored.state.config)[team]["colour"] == "#010203"
    assert old not in shown(restored)


def test_an_exported_journal_replays_the_fixes() -> None:
    """`export --events` writes a roster record as an operator command line; `replay` applies
    it through the same checks, a second fix of one player included."""
    engine = played()
    table = engine.state.config.table_of_player(TEAM, f"{TEAM}-p2")
    assert fix(engine, table=table, name="First Fix").ok
    assert fix(engine, player="First Fix", name="Second Fix", colour="#123456").ok
    lines = [{**log_line(r), "_line": i} for i, r in enumerate(JOURNAL[id(engine)], 1)]
    assert [ln["op"] for ln in lines if "op" in ln] == ["roster", "roster"]
    fresh = Engine(engine.state.config, engine.state.decks)
    assert replay(engine.state.config, lines, fresh, "export.jsonl") == []
    for key in (("live", "standings"), ("public", "standings"), ("live", f"table:{table}")):
        assert fresh.payload(key) == engine.payload(key), key
    assert "Second Fix" in shown(fresh) and f"{TEAM}-p2" not in shown(fresh)


FIXES = st.lists(
    st.tuples(
        st.sampled_from(["T00", "T01", "T02", "NOPE"]),
        st.integers(0, 4),  # seat (0: by the table instead; 4: no such seat)
        st.integers(1, 3),  # table
        st.sampled_from(["Ann", "Bo", "Cy", "", None]),  # the new name (None: a colour)
    ),
    max_size=6,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fixes=FIXES)
def test_any_fixes_show_as_last_given_and_replay_from_the_journal(
    fixes: list[tuple[str, int, int, str | None]],
) -> None:
    """Whatever the operator sends: a refusal changes nothing; each seat shows the last name
    given for it (or the file's); the journal rebuilds the same payloads."""
    engine = played()
    expected = {
        (t, s): player_at(engine, t, s) for t in engine.state.config.tables for s in (1, 2, 3)
    }
    for team, seat, table, name in fixes:
        before = everything(engine)
        where = {"seat": seat, "table": table} if seat else {"table": table}
        fields = {"colour": "#0A0B0C"} if name is None else {**where, "name": name}
        out = fix(engine, team=team, **fields)
        if not out.ok:
            assert everything(engine) == before
            continue
        if name is not None:
            s = seat or engine.state.config.seat_of(table, team)
            expected[(table, s)] = (team, name)
    for (t, s), held in expected.items():
        assert player_at(engine, t, s) == held
    projected_equals_built(engine)
    assert everything(rebuilt_from_journal(engine)) == everything(engine)
