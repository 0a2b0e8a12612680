"""The table console page plays the other games from their declarations (issue #32 items 5-7):
Debian's Chromium against the real hub (ingest and edge on the embedded bus), one console token
per table.

RPS Poker: the first hand of every table of samples/rps-poker.toml's session is entered by
tapping on that table's console page alone: each seat's throws (masked as they are tapped, a
"hidden" chip once in, never in the page's text), the betting once a round's throws are in, the
winners (a wrong winner first: refused, in the hub's words). The journal holds each table's
hand, and `duplicast replay` of the export gives the standings the hub serves. With the dealer
"chosen", the pad asks for the dealer's throws (`reveal`) once every player has thrown. MCR:
the result's form (winner, discarder or self-drawn, fan) and a drawn hand; a whole deal of
samples/mcr.toml at its four tables, each hand tapped out in the tile picker (issue #32 item 7),
then `duplicast replay` of the export gives the standings the hub serves. Screenshots of
docs/console.md go to docs/screenshots/console-*.png.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from hub.domain.games import registry
from hub.domain.games.rps.rules import RpsRules
from hub.engine.core import Engine
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.files.eventlog import dumps, header, journal_events
from hub.roles.embedded import OVERLAYS, IngestSource
from hub.serve.auth import Auth, ConsoleSeat
from hub.serve.http import create_app, serve
from tests.browser import new_page
from tests.hubharness import COMMENTATOR, OPERATOR, ROOT, duplicast
from tests.test_console_page import (
    LANDSCAPE,
    PORTRAIT,
    TAP_TIMEOUT,
    Link,
    fits,
    key_in,
    settled,
    shot,
    tid,
)
from tests.test_overlays_hub import HubThread

pytestmark = pytest.mark.browser

SAMPLES = ROOT / "samples"


def token(table: int) -> str:
    return f"console-table{table}-5d1e0c7b9a2f4e68"


class GameHub(HubThread):
    """The hub of a sample tournament (its own id), with a console token for every table."""

    def __init__(self, sample: str, **changes: Any) -> None:
        super().__init__("games")
        self.config_file = SAMPLES / f"{sample}.toml"
        config = load_config(self.config_file)
        self.config = dataclasses.replace(config, **changes)
        self.decks = load_decks(self.config, SAMPLES, dict(os.environ))
        session = SAMPLES / f"{sample}-session.jsonl"
        self.events = [json.loads(x) for x in session.read_text().splitlines() if x.strip()]
        seats = [ConsoleSeat(f"table{t}", t, token(t)) for t in self.config.tables]
        self.tokens = Auth(COMMENTATOR, OPERATOR, consoles=tuple(seats))

    async def _start(self) -> None:
        engine = Engine(self.config, self.decks)
        self.source = IngestSource(self.bus, engine, own_bus=False, keys=self.tokens.keyring())
        app = create_app(
            self.source, overlays_dir=OVERLAYS, auth=self.tokens, metrics=self.source.metrics
        )
        self.server = await serve(app, "127.0.0.1", self.port)
        self.port = self.server.port

    def journal(self) -> list[dict[str, Any]]:
        async def read() -> list[dict[str, Any]]:
            return [line async for line in journal_events(self.bus, self.config.id)]

        lines: list[dict[str, Any]] = self.run(read())
        return lines

    def export(self, path: Path) -> None:
        """`duplicast export --events`, in process."""
        lines = [header(self.config.id), *self.journal()]
        path.write_text("".join(dumps(line) + "\n" for line in lines))

    def first_hand(self, table: int) -> list[dict[str, Any]]:
        """The table's first hand of the session, as the page enters it: from its start to its
        winners, or to the fold that ends it."""
        out: list[dict[str, Any]] = []
        for event in self.events:
            if event["table"] != table:
                continue
            if event["type"] == "start" and out:
                return out
            out.append({k: event[k] for k in ("type", "deal", "seat", "seats", "amount", "throws")
                        if k in event})  # fmt: skip
            if event["type"] == "win":
                return out
        return out


@pytest.fixture
def pages(browser: Browser) -> Iterator[Any]:
    """Open table ``t``'s console page: every page must log no error."""
    errors: list[str] = []
    opened: list[Page] = []

    def opener(
        hub: GameHub, table: int, size: tuple[int, int] = LANDSCAPE, before: Any = None
    ) -> tuple[Page, Link]:
        page = new_page(browser, *size, errors)
        link = Link(page)
        if before is not None:
            before(page)
        page.goto(f"{hub.url}/overlays/console.html?token={token(table)}")
        expect(tid(page, "link")).to_have_attribute("data-state", "open", timeout=TAP_TIMEOUT)
        expect(tid(page, "pad").locator("button").first).to_be_visible(timeout=TAP_TIMEOUT)
        opened.append(page)
        return page, link

    yield opener
    for page in opened:
        page.context.close()
    assert errors == []


