"""The public results site in Chromium during a played session (docs/site.md), on a phone
(390x844) and a desktop (1920x1080): the ranking and the deals list show only released deals,
a deal's page fills in as the deal is released (live, from the public feed, announced in the
page's role=log region), so does the running view (a column per released deal), the pause
control holds updates back until resumed, every page has 0 axe-core violations of WCAG 2.2
A/AA, reduced motion is honoured, and no data file of an unreleased deal is ever answered to
the page. The screenshots of docs/site.md are saved here.

One hub (role all) for the module, a few page loads per viewport; and the static export's
files read through a plain web server."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Response, WebSocket, expect

from hub.roles.embedded import OVERLAYS
from hub.serve.site import SiteBuilder, engine_reader, file_name
from tests.a11y import assert_accessible, violations
from tests.browser import new_page
from tests.hubharness import offline, session_events, unique_tournament
from tests.nginx import free_port
from tests.test_overlays_hub import HubThread

DOCS_SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
# The sample session (samples/ifp6-session.jsonl) releases deals 9 and 4 at events 840-841,
# 10 at 959, 6 at 997, 8 at 1072 and 3 at 1177 (the release delay is 0).
FIRST, TENTH, SIXTH, EIGHTH, LATER = 841, 959, 997, 1073, 1200


@pytest.fixture(scope="module")
def hub() -> Iterator[HubThread]:
    h = HubThread("site")
    h.start()
    h.preload(FIRST)
    try:
        yield h
    finally:
        h.stop()


def released(h: HubThread) -> set[int]:
    assert h.source is not None
    return {d for d in range(1, h.config.deals + 1) if h.source.engine.release.deal_released(d)}


def watch_data(page: Page, h: HubThread, answered: list[str]) -> None:
    """Every data file of a deal answered to the page must be of a released deal (read after
    the answer: the page can only be behind the engine)."""

    def on_response(response: Response) -> None:
        m = re.search(r"/site/data/deal/(\d+)\.json$", response.url)
        if m and response.status == 200:
            answered.append(m.group(1))
            assert int(m.group(1)) in released(h), response.url

    page.on("response", on_response)


def open_site(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator("body[data-loaded]")).to_have_count(1, timeout=10_000)


def settled(page: Page) -> None:
    """The page has taken the feed's first snapshot (its refresh done): ready for a picture."""
    page.wait_for_function(
        "() => Number(document.body.dataset.loaded) >= 2"
        " && !document.getElementById('content').classList.contains('refreshing')",
        timeout=10_000,
    )


def loads(page: Page) -> int:
    return int(page.locator("body").get_attribute("data-loaded") or 0)


def shot(page: Page, name: str) -> None:
    DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS_SHOTS / f"site-{name}.png"))


def test_axe_finds_what_it_should(browser: Browser) -> None:
    """The checker itself: a page with an unnamed button and an image without text fails."""
    errors: list[str] = []
    page = new_page(browser, 390, 844, errors)
    page.set_content(
        '<html lang="en"><title>x</title><main><button></button><img src="data:,"></main>'
    )
    found = {v["id"] for v in violations(page)}
    assert {"button-name", "image-alt"} <= found
    page.context.close()


def watch_feed(page: Page) -> tuple[list[str], list[int]]:
    """The topics the page's websockets subscribe to, and the size of each frame they get."""
    topics: list[str] = []
    sizes: list[int] = []

    def sent(payload: str | bytes) -> None:
        message = json.loads(payload)
        if message.get("op") == "subscribe":
            topics.extend(message["topics"])

    def opened(ws: WebSocket) -> None:
        ws.on("framesent", sent)
        ws.on("framereceived", lambda payload: sizes.append(len(payload)))

    page.on("websocket", opened)
    return topics, sizes


def phone(browser: Browser, hub: HubThread) -> tuple[Page, list[str], list[str], str]:
    """A 390x844 page watching the deal data answered to it: the page, its errors, the deals
    answered, the site's address."""
    errors: list[str] = []
    page = new_page(browser, 390, 844, errors)
    answered: list[str] = []
    watch_data(page, hub, answered)
    return page, errors, answered, f"{hub.url}/site/"


