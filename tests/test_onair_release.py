"""Nothing unreleased on air by accident (issue #30 items 3 and 8), in Chromium against a real
hub with a program delay and a second output, after part of the sample session was played (some
deals released, some still at the tables): the operator panel marks every deal not released
(suggestions, slot rows, preview, cues) and asks before taking one to air, naming the sources
that would show it and those that stay blank; confirmed, it goes on air and the programme
sources stay blank for it (no hole card, no board); the on-air monitor shows what a programme
source shows; the slot rows never read "null" after a Take or Cut from the mixer, and their own
Take works at once."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser import new_page, screenshot
from tests.hubharness import COMMENTATOR, OPERATOR
from tests.test_overlays_hub import PRELOAD, HubThread

pytestmark = pytest.mark.browser
SOON = 5000  # ms
DELAY, VENUE = 1.0, 0.5  # seconds: the default output's and the venue's


@pytest.fixture(scope="module")
def hub() -> Iterator[HubThread]:
    h = HubThread("air")
    h.config = dataclasses.replace(h.config, program_delay=DELAY, program_outputs={"venue": VENUE})
    h.start()
    h.preload(PRELOAD)
    time.sleep(DELAY + 0.5)  # the program feed has shown the session so far
    yield h
    h.stop()


def tid(page: Page, name: str) -> Any:
    return page.locator(f'[data-testid="{name}"]')


def released(hub: HubThread) -> tuple[set[int], set[int]]:
    """The deals released, and those in play or completed somewhere but not released."""
    rows = hub.ops()["release"]
    out = {int(r["deal"]) for r in rows if r["released"]}
    played = {int(r["deal"]) for r in rows if r["tables_complete"]}
    playing = {int(t["deal"]) for t in hub.ops()["tables"] if t["deal"] is not None}
    return out, (played | playing) - out


def onair(hub: HubThread, slot: str) -> dict[str, Any]:
    return dict(hub.rest("/api/onair", OPERATOR)["slots"][slot])


def open_desk(browser: Browser, hub: HubThread, errors: list[str]) -> Page:
    desk = new_page(browser, 1920, 1080, errors)
    desk.goto(f"{hub.url}/overlays/operator.html?token={OPERATOR}")
    expect(tid(desk, "console-row")).to_have_count(6, timeout=SOON)
    expect(tid(desk, "released-cell").first).to_be_visible(timeout=SOON)
    return desk


def preview_compare(desk: Page, deal: int, seat: int, tables: str) -> None:
    row = tid(desk, "slot-compare")
    row.locator('input[name="deal"]').fill(str(deal))
    row.locator('input[name="seat"]').fill(str(seat))
    row.locator('input[name="tables"]').fill(tables)
    row.locator('[data-testid="slot-preview"]').click()


def source_shows(page: Page) -> dict[str, Any]:
    """What an overlay page shows: its graphic visible or not, its text, and whether any card
    (hole or board) is on screen."""
    return dict(
        page.evaluate(
            """() => {
      const gfx = document.querySelector('[data-testid="gfx"]');
      const shown = (n) => n.checkVisibility();
      const cards = [...document.querySelectorAll('.card')].filter(shown).length;
      const holes = '[data-testid="hole"], [data-testid="panel-hole"]';
      const hole = [...document.querySelectorAll(holes)].filter(shown).length;
      return { visible: gfx.dataset.visible, text: gfx.dataset.visible === 'true'
        ? gfx.innerText.replace(/\\s+/g, ' ').trim() : '', cards: gfx.dataset.visible === 'true'
        ? cards : 0, hole };
    }"""
        )
    )


def test_an_unreleased_deal_is_marked_and_asked_for_before_it_goes_on_air(
    browser: Browser, hub: HubThread
) -> None:
    out, held = released(hub)
    assert out and held, (out, held)  # part of a session: some deals public, some not
    unrel, rel = min(held), min(out)
    errors: list[str] = []
    desk = open_desk(browser, hub, errors)
    program = new_page(browser, 1920, 1080, errors)
    program.goto(f"{hub.url}/overlays/compare.html?slot=1&feed=program")
    venue = new_page(browser, 1920, 1080, errors)
    venue.goto(f"{hub.url}/overlays/compare.html?slot=1&feed=program&output=venue")
    public = new_page(browser, 1920, 1080, errors)
    public.goto(f"{hub.url}/overlays/compare.html?slot=1")

    # Suggestions: each one of a deal not released is marked, the released ones are not.
    suggestions = tid(desk, "suggestion")
    expect(suggestions.first).to_be_visible(timeout=SOON)
    seen = {"marked": 0, "clear": 0}
    for i in range(suggestions.count()):
        s = suggestions.nth(i)
        deal = int(s.get_attribute("data-deal") or 0)
        mark = s.locator('[data-testid="suggestion-unreleased"]')
        if deal in out:
            expect(mark).to_have_count(0)
            seen["clear"] += 1
        else:
            expect(mark).to_have_text("not released")
            seen["marked"] += 1
    assert seen["marked"], seen  # the live list offers deals still at the tables

    # The slot row and the preview mark it.
    preview_compare(desk, unrel, 1, "")
    expect(tid(desk, "slot-compare").locator('[data-testid="slot-unreleased"]')).to_have_text(
        f"deal {unrel} not released"
    )
    expect(tid(desk, "preview-unreleased")).to_contain_text(f"deal {unrel} not released")
    before = onair(hub, "compare")

    # Take asks, naming the sources; Cancel sends nothing.
    tid(desk, "mix-take").click()
    dialog = tid(desk, "unreleased-dialog")
    expect(dialog).to_be_visible(timeout=SOON)
    expect(dialog.locator("h3")).to_have_text(f"Deal {unrel} is not released")
    shows = tid(desk, "unreleased-source-shows").all_inner_texts()
    blank = tid(desk, "unreleased-source-blank").all_inner_texts()
    assert len(shows) == 1 and "token=" in shows[0], shows
    assert len(blank) == 3, blank
    assert "compare.html?slot=1&feed=program (programme, program, 1 s behind)" in blank[0]
    assert "compare.html?slot=1&feed=program&output=venue (programme, venue" in blank[1]
    assert "compare.html?slot=1 (public, no token)" in blank[2]
    screenshot(desk, "onair-unreleased-dialog", 300)
    tid(desk, "unreleased-cancel").click()
    expect(dialog).to_be_hidden()
    desk.wait_for_timeout(500)
    assert onair(hub, "compare") == before  # nothing sent

    # A hotkey Take asks too; confirmed, the deal goes on air.
    desk.locator("h1").click(position={"x": 5, "y": 5})
    desk.keyboard.press("Space")
    expect(dialog).to_be_visible(timeout=SOON)
    tid(desk, "unreleased-confirm").click()
    expect(dialog).to_be_hidden()
    deadline = time.monotonic() + 5
    while onair(hub, "compare").get("deal") != unrel:
        assert time.monotonic() < deadline, onair(hub, "compare")
        time.sleep(0.1)
    assert onair(hub, "compare")["visible"] is True

    # The programme sources stay blank for it: no card, no hole card, no board.
    air = desk.frame_locator('[data-testid="air-frame"]')
    expect(tid(desk, "air-feed")).to_contain_text("program feed, 1 s behind")
    src = tid(desk, "air-frame").get_attribute("src") or ""
    assert "feed=program" in src and "token" not in src, src
    desk.wait_for_timeout(DELAY * 1000 + 1500)
    for page in (program, venue, public):
        assert source_shows(page) == {"visible": "false", "text": "", "cards": 0, "hole": 0}
    # The on-air monitor shows what a programme source shows: blank too.
    expect(air.locator('[data-testid="gfx"]')).to_have_attribute("data-visible", "false")
    # The slot row says the live feed has it now.
    expect(tid(desk, "slot-compare").locator('[data-testid="slot-unreleased"]')).to_contain_text(
        "on the live feed now"
    )

    # A released deal goes on air without a question, and the on-air monitor shows exactly
    # what the program source shows.
    preview_compare(desk, rel, 2, "")
    expect(tid(desk, "preview-unreleased")).to_be_hidden()
    tid(desk, "mix-take").click()
    expect(program.locator('[data-testid="gfx"]')).to_have_attribute(
        "data-visible", "true", timeout=SOON + DELAY * 1000
    )
    expect(dialog).to_be_hidden()
    expect(tid(desk, "slot-compare").locator('[data-testid="slot-unreleased"]')).to_be_hidden()
    expect(program.locator('[data-testid="compare-title"]')).to_have_text(f"Deal {rel} · Seat 2")
    expect(air.locator('[data-testid="compare-title"]')).to_have_text(
        f"Deal {rel} · Seat 2", timeout=SOON
    )
    desk.wait_for_timeout(1500)  # both settled
    monitor = air.locator('[data-testid="gfx"]')
    assert monitor.get_attribute("data-visible") == "true"
    shown = source_shows(program)
    assert monitor.evaluate("(g) => g.innerText.replace(/\\s+/g, ' ').trim()") == shown["text"]
    screenshot(desk, "onair-monitor-program", 300)
    assert errors == []


def test_the_slot_rows_after_a_take_or_cut_from_the_mixer(browser: Browser, hub: HubThread) -> None:
    """Issue #30 item 8: Take and Cut from the mixer send every key of the slot (null: the URL
    decides); the slot rows then show those as empty fields, never "null", and their own Take
    is accepted at once."""
    out, _ = released(hub)
    errors: list[str] = []
    desk = open_desk(browser, hub, errors)
    board = tid(desk, "slot-leaderboard")
    board.locator('select[name="view"]').select_option("running")
    board.locator('[data-testid="slot-preview"]').click()
    tid(desk, "mix-take").click()
    expect(board.locator('[data-testid="slot-current"]')).to_have_text(
        "on air · running", timeout=SOON
    )
    seat = tid(desk, "slot-seat")
    seat.locator('input[name="seat"]').fill("3")
    seat.locator('[data-testid="slot-preview"]').click()
    tid(desk, "mix-cut").click()
    expect(seat.locator('[data-testid="slot-current"]')).to_contain_text("seat 3", timeout=SOON)
    preview_compare(desk, min(out), 1, "")
    tid(desk, "mix-take").click()
    compare = tid(desk, "slot-compare")
    expect(compare.locator('[data-testid="slot-current"]')).to_contain_text(
        f"deal {min(out)}", timeout=SOON
    )
    desk.locator("h1").click(position={"x": 5, "y": 5})  # no field being edited
    values = desk.evaluate(
        """() => [...document.querySelectorAll('[data-testid="slots"] :is(input, select)')]
          .map((i) => [i.closest('.slot').dataset.slot, i.name, i.value])"""
    )
    assert values, values
    assert not [v for v in values if v[2] in ("null", "undefined", "NaN")], values
    fields = {(s, n): v for s, n, v in values}
    assert fields[("leaderboard", "group")] == "" and fields[("leaderboard", "view")] == "running"
    assert fields[("compare", "tables")] == "" and fields[("compare", "deal")] == str(min(out))
    # Each row's own Take works at once, with nothing emptied by hand.
    for slot in ("leaderboard", "seat", "compare"):
        tid(desk, f"slot-{slot}").locator('[data-testid="slot-take"]').click()
        desk.wait_for_timeout(400)
        assert tid(desk, "op-error").inner_text() == "", slot
        assert tid(desk, "mixer-msg").inner_text() == "", slot
    board.locator('input[name="group"]').fill("A")
    board.locator('[data-testid="slot-take"]').click()
    deadline = time.monotonic() + 5
    while onair(hub, "leaderboard").get("group") != "A":
        assert time.monotonic() < deadline, onair(hub, "leaderboard")
        time.sleep(0.1)
    assert onair(hub, "leaderboard")["view"] == "running"
    assert tid(desk, "op-error").inner_text() == ""
    assert errors == []


def boxes_overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def test_the_program_hold_is_in_the_broadcast_look(browser: Browser, hub: HubThread) -> None:
    """Issue #30 item 4: the program feed's hold ("Hand in progress · deal 7 · table 3") is set
    in the overlays' typeface on their panel, on the scaled stage, inside title-safe."""
    playing = [t for t in hub.ops()["tables"] if t["deal"] is not None and t["status"] != "idle"]
    out, _ = released(hub)
    table = next(t for t in playing if t["deal"] not in out)
    errors: list[str] = []
    page = new_page(browser, 1920, 1080, errors)
    page.goto(f"{hub.url}/overlays/table.html?table={table['table']}&feed=program")
    held = tid(page, "held")
    expect(held).to_be_visible(timeout=SOON)
    expect(held).to_contain_text(f"deal {table['deal']} · table {table['table']}")
    look = held.evaluate(
        """(n) => { const cs = getComputedStyle(n); return { font: cs.fontFamily,
          weight: cs.fontWeight, stage: Boolean(n.closest('.stage')), size: cs.fontSize }; }"""
    )
    assert look["font"].startswith('"Barlow Condensed"'), look
    assert look["stage"] and look["weight"] == "800" and look["size"] == "40px", look
    box = held.bounding_box()
    assert box is not None
    assert box["x"] >= 192 and box["x"] + box["width"] <= 1728 and box["y"] + box["height"] <= 972
    assert tid(page, "gfx").get_attribute("data-visible") == "false"
    assert (
        page.locator(".card").evaluate_all("(cs) => cs.filter((c) => c.checkVisibility()).length")
        == 0
    )
    screenshot(page, "program-table-held", 600)
    assert errors == []


