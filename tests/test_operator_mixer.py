"""The operator's mixer in real Chromium against the real hub (issue #22 item 3): cues built on
the panel and kept by the hub, a cue loaded into the preview monitor (the real overlay page in an
iframe shows that deal and seat), Take (the slot-following split screen in another page changes
with its transition), Cut (no transition), hotkeys (not while typing), Undo take, Hide, bad
input answered in words with nothing changed, the `duplicast:cue` hook, and a second operator
browser and a reload seeing the same cue list.

One preview, the hub's (issue #33): a panel's Preview moves the hub's (`GET /api/control` and a
second panel show it), a control surface's `POST /api/control/next` moves both panels'
monitors, a Take in the second panel takes it, a reload still shows it; a Preview then Take in
one go takes what was previewed, and a Take pressed with a refused Preview takes nothing."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser import SHOTS, new_page, screenshot
from tests.hubharness import OPERATOR
from tests.test_overlays_hub import PRELOAD, HubThread

pytestmark = pytest.mark.browser
SOON = 5000  # ms
BEARER = {"Authorization": f"Bearer {OPERATOR}"}
DOCS_SHOT = SHOTS.parent.parent / "docs" / "screenshots" / "operator.png"

# Counts what the split screen's graphic does: every Web Animation on it (a mix) and every CSS
# transition that runs on it (show / hide).
RECORDER = """
window.__animations = 0;
window.__transitions = 0;
const animate = Element.prototype.animate;
Element.prototype.animate = function (frames, options) {
  if (this.dataset && this.dataset.testid === 'gfx') window.__animations += 1;
  return animate.call(this, frames, options);
};
document.addEventListener('transitionrun', (e) => {
  if (e.target.dataset && e.target.dataset.testid === 'gfx') window.__transitions += 1;
}, true);
"""


@pytest.fixture(scope="module")
def hub() -> Iterator[HubThread]:
    h = HubThread("mix")
    h.start()
    h.preload(PRELOAD)
    yield h
    h.stop()


def tid(page: Page, name: str) -> Any:
    return page.locator(f'[data-testid="{name}"]')


def cues(hub: HubThread) -> list[dict[str, Any]]:
    return list(hub.ops()["cues"])


def compare_slot(hub: HubThread) -> dict[str, Any]:
    return dict(hub.rest("/api/onair", OPERATOR)["slots"]["compare"])


def control(hub: HubThread) -> dict[str, Any]:
    """The control surfaces' flat state (`GET /api/control`, the token in the header)."""
    got = httpx.get(f"{hub.url}/api/control", headers=BEARER, timeout=5)
    assert got.status_code == 200, got.text
    return dict(got.json())


def until_control(hub: HubThread, field: str, want: Any) -> None:
    deadline = time.monotonic() + SOON / 1000
    while (got := control(hub)[field]) != want:
        assert time.monotonic() < deadline, (field, got, want)
        time.sleep(0.05)


# A Preview click and a Take click in one task of the page: the Take comes while the preview
# command is still on its way to the hub.
PREVIEW_THEN_TAKE = """() => {
  document.querySelector('[data-testid="slot-compare"] [data-testid="slot-preview"]').click();
  document.querySelector('[data-testid="mix-take"]').click();
}"""


def preview_compare_fields(desk: Page, deal: int, seat: int, tables: str) -> None:
    row = tid(desk, "slot-compare")
    row.locator('input[name="deal"]').fill(str(deal))
    row.locator('input[name="seat"]').fill(str(seat))
    row.locator('input[name="tables"]').fill(tables)


def preview_compare(desk: Page, deal: int, seat: int, tables: str) -> None:
    preview_compare_fields(desk, deal, seat, tables)
    tid(desk, "slot-compare").locator('[data-testid="slot-preview"]').click()


def press(desk: Page, key: str) -> None:
    """A hotkey as a Stream Deck sends it: to the page, nothing typed into a field."""
    desk.locator("h1").click(position={"x": 5, "y": 5})
    desk.keyboard.press(key)


