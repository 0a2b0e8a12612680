"""The overlays draw piecepack tiles for the piecepack sample, against the real hub.

Debian Chromium, the ingest and edge on the embedded bus, the sample session
(``samples/piecepack-session.jsonl``) sent through the console protocol: the live table, the
split screen, the commentator desk and the seat page must show the tiles of the hub's REST
payloads (``data-tile`` codes, black or white group styling) at 1920x1080 and 1280x720.
Screenshots go to test-artifacts/screenshots/hub-piecepack-*.png.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from hub.domain.games.piecepack.tiles import format_tile
from hub.files.config import load_config
from hub.files.decks import load_decks
from tests.browser import SHOTS, new_page
from tests.hubharness import COMMENTATOR, session_events
from tests.test_overlays_hub import HubThread, open_page

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "piecepack.toml"
SESSION = ROOT / "samples" / "piecepack-session.jsonl"
PRELOAD = 340  # events of the sample session before the pages open (a deal released at 330)


class PiecepackHub(HubThread):
    """The hub of ``test_overlays_hub`` playing the piecepack sample instead of ifp6."""

    def __init__(self) -> None:
        super().__init__("pp")
        config = load_config(SAMPLE)
        self.decks = load_decks(config, SAMPLE.parent, dict(os.environ))
        self.config = dataclasses.replace(config, id=f"pp-{uuid.uuid4().hex[:8]}")
        self.events = session_events(self.config.id, SESSION)

    def table_on_the_turn(self) -> tuple[int, dict[str, Any]]:
        """Send events until a table's hand in progress shows four board tiles."""
        tables = list(self.config.tables)
        for _ in range(200):
            for t in tables:
                live = self.rest(f"/api/tables/{t}", COMMENTATOR)
                if live.get("status") == "in_progress" and len(live.get("board") or []) == 4:
                    return t, live
                with contextlib.suppress(AssertionError):  # that table has played out
                    self.next_event(t)
        raise AssertionError("no table reached the turn")


@pytest.fixture(scope="module")
def hub() -> Iterator[PiecepackHub]:
    h = PiecepackHub()
    h.start()
    h.preload(PRELOAD)
    yield h
    h.stop()


def expect_tiles(box: Any, codes: list[str]) -> None:
    """``box`` shows exactly ``codes`` as tiles, in order, each styled by its group."""
    tiles = box.locator("[data-tile]")
    expect(tiles).to_have_count(len(codes))
    for i, code in enumerate(codes):
        tile = tiles.nth(i)
        expect(tile).to_have_attribute("data-tile", code)
        group = "black-group" if code[1] == "b" else "white-group"
        colour = "red" if code[2] in "hd" else "black"
        expect(tile).to_have_class(re.compile(rf"^card tile {group} {colour}\b"))
        expect(tile).to_have_attribute("title", format_tile(code))
        expect(tile.locator(".rank")).to_have_text(code[0])
        expect(tile.locator(".suit")).to_have_text(format_tile(code)[1])


def test_live_table_draws_the_tiles_legibly_at_1080p_and_720p(
    browser: Browser, hub: PiecepackHub
) -> None:
    table, live = hub.table_on_the_turn()
    assert live["game"] == "piecepack-holdem"
    heights = {}
    for width, height in ((1920, 1080), (1280, 720)):
        errors: list[str] = []
        pg = new_page(browser, width, height, errors)
        open_page(pg, hub, f"table.html?table={table}&token={COMMENTATOR}&slot=0")
        expect(pg.locator("body")).to_have_attribute("data-game", "piecepack-holdem")
        board = pg.locator('[data-testid="board"]')
        expect_tiles(board, live["board"])
        expect(board.locator(".card.slot")).to_have_count(1)  # the river still to come
        for s in live["seats"]:
            seat = pg.locator(f'[data-testid="seat"][data-seat="{s["seat"]}"]')
            expect_tiles(seat.locator('[data-testid="hole"]'), s["hole"])
        # Legible: the rank of a board tile on screen, in device pixels of the window.
        rank = board.locator("[data-tile] .rank").first.bounding_box()
        assert rank is not None
        heights[height] = rank["height"]
        pg.screenshot(path=str(SHOTS / f"hub-piecepack-table-{height}p.png"))
        pg.context.close()
        assert errors == []
    # 720p scales the 1920x1080 stage by 2/3; a board rank stays over 30 px high there.
    assert heights[720] == pytest.approx(heights[1080] * 2 / 3, rel=0.05)
    assert heights[720] > 30


def test_split_screen_draws_the_seats_tiles(page: Page, hub: PiecepackHub) -> None:
    deal = hub.rest("/api/standings")["deals"]["complete"]["A"][0]
    compare = hub.rest(f"/api/compare/{deal}/2")
    assert compare["game"] == "piecepack-holdem"
    open_page(page, hub, f"compare.html?deal={deal}&seat=2&slot=0&mode=live")
    expect(page.locator("body")).to_have_attribute("data-game", "piecepack-holdem")
    expect_tiles(page.locator('[data-testid="hole"]'), compare["hole"])
    reached = max(len(r.get("board") or []) for r in compare["rows"])
    expect_tiles(page.locator('[data-testid="board"]'), compare["board"][:reached])
    # No chances for tiles (docs/piecepack.md): the panels show none rather than wrong ones.
    assert all(r["equity"] is None for r in compare["rows"])
    expect(page.locator('[data-testid="panel-equity"]').first).to_have_text("")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(800)
    page.screenshot(path=str(SHOTS / "hub-piecepack-compare.png"))


def test_commentator_desk_and_seat_page_speak_tiles(page: Page, hub: PiecepackHub) -> None:
    page.goto(f"{hub.url}/overlays/commentator.html?token={COMMENTATOR}")
    expect(page.locator('[data-testid="com-table"]')).to_have_count(4, timeout=5000)
    tables = {t: hub.rest(f"/api/tables/{t}", COMMENTATOR) for t in hub.config.tables}
    playing = [t for t, live in tables.items() if live.get("status") == "in_progress"]
    assert playing
    for t in playing:
        box = page.locator(f'[data-testid="com-table"][data-table="{t}"]')
        expect_tiles(box.locator('[data-testid="com-board"]'), tables[t]["board"])
        for s in tables[t]["seats"]:
            row = box.locator(f'[data-testid="com-seat"][data-seat="{s["seat"]}"]')
            expect_tiles(row.locator('[data-testid="com-hole"]'), s["hole"])
    # Four tables: the desk's first guess (tables 1..6) leaves no refusal of table:5 on air.
    expect(page.locator('[data-testid="com-error"]')).to_have_text("")
    page.screenshot(path=str(SHOTS / "hub-piecepack-commentator.png"))
    open_page(page, hub, "seat.html?seat=1&slot=0")
    expect(page.locator('[data-testid="after-deals"]')).to_contain_text("Same tiles, same seat")
