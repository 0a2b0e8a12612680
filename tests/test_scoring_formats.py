"""Scoring formats (issue 12.5): IMP and chips standings of played sessions, against numbers
worked out by hand, and the sample session scored by IMPs against a plain recomputation."""

from __future__ import annotations

import asyncio
import json
import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.bus.memory import MemoryBus
from hub.cli.replay import read_events, replay, replay_files
from hub.client.logreplay import replay_log
from hub.domain.imp import WBF
from hub.engine.core import Engine
from hub.files.config import load_config
from hub.files.decks import load_decks
from tests.hubharness import COMMENTATOR, ingest_hub

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
SESSION = ROOT / "samples" / "ifp6-session.jsonl"

# Three teams A, B, C at three tables of three seats, blinds 50/100, deals played in order.
# Written draw: table 1 seats A B C, table 2 B C A, table 3 C A B.
SMALL = """
[tournament]
id = "imp-test"
name = "IMP by hand"
seats = 3
deals = 2
small_blind = 50
big_blind = 100

[[teams]]
id = "A"
name = "Team A"
colour = "#111111"
players = ["a1", "a2", "a3"]

[[teams]]
id = "B"
name = "Team B"
colour = "#222222"
players = ["b1", "b2", "b3"]

[[teams]]
id = "C"
name = "Team C"
colour = "#333333"
players = ["c1", "c2", "c3"]

[[groups]]
id = "G"
tables = [1, 2, 3]
teams = ["A", "B", "C"]

[draw.tables]
"1" = ["A", "B", "C"]
"2" = ["B", "C", "A"]
"3" = ["C", "A", "B"]
"""

# Deal 1 (button seat 1, small blind seat 2, big blind seat 3; seat 1 acts first):
#   table 1: seat 1 folds, seat 2 folds             -> seat 1 0, seat 2 -50, seat 3 +50
#   table 2: seat 1 raises to 300, 2 and 3 fold      -> seat 1 +150, seat 2 -50, seat 3 -100
#   table 3: seat 1 raises to 300, seat 2 folds, seat 3 calls; flop (pot 650): seat 3 bets
#            600, seat 1 folds                       -> seat 1 -300, seat 2 -50, seat 3 +350
# Deal 2 (button seat 2, small blind seat 3, big blind seat 1; seat 2 acts first), not yet at
# table 3:
#   table 1: seat 2 folds, seat 3 folds             -> seat 1 +50, seat 2 0, seat 3 -50
#   table 2: seat 2 raises to 300, 3 and 1 fold      -> seat 1 -100, seat 2 +150, seat 3 -50
PLAY = {
    1: [("start", {"deal": 1}), ("fold", {"seat": 1}), ("fold", {"seat": 2}),
        ("start", {"deal": 2}), ("fold", {"seat": 2}), ("fold", {"seat": 3})],
    2: [("start", {"deal": 1}), ("raise", {"seat": 1, "amount": 300}), ("fold", {"seat": 2}),
        ("fold", {"seat": 3}),
        ("start", {"deal": 2}), ("raise", {"seat": 2, "amount": 300}), ("fold", {"seat": 3}),
        ("fold", {"seat": 1})],
    3: [("start", {"deal": 1}), ("raise", {"seat": 1, "amount": 300}), ("fold", {"seat": 2}),
        ("call", {"seat": 3}), ("bet", {"seat": 3, "amount": 600}), ("fold", {"seat": 1})],
}  # fmt: skip


def write_event_log(path: Path, tournament: str = "imp-test") -> Path:
    lines = []
    for table, events in PLAY.items():
        for seq, (kind, fields) in enumerate(events, start=1):
            event = {"v": 1, "tournament": tournament, "table": table}
            event.update(console=f"table{table}", seq=seq, type=kind, **fields)
            lines.append(json.dumps(event))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(tmp_path: Path, scoring: str, files: dict[str, str] | None = None) -> dict[str, Any]:
    config = tmp_path / "imp.toml"
    config.write_text(SMALL + scoring, encoding="utf-8")
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return replay_files(config, write_event_log(tmp_path / "log.jsonl"), dict(os.environ))


def teams(view: dict[str, Any], column: str) -> list[tuple[str, int, Any, int]]:
    return [(t["team"], t["rank"], t.get(column), t["chips"]) for t in view["teams"]]


def seat_column(view: dict[str, Any], seat: int, column: str) -> dict[int, Any]:
    (block,) = [b for b in view["seats"] if b["seat"] == seat]
    return {row["table"]: row[column] for row in block["rows"]}


