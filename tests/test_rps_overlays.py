"""RPS Poker on the overlays, against the real hub: Debian Chromium, the ingest and edge on the
embedded bus, console clients sending the RPS sample session through the console protocol.

The live table shows each round's dealer's throws and (commentators) every player's throws and
score against the dealer; the split screen shows the same deal and seat at every table; a
console's throw shows within 1 s. Screenshots go to test-artifacts/screenshots/rps-*.png.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from hub.files.config import load_config
from hub.files.decks import load_decks
from tests.browser import open_overlay, screenshot
from tests.hubharness import COMMENTATOR, session_events
from tests.test_overlays_hub import HubThread

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "rps-poker.toml"
SESSION = ROOT / "samples" / "rps-poker-session.jsonl"
FAST = 1000  # ms: a console event must show within 1 s
PRELOAD = 300  # events played before the pages open


def score_text(s: dict[str, int] | None) -> str:
    """As overlays/js/rps.js prints a score: "+3 (4-1)", "0 (2-2)", a minus sign before a loss."""
    if s is None:
        return ""
    diff = s["diff"]
    sign = "0" if diff == 0 else f"+{diff}" if diff > 0 else f"\u2212{-diff}"
    return f"{sign} ({s['wins']}-{s['losses']})"


class RpsHub(HubThread):
    """The hub of test_overlays_hub (role all, in a thread), on the RPS sample and its session."""

    def __init__(self) -> None:
        super().__init__("rps")
        config = load_config(SAMPLE)
        self.decks = load_decks(config, SAMPLE.parent, {})
        self.config = dataclasses.replace(config, id=f"rps-{uuid.uuid4().hex[:8]}")
        self.events = session_events(self.config.id, SESSION)

    def play_until(self, done: Any) -> None:
        """Send the session's events in order until ``done()`` holds."""
        while not done():
            assert self.sent < len(self.events), "the session ended first"
            self.play([self.events[self.sent]])
            self.sent += 1


@pytest.fixture(scope="module")
def hub() -> Iterator[RpsHub]:
    h = RpsHub()
    h.start()
    h.play_until(lambda: h.sent >= PRELOAD)
    yield h
    h.stop()


def open_page(page: Page, hub: RpsHub, path: str) -> None:
    open_overlay(page, hub.url, path)


def shot(page: Page, name: str) -> None:
    screenshot(page, f"rps-{name}", 500)


def expect_table(page: Page, t: dict[str, Any], timeout: int = FAST) -> None:
    """The page shows the live table payload's throws, dealer's rounds and scores."""
    dealer = page.locator('[data-testid="rps-dealer"]')
    expect(dealer).to_have_attribute("data-throws", " ".join(t["dealer_throws"]), timeout=timeout)
    for s in t["seats"]:
        box = page.locator(f'[data-testid="seat"][data-seat="{s["seat"]}"]')
        if s["seat"] == t["button"]:
            expect(box.locator('[data-testid="seat-throws"]')).to_have_count(0)
            continue
        expect(box.locator('[data-testid="seat-throws"]')).to_have_attribute(
            "data-throws", " ".join(s["throws"]), timeout=timeout
        )
        expect(box.locator('[data-testid="seat-score"]')).to_have_text(
            score_text(s["score"]), timeout=timeout
        )
        win = box.locator('[data-testid="seat-win"]')
        if s["folded"] or s["win"] is None:
            expect(win).to_have_count(0, timeout=timeout)
        else:
            expect(win).to_have_text(f"{s['win'] * 100:.1f}%", timeout=timeout)


