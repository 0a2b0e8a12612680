"""Accessibility checks any page test can call: axe-core in the test's own Chromium.

``axe-playwright-python`` (the ``test`` extra) ships axe-core's script (``axe.min.js``) inside
the wheel, so nothing is downloaded when a test runs. ``assert_accessible(page)`` runs it with
the WCAG 2.0, 2.1 and 2.2 A and AA rules (``WCAG_TAGS``) on the page as it stands and fails with
one readable paragraph per violation (rule, impact, help, each offending element and why).

The page's Content-Security-Policy does not stop it: Playwright evaluates the script through
the DevTools protocol, not as a page ``<script>``.
"""

from __future__ import annotations

from typing import Any

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page

__all__ = ["WCAG_TAGS", "assert_accessible", "axe_version", "violations"]

WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
"""axe-core's tags of the WCAG 2.2 level A and AA success criteria (2.2 adds only AA rules,
e.g. ``target-size``, to 2.1's)."""

_AXE = Axe()


def violations(page: Page, context: str | None = None) -> list[dict[str, Any]]:
    """axe-core's violations of the WCAG A/AA rules on ``page`` (``context``: a CSS selector
    to check only that part)."""
    options = {"runOnly": {"type": "tag", "values": WCAG_TAGS}, "resultTypes": ["violations"]}
    result = _AXE.run(page, context=context, options=options)
    found: list[dict[str, Any]] = result.response["violations"]
    return found


def axe_version(page: Page) -> str:
    """The version of axe-core the checks ran (after a first ``violations`` on the page)."""
    return str(page.evaluate("window.axe ? window.axe.version : ''"))


def report(found: list[dict[str, Any]], where: str = "") -> str:
    """The violations as text: one paragraph per rule, one line per element."""
    lines = [f"{len(found)} accessibility violation(s){' on ' + where if where else ''}:"]
    for v in found:
        lines.append(f"- {v['id']} ({v.get('impact')}): {v['help']} [{v.get('helpUrl', '')}]")
        for node in v["nodes"]:
            target = ", ".join(str(t) for t in node.get("target", []))
            lines.append(f"    at {target}: {node.get('html', '')[:160]}")
            for check in node.get("any", []) + node.get("all", []) + node.get("none", []):
                lines.append(f"      * {check.get('message', '')}")
    return "\n".join(lines)


def assert_accessible(page: Page, where: str = "", context: str | None = None) -> None:
    """Fail unless axe-core finds no WCAG 2.2 A/AA violation on ``page`` (``where``: names the
    page in the message)."""
    found = violations(page, context)
    assert not found, report(found, where or page.url)
