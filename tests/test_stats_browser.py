"""The statistics on screen, in Debian's Chromium against the real hub (the ingest and its
clients on the embedded bus, the sample session sent through the console protocol): the
commentator desk's statistics panel shows the deal it follows seat by seat (the hub's
preflop counts, field averages) and its seat's players' VPIP/PFR/AF/WTSD; the stats overlay,
without a token, shows the public's statistics (released deals only) and one deal's seats; the
desk's figures move as hands settle. Three page loads; docs/stats.md's pictures are written
here."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.hubharness import COMMENTATOR
from tests.test_overlays_hub import HubThread

pytestmark = pytest.mark.browser

PRELOAD = 900  # events of the sample session played before the pages open
DOCS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
SOON = 5000


@pytest.fixture(scope="module")
def hub() -> Iterator[HubThread]:
    h = HubThread("stb")
    h.start()
    h.preload(PRELOAD)
    yield h
    h.stop()


def picture(page: Page, name: str) -> None:
    """The guide's picture (docs/stats.md): ``docs/screenshots/{name}.png``."""
    DOCS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(600)  # (the entry animation)
    page.screenshot(path=str(DOCS / f"{name}.png"))


def pct(v: float | None) -> str:
    return "\u2013" if v is None else f"{math.floor(v + 0.5)}%"  # (JavaScript's Math.round)


def signed(n: float) -> str:
    """As the pages write it: rounded as JavaScript's ``Math.round``, a true minus sign."""
    whole = math.floor(n + 0.5)
    return f"{whole:+,}".replace("-", "\u2212") if whole else "0"


def test_the_desk_panel_shows_the_deal_on_air_seat_by_seat(page: Page, hub: HubThread) -> None:
    live = hub.rest("/api/stats", COMMENTATOR)
    counted = {d: hub.rest(f"/api/dealstats/{d}", COMMENTATOR) for d in live["deals"]}
    deal = max(counted, key=lambda d: (counted[d]["seats"][0]["tables"], d))
    seat = counted[deal]["seats"][1]
    assert seat["tables"] >= 2, counted
    # The deal and seat the desk shows: the URL's (else the compare slot's, as on air).
    page.goto(
        f"{hub.url}/overlays/commentator.html?deal={deal}&seat={seat['seat']}#token={COMMENTATOR}"
    )
    heading = page.locator('[data-testid="stats-heading"]')
    expect(heading).to_have_text(f"Statistics · deal {deal} · seat {seat['seat']}", timeout=SOON)
    panel = page.locator('[data-testid="stats-panel"]')
    expect(panel).not_to_have_attribute("open", "")  # shut: the desk fits 1080 px
    panel.locator("summary").click()  # the commentator opens it
    expect(panel).to_have_attribute("open", "")
    row = page.locator(f'[data-testid="stats-seat"][data-seat="{seat["seat"]}"]')
    for k in ("fold", "call", "raise", "check"):
        expect(row.locator(f'[data-testid="pf-{k}"]')).to_have_text(str(seat["preflop"][k]))
    players = page.locator('[data-testid="stats-player"]')
    expect(players).to_have_count(len(seat["rows"]), timeout=SOON)
    now = hub.rest("/api/stats", COMMENTATOR)  # (play stands still while no event is sent)
    by_id = {p["id"]: p for p in now["players"]}
    for r in seat["rows"]:
        p = by_id[r["id"]]
        shown = page.locator(f'[data-testid="stats-player"][data-id="{r["id"]}"]')
        expect(shown.locator('[data-testid="stats-vpip"]')).to_have_text(pct(p["vpip"]))
        expect(shown.locator('[data-testid="stats-pfr"]')).to_have_text(pct(p["pfr"]))
        expect(shown.locator('[data-testid="stats-wtsd"]')).to_have_text(pct(p["wtsd"]))
        expect(shown.locator('[data-testid="stats-swing"]')).to_have_text(signed(p["swing"]))
    picture(page, "stats-desk")
    # Play moves it: the next hands settle, and the panel shows the hub's counts again.
    hub.play(hub.events[PRELOAD : PRELOAD + 150])
    moved = hub.rest("/api/stats", COMMENTATOR)
    for r in seat["rows"]:
        p = next(x for x in moved["players"] if x["id"] == r["id"])
        shown = page.locator(f'[data-testid="stats-player"][data-id="{r["id"]}"]')
        expect(shown.locator('[data-testid="stats-vpip"]')).to_have_text(
            pct(p["vpip"]), timeout=SOON
        )
        expect(shown.locator('[data-testid="stats-swing"]')).to_have_text(signed(p["swing"]))


def test_the_overlay_shows_the_public_statistics_and_a_deal(page: Page, hub: HubThread) -> None:
    public: dict[str, Any] = hub.rest("/api/stats")
    assert public["deals"], "the preload releases deals"
    live = hub.rest("/api/stats", COMMENTATOR)
    assert set(public["deals"]) <= set(live["deals"])
    unreleased = sorted(set(range(1, hub.config.deals + 1)) - set(public["deals"]))
    if unreleased:
        response = httpx.get(f"{hub.url}/api/dealstats/{unreleased[-1]}", timeout=5)
        assert response.status_code == 404  # the embargo
    page.goto(f"{hub.url}/overlays/stats.html?top=6")
    rows = page.locator('[data-testid="stats-player"]')
    expect(rows).to_have_count(6, timeout=SOON)
    best = sorted(
        (p for p in public["players"] if p["hands"]), key=lambda p: (-p["swing"], p["id"])
    )[:6]
    for i, p in enumerate(best):
        expect(rows.nth(i)).to_have_attribute("data-id", p["id"])
        expect(rows.nth(i).locator('[data-testid="stats-vpip"]')).to_have_text(pct(p["vpip"]))
        expect(rows.nth(i).locator('[data-testid="stats-swing"]')).to_have_text(signed(p["swing"]))
    expect(page.locator('[data-testid="gfx"]')).to_have_attribute("data-visible", "true")
    picture(page, "stats-overlay")
    # One deal, seat by seat, in the same page (its selection moved as a playout's update()).
    deal = public["deals"][0]
    d = hub.rest(f"/api/dealstats/{deal}")
    page.evaluate("(deal) => { history.replaceState(null, '', `?deal=${deal}`); }", deal)
    page.reload()
    seats = page.locator('[data-testid="stats-seat"]')
    expect(seats).to_have_count(sum(1 for s in d["seats"] if s["tables"]), timeout=SOON)
    expect(page.locator('[data-testid="stats-title"]')).to_have_text(f"Deal {deal} · seat by seat")
    first = next(s for s in d["seats"] if s["tables"])
    best_row = first["best"]
    expect(seats.first.locator('[data-testid="stats-best"]')).to_have_text(
        f"T{best_row['table']} {signed(best_row['chips'])}"
    )
    picture(page, "stats-overlay-deal")
