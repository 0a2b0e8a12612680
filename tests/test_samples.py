"""The shipped samples load, and replay their sessions, without a warning (issue #23.1).

A new user's first commands read these files: a warning from our own samples (the clash of
two tables on one deal in one round that independent random orders make) tells them the
samples are wrong. The samples play in blocks; the sessions were simulated in those orders.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hub.cli.main import main
from hub.cli.offline import run_decks, run_draw
from hub.domain.schedule import deal_clashes
from hub.files.config import load_config
from hub.serve.auth import parse_console_tokens
from tests.test_offline import decks_args, draw_args

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
TEMPLATE = "event.toml"  # `duplicast init`'s event: no [draw] nor [schedule] until made
TOURNAMENTS = sorted(p.name for p in SAMPLES.glob("*.toml") if p.name != TEMPLATE)
SESSIONS = sorted(p.name for p in SAMPLES.glob("*-session.jsonl"))


def test_every_sample_is_a_tournament_with_its_session() -> None:
    assert TOURNAMENTS == [
        "ifp-event.toml",
        "ifp6.toml",
        "mcr.toml",
        "piecepack.toml",
        "rps-poker.toml",
    ]
    assert [name.replace(".toml", "-session.jsonl") for name in TOURNAMENTS] == SESSIONS


@pytest.mark.parametrize("name", TOURNAMENTS)
def test_a_sample_loads_without_a_warning(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    config = load_config(SAMPLES / name)
    assert config.warnings == ()
    assert capsys.readouterr().err == ""
    groups = [g.tables for g in config.groups.values()]
    assert deal_clashes(config.deal_orders, groups) == []  # no two tables on a deal at once


def test_the_template_completed_as_the_readme_says_loads_without_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`draw >> event.toml`, `decks --orders-out schedule.toml`, `cat schedule.toml >>`."""
    event = tmp_path / TEMPLATE
    event.write_text((SAMPLES / TEMPLATE).read_text("utf-8"), "utf-8")
    draw, schedule = tmp_path / "draw.toml", tmp_path / "schedule.toml"
    assert run_draw(draw_args(event, method="random", seed=3, out=str(draw))) == 0
    with event.open("a", encoding="utf-8") as handle:
        handle.write(draw.read_text("utf-8"))
    assert run_decks(decks_args(event, seed="s", orders_out=str(schedule))) == 0
    with event.open("a", encoding="utf-8") as handle:
        handle.write(schedule.read_text("utf-8"))
    capsys.readouterr()
    config = load_config(event)
    assert config.warnings == () and capsys.readouterr().err == ""


@pytest.mark.parametrize("name", TOURNAMENTS)
def test_acl_gives_console_tokens_for_every_sample(name: str, tmp_path: Path) -> None:
    """Issue #32 item 4: an event made from any sample gets a web
    console token for each table from `duplicast acl --console-tokens-out`."""
    acl, creds, tokens = (tmp_path / n for n in ("users.acl", "creds.txt", "tokens.txt"))
    args = ["acl", "--config", str(SAMPLES / name), "--out", str(acl)]
    args += ["--credentials-out", str(creds), "--console-tokens-out", str(tokens)]
    assert main(args) == 0
    config = load_config(SAMPLES / name)
    seats = parse_console_tokens(tokens.read_text("utf-8"))
    assert {s.console: s.table for s in seats} == dict(config.consoles or {})
    assert sorted({s.table for s in seats}) == sorted(config.tables)


@pytest.mark.parametrize("name", TOURNAMENTS)
def test_duplicast_replay_of_a_sample_session_warns_of_nothing(name: str) -> None:
    """The README's `duplicast replay --config samples/<file>.toml samples/<file>-session.jsonl`:
    no warning, and nothing refused (the session follows the file's deal orders)."""
    session = SAMPLES / name.replace(".toml", "-session.jsonl")
    run = subprocess.run(
        [sys.executable, "-m", "hub", "replay", "--config", str(SAMPLES / name), str(session)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "warning" not in run.stderr and "refused" not in run.stderr, run.stderr
