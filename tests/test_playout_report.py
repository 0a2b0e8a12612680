"""Issue #33 item 4: the playout reports what it has on air (docs/overlays.md, "What the playout
has on air").

A real hub (role all, a programme delay, part of the sample session played) with a playout key:
the CasparCG template in Debian's Chromium, given the key in its templateData, calls play() and
stop(); the control state (``GET /api/control``), the operator's ``ops`` and the operator panel
show the graphic on air, then off. The key opens ``POST /api/playout`` alone (refused on every
other route, never taken from a URL); no key is a 401; a report is refused unless it names a
known tool, page and state. A report never makes an unreleased deal appear anywhere a programme
or public source reads, nor in the control surfaces' words.
"""

from __future__ import annotations

import dataclasses
import functools
import http.server
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from hub.domain.errors import Rejection
from hub.engine.playout import PlayoutBoard, check_report
from hub.roles.embedded import OVERLAYS, IngestSource
from hub.serve.auth import Auth, weak_tokens
from hub.serve.http import create_app, serve
from tests.hubharness import COMMENTATOR, OPERATOR
from tests.test_overlays_hub import HubThread
from tests.test_playout_templates import TEMPLATES, Standin, ograf

KEY = "test-playout-key-0123456789"
TALLY = "test-tally-key-0123456789"
OP = {"Authorization": f"Bearer {OPERATOR}"}
PLAYED = 1300  # events of the sample session: some deals released, others still at the tables
WAIT = 5000  # ms
OTHER_ORIGIN = "http://spx.example:5656"


# -- the report as the engine checks it (no hub) --


def test_a_report_is_checked_field_by_field() -> None:
    good = {"op": "playout", "tool": "casparcg", "page": "compare", "state": "play"}
    record = check_report({**good, "params": {"deal": "3", "tables": "1,4", "x": "y"}}, 5.0)
    assert record["params"] == {"deal": 3, "tables": [1, 4]}  # the URL's text, typed; x dropped
    for bad, word in (
        ({"tool": "vlc"}, "'tool'"),
        ({"page": "console"}, "'page'"),
        ({"state": "pause"}, "'state'"),
        ({"params": [1]}, "'params'"),
        ({"params": {"deal": 0}}, "'deal'"),
        ({"page": "seat", "params": {"view": "x" * 40}}, "'view'"),
        ({"params": {"tables": list(range(1, 20))}}, "'tables'"),
    ):
        with pytest.raises(Rejection, match=word):
            check_report({**good, **bad}, 5.0)


def test_the_board_keeps_one_graphic_per_tool_and_page() -> None:
    board = PlayoutBoard()
    play = {"tool": "spx", "page": "seat", "state": "play", "params": {"seat": 2}, "at": 1.0}
    assert board.apply(play) is True
    assert board.apply({**play, "at": 2.0}) is False  # played again: on air since 1.0
    assert board.payload(lambda d: True)[0]["since"] == 1.0
    assert board.apply({**play, "params": {"seat": 3}, "at": 3.0}) is True  # another seat
    again = PlayoutBoard()
    again.restore(board.snapshot())
    assert again.payload(lambda d: True) == board.payload(lambda d: True)
    assert board.apply({**play, "state": "stop", "at": 4.0}) is True
    assert board.payload(lambda d: True) == []
    assert board.apply({**play, "state": "stop", "at": 5.0}) is False


def test_a_weak_or_shared_playout_key_is_refused() -> None:
    assert weak_tokens(Auth(playout_key="short")) == [
        "DUPLICAST_PLAYOUT_KEY is shorter than 16 characters"
    ]
    assert weak_tokens(Auth(operator_token=OPERATOR, playout_key=OPERATOR)) == [
        "DUPLICAST_PLAYOUT_KEY is another role's token too"
    ]
    assert weak_tokens(Auth(tally_token=TALLY, playout_key=TALLY)) == [
        "DUPLICAST_PLAYOUT_KEY is another role's token too"
    ]
    assert Auth.from_env({"DUPLICAST_PLAYOUT_KEY": KEY}).playout(KEY)


# -- a real hub --


