"""The overlays against the real hub: Debian Chromium, the ingest and edge on the embedded bus,
and console clients sending the sample session through the console protocol.

Every page must show the numbers of the matching REST snapshot, a console event must show within
1 s, pages must recover after the hub restarts, and an operator's on-air change must move the
overlays. Screenshots of each page at 1920x1080 go to test-artifacts/screenshots/hub-*.png.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect, sync_playwright

from hub.bus.memory import MemoryBus
from hub.console import replay_log
from hub.engine.core import Engine
from hub.runner import OVERLAYS, IngestSource
from hub.server import RunningServer, create_app, serve
from tests.hubharness import COMMENTATOR, OPERATOR, auth, session_events, unique_tournament

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "screenshots"
FAST = 1000  # ms: a console event must show within 1 s
PRELOAD = 1300  # events of the sample session played before the pages open
EXPECTED_ERRORS = ("WebSocket connection to",)  # logged by Chromium while the hub restarts


def points(n: float) -> str:
    """As the pages print points: at most one decimal (5.5, 24)."""
    return f"{n:,.1f}".removesuffix(".0")


def signed(n: int) -> str:
    return f"+{n:,}" if n > 0 else f"\u2212{-n:,}" if n < 0 else "0"


class HubThread:
    """The hub (role all) on its own event loop in a background thread, restartable."""

    def __init__(self) -> None:
        self.config, self.decks = unique_tournament("gfx")
        self.events = session_events(self.config.id)
        self.sent = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.bus = MemoryBus()
        self.port = 0
        self.source: IngestSource | None = None
        self.server: RunningServer | None = None

    def run(self, coro: Any, timeout: float = 60) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _start(self) -> None:
        self.source = IngestSource(self.bus, Engine(self.config, self.decks), own_bus=False)
        app = create_app(
            self.source, overlays_dir=OVERLAYS, auth=auth(), metrics=self.source.metrics
        )
        self.server = await serve(app, "127.0.0.1", self.port)
        self.port = self.server.port

    async def _stop(self) -> None:
        assert self.server is not None
        await self.server.stop()

    def start(self) -> None:
        self.run(self.bus.connect())
        self.run(self._start())

    def restart(self) -> None:
        self.run(self._stop())
        self.run(self._start())

    def stop(self) -> None:
        self.run(self._stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    def play(self, events: list[dict[str, Any]]) -> None:
        report = self.run(replay_log(self.bus, self.config.id, events, on_reject=print))
        assert report.rejected == 0

    def preload(self, count: int) -> None:
        self.play(self.events[:count])
        self.sent = count

    def next_event(self, table: int) -> dict[str, Any]:
        """Send the next event of `table` in the session (other tables keep their place)."""
        for i in range(self.sent, len(self.events)):
            event = self.events[i]
            if event["table"] == table and not event.get("_sent"):
                event["_sent"] = True
                self.play([{k: v for k, v in event.items() if k != "_sent"}])
                return event
        raise AssertionError(f"table {table} has no events left")

    def rest(self, path: str, token: str | None = None) -> Any:
        params = {"token": token} if token else {}
        response = httpx.get(self.url + path, params=params, timeout=5)
        response.raise_for_status()
        return response.json()["data"]


@pytest.fixture(scope="module")
def hub() -> Iterator[HubThread]:
    h = HubThread()
    h.start()
    h.preload(PRELOAD)
    yield h
    h.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    pg = context.new_page()
    errors: list[str] = []

    def on_console(msg: ConsoleMessage) -> None:
        if msg.type == "error" and not msg.text.startswith(EXPECTED_ERRORS):
            errors.append(msg.text)

    pg.on("console", on_console)
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    context.close()
    assert errors == []


def open_page(page: Page, hub: HubThread, path: str) -> None:
    page.goto(f"{hub.url}/overlays/{path}")
    expect(page.locator('[data-testid="gfx"]')).to_have_attribute(
        "data-visible", "true", timeout=5000
    )


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(800)
    page.screenshot(path=str(SHOTS / f"hub-{name}.png"))


def team_row(page: Page, team: str) -> Any:
    return page.locator(f'[data-testid="team-row"][data-team="{team}"]')


def test_leaderboard_matches_rest_and_survives_a_restart(page: Page, hub: HubThread) -> None:
    open_page(page, hub, "leaderboard.html?slot=0")
    standings = hub.rest("/api/standings")
    assert standings["deals"]["complete"]["A"], "the preload must complete some deals"
    for t in standings["like_for_like"]["teams"]:
        row = team_row(page, t["team"])
        expect(row.locator('[data-testid="team-points"]')).to_have_text(str(t["points"]))
        expect(row.locator('[data-testid="team-chips"]')).to_have_text(signed(t["chips"]))
        expect(row.locator('[data-testid="team-rank"]')).to_have_text(str(t["rank"]))
    shot(page, "leaderboard")
    running = hub.rest("/api/standings", COMMENTATOR)
    assert running["like_for_like"] == standings["like_for_like"]
    page.goto(f"{hub.url}/overlays/leaderboard.html?view=running&slot=0&token={COMMENTATOR}")
    for t in running["running"]["teams"]:
        expect(team_row(page, t["team"]).locator('[data-testid="team-chips"]')).to_have_text(
            signed(t["chips"])
        )


def expect_table(page: Page, table: dict[str, Any], timeout: int) -> None:
    expect(page.locator('[data-testid="pot"]')).to_have_text(f"{table['pot']:,}", timeout=timeout)
    if table["to_act"]:
        expect(page.locator('[data-testid="to-act"]')).to_have_attribute(
            "data-seat", str(table["to_act"]), timeout=timeout
        )


def advance_to_betting(hub: HubThread, table: int) -> dict[str, Any]:
    """Send table events until a hand is in its betting with someone to act."""
    state = hub.rest(f"/api/tables/{table}", COMMENTATOR)
    while state["status"] != "in_progress" or not state["to_act"]:
        hub.next_event(table)
        state = hub.rest(f"/api/tables/{table}", COMMENTATOR)
    return state


def test_live_table_shows_a_console_event_within_a_second_and_survives_a_restart(
    page: Page, hub: HubThread
) -> None:
    table = advance_to_betting(hub, 1)
    open_page(page, hub, f"table.html?table=1&slot=0&token={COMMENTATOR}")
    expect_table(page, table, 5000)
    expect(page.locator('[data-testid="hole"]')).to_have_count(6)
    shot(page, "table-commentator")
    hub.next_event(1)
    after = advance_to_betting(hub, 1)
    expect_table(page, after, FAST)
    # The hub restarts (rebuilding from the journal); the open page reconnects by itself.
    hub.restart()
    hub.next_event(1)
    later = advance_to_betting(hub, 1)
    expect_table(page, later, 8000)
    hub.next_event(1)
    latest = advance_to_betting(hub, 1)
    expect_table(page, latest, FAST)


def test_public_table_shows_no_cards(page: Page, hub: HubThread) -> None:
    open_page(page, hub, "table.html?table=2&slot=0")
    expect(page.locator('[data-testid="seat"]')).to_have_count(6)
    expect(page.locator('[data-testid="hole"]')).to_have_count(0)
    shot(page, "table-public")


def test_seat_ranking_matches_rest(page: Page, hub: HubThread) -> None:
    open_page(page, hub, "seat.html?seat=3&slot=0")
    rows = hub.rest("/api/seats/3")["like_for_like"]["rows"]
    for r in rows:
        loc = page.locator(f'[data-testid="seat-row"][data-table="{r["table"]}"]')
        expect(loc.locator('[data-testid="seat-chips"]')).to_have_text(signed(r["chips"]))
        expect(loc.locator('[data-testid="player"]')).to_have_text(r["player"])
    shot(page, "seat")


def test_split_screen_matches_rest(page: Page, hub: HubThread) -> None:
    deal = hub.rest("/api/standings")["deals"]["complete"]["A"][0]
    compare = hub.rest(f"/api/compare/{deal}/5")
    open_page(page, hub, f"compare.html?deal={deal}&seat=5&slot=0&mode=live")
    panels = page.locator('[data-testid="compare-panel"]')
    expect(panels).to_have_count(min(len(compare["rows"]), 6))
    for r in compare["rows"][:6]:
        panel = page.locator(f'[data-testid="compare-panel"][data-table="{r["table"]}"]')
        expect(panel.locator('[data-testid="panel-chips"]')).to_have_text(signed(r["chips"]))
    shot(page, "compare")


def test_ticker_and_commentator_and_operator_pages(page: Page, hub: HubThread) -> None:
    open_page(page, hub, "ticker.html?slot=0")
    shot(page, "ticker")
    page.goto(f"{hub.url}/overlays/commentator.html?token={COMMENTATOR}")
    expect(page.locator('[data-testid="com-table"]').first).to_be_visible(timeout=5000)
    # "If the hands ended now" shows the hub's projection, team by team.
    projection = hub.rest("/api/projection", COMMENTATOR)
    assert len(projection["teams"]) == 6
    for row in projection["teams"]:
        cell = page.locator(f'[data-testid="proj-team"][data-team="{row["team"]}"]')
        expect(cell.locator('[data-testid="proj-points"]')).to_have_text(points(row["points"]))
    shot(page, "commentator")
    page.goto(f"{hub.url}/overlays/operator.html?token={OPERATOR}")
    expect(page.locator('[data-testid="console-row"]')).to_have_count(6, timeout=5000)
    shot(page, "operator")


def test_operator_onair_change_moves_the_overlays(page: Page, hub: HubThread) -> None:
    open_page(page, hub, "leaderboard.html")
    gfx = page.locator('[data-testid="gfx"]')
    headers = {"Authorization": f"Bearer {OPERATOR}"}
    off = {"slot": "leaderboard", "value": {"visible": False}}
    assert httpx.post(f"{hub.url}/api/onair", json=off, headers=headers).json()["ok"]
    expect(gfx).to_have_attribute("data-visible", "false", timeout=FAST)
    on = {"slot": "leaderboard", "value": {"visible": True}}
    assert httpx.post(f"{hub.url}/api/onair", json=on, headers=headers).json()["ok"]
    expect(gfx).to_have_attribute("data-visible", "true", timeout=FAST)
    # A public client cannot change what is on air.
    assert httpx.post(f"{hub.url}/api/onair", json=off).status_code == 403
