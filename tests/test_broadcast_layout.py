"""Broadcast quality of the overlays on the real hub (issue #23, item 4): real Chromium, a real
ingest and server on loopback (``HubThread``), the sample sessions played into it.

- Cards and tiles are dealt once: across updates of a hand, a MutationObserver sees only the
  newly dealt cards added (the live table and the split screen), and the element counts stay.
- The commentator desk fits 1920x1080 with 6 and with 12 tables: every box inside its parent
  and the viewport, no box or table wider than its room, no text under 14 px on the screen.
- A 4-seat table (RPS Poker, piecepack hold'em) keeps every seat, bet and the title inside
  title-safe; the split screen stays inside the graphics-safe area.
- The split screen's header board never drops back; no equity on a finished hand; minus signs
  are U+2212.

Title-safe here is the stricter of the two conventions: the central 80 % (x 192-1728,
y 108-972; SMPTE RP 27.3's title-safe, what the live table's CSS calls ``--safe-*``); EBU R 95's
90 % graphics-safe (x 96-1824, y 54-1026) is checked where a page uses it (the split screen).
Screenshots go to docs/screenshots/ (1920x1080).
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
from playwright.sync_api import Page, expect

from hub.engine.core import Engine
from hub.files.config import load_config
from hub.files.decks import load_decks
from tests.browser import open_overlay
from tests.hubharness import COMMENTATOR, session_events
from tests.test_overlays_hub import HubThread, open_page

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
DOCS_SHOTS = ROOT / "docs" / "screenshots"
TITLE_SAFE = (192, 108, 1728, 972)  # SMPTE RP 27.3 title-safe (80 %), 1920x1080
GRAPHICS_SAFE = (96, 54, 1824, 1026)  # EBU R 95 graphics-safe (90 %), 1920x1080
ACTIONS = {"call", "check", "fold", "raise", "bet"}
FAST = 3000

# Every card or tile element added below `root` from now on: window.__added (their codes).
WATCH_CARDS = """(sel) => {
  window.__added = [];
  const root = document.querySelector(sel);
  new MutationObserver((list) => {
    for (const m of list) for (const n of m.addedNodes) {
      if (n.nodeType !== 1) continue;
      const found = n.matches('[data-card]') ? [n] : [...n.querySelectorAll('[data-card]')];
      for (const c of found) window.__added.push(c.dataset.card);
    }
  }).observe(root, { childList: true, subtree: true });
}"""

# Boxes (a selector) that leave `limits` (x0, y0, x1, y1) or their parent, and any element
# whose content is wider than its box (scrollWidth > clientWidth).
OUTSIDE = """([sel, limits, parent]) => {
  const [x0, y0, x1, y1] = limits, out = [];
  for (const n of document.querySelectorAll(sel)) {
    if (!n.checkVisibility()) continue;
    const r = n.getBoundingClientRect();
    if (r.left < x0 - 0.5 || r.top < y0 - 0.5 || r.right > x1 + 0.5 || r.bottom > y1 + 0.5) {
      out.push(`${sel} ${n.dataset.testid || ''} ${n.dataset.seat || n.dataset.table || ''} at
        ${Math.round(r.left)},${Math.round(r.top)}-${Math.round(r.right)},${Math.round(r.bottom)}`);
    }
    const p = n.parentElement.getBoundingClientRect();
    if (parent && (r.left < p.left - 0.5 || r.right > p.right + 0.5 || r.bottom > p.bottom + 0.5)) {
      out.push(`${sel} ${n.dataset.table || n.dataset.seat || ''} outside its parent`);
    }
    for (const c of [n, ...n.querySelectorAll('*')]) {
      const clipped = getComputedStyle(c).overflowX === 'hidden';
      if (c.clientWidth && c.scrollWidth > c.clientWidth + 1 && !clipped) {
        out.push(`${c.tagName}.${c.className} overflows (${c.scrollWidth} > ${c.clientWidth})`);
      }
    }
  }
  return out;
}"""


def docs_shot(page: Page, name: str) -> None:
    DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(700)
    page.screenshot(path=str(DOCS_SHOTS / f"{name}.png"))


class SampleHub(HubThread):
    """``HubThread`` playing another sample (tournament file and session)."""

    def __init__(self, sample: str, session: str, prefix: str) -> None:
        super().__init__(prefix)
        path = ROOT / "samples" / sample
        config = load_config(path)
        self.decks = load_decks(config, path.parent, dict(os.environ))
        self.config = dataclasses.replace(config, id=f"{prefix}-{uuid.uuid4().hex[:8]}")
        self.events = session_events(self.config.id, ROOT / "samples" / session)

    def pending(self, table: int) -> dict[str, Any] | None:
        """The next unsent event of `table`."""
        for event in self.events[self.sent :]:
            if event["table"] == table and not event.get("_sent"):
                return event
        return None

    def step(self) -> dict[str, Any]:
        """Send the session's next unsent event, in order."""
        while self.events[self.sent].get("_sent"):
            self.sent += 1
        event = self.events[self.sent]
        self.play([event])
        self.sent += 1
        return event

    def actions_ahead(self, table: int) -> int:
        """How many betting actions `table` has next in the session, in a row."""
        n = 0
        for event in self.events[self.sent :]:
            if event["table"] != table or event.get("_sent"):
                continue
            if event["type"] not in ACTIONS:
                break
            n += 1
        return n

    def live_table(self) -> tuple[int, dict[str, Any]]:
        """A table with a hand in progress whose next event is a betting action."""
        for _ in range(200):
            for t in self.config.tables:
                live = self.rest(f"/api/tables/{t}", COMMENTATOR)
                if live.get("status") == "in_progress" and self.actions_ahead(t) >= 4:
                    return t, live
            self.play([self.events[self.sent]])
            self.sent += 1
        raise AssertionError("no table in progress")


