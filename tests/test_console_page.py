"""The table console page (overlays/console.html) in Debian's Chromium against the real hub
(ingest and edge on the embedded bus, the page's console token bound to table 1).

A whole hand of the sample session is played by tapping (every figure entered on the keypad),
and the hub's journal must hold exactly the session's events; the page's websocket is then cut
mid-hand (Playwright's websocket route, which can also swallow the hub's acks), the page reloaded
with an unanswered entry, a refusal and a dispute provoked; both tablet viewports must show the
whole action area. Screenshots of the guide go to docs/screenshots/console-*.png.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, WebSocketRoute, expect

from hub.engine.core import Engine
from hub.files.eventlog import journal_events
from hub.roles.embedded import OVERLAYS, IngestSource
from hub.serve.auth import Auth, ConsoleSeat
from hub.serve.http import create_app, serve
from tests.browser import new_page
from tests.hubharness import COMMENTATOR, OPERATOR, edge_hub
from tests.test_overlays_hub import HubThread

pytestmark = pytest.mark.browser

TOKEN = "console-table1-9f3c2a7d41b8e605"
DOCS_SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
LANDSCAPE = (1280, 800)
PORTRAIT = (800, 1280)
TAP_TIMEOUT = 5000  # ms: an entry answered and shown


TOKENS = Auth(COMMENTATOR, OPERATOR, consoles=(ConsoleSeat("table1", 1, TOKEN),))


class ConsoleHub(HubThread):
    """The hub of test_overlays_hub with table 1's console token, and edges on its bus."""

    def __init__(self, prefix: str) -> None:
        super().__init__(prefix)
        self.exits: list[contextlib.AsyncExitStack] = []

    async def _start(self) -> None:
        engine = Engine(self.config, self.decks)
        self.source = IngestSource(self.bus, engine, own_bus=False, keys=TOKENS.keyring())
        app = create_app(
            self.source, overlays_dir=OVERLAYS, auth=TOKENS, metrics=self.source.metrics
        )
        self.server = await serve(app, "127.0.0.1", self.port)
        self.port = self.server.port

    def edge(self) -> str:
        """Start an edge on the hub's bus (stopped with the hub's loop): its base URL."""
        stack = contextlib.AsyncExitStack()

        async def start() -> int:
            _, server = await stack.enter_async_context(edge_hub(self.bus, self.config.id, TOKENS))
            return server.port

        port: int = self.run(start())
        self.exits.append(stack)
        return f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        for stack in self.exits:
            self.run(stack.aclose())
        super().stop()

    def journal(self) -> list[dict[str, Any]]:
        """The journal's records of table 1's console, as replayable lines."""

        async def read() -> list[dict[str, Any]]:
            return [line async for line in journal_events(self.bus, self.config.id)]

        lines: list[dict[str, Any]] = self.run(read())
        return [x for x in lines if x.get("console") == "table1" or "refused" in x]

    def first_hand(self) -> list[dict[str, Any]]:
        """Table 1's events of the session up to its first win, as the page enters them."""
        out = []
        for event in self.events:
            if event["table"] != 1:
                continue
            out.append(
                {
                    k: v
                    for k, v in event.items()
                    if k not in ("ts", "v", "tournament", "table", "console")
                }
            )
            if event["type"] == "win":
                return out
        raise AssertionError("table 1 never wins a hand in the session")


class Link:
    """The page's websocket through Playwright's route: cut at will; the hub's acks can be
    swallowed. Records every event the page sent."""

    def __init__(self, page: Page) -> None:
        self.up = True
        self.drop_acks = False
        self.routes: list[WebSocketRoute] = []
        self.sent: list[dict[str, Any]] = []
        self.acks: list[dict[str, Any]] = []
        page.route_web_socket(re.compile(r".*/ws(\?.*)?$"), self.handle)

    def handle(self, ws: WebSocketRoute) -> None:
        if not self.up:
            ws.close()
            return
        server = ws.connect_to_server()
        self.routes.append(ws)

        def to_hub(message: str | bytes) -> None:
            if isinstance(message, str):
                op = json.loads(message)
                if op.get("op") == "event":  # signed (sign.js): the event the page entered
                    event = json.loads(op["signed"])
                    bound = ("v", "tournament", "table", "console")
                    self.sent.append({k: v for k, v in event.items() if k not in bound})
            server.send(message)

        def to_page(message: str | bytes) -> None:
            frame = json.loads(message) if isinstance(message, str) else {}
            if frame.get("type") == "ack":
                self.acks.append(frame)
                if self.drop_acks:
                    return
            ws.send(message)

        ws.on_message(to_hub)
        server.on_message(to_page)

    def cut(self) -> None:
        """The network drops: the socket closes and no new one opens until restore()."""
        self.up = False
        for ws in self.routes:
            ws.close()
        self.routes.clear()

    def restore(self) -> None:
        self.up = True


