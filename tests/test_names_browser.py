"""Names a venue meets (tests/names.py) on every page that shows them, in Chromium against a
hub that played the sample session with them: the leaderboard, the seat ranking, compare, the
table, the ticker, the commentator and operator desks, the statistics and the results site
show each name as text (markup never runs: no image is made, no dialog opens), log no error,
and a name cut to fit shows its first letter, in a right-to-left script too."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

from hub.files.config import load_config
from tests.browser import new_page
from tests.hubharness import COMMENTATOR, OPERATOR, session_events
from tests.names import ARABIC, TEAMS, XSS, names_file
from tests.test_overlays_hub import HubThread

pytestmark = pytest.mark.browser

PAGES = (
    "overlays/leaderboard.html",
    "overlays/seat.html?seat=3",
    "overlays/compare.html?deal=4&seat=1",
    "overlays/table.html?table=1",
    "overlays/ticker.html",
    f"overlays/commentator.html?token={COMMENTATOR}",
    f"overlays/operator.html?token={OPERATOR}",
    "overlays/stats.html",
    "site/",
    "site/deal/4/",
    "site/team/BRA/",
    "site/replay/4/",
)
# Each name cut to fit (overflowing its box) must show its first letter inside the box: a
# right-to-left name laid out left to right showed its last letters and lost its first.
FIRST_LETTER_CUT = """() => {
  const cut = [];
  for (const el of document.querySelectorAll('*')) {
    const text = el.firstChild;
    if (el.childNodes.length !== 1 || !text || text.nodeType !== 3 || !text.data.trim()) continue;
    const clips = getComputedStyle(el).overflowX !== 'visible';
    if (!clips || el.scrollWidth <= el.clientWidth + 1) continue;
    const box = el.getBoundingClientRect();
    if (box.width < 2) continue;  // (read only by a screen reader)
    const range = document.createRange();
    range.setStart(text, 0);
    range.setEnd(text, 1);
    const first = range.getBoundingClientRect();
    if (first.left < box.left - 1 || first.right > box.right + 1) cut.push(text.data);
  }
  return cut;
}"""


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubThread]:
    h = HubThread("names")
    config = load_config(names_file(tmp_path_factory.mktemp("names")))
    h.config = dataclasses.replace(config, id=h.config.id)
    h.events = session_events(h.config.id)
    h.start()
    h.preload(1200)  # six deals released, every table past its sixth hand
    try:
        yield h
    finally:
        h.stop()


def test_every_page_shows_the_names_as_text_and_a_cut_name_from_its_start(
    browser: Browser, hub: HubThread
) -> None:
    names = {name for name, players in TEAMS.values() for name in (name, *players)}
    dialogs: list[str] = []
    for path in PAGES:
        errors: list[str] = []
        page = new_page(browser, 1920, 1080, errors)
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{hub.url}/{path}")
        page.wait_for_function(
            "names => names.some(n => document.body.textContent.includes(n))",
            arg=sorted(names),
            timeout=10_000,
        )
        page.wait_for_timeout(300)  # (the rest of the feed's first snapshot)
        text = page.evaluate("document.body.textContent")
        assert page.locator("img").count() == 0 and dialogs == [], path
        assert errors == [], path
        if path.startswith(("overlays/leaderboard", "site/")):
            assert XSS in text and ARABIC.split()[0] in text, path
        assert page.evaluate(FIRST_LETTER_CUT) == [], path
        page.context.close()