@contextlib.contextmanager
def sample_hub(sample: str, session: str, prefix: str, preload: int) -> Iterator[SampleHub]:
    h = SampleHub(sample, session, prefix)
    h.start()
    h.preload(preload)
    try:
        yield h
    finally:
        h.stop()


@pytest.fixture(scope="module")
def ifp6() -> Iterator[SampleHub]:
    with sample_hub("ifp6.toml", "ifp6-session.jsonl", "gfx6", 600) as h:
        yield h


def play_hand(
    hub: SampleHub, page: Page, table: int, each: Any = None, limit: int = 14
) -> list[dict[str, Any]]:
    """Send `table`'s betting actions one by one, each once the page showed the one before,
    until the hand ends; returns the table's REST payload after each (`each` is called with
    it once the page shows it)."""
    seen = []
    for _ in range(limit):
        nxt = hub.pending(table)
        if not nxt or nxt["type"] not in ACTIONS:
            break
        hub.next_event(table)
        live = hub.rest(f"/api/tables/{table}", COMMENTATOR)
        if live.get("status") != "in_progress":
            break
        seen.append(live)
        pot = f"{live['pot']:,}"
        if page.url.find("table.html") >= 0:
            expect(page.locator('[data-testid="pot"]')).to_have_text(pot, timeout=FAST)
        else:
            panel = page.locator(f'[data-testid="compare-panel"][data-table="{table}"]')
            expect(panel.locator('[data-testid="panel-pot"]')).to_have_text(pot, timeout=FAST)
        if each:
            each(live)
    return seen


@pytest.mark.parametrize("game", ["ifp6", "piecepack"])
def test_live_table_animates_only_newly_dealt_cards(
    page: Page, game: str, request: pytest.FixtureRequest
) -> None:
    """Cards (hold'em) and tiles (piecepack) of the live table across a hand's updates."""
    ifp6: SampleHub = request.getfixturevalue(game)
    table, before = ifp6.live_table()
    open_page(page, ifp6, f"table.html?table={table}&token={COMMENTATOR}&slot=0")
    expect(page.locator('[data-testid="seat"]')).to_have_count(len(before["seats"]))
    page.wait_for_timeout(500)
    count = page.locator("[data-card]").count()
    page.evaluate(WATCH_CARDS, '[data-testid="gfx"]')
    hole = page.locator('[data-testid="hole"] [data-card]').first.bounding_box()
    assert hole and hole["height"] >= 64 and hole["width"] >= 46  # readable at 1080p
    running = (
        "() => document.getAnimations().filter((a) => a.animationName === 'deal'"
        " && a.effect.target.matches('[data-card]')).length"
    )

    def same_elements(live: dict[str, Any]) -> None:
        # As many card elements as before plus the new board cards; at most those animate.
        new = len(live["board"]) - len(before["board"])
        assert page.locator("[data-card]").count() == count + new
        assert page.evaluate(running) <= new
        expect(page.locator('[data-testid="seat"]')).to_have_count(len(before["seats"]))

    seen = play_hand(ifp6, page, table, same_elements)
    assert len(seen) >= 3, "too short a hand to show anything"
    added = page.evaluate("window.__added")
    dealt = seen[-1]["board"][len(before["board"]) :]
    assert sorted(added) == sorted(dealt), f"{len(seen)} updates added {added}, dealt {dealt}"
    print(f"{game}: {len(seen)} updates, {len(added)} card elements added, {len(dealt)} dealt")


