"""The table console through an outage, as a venue runs it (issue #30 item 5): Chromium opens the
console link through the shipped deploy/nginx.conf, in front of two ``duplicast serve --role
edge`` processes and an ingest on a Redis run with the ACL file ``duplicast acl`` writes, after
a played session (the sample session's first tables' play replayed by ``duplicast console
replay``).

- A hung edge (SIGSTOP: the socket stays open, nothing answers) shows "No answer" within 5 s,
  and the page is connected again through the other edge while the hung one is still frozen.
- A whole hand entered with the network off (the browser's offline event), the page reloaded
  halfway from its service worker with its waiting entries; on reconnect every entry goes in
  order, the hub accepts each, and the hand scores as the same hand entered online does.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import pytest
from playwright.sync_api import Browser, Page, expect

from hub.cli.redis_acl import EDGE_USER, INGEST_USER, acl_file
from hub.engine.core import Engine
from hub.engine.families.travellers import deal_row
from hub.roles.embedded import load_tournament
from tests.browser import new_page
from tests.nginx import Nginx, free_port
from tests.redis_server import RedisServer

pytestmark = [pytest.mark.redis, pytest.mark.browser]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
SESSION = ROOT / "samples" / "ifp6-session.jsonl"
DOCS_SHOTS = ROOT / "docs" / "screenshots"
COMMENTATOR = "kq3Z-vYp8_Lw2mXc7RtB9sHd-commentator"
OPERATOR = "kq3Z-vYp8_Lw2mXc7RtB9sHd-operator"
TOKEN = "console-table1-outage-7Hq2Lw9Xc4Rt"
PLAYED = 200  # lines of the sample session before table 1's hand that the page enters
LANDSCAPE = (1280, 800)


@dataclass
class Venue:
    lb: Nginx
    env: dict[str, str]
    redis: str  # host:port
    ingest_url: str
    edge_url: str
    edge_ports: list[int]
    processes: dict[str, subprocess.Popen[str]]
    hand: list[dict[str, Any]]  # table 1's next hand of the session: what the page enters
    played: list[dict[str, Any]]  # the session before it, replayed through Redis


def start_hub(role: str, redis: str, port: int, env: dict[str, str]) -> subprocess.Popen[str]:
    """``duplicast serve --role ROLE``, returned once it listens."""
    command = [sys.executable, "-m", "hub", "serve", "--role", role, "--config", str(SAMPLE)]
    command += ["--redis", redis, "--port", str(port)]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    line = ""
    while f"duplicast {role} for" not in line:
        line = process.stdout.readline()
        if (not line and process.poll() is not None) or time.monotonic() > deadline:
            stop(process)
            raise RuntimeError(f"duplicast serve --role {role} did not start")
    return process


def stop(process: subprocess.Popen[str]) -> None:
    """End a process this test started, by its pid (a frozen one is thawed first)."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGCONT)
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