def test_cue_preview_take_cut_undo_hide(browser: Browser, hub: HubThread) -> None:
    errors: list[str] = []
    deals = hub.rest("/api/standings")["deals"]["complete"]["A"]
    d1, d2 = deals[0], deals[1]
    desk = new_page(browser, 1920, 1080, errors)
    split = new_page(browser, 1920, 1080, errors)
    split.add_init_script(RECORDER)
    split.goto(f"{hub.url}/overlays/compare.html?slot=1")  # public, follows the compare slot
    desk.goto(f"{hub.url}/overlays/operator.html?token={OPERATOR}")
    expect(tid(desk, "console-row")).to_have_count(6, timeout=SOON)
    title = tid(split, "compare-title")
    gfx = tid(split, "gfx")
    preview = desk.frame_locator('[data-testid="preview-frame"]')

    # Build the cue list from the slot rows: Preview, then Add to cues.
    preview_compare(desk, d1, 2, "3,1")
    expect(preview.locator('[data-testid="compare-title"]')).to_have_text(
        f"Deal {d1} · Seat 2", timeout=SOON
    )
    expect(tid(desk, "preview-summary")).to_have_text(
        f"compare · deal {d1} · seat 2 · tables 3, 1 · live"
    )
    tid(desk, "cue-add").click()
    preview_compare(desk, d2, 4, "")
    tid(desk, "cue-add").click()
    seat_row = tid(desk, "slot-seat")
    seat_row.locator('input[name="seat"]').fill("3")
    seat_row.locator('[data-testid="slot-preview"]').click()
    tid(desk, "cue-add").click()
    expect(tid(desk, "cue-row")).to_have_count(3, timeout=SOON)
    assert [c["slot"] for c in cues(hub)] == ["compare", "compare", "seat"]
    assert cues(hub)[0]["value"] == {"deal": d1, "seat": 2, "tables": [3, 1], "mode": "live"}
    # Reorder and remove: the hub's list moves, the panel shows it.
    tid(desk, "cue-row").nth(0).locator('[data-testid="cue-down"]').click()
    expect(tid(desk, "cue-row").nth(0)).to_have_attribute("data-id", "2", timeout=SOON)
    tid(desk, "cue-row").nth(0).locator('[data-testid="cue-down"]').click()
    expect(tid(desk, "cue-row").nth(0)).to_have_attribute("data-id", "1", timeout=SOON)
    tid(desk, "cue-row").nth(2).locator('[data-testid="cue-remove"]').click()
    expect(tid(desk, "cue-row")).to_have_count(2, timeout=SOON)
    assert [c["id"] for c in cues(hub)] == [1, 2]

    # Cue 1 into preview by its hotkey; Space takes it: the split screen shows it.
    press(desk, "1")
    expect(tid(desk, "cue-row").nth(0)).to_have_attribute("data-selected", "true")
    expect(preview.locator('[data-testid="compare-title"]')).to_have_text(
        f"Deal {d1} · Seat 2", timeout=SOON
    )
    press(desk, "Space")
    expect(title).to_have_text(f"Deal {d1} · Seat 2", timeout=SOON)
    expect(gfx).to_have_attribute("data-visible", "true", timeout=SOON)
    expect(tid(split, "compare-panel").first).to_have_attribute("data-table", "3")
    air = desk.frame_locator('[data-testid="air-frame"]')
    expect(air.locator('[data-testid="compare-title"]')).to_have_text(f"Deal {d1} · Seat 2")
    assert split.evaluate("window.__transitions") > 0  # it animated in

    # The next cue (arrow), Take with Enter: a mix runs on the graphic as its content changes.
    split.evaluate("window.__animations = 0; window.__transitions = 0")
    press(desk, "ArrowDown")
    expect(tid(desk, "cue-row").nth(1)).to_have_attribute("data-selected", "true")
    press(desk, "Enter")
    expect(title).to_have_text(f"Deal {d2} · Seat 4", timeout=SOON)
    expect(gfx).to_have_attribute("data-transition", "mix")
    assert split.evaluate("window.__animations") >= 2  # out, then in
    assert compare_slot(hub) == {
        "visible": True,
        "deal": d2,
        "seat": 4,
        "tables": None,  # Take sends every key of the slot: none left from the cue before
        "mode": "live",
    }

    # Back to cue 1 and Cut (C): at once, no animation, no transition.
    split.evaluate("window.__animations = 0; window.__transitions = 0")
    press(desk, "ArrowUp")
    press(desk, "c")
    expect(title).to_have_text(f"Deal {d1} · Seat 2", timeout=SOON)
    expect(gfx).to_have_attribute("data-transition", "cut")
    assert split.evaluate("[window.__animations, window.__transitions]") == [0, 0]
    assert compare_slot(hub)["cut"] is True

    # Ctrl+Z takes the cut back: the value before it (cue 2), with the transition.
    press(desk, "Control+z")
    expect(title).to_have_text(f"Deal {d2} · Seat 4", timeout=SOON)
    expect(gfx).to_have_attribute("data-transition", "mix")
    assert "cut" not in compare_slot(hub)

    # Typing in a field fires no hotkey.
    last = tid(desk, "mixer").get_attribute("data-last-key")
    field = tid(desk, "slot-compare").locator('input[name="tables"]')
    field.fill("")
    field.press("c")
    field.press("1")
    expect(field).to_have_value("c1")
    assert tid(desk, "mixer").get_attribute("data-last-key") == last
    assert compare_slot(hub)["deal"] == d2
    field.fill("")

    # The suggested split-screens' hook: a cue event loads the preview and offers the cue list.
    desk.evaluate(
        "(d) => window.dispatchEvent(new CustomEvent('duplicast:cue', {detail: "
        "{slot: 'compare', value: {deal: d, seat: 5, tables: [2, 4]}}}))",
        d1,
    )
    expect(tid(desk, "preview-summary")).to_have_text(f"compare · deal {d1} · seat 5 · tables 2, 4")
    expect(preview.locator('[data-testid="compare-title"]')).to_have_text(
        f"Deal {d1} · Seat 5", timeout=SOON
    )
    expect(tid(desk, "cue-add")).to_have_class("offer")
    desk.wait_for_timeout(800)
    screenshot(desk, "hub-operator-mixer", 400)
    shutil.copyfile(SHOTS / "hub-operator-mixer.png", DOCS_SHOT)

    # Bad input: a preview of a deal that does not exist. Words; the hub's preview stays; a
    # Take pressed before the hub answered takes nothing (not the preview before it).
    before = compare_slot(hub)
    shown = f"compare · deal {d1} · seat 5 · tables 2, 4"
    preview_compare(desk, 99, 2, "")
    expect(tid(desk, "mixer-msg")).to_contain_text("preview: deal 99 does not exist", timeout=SOON)
    expect(tid(desk, "preview-summary")).to_have_text(shown)
    desk.evaluate(PREVIEW_THEN_TAKE)
    expect(tid(desk, "mixer-msg")).to_contain_text("nothing taken", timeout=SOON)
    assert control(hub)["preview_text"] == shown
    assert len(cues(hub)) == 2 and compare_slot(hub) == before

    # H hides the slot on the monitors.
    press(desk, "h")
    expect(gfx).to_have_attribute("data-visible", "false", timeout=SOON)
    assert compare_slot(hub)["visible"] is False

    # A second operator browser: the same cue list and the same preview, the hub's.
    other = new_page(browser, 1280, 720, errors)
    other.goto(f"{hub.url}/overlays/operator.html?token={OPERATOR}")
    expect(tid(other, "cue-row")).to_have_count(2, timeout=SOON)
    expect(tid(other, "preview-summary")).to_have_text(shown, timeout=SOON)
    # This panel previews a slot: the other panel and the control surfaces show it.
    seat_row.locator('input[name="seat"]').fill("5")
    seat_row.locator('[data-testid="slot-preview"]').click()
    expect(tid(other, "preview-summary")).to_have_text(
        "seat · seat 5 · like for like", timeout=SOON
    )
    other_preview = other.frame_locator('[data-testid="preview-frame"]')
    assert "seat.html?" in (tid(other, "preview-frame").get_attribute("src") or "")
    until_control(hub, "preview_text", "seat · seat 5 · like for like")
    # A Stream Deck's CUE ▶ (Companion: the token in the header): from no cue, the first one;
    # both panels' monitors follow it.
    moved = httpx.post(f"{hub.url}/api/control/next", headers=BEARER, timeout=5)
    assert moved.status_code == 200 and moved.json()["preview_cue"] == 1, moved.text
    first = f"compare · deal {d1} · seat 2 · tables 3, 1 · live"
    for panel in (desk, other):
        expect(tid(panel, "preview-summary")).to_have_text(first, timeout=SOON)
        expect(tid(panel, "cue-row").nth(0)).to_have_attribute("data-selected", "true")
    for frame in (preview, other_preview):
        expect(frame.locator('[data-testid="compare-title"]')).to_have_text(
            f"Deal {d1} · Seat 2", timeout=SOON
        )
    # Take in the other panel: the hub's take, what the deck moved to, on air.
    tid(other, "mix-take").click()
    expect(gfx).to_have_attribute("data-visible", "true", timeout=SOON)
    expect(title).to_have_text(f"Deal {d1} · Seat 2")
    assert compare_slot(hub)["deal"] == d1 and control(hub)["compare"] is True
    # Reloaded, this panel shows the same cue list and the same preview: it is the hub's.
    desk.reload()
    expect(tid(desk, "cue-row")).to_have_count(2, timeout=SOON)
    expect(tid(desk, "cue-row").nth(1)).to_contain_text(f"deal {d2} · seat 4")
    expect(tid(desk, "preview-summary")).to_have_text(first, timeout=SOON)
    expect(tid(desk, "cue-row").nth(0)).to_have_attribute("data-selected", "true")
    # A Preview then a Take at once: the Take waits for the hub's preview, and takes it.
    preview_compare_fields(desk, d2, 4, "")
    desk.evaluate(PREVIEW_THEN_TAKE)
    expect(title).to_have_text(f"Deal {d2} · Seat 4", timeout=SOON)
    expect(tid(other, "preview-summary")).to_have_text(f"compare · deal {d2} · seat 4 · live")
    for pg in (desk, split, other):
        pg.context.close()
    assert errors == []


