"""The MCR tile picker (overlays/js/tilepicker.js, issue #32 item 1) in Debian's Chromium, mounted
alone by tests/js/tilepicker.html where the console pad would mount it, served by a small static
server of the repository: a whole winning hand with a concealed kong, a pung and a chow tapped
out as it lies on the table, `value()` the contract's `hand`, the palette's counts and names;
then each impossible hand and its sentence on screen; undo, removal, a re-mount that keeps the
entry; every target at least 48 px, inside both tablet viewports (1024x768, 768x1024).
docs/screenshots/console-mcr-picker.png is taken here."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.browser import new_page

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
DOCS_SHOTS = ROOT / "docs" / "screenshots"
LANDSCAPE = (1024, 768)
PORTRAIT = (768, 1024)
MISSING = "the hand has no winning tile: tap 'Winning tile', then the tile it was won with"

# Half Flush in bamboo with a dragon pung and a concealed kong, won on the 8s.
WINNING_HAND = {
    "concealed": ["2s", "3s", "4s", "8s"],
    "melds": [
        {"kind": "concealed_kong", "tiles": ["1s", "1s", "1s", "1s"]},
        {"kind": "pung", "tiles": ["7z", "7z", "7z"]},
        {"kind": "chow", "tiles": ["4s", "5s", "6s"]},
    ],
    "winning": "8s",
    "flags": ["last_tile"],
}


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """The repository over HTTP on a free loopback port (ES modules need http, not file:)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(ROOT)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def opened(browser: Browser, site: str) -> Iterator[Any]:
    errors: list[str] = []
    pages: list[Page] = []

    def open_at(size: tuple[int, int]) -> Page:
        page = new_page(browser, size[0], size[1], errors)
        pages.append(page)
        page.goto(f"{site}/tests/js/tilepicker.html")
        expect(tid(page, "tilepicker")).to_be_visible()
        page.wait_for_function(  # the widget's own stylesheets have loaded
            "getComputedStyle(document.querySelector('.tp-palette')).display === 'grid'"
        )
        return page

    yield open_at
    for page in pages:
        page.context.close()
    assert errors == []


def tid(page: Page, name: str) -> Locator:
    return page.locator(f'[data-testid="{name}"]')


def target(page: Page, name: str) -> None:
    tid(page, f"tp-target-{name}").click()
    expect(tid(page, f"tp-target-{name}")).to_have_attribute("aria-checked", "true")


def tap(page: Page, *codes: str) -> None:
    for code in codes:
        tid(page, "tp-palette").locator(f'[data-tile="{code}"]').click()


def quick(page: Page, on: bool) -> None:
    button = tid(page, "tp-quick")
    if (button.get_attribute("aria-pressed") == "true") != on:
        button.click()
    expect(button).to_have_attribute("aria-pressed", "true" if on else "false")


def palette(page: Page, code: str) -> Locator:
    return tid(page, "tp-palette").locator(f'[data-tile="{code}"]')


def value(page: Page) -> Any:
    return page.evaluate("window.picker.value()")


def problem(page: Page) -> Any:
    return page.evaluate("window.picker.problem()")


def tap_out_the_winning_hand(page: Page) -> None:
    target(page, "concealed_kong")  # tile by tile, as it lies
    tap(page, "1s", "1s", "1s", "1s")
    target(page, "pung")
    quick(page, True)  # one tap a meld: the pung of red dragons
    tap(page, "7z")
    target(page, "chow")
    tap(page, "4s")  # a chow by its lowest tile
    target(page, "concealed")
    tap(page, "8s", "2s", "4s", "3s")
    target(page, "winning")
    tap(page, "8s")
    tid(page, "tp-flag-last_tile").click()


