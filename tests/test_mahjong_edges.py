"""An MCR event as the home audience and the commentators meet it: a real ingest, two real
edges and the shipped deploy/nginx.conf on a Redis of the test's own, after the sample's whole
session played by the simulated consoles; the pages in Chromium through nginx. The results
site's player statistics carry no poker betting columns and its hand record names each seat's
wind; the commentator desk's statistics panel has no betting column and sums results in the
game's points (docs/stats.md, docs/site.md); the operator's desk takes a TD's penalty in the
hand's points (docs/mahjong.md)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.browser import new_page
from tests.test_edge_subscribe import COMMENTATOR, OPERATOR, played_venue
from tests.test_mahjong import SAMPLE

pytestmark = pytest.mark.browser

WIND_NAMES = {"E": "East", "S": "South", "W": "West", "N": "North"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """nginx's address in front of the MCR venue, its whole session played."""
    with played_venue(tmp_path_factory.mktemp("mcr-played"), SAMPLE, seed=7) as venue:
        yield venue.lb.url


def site_json(base: str, path: str) -> Any:
    """A data file of the site through nginx, once an edge has it whole: the last deal's
    release reaches the edges a moment after the consoles' last acknowledgement (404 before
    a deal's release, ``complete`` false on the event until then)."""
    with httpx.Client(base_url=base, timeout=10) as http:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            answer = http.get(f"/site/data/{path}")
            assert answer.status_code in (200, 404), (answer.status_code, answer.text[:300])
            if answer.status_code == 200 and answer.json().get("complete", True):
                return answer.json()
            time.sleep(0.1)
    raise AssertionError(f"{path}: not whole within 20 s")


def test_the_site_speaks_mahjong_through_nginx(browser: Browser, site: str) -> None:
    event = site_json(site, "event.json")
    assert event["complete"], event
    stats = site_json(site, "stats.json")
    assert stats["poker"] is False and stats["players"]
    errors: list[str] = []
    page = new_page(browser, 1280, 900, errors)
    try:
        page.goto(f"{site}/site/")
        table = page.locator("#stats")
        expect(table.locator("tbody tr")).to_have_count(len(stats["players"]), timeout=10_000)
        assert table.locator("thead th").all_inner_texts() == ["Player", "Team", "Hands", "Swing"]
        note = table.locator(".note").inner_text()
        assert "Swing:" in note and "VPIP" not in note, note

        deal = site_json(site, "deal/1.json")
        winds = deal["record"]["winds"]
        assert sorted(winds.values()) == ["E", "N", "S", "W"], winds
        page.goto(f"{site}/site/deal/1/")
        record = page.locator("#record")
        expect(record.locator("tbody tr")).to_have_count(4, timeout=10_000)
        seats = record.locator("tbody th").all_inner_texts()
        assert seats == [f"Seat {s} ({WIND_NAMES[winds[str(s)]]})" for s in range(1, 5)], seats
        assert "button" not in record.inner_text()
        prevalent = WIND_NAMES[deal["record"]["prevalent"]]
        expect(record).to_contain_text(f"Prevalent wind: {prevalent}.")
    finally:
        page.context.close()
    assert errors == []


def test_the_desk_speaks_mahjong_through_nginx(browser: Browser, site: str) -> None:
    errors: list[str] = []
    page = new_page(browser, 1920, 1080, errors)
    try:
        page.goto(f"{site}/overlays/commentator.html?token={COMMENTATOR}")
        panel = page.locator('[data-testid="stats-panel"]')
        panel.locator("summary").click()
        expect(panel.locator('[data-testid="stats-player"]').first).to_be_visible(timeout=30_000)
        expect(panel).to_have_attribute("data-poker", "false")
        heads = [
            [th.inner_text().lower() for th in table.locator("thead th").all() if th.is_visible()]
            for table in panel.locator("table").all()
        ]
        assert heads == [["seat", "field avg", "best"], ["team", "player", "hands", "swing"]]
        for testid, text in [
            ("swings-unit", "points"),
            ("proj-unit", "points"),
            ("l4l-unit", "l4l points"),
            ("run-unit", "run points"),
        ]:
            expect(page.locator(f'[data-testid="{testid}"]')).to_have_text(
                re.compile(f"^{text}$", re.IGNORECASE)
            )
        assert "chips" not in page.locator(".com-side").inner_text().lower()
    finally:
        page.context.close()
    assert errors == []


def test_the_operator_desk_speaks_mahjong_through_nginx(browser: Browser, site: str) -> None:
    """The TD at an MCR event, through nginx and an edge after the played session: a penalty's
    chips are the hand's points, in the form, the confirmation and the corrections log."""
    errors: list[str] = []
    page = new_page(browser, 1920, 1080, errors)
    try:
        page.goto(f"{site}/overlays/operator.html#token={OPERATOR}")
        form = page.locator('[data-testid="td-penalty"]')
        expect(form.locator('input[name="chips"]')).to_have_attribute(
            "placeholder", "hand points", timeout=10_000
        )
        page.locator('[data-testid="td-by"]').fill("TD Ana Ruiz")
        for name, value in (("table", 1), ("seat", 2), ("chips", 16), ("reason", "slow play")):
            form.locator(f'input[name="{name}"]').fill(str(value))
        form.locator('[data-testid="td-penalty-send"]').click()
        expect(page.locator('[data-testid="td-ask-text"]')).to_contain_text(
            "Penalty 16 hand points to table 1 seat 2"
        )
        page.locator('[data-testid="td-ask-yes"]').click()
        status = page.locator('[data-testid="td-status"]')
        expect(status).to_have_text("Penalty: done.", timeout=10_000)
        row = page.locator('[data-testid="correction-row"][data-type="penalty"]').first
        expect(row).to_contain_text("16 hand points", timeout=10_000)
    finally:
        page.context.close()
    assert errors == []