def test_imp_standings_match_the_hand_computed_example(tmp_path: Path) -> None:
    """WBF scale, differences in chips. Deal 1, seat 1 (results 0, +150, -300):
    table 1: 0 - (150 - 300)/2 = +75 -> 2; table 2: 150 - (0 - 300)/2 = +300 -> 7;
    table 3: -300 - (0 + 150)/2 = -375 -> -9. Seat 2 (all -50): 0 everywhere. Seat 3 (+50,
    -100, +350): 50 - 125 = -75 -> -2; -100 - 200 = -300 -> -7; 350 + 25 = +375 -> 9.
    Teams (A: t1 s1, t2 s3, t3 s2; B: t1 s2, t2 s1, t3 s3; C: t1 s3, t2 s2, t3 s1):
    A 2 - 7 + 0 = -5, B 0 + 7 + 9 = 16, C -2 + 0 - 9 = -11; chips A -150, B 450, C -300.

    Deal 2 counts only in the running view (table 3 has not played it). Seat 1 (+50 at
    table 1, -100 at table 2): each against the other, +150 -> 4 and -150 -> -4; seat 2 (0,
    +150): -4 and +4; seat 3 (-50, -50): 0. Running: A -5 + 4 + 0 = -1, B 16 - 4 - 4 = 8,
    C -11 + 0 + 4 = -7; chips A -150 + 50 - 50 = -150, B 450 + 0 - 100 = 350,
    C -300 - 50 + 150 = -200."""
    out = run(tmp_path, '\n[scoring]\nformat = "imp"\n')
    assert out["scoring"] == {
        "format": "imp",
        "column": "imps",
        "heading": "IMPs",
        "unit": "chips",
        "unit_chips": 1,
        "scale": "WBF",
    }
    lfl, running = out["like_for_like"], out["running"]
    assert teams(lfl, "imps") == [("B", 1, 16, 450), ("A", 2, -5, -150), ("C", 3, -11, -300)]
    assert seat_column(lfl, 1, "imps") == {1: 2, 2: 7, 3: -9}
    assert seat_column(lfl, 2, "imps") == {1: 0, 2: 0, 3: 0}
    assert seat_column(lfl, 3, "imps") == {1: -2, 2: -7, 3: 9}
    assert teams(running, "imps") == [("B", 1, 8, 350), ("A", 2, -1, -150), ("C", 3, -7, -200)]
    assert seat_column(running, 1, "imps") == {1: 6, 2: 3, 3: -9}
    assert seat_column(running, 2, "imps") == {1: -4, 2: 4, 3: 0}
    assert all("points" not in row for row in lfl["teams"])


def test_imp_with_a_scale_file_in_big_blinds(tmp_path: Path) -> None:
    """Scale 0.5 bb -> 1, 2 bb -> 2, 3.5 bb -> 3. Deal 1 in big blinds: seat 1 +0.75, +3,
    -3.75 -> 1, 2, -3; seat 3 -0.75, -3, +3.75 -> -1, -2, 3. Teams: A 1 - 2 + 0 = -1,
    B 0 + 2 + 3 = 5, C -1 + 0 - 3 = -4."""
    scale = "# big blinds, IMPs\n0.5, 1\n2, 2\n3.5, 3\n"
    scoring = '\n[scoring]\nformat = "imp"\nunit = "big_blinds"\nscale = "bb.csv"\n'
    out = run(tmp_path, scoring, {"bb.csv": scale})
    assert out["scoring"]["unit"] == "big blinds" and out["scoring"]["unit_chips"] == 100
    assert out["scoring"]["scale"] == "bb.csv"
    assert teams(out["like_for_like"], "imps") == [
        ("B", 1, 5, 450),
        ("A", 2, -1, -150),
        ("C", 3, -4, -300),
    ]
    assert seat_column(out["like_for_like"], 1, "imps") == {1: 1, 2: 2, 3: -3}


def test_chips_standings_rank_by_aggregate_chip_score(tmp_path: Path) -> None:
    """Deal 1 only (like-for-like): seat 1 chips 0, +150, -300 rank tables 2, 1, 3; teams by
    aggregate chips B 450, A -150, C -300. Running adds deal 2 at tables 1 and 2."""
    out = run(tmp_path, '\n[scoring]\nformat = "chips"\n')
    assert out["scoring"] == {"format": "chips", "column": "chips", "heading": "Chips"}
    lfl = out["like_for_like"]
    assert teams(lfl, "chips") == [("B", 1, 450, 450), ("A", 2, -150, -150), ("C", 3, -300, -300)]
    (seat1,) = [b for b in lfl["seats"] if b["seat"] == 1]
    assert [(r["table"], r["chips"], r["rank"]) for r in seat1["rows"]] == [
        (2, 150, 1),
        (1, 0, 2),
        (3, -300, 3),
    ]
    assert all(set(r) == {"table", "team", "player", "chips", "rank"} for r in seat1["rows"])
    assert teams(out["running"], "chips")[0] == ("B", 1, 350, 350)