def session_split() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The session up to table 1's first start after PLAYED lines, and table 1's hand there."""
    rows = [json.loads(line) for line in SESSION.read_text().splitlines()]
    at = next(
        i for i, r in enumerate(rows) if i >= PLAYED and r["table"] == 1 and r["type"] == "start"
    )
    hand = [rows[at]]
    for r in rows[at + 1 :]:
        if r["table"] != 1:
            continue
        if r["type"] == "start":
            break
        hand.append(r)
    assert {r["type"] for r in hand} <= {"start", "fold", "check", "call", "bet", "raise", "win"}
    return rows[:at], hand


@pytest.fixture(scope="module")
def venue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venue]:
    tmp = tmp_path_factory.mktemp("outage")
    config, _ = load_tournament(SAMPLE)
    text, credentials = acl_file(config)
    (tmp / "users.acl").write_text(text)
    (tmp / "consoles.txt").write_text(f"table1 1 {TOKEN}\n")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")},
        "DUPLICAST_COMMENTATOR_TOKEN": COMMENTATOR,
        "DUPLICAST_OPERATOR_TOKEN": OPERATOR,
        "DUPLICAST_TRUSTED_PROXIES": "127.0.0.1",
        "DUPLICAST_CONSOLE_TOKENS_FILE": str(tmp / "consoles.txt"),
        "XDG_STATE_HOME": str(tmp / "state"),
    }
    processes: dict[str, subprocess.Popen[str]] = {}
    extra = ("--aclfile", str(tmp / "users.acl"))
    with RedisServer(tmp / "redis", extra=extra) as redis, contextlib.ExitStack() as stack:
        stack.callback(lambda: [stop(p) for p in reversed(processes.values())])
        host = f"127.0.0.1:{redis.port}"
        ingest_url = credentials[INGEST_USER].url(host)
        edge_url = credentials[EDGE_USER].url(host)
        processes["ingest"] = start_hub("ingest", ingest_url, free_port(), env)
        ports = [free_port(), free_port()]
        processes["edge1"] = start_hub("edge", edge_url, ports[0], env)
        played, hand = session_split()
        log = tmp / "session.jsonl"
        log.write_text("".join(json.dumps(r) + "\n" for r in played))
        replay = subprocess.run(
            [sys.executable, "-m", "hub", "console", "--redis", ingest_url, "replay",
             "--tournament", config.id, str(log)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert replay.returncode == 0, replay.stderr
        upstreams = {"edge1:8000": f"127.0.0.1:{ports[0]}", "edge2:8000": f"127.0.0.1:{ports[1]}"}
        with Nginx(tmp / "nginx", upstreams) as lb:
            yield Venue(lb, env, host, ingest_url, edge_url, ports, processes, hand, played)


def tid(page: Page, name: str) -> Any:
    return page.locator(f'[data-testid="{name}"]')


class Wire:
    """Every event the page sent and every answer it got, read off its websockets."""

    def __init__(self, page: Page) -> None:
        self.sent: list[dict[str, Any]] = []
        self.acks: list[dict[str, Any]] = []
        page.on("websocket", self._socket)

    def _socket(self, ws: Any) -> None:
        ws.on("framesent", lambda payload: self._frame(payload, self.sent, "op", "event"))
        ws.on("framereceived", lambda payload: self._frame(payload, self.acks, "type", "ack"))

    @staticmethod
    def _frame(payload: Any, into: list[dict[str, Any]], key: str, value: str) -> None:
        if not isinstance(payload, str):
            return
        frame = json.loads(payload)
        if frame.get(key) == value:
            if value != "event":
                into.append(frame)
            else:  # signed (docs/protocol.md §2.9): the event is the signed text
                into.append(json.loads(frame["signed"]) if "signed" in frame else frame["event"])


def open_console(browser: Browser, venue: Venue, errors: list[str]) -> tuple[Page, Wire]:
    page = new_page(browser, *LANDSCAPE, errors)
    wire = Wire(page)
    page.goto(f"{venue.lb.url}/overlays/console.html?token={TOKEN}")
    expect(tid(page, "link")).to_have_attribute("data-state", "open", timeout=10000)
    expect(tid(page, "pad").locator("button").first).to_be_visible(timeout=10000)
    return page, wire


def key_in(page: Page, amount: int) -> None:
    tid(page, "key-clear").click()
    for digit in str(amount):
        tid(page, f"key-{digit}").click()


def tap(page: Page, event: dict[str, Any]) -> None:
    """Enter one event by tapping, as an official would (online or off)."""
    kind = event["type"]
    if kind == "start":
        expect(tid(page, "start")).to_have_text(f"Start deal {event['deal']}")
        tid(page, "start").click()
    elif kind in ("fold", "check", "call", "bet", "raise"):
        expect(tid(page, "to-act")).to_contain_text(f"Seat {event['seat']} ")
        if kind in ("bet", "raise"):
            key_in(page, event["amount"])
            tid(page, "send-amount").click()
        else:
            tid(page, kind).click()
    elif kind == "win":
        tid(page, "win").click()
        for seat in event["seats"]:
            tid(page, f"pick-{seat}").click()
        tid(page, "win-send").click()
    else:
        raise AssertionError(kind)


def settled(page: Page, timeout: float = 15000) -> None:
    expect(tid(page, "link")).to_have_attribute("data-state", "open", timeout=timeout)
    expect(tid(page, "link")).to_have_attribute("data-waiting", "0", timeout=timeout)
    expect(tid(page, "waiting")).to_have_count(0, timeout=timeout)


def essence(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (
            r["type"],
            r.get("seat"),
            r.get("seats"),
            r.get("amount") if r["type"] in ("bet", "raise") else None,
        )
        for r in rows
    ]


def shot(page: Page, name: str) -> None:
    DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(300)
    page.screenshot(path=str(DOCS_SHOTS / f"console-{name}.png"))


def test_a_hung_edge_shows_no_answer_within_5_s_and_the_page_moves_on(
    browser: Browser, venue: Venue
) -> None:
    errors: list[str] = []
    page, wire = open_console(browser, venue, errors)  # on edge1: edge2 is not running yet
    venue.processes["edge2"] = start_hub("edge", venue.edge_url, venue.edge_ports[1], venue.env)
    edge1 = venue.processes["edge1"]
    # every change of the link's state, timed in the page (a "No answer" lasts only until the
    # new socket is up: a fraction of a second when the other edge answers)
    page.evaluate(
        """() => {
          window.linkLog = [];
          const link = document.querySelector('[data-testid="link"]');
          const log = () => window.linkLog.push([Date.now(), link.dataset.state, link.textContent]);
          new MutationObserver(log).observe(
            link, { attributes: true, childList: true, characterData: true, subtree: true });
        }"""
    )
    frozen_at = page.evaluate("Date.now()")
    os.kill(edge1.pid, signal.SIGSTOP)  # hung: its sockets stay open, nothing answers
    try:
        page.wait_for_function(
            "() => window.linkLog.some(([, s]) => s === 'silent')", timeout=10000
        )
        # a new socket at once: through nginx to the edge that answers, edge1 still frozen
        expect(tid(page, "link")).to_have_attribute("data-state", "open", timeout=15000)
        log = page.evaluate("window.linkLog")
        silent_at = next(t for t, state, _ in log if state == "silent")
        texts = [text for _, state, text in log if state == "silent"]
        assert any(text.startswith("No answer") for text in texts), texts
        back_at = next(t for t, state, _ in log if state == "open" and t > silent_at)
        silent_after = (silent_at - frozen_at) / 1000
        back_after = (back_at - frozen_at) / 1000
        tap(page, venue.hand[0])  # the start of table 1's next deal, through edge2
        settled(page)
        assert wire.acks[-1]["ok"] is True and wire.acks[-1]["seq"] == wire.sent[-1]["seq"]
        # the console's history (the session's entries, an edge catching up) is no other tablet
        expect(tid(page, "other-tablet")).to_be_hidden()
        # both edges hung: the page keeps saying so while it tries again (the guide's picture)
        edge2 = venue.processes["edge2"]
        os.kill(edge2.pid, signal.SIGSTOP)
        try:
            expect(tid(page, "link")).to_have_attribute("data-state", "silent", timeout=5000)
            expect(tid(page, "link")).to_contain_text("No answer")
            shot(page, "no-answer")
        finally:
            os.kill(edge2.pid, signal.SIGCONT)
    finally:
        os.kill(edge1.pid, signal.SIGCONT)
    expect(tid(page, "link")).to_have_attribute("data-state", "open", timeout=15000)
    print(
        f"silent link: 'No answer' after {silent_after:.1f} s, "
        f"connected again after {back_after:.1f} s"
    )
    assert silent_after < 5.0
    page.context.close()
    assert errors == []


def hub_deal_row(venue: Venue, deal: int) -> dict[str, Any]:
    with urlopen(f"{venue.lb.url}/api/deals/{deal}?token={COMMENTATOR}", timeout=10) as r:
        payload = json.load(r)
    return next(t for t in payload["data"]["tables"] if t["table"] == 1)


def test_a_whole_hand_entered_offline_goes_in_order_and_scores_the_same(
    browser: Browser, venue: Venue
) -> None:
    errors: list[str] = []
    page, wire = open_console(browser, venue, errors)
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=10000)
    hand = venue.hand
    state = page.evaluate(
        "JSON.parse(localStorage.getItem("
        "Object.keys(localStorage).find((k) => k.endsWith('.state'))))"
    )
    started = state["status"] == "in_progress" and state["deal"] == hand[0]["deal"]
    todo = hand[1:] if started else hand  # (the start went in through edge2 above)
    base_seq = state["consoles"]["table1"]["last_seq"]
    page.context.set_offline(True)
    expect(tid(page, "link")).to_have_attribute("data-state", "offline", timeout=5000)
    half = len(todo) // 2
    for event in todo[:half]:
        tap(page, event)
    expect(tid(page, "link")).to_have_attribute("data-waiting", str(half))
    # reloaded during the outage: the service worker opens the page, its entries still waiting
    page.reload()
    expect(tid(page, "link")).to_have_attribute("data-waiting", str(half), timeout=10000)
    expect(tid(page, "kept")).to_contain_text(f"{half} entries are kept on this tablet")
    shot(page, "offline")
    for event in todo[half:]:
        tap(page, event)
    expect(tid(page, "link")).to_have_attribute("data-waiting", str(len(todo)))
    expect(tid(page, "deal")).to_contain_text("complete")
    assert wire.sent == []  # nothing left the tablet while offline
    page.context.set_offline(False)
    settled(page, timeout=20000)
    # every entry sent in order, each once accepted, seqs following the hub's
    firsts: dict[int, dict[str, Any]] = {}
    for event in wire.sent:
        firsts.setdefault(event["seq"], event)
    seqs = sorted(firsts)
    assert seqs == list(range(base_seq + 1, base_seq + 1 + len(todo)))
    assert essence([firsts[s] for s in seqs]) == essence(todo)
    assert [firsts[s]["after"] for s in seqs] == list(
        range(firsts[seqs[0]]["after"], firsts[seqs[0]]["after"] + len(todo))
    )
    answers = {a["seq"]: a for a in wire.acks}
    assert all(answers[s]["ok"] is True for s in seqs), [answers.get(s) for s in seqs]
    # the hand scores as the same events entered online do (an engine fed the session)
    config, decks = load_tournament(SAMPLE)
    reference = Engine(config, decks)
    for i, event in enumerate([*venue.played, *hand]):
        assert reference.submit(event, float(i + 1)).ok
    deal = hand[0]["deal"]
    expected = deal_row(reference.state.hand(1, deal))
    # an edge's REST view follows the ingest's acks (the feed's publish, then the edge's read,
    # each in its own process on loaded cores): read until it has the hand, or 20 s
    deadline = time.monotonic() + 20
    row = hub_deal_row(venue, deal)
    while {k: row.get(k) for k in expected} != expected and time.monotonic() < deadline:
        time.sleep(0.2)
        row = hub_deal_row(venue, deal)
    assert {k: row[k] for k in expected} == expected
    assert expected["status"] == "complete"
    page.context.close()
    assert errors == []
