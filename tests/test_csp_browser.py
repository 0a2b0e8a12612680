"""Issue #30 item 12: every overlay page under the hub's Content-Security-Policy, in Debian's
Chromium against a real hub after a played session, with no CSP violation (neither a
``securitypolicyviolation`` event nor a console message), and the page's headers as sent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from hub.serve.headers import CSP
from tests.hubharness import COMMENTATOR, OPERATOR
from tests.test_overlays_hub import HubThread

pytestmark = pytest.mark.browser

PRELOAD = 400  # events of the sample session: deals played and released at every table

PAGES = (
    "index.html",
    "leaderboard.html",
    "seat.html?seat=2",
    "table.html?table=1",
    f"table.html?table=1&token={COMMENTATOR}",
    "compare.html?deal=1&seat=1",
    "ticker.html",
    "clock.html",
    "stats.html?deal=1",
    f"commentator.html?token={COMMENTATOR}",
    f"operator.html?token={OPERATOR}",
    "console.html?token=no-such-console",  # (refused by the hub: the page still runs)
)

WATCH = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
});
"""


@pytest.fixture(scope="module")
def hub() -> Iterator[HubThread]:
    h = HubThread("csp")
    h.start()
    h.preload(PRELOAD)
    yield h
    h.stop()


@pytest.mark.parametrize("path", PAGES)
def test_every_page_runs_under_the_policy(page: Page, hub: HubThread, path: str) -> None:
    messages: list[str] = []
    page.on("console", lambda m: messages.append(m.text))
    page.add_init_script(WATCH)
    response = page.goto(f"{hub.url}/overlays/{path}")
    assert response is not None and response.ok
    assert response.headers["content-security-policy"] == CSP
    assert response.headers["referrer-policy"] == "no-referrer"
    page.wait_for_timeout(1500)  # modules loaded, socket open, first snapshots drawn
    if path.startswith("operator.html"):  # the TD's panel: its confirmation and alerts
        page.locator('[data-testid="td-by"]').fill("TD Ana")
        page.locator('[data-testid="td-void"] input[name="table"]').fill("1")
        page.locator('[data-testid="td-void"] input[name="reason"]').fill("x")
        page.locator('[data-testid="td-void-send"]').click()
        page.locator('[data-testid="td-ask-no"]').click()
    violations = page.evaluate("window.__csp")
    csp_lines = [m for m in messages if "Content Security Policy" in m or "Refused to" in m]
    assert violations == [] and csp_lines == [], (violations, csp_lines)
