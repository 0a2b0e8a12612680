"""Suggested split-screens in the operator panel, in Debian's Chromium against the real hub (the
ingest and its clients on the embedded bus, the sample session sent through the console
protocol): the list shows the hub's live ranking and follows it; a Cue goes to the mixer's
preview, which handles it (``event.preventDefault()``), and nothing goes on air; a Cue no one
handles takes the compare slot at once. The public REST list holds released deals only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.hubharness import COMMENTATOR, OPERATOR
from tests.test_overlays_hub import FAST, HubThread, shot

pytestmark = pytest.mark.browser

PRELOAD = 900  # events of the sample session played before the panel opens


@pytest.fixture(scope="module")
def hub() -> Iterator[HubThread]:
    h = HubThread("sug")
    h.start()
    h.preload(PRELOAD)
    yield h
    h.stop()


def suggestions(hub: HubThread, token: str | None) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = hub.rest("/api/suggestions", token)["suggestions"]
    return listed


def expect_list(page: Page, listed: list[dict[str, Any]], timeout: int = 5000) -> None:
    rows = page.locator('[data-testid="suggestion"]')
    expect(rows).to_have_count(len(listed), timeout=timeout)
    for i, e in enumerate(listed):
        row = rows.nth(i)
        expect(row).to_have_attribute("data-deal", str(e["deal"]), timeout=timeout)
        expect(row).to_have_attribute("data-seat", str(e["seat"]))
        expect(row.locator('[data-testid="suggestion-reasons"]')).to_have_text(
            " · ".join(e["reasons"])
        )
        tables = " ".join(f"T{t}" for t in e["tables"])
        expect(row.locator('[data-testid="suggestion-tables"]')).to_have_text(tables)


def compare_slot(hub: HubThread) -> dict[str, Any]:
    slot: dict[str, Any] = hub.rest("/api/onair", OPERATOR)["slots"]["compare"]
    return slot


def test_the_panel_lists_the_suggestions_and_a_cue_takes_or_goes_to_the_preview(
    page: Page, hub: HubThread
) -> None:
    live = suggestions(hub, COMMENTATOR)
    assert len(live) >= 2, live
    page.goto(f"{hub.url}/overlays/operator.html?token={OPERATOR}")
    expect_list(page, live)
    shot(page, "operator-suggested")

    # The panel's mixer handles the cue (``event.preventDefault()``): the comparison is in its
    # preview, offered for the cue list, and nothing goes on air.
    page.evaluate(
        """() => window.addEventListener('duplicast:cue', (e) => { window.cued = e.detail; },
             { once: true })"""
    )
    before = compare_slot(hub)
    second = live[1]
    page.locator('[data-testid="suggestion-cue"]').nth(1).click()
    value = {"deal": second["deal"], "seat": second["seat"], "tables": second["tables"]}
    assert page.evaluate("() => window.cued") == {"slot": "compare", "value": value}
    tables = ", ".join(map(str, second["tables"]))
    expect(page.locator('[data-testid="preview-summary"]')).to_have_text(
        f"compare · deal {second['deal']} · seat {second['seat']} · tables {tables}",
        timeout=FAST,
    )
    page.wait_for_timeout(300)
    assert compare_slot(hub) == before

    # A panel where no listener handles it (here the cue reaches no listener at all): Cue
    # takes the compare slot at once, as the slot's Take does.
    page.evaluate(
        """() => { window.dispatchEvent = (e) => { window.unheard = e.detail; return true; }; }"""
    )
    first = live[0]
    page.locator('[data-testid="suggestion-cue"]').first.click()
    slot = page.locator('[data-testid="slot-compare"] [data-testid="slot-current"]')
    tables = ", ".join(map(str, first["tables"]))
    expect(slot).to_have_text(
        f"on air · deal {first['deal']} · seat {first['seat']} · tables {tables}", timeout=5000
    )
    assert page.evaluate("() => window.unheard")["value"]["deal"] == first["deal"]
    got = compare_slot(hub)
    assert got["visible"] is True
    assert (got["deal"], got["seat"], got["tables"]) == (
        first["deal"],
        first["seat"],
        first["tables"],
    )

    # The list follows the hub's ranking as play goes on.
    hub.play(hub.events[hub.sent : hub.sent + 300])
    hub.sent += 300
    expect_list(page, suggestions(hub, COMMENTATOR))


def test_the_public_list_holds_released_deals_only(hub: HubThread) -> None:
    public = suggestions(hub, None)
    live = suggestions(hub, COMMENTATOR)
    released = [d for d in range(1, hub.config.deals + 1) if released_deal(hub, d)]
    assert {e["deal"] for e in live} - set(released), "some live entry is of a deal in play"
    assert all(e["deal"] in released for e in public)
    expected = [e for e in live if e["deal"] in released]
    assert public[: len(expected)] == expected[: len(public)]


def released_deal(hub: HubThread, deal: int) -> bool:
    return httpx.get(f"{hub.url}/api/deals/{deal}", timeout=5).status_code == 200


def test_a_cue_pressed_across_a_panel_update_still_clicks(page: Page, hub: HubThread) -> None:
    """Every `ops` update redraws the operator's suggestions: a Cue pressed before one and
    released after it is a click on that Cue still. (The list was drawn anew on every update:
    the press and the release landed on two different buttons, and the click was lost.)"""
    page.goto(f"{hub.url}/overlays/operator.html?token={OPERATOR}")
    live = suggestions(hub, COMMENTATOR)
    expect_list(page, live)
    first = live[0]
    cue = page.locator('[data-testid="suggestion-cue"]').first
    cue.hover()  # (the pointer on it, the desk still)
    page.mouse.down()
    # a control surface moves the preview: the panel redraws, the suggestions unchanged
    moved = httpx.post(
        f"{hub.url}/api/control/preview",
        json={"slot": "seat", "value": {"seat": 3}},
        headers={"Authorization": f"Bearer {OPERATOR}"},
        timeout=5,
    )
    assert moved.status_code == 200, moved.text
    summary = page.locator('[data-testid="preview-summary"]')
    expect(summary).to_have_text("seat · seat 3", timeout=5000)
    page.mouse.up()
    tables = ", ".join(map(str, first["tables"]))
    expect(summary).to_have_text(
        f"compare · deal {first['deal']} · seat {first['seat']} · tables {tables}", timeout=5000
    )