def test_phone_the_site_fills_in_as_deals_release(browser: Browser, hub: HubThread) -> None:
    page, errors, answered, base = phone(browser, hub)
    topics, sizes = watch_feed(page)

    # the event: a provisional ranking; a link to each released deal, none to the others
    open_site(page, base)
    expect(page.locator(".badge.provisional")).to_contain_text("2 of 12 deals released")
    links = page.locator("#deals a")
    assert sorted(int(t.removeprefix("Deal ")) for t in links.all_inner_texts()) == [4, 9]
    assert page.locator("#deals .pending").count() == 10
    expect(page.locator("#ranking table tbody tr")).to_have_count(6)
    settled(page)
    assert_accessible(page, "the event page at 390x844")
    shot(page, "event-390")

    # a deal not yet public: its page says so and holds nothing of it
    open_site(page, f"{base}deal/10/")
    expect(page.locator("#content")).to_contain_text("Not public yet")
    assert page.locator("#content table").count() == 0
    assert_accessible(page, "an unreleased deal's page at 390x844")
    expect(page.locator("#link")).to_contain_text("Live", timeout=10_000)
    before = loads(page)
    hub.play(hub.events[FIRST:TENTH])  # every table completes deal 10: it is released
    expect(page.locator("#traveller table tbody tr")).to_have_count(6, timeout=10_000)
    assert loads(page) > before  # (the same page, refreshed from the feed: no reload)
    expect(page.locator("#updates")).to_contain_text("Deal 10: 6 tables released")
    expect(page.locator("#record .card").first).to_be_visible()
    assert_accessible(page, "a released deal's page at 390x844")
    page.locator("#traveller").scroll_into_view_if_needed()
    shot(page, "deal-390")

    # paused: nothing moves until the reader resumes
    open_site(page, base)
    expect(page.locator("#link")).to_contain_text("Live", timeout=10_000)
    settled(page)  # (the feed's snapshot taken: nothing under way when paused)
    pause = page.locator("#pause")
    pause.click()
    expect(pause).to_have_attribute("aria-pressed", "true")
    expect(pause).to_have_text("Resume live updates")
    hub.play(hub.events[TENTH:SIXTH])  # deal 6 released meanwhile
    expect(page.locator("#link")).to_contain_text("waiting", timeout=10_000)
    assert page.locator("body").get_attribute("data-released") == "4,9,10"
    pause.click()
    expect(page.locator("body")).to_have_attribute("data-released", "4,6,9,10", timeout=10_000)
    expect(page.locator("#updates")).to_contain_text("4 of 12 deals released")
    hub.sent = SIXTH
    assert "10" in answered
    # the pages follow the small `released` topic only (issue #34.6): never the standings
    # nor a deal's traveller, whose frames at a release are tournament-sized
    assert topics and set(topics) == {"released"}, topics
    assert sizes and max(sizes) < 400, sizes
    # the smallest phone: nothing wider than the screen but the tables' own scroll regions
    page.set_viewport_size({"width": 320, "height": 640})
    assert page.evaluate("document.documentElement.scrollWidth") <= 320
    page.context.close()
    assert errors == []


def running_deals(page: Page) -> list[int]:
    """The deal columns of the running view's first team table, in page order."""
    heads = page.locator("#running-teams table").first.locator("thead th").all_inner_texts()
    return [int(h.removeprefix("Deal ")) for h in heads[1:]]