HOTKEYS = """async () => {
  const { hotkey, takeValue, previewUrl } = await import('/overlays/js/mixer.js');
  const input = document.createElement('input');
  const key = (k, more = {}) => hotkey({ key: k, target: document.body, ...more });
  return {
    keys: [' ', 'Enter', 'c', 'C', '1', '9', '0', 'ArrowDown', 'ArrowLeft', 'h', 'x']
      .map((k) => key(k)),
    ctrlZ: key('z', { ctrlKey: true }),
    ctrlC: key('c', { ctrlKey: true }),
    altC: key('c', { altKey: true }),
    typing: hotkey({ key: 'c', target: input }),
    take: takeValue('compare', { deal: 3, visible: false, cut: true }, false),
    cut: takeValue('seat', { seat: 2 }, true),
    url: previewUrl('compare', { deal: 3, seat: 5, tables: [1, 4], group: 'A' }, { token: 'op' }),
  };
}"""


def test_hotkeys_and_take_values(browser: Browser, hub: HubThread) -> None:
    errors: list[str] = []
    page = new_page(browser, 800, 600, errors)
    page.goto(f"{hub.url}/overlays/index.html")
    got = page.evaluate(HOTKEYS)
    assert got["keys"] == [
        "take", "take", "cut", "cut", "cue1", "cue9", None, "next", "previous", "hide", None,
    ]  # fmt: skip
    assert (got["ctrlZ"], got["ctrlC"], got["altC"], got["typing"]) == ("undo", None, None, None)
    assert got["take"] == {"deal": 3, "seat": None, "tables": None, "mode": None, "visible": True}
    assert got["cut"] == {"seat": 2, "view": None, "visible": True, "cut": True}
    assert got["url"] == "compare.html?token=op&theme=dark&slot=0&deal=3&seat=5&tables=1%2C4"
    page.context.close()
    assert errors == []