@pytest.fixture
def hub() -> Iterator[ConsoleHub]:
    h = ConsoleHub("console")
    h.start()
    yield h
    h.stop()


Opener = Callable[..., tuple[Page, "Link", list[dict[str, Any]]]]


@pytest.fixture
def opened(browser: Browser, hub: ConsoleHub) -> Iterator[Opener]:
    """Open the console page of table 1 at a viewport size: the page, its link and table 1's
    first hand of the session. Every page must log no error."""
    errors: list[str] = []
    pages: list[Page] = []

    def opener(
        size: tuple[int, int], base: str | None = None
    ) -> tuple[Page, Link, list[dict[str, Any]]]:
        page, link = open_console(browser, base or hub.url, size, errors)
        pages.append(page)
        return page, link, hub.first_hand()

    yield opener
    for page in pages:
        page.context.close()
    assert errors == []


def open_console(
    browser: Browser, base: str, size: tuple[int, int], errors: list[str]
) -> tuple[Page, Link]:
    page = new_page(browser, *size, errors)
    link = Link(page)
    page.goto(f"{base}/overlays/console.html?token={TOKEN}")
    expect(page.locator('[data-testid="link"]')).to_have_attribute(
        "data-state", "open", timeout=TAP_TIMEOUT
    )
    expect(page.locator('[data-testid="pad"] button').first).to_be_visible(timeout=TAP_TIMEOUT)
    return page, link


def tid(page: Page, name: str) -> Any:
    return page.locator(f'[data-testid="{name}"]')


SETTLED = """() => !document.querySelector('[data-testid="waiting"]')
    && document.querySelector('[data-testid="link"]')?.dataset.waiting === "0" """


def settled(page: Page) -> None:
    """The pad takes entries again: nothing waits for the hub. (Waited for in the page, checked
    every 20 ms: ``expect`` alone retries after 100, 250, 500 ms..., and an ack comes within a
    few ms, so a tap whose ack was not shown at the first look waited 100 ms or more for
    nothing; the ``expect``s then hold at once, as the assertions.)"""
    page.wait_for_function(SETTLED, timeout=TAP_TIMEOUT, polling=20)
    expect(tid(page, "waiting")).to_have_count(0, timeout=TAP_TIMEOUT)
    expect(tid(page, "link")).to_have_attribute("data-waiting", "0", timeout=TAP_TIMEOUT)


def key_in(page: Page, amount: int) -> None:
    tid(page, "key-clear").click()
    for digit in str(amount):
        tid(page, f"key-{digit}").click()
    expect(tid(page, "amount")).to_have_text(f"{amount:,}")


def tap(page: Page, event: dict[str, Any], *, wait: bool = True) -> None:
    """Enter one event by tapping, as an official would."""
    kind = event["type"]
    if kind == "start":
        expect(tid(page, "start")).to_have_text(f"Start deal {event['deal']}")
        tid(page, "start").click()
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
    if wait:
        settled(page)