@pytest.fixture(scope="module")
def piecepack() -> Iterator[SampleHub]:
    with sample_hub("piecepack.toml", "piecepack-session.jsonl", "gfxpp", 340) as h:
        yield h


@pytest.mark.parametrize("game", ["ifp6", "piecepack"])
def test_split_screen_keeps_its_cards_and_board(
    page: Page, game: str, request: pytest.FixtureRequest
) -> None:
    """Cards (hold'em) and tiles (piecepack) of the split screen across a hand's updates."""
    ifp6: SampleHub = request.getfixturevalue(game)
    table, before = ifp6.live_table()
    seat = before["seats"][0]["seat"]
    open_page(
        page, ifp6, f"compare.html?deal={before['deal']}&seat={seat}&token={COMMENTATOR}&slot=0"
    )
    panel = page.locator(f'[data-testid="compare-panel"][data-table="{table}"]')
    expect(panel).to_have_count(1)
    page.wait_for_timeout(500)
    count = page.locator("[data-card]").count()
    panels = page.locator('[data-testid="compare-panel"]').count()
    header = int(page.locator('[data-testid="board"]').get_attribute("data-count") or 0)
    page.evaluate(WATCH_CARDS, '[data-testid="gfx"]')
    page.evaluate(
        """() => { window.__boards = []; const b = document.querySelector('[data-testid="board"]');
        new MutationObserver(() => window.__boards.push(Number(b.dataset.count)))
          .observe(b, { attributes: true, attributeFilter: ['data-count'] }); }"""
    )
    seen = play_hand(ifp6, page, table)
    assert len(seen) >= 3
    boards = page.evaluate("window.__boards")
    assert boards == sorted(boards), f"the header board dropped back: {boards}"
    final = int(page.locator('[data-testid="board"]').get_attribute("data-count") or 0)
    added = page.evaluate("window.__added")
    assert len(added) == final - header, f"added {added}, header board {header} -> {final}"
    assert page.locator("[data-card]").count() == count + final - header
    expect(page.locator('[data-testid="compare-panel"]')).to_have_count(panels)
    bad = page.evaluate(OUTSIDE, ['[data-testid="compare-panel"]', GRAPHICS_SAFE, True])
    assert bad == []
    docs_shot(page, f"split-screen-{game}")


# Panels whose newest street ends on a call with the bet it calls (or the call) out of view.
CALLED_OUT_OF_VIEW = """() => {
  const out = [];
  for (const p of document.querySelectorAll('[data-testid="compare-panel"]')) {
    const box = p.querySelector('.streets').getBoundingClientRect();
    const streets = p.querySelectorAll('.street');
    const acts = streets.length ? [...streets[streets.length - 1].querySelectorAll('.act')] : [];
    const last = acts[acts.length - 1];
    const bets = acts.filter((a) => ['bet', 'raise', 'big_blind'].includes(a.dataset.kind));
    if (!last || last.dataset.kind !== 'call' || !bets.length) continue;
    for (const [name, a] of [['bet', bets[bets.length - 1]], ['call', last]]) {
      const r = a.getBoundingClientRect();
      const inView = r.height && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
      if (!inView) out.push(`T${p.dataset.table} ${name}`);
    }
  }
  return out;
}"""


def test_split_screen_of_six_keeps_the_called_bet_and_its_board(
    page: Page, ifp6: SampleHub
) -> None:
    """Six panels of one deal while the session plays on: after every event the header board
    has not dropped back, each panel's call shows the bet it calls, the panels stay."""
    _, live = ifp6.live_table()
    deal = live["deal"]
    open_page(page, ifp6, f"compare.html?deal={deal}&seat=3&token={COMMENTATOR}&slot=0")
    panels = page.locator('[data-testid="compare-panel"]')
    expect(panels).to_have_count(6)
    boards: list[int] = []
    calls = gave_way = 0
    for _ in range(90):
        event = ifp6.step()
        row = next(
            r
            for r in ifp6.rest(f"/api/compare/{deal}/3", COMMENTATOR)["rows"]
            if r["table"] == event["table"]
        )
        panel = page.locator(f'[data-testid="compare-panel"][data-table="{event["table"]}"]')
        expect(panel.locator('[data-testid="panel-pot"]')).to_have_text(
            f"{row['pot']:,}", timeout=FAST
        )
        boards.append(int(page.locator('[data-testid="board"]').get_attribute("data-count") or 0))
        assert page.evaluate(CALLED_OUT_OF_VIEW) == []
        calls += event["type"] == "call"
        gave_way += page.locator(".lbl[data-more]").count() > 0
        assert panels.count() == 6
    assert boards == sorted(boards), f"the header board dropped back: {boards}"
    assert calls > 10
    print(f"{calls} calls; a street gave way for its called bet after {gave_way} events")


