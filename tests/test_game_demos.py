"""`duplicast demo --config samples/<sample>.toml` for the games besides hold'em, as a user runs
it (a fresh process, no Redis, no DUPLICAST_* variables): the printed live-table link shows the
game's own pieces as the bots play, and the REST standings name the tournament and its game;
`duplicast replay` scores every deal of each sample's session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect

from hub.files.config import load_config
from tests.browser import new_page

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent

# sample -> its game, and what its live table shows once a hand is in play: selectors, each
# with how many (None: at least one)
GAMES: dict[str, tuple[str, list[tuple[str, int | None]]]] = {
    "piecepack": (
        "piecepack-holdem",
        [('[data-testid="board"] [data-tile]', None), ('[data-testid="hole"] [data-tile]', None)],
    ),
    "mcr": ("mcr", [('[data-testid="mj-seat"] .tile', 4 * 13)]),
    "rps-poker": ("rps-poker", [('[data-testid="rps-dealer"] .throw', 9)]),
}


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_demo_plays_the_sample_live_on_the_overlays(
    browser: Browser, tmp_path: Path, name: str
) -> None:
    game, shown = GAMES[name]
    sample = ROOT / "samples" / f"{name}.toml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    with (tmp_path / "demo.log").open("w") as log:
        command = ["demo", "--config", str(sample), "--port", "0", "--speed", "8"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "hub", *command],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        try:
            assert proc.stdout is not None
            links: dict[str, str] = {}
            for line in proc.stdout:
                parts = line.split()
                if len(parts) >= 2 and parts[-1].startswith(("http://", "ws://")):
                    links[" ".join(parts[:-1])] = parts[-1]
                if line.startswith("Ctrl-C"):
                    break
            assert "live table (live)" in links, links  # the commentator's: hole cards
            errors: list[str] = []
            pg = new_page(browser, 1920, 1080, errors)
            pg.goto(links["live table (live)"])
            for selector, count in shown:
                if count is None:
                    expect(pg.locator(selector).first).to_be_visible(timeout=30_000)
                else:
                    expect(pg.locator(selector)).to_have_count(count, timeout=30_000)
            expect(pg.locator("body")).to_have_attribute("data-game", game)
            standings = httpx.get(links["standings (REST)"], timeout=5).json()["data"]
            assert standings["tournament"] == load_config(sample).id
            assert standings["game"] == game
            pg.context.close()
            assert errors == []
        finally:
            proc.terminate()
            proc.wait(15)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_replay_scores_the_sample_session(name: str) -> None:
    """`duplicast replay` on the committed session: every deal scored at every table, the
    standings' game named, and the same standings twice (a replay is deterministic)."""
    game = GAMES[name][0]
    sample = ROOT / "samples" / f"{name}.toml"
    session = ROOT / "samples" / f"{name}-session.jsonl"
    command = [sys.executable, "-m", "hub", "replay", "--config", str(sample), str(session)]
    runs = [
        subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
        for _ in range(2)
    ]
    assert runs[0].stdout == runs[1].stdout
    standings = json.loads(runs[0].stdout)
    assert standings["game"] == game
    total = standings["deals"]["total"]
    assert standings["deals"]["complete"] == {"A": list(range(1, total + 1))}  # every deal
    teams = standings["like_for_like"]["teams"]
    assert len(teams) == 4 and min(t["rank"] for t in teams) == 1
