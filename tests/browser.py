"""What every browser test shares: Debian's Chromium (never a downloaded browser), its flags, a
page that fails its test on any console error, and the ``browser`` / ``page`` fixtures.

``tests/conftest.py`` offers the fixtures to every test module; each module gets its own
browser (module scope), and a module that needs another kind of page defines its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
EXPECTED_ERRORS = ("WebSocket connection to",)  # logged by Chromium while the hub restarts
SHOTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "screenshots"


def open_overlay(page: Page, base_url: str, path: str, *, visible: bool = True) -> None:
    """Open ``overlays/{path}`` of a hub and, with ``visible``, wait until its graphic shows."""
    page.goto(f"{base_url}/overlays/{path}")
    if visible:
        expect(page.locator('[data-testid="gfx"]')).to_have_attribute(
            "data-visible", "true", timeout=5000
        )


def screenshot(page: Page, name: str, settle_ms: int) -> None:
    """``test-artifacts/screenshots/{name}.png`` once the entry animations have settled."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(settle_ms)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def new_page(browser: Browser, width: int, height: int, errors: list[str]) -> Page:
    """A page in a context of its own; console errors (but the expected ones) and page errors
    go to ``errors``."""
    pg = browser.new_context(viewport={"width": width, "height": height}).new_page()

    def on_console(msg: ConsoleMessage) -> None:
        if msg.type == "error" and not msg.text.startswith(EXPECTED_ERRORS):
            errors.append(msg.text)

    pg.on("console", on_console)
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    return pg


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A 1920x1080 page that must log no error."""
    errors: list[str] = []
    pg = new_page(browser, 1920, 1080, errors)
    yield pg
    pg.context.close()
    assert errors == []