def longest_street(sample: str, session: str) -> tuple[int, int, int, int]:
    """The session's longest street: (table, deal, index of its first action, of its last),
    found by replaying the session through the engine (the sample's schedule decides where)."""
    path = ROOT / "samples" / sample
    config = load_config(path)
    engine = Engine(config, load_decks(config, path.parent, dict(os.environ)))
    streets: dict[tuple[int, int, str], list[int]] = {}
    for i, event in enumerate(session_events(config.id, ROOT / "samples" / session)):
        hand = engine.state.tables[event["table"]].current
        before = (hand.deal, str(hand.hand.street)) if hand is not None else None
        assert engine.submit(event, float(i)).ok
        if event["type"] in ACTIONS and before is not None:
            streets.setdefault((event["table"], *before), []).append(i)
    (table, deal, _), seen = max(streets.items(), key=lambda kv: (len(kv[1]), -kv[1][0]))
    return table, deal, seen[0], seen[-1]


def test_a_long_street_keeps_the_called_bet_in_view(page: Page) -> None:
    """The split screen of six tables while table 6 plays the session's longest street: every
    call shows the bet it calls, whole rows only (the street's first actions give way)."""
    table, deal, first, last = longest_street("ifp6.toml", "ifp6-session.jsonl")
    with sample_hub("ifp6.toml", "ifp6-session.jsonl", "gfxlong", first) as hub:
        open_page(page, hub, f"compare.html?deal={deal}&seat=3&token={COMMENTATOR}&slot=0")
        expect(page.locator('[data-testid="compare-panel"]')).to_have_count(6)
        panel = page.locator(f'[data-testid="compare-panel"][data-table="{table}"]')
        gave_way = 0
        while not hub.events[last].get("_sent"):
            hub.next_event(table)
            row = next(
                r
                for r in hub.rest(f"/api/compare/{deal}/3", COMMENTATOR)["rows"]
                if r["table"] == table
            )
            pot = panel.locator('[data-testid="panel-pot"]')
            expect(pot).to_have_text(f"{row['pot']:,}", timeout=FAST)
            assert page.evaluate(CALLED_OUT_OF_VIEW) == []
            gave_way += panel.locator(".lbl[data-more]").count()
        docs_shot(page, "split-screen-long-street")
        print(f"{gave_way} times the street's first actions gave way to the bet being called")


def test_no_equity_on_a_finished_hand(page: Page, ifp6: SampleHub) -> None:
    """The split screen of a deal some tables finished while one plays it: a finished panel
    shows its chip-score, no chance to win (the live panel its chance now)."""
    done: list[dict[str, Any]] = []
    for _ in range(300):
        _, live = ifp6.live_table()
        rows = ifp6.rest(f"/api/compare/{live['deal']}/3", COMMENTATOR)["rows"]
        done = [
            r  # (an all-in's odds before its run-out stay: "All-in 81.1%")
            for r in rows
            if r["status"] == "complete" and r.get("equity") and not r["equity"].get("runout")
        ]
        if done:
            break
        ifp6.step()
    assert done, "no deal with a finished and a live table"
    open_page(page, ifp6, f"compare.html?deal={live['deal']}&seat=3&token={COMMENTATOR}&slot=0")
    for r in done:
        row = page.locator(f'[data-testid="compare-panel"][data-table="{r["table"]}"]')
        expect(row.locator('[data-testid="panel-status"]')).to_have_text("complete")
        expect(row.locator('[data-testid="panel-equity"]')).to_have_text("")
        expect(row.locator('[data-testid="panel-chips"]')).not_to_have_text("\u2013")


def test_ticker_prints_minus_signs(page: Page, ifp6: SampleHub) -> None:
    """A loss in the ticker reads with U+2212, as every figure on air, never a hyphen-minus."""
    items = {i["id"]: i for i in ifp6.rest("/api/ticker", COMMENTATOR)["items"]}
    assert any("\u2212" in i["text"] for i in items.values()), "no loss in the ticker"
    open_page(page, ifp6, f"ticker.html?token={COMMENTATOR}&slot=0")
    item = page.locator('[data-testid="ticker-item"]').last
    for _ in range(len(items)):
        expect(item).to_have_class(re.compile(r"^item$"))
        text = items[int(item.get_attribute("data-id") or 0)]["text"]
        expect(item.locator('[data-testid="ticker-text"]')).to_have_text(text)
        assert not re.search(r"(^|\s)-\d", text), text
        page.evaluate("window.next()")