@pytest.fixture
def rps() -> Iterator[GameHub]:
    hub = GameHub("rps-poker")
    hub.start()
    yield hub
    hub.stop()


def page_text(page: Page) -> str:
    """Everything the page shows or holds as text: its text and its inputs' values."""
    text: str = page.evaluate(
        """() => document.body.innerText + '\\n'
          + [...document.querySelectorAll('input')].map((i) => i.value).join('\\n')"""
    )
    return text


def enter_throws(page: Page, seat: int, throws: str, *, secret: bool = True) -> None:
    """A seat's throws on the pad: masked as they are tapped, never in the page after."""
    key = "throws" if secret else "reveal"
    if tid(page, f"{key}-form").count() == 0:
        tid(page, key).click()
    if secret:
        tid(page, f"pick-{seat}").click()
    for i, letter in enumerate(throws):
        tid(page, f"throw-{letter}").click()
        if secret:
            expect(tid(page, "throws-slots")).to_have_text(
                re.compile(rf"^●{{{i + 1}}}○*\s*hidden$")
            )
    tid(page, f"{key}-send").click()
    settled(page)
    if secret and len(throws) > 1:
        assert throws not in page_text(page)


def tap(page: Page, event: dict[str, Any]) -> None:
    """Enter one event of an RPS Poker hand by tapping."""
    kind = event["type"]
    if kind == "start":
        expect(tid(page, "start")).to_have_text(f"Start deal {event['deal']}")
        tid(page, "start").click()
    elif kind == "throws":
        enter_throws(page, event["seat"], event["throws"])
        return
    elif kind in ("fold", "check", "call"):
        expect(tid(page, "to-act")).to_contain_text(f"Seat {event['seat']}")
        tid(page, kind).click()
    elif kind in ("bet", "raise"):
        expect(tid(page, "to-act")).to_contain_text(f"Seat {event['seat']}")
        key_in(page, event["amount"])
        tid(page, "send-amount").click()
    elif kind == "win":
        tid(page, "win").click()
        for seat in event["seats"]:
            tid(page, f"pick-{seat}").click()
        tid(page, "win-send").click()
    else:
        raise AssertionError(f"no tap for {kind}")
    settled(page)


