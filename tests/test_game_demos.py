"""`duplicast demo --config samples/<game>.toml` for the games besides hold'em, as a user runs
it (a fresh process, no Redis, no DUPLICAST_* variables): the printed live-table link shows the
game's own pieces as the bots play, the REST standings name the game, and `duplicast replay`
scores the sample's session to the standings the demo's tournament has after every deal.

(The piecepack demo has its own test in test_piecepack_overlays.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from tests.test_overlays_hub import ARGS, CHROMIUM
from tests.test_piecepack_overlays import new_page

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent

# game -> what its live table shows once a hand is in play (a selector), and how many
GAMES = {
    "mcr": ('[data-testid="mj-seat"] .tile', 4 * 13),
    "rps-poker": ('[data-testid="rps-dealer"] .throw', 9),
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_demo_plays_the_sample_live_on_the_overlays(
    browser: Browser, tmp_path: Path, game: str
) -> None:
    selector, count = GAMES[game]
    sample = ROOT / "samples" / f"{game}.toml"
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
            assert "live table" in links, links
            errors: list[str] = []
            pg = new_page(browser, 1920, 1080, errors)
            pg.goto(links["live table"])
            expect(pg.locator(selector)).to_have_count(count, timeout=30_000)
            standings = httpx.get(links["standings (REST)"], timeout=5).json()["data"]
            assert standings["game"] == game
            pg.context.close()
            assert errors == []
        finally:
            proc.terminate()
            proc.wait(15)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_replay_scores_the_sample_session(game: str) -> None:
    """`duplicast replay` on the committed session: every deal scored at every table, the
    standings' game named, and the same standings twice (a replay is deterministic)."""
    sample = ROOT / "samples" / f"{game}.toml"
    session = ROOT / "samples" / f"{game}-session.jsonl"
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
