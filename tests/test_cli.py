"""The command line: replay, simulate, draw and decks as a user runs them (subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hubharness import duplicast

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
SESSION = ROOT / "samples" / "ifp6-session.jsonl"


def test_replay_of_the_sample_session() -> None:
    run = duplicast("replay", "--config", str(SAMPLE), str(SESSION))
    assert run.returncode == 0, run.stderr
    standings = json.loads(run.stdout)
    assert set(standings) >= {"running", "like_for_like"}
    n = 6
    for view in ("running", "like_for_like"):
        teams = standings[view]["teams"]
        assert {t["team"] for t in teams} == {"ARG", "BRA", "CHN", "DEN", "ECU", "FIN"}
        assert all(set(t) >= {"team", "rank", "points", "chips"} for t in teams)
        assert sum(t["points"] for t in teams) == n * n * (n + 1) / 2
        assert sum(t["chips"] for t in teams) == 0
        for block in standings[view]["seats"]:
            assert sum(row["points"] for row in block["rows"]) == n * (n + 1) / 2
            assert all(
                set(row) >= {"table", "team", "player", "chips", "points"} for row in block["rows"]
            )
    # The whole session is complete at every table: both views agree.
    assert standings["running"]["teams"] == standings["like_for_like"]["teams"]
    assert standings["deals"]["complete"]["A"] == list(range(1, 13))


def test_the_sample_session_is_varied() -> None:
    events = [json.loads(line) for line in SESSION.read_text().splitlines()]
    kinds = {e["type"] for e in events}
    assert {"start", "fold", "check", "call", "bet", "raise", "win", "undo", "void"} <= kinds
    assert any(e["type"] == "win" and len(e["seats"]) > 1 for e in events), "no split pot"
    assert any(e["type"] in ("bet", "raise") and e["amount"] == 10_000 for e in events), "no all-in"


def test_simulate_is_reproducible(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    run = duplicast("simulate", "--config", str(SAMPLE), "--seed", "1", "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert out.read_text() == SESSION.read_text()


def test_malformed_event_log_names_file_line_and_problem(tmp_path: Path) -> None:
    lines = SESSION.read_text().splitlines()[:5]
    bad = tmp_path / "events.jsonl"
    bad.write_text("\n".join([*lines[:3], "{not json", *lines[3:]]) + "\n")
    run = duplicast("replay", "--strict", "--config", str(SAMPLE), str(bad))
    assert run.returncode == 1
    assert f"{bad}:4: bad_schema: not JSON" in run.stderr
    illegal = tmp_path / "illegal.jsonl"
    first = json.loads(lines[0])
    second = {**first, "seq": 2, "type": "check", "seat": 1}
    second.pop("deal")
    illegal.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    run = duplicast("replay", "--strict", "--config", str(SAMPLE), str(illegal))
    assert run.returncode == 1
    assert f"{illegal}:2:" in run.stderr
    assert "out_of_turn" in run.stderr or "not_allowed" in run.stderr


def with_refusals(tmp_path: Path) -> tuple[Path, list[int]]:
    """The sample session as a real console log: refused events in it (each uses up its seq,
    so the console's later events move up by one), and one line that is not JSON."""
    events = [json.loads(line) for line in SESSION.read_text().splitlines()]
    out: list[str] = []
    refused: list[int] = []
    shift: dict[str, int] = {}
    for i, event in enumerate(events):
        console = event["console"]
        event = {**event, "seq": event["seq"] + shift.get(console, 0)}
        if i in (5, 400, 1200) and event["type"] in ("fold", "call", "check"):
            wrong = {**event, "seat": event["seat"] % 6 + 1}  # out of turn
            out.append(json.dumps(wrong))
            refused.append(len(out))
            shift[console] = shift.get(console, 0) + 1
            event = {**event, "seq": event["seq"] + 1}
        if i == 700:
            out.append("{torn line")
            refused.append(len(out))
        out.append(json.dumps(event))
    path = tmp_path / "console.jsonl"
    path.write_text("\n".join(out) + "\n")
    return path, refused


def test_replay_reports_refused_events_and_goes_on_as_the_hub_does(tmp_path: Path) -> None:
    log, refused = with_refusals(tmp_path)
    assert len(refused) >= 3
    clean = duplicast("replay", "--config", str(SAMPLE), str(SESSION))
    run = duplicast("replay", "--config", str(SAMPLE), str(log))
    assert run.returncode == 0, run.stderr
    # every refusal named with file:line and code, in log order; then the same standings
    reported = [line for line in run.stderr.splitlines() if ": refused: " in line]
    assert [int(r.split(f"{log}:")[1].split(":")[0]) for r in reported] == refused
    assert all(": out_of_turn: " in r or ": bad_schema: not JSON" in r for r in reported)
    assert f"{len(refused)} event(s) refused" in run.stderr
    assert json.loads(run.stdout) == json.loads(clean.stdout)
    strict = duplicast("replay", "--strict", "--config", str(SAMPLE), str(log))
    assert strict.returncode == 1 and strict.stdout == ""
    assert f"{log}:{refused[0]}: out_of_turn: " in strict.stderr
    assert strict.stderr.count(f"{log}:") == 1  # stopped at the first


def test_malformed_config_names_file_key_and_problem(tmp_path: Path) -> None:
    text = SAMPLE.read_text().replace('colour = "#DE2910"', 'colour = "red"')
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    run = duplicast("replay", "--config", str(bad), str(SESSION))
    assert run.returncode == 1
    assert str(bad) in run.stderr and "teams[2].colour" in run.stderr


@pytest.mark.parametrize("method", ["random", "cyclic"])
def test_draw_writes_a_valid_latin_square(tmp_path: Path, method: str) -> None:
    out = tmp_path / "draw.toml"
    run = duplicast("draw", "--config", str(SAMPLE), "--method", method, "--out", str(out))
    assert run.returncode == 0, run.stderr
    import tomllib

    tables = tomllib.loads(out.read_text())["draw"]["tables"]
    assert len(tables) == 6
    for seats in tables.values():
        assert sorted(seats) == ["ARG", "BRA", "CHN", "DEN", "ECU", "FIN"]
    for seat in range(6):
        assert len({seats[seat] for seats in tables.values()}) == 6


def test_decks_writes_an_encrypted_file_and_a_commitment(tmp_path: Path) -> None:
    key = duplicast("decks", "--new-key")
    assert key.returncode == 0
    env = {"DUPLICAST_DECK_KEY": key.stdout.strip()}
    out = tmp_path / "decks.enc"
    orders = tmp_path / "schedule.toml"
    run = duplicast(
        "decks", "--config", str(SAMPLE), "--out", str(out), "--orders-out", str(orders), env=env
    )
    assert run.returncode == 0, run.stderr
    assert "commitment: sha256:" in run.stdout
    from hub.domain.deck import commitment
    from hub.files.decks import read_deck_file

    decks = read_deck_file(out, env["DUPLICAST_DECK_KEY"])
    assert sorted(decks) == list(range(1, 13))
    assert not any(order.rehearsal for order in decks.values())
    # No run of 3 consecutive cards of any order is in the file in plain text (two-card
    # substrings like b"Ah" turn up in ~1.7 KB of ciphertext by chance).
    blob = out.read_bytes()
    for order in decks.values():
        for i in range(len(order.cards) - 2):
            cards = order.cards[i : i + 3]
            assert "".join(cards).encode() not in blob
            assert " ".join(cards).encode() not in blob
    assert b"cards" not in blob and b"deals" not in blob
    printed = [
        line.removeprefix("commitment: sha256:")
        for line in run.stdout.splitlines()
        if line.startswith("commitment: sha256:")
    ]
    assert printed == [commitment(decks)]
    missing = duplicast("decks", "--config", str(SAMPLE), "--out", str(tmp_path / "x.enc"))
    assert missing.returncode == 2 and "DUPLICAST_DECK_KEY" in missing.stderr


def test_an_edge_starts_without_the_deck_key(tmp_path: Path, redis_url: str) -> None:
    """Issue #9.6: an edge holds no cards of its own, so it needs no deck key (an ingest with
    an encrypted deck file still refuses to start without one)."""
    import socket
    import time

    key = duplicast("decks", "--new-key").stdout.strip()
    config = tmp_path / "event.toml"
    text = SAMPLE.read_text().replace('rehearsal_seed = "ifp-demo"', 'file = "decks.enc"')
    config.write_text(text)
    made = duplicast(
        "decks", "--config", str(config), "--out", str(tmp_path / "decks.enc"),
        env={"DUPLICAST_DECK_KEY": key},
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    env = {k: v for k, v in os.environ.items() if k != "DUPLICAST_DECK_KEY"}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ["serve", "--config", str(config), "--redis", redis_url, "--port", str(port)]
    edge = subprocess.Popen(
        [sys.executable, "-m", "hub", *args, "--role", "edge"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert edge.stdout is not None
        deadline = time.monotonic() + 30
        line = ""
        while time.monotonic() < deadline and "duplicast edge" not in line:
            line = edge.stdout.readline()
            assert line or edge.poll() is None, "the edge exited"
        assert "duplicast edge for" in line
    finally:
        edge.terminate()
        edge.wait(10)
    ingest = subprocess.run(
        [sys.executable, "-m", "hub", *args, "--role", "ingest"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ingest.returncode != 0 and "DUPLICAST_DECK_KEY" in (ingest.stderr + ingest.stdout)
