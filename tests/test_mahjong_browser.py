"""The overlays of a duplicate MCR tournament against the real hub (docs/mahjong.md): Debian
Chromium at 1920x1080, the ingest and edge on the embedded bus, console clients sending the
sample mahjong session. The live table shows the seats' winds, 13-tile hands and the result;
the split screen the same deal at every table; the leaderboard the IMPs; a public page shows
no tile of a deal before every table has played it. Screenshots: hub-mcr-*.png."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from hub.files.config import load_config
from hub.files.decks import load_decks
from tests.hubharness import COMMENTATOR, session_events
from tests.test_mahjong import SAMPLE, SESSION
from tests.test_overlays_hub import (
    FAST,
    HubThread,
    open_page,
    shot,
    signed,
)

pytestmark = pytest.mark.browser

WINDS_NAME = {"E": "East", "S": "South", "W": "West", "N": "North"}


def arranged(tile: str) -> tuple[int, int]:
    """Characters, dots, bamboo, honours, each by number (overlays/js/mahjong.js)."""
    return ("mpsz".index(tile[1]), int(tile[0]))


class MahjongHub(HubThread):
    """The hub of test_overlays_hub, on the mahjong sample and its session."""

    def __init__(self) -> None:
        super().__init__("mcr")
        config = load_config(SAMPLE)
        self.decks = load_decks(config, SAMPLE.parent, {})
        self.config = dataclasses.replace(config, id=f"mcr-{uuid.uuid4().hex[:8]}")
        self.events = session_events(self.config.id, SESSION)


@pytest.fixture(scope="module")
def hub() -> Iterator[MahjongHub]:
    h = MahjongHub()
    h.start()
    yield h
    h.stop()


def play_until_table_one_is_in_a_hand(hub: MahjongHub) -> int:
    """Play the session in order until table 1 has started a hand; returns its deal."""
    for i in range(hub.sent, len(hub.events)):
        event = hub.events[i]
        hub.play([event])
        hub.sent = i + 1
        if event["table"] == 1 and event["type"] == "start":
            return int(event["deal"])
    raise AssertionError("table 1 never starts a hand")


def test_live_table_shows_winds_hands_and_the_result(hub: MahjongHub, page: Page) -> None:
    deal = play_until_table_one_is_in_a_hand(hub)
    table = hub.rest("/api/tables/1", COMMENTATOR)
    m = table["mahjong"]
    assert m["deal"] == deal and m["result"] is None
    open_page(page, hub, f"table.html?table=1&token={COMMENTATOR}")
    rows = page.locator('[data-testid="mj-seat"]')
    expect(rows).to_have_count(4, timeout=FAST)
    for seat in range(1, 5):
        row = page.locator(f'[data-testid="mj-seat"][data-seat="{seat}"]')
        expect(row).to_have_attribute("data-wind", m["winds"][str(seat)])
        tiles = row.locator(".tile")
        expect(tiles).to_have_count(13)
        shown = tiles.evaluate_all("ts => ts.map(t => t.dataset.tile)")
        assert shown == sorted(m["hands"][str(seat)], key=arranged)  # as a player arranges them
    prevalent = WINDS_NAME[m["prevalent"]]
    expect(page.locator('[data-testid="mj-prevalent"]')).to_have_text(f"Prevalent wind {prevalent}")
    expect(page.locator('[data-testid="mj-result"]')).to_have_text("Playing…")
    # The official enters the result: it shows within 1 s, with each seat's points.
    event = hub.next_event(1)
    assert event["type"] == "result"
    after = hub.rest("/api/tables/1", COMMENTATOR)
    result = after["mahjong"]["result"]
    assert result is not None and after["mahjong"]["deal"] == deal
    if result["kind"] == "draw":
        expect(page.locator('[data-testid="mj-result"]')).to_have_text(
            "Draw (no winner)", timeout=FAST
        )
    else:
        expect(page.locator('[data-testid="mj-result"]')).to_contain_text(
            f"{result['fan']} fan", timeout=FAST
        )
    for seat, points in result["points"].items():
        cell = page.locator(
            f'[data-testid="mj-seat"][data-seat="{seat}"] [data-testid="mj-points"]'
        )
        expect(cell).to_have_text(signed(points))
    shot(page, "mcr-table")


def test_split_screen_compares_the_same_deal_at_every_table(hub: MahjongHub, page: Page) -> None:
    hub.play(hub.events[hub.sent :])
    hub.sent = len(hub.events)
    compare = hub.rest("/api/compare/3/2")
    assert len(compare["rows"]) == 4 and len(compare["hole"]) == 13
    open_page(page, hub, "compare.html?deal=3&seat=2")
    panels = page.locator('[data-testid="panel"]')
    expect(panels).to_have_count(4, timeout=FAST)
    for row in compare["rows"]:
        panel = page.locator(f'[data-testid="panel"][data-table="{row["table"]}"]')
        expect(panel.locator('[data-testid="panel-points"]')).to_have_text(signed(row["chips"]))
    header = page.locator('[data-testid="hole"] .tile')
    expect(header).to_have_count(13)
    shown = header.evaluate_all("ts => ts.map(t => t.dataset.tile)")
    assert shown == sorted(compare["hole"], key=arranged)
    wind = compare["mahjong"]["wind"]
    expect(page.locator('[data-testid="compare-title"]')).to_contain_text(
        f"Seat 2 ({WINDS_NAME[wind]})"
    )
    shot(page, "mcr-compare")


def test_leaderboard_shows_the_imps(hub: MahjongHub, page: Page) -> None:
    hub.play(hub.events[hub.sent :])
    hub.sent = len(hub.events)
    standings: dict[str, Any] = hub.rest("/api/standings")
    teams = standings["like_for_like"]["teams"]
    assert standings["scoring"]["heading"] == "IMPs"
    open_page(page, hub, "leaderboard.html")
    for t in teams:
        row = page.locator(f'[data-testid="team-row"][data-team="{t["team"]}"]')
        expect(row.locator('[data-testid="team-points"]')).to_have_text(
            signed(t["imps"]), timeout=FAST
        )
    # A mahjong hand scores points, not chips: the aggregate column says so.
    expect(page.locator('[data-testid="chips-heading"]')).to_have_text("Points")
    shot(page, "mcr-leaderboard")
    open_page(page, hub, "seat.html?seat=1")
    expect(page.locator('[data-testid="chips-heading"]')).to_have_text("Points", timeout=FAST)
    expect(page.locator('[data-testid="after-deals"]')).to_contain_text("Same tiles, same seat")


def test_commentator_desk_shows_each_tables_winds_tiles_and_result(
    hub: MahjongHub, page: Page
) -> None:
    """The desk's card of each table is the mahjong hand (not a poker board and pot): every
    seat's wind and 13 tiles as REST has them, the result, each seat's points; its standings
    are in IMPs as the leaderboard's."""
    hub.play(hub.events[hub.sent :])
    hub.sent = len(hub.events)
    page.goto(f"{hub.url}/overlays/commentator.html?token={COMMENTATOR}")
    for number in hub.config.tables:
        m = hub.rest(f"/api/tables/{number}", COMMENTATOR)["mahjong"]
        card = page.locator(f'[data-testid="com-table"][data-table="{number}"]')
        expect(card).to_have_attribute("data-game", "mcr", timeout=FAST)
        expect(card.locator("h2")).to_contain_text(f"deal {m['deal']}")
        for seat in range(1, 5):
            row = card.locator(f'[data-testid="com-seat"][data-seat="{seat}"]')
            expect(row.locator("td").first).to_have_text(f"S{seat} {m['winds'][str(seat)]}")
            tiles = row.locator('[data-testid="com-mj-hand"] .tile')
            expect(tiles).to_have_count(13)
            shown = tiles.evaluate_all("ts => ts.map(t => t.dataset.tile)")
            assert shown == sorted(m["hands"][str(seat)], key=arranged)
        result = m["result"]
        if result is not None and result["kind"] != "draw":
            expect(card.locator('[data-testid="com-mj-result"]')).to_contain_text(
                f"{result['fan']} fan"
            )
    standings: dict[str, Any] = hub.rest("/api/standings")
    expect(page.locator('[data-testid="l4l-heading"]')).to_have_text("L4L imps")
    for t in standings["like_for_like"]["teams"]:
        row = page.locator(f'[data-testid="com-team"][data-team="{t["team"]}"]')
        expect(row.locator('[data-testid="l4l-points"]')).to_have_text(signed(t["imps"]))
    shot(page, "mcr-commentator-desk")


@pytest.mark.parametrize("path", ["commentator.html", "operator.html", "seat.html?seat=1"])
def test_the_other_pages_load_a_mahjong_event_without_errors(
    hub: MahjongHub, page: Page, path: str
) -> None:
    """The desks and the seat ranking show a mahjong event with their poker-shaped fields
    empty; the page fixture fails the test on any console error."""
    token = "test-operator-token" if path.startswith("operator") else COMMENTATOR
    sep = "&" if "?" in path else "?"
    page.goto(f"{hub.url}/overlays/{path}{sep}token={token}")
    page.wait_for_timeout(1500)
    shot(page, f"mcr-{path.split('.')[0]}")
