"""The winning hand and its fans on the overlays (issue #32), against the real hub in Debian
Chromium: the live table and the commentator desk show the hand's melds and "Pure Straight
16, ..." once the result is in; the public split screen shows nothing of the deal until every
table has played it, then each table's fans. Screenshots: hub-mcr-fans-*.png, and those of
docs/mahjong.md (docs/screenshots/mahjong-fans-{table,compare}.png)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.hubharness import COMMENTATOR, OPERATOR
from tests.test_mahjong_browser import MahjongHub
from tests.test_overlays_hub import FAST, open_page, shot
from tests.test_td_browser import rule

pytestmark = pytest.mark.browser
DOCS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"


def doc_shot(page: Page, name: str) -> None:
    """The guide's picture (docs/mahjong.md): ``docs/screenshots/{name}.png``."""
    page.wait_for_timeout(800)
    page.screenshot(path=str(DOCS / f"{name}.png"))


HAND = {
    "concealed": ["1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m", "7s"],
    "melds": [{"kind": "concealed_kong", "tiles": ["5p", "5p", "5p", "5p"]}],
    "winning": "7s",
}


@pytest.fixture(scope="module")
def hub() -> Iterator[MahjongHub]:
    h = MahjongHub()
    h.start()
    yield h
    h.stop()


PLAYED: dict[int, int] = {}  # id(hub) -> how many of the session's events it has played


def play_to(hub: MahjongHub, events: list[dict[str, Any]], end: int) -> None:
    """The session's events up to ``end`` (excluded) that the module's hub has not played yet:
    each test runs alone or after the one before it."""
    start = PLAYED.get(id(hub), 0)
    hub.play(events[start:end])
    PLAYED[id(hub)] = max(start, end)


def with_tiles(events: list[dict[str, Any]], deal: int) -> tuple[list[dict[str, Any]], int]:
    """The session with every result of ``deal`` entered as seat 1's tiles on seat 2's
    discard; and the index of the last of them (the one that releases the deal)."""
    playing: dict[int, int] = {}
    out, last = [], -1
    for i, event in enumerate(events):
        if event["type"] == "start":
            playing[event["table"]] = event["deal"]
        if event["type"] == "result" and playing.get(event["table"]) == deal:
            keep = {k: v for k, v in event.items() if k not in ("seat", "fan", "discarder")}
            keep = {k: v for k, v in keep.items() if k not in ("self_draw", "draw")}
            event = {**keep, "seat": 1, "discarder": 2, "hand": HAND}
            last = i
        out.append(event)
    return out, last


def test_the_winning_hand_and_its_fans_show_after_release_only(hub: MahjongHub, page: Page) -> None:
    deal = 2
    events, last = with_tiles(hub.events, deal)
    play_to(hub, events, last)
    # Three tables have played the deal: the public learns nothing of it, by REST or page.
    response = httpx.get(f"{hub.url}/api/compare/{deal}/1", timeout=5)
    assert response.status_code == 404 or "Pure Straight" not in response.text
    assert "Pure Straight" not in httpx.get(f"{hub.url}/api/tables/{1}", timeout=5).text
    page.goto(f"{hub.url}/overlays/compare.html?deal={deal}&seat=1")
    page.wait_for_timeout(1000)
    assert "Pure Straight" not in page.content()
    expect(page.locator('[data-testid="mj-fans"]')).to_have_count(0)
    # The fourth table's result: the live table shows the hand laid down and its fans.
    play_to(hub, events, last + 1)
    table = events[last]["table"]
    live = hub.rest(f"/api/tables/{table}", COMMENTATOR)
    sd = live["showdown"]
    assert sd["winner"] == 1 and sd["discarder"] == 2 and sd["hand"] == HAND
    names = [f["name"] for f in sd["fans"]]
    assert names[0] == "Pure Straight" and sd["fan"] == sum(
        f["value"] * f["count"] for f in sd["fans"]
    )
    words = ", ".join(f"{f['name']} {f['value']}" for f in sd["fans"])
    open_page(page, hub, f"table.html?table={table}&token={COMMENTATOR}")
    winning = page.locator('[data-testid="mj-winning"]')
    expect(winning.locator('[data-testid="mj-fans"]')).to_have_text(
        f"{words} = {sd['fan']} fan", timeout=FAST
    )
    meld = winning.locator('[data-testid="mj-meld"][data-kind="concealed_kong"] .tile')
    expect(meld).to_have_count(4)
    expect(winning.locator(".tile.winning-tile")).to_have_attribute("data-tile", "7s")
    expect(winning.locator(".tile")).to_have_count(15)  # 10 standing, the kong, the winning tile
    shot(page, "mcr-fans-table")
    doc_shot(page, "mahjong-fans-table")
    # Released: the public split screen shows each table's fans.
    open_page(page, hub, f"compare.html?deal={deal}&seat=1")
    panels = page.locator('[data-testid="panel"] [data-testid="mj-fans"]')
    expect(panels).to_have_count(4, timeout=FAST)
    expect(panels.first).to_contain_text("Pure Straight 16")
    shot(page, "mcr-fans-compare")
    doc_shot(page, "mahjong-fans-compare")
    # The commentator desk: the table's card names the fans beside the hand.
    page.goto(f"{hub.url}/overlays/commentator.html?token={COMMENTATOR}")
    card = page.locator(f'[data-testid="com-table"][data-table="{table}"]')
    expect(card.locator('[data-testid="com-mj-fans"]')).to_contain_text(words, timeout=5000)
    shot(page, "mcr-fans-desk")