def test_a_cue_button_pressed_across_a_feed_update_still_clicks(
    browser: Browser, hub: HubThread
) -> None:
    """Every event (ops) and every take (onair) redraws the mixer: a cue's Preview pressed
    before an update and released after it is a click on that cue still. (The cue list was
    drawn anew on every update: the press and the release landed on two different buttons, and
    the operator's click was lost; a human click lasts ~0.1 s, events come faster.)"""
    errors: list[str] = []
    desk = new_page(browser, 1920, 1080, errors)
    desk.goto(f"{hub.url}/overlays/operator.html?token={OPERATOR}")
    expect(tid(desk, "console-row")).to_have_count(6, timeout=SOON)
    if not cues(hub):  # (this test alone)
        deal = hub.rest("/api/standings")["deals"]["complete"]["A"][0]
        preview_compare(desk, deal, 2, "")
        expect(tid(desk, "cue-add")).to_have_class("offer", timeout=SOON)
        tid(desk, "cue-add").click()
        expect(tid(desk, "cue-row")).to_have_count(1, timeout=SOON)
    seat_row = tid(desk, "slot-seat")  # the preview on no cue
    seat_row.locator('input[name="seat"]').fill("6")
    seat_row.locator('[data-testid="slot-preview"]').click()
    expect(tid(desk, "preview-summary")).to_have_text("seat · seat 6 · like for like", timeout=SOON)
    row = tid(desk, "cue-row").nth(0)
    expect(row).to_have_attribute("data-selected", "false")
    left = [e["table"] for e in hub.events[hub.sent :] if not e.get("_sent")]
    table = next(t for t in range(1, 7) if left.count(t) >= 2)  # (events to send: two)
    seq = desk.locator(f'[data-testid="console-row"][data-table="{table}"]').locator(
        '[data-testid="console-seq"]'
    )
    sent = hub.next_event(table)
    expect(seq).to_have_text(str(sent["seq"]), timeout=SOON)
    row.locator('[data-testid="cue-load"]').hover()  # (the pointer on it, the desk still)
    desk.mouse.down()
    sent = hub.next_event(table)  # the mixer redraws, its cues unchanged
    expect(seq).to_have_text(str(sent["seq"]), timeout=SOON)
    desk.mouse.up()
    expect(row).to_have_attribute("data-selected", "true", timeout=SOON)
    until_control(hub, "preview_cue", cues(hub)[0]["id"])
    desk.context.close()
    assert errors == []