def test_ifp_points_stay_the_default(tmp_path: Path) -> None:
    """Seat 1 chips 0, +150, -300 -> points 2, 3, 1; seat 2 all -50 -> 2 each; seat 3 +50,
    -100, +350 -> 2, 1, 3. A 2 + 1 + 2 = 5, B 2 + 3 + 3 = 8, C 2 + 2 + 1 = 5 (A ahead of C on
    chips -150 against -300)."""
    out = run(tmp_path, "")
    assert out["scoring"] == {"format": "ifp-points", "column": "points", "heading": "Pts"}
    assert teams(out["like_for_like"], "points") == [
        ("B", 1, 8, 450),
        ("A", 2, 5, -150),
        ("C", 3, 5, -300),
    ]


@pytest.mark.parametrize("unit", ["chips", "big_blinds"])
def test_the_sample_session_by_imps_matches_a_plain_recomputation(
    tmp_path: Path, unit: str
) -> None:
    """The sample session (6 tables, 12 deals) scored by IMPs: every seat's total equals the
    sum, over the deals, of the WBF IMPs of its difference against the average of the other
    five tables, recomputed here from the chip results of the replay's own deal results."""
    config = tmp_path / "ifp6-imp.toml"
    text = SAMPLE.read_text(encoding="utf-8")
    config.write_text(text + f'\n[scoring]\nformat = "imp"\nunit = "{unit}"\n', encoding="utf-8")
    cfg = load_config(config)
    engine = Engine(cfg, load_decks(cfg, SAMPLE.parent, dict(os.environ)))
    replay(cfg, read_events(SESSION), engine, str(SESSION))
    out = engine.standings_json()
    assert out == replay_files(config, SESSION, dict(os.environ))
    results = engine.state.board.results()
    unit_chips = 100 if unit == "big_blinds" else 1
    tables = [1, 2, 3, 4, 5, 6]
    expected: dict[tuple[int, int], int] = {(t, s): 0 for t in tables for s in range(1, 7)}
    for deal in range(1, 13):
        for t in tables:
            for s in range(1, 7):
                others = [results[(o, deal)][s] for o in tables if o != t]
                diff = Fraction(results[(t, deal)][s]) - Fraction(sum(others), len(others))
                expected[(t, s)] += WBF.imps(diff / unit_chips)
    for block in out["like_for_like"]["seats"]:
        for row in block["rows"]:
            assert row["imps"] == expected[(row["table"], block["seat"])]
    by_team: dict[str, int] = {}
    for (t, s), imps in expected.items():
        team = cfg.draw[(t, s)]
        by_team[team] = by_team.get(team, 0) + imps
    got = {row["team"]: row["imps"] for row in out["like_for_like"]["teams"]}
    assert got == by_team
    ranked = sorted(out["like_for_like"]["teams"], key=lambda r: r["rank"])
    assert [r["imps"] for r in ranked] == sorted(by_team.values(), reverse=True)


async def test_rest_standings_and_seats_carry_the_imp_format_and_totals(tmp_path: Path) -> None:
    """The hub (ingest and edge on the embedded bus) serves the replay's IMP standings."""
    config_path = tmp_path / "imp.toml"
    config_path.write_text(SMALL + '\n[scoring]\nformat = "imp"\n', encoding="utf-8")
    log = write_event_log(tmp_path / "log.jsonl")
    want = replay_files(config_path, log, dict(os.environ))
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    bus = MemoryBus()
    await bus.connect()
    try:
        async with ingest_hub(bus, load_config(config_path), None) as (_source, server):
            report = await replay_log(bus, "imp-test", events, on_reject=lambda _: None)
            assert report.accepted == len(events)
            async with httpx.AsyncClient(base_url=server.url) as http:
                for _ in range(200):
                    public = (await http.get("/api/standings")).json()["data"]
                    if public.get("like_for_like") == want["like_for_like"]:
                        break
                    await asyncio.sleep(0.02)
                assert public["like_for_like"] == want["like_for_like"]
                assert public["scoring"] == want["scoring"]
                assert public["scoring"]["heading"] == "IMPs"
                assert "running" not in public
                live_headers = {"authorization": f"Bearer {COMMENTATOR}"}
                live = (await http.get("/api/standings", headers=live_headers)).json()["data"]
                assert live["running"] == want["running"]
                seat = (await http.get("/api/seats/1")).json()["data"]
                assert seat["scoring"]["format"] == "imp"
                assert {r["table"]: r["imps"] for r in seat["like_for_like"]["rows"]} == {
                    1: 2,
                    2: 7,
                    3: -9,
                }
    finally:
        await bus.close()
