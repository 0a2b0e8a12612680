"""The multi-table replayer (overlays/site/replay.html) in Chromium, on a released deal of a
played session written by the static export and served by `python -m http.server`: stepped
action by action at three tables, every table on the cursor's street with the same number of
actions there (or all it had), by keyboard and by its buttons; phones stack the tables and show
one street at a time; the step is announced in a status region; reduced motion is honoured;
axe-core finds no WCAG 2.2 A/AA violation (tests/a11y.py). And once through a hub (role all):
``/site/replay/{d}/`` opened before the deal is public says so, follows the public feed and
shows the tables when the deal is released; the deal's page links to it, it links back."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from hub.cli.site_export import public_engine, site_builder, write_site
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.files.eventlog import log_line
from hub.roles.embedded import OVERLAYS
from tests.a11y import assert_accessible
from tests.browser import new_page, screenshot
from tests.nginx import free_port
from tests.test_overlays_hub import HubThread
from tests.test_site_browser import FIRST, TENTH
from tests.test_site_export import SAMPLE, played

ROOT = Path(__file__).resolve().parent.parent
STREETS = ["preflop", "flop", "turn", "river"]
TABLES = [2, 4, 6]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A whole session exported; the released deal whose three tables went furthest."""
    out = tmp_path_factory.mktemp("replay") / "site"
    config = load_config(SAMPLE)
    records = played(config, 1.0, seed=7)
    decks = load_decks(config, SAMPLE.parent, {})
    engine, _ = public_engine(config, decks, [log_line(r) for r in records], "test", time.time())
    site = site_builder(engine, OVERLAYS)
    write_site(out, site.paths(), site.document)

    def doc(d: int) -> dict[str, Any]:
        return json.loads((out / "data" / "deal" / f"{d}.json").read_text())  # type: ignore[no-any-return]

    def rows(d: int) -> list[dict[str, Any]]:
        by = {r["table"]: r for r in doc(d)["compare"]["1"]["rows"]}
        return [by[t] for t in TABLES]

    def reach(d: int) -> tuple[int, int]:
        streets = [{STREETS.index(a["street"]) for a in r["actions"]} for r in rows(d)]
        return (min(max(s) for s in streets), sum(len(r["actions"]) for r in rows(d)))

    deal = max(site.event()["released"], key=reach)
    assert reach(deal)[0] >= 1, "no deal reached the flop at the three tables"
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=out,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{url}/replay/{deal}/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        results = {t["table"]: t["result"] for t in doc(deal)["traveller"]["tables"]}
        yield {
            "url": f"{url}/replay/{deal}/?tables=2,4,6",
            "rows": rows(deal),
            "results": [results[t] for t in TABLES],
        }
    finally:
        server.terminate()
        server.wait(timeout=5)