class PlayoutHub(HubThread):
    """The hub with a tally key and a playout key configured."""

    async def _start(self) -> None:
        from hub.engine.core import Engine

        tokens = Auth(COMMENTATOR, OPERATOR, (), TALLY, KEY)
        self.source = IngestSource(self.bus, Engine(self.config, self.decks), own_bus=False)
        app = create_app(
            self.source, overlays_dir=OVERLAYS, auth=tokens, metrics=self.source.metrics
        )
        self.server = await serve(app, "127.0.0.1", self.port)
        self.port = self.server.port


@pytest.fixture(scope="module")
def hub() -> Iterator[PlayoutHub]:
    before = os.environ.get("DUPLICAST_ALLOWED_ORIGINS")
    h = PlayoutHub("pot")
    with socket.socket() as s:  # the hub's port, known before it starts: its own origin too
        s.bind(("127.0.0.1", 0))
        h.port = s.getsockname()[1]
    os.environ["DUPLICAST_ALLOWED_ORIGINS"] = f"{OTHER_ORIGIN},{h.url}"
    h.config = dataclasses.replace(h.config, program_delay=1.0)
    try:
        h.start()
        h.preload(PLAYED)
        yield h
        h.stop()
    finally:
        if before is None:
            os.environ.pop("DUPLICAST_ALLOWED_ORIGINS", None)
        else:
            os.environ["DUPLICAST_ALLOWED_ORIGINS"] = before


@pytest.fixture(scope="module")
def spx_server() -> Iterator[str]:
    """A stand-in for SPX's web server: it serves overlays/templates/ as SPX serves the
    templates the crew copied to it."""
    handler = functools.partial(Standin, directory=str(TEMPLATES))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def report(hub: HubThread, body: Any, **headers: str) -> httpx.Response:
    sent = {"x-duplicast-playout-key": KEY, **headers}
    return httpx.post(f"{hub.url}/api/playout", json=body, headers=sent, timeout=5)


def control(hub: HubThread) -> dict[str, Any]:
    got = httpx.get(f"{hub.url}/api/control", headers=OP, timeout=5)
    assert got.status_code == 200, got.text
    data: dict[str, Any] = got.json()
    return data


def released_deal(hub: HubThread) -> int:
    deal: int = hub.rest("/api/standings")["deals"]["complete"]["A"][0]
    return deal


def unreleased_deal(hub: HubThread) -> int:
    rows = [r for r in hub.ops()["release"] if not r["released"] and r.get("done", 1)]
    assert rows, "the preload must leave a deal in play"
    return int(rows[0]["deal"])


def test_a_report_needs_the_key_in_its_header(hub: PlayoutHub) -> None:
    body = {"tool": "casparcg", "page": "seat", "state": "play", "params": {"seat": 1}}
    got = httpx.post(f"{hub.url}/api/playout", json=body, timeout=5)
    assert got.status_code == 401 and "X-Duplicast-Playout-Key" in got.json()["message"]
    assert (
        report(hub, body, **{"x-duplicast-playout-key": "not-the-key-0123456789"}).status_code
        == 401
    )
    for token in (OPERATOR, TALLY):  # another role's token is not the playout key
        assert report(hub, body, **{"x-duplicast-playout-key": token}).status_code == 401
    in_url = httpx.post(f"{hub.url}/api/playout?key={KEY}", json=body, timeout=5)
    assert in_url.status_code == 400 and "never in the URL" in in_url.json()["message"]
    bad = report(hub, {**body, "tool": "vmix"})
    assert bad.status_code == 400 and bad.json()["error"] == "bad_request"
    assert report(hub, [body]).status_code == 400
    assert control(hub)["playout"] == 0  # nothing of it applied