def test_live_table_shows_the_rounds_throws_and_scores_and_follows_the_console(
    page: Page, hub: RpsHub
) -> None:
    # Play on until table 1 is past its gambit with throws on the felt.
    hub.play_until(
        lambda: (
            (t := hub.rest("/api/tables/1", COMMENTATOR))["status"] == "in_progress"
            and len(t["dealer_throws"]) >= 2
        )
    )
    open_page(page, hub, "table.html?table=1&token=" + COMMENTATOR)
    t = hub.rest("/api/tables/1", COMMENTATOR)
    expect(page.locator('[data-testid="street"]')).to_have_text(t["round"].capitalize())
    expect_table(page, t, timeout=5000)
    # Slots for the rounds not turned over: 9 throws in all on the dealer's rows.
    tiles = page.locator('[data-testid="rps-dealer"] .throw')
    expect(tiles).to_have_count(9)
    shown = sum(len(r) for r in t["dealer_throws"])
    expect(page.locator('[data-testid="rps-dealer"] .throw.slot')).to_have_count(9 - shown)
    shot(page, "table-commentator")
    # A console's next throw (or reveal) shows within 1 s.
    before = t["dealer_throws"], [s.get("throws") for s in t["seats"]]
    hub.play_until(
        lambda: (
            (
                (x := hub.rest("/api/tables/1", COMMENTATOR))["dealer_throws"],
                [s.get("throws") for s in x["seats"]],
            )
            != before
        )
    )
    t = hub.rest("/api/tables/1", COMMENTATOR)
    if t["status"] == "in_progress":
        expect_table(page, t)


def test_public_table_shows_no_throw(page: Page, hub: RpsHub) -> None:
    open_page(page, hub, "table.html?table=1")
    expect(page.locator('[data-testid="seat"]')).to_have_count(4)
    expect(page.locator('[data-testid="seat-throws"]')).to_have_count(0)
    expect(page.locator('[data-testid="rps-dealer"]')).to_have_count(0)


def test_split_screen_shows_the_same_deal_and_seat_at_every_table(page: Page, hub: RpsHub) -> None:
    live = hub.rest("/api/tables/2", COMMENTATOR)
    deal = live["deal"] or live["last_deal"]
    seat = next(s for s in range(1, 5) if s != hub.config.buttons[deal])
    open_page(page, hub, f"compare.html?deal={deal}&seat={seat}&token={COMMENTATOR}")
    c = hub.rest(f"/api/compare/{deal}/{seat}", COMMENTATOR)
    panels = page.locator('[data-testid="compare-panel"]')
    expect(panels).to_have_count(4)
    for row in c["rows"]:
        panel = page.locator(f'[data-testid="compare-panel"][data-table="{row["table"]}"]')
        if row["status"] == "waiting":
            continue
        expect(panel.locator('[data-testid="panel-throws"]')).to_have_attribute(
            "data-throws", " ".join(row["throws"])
        )
        expect(panel.locator('[data-testid="panel-dealer"]')).to_have_attribute(
            "data-throws", " ".join(row["dealer_throws"])
        )
        expect(panel.locator('[data-testid="panel-score"]')).to_have_text(score_text(row["score"]))
    shot(page, "compare")
    # The public sees the traveller only once every table completed the deal.
    public = httpx.get(f"{hub.url}/api/compare/{deal}/{seat}", timeout=5)
    finished = all(r["status"] in ("complete", "void") for r in c["rows"])
    assert (public.status_code == 200 and public.json().get("data") is not None) == finished


def test_commentator_desk_shows_every_tables_throws(page: Page, hub: RpsHub) -> None:
    page.goto(f"{hub.url}/overlays/commentator.html?tables=1,2,3,4&token={COMMENTATOR}")
    for table in range(1, 5):
        t = hub.rest(f"/api/tables/{table}", COMMENTATOR)
        box = page.locator(f'[data-testid="com-table"][data-table="{table}"]')
        if t["status"] == "idle":
            continue
        expect(box.locator('[data-testid="com-rps-dealer"]')).to_have_attribute(
            "data-throws", " ".join(t["dealer_throws"]), timeout=5000
        )
        for s in t["seats"]:
            row = box.locator(f'[data-testid="com-seat"][data-seat="{s["seat"]}"]')
            if s["seat"] == t["button"]:  # the dealer's throws are the table's, above
                expect(row.locator('[data-testid="com-throws"]')).to_have_count(0)
                continue
            expect(row.locator('[data-testid="com-throws"]')).to_have_attribute(
                "data-throws", " ".join(s["throws"])
            )
    shot(page, "commentator")


def test_seat_ranking_names_what_every_table_shares(page: Page, hub: RpsHub) -> None:
    """In RPS Poker the tables share the dealer's throws, not cards: the seat page says so."""
    open_page(page, hub, "seat.html?seat=1")
    expect(page.locator('[data-testid="after-deals"]')).to_contain_text(
        "Same dealer throws, same seat", timeout=5000
    )
    expect(page.locator('[data-testid="chips-heading"]')).to_have_text("Chips")
