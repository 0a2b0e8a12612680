"""An overlay in Chromium through an ingest failover: the graphic never goes blank.

The leaderboard overlay (``overlays/leaderboard.html``) follows ingest A through a small TCP
proxy on loopback that stands for the load balancer. A plays a simulated session; A is killed
with SIGKILL and the proxy sends new connections to ingest B, still in standby (as a load
balancer whose health check has not caught up would). The page reconnects and resumes there.
Before B is ready it must be sent nothing (DESIGN §7: an empty snapshot blanked the graphic);
once B took over, play goes on on the page. A MutationObserver in the page records every moment
the graphic is hidden or has no team rows: none is allowed. Processes are stopped by pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect
from redis_server import RedisServer, free_port

from tests.browser import new_page
from tests.test_failover import COMMENTATOR, OPERATOR, Process, event_config, serve

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.timeout(180)]

WATCH = """() => {
  const gfx = document.querySelector('[data-testid="gfx"]');
  window.__blank = [];
  const check = () => {
    const rows = document.querySelectorAll('[data-testid="team-row"]').length;
    if (gfx.dataset.visible !== 'true' || rows === 0) {
      window.__blank.push({t: Date.now(), visible: gfx.dataset.visible, rows});
    }
  };
  new MutationObserver(check).observe(gfx, {subtree: true, childList: true, attributes: true,
                                            characterData: true});
}"""


class Proxy:
    """A TCP forwarder on loopback whose target can be switched (the load balancer)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.port = free_port()
        self.loop = asyncio.new_event_loop()
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.started.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", self.port)
        )
        self.started.set()
        self.loop.run_forever()
        server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        host, port = self.target.split(":")
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.close()
            return

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(Exception):
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def wait_ready(address: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"http://{address}/readyz", timeout=1.0).status_code == 200:
                return
        time.sleep(0.1)
    raise TimeoutError(f"{address} not ready")


def wait_listening(address: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.TransportError):
            httpx.get(f"http://{address}/healthz", timeout=1.0)
            return
        time.sleep(0.1)
    raise TimeoutError(f"{address} not listening")


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[tuple[RedisServer, list[Process], dict[str, str]]]:
    redis = RedisServer(tmp_path / "redis", extra=("--appendfsync", "always"))
    redis.start()
    procs: list[Process] = []
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "DUPLICAST_COMMENTATOR_TOKEN": COMMENTATOR,
        "DUPLICAST_OPERATOR_TOKEN": OPERATOR,
        "DUPLICAST_ALLOWED_ORIGINS": "*",  # the page's origin is not the proxy's host
    }
    try:
        yield redis, procs, env
    finally:
        for proc in procs:
            proc.stop()
        redis.stop()


def test_an_overlay_never_goes_blank_through_an_ingest_failover(
    browser: Browser,
    tmp_path: Path,
    processes: tuple[RedisServer, list[Process], dict[str, str]],
) -> None:
    redis, procs, env = processes
    config = event_config(tmp_path)
    active, first = serve("ingest", config, redis.url, tmp_path / "ingest-a.log", env)
    procs.append(active)
    wait_ready(first)
    backup, second = serve("ingest", config, redis.url, tmp_path / "ingest-b.log", env)
    procs.append(backup)
    wait_listening(second)
    play = ["--seed", "7", "--pace", "0.15", "--no-outbox"]
    procs.append(
        Process(
            ["console", "simulate", "--config", str(config), "--redis", redis.url, *play],
            tmp_path / "simulate.log",
            env,
        )
    )
    proxy = Proxy(first)
    errors: list[str] = []
    page = new_page(browser, 1920, 1080, errors)
    try:
        ws = f"ws://127.0.0.1:{proxy.port}/ws"
        page.goto(f"http://{first}/overlays/leaderboard.html?ws={ws}")
        gfx = page.locator('[data-testid="gfx"]')
        expect(gfx).to_have_attribute("data-visible", "true", timeout=30_000)
        expect(page.locator('[data-testid="team-row"]').first).to_be_visible(timeout=30_000)
        page.evaluate(WATCH)
        page.wait_for_timeout(2000)
        active.kill()  # SIGKILL
        proxy.target = second  # the load balancer now sends everyone to the standby
        wait_ready(second, timeout=30)
        page.wait_for_timeout(4000)  # play goes on through B
        blanks = page.evaluate("window.__blank")
        print(f"blank moments: {len(blanks)}")
        assert blanks == [], blanks[:5]
        expect(gfx).to_have_attribute("data-visible", "true")
        assert page.locator('[data-testid="team-row"]').count() == 6
        assert not errors, errors
    finally:
        page.context.close()
        proxy.stop()