def test_the_key_opens_no_other_route(hub: PlayoutHub) -> None:
    bearer = {"Authorization": f"Bearer {KEY}"}
    header = {"x-duplicast-playout-key": KEY}
    for headers in (bearer, header):
        for path in ("/api/control", "/api/ops", "/api/tables/1")[: 3 if headers is bearer else 2]:
            got = httpx.get(f"{hub.url}{path}", headers=headers, timeout=5)
            assert got.status_code in (401, 403), (path, got.status_code)
        for path, body in (
            ("/api/control/take", None),
            ("/api/control/show", {"slot": "ticker"}),
            ("/api/onair", {"slot": "ticker", "value": {"visible": False}}),
        ):
            got = httpx.post(f"{hub.url}{path}", json=body, headers=headers, timeout=5)
            assert got.status_code in (401, 403), (path, got.status_code)
    got = httpx.get(f"{hub.url}/metrics", headers=bearer, timeout=5)
    assert got.status_code == 401


def test_cors_for_an_allowed_origin_only(hub: PlayoutHub) -> None:
    pre = {
        "origin": OTHER_ORIGIN,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, x-duplicast-playout-key",
    }
    got = httpx.options(f"{hub.url}/api/playout", headers=pre, timeout=5)
    assert got.status_code == 204
    assert got.headers["access-control-allow-origin"] == OTHER_ORIGIN
    assert "x-duplicast-playout-key" in got.headers["access-control-allow-headers"]
    evil = httpx.options(
        f"{hub.url}/api/playout", headers={**pre, "origin": "https://evil.example"}, timeout=5
    )
    assert evil.status_code == 403 and "access-control-allow-origin" not in evil.headers
    body = {"tool": "spx", "page": "leaderboard", "state": "stop"}
    assert report(hub, body, origin="https://evil.example").status_code == 403
    ok = report(hub, body, origin=OTHER_ORIGIN)
    assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == OTHER_ORIGIN


def test_play_then_stop_over_rest(hub: PlayoutHub) -> None:
    deal = released_deal(hub)
    version = control(hub)["version"]
    body = {"tool": "spx", "page": "compare", "state": "play", "params": {"deal": deal, "seat": 2}}
    assert report(hub, body).json() == {"ok": True}
    state = control(hub)
    assert state["playout"] == 1
    assert state["playout_text"] == f"compare · deal {deal} · seat 2 in SPX"
    assert state["version"] == version  # a report moves no slot: a surface's If-Match holds
    (shown,) = hub.ops()["playout"]
    assert shown["tool"] == "spx" and shown["name"] == "SPX" and shown["page"] == "compare"
    engine = hub.source.engine
    hub.restart()  # journaled: a restarted ingest rebuilds it from the journal
    assert hub.source.engine is not engine
    assert control(hub)["playout_text"] == f"compare · deal {deal} · seat 2 in SPX"
    assert report(hub, {**body, "state": "stop"}).status_code == 200
    assert control(hub)["playout"] == 0 and hub.ops()["playout"] == []


def test_a_report_never_shows_an_unreleased_deal(hub: PlayoutHub) -> None:
    deal = unreleased_deal(hub)

    def public() -> list[Any]:
        return [
            httpx.get(f"{hub.url}{path}", timeout=5).json()
            for path in ("/api/onair", "/api/onair?feed=program", "/api/standings?feed=program")
        ]

    # Settled first: a deal released just before (the preload's last) reaches the programme
    # its 1 s delay later, which is not the report's doing.
    before, deadline = public(), time.monotonic() + 20
    while (now := (time.sleep(1.5), public())[1]) != before:
        assert time.monotonic() < deadline, "the public and programme sources never settled"
        before = now
    body = {"tool": "casparcg", "page": "compare", "state": "play", "params": {"deal": deal}}
    assert report(hub, body).status_code == 200
    try:
        state = control(hub)
        assert state["playout_text"] == "compare · deal not released in CasparCG"
        assert f"deal {deal}" not in json.dumps(state)
        assert hub.ops()["playout"][0]["label"] == "compare · deal not released"
        assert public() == before  # the public and programme sources are as they were
        assert "playout" not in json.dumps(before)
    finally:
        assert report(hub, {**body, "state": "stop"}).status_code == 200


# -- the CasparCG template in Chromium, and the operator panel --


def xml(data: dict[str, Any]) -> str:
    parts = "".join(
        f'<componentData id="{k}"><data id="text" value="{v}"/></componentData>'
        for k, v in data.items()
    )
    return f"<templateData>{parts}</templateData>"