def essence(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What an entry says, whoever wrote it down: the page adds the deal to every entry and the
    amount to a call (the hub checks both); the session's log has neither."""
    keep = ("seq", "type", "seat", "seats", "amount")
    return [
        {
            k: r[k]
            for k in keep
            if r.get(k) is not None and not (k == "amount" and r["type"] == "call")
        }
        for r in rows
    ]


def play(page: Page, events: list[dict[str, Any]]) -> None:
    for event in events:
        tap(page, event)


def journaled_once(hub: ConsoleHub, link: Link, hand: list[dict[str, Any]]) -> list[int]:
    """The hub journaled the hand's events exactly, each once, and every seq the page sent is
    one of 1..len(hand) (a resend repeats a seq, never takes a new one). The seqs sent."""
    assert accepted(hub.journal()) == essence(hand)
    seqs = [e["seq"] for e in link.sent]
    assert sorted(set(seqs)) == list(range(1, len(hand) + 1))
    return seqs


def accepted(journal: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return essence([x for x in journal if "refused" not in x])


def fits(page: Page) -> None:
    """Every button of the pad, the seats and the link state are inside the viewport (those
    shown: a form with a game's widget, MCR's tile picker, takes the seats' column while open)."""
    size = page.viewport_size
    assert size is not None
    assert page.evaluate("document.scrollingElement.scrollHeight") <= size["height"]
    boxes = page.evaluate(
        """() => [...document.querySelectorAll(
            '[data-testid="pad"] button, [data-testid="seat"], [data-testid="link"]')]
          .filter((e) => e.getClientRects().length > 0)
          .map((e) => {
            const r = e.getBoundingClientRect();
            return [e.dataset.testid, r.left, r.top, r.right, r.bottom];
          })"""
    )
    assert boxes
    for name, left, top, right, bottom in boxes:
        assert left >= 0 and top >= 0 and right <= size["width"] and bottom <= size["height"], (
            name,
            size,
        )
        if name != "link":
            assert bottom - top >= 48, f"{name} is too small a target"


def shot(page: Page, name: str) -> None:
    DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(300)
    page.screenshot(path=str(DOCS_SHOTS / f"console-{name}.png"))


def test_a_whole_hand_played_by_tapping(hub: ConsoleHub, opened: Opener) -> None:
    page, link, hand = opened(LANDSCAPE)
    for i, event in enumerate(hand):
        if i == 3:
            key_in(page, event["amount"])  # the guide's picture: a raise keyed in
            fits(page)
            shot(page, "betting")
        tap(page, event)
    expect(tid(page, "deal")).to_contain_text("complete")
    assert journaled_once(hub, link, hand) == list(range(1, len(hand) + 1))  # each sent once
    assert all(a["ok"] for a in link.acks)


def hub_answered(page: Page, link: Link, seq: int) -> None:
    """Wait until the hub's answer to ``seq`` went through the route (even if swallowed)."""
    for _ in range(100):
        if any(a["seq"] == seq for a in link.acks):
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"the hub never answered seq {seq}")


def test_a_network_drop_mid_hand_loses_and_doubles_nothing(hub: ConsoleHub, opened: Opener) -> None:
    page, link, hand = opened(LANDSCAPE)
    play(page, hand[:3])
    # The link drops; the official enters the raise: it waits in the outbox, and the pad goes
    # on with the next seat to act, worked out with the hub's rules (issue #30 item 5).
    link.cut()
    expect(tid(page, "link")).to_have_attribute("data-state", "offline", timeout=TAP_TIMEOUT)
    tap(page, hand[3], wait=False)
    expect(tid(page, "link")).to_have_attribute("data-waiting", "1")
    expect(tid(page, "kept")).to_contain_text("1 entry is kept on this tablet")
    expect(tid(page, "to-act")).to_contain_text(f"Seat {hand[4]['seat']}")
    shot(page, "offline")
    link.restore()
    settled(page)
    # The hub answers but the answer is lost with the link: the page sends the same seq again
    # after reconnecting and the hub repeats its answer.
    play(page, hand[4:6])
    link.drop_acks = True
    tap(page, hand[6], wait=False)
    hub_answered(page, link, 7)
    link.drop_acks = False
    link.cut()
    link.restore()
    settled(page)
    play(page, hand[7:])
    seqs = journaled_once(hub, link, hand)
    assert seqs.count(7) >= 2  # resent after the drop ...
    last_answer = [a for a in link.acks if a["seq"] == 7][-1]
    assert last_answer.get("duplicate") is True  # ... answered again


def test_a_reload_mid_hand_loses_and_doubles_nothing(hub: ConsoleHub, opened: Opener) -> None:
    page, link, hand = opened(LANDSCAPE)
    play(page, hand[:2])
    # Reloaded after the hub took the call but before its answer reached the page.
    link.drop_acks = True
    tap(page, hand[2], wait=False)
    hub_answered(page, link, 3)
    link.drop_acks = False
    page.reload()
    # (the page's first render, before its outbox is read back, shows nothing waiting: the
    # link open, the restored entry has been read back and resent)
    expect(tid(page, "link")).to_have_attribute("data-state", "open", timeout=TAP_TIMEOUT)
    settled(page)
    # Reloaded offline with an entry waiting: the stored state and the waiting entry show,
    # and the entry goes once the link is back.
    link.cut()
    tap(page, hand[3], wait=False)
    page.reload()
    expect(tid(page, "link")).to_have_attribute("data-waiting", "1", timeout=TAP_TIMEOUT)
    expect(tid(page, "link")).to_contain_text("Offline · 1 waiting")
    expect(tid(page, "seat")).to_have_count(6)
    link.restore()
    settled(page)
    play(page, hand[4:])
    seqs = journaled_once(hub, link, hand)  # the next seq after each reload
    assert seqs.count(3) == 2 and seqs.count(4) == 1


def test_refusals_show_in_words_and_the_pad_stays_usable(hub: ConsoleHub, opened: Opener) -> None:
    page, link, hand = opened(LANDSCAPE)
    play(page, hand[:3])
    # An amount outside the legal range cannot be sent, and the pad says why.
    key_in(page, 1)
    expect(tid(page, "send-amount")).to_be_disabled()
    expect(tid(page, "amount-why")).to_contain_text("below the minimum")
    key_in(page, 99_999)
    expect(tid(page, "send-amount")).to_be_disabled()
    expect(tid(page, "amount-why")).to_contain_text(re.compile("over the pot limit|all-in is"))
    # A dealer error reported after the first action: the hub refuses it, the page says so.
    tid(page, "exposed").click()
    tid(page, "pick-4").click()
    tid(page, "exposed-send").click()
    expect(tid(page, "refusal")).to_be_visible(timeout=TAP_TIMEOUT)
    expect(tid(page, "refusal")).to_contain_text("Not allowed now")
    refused = [x["refused"] for x in hub.journal() if "refused" in x]
    assert [r["code"] for r in refused] == ["not_allowed"]
    expect(tid(page, "refusal")).to_contain_text(refused[0]["error"])
    shot(page, "refusal")
    # Taps while an entry waits send nothing more; the next entry clears the refusal.
    link.drop_acks = True
    tap(page, hand[3], wait=False)
    for _ in range(3):  # (the pad may be hidden by then under load: the click is dispatched)
        tid(page, "send-amount").dispatch_event("click")
    hub_answered(page, link, 5)
    link.drop_acks = False
    settled(page)
    expect(tid(page, "refusal")).to_be_hidden()
    play(page, hand[4:])
    assert [e["seq"] for e in link.sent].count(5) <= 2  # a resend of the swallowed answer
    after_refusal = [{**e, "seq": e["seq"] + (e["seq"] > 3)} for e in essence(hand)]
    assert accepted(hub.journal()) == after_refusal


def test_a_dispute_shows_at_once_and_is_confirmed(hub: ConsoleHub, opened: Opener) -> None:
    page, _, hand = opened(LANDSCAPE)
    play(page, hand[:-1])
    win = hand[-1]
    folded = {e["seat"] for e in hand if e["type"] == "fold"}
    wrong = min(set(range(1, 7)) - folded - set(win["seats"]))  # in at showdown, but no winner
    tap(page, {**win, "seats": [wrong]})
    expect(tid(page, "dispute")).to_be_visible(timeout=TAP_TIMEOUT)
    expect(tid(page, "deal")).to_contain_text("disputed")
    reason = tid(page, "dispute").text_content() or ""
    assert f"Deal {hand[0]['deal']} is disputed" in reason
    shot(page, "dispute")
    tid(page, "confirm-pick").click()
    fits(page)
    # the hub's winners are kept only by a named official (issue #30 item 7)
    expect(tid(page, "confirm-hub")).to_be_disabled()
    tid(page, "confirm-by").fill("TD Ana Ruiz")
    tid(page, "confirm-hub").click()
    settled(page)
    expect(tid(page, "dispute")).to_be_hidden(timeout=TAP_TIMEOUT)
    expect(tid(page, "deal")).to_contain_text("complete")
    # Reopened for a correction, then closed again with the winners the cards give.
    tid(page, "reopen").click()
    settled(page)
    expect(tid(page, "deal")).to_contain_text("reopened")
    tap(page, win)
    expect(tid(page, "deal")).to_contain_text("complete")
    kinds = [x["type"] for x in accepted(hub.journal())]
    assert kinds[-4:] == ["win", "confirm", "reopen", "win"]
    confirm = [x for x in hub.journal() if x.get("type") == "confirm"][-1]
    assert confirm["by"] == "TD Ana Ruiz" and "seats" not in confirm


@pytest.mark.parametrize("size", [LANDSCAPE, PORTRAIT], ids=["landscape", "portrait"])
def test_both_tablet_viewports_fit(opened: Opener, size: tuple[int, int]) -> None:
    page, _, hand = opened(size)
    fits(page)  # between hands: Start
    for chip in tid(page, "seat").locator(".tcode").all():  # team colours from the standings
        expect(chip).not_to_have_css("background-color", "rgb(90, 107, 125)")
    play(page, hand[:3])
    key_in(page, hand[3]["amount"])
    fits(page)  # the tallest pad: betting with the keypad
    if size == PORTRAIT:
        shot(page, "portrait")
    tid(page, "exposed").click()
    fits(page)


def test_dealer_errors_undo_and_a_misdeal(hub: ConsoleHub, opened: Opener) -> None:
    page, link, hand = opened(PORTRAIT)
    tap(page, hand[0])
    expect(tid(page, "void")).to_be_visible()  # the misdeal window is open
    tid(page, "exposed").click()
    tid(page, "pick-2").click()
    tid(page, "card-2").click()
    fits(page)  # portrait
    tid(page, "exposed-send").click()
    settled(page)
    tid(page, "undo").click()
    settled(page)
    tid(page, "early").click()
    settled(page)
    # A misdeal takes two taps; the hand is void and the next deal may start.
    tid(page, "void").click()
    expect(tid(page, "void")).to_have_text(f"Tap again: void deal {hand[0]['deal']}")
    assert len(link.sent) == 4
    tid(page, "void").click()
    settled(page)
    expect(tid(page, "deal")).to_contain_text("voided")
    expect(tid(page, "start")).to_be_visible()
    assert [(x["type"], x.get("seat"), x.get("card")) for x in hub.journal()] == [
        ("start", None, None),
        ("exposed", 2, 2),
        ("undo", None, None),
        ("early", None, None),
        ("void", None, None),
    ]


def test_a_second_tablet_on_the_same_console_is_caught(hub: ConsoleHub, opened: Opener) -> None:
    first, _, hand = opened(LANDSCAPE)
    second, link2, _ = opened(LANDSCAPE)
    play(first, hand[:2])
    expect(tid(second, "to-act")).to_contain_text(f"Seat {hand[2]['seat']}")
    # The second tablet, offline, enters the same action as the first: both give it seq 3.
    link2.cut()
    expect(tid(second, "link")).to_have_attribute("data-state", "offline", timeout=TAP_TIMEOUT)
    tap(first, hand[2])
    tap(second, hand[2], wait=False)
    link2.restore()
    # The hub answers the second tablet's seq 3 with the first's answer (a duplicate): the
    # second tablet must not take it for its own entry.
    expect(tid(second, "refusal")).to_contain_text("NOT entered", timeout=TAP_TIMEOUT)
    expect(tid(second, "refusal")).to_contain_text("Another tablet uses this console")
    settled(second)
    assert accepted(hub.journal()) == essence(hand[:3])


def test_the_hub_restarting_mid_hand_loses_and_doubles_nothing(
    hub: ConsoleHub, opened: Opener
) -> None:
    page, link, hand = opened(LANDSCAPE)
    play(page, hand[:3])
    hub.run(hub._stop())
    expect(tid(page, "link")).to_have_attribute("data-state", "offline", timeout=TAP_TIMEOUT)
    tap(page, hand[3], wait=False)  # entered while the hub is down: kept
    expect(tid(page, "link")).to_have_attribute("data-waiting", "1")
    hub.run(hub._start())  # the ingest rebuilds from its journal; the page reconnects by itself
    settled(page)
    play(page, hand[4:])
    journaled_once(hub, link, hand)


def test_a_tablet_sleeping_mid_hand_loses_and_doubles_nothing(
    hub: ConsoleHub, opened: Opener
) -> None:
    page, link, hand = opened(LANDSCAPE)
    play(page, hand[:3])
    link.drop_acks = True
    tap(page, hand[3], wait=False)
    hub_answered(page, link, 4)
    # The tablet sleeps (the page frozen, as Chromium freezes a hidden tab); the network drops
    # and comes back meanwhile. Awake, the page reconnects and sends its entry again.
    cdp = page.context.new_cdp_session(page)
    cdp.send("Page.setWebLifecycleState", {"state": "frozen"})
    link.drop_acks = False
    link.cut()
    page.wait_for_timeout(500)
    link.restore()
    cdp.send("Page.setWebLifecycleState", {"state": "active"})
    settled(page)
    play(page, hand[4:])
    seqs = journaled_once(hub, link, hand)
    assert seqs.count(4) == 2


def test_an_edge_whose_hub_is_gone_keeps_the_entry_until_it_is_back(
    hub: ConsoleHub, opened: Opener
) -> None:
    page, link, hand = opened(LANDSCAPE, hub.edge())
    play(page, hand[:3])
    hub.run(hub._stop())  # the ingest stops; the edge stays and answers `unavailable`
    tap(page, hand[3], wait=False)
    expect(tid(page, "link")).to_have_attribute("data-state", "hub-down", timeout=TAP_TIMEOUT)
    expect(tid(page, "link")).to_contain_text("Hub not answering · 1 waiting")
    hub.run(hub._start())
    settled(page)
    play(page, hand[4:])
    seqs = journaled_once(hub, link, hand)
    assert seqs.count(4) >= 2  # sent again after `unavailable`


def test_an_earlier_deal_is_reopened_and_closed_again(hub: ConsoleHub, opened: Opener) -> None:
    page, _, hand = opened(LANDSCAPE)
    play(page, hand)
    next_deal = int((tid(page, "start").text_content() or "").rsplit(" ", 1)[1])
    play(page, [{"type": "start", "deal": next_deal}])
    tid(page, "void").click()
    tid(page, "void").click()  # a misdeal: the next deal is void
    settled(page)
    tid(page, "reopen-pick").click()
    fits(page)
    tid(page, f"reopen-{hand[0]['deal']}").click()
    settled(page)
    expect(tid(page, "deal")).to_contain_text(f"Deal {hand[0]['deal']} · reopened")
    tap(page, hand[-1])  # the same winners again: the hand closes
    expect(tid(page, "deal")).not_to_contain_text("reopened")  # back to the table's last deal
    expect(tid(page, "start")).to_be_visible()
    lines = [x for x in hub.journal() if "refused" not in x][-4:]
    assert [(x["type"], x.get("deal")) for x in lines] == [
        ("start", next_deal),
        ("void", next_deal),
        ("reopen", hand[0]["deal"]),
        ("win", hand[0]["deal"]),
    ]


def test_a_tablet_whose_seqs_ran_ahead_of_the_hub_follows_its_gap(
    hub: ConsoleHub, opened: Opener
) -> None:
    page, link, hand = opened(LANDSCAPE)
    # A tablet that entered 40 events for a hub since reset (a rehearsal under the same id).
    page.evaluate(
        """(key) => localStorage.setItem(key, JSON.stringify({ maxSeq: 40, entries: [] }))""",
        f"duplicast.console.{hub.config.id}.table1",
    )
    page.reload()
    settled(page)
    play(page, hand[:2])
    assert [e["seq"] for e in link.sent] == [41, 1, 2]  # answered seq_gap, expected 1
    assert [a.get("code") for a in link.acks][:1] == ["seq_gap"]
    assert accepted(hub.journal()) == essence(hand[:2])


def test_an_entry_the_tablet_cannot_store_is_not_sent(hub: ConsoleHub, opened: Opener) -> None:
    page, link, _ = opened(LANDSCAPE)
    page.evaluate("() => { Storage.prototype.setItem = () => { throw new Error('quota'); }; }")
    tid(page, "start").click()
    expect(tid(page, "refusal")).to_contain_text("storage is full")
    assert link.sent == []
    expect(tid(page, "start")).to_be_enabled()  # the pad stays usable