def fits(page: Page) -> None:
    """Every button of the picker is inside the viewport and at least 48 px either way; the
    page does not scroll sideways."""
    size = page.viewport_size
    assert size is not None
    assert page.evaluate("document.scrollingElement.scrollWidth") <= size["width"]
    boxes = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="tilepicker"] button')].map((e) => {
            const r = e.getBoundingClientRect();
            const name = e.getAttribute('aria-label') || e.textContent;
            return [name, r.left, r.top, r.right, r.bottom];
          })"""
    )
    assert len(boxes) >= 34 + 7 + 6
    for name, left, top, right, bottom in boxes:
        assert left >= 0 and top >= 0 and right <= size["width"] and bottom <= size["height"], (
            name,
            size,
            (left, top, right, bottom),
        )
        assert bottom - top >= 48 and right - left >= 48, f"{name} is too small a target"


@pytest.mark.parametrize("size", [LANDSCAPE, PORTRAIT], ids=["landscape", "portrait"])
def test_a_winning_hand_tapped_out_as_it_lies(opened: Any, size: tuple[int, int]) -> None:
    page = opened(size)
    assert problem(page) is None and value(page) is None  # empty: no hand (the field is optional)
    expect(tid(page, "tilepicker")).to_have_attribute("aria-label", "Seat 2: the winning hand")
    fits(page)
    tap_out_the_winning_hand(page)
    assert problem(page) is None
    assert value(page) == WINNING_HAND
    expect(tid(page, "tp-problem")).to_have_text(
        "14 tiles: a possible hand (the hub counts the fan)."
    )
    expect(page.locator('[data-zone="concealed"] [data-tile]')).to_have_count(4)
    expect(page.locator('[data-zone="melds"] [data-kind]')).to_have_count(3)
    expect(page.locator('[data-zone="winning"] [data-tile="8s"]')).to_have_count(1)
    # The palette: what remains of each tile, in words for screen readers, greyed at none.
    expect(palette(page, "4s")).to_have_attribute("aria-label", "4 of bamboo, 2 left")
    expect(palette(page, "7z")).to_have_attribute("aria-label", "Red dragon, 1 left")
    expect(palette(page, "5p")).to_have_attribute("aria-label", "5 of dots, 4 left")
    expect(palette(page, "1s")).to_have_attribute("aria-label", "1 of bamboo, none left")
    expect(palette(page, "1s")).to_have_class("tp-tile out")
    expect(palette(page, "1z")).to_have_attribute("aria-label", "East wind, 4 left")
    # One tap a chow: only the tiles a chow can start from.
    target(page, "chow")
    expect(palette(page, "8s")).to_be_disabled()
    expect(palette(page, "7s")).to_be_enabled()
    expect(palette(page, "5z")).to_be_disabled()
    target(page, "winning")
    expect(palette(page, "8s")).to_be_enabled()
    fits(page)
    if size == LANDSCAPE:
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        page.wait_for_timeout(200)
        page.screenshot(path=str(DOCS_SHOTS / "console-mcr-picker.png"))


def test_each_impossible_hand_shows_its_sentence(opened: Any) -> None:
    page = opened(LANDSCAPE)
    shown = tid(page, "tp-problem")

    def sees(sentence: str) -> None:
        expect(shown).to_have_text(sentence)
        assert problem(page) == sentence and value(page) is None
        expect(tid(page, "tilepicker")).to_have_attribute("data-problem", "true")

    cases = [
        ("chow", ["4s", "5s", "7s"], "'4s 5s 7s' is not a chow: three tiles in a row of one suit"),
        ("pung", ["4s", "4s", "5s"], "'4s 4s 5s' is not a pung: three of the same tile"),
        ("kong", ["4s", "4s", "4s", "5s"], "'4s 4s 4s 5s' is not a kong: four of the same tile"),
        (
            "concealed_kong",
            ["4s", "4s", "4s", "5s"],
            "'4s 4s 4s 5s' is not a kong: four of the same tile",
        ),
    ]
    for kind, tiles, sentence in cases:  # tile by tile, a meld may be anything
        tid(page, "tp-clear").click()
        target(page, kind)
        quick(page, False)
        tap(page, *tiles)
        sees(sentence)
        expect(page.locator('[data-zone="melds"] .tp-meld.bad')).to_have_count(1)
    # An unfinished meld is not one either.
    tid(page, "tp-clear").click()
    target(page, "pung")
    tap(page, "9m", "9m")
    sees("'9m 9m' is not a pung: three of the same tile")
    # A fifth of a tile: greyed at none left, still tappable, then refused.
    tid(page, "tp-clear").click()
    target(page, "concealed")
    tap(page, "5p", "5p", "5p", "5p")
    expect(palette(page, "5p")).to_have_attribute("aria-label", "5 of dots, none left")
    tap(page, "5p")
    expect(palette(page, "5p")).to_have_attribute("aria-label", "5 of dots, 1 too many")
    sees("5p is used 5 times: a set has only four of each tile")
    # The count: the whole hand less one concealed tile (removed by tapping it), then one more.
    tid(page, "tp-clear").click()
    tap_out_the_winning_hand(page)
    page.locator('[data-zone="concealed"] [data-tile="8s"]').click()
    sees("a winning hand has 14 tiles, counting each kong as 3: this one has 13")
    target(page, "concealed")
    tap(page, "9s", "9s")
    sees("a winning hand has 14 tiles, counting each kong as 3: this one has 15")
    # Order: a bad meld first, then a fifth tile, then the count.
    target(page, "pung")
    tap(page, "1s")  # (one tap a meld) a pung of 1s: seven of them, and 18 tiles
    sees("1s is used 7 times: a set has only four of each tile")
    target(page, "chow")
    quick(page, False)
    tap(page, "1p", "3p", "5p")
    sees("'1p 3p 5p' is not a chow: three tiles in a row of one suit")
    # The winning tile taken away: the widget asks for it (the hub's shape needs one).
    for _ in range(6):  # back to before the 9s: 13 tiles
        tid(page, "tp-undo").click()
    sees("a winning hand has 14 tiles, counting each kong as 3: this one has 13")
    tid(page, "tp-undo").click()
    assert value(page) == WINNING_HAND
    page.locator('[data-zone="winning"] [data-tile="8s"]').click()
    sees(MISSING)
    tid(page, "tp-undo").click()
    assert problem(page) is None
    expect(tid(page, "tilepicker")).to_have_attribute("data-problem", "false")


def test_melds_removed_undone_and_kept_across_a_remount(opened: Any) -> None:
    page = opened(LANDSCAPE)
    tap_out_the_winning_hand(page)
    changes = page.evaluate("window.changes()")
    tid(page, "tp-remove-meld-1").click()  # the pung of red dragons
    assert value(page) is None and problem(page).endswith("this one has 11")
    assert page.evaluate("window.changes()") == changes + 1  # the pad is told of every change
    expect(palette(page, "7z")).to_have_attribute("aria-label", "Red dragon, 4 left")
    tid(page, "tp-undo").click()
    assert value(page) == WINNING_HAND
    assert page.evaluate("window.changes()") == changes + 2
    # The pad redraws on every change: the same store, a new mount, the same entry.
    page.evaluate("window.remount()")
    assert value(page) == WINNING_HAND
    expect(tid(page, "tp-target-winning")).to_have_attribute("aria-checked", "true")
    # An entry to correct: a fresh store starts from the hand given.
    page.evaluate("window.remount({...window.picker.value(), flags: []}, true)")
    assert value(page) == {k: v for k, v in WINNING_HAND.items() if k != "flags"}
    expect(tid(page, "tp-flag-last_tile")).to_have_attribute("aria-pressed", "false")
    page.evaluate("window.picker.reset()")
    assert problem(page) is None and value(page) is None
    tid(page, "tp-flag-last_of_kind").click()  # a flag alone is not nothing
    assert problem(page) == MISSING and value(page) is None
    page.evaluate("window.picker.reset()")
    expect(page.locator("[data-zone] [data-tile]")).to_have_count(0)
    expect(tid(page, "tp-undo")).to_be_disabled()


def test_keys_keep_their_focus_and_the_sentence_is_one_live_region(opened: Any) -> None:
    """A redraw replaces the buttons: the focus moves to the new one of the same tile, so a
    keyboard (or switch) user goes on; the sentence is one `status` node, read out as it
    changes."""
    page = opened(LANDSCAPE)
    page.evaluate("window.__status = document.querySelector('[data-testid=\"tp-problem\"]')")
    palette(page, "5p").focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Space")
    assert page.evaluate("document.activeElement.dataset.tile") == "5p"
    expect(page.locator('[data-zone="concealed"] [data-tile="5p"]')).to_have_count(2)
    page.keyboard.press("Tab")  # on to the next tile
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.dataset.tile") == "6p"
    expect(page.locator('[data-zone="concealed"] [data-tile="6p"]')).to_have_count(1)
    assert page.evaluate(
        "window.__status === document.querySelector('[data-testid=\"tp-problem\"]')"
    )
    expect(tid(page, "tp-problem")).to_have_attribute("role", "status")
    expect(tid(page, "tp-problem")).to_have_text(MISSING)