def test_phone_the_running_view_grows_deal_by_deal(browser: Browser, hub: HubThread) -> None:
    """``/site/?view=running``: a column per released deal (deal order), a row per team, the last
    column the ranking now; a deal released while it is open is a new column in its place
    (once the reader resumes, if paused), announced in the log; nothing wider than a 320 px
    screen but the tables' regions."""
    hub.play(hub.events[hub.sent or SIXTH : SIXTH])
    page, errors, answered, base = phone(browser, hub)
    open_site(page, base)
    page.get_by_test_id("running-link").click()  # (from the event's ranking)
    expect(page.locator("#running-teams")).to_have_count(1)
    assert page.url == f"{base}?view=running"
    expect(page.locator("nav a[aria-current='page']")).to_have_text("Running")
    expect(page.locator(".badge.provisional")).to_contain_text("4 of 12 deals released")
    assert running_deals(page) == [4, 6, 9, 10]
    teams = page.locator("#running-teams table").first.locator("tbody tr")
    expect(teams).to_have_count(6)
    # the last column is the like-for-like ranking now: rank 1 first, as the event's page has it
    standings = page.evaluate("fetch('data/standings.json').then((r) => r.json())")
    leader = standings["like_for_like"]["teams"][0]["name"]
    assert teams.first.locator("th").inner_text().strip() == leader
    assert teams.first.locator("td").last.locator(".rank").inner_text() == "1st"
    # a move is told in words too (an arrow is decoration)
    moves = page.locator("#running-teams .move .sr-only").all_inner_texts()
    assert moves and all(m.strip().startswith(("up", "down", "no change")) for m in moves)
    expect(page.locator("#running-players table")).to_have_count(6)  # (a seat each)
    region = page.locator("#running-teams .scroll").first
    assert region.get_attribute("tabindex") == "0" and region.get_attribute("role") == "region"
    assert "Teams after each deal" in (region.get_attribute("aria-label") or "")
    settled(page)
    assert_accessible(page, "the running view at 390x844")
    shot(page, "running-390")
    # a deal released while the page is open and paused: nothing moves until "Resume", then
    # its column, in deal order, and one line said
    expect(page.locator("#link")).to_contain_text("Live", timeout=10_000)
    pause = page.locator("#pause")
    pause.click()
    hub.play(hub.events[SIXTH:EIGHTH])
    hub.sent = EIGHTH
    expect(page.locator("#link")).to_contain_text("waiting", timeout=10_000)
    assert running_deals(page) == [4, 6, 9, 10]
    pause.click()
    expect(page.locator("#running-teams table").first.locator("thead th")).to_have_count(
        6, timeout=10_000
    )
    assert running_deals(page) == [4, 6, 8, 9, 10]
    expect(page.locator("#updates")).to_contain_text("5 of 12 deals released; after deal 10")
    page.set_viewport_size({"width": 320, "height": 640})
    assert page.evaluate("document.documentElement.scrollWidth") <= 320
    page.context.close()
    assert answered == []  # (the running view is its own document: no deal's data read)
    assert errors == []


# Times, in the page's own clock, of each `released` frame it gets and each read of its data.
SPREAD_PROBE = """
(() => {
  window.__frames = []; window.__reads = [];
  const Real = window.WebSocket;
  window.WebSocket = class extends Real {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (ev) => {
        if (typeof ev.data === 'string' && ev.data.includes('"topic":"released"')) {
          window.__frames.push(performance.now());
        }
      });
    }
  };
  const fetchReal = window.fetch;
  window.fetch = (url, ...rest) => {
    if (String(url).endsWith('data/event.json')) window.__reads.push(performance.now());
    return fetchReal(url, ...rest);
  };
  Math.random = () => %s;
})();
"""


def test_a_release_keeps_the_readers_place(browser: Browser) -> None:
    """A release reads the page again under the reader: the element with the keyboard's focus
    keeps it (its like in the page read again) and a table scrolled sideways stays where the
    reader had it. (The page was drawn anew: the focus went back to the body, so a keyboard
    user's next Tab started from the top, and the table jumped back to its left edge.)"""
    h = HubThread("site")
    h.start()
    try:
        h.preload(SIXTH)
        errors: list[str] = []
        page = new_page(browser, 390, 844, errors)
        open_site(page, f"{h.url}/site/?view=running")
        settled(page)
        expect(page.locator("#link")).to_contain_text("Live", timeout=10_000)
        region = page.locator("#running-teams .scroll").first
        region.focus()
        region.evaluate("(r) => { r.scrollLeft = 80; }")  # the reader reads on to the right
        at = region.evaluate("(r) => r.scrollLeft")
        assert at > 0, "the table is not wider than the phone"
        h.play(h.events[SIXTH:EIGHTH])  # deal 8 released: the page reads its data again
        expect(page.locator("body")).to_have_attribute(
            "data-released", re.compile(r"(^|,)8(,|$)"), timeout=10_000
        )
        label = region.get_attribute("aria-label") or ""
        assert "Teams after each deal" in label
        focused = page.evaluate("() => document.activeElement.getAttribute('aria-label')")
        assert focused == label
        assert region.evaluate("(r) => r.scrollLeft") == at
        page.context.close()
        assert errors == []
    finally:
        h.stop()


@pytest.mark.parametrize("draw", [0.0, 0.99])
def test_a_frame_has_the_page_read_again_after_its_share_of_the_spread(
    browser: Browser, hub: HubThread, draw: float
) -> None:
    """Each page waits its own random share of ``SPREAD_MS`` (1.5 s) after a `released` frame
    before it reads its data again (so a release's phones do not all ask the edges at once):
    with the page's draw at 0.99 the read comes at least 1.48 s after the frame (a timer never
    fires early), with 0 at once (well under that, even on a loaded machine)."""
    errors: list[str] = []
    page = new_page(browser, 390, 844, errors)
    page.add_init_script(SPREAD_PROBE % draw)
    open_site(page, f"{hub.url}/site/")
    settled(page)  # (the first snapshot's read done)
    frames = page.evaluate("window.__frames")
    reads = page.evaluate("window.__reads")
    assert len(frames) >= 1 and len(reads) >= 2, (frames, reads)
    gap = reads[1] - frames[0]  # (the first read is the page's load, before the feed)
    if draw:
        assert gap >= 1480, gap
    else:
        assert 0 <= gap < 1000, gap
    page.context.close()
    assert errors == []