SMALLEST_TEXT = """() => {
  // Every text on the desk: its font size times the zoom of it and its ancestors (deskfit.js
  // zooms a column down until it fits), the size it has on the 1920x1080 screen.
  const zoomOf = (n) => {
    let z = 1;
    for (let a = n; a; a = a.parentElement) z *= parseFloat(getComputedStyle(a).zoom) || 1;
    return z;
  };
  const sizes = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const text = walker.currentNode;
    const node = text.parentElement;
    if (!text.textContent.trim() || !node.getClientRects().length) continue;
    const size = parseFloat(getComputedStyle(node).fontSize) * zoomOf(node);
    sizes.push([Math.round(size * 100) / 100, text.textContent.trim().slice(0, 24)]);
  }
  sizes.sort((a, b) => a[0] - b[0]);
  return sizes.slice(0, 5);
}"""
MIN_DESK_PX = 14.0  # the smallest text the desk may show on a 1920x1080 screen (issue #23.4)


def desk_fits(page: Page, tables: int) -> None:
    boxes = page.locator('[data-testid="com-table"]')
    expect(boxes).to_have_count(tables, timeout=5000)
    expect(page.locator('[data-testid="com-seat"]').first).to_be_visible()
    page.wait_for_timeout(800)
    bad = page.evaluate(OUTSIDE, [".com .card-box", (0, 0, 1920, 1080), True])
    assert bad == [], bad
    assert page.evaluate("document.documentElement.scrollHeight") <= 1080
    assert page.evaluate("document.documentElement.scrollWidth") <= 1920
    zoom = page.evaluate(
        "() => [...document.querySelectorAll('.com-tables, .com-side')].map((n) => n.dataset.zoom)"
    )
    print(f"desk of {tables} tables: zoom (tables, side) {zoom}")
    smallest = page.evaluate(SMALLEST_TEXT)
    print(f"desk of {tables} tables: smallest texts (px, text) {smallest}")
    assert smallest and smallest[0][0] >= MIN_DESK_PX, smallest


def test_commentator_desk_fits_six_tables(page: Page, ifp6: SampleHub) -> None:
    open_overlay(page, ifp6.url, f"commentator.html?token={COMMENTATOR}", visible=False)
    desk_fits(page, 6)
    docs_shot(page, "commentator-6-tables")


def test_commentator_desk_fits_twelve_tables(page: Page) -> None:
    with sample_hub("ifp-event.toml", "ifp-event-session.jsonl", "gfx12", 700) as hub:
        open_overlay(
            page, hub.url, f"commentator.html?tables=12&token={COMMENTATOR}", visible=False
        )
        desk_fits(page, 12)
        docs_shot(page, "commentator-12-tables")


@pytest.mark.parametrize(
    ("sample", "session", "preload"),
    [
        ("rps-poker.toml", "rps-poker-session.jsonl", 300),
        ("piecepack.toml", "piecepack-session.jsonl", 340),
    ],
)
def test_four_seat_table_stays_inside_title_safe(
    page: Page, sample: str, session: str, preload: int
) -> None:
    with sample_hub(sample, session, "gfx4", preload) as hub:
        table, _ = hub.live_table()
        open_page(page, hub, f"table.html?table={table}&token={COMMENTATOR}&slot=0")
        expect(page.locator('[data-testid="seat"]')).to_have_count(4)
        page.wait_for_timeout(600)
        for sel in ('[data-testid="seat"]', '[data-testid="bet"]', ".title", ".centre > *"):
            bad = page.evaluate(OUTSIDE, [sel, TITLE_SAFE, False])
            assert bad == [], bad
        overlaps = page.evaluate(
            """() => {
            const box = (n) => n.getBoundingClientRect();
            const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom
              && b.top < a.bottom;
            const centre = [...document.querySelectorAll(
              '.street, .board, .pot-line, .to-act, .banner, .eqnote',
            )].filter((n) => n.offsetParent);
            return [...document.querySelectorAll('.seat')].flatMap((s) => centre
              .filter((c) => meet(box(s), box(c))).map((c) => `S${s.dataset.seat} ${c.className}`));
        }"""
        )
        assert overlaps == []
        docs_shot(page, f"table-4-seats-{sample.split('.')[0]}")