def essence(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What an entry says (the page adds the deal to every entry and the amount to a call)."""
    keep = ("type", "seat", "seats", "amount", "throws")

    def said(r: dict[str, Any], k: str) -> bool:
        return r.get(k) is not None and not (k == "amount" and r["type"] == "call")

    return [{k: r[k] for k in keep if said(r, k)} for r in rows]


def wrong_winner(hub: GameHub, table: int, hand: list[dict[str, Any]]) -> int | None:
    """A seat still in at the showdown that the throws do not give the pot to (None: the hand
    has no such seat), found on engines of its own."""
    if hand[-1]["type"] != "win":
        return None
    base = {"v": 1, "tournament": hub.config.id, "table": table, "console": f"table{table}"}
    folded = {e["seat"] for e in hand if e["type"] == "fold"}
    for seat in sorted(set(range(1, hub.config.seats + 1)) - folded - set(hand[-1]["seats"])):
        trial = Engine(hub.config, hub.decks)
        for seq, event in enumerate(hand[:-1], 1):
            assert trial.submit({**base, **event, "seq": seq, "deal": hand[0]["deal"]}, 0.0).ok
        win = {**base, "type": "win", "deal": hand[0]["deal"], "seats": [seat], "seq": len(hand)}
        out = trial.submit(win, 0.0)
        if not out.ok and out.code == "bad_winner":
            return seat
    return None


def test_rps_poker_is_played_at_every_table_from_the_console_alone(
    rps: GameHub, pages: Any, tmp_path: Path
) -> None:
    refused_at: int | None = None
    for table in rps.config.tables:
        page, _ = pages(rps, table)
        hand = rps.first_hand(table)
        wrong = None if refused_at is not None else wrong_winner(rps, table, hand)
        for i, event in enumerate(hand):
            if event["type"] == "throws" and i == 1 and table == 1:
                tid(page, "throws").click()  # the guide's picture: the gambit's throws
                tid(page, f"pick-{event['seat']}").click()
                tid(page, "throw-R").click()
                fits(page)
                shot(page, "rps-throws")
                tid(page, "throws-clear").click()
            if event["type"] == "win" and wrong is not None:
                tap_wrong_winner(rps, page, wrong)
                refused_at = table
            tap(page, event)
            if table == 1 and event["type"] == "throws" and hand[i + 1]["type"] != "throws":
                # the round's throws are in: its betting opens, the throws stay hidden
                expect(tid(page, "to-act")).to_be_visible()
                expect(tid(page, "hidden-chip")).to_have_count(0)
            if table == 1 and i == 2:
                expect(tid(page, "hidden-chip")).to_have_count(2)  # two seats have thrown
                expect(tid(page, "throws-prompt").or_(tid(page, "throws-form"))).to_be_visible()
        expect(tid(page, "deal")).to_contain_text("complete")
        mine = [
            x for x in rps.journal() if x.get("console") == f"table{table}" and "refused" not in x
        ]
        assert essence(mine) == essence(hand)
    assert refused_at is not None, "no table's first hand had a winner to get wrong"

    export = tmp_path / "events.jsonl"
    rps.export(export)
    config_file = tmp_path / "rps-poker.toml"
    config_file.write_text(
        rps.config_file.read_text().replace('id = "rps-demo"', f'id = "{rps.config.id}"')
    )
    assert load_config(config_file).id == rps.config.id
    replayed = duplicast("replay", "--config", str(config_file), str(export), "--indent", "0")
    assert replayed.returncode == 0, replayed.stderr[-2000:]
    live = settled_standings(rps.url)
    assert json.loads(replayed.stdout) == live


def tap_wrong_winner(hub: GameHub, page: Page, seat: int) -> None:
    """A winner the throws contradict: refused, the hub's sentence shown, the pad usable."""
    tid(page, "win").click()
    tid(page, f"pick-{seat}").click()
    tid(page, "win-send").click()
    expect(tid(page, "refusal")).to_be_visible(timeout=TAP_TIMEOUT)
    expect(tid(page, "refusal")).to_contain_text("Those winners cannot be right")
    refused = [x["refused"] for x in hub.journal() if "refused" in x]
    assert refused and refused[-1]["code"] == "bad_winner"
    expect(tid(page, "refusal")).to_contain_text(refused[-1]["error"])
    shot(page, "rps-refusal")
    tid(page, "refusal-ok").click()


def settled_standings(url: str) -> Any:
    """The live standings the hub serves, once two reads a moment apart agree."""
    headers = {"authorization": f"Bearer {OPERATOR}"}
    previous = None
    deadline = time.monotonic() + 30
    with httpx.Client(base_url=url, timeout=5.0) as http:
        while time.monotonic() < deadline:
            response = http.get("/api/standings", headers=headers)
            assert response.status_code == 200, response.text[:300]
            data = response.json()["data"]
            if data == previous:
                return data
            previous = data
            time.sleep(0.5)
    raise AssertionError("the standings never settled")


def test_the_service_worker_keeps_every_module_the_console_page_loads() -> None:
    """A reload during an outage opens the pad from the service worker's copy: every module the
    page imports, and every game's overlay module (the pad's field widgets), must be kept."""
    sw = (OVERLAYS / "console-sw.js").read_text()
    kept = set(re.findall(r"^  '([^']+)',", sw, re.M))
    todo = ["js/console.js"]
    todo += [f"js/games/{g.overlay}" for g in registry.games.values() if g.overlay]
    seen: set[str] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        text = (OVERLAYS / path).read_text()
        for found in re.findall(r"""(?:from|import)\s*\(?\s*'(\.{1,2}/[^']+\.js)'""", text):
            todo.append(os.path.normpath(os.path.join(os.path.dirname(path), found)))
    assert "js/games/index.js" in seen
    assert sorted(seen - kept) == []


def test_rps_poker_with_a_chosen_dealer_asks_for_his_throws(pages: Any) -> None:
    """`[rps] dealer = "chosen"`: once every player has thrown, the pad asks for the dealer's
    throws (shown: they are turned over for the table), then opens the round's betting."""
    hub = GameHub("rps-poker", game_rules=RpsRules(dealer="chosen"))
    hub.start()
    try:
        page, _ = pages(hub, 1, PORTRAIT)
        hand = hub.first_hand(1)
        tap(page, hand[0])
        expect(tid(page, "reveal")).to_have_count(0)  # not before every player has thrown
        for event in hand[1:4]:
            tap(page, event)
        expect(tid(page, "reveal-prompt")).to_contain_text("the dealer turns over his gambit")
        expect(tid(page, "to-act")).to_have_count(0)  # no betting before the dealer's throws
        tid(page, "reveal").click()
        for letter in "RR":
            tid(page, f"throw-{letter}").click()
        expect(tid(page, "reveal-why")).to_have_text("1 more throw to enter")
        expect(tid(page, "reveal-send")).to_be_disabled()
        tid(page, "throw-S").click()
        expect(tid(page, "throw-R")).to_be_disabled()  # the gambit's three are in
        expect(tid(page, "throws-slots")).to_have_text("RRS")  # the dealer's are not secret
        fits(page)
        shot(page, "rps-reveal")
        tid(page, "reveal-send").click()
        settled(page)
        expect(tid(page, "to-act")).to_contain_text(f"Seat {hand[4]['seat']}")
        tap(page, hand[4])
        lines = [x for x in hub.journal() if "refused" not in x]
        assert [(x["type"], x.get("throws")) for x in lines][3:6] == [
            ("throws", hand[3]["throws"]),
            ("reveal", "RRS"),
            (hand[4]["type"], None),
        ]
    finally:
        hub.stop()


def test_a_typed_field_keeps_its_focus_through_the_feeds_updates(
    pages: Any, browser: Browser
) -> None:
    """A feed update redraws the console's pad (here the TD fixes a team's colour on the
    operator panel: the standings move): the fan the official is typing keeps its focus, so
    what they type next goes on in the field. (The field moved to the new pad and lost its
    focus: the next digits went nowhere, and a tablet's keyboard closes under the finger.)"""
    hub = GameHub("mcr")
    hub.start()
    try:
        page, _ = pages(hub, 1)
        tid(page, "start").click()
        settled(page)
        tid(page, "result").click()
        tid(page, "pick-2").click()
        tid(page, "discarder-3").click()
        fan = tid(page, "fan-input")
        fan.click()
        page.keyboard.type("1")
        page.evaluate(
            """() => new MutationObserver(() => { document.body.dataset.padDrawn = 'yes'; })
              .observe(document.querySelector('[data-testid="pad"]'), { childList: true })"""
        )
        desk = new_page(browser, 1920, 1080, [])
        desk.goto(f"{hub.url}/overlays/operator.html?token={OPERATOR}")
        team = hub.rest("/api/standings")["like_for_like"]["teams"][0]["team"]
        tid(desk, "td-by").fill("TD Ana")
        roster = tid(desk, "td-roster")
        roster.locator('input[name="team"]').fill(team)
        roster.locator('input[name="colour"]').fill("#123456")
        tid(desk, "td-roster-send").click()
        tid(desk, "td-ask-yes").click()
        expect(tid(desk, "td-status")).to_contain_text("done", timeout=TAP_TIMEOUT)
        desk.context.close()
        drawn = page.locator("body")
        expect(drawn).to_have_attribute("data-pad-drawn", "yes", timeout=TAP_TIMEOUT)
        expect(fan).to_be_focused()
        page.keyboard.type("2")
        expect(fan).to_have_value("12")
        expect(tid(page, "result-send")).to_contain_text("fan 12")
    finally:
        hub.stop()


def test_mcr_results_are_entered_from_the_console(pages: Any) -> None:
    """MCR's `result`: a win (winner, discarder or self-drawn, fan) and a drawn hand."""
    hub = GameHub("mcr")
    hub.start()
    try:
        page, _ = pages(hub, 1)
        deals = [e["deal"] for e in hub.events if e["table"] == 1 and e["type"] == "start"]
        tid(page, "start").click()
        settled(page)
        tid(page, "result").click()
        expect(tid(page, "result-send")).to_be_disabled()
        tid(page, "pick-2").click()
        tid(page, "discarder-3").click()
        tid(page, "fan-input").fill("12")
        expect(tid(page, "result-send")).to_be_enabled()
        fits(page)
        shot(page, "mcr-result")
        tid(page, "flag-self_draw").click()  # the alternative of a discarder: one of the two
        expect(tid(page, "discarder-3")).not_to_have_class(re.compile("picked"))
        tid(page, "discarder-3").click()
        tid(page, "result-send").click()
        settled(page)
        expect(tid(page, "deal")).to_contain_text("complete")
        tid(page, "start").click()
        settled(page)
        tid(page, "result-draw").click()
        settled(page)
        expect(tid(page, "deal")).to_contain_text("complete")
        lines = [x for x in hub.journal() if "refused" not in x]
        assert [
            {k: x[k] for k in ("type", "deal", "seat", "discarder", "fan", "draw") if k in x}
            for x in lines
        ] == [
            {"type": "start", "deal": deals[0]},
            {"type": "result", "deal": deals[0], "seat": 2, "discarder": 3, "fan": 12},
            {"type": "start", "deal": deals[1]},
            {"type": "result", "deal": deals[1], "draw": True},
        ]
    finally:
        hub.stop()


# A game module that brings its own widget for a field kind (the contract's `padFields`): the
# MCR module as served, plus a widget of kind `amount` that gives 8 on one tap.
PAD_FIELDS = """
import mcr from './mcr-served.js';
function eight(box, ctx) {
  let value = null;
  const b = document.createElement('button');
  b.dataset.testid = `${ctx.field.name}-eight`;
  b.textContent = 'Eight';
  b.onclick = () => { value = 8; ctx.changed(); };
  box.append(b);
  return {
    value: () => value,
    problem: () => (value === null ? `${ctx.field.label}: tap Eight` : null),
    reset: () => { value = null; },
  };
}
export default { ...mcr, padFields: { amount: eight } };
"""


def test_a_game_module_brings_its_own_field_widget(pages: Any) -> None:
    """The pad looks a field's kind up in the game's overlay module first (`padFields`)."""
    hub = GameHub("mcr")
    hub.start()

    def plug(page: Page) -> None:
        served = (OVERLAYS / "js" / "games" / "mcr.js").read_text()
        page.route(
            re.compile(r".*/js/games/mcr-served\.js$"),
            lambda route: route.fulfill(body=served, content_type="text/javascript"),
        )
        page.route(
            re.compile(r".*/js/games/mcr\.js$"),
            lambda route: route.fulfill(body=PAD_FIELDS, content_type="text/javascript"),
        )

    try:
        page, _ = pages(hub, 1, LANDSCAPE, plug)
        tid(page, "start").click()
        settled(page)
        tid(page, "result").click()
        tid(page, "pick-1").click()
        tid(page, "flag-self_draw").click()
        expect(tid(page, "fan-input")).to_have_count(0)  # the module's widget, not the page's
        expect(tid(page, "result-why")).to_have_text("Fan: tap Eight")
        tid(page, "fan-eight").click()
        tid(page, "result-send").click()
        settled(page)
        result = [x for x in hub.journal() if x.get("type") == "result"]
        assert [(x["seat"], x.get("self_draw"), x["fan"]) for x in result] == [(1, True, 8)]
    finally:
        hub.stop()


def test_without_its_module_the_pad_says_it_cannot_enter_the_throws(browser: Browser) -> None:
    """RPS Poker's throws are its module's widget (`padFields`, js/throwpad.js), not the
    page's: with the module not loaded, the form says it cannot enter them and sends nothing."""
    hub = GameHub("rps-poker")
    hub.start()
    errors: list[str] = []
    page = new_page(browser, *LANDSCAPE, errors)
    page.route(
        re.compile(r".*/js/games/rps-poker\.js$"),
        lambda route: route.fulfill(status=404, body="gone", content_type="text/plain"),
    )
    try:
        page.goto(f"{hub.url}/overlays/console.html?token={token(1)}")
        expect(tid(page, "link")).to_have_attribute("data-state", "open", timeout=TAP_TIMEOUT)
        tid(page, "start").click()
        settled(page)
        tid(page, "throws").click()
        expect(tid(page, "throws-form")).to_contain_text(
            "Throws: this page cannot enter a field of kind “throws”."
        )
        expect(tid(page, "throw-R")).to_have_count(0)
        expect(tid(page, "throws-why")).to_have_text("Throws: still to enter")
        expect(tid(page, "throws-send")).to_be_disabled()
        assert any("rps-poker" in e and "did not load" in e for e in errors), errors
    finally:
        page.context.close()
        hub.stop()


# A whole MCR deal at the four tables, each won hand tapped out in the tile picker (issue #32
# item 7). The hub does not check tiles against the walls: these are legal hands of their own.
# (Concealed tiles in the picker's order, as it sends them: characters, dots, bamboo, honours.)
PURE_STRAIGHT_WITH_A_CHOW = {
    "concealed": ["1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m", "5p"],
    "melds": [{"kind": "chow", "tiles": ["4s", "5s", "6s"]}],
    "winning": "5p",
}
CONCEALED_PURE_STRAIGHT = {
    "concealed": ["1p", "2p", "3p", "4p", "5p", "6p", "7p", "8p", "9p", "2s", "3s", "4s", "7z"],
    "melds": [],
    "winning": "7z",
}
MIXED_STRAIGHT_WITH_A_PUNG = {
    "concealed": ["9m", "4p", "5p", "6p", "7s", "8s", "9s"],
    "melds": [
        {"kind": "chow", "tiles": ["1m", "2m", "3m"]},
        {"kind": "pung", "tiles": ["5z", "5z", "5z"]},
    ],
    "winning": "9m",
}
NOT_A_CHOW = "'4s 5s 7s' is not a chow: three tiles in a row of one suit"


def pick_tiles(page: Page, target: str, tiles: list[str]) -> None:
    """Tap tiles into the picker's zone or meld ``target`` (concealed, chow, pung, winning...)."""
    tid(page, f"tp-target-{target}").click()
    for code in tiles:
        tid(page, "tp-palette").locator(f'button[data-tile="{code}"]').click()


def pick_hand(page: Page, hand: dict[str, Any]) -> None:
    """A whole hand in the picker, as it lies on the table: melds, concealed, winning tile."""
    for meld in hand["melds"]:
        pick_tiles(page, meld["kind"], meld["tiles"])
    pick_tiles(page, "concealed", hand["concealed"])
    pick_tiles(page, "winning", [hand["winning"]])
    expect(tid(page, "tp-problem")).to_have_text(
        "14 tiles: a possible hand (the hub counts the fan)."
    )


def test_a_whole_mcr_deal_is_played_at_four_tables_from_the_console_alone(
    pages: Any, tmp_path: Path
) -> None:
    """Table 1's first deal of samples/mcr.toml played at all four tables (the others reach it
    through their earlier deals, drawn hands): a win on a discard with a meld (the picture of
    docs/console.md), a self-drawn win, a drawn hand, and a win whose typed fan the tiles
    contradict (an impossible hand first, refused on the page in the hub's words): the tablet
    shows the dispute, the official confirms it from the pad and the tiles' fan scores. Then
    `duplicast replay` of the export gives the standings the hub serves."""
    hub = GameHub("mcr")
    hub.start()
    try:
        wins: dict[int, dict[str, Any]] = {}
        deal = Engine(hub.config, hub.decks).state.tables[1].order[0]  # table 1's first
        for table in hub.config.tables:
            page, _ = pages(hub, table)
            while (now := int(tid(page, "start").inner_text().split()[-1])) != deal:
                tid(page, "start").click()  # the table's deals before it: drawn hands
                settled(page)
                tid(page, "result-draw").click()
                settled(page)
                expect(tid(page, "start")).not_to_have_text(f"Start deal {now}")
            tid(page, "start").click()
            settled(page)
            if table == 3:
                tid(page, "result-draw").click()
                settled(page)
                expect(tid(page, "deal")).to_contain_text("complete")
                continue
            tid(page, "result").click()
            expect(tid(page, "tilepicker")).to_be_visible()
            if table == 1:
                tid(page, "pick-2").click()
                tid(page, "discarder-3").click()
                hand = PURE_STRAIGHT_WITH_A_CHOW
                wins[table] = {"seat": 2, "discarder": 3, "hand": hand}
            elif table == 2:
                tid(page, "pick-1").click()
                tid(page, "flag-self_draw").click()
                hand = CONCEALED_PURE_STRAIGHT
                wins[table] = {"seat": 1, "self_draw": True, "hand": hand}
            else:
                tid(page, "pick-4").click()
                tid(page, "discarder-1").click()
                pick_tiles(page, "chow", ["4s", "5s", "7s"])  # impossible: refused on the page
                expect(tid(page, "tp-problem")).to_have_text(NOT_A_CHOW)
                expect(tid(page, "result-why")).to_have_text(NOT_A_CHOW)
                expect(tid(page, "result-send")).to_be_disabled()
                tid(page, "tp-remove-meld-0").click()
                hand = MIXED_STRAIGHT_WITH_A_PUNG
                tid(page, "fan-input").fill("30")  # the official's total: not the tiles'
                wins[table] = {"seat": 4, "discarder": 1, "hand": hand, "fan": 30}
            pick_hand(page, hand)
            expect(tid(page, "result-send")).to_be_enabled()
            if table == 1:
                fits(page)
                shot(page, "mcr-hand")
            tid(page, "result-send").click()
            settled(page)
            if table == 4:
                expect(tid(page, "dispute")).to_be_visible()
                expect(tid(page, "dispute")).to_contain_text(f"Deal {deal} is disputed")
                expect(tid(page, "dispute")).to_contain_text(
                    "the official typed 30 fan but the tiles give 11 "
                    "(Mixed Straight 8, Dragon Pung 2, Single Wait 1)"
                )
                expect(tid(page, "deal")).not_to_contain_text("complete")
                tid(page, "confirm-pick").click()
                tid(page, "confirm-by").fill("A. Referee")
                tid(page, "confirm-hub").click()
                settled(page)
                expect(tid(page, "dispute")).to_be_hidden()
            expect(tid(page, "deal")).to_contain_text("complete")

        lines = [x for x in hub.journal() if "refused" not in x]
        results = {x["table"]: x for x in lines if x["type"] == "result" and x["deal"] == deal}
        assert results[3].get("draw") is True
        for table, win in wins.items():
            sent = {k: results[table][k] for k in ("seat", "discarder", "self_draw", "fan")
                    if k in results[table]}  # fmt: skip
            assert sent == {k: v for k, v in win.items() if k != "hand"}
            assert results[table]["hand"] == win["hand"]
        confirms = [x for x in lines if x["type"] == "confirm"]
        assert [(x["table"], x.get("by")) for x in confirms] == [(4, "A. Referee")]
        assert not [x for x in hub.journal() if "refused" in x]  # nothing reached the hub wrong

        export = tmp_path / "events.jsonl"
        hub.export(export)
        config_file = tmp_path / "mcr.toml"
        config_file.write_text(
            hub.config_file.read_text().replace('id = "mcr-demo"', f'id = "{hub.config.id}"')
        )
        assert load_config(config_file).id == hub.config.id
        replayed = duplicast("replay", "--config", str(config_file), str(export), "--indent", "0")
        assert replayed.returncode == 0, replayed.stderr[-2000:]
        live = settled_standings(hub.url)
        assert json.loads(replayed.stdout) == live
        # the deal is whole (played at every table) and scored by the tiles' fan: base 8, on a
        # discard the discarder pays 8 + fan and the two others 8; self-drawn, all pay 8 + fan
        assert live["deals"]["complete"] == {"A": [deal]}
        chips = {
            (row["table"], group["seat"]): row["chips"]
            for group in live["running"]["seats"]
            for row in group["rows"]
        }
        assert chips == {
            **{(1, s): c for s, c in ((1, -8), (2, 24 + 20), (3, -8 - 20), (4, -8))},
            **{(2, s): (3 * (8 + 22) if s == 1 else -8 - 22) for s in (1, 2, 3, 4)},
            **{(3, s): 0 for s in (1, 2, 3, 4)},
            # confirmed: the tiles' 11 fan scores, not the 30 the official typed
            **{(4, s): c for s, c in ((1, -8 - 11), (2, -8), (3, -8), (4, 24 + 11))},
        }
    finally:
        hub.stop()
