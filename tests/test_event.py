"""Events of several sessions and stages (issue 12, items 1 and 2): the file format, the rule
that fills a later stage, per-session scoring added up per stage and overall, the engine's gate
on a stage that is not open, rosters with session draws and substitutions, the projections,
snapshots, and the sample event through `duplicast replay`."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import tomllib
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from hub.cli.demo import Demo
from hub.domain.advance import distribute, fill, qualifiers
from hub.domain.config import ConfigError, parse_config
from hub.domain.schedule import deal_clashes
from hub.domain.scoring import TeamStanding
from hub.engine.core import Engine
from hub.engine.families import topic_name
from hub.engine.simulate import simulate_session
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.wire.topics import LIVE, PUBLIC
from tests.factories import make_decks
from tests.test_projections import Client, assert_projected

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp-event.toml"
SAMPLE_LOG = ROOT / "samples" / "ifp-event-session.jsonl"

SMALL = """
[tournament]
id = "ev"
name = "Small event"
seats = 3
deals = 6
small_blind = 50
big_blind = 100

[[teams]]
id = "T1"
name = "One"
colour = "#000001"
players = ["a1", "a2", "a3"]
[[teams]]
id = "T2"
name = "Two"
colour = "#000002"
players = ["b1", "b2", "b3"]
[[teams]]
id = "T3"
name = "Three"
colour = "#000003"
players = ["c1", "c2", "c3"]
[[teams]]
id = "T4"
name = "Four"
colour = "#000004"
players = ["d1", "d2", "d3"]
[[teams]]
id = "T5"
name = "Five"
colour = "#000005"
players = ["e1", "e2", "e3"]
[[teams]]
id = "T6"
name = "Six"
colour = "#000006"
players = ["f1", "f2", "f3"]

[[groups]]
id = "A"
tables = [1, 2, 3]
teams = ["T1", "T2", "T3"]
[[groups]]
id = "B"
tables = [4, 5, 6]
teams = ["T4", "T5", "T6"]
[[groups]]
id = "F"
tables = [7, 8, 9]

[[stages]]
id = "groups"
groups = ["A", "B"]
[[stages]]
id = "final"
groups = ["F"]
advance = { top_per_group = 1 }

[draw]
method = "cyclic"
seed = 1

[[sessions]]
id = "s1"
stage = "groups"
deals = [1, 2]
[[sessions]]
id = "s2"
stage = "groups"
deals = [3, 4]
draw = { method = "random", seed = 5 }
[[sessions.substitutions]]
team = "T1"
out = "a2"
in = "z2"
[[sessions]]
id = "s3"
stage = "final"
deals = [5, 6]
draw = { method = "cyclic", seed = 3 }