def test_a_typed_fan_the_tiles_do_not_give_shows_as_a_dispute_on_the_operator_desk(
    hub: MahjongHub, page: Page
) -> None:
    """The official typed 30 fan for tiles worth 22: the hand is held (out of the scores) and
    the operator's desk says why, in the fans' words."""
    events, _ = with_tiles(hub.events, 2)
    play_to(hub, events, len(events))  # the rest of the session
    table, deal = 1, 2
    seqs = [e["seq"] for e in events if e["table"] == table]
    base = {"v": 1, "tournament": hub.config.id, "table": table, "console": f"table{table}"}
    hub.play(
        [
            base | {"seq": max(seqs) + 1, "type": "reopen", "deal": deal},
            base
            | {"seq": max(seqs) + 2, "type": "result", "seat": 1, "discarder": 2}
            | {"hand": HAND, "fan": 30},
        ]
    )
    ops = hub.ops()
    [row] = [d for d in ops["disputes"] if d["table"] == table]
    assert row["mahjong"]["typed"] == 30 and row["mahjong"]["fan"] == 22
    assert row["pot"] is None  # no pot: its amount is the fan
    page.goto(f"{hub.url}/overlays/operator.html?token={OPERATOR}")
    reason = page.locator(
        f'[data-testid="dispute-row"][data-table="{table}"] [data-testid="dispute-reason"]'
    )
    expect(reason).to_contain_text(
        "the official typed 30 fan but the tiles give 22 (Pure Straight 16,", timeout=5000
    )
    # no pot: an en dash
    disputed = page.locator(f'[data-testid="dispute-row"][data-table="{table}"]')
    expect(disputed.locator('[data-testid="dispute-pot"]')).to_have_text("\u2013")
    shot(page, "mcr-fans-dispute")


def test_a_penalty_at_an_mcr_table_is_in_hand_points(hub: MahjongHub, page: Page) -> None:
    """The TD's penalty at an MCR event: its ``chips`` are the hand's points (the chip-score,
    docs/mahjong.md), so the form, the check, the confirmation and the corrections log say
    "hand points", never chips."""
    events, _ = with_tiles(hub.events, 2)
    play_to(hub, events, len(events))
    page.goto(f"{hub.url}/overlays/operator.html?token={OPERATOR}")
    form = page.locator('[data-testid="td-penalty"]')
    expect(form.locator('input[name="chips"]')).to_have_attribute(
        "placeholder", "hand points", timeout=5000
    )
    page.locator('[data-testid="td-by"]').fill("TD Ana Ruiz")
    status = page.locator('[data-testid="td-status"]')
    rule(page, "penalty", False, table=2, seat=3, chips=-8, reason="slow play")
    expect(status).to_have_text("Hand points must be a whole number, 0 or more.")
    rule(page, "penalty", False, table=2, seat=3, chips=16, reason="slow play")
    team = hub.rest("/api/tables/2", OPERATOR)["seats"][2]["team"]
    expect(page.locator('[data-testid="td-ask-text"]')).to_have_text(
        f"Penalty 16 hand points to table 2 seat 3 ({team}), by TD Ana Ruiz?"
    )
    page.locator('[data-testid="td-ask-yes"]').click()
    expect(status).to_have_text("Penalty: done.", timeout=FAST)
    assert hub.ops()["penalties"][-1]["chips"] == 16
    row = page.locator('[data-testid="correction-row"][data-type="penalty"]').first
    expect(row).to_contain_text("16 hand points")
