"""A game from outside the hub, played through it: high card (tests/toygame/), declared the
way a third party's package declares it (an entry point of the group ``duplicast.games`` in
its distribution's metadata) and by nothing else: no file of hub/ names it.

Real processes on a test Redis: ``duplicast serve --role all`` with the toy's tournament file
(its [highcard] section read by the game), a console (``duplicast console replay``) entering
every hand, the standings read over REST and over the websocket. The test process itself has
not the entry point: the hub can only have learnt of the game from the distribution metadata.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.domain.games import registry
from tests.feedclient import FeedClient
from tests.nginx import free_port
from tests.toygame.events import STAY
from tests.toygame.game import HIGHCARD, HighCardHand

pytestmark = [pytest.mark.redis]

ROOT = Path(__file__).resolve().parent.parent
TOML = ROOT / "tests" / "toygame" / "highcard.toml"
DRAW = {1: ("RED", "BLU"), 2: ("BLU", "RED")}  # the file's [draw.tables]: team per seat
ORDER = {1: (1, 2), 2: (2, 1)}  # its [schedule.tables]
BUTTONS = {1: 1, 2: 2}  # deal d's button: seat ((d - 1) % 2) + 1
ANTE = 5  # its [highcard] ante


def installed(site: Path) -> None:
    """The distribution metadata a ``pip install`` of the toy game would leave in ``site``."""
    info = site / "duplicast_highcard-0.1.dist-info"
    info.mkdir(parents=True)
    metadata = "Metadata-Version: 2.1\nName: duplicast-highcard\nVersion: 0.1\n"
    (info / "METADATA").write_text(metadata)
    (info / "entry_points.txt").write_text(
        "[duplicast.games]\nhighcard = tests.toygame.game:HIGHCARD\n"
    )


def session() -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Every table's hands as a console enters them (table 2 folds once), and each team's
    chips by the toy's own rules."""
    decks = HIGHCARD.seeded_orders("highcard", 2)
    events: list[dict[str, Any]] = []
    chips = {"RED": 0, "BLU": 0}
    for table, deals in ORDER.items():
        head = {"v": 1, "table": table, "console": f"table{table}"}

        def enter(head: dict[str, Any] = head, **fields: Any) -> None:
            seq = sum(e["table"] == head["table"] for e in events) + 1
            events.append(head | {"seq": seq} | fields)

        for deal_no in deals:
            config = _Config(BUTTONS[deal_no])
            cards = HIGHCARD.dealt(config, decks[deal_no], deal_no)
            hand = HighCardHand(HIGHCARD.spec(config, deal_no, lambda c=cards: c), ANTE)
            enter(type="start", deal=deal_no)
            while hand.to_act is not None:
                kind = "fold" if (table, deal_no, hand.to_act) == (2, 2, 1) else STAY
                enter(type=kind, seat=hand.to_act)
                hand.act(hand.to_act, kind)
            if hand.result is None:
                winners = sorted(hand.computed_winners() or ())
                enter(type="win", seats=winners)
                hand.settle(winners)
            assert hand.result is not None
            for seat, won in hand.result.items():
                chips[DRAW[table][seat - 1]] += won
    return events, chips


class _Config:
    """What the toy's deal and spec read of a configuration."""

    seats, small_blind, big_blind, cap = 2, 1, 2, 20

    def __init__(self, button: int) -> None:
        self.buttons = {1: button, 2: button}


@contextlib.contextmanager
def hub_process(redis_url: str, env: dict[str, str]) -> Iterator[str]:
    """``duplicast serve --role all`` of the toy's tournament; yields its URL once it listens."""
    port = free_port()
    command = [sys.executable, "-m", "hub", "serve", "--role", "all", "--config", str(TOML)]
    command += ["--redis", redis_url, "--port", str(port)]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        seen: list[str] = []
        while not seen or "duplicast all for" not in seen[-1]:
            seen.append(process.stdout.readline())
            if (not seen[-1] and process.poll() is not None) or time.monotonic() > deadline:
                raise AssertionError("the hub did not start:\n" + "".join(seen))
        yield f"http://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()


def test_the_toy_game_is_not_the_hubs_own() -> None:
    assert "highcard" not in registry.games  # this process has not its entry point


def test_a_game_from_an_entry_point_plays_through_the_hub(redis_url: str, tmp_path: Path) -> None:
    site = tmp_path / "site"
    installed(site)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")},
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    events, chips = session()
    tournament = "highcard-demo"
    log = tmp_path / "session.jsonl"
    log.write_text("".join(json.dumps(e | {"tournament": tournament}) + "\n" for e in events))
    with hub_process(redis_url, env) as url:
        console = subprocess.run(
            [sys.executable, "-m", "hub", "console", "--redis", redis_url, "replay",
             "--tournament", tournament, str(log)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert console.returncode == 0, console.stdout + console.stderr
        standings = asyncio.run(_standings(url))
        module = _overlay_module(url)
    assert module == (ROOT / "tests" / "toygame" / "overlay" / "highcard.js").read_text()
    teams = {t["team"]: t for t in standings["like_for_like"]["teams"]}
    assert standings["game"] == "highcard"
    assert standings["deals"]["complete"] == {"A": [1, 2]}
    assert {team: t["chips"] for team, t in teams.items()} == chips
    assert sum(chips.values()) == 0 and any(chips.values())


def _overlay_module(url: str) -> str:
    """The game's overlay module as a page finds it: listed with the topics, served by the hub
    from the game's package (no file of overlays/ is the toy's)."""
    listed = httpx.get(f"{url}/api/topics", timeout=10).json()["games"]
    assert listed["highcard"] == "highcard/highcard.js"
    assert listed["holdem"] == "holdem.js"
    served = httpx.get(f"{url}/overlays/js/games/{listed['highcard']}", timeout=10)
    assert served.status_code == 200
    assert "javascript" in served.headers["content-type"]
    return served.text


async def _standings(url: str) -> dict[str, Any]:
    """The standings once every deal is complete, over the websocket; the same over REST."""
    async with FeedClient(url.replace("http://", "ws://") + "/ws") as feed:
        await feed.subscribe(["standings"])

        def complete(c: FeedClient) -> bool:
            done = c.states.get("standings", {}).get("deals", {}).get("complete")
            return bool(done == {"A": [1, 2]})

        await feed.wait_for(complete, timeout=30)
        async with httpx.AsyncClient(base_url=url, timeout=10) as http:
            rest = (await http.get("/api/standings")).json()
        assert rest["data"] == feed.states["standings"]
        return feed.states["standings"]