[schedule]
method = "random"
seed = 4
"""


def small_config(text: str = SMALL) -> Any:
    return parse_config(tomllib.loads(text), "small.toml", text)


def event(config: Any, table: int, seq: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {
        "v": 1,
        "tournament": config.id,
        "table": table,
        "console": f"table{table}",
        "seq": seq,
        "type": kind,
        **fields,
    }


def play(engine: Engine, events: Any) -> None:
    for ev in events:
        out = engine.submit(ev, float(ev.get("ts", 0.0)))
        assert out.ok, (ev, out.ack)


# -- the file -----------------------------------------------------------------------------------


def test_sample_event_parses_into_stages_and_sessions() -> None:
    config = load_config(SAMPLE)
    plan = config.plan
    assert config.phased
    assert [s.id for s in plan.stages] == ["groups", "final"]
    assert [(s.id, s.stage, s.first, s.last) for s in plan.sessions] == [
        ("1", "groups", 1, 6),
        ("2", "groups", 7, 12),
        ("3", "final", 13, 18),
    ]
    assert plan.stage_by_id["final"].advance is not None
    assert [g.id for g in config.groups_playing(13)] == ["F"]
    assert [g.id for g in config.groups_playing(1)] == ["A", "B"]
    # Each table plays its stage's sessions one after the other, each in its own order: in
    # blocks of six deals, so no two tables of a group play one deal in one round (#23.1).
    assert sorted(config.deal_orders[1][:6]) == [1, 2, 3, 4, 5, 6]
    assert sorted(config.deal_orders[1][6:]) == [7, 8, 9, 10, 11, 12]
    assert sorted(config.deal_orders[13]) == [13, 14, 15, 16, 17, 18]
    assert deal_clashes(config.deal_orders, [g.tables for g in config.groups.values()]) == []
    assert config.warnings == ()


def test_a_one_session_file_is_one_stage_of_one_session() -> None:
    config = load_config(ROOT / "samples" / "ifp6.toml")
    assert not config.phased
    assert [(s.first, s.last) for s in config.plan.sessions] == [(1, config.deals)]
    assert config.plan.stages[0].groups == tuple(config.groups)


@pytest.mark.parametrize(
    ("change", "key", "problem"),
    [
        (("deals = [3, 4]", "deals = [4, 4]"), "sessions[1].deals", "start at deal 3"),
        (("deals = [5, 6]", "deals = [5, 5]"), "sessions", "deals 6..6 are in no session"),
        (("advance = { top_per_group = 1 }", ""), "stages[1].advance", "missing"),
        (
            ("advance = { top_per_group = 1 }", "advance = { top_per_group = 2 }"),
            "stages[1].advance.top_per_group",
            "more than the 3 places",
        ),
        (('draw = { method = "cyclic", seed = 3 }', ""), "sessions[2].draw", "generated draw"),
        (('out = "a2"', 'out = "b2"'), "sessions[1].substitutions[0].out", "does not play"),
        (('in = "z2"', 'in = "a3"'), "sessions[1].substitutions[0].in", "already plays"),
        (('stage = "final"', 'stage = "groups"'), "stages", "stage final has no session"),
        (
            ("tables = [7, 8, 9]", 'tables = [7, 8, 9]\nteams = ["T1", "T2", "T3"]'),
            "groups[2].teams[0]",
            "already in group A",
        ),
    ],
)
def test_event_file_mistakes_are_named(change: tuple[str, str], key: str, problem: str) -> None:
    old, new = change
    assert old in SMALL
    with pytest.raises(ConfigError) as err:
        small_config(SMALL.replace(old, new, 1))
    assert err.value.key == key
    assert problem in err.value.problem
    assert err.value.line is not None


# -- the advance rule ---------------------------------------------------------------------------


def row(group: str, team: str, points: int, chips: int) -> TeamStanding:
    return TeamStanding(group, team, 0, Fraction(points), chips)


def test_top_per_group_then_best_of_the_rest_seeded_and_snaked() -> None:
    groups = {
        "A": [row("A", "a1", 30, 0), row("A", "a2", 25, 10), row("A", "a3", 25, 5)],
        "B": [row("B", "b1", 28, 0), row("B", "b2", 25, 10), row("B", "b3", 10, 0)],
    }
    # Winners first (a1 30 before b1 28), then the rest across groups: a2 and b2 tie on
    # points and chips, broken by team id; a3 has fewer chips.
    assert qualifiers(groups, 1, 4) == ["a1", "b1", "a2", "b2"]
    # Best across groups only.
    assert qualifiers(groups, 0, 3) == ["a1", "b1", "a2"]
    # Top two of each group: places before points (a2 25 is a runner-up like b2).
    assert qualifiers(groups, 2, 4) == ["a1", "b1", "a2", "b2"]
    assert distribute(["1", "2", "3", "4", "5", "6"], ["X", "Y"]) == {
        "X": ("1", "4", "5"),
        "Y": ("2", "3", "6"),
    }
    assert fill(groups, 1, ["F"], 3) == {"F": ("a1", "b1", "a2")}


def test_the_rule_is_deterministic_whatever_the_input_order() -> None:
    rows = [row("A", f"t{i}", i % 3, i % 2) for i in range(6)]
    expected = qualifiers({"A": rows}, 0, 4)
    for seed in range(20):
        shuffled = rows[:]
        random.Random(seed).shuffle(shuffled)
        assert qualifiers({"A": shuffled}, 0, 4) == expected


# -- the engine -------------------------------------------------------------------------------


def run_small(seed: int = 1) -> tuple[Engine, list[dict[str, Any]]]:
    config = small_config()
    decks = make_decks(config)
    events = list(simulate_session(config, decks, random.Random(seed)))
    engine = Engine(config, decks)
    play(engine, events)
    engine.tick(float("inf"))
    return engine, events


def test_a_final_table_waits_for_the_group_stage_then_gets_its_teams() -> None:
    config = small_config()
    engine = Engine(config, make_decks(config))
    first = config.deal_orders[7][0]
    out = engine.submit(event(config, 7, 1, "start", deal=first), 1.0)
    assert not out.ok and out.code == "stage_not_open"
    assert engine.state.seating.fills == {}
    table = engine.payload((LIVE, topic_name("table", 7)))
    assert table is not None and all(s["team"] is None for s in table["seats"])
    # Nor does a penalty count at a final table before the final starts: no session to count
    # it in (it raised ValueError after the state had taken it, unjournaled).
    penalty = {"op": "penalty", "table": 7, "seat": 1, "points": 1, "by": "TD", "reason": "r"}
    out = engine.control(penalty, 2.0)
    assert not out.ok and out.code == "stage_not_open" and engine.state.penalties == []

    engine, _ = run_small()
    standings = engine.standings_json()
    groups = {
        g: [r for r in standings["like_for_like"]["stages"]["groups"]["teams"] if r["group"] == g]
        for g in ("A", "B")
    }
    winners = sorted((groups["A"][0], groups["B"][0]), key=lambda r: (-r["points"], -r["chips"]))
    filled = engine.state.seating.fills["final"]["F"]
    assert list(filled[:2]) == [r["team"] for r in winners]
    # The third finalist: the best runner-up across groups by points, then chips.
    rest = sorted(
        (r for g in groups.values() for r in g[1:]),
        key=lambda r: (-r["points"], -r["chips"], r["team"]),
    )
    assert filled[2] == rest[0]["team"]
    final_rows = standings["like_for_like"]["stages"]["final"]["teams"]
    assert sorted(r["team"] for r in final_rows) == sorted(filled)
    # Every final table seats the finalists only, one per seat.
    for table_no in (7, 8, 9):
        roster = engine.payload((LIVE, topic_name("table", table_no)))
        assert roster is not None
        assert sorted(s["team"] for s in roster["seats"]) == sorted(filled)


def test_standings_add_up_over_sessions_and_rank_overall_by_stage_reached() -> None:
    engine, _ = run_small(3)
    out = engine.standings_json()
    for view in ("running", "like_for_like"):
        block = out[view]
        sessions = block["sessions"]
        stage = {r["team"]: r for r in block["stages"]["groups"]["teams"]}
        for team, r in stage.items():
            parts = [x for s in ("s1", "s2") for x in sessions[s]["teams"] if x["team"] == team]
            assert r["points"] == sum(p["points"] for p in parts)
            assert r["chips"] == sum(p["chips"] for p in parts)
        # Ranked by the same rules: points, then chips.
        for rows in ([r for r in stage.values() if r["group"] == g] for g in ("A", "B")):
            keys = [(-r["points"], -r["chips"]) for r in sorted(rows, key=lambda r: r["rank"])]
            assert keys == sorted(keys)
        across = block["stages"]["groups"]["across"]
        assert len(across) == 6 and across[0]["rank"] == 1
        keys = [(-r["points"], -r["chips"]) for r in across]
        assert keys == sorted(keys)
        overall = block["overall"]
        finalists = set(engine.state.seating.fills["final"]["F"])
        assert {r["team"] for r in overall[:3]} == finalists
        assert [r["stage"] for r in overall] == ["final"] * 3 + ["groups"] * 3
        assert [r["rank"] for r in overall] == sorted(r["rank"] for r in overall)
        # The top level is the current stage (the final) and its session's seats.
        assert {r["team"] for r in block["teams"]} == finalists
    assert out["event"]["current"] == {"session": "s3", "stage": "final"}
    assert out["event"]["sessions"][1]["substitutions"] == [{"team": "T1", "out": "a2", "in": "z2"}]


def test_the_release_table_counts_each_deals_tables_from_the_session_boards() -> None:
    """The operator's release table reads each (group, deal)'s count from the event's session
    boards: at every step of a whole event, the tables whose hand counts."""
    config = small_config()
    decks = make_decks(config)
    events = list(simulate_session(config, decks, random.Random(2)))
    engine = Engine(config, decks)

    def counted(group: str, deal: int) -> int:
        hands = [engine.state.hand(t, deal) for t in config.groups[group].tables]
        return sum(1 for h in hands if h is not None and h.counts)

    seen = set()
    for i, ev in enumerate(events):
        play(engine, [ev])
        if i % 7 == 0 or i == len(events) - 1:
            for row in engine.release.release_state():
                assert row["tables_complete"] == counted(row["group"], row["deal"]), row
                seen.add(row["tables_complete"])
    assert len(seen) > 2  # none, some and all of a group's tables


def test_session_draws_and_substitutions_show_in_rosters_and_seat_rankings() -> None:
    config = small_config()
    engine, _ = run_small()
    state = engine.state
    s1 = {(t, s): state.seat_holder(t, s, 1) for t in (1, 2, 3) for s in (1, 2, 3)}
    s2 = {(t, s): state.seat_holder(t, s, 3) for t in (1, 2, 3) for s in (1, 2, 3)}
    assert {k: v[0].id for k, v in s1.items() if v} != {k: v[0].id for k, v in s2.items() if v}
    t1_table = config.groups["A"].tables[1]  # T1's second player: a2, then z2 from session 2
    players_s1 = {v[1] for k, v in s1.items() if v and k[0] == t1_table and v[0].id == "T1"}
    players_s2 = {v[1] for k, v in s2.items() if v and k[0] == t1_table and v[0].id == "T1"}
    assert players_s1 == {"a2"} and players_s2 == {"z2"}
    seats = engine.standings_json()["running"]["sessions"]
    names = {r["player"] for b in seats["s2"]["seats"] for r in b["rows"]}
    assert "z2" in names and "a2" not in names
    assert "a2" in {r["player"] for b in seats["s1"]["seats"] for r in b["rows"]}


def test_patches_rebuild_every_payload_through_a_whole_event() -> None:
    """The projection invariant holds across sessions, the stage fill and the final."""
    config = small_config()
    decks = make_decks(config)
    events = list(simulate_session(config, decks, random.Random(11)))
    engine = Engine(config, decks)
    engine.start_feed()
    client = Client()
    client.subscribe_all(engine)
    for i, ev in enumerate(events):
        out = engine.submit(ev, float(i))
        assert out.ok, out.ack
        engine.tick(float(i))
        changed = client.take(engine)
        assert_projected(engine, client, None if i % 25 == 0 else changed)
    assert_projected(engine, client)
    public = engine.payload((PUBLIC, topic_name("standings")))
    assert public is not None and public["event"]["fills"] == {
        "final": {"F": list(engine.state.seating.fills["final"]["F"])}
    }


def test_public_learns_the_finalists_only_once_the_group_stage_is_public() -> None:
    config = small_config()
    decks = make_decks(config)
    engine = Engine(config, decks, release_delay=1000.0)
    events = simulate_session(config, decks, random.Random(2))
    for i, ev in enumerate(events):
        assert engine.submit(ev, float(i)).ok
        if engine.state.seating.fills:
            break
    public = engine.payload((PUBLIC, topic_name("standings")))
    table = engine.payload((PUBLIC, topic_name("table", 7)))
    assert public is not None and table is not None
    assert public["event"]["fills"] == {} and public["like_for_like"]["stages"]["final"] == {
        "teams": [],
        "across": [],
    }
    assert all(s["team"] is None for s in table["seats"])
    engine.tick(float("inf"))
    public = engine.payload((PUBLIC, topic_name("standings")))
    table = engine.payload((PUBLIC, topic_name("table", 7)))
    assert public is not None and public["event"]["fills"]
    assert table is not None and all(s["team"] for s in table["seats"])


def test_snapshot_keeps_the_filled_stage() -> None:
    config = small_config()
    decks = make_decks(config)
    events = list(simulate_session(config, decks, random.Random(5)))
    engine = Engine(config, decks)
    cut = len(events) - 10  # inside the final
    play(engine, events[:cut])
    assert engine.state.seating.fills
    data = json.loads(json.dumps(engine.snapshot()))
    restored = Engine(config, decks)
    restored.restore_snapshot(data)
    assert restored.state.seating.fills == engine.state.seating.fills
    assert restored.standings_json() == engine.standings_json()
    play(restored, events[cut:])
    play(engine, events[cut:])
    assert restored.standings_json() == engine.standings_json()


# -- the sample event ---------------------------------------------------------------------------


def test_sample_event_replays_with_standings_per_session_stage_and_overall() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hub", "replay", "--config", str(SAMPLE), str(SAMPLE_LOG)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    out = json.loads(done.stdout)
    config = load_config(SAMPLE)
    decks = load_decks(config, SAMPLE.parent, {})
    engine = Engine(config, decks)
    play(engine, (json.loads(line) for line in SAMPLE_LOG.read_text().splitlines()))
    assert out == json.loads(json.dumps(engine.standings_json()))
    lfl = out["like_for_like"]
    assert set(lfl["sessions"]) == {"1", "2", "3"}
    assert set(lfl["stages"]) == {"groups", "final"}
    assert {g: len(d) for g, d in out["deals"]["complete"].items()} == {"A": 12, "B": 12, "F": 6}
    assert len(lfl["overall"]) == 12 and lfl["overall"][0]["stage"] == "final"
    finalists = out["event"]["fills"]["final"]["F"]
    # The best three of each group, from the group stage's standings.
    for group in ("A", "B"):
        top = [r["team"] for r in lfl["stages"]["groups"]["teams"] if r["group"] == group][:3]
        assert set(top) <= set(finalists)
    # Argentina's substitute plays from session 2 on.
    players = {r["player"] for b in lfl["sessions"]["2"]["seats"] for r in b["rows"]}
    assert "R. Benítez" in players and "L. Gómez" not in players


async def test_demo_plays_the_sample_event_through_the_final() -> None:
    """`duplicast demo --config samples/ifp-event.toml`: the consoles of the final wait for
    the group stage, nothing is refused, and the hub ends where an offline replay of the same
    simulated event ends."""
    demo = Demo(config_path=SAMPLE, port=0, speed=400, seed=3, loop_session=False)
    await demo.start()
    try:
        await asyncio.wait_for(demo.wait_finished(), 120)
        assert demo.source is not None
        engine = demo.source.engine
        assert engine.desk.reject_counts == {}
        config, decks = demo.config, demo.decks
        offline = Engine(config, decks)
        play(offline, simulate_session(config, decks, random.Random(3)))
        assert engine.state.seating.fills == offline.state.seating.fills
        assert engine.standings_json() == offline.standings_json()
        complete = engine.standings_json()["deals"]["complete"]
        assert {g: len(d) for g, d in complete.items()} == {"A": 12, "B": 12, "F": 6}
    finally:
        await demo.stop()


def test_sessions_without_stages_and_a_written_session_draw() -> None:
    """One stage of every group, played in two sessions; the second session's draw written out
    (each table seats the same teams, shifted), checked as a Latin square like [draw.tables]."""
    text = SMALL.split("[[stages]]")[0].replace('[[groups]]\nid = "F"\ntables = [7, 8, 9]\n', "")
    text = (
        text.replace("deals = 6", "deals = 4")
        + """
[draw]
method = "cyclic"
seed = 1

[[sessions]]
id = "am"
deals = [1, 2]

[[sessions]]
id = "pm"
deals = [3, 4]
[sessions.draw.tables]
"1" = ["T1", "T2", "T3"]
"2" = ["T2", "T3", "T1"]
"3" = ["T3", "T1", "T2"]
"4" = ["T4", "T5", "T6"]
"5" = ["T5", "T6", "T4"]
"6" = ["T6", "T4", "T5"]
"""
    )
    config = small_config(text)
    assert [s.id for s in config.plan.stages] == ["main"]
    decks = make_decks(config)
    engine = Engine(config, decks)
    play(engine, simulate_session(config, decks, random.Random(8)))
    held = engine.state.seat_holder(2, 1, 3)
    assert held is not None and held[0].id == "T2"
    out = engine.standings_json()
    assert out["event"]["current"] == {"session": "pm", "stage": "main"}
    assert len(out["like_for_like"]["overall"]) == 6
    broken = text.replace('"3" = ["T3", "T1", "T2"]', '"3" = ["T3", "T2", "T1"]')
    with pytest.raises(ConfigError) as err:
        small_config(broken)
    assert err.value.key == "sessions[1].draw.tables"
    assert "group A" in err.value.problem