def test_desktop_every_page_and_reduced_motion(browser: Browser, hub: HubThread) -> None:
    hub.play(hub.events[hub.sent or SIXTH : LATER])
    public = released(hub)
    assert public == {3, 4, 6, 8, 9, 10}
    errors: list[str] = []
    page = new_page(browser, 1920, 1080, errors)
    answered: list[str] = []
    watch_data(page, hub, answered)
    base = f"{hub.url}/site/"
    pages = {
        "event": base,
        "deal": f"{base}deal/3/",
        "team": f"{base}team/FIN/",
        "player": f"{base}player/FIN-2/",
        "running": f"{base}?view=running",
    }
    for name, url in pages.items():
        open_site(page, url)
        settled(page)
        assert_accessible(page, f"the {name} page at 1920x1080")
        shot(page, f"{name}-1920")
        if name in ("team", "player"):  # a score card: one row per released deal (and seat)
            deals = {
                int(t.removeprefix("Deal "))
                for t in page.locator("#card tbody th a").all_inner_texts()
            }
            assert deals == public
            rows = page.locator("#card tbody tr").count()
            assert rows == len(public) * (6 if name == "team" else 1)
            # IFP points: no column of blanks, the card says points are given per session
            expect(page.get_by_test_id("points-note")).to_contain_text("per session")
        if name == "deal":  # the hand record: every seat's cards, the suit told in words too
            expect(page.locator("#record table").first.locator("tbody tr")).to_have_count(6)
            assert (
                page.locator("#record .card .sr-only")
                .first.inner_text()
                .endswith(("spades", "hearts", "diamonds", "clubs"))
            )
    # a table wider than a phone scrolls on its own and is reachable by keyboard
    assert page.locator(".scroll[tabindex='0'][role='region']").count() >= 1
    duration = page.evaluate(
        "getComputedStyle(document.getElementById('content')).transitionDuration"
    )
    assert duration == "0.2s"
    page.context.close()
    # reduced motion: no transition at all
    context = browser.new_context(viewport={"width": 1920, "height": 1080}, reduced_motion="reduce")
    calm = context.new_page()
    open_site(calm, base)
    duration = calm.evaluate(
        "getComputedStyle(document.getElementById('content')).transitionDuration"
    )
    assert duration == "0s"
    context.close()
    assert set(answered) <= {str(d) for d in public}
    assert errors == []


def test_the_site_works_from_plain_files(browser: Browser, tmp_path: Path) -> None:
    """What ``export --site`` writes (``SiteBuilder`` over the engine's public payloads, each
    path at its ``file_name``) read through a plain web server: every page renders from its
    files, says it is a copy, and logs no error."""
    config, decks = unique_tournament("sitefiles")
    engine = offline(config, decks, session_events(config.id)[:LATER])
    builder = SiteBuilder(engine_reader(engine), OVERLAYS)
    root = tmp_path / "results"
    for path in builder.paths():
        doc = builder.document(path)
        assert doc is not None, path
        target = root / file_name(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(doc.body)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "-b", "127.0.0.1", "-d", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    errors: list[str] = []
    page = new_page(browser, 390, 844, errors)
    try:
        base = f"http://127.0.0.1:{port}/results/"
        for _ in range(100):  # (until it listens)
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            time.sleep(0.05)
        open_site(page, base)
        expect(page.locator("#link")).to_have_text("A copy of the results: not updated live.")
        assert page.locator("#deals a").count() == 6
        open_site(page, f"{base}deal/3/")
        expect(page.locator("#traveller table tbody tr")).to_have_count(6)
        open_site(page, f"{base}player/FIN-1/index.html")
        expect(page.locator("#card tbody tr")).to_have_count(6)
        open_site(page, f"{base}?view=running")
        assert running_deals(page) == [3, 4, 6, 8, 9, 10]
    finally:
        page.context.close()
        server.terminate()
        server.wait(10)
    assert errors == []