def expected_steps(rows: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """Every step, street by street, action number by action number across the tables."""
    return [
        (si, k)
        for si, street in enumerate(STREETS)
        for k in range(max(sum(a["street"] == street for a in r["actions"]) for r in rows))
    ]


def shown(row: dict[str, Any], cursor: tuple[int, int]) -> int:
    """How many of a table's actions step ``cursor`` shows: its streets before the cursor's in
    full, on the cursor's street up to the same number."""
    si, k = cursor
    count = 0
    on: dict[int, int] = {}
    for a in row["actions"]:
        s = STREETS.index(a["street"])
        n = on.get(s, 0)
        on[s] = n + 1
        count += s < si or (s == si and n <= k)
    return count


def acts(page: Page) -> list[int]:
    return page.locator('[data-testid="table"]').evaluate_all(
        "els => els.map(e => e.querySelectorAll('[data-testid=act]').length)"
    )


def streets(page: Page) -> list[str]:
    return page.locator('[data-testid="table-street"]').all_text_contents()


def open_replay(browser: Browser, url: str, w: int, h: int, errors: list[str]) -> Page:
    page = new_page(browser, w, h, errors)
    page.goto(url)
    expect(page.locator('[data-testid="step-status"]')).to_contain_text("Step 0 of")
    return page


def test_steps_a_deal_at_three_tables_aligned_street_by_street(
    browser: Browser, served: dict[str, Any]
) -> None:
    errors: list[str] = []
    page = open_replay(browser, served["url"], 1920, 1080, errors)
    rows = served["rows"]
    steps = expected_steps(rows)
    try:
        tables = page.locator('[data-testid="table"]')
        assert tables.evaluate_all("els => els.map(e => Number(e.dataset.table))") == TABLES
        boxes = [tables.nth(i).bounding_box() for i in range(3)]
        assert boxes[0]["y"] == boxes[1]["y"] == boxes[2]["y"]  # side by side
        assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"]
        status = page.locator('[data-testid="step-status"]')
        assert status.get_attribute("role") == "status"
        assert f"of {len(steps)}" in status.text_content()
        assert acts(page) == [0, 0, 0]
        page.locator('[data-testid="tables"]').focus()
        for j, cursor in enumerate(steps, 1):  # action by action, from the keyboard
            page.keyboard.press("ArrowRight")
            expect(status).to_contain_text(f"Step {j} of {len(steps)}")
            assert acts(page) == [shown(r, cursor) for r in rows], f"step {j} {cursor}"
            label = {0: "Pre-flop", 1: "Flop", 2: "Turn", 3: "River"}[cursor[0]]
            assert streets(page) == [label] * 3
        assert "End of the deal" in status.text_content()
        cells = page.locator('[data-testid="table"] tbody tr td.state').all_text_contents()
        chips = [int(c.replace("\u2212", "-").replace(",", "")) for c in cells]
        assert chips == [r[str(s)] for r in served["results"] for s in range(1, 7)]
        # The buttons: back to the start, then a street at a time (each table on the same street).
        page.get_by_role("button", name="Start").click()
        assert acts(page) == [0, 0, 0]
        page.get_by_role("button", name="Street", exact=False).last.click()
        first_flop = next(j for j, c in enumerate(steps) if c[0] == 1)
        page.get_by_role("button", name="Street", exact=False).last.click()
        expect(status).to_contain_text(f"Step {first_flop + 1} of")
        assert acts(page) == [shown(r, steps[first_flop]) for r in rows]
        assert streets(page) == ["Flop"] * 3
        boards = page.locator('[data-testid="table-board"]').evaluate_all(
            "els => els.map(e => e.querySelectorAll('[data-card]').length)"
        )
        reached = [any(a["street"] != "preflop" for a in r["actions"]) for r in rows]
        assert boards == [3 if r else b for r, b in zip(reached, boards, strict=True)]
        names = page.locator('[data-testid="table-board"] [data-card]').evaluate_all(
            "els => els.map(e => e.getAttribute('aria-label'))"
        )
        assert names and all(" of " in n for n in names)  # "Queen of hearts": never colour alone
        for button in page.locator(".controls button").all():
            box = button.bounding_box()
            assert box["width"] >= 24 and box["height"] >= 24
        page.get_by_role("button", name="Play").click()  # played: it steps by itself
        expect(page.locator("body")).not_to_have_attribute(
            "data-pos", str(first_flop + 1), timeout=4000
        )
        page.get_by_role("button", name="Pause").click()
        screenshot(page, "replay-1920", 300)
    finally:
        page.context.close()
    assert errors == []


def test_a_phone_stacks_the_tables_one_street_at_a_time(
    browser: Browser, served: dict[str, Any]
) -> None:
    errors: list[str] = []
    page = open_replay(browser, served["url"], 390, 844, errors)
    page.emulate_media(reduced_motion="reduce")
    rows = served["rows"]
    steps = expected_steps(rows)
    try:
        status = page.locator('[data-testid="step-status"]')
        tables = page.locator('[data-testid="table"]')
        boxes = [tables.nth(i).bounding_box() for i in range(3)]
        assert boxes[0]["y"] < boxes[1]["y"] < boxes[2]["y"]  # stacked
        assert all(b["x"] + b["width"] <= 390 for b in boxes)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page scrolls sideways: {width}px"
        page.get_by_role("button", name="Street", exact=False).last.click()
        page.get_by_role("button", name="Street", exact=False).last.click()
        first_flop = next(j for j, c in enumerate(steps) if c[0] == 1)
        expect(status).to_contain_text(f"Step {first_flop + 1} of")
        # One street at a time: the flop's actions listed, the pre-flop folded into a line.
        on_flop = [
            sum(a["street"] == "flop" for a in r["actions"][: shown(r, steps[first_flop])])
            for r in rows
        ]
        assert acts(page) == on_flop
        earlier = page.locator('[data-testid="table"] .earlier').all_text_contents()
        assert earlier and all(e.startswith("Pre-flop: ") for e in earlier)
        page.keyboard.press("End")
        expect(status).to_contain_text("End of the deal")
        animation = page.locator("[data-card]").first.evaluate(
            "e => getComputedStyle(e).animationName"
        )
        assert animation == "none"  # prefers-reduced-motion
        screenshot(page, "replay-390", 300)
    finally:
        page.context.close()
    assert errors == []


@pytest.mark.parametrize("size", [(1920, 1080), (390, 844)])
def test_axe_finds_no_wcag_22_aa_violation_at_any_step(
    browser: Browser, served: dict[str, Any], size: tuple[int, int]
) -> None:
    """axe-core (tests/a11y.py: WCAG 2.0, 2.1 and 2.2 A/AA) at the start, mid-deal, the end."""
    errors: list[str] = []
    page = open_replay(browser, served["url"], *size, errors)
    try:
        for key in ("Home", "PageDown", "PageDown", "End"):
            page.keyboard.press(key)
            assert_accessible(page, f"the replayer at {size[0]}x{size[1]} after {key}")
    finally:
        page.context.close()
    assert errors == []


def test_live_on_a_hub_the_replayer_follows_the_release(browser: Browser) -> None:
    """Served by a hub: the replayer of a deal no group has released yet says so, takes the
    tables from the public feed when the deal is released (no reload), and links to the deal's
    page, whose own link opens the replayer at its first three tables."""
    hub = HubThread("replaylive")
    hub.start()
    errors: list[str] = []
    page = new_page(browser, 1280, 800, errors)
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    try:
        hub.preload(FIRST)  # (deal 10 is released by the events up to TENTH)
        assert hub.source is not None and not hub.source.engine.release.deal_released(10)
        page.goto(f"{hub.url}/site/replay/10/?tables=5,1")
        status = page.locator('[data-testid="step-status"]')
        expect(status).to_have_text("Deal 10 is not released yet.")
        assert page.locator('[data-testid="table"]').count() == 0
        hub.play(hub.events[FIRST:TENTH])  # (the page read its data once: 404; now the feed)
        expect(status).to_contain_text("Step 0 of", timeout=10_000)
        tables = page.locator('[data-testid="table"]')
        expect(tables).to_have_count(2)
        assert tables.evaluate_all("els => els.map(e => Number(e.dataset.table))") == [5, 1]
        page.get_by_test_id("deal-link").click()  # to the deal's page of the site
        expect(page.locator("#traveller table tbody tr")).to_have_count(6, timeout=10_000)
        assert page.url == f"{hub.url}/site/deal/10/"
        link = page.get_by_test_id("replay-link")
        assert link.get_attribute("href") == "../../replay/10/?tables=1,2,3"
        link.click()
        expect(page.locator('[data-testid="table"]')).to_have_count(3, timeout=10_000)
        page.get_by_test_id("home").click()  # "Results": the event's page
        expect(page.locator("body[data-loaded]")).to_have_count(1, timeout=10_000)
        assert page.url == f"{hub.url}/site/"
    finally:
        page.context.close()
        hub.stop()
    # the one answer missing: the deal's data before its release (the browser logs the 404)
    assert missing == [f"{hub.url}/site/data/deal/10.json"]
    assert errors == [
        "Failed to load resource: the server responded with a status of 404 (Not Found)"
    ]