@pytest.mark.browser
def test_casparcg_template_reports_play_and_stop(page: Page, hub: PlayoutHub) -> None:
    panel = page.context.new_page()
    panel.goto(f"{hub.url}/overlays/operator.html#token={OPERATOR}")
    items = panel.locator('[data-testid="playout-item"]')
    expect(items).to_have_count(0, timeout=WAIT)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{hub.url}/overlays/seat.html?playout=casparcg")
    page.evaluate("(x) => window.update(x)", xml({"seat": 3, "slot": 0, "key": KEY}))
    page.evaluate("window.play()")
    expect(page.locator('[data-testid="gfx"]')).to_have_attribute(
        "data-visible", "true", timeout=WAIT
    )
    expect(items).to_have_count(1, timeout=WAIT)
    expect(items.first).to_have_text("on air in CasparCG: seat · seat 3 · like for like")
    assert items.first.get_attribute("data-tool") == "casparcg"
    state = control(hub)
    assert (
        state["playout"] == 1
        and state["playout_text"] == "seat · seat 3 · like for like in CasparCG"
    )
    page.evaluate("window.stop()")
    expect(items).to_have_count(0, timeout=WAIT)
    assert control(hub)["playout"] == 0
    assert all(KEY not in url for url in requests), "the key went into a URL"
    panel.close()


@pytest.mark.browser
def test_a_template_without_the_key_reports_nothing(page: Page, hub: PlayoutHub) -> None:
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.goto(f"{hub.url}/overlays/seat.html?playout=casparcg")
    page.evaluate("(x) => window.update(x)", xml({"seat": 2, "slot": 0}))
    page.evaluate("window.play()")
    expect(page.locator('[data-testid="gfx"]')).to_have_attribute(
        "data-visible", "true", timeout=WAIT
    )
    page.wait_for_timeout(500)
    assert posts == [] and control(hub)["playout"] == 0


@pytest.mark.browser
def test_spx_template_reports_play_and_stop(page: Page, hub: PlayoutHub, spx_server: str) -> None:
    """SPX's renderer loads the template from its own server; the `key` field reaches the
    framed hub page by postMessage (never its URL), which reports to the hub."""
    frames: list[str] = []
    page.on("request", lambda r: frames.append(r.url))
    page.goto(f"{spx_server}/leaderboard.html")
    fields = {"hub": hub.url, "slot": "0", "feed": "", "key": KEY}
    page.evaluate("(j) => window.update(j)", json.dumps(fields))
    page.wait_for_function("() => window.frames.length === 1")
    page.evaluate("window.play()")
    for _ in range(50):
        if control(hub)["playout"] == 1:
            break
        page.wait_for_timeout(100)
    assert control(hub)["playout_text"] == "leaderboard · like for like in SPX"
    page.evaluate("window.stop()")
    for _ in range(50):
        if control(hub)["playout"] == 0:
            break
        page.wait_for_timeout(100)
    assert control(hub)["playout"] == 0
    assert all(KEY not in url for url in frames), "the key went into a URL"


def until(hub: HubThread, page: Page, count: int) -> dict[str, Any]:
    """The control state once `count` graphics play (polled: the report is the page's)."""
    for _ in range(50):
        state = control(hub)
        if state["playout"] == count:
            return state
        page.wait_for_timeout(100)
    return control(hub)


@pytest.mark.browser
def test_ograf_graphic_reports_play_and_stop(page: Page, hub: PlayoutHub, spx_server: str) -> None:
    """An OGraf renderer loads the graphic with `key` in its data: playAction and stopAction
    reach the hub as reports (the key by postMessage, never in a URL)."""
    urls: list[str] = []
    page.on("request", lambda r: urls.append(r.url))
    ograf(page, spx_server, "table", {"hub": hub.url, "slot": "0", "key": KEY, "table": "2"})
    assert page.evaluate("window.graphic.playAction({})")["statusCode"] == 200
    assert until(hub, page, 1)["playout_text"] == "table · table 2 in OGraf"
    assert page.evaluate("window.graphic.stopAction({})") == {"statusCode": 200}
    assert until(hub, page, 0)["playout"] == 0
    assert all(KEY not in url for url in urls), "the key went into a URL"