@pytest.fixture(scope="module")
def played() -> Iterator[HubThread]:
    """The whole session played with a program delay: every table idle after its last hand."""
    h = HubThread("sdn")
    h.config = dataclasses.replace(h.config, program_delay=DELAY)
    h.start()
    h.preload(len(h.events))
    time.sleep(DELAY + 0.5)
    yield h
    h.stop()


def test_the_program_live_table_keeps_its_cards_at_the_showdown(
    browser: Browser, played: HubThread
) -> None:
    """Issue #30 item 4: the programme's live table source at the showdown keeps the board and
    the hands shown on screen, with the showdown package beside them, none over another."""
    errors: list[str] = []
    page = new_page(browser, 1920, 1080, errors)
    for table in (1, 2):
        # the live table's last hand: the program feed shows the same once its delay passed
        state = played.rest(f"/api/tables/{table}", COMMENTATOR)
        package = state["showdown"]
        assert package and package["board"] and package["cards"], package
        page.goto(f"{played.url}/overlays/table.html?table={table}&feed=program")
        expect(tid(page, "showdown")).to_be_visible(timeout=SOON)
        expect(tid(page, "board")).to_be_visible()
        board = tid(page, "board").locator(".card:not(.slot)")
        expect(board).to_have_count(len(package["board"]))
        for seat, hole in package["cards"].items():
            cards = page.locator(
                f'[data-testid="seat"][data-seat="{seat}"] [data-testid="hole"] .card'
            )
            expect(cards).to_have_count(len(hole))
        page.wait_for_function(  # the package and the cards have settled (their entrances)
            "() => document.getAnimations().every((a) => a.playState !== 'running')",
            timeout=SOON,
        )
        sd = tid(page, "showdown").bounding_box()
        bd = tid(page, "board").bounding_box()
        assert sd is not None and bd is not None
        assert not boxes_overlap(sd, bd) and bd["y"] + bd["height"] <= sd["y"]
        for seat in tid(page, "seat").all():
            sb = seat.bounding_box()
            assert sb is not None
            assert not boxes_overlap(sd, sb) and not boxes_overlap(bd, sb), seat.get_attribute(
                "data-seat"
            )
        assert sd["x"] >= 192 and sd["x"] + sd["width"] <= 1728
        font = tid(page, "showdown").evaluate("(n) => getComputedStyle(n).fontFamily")
        assert font.startswith('"Barlow Condensed"'), font
        screenshot(page, f"program-table-showdown-{table}", 800)
    assert errors == []
