"""Behind the load balancer (issue #20): the shipped deploy/nginx.conf in front of two real
``duplicast serve --role edge`` processes and an ingest, on a Redis of the test's own.

- overlays opened in Debian Chromium through nginx draw their data (the same-origin check saw
  ``Host`` without its port and refused every overlay websocket);
- 1,000 websocket clients from 10 loopback source addresses are all admitted (every client
  used to be nginx's address: 2 edges x 256 for a whole venue), one address gets at most its
  cap, and the operator still connects from an address at its cap.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import websockets
from playwright.sync_api import Browser, expect

from hub.wire.signing import session_proof
from tests.browser import new_page, open_overlay
from tests.nginx import Nginx, free_port
from tests.redis_server import RedisServer

pytestmark = [pytest.mark.redis]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
SESSION = ROOT / "samples" / "ifp6-session.jsonl"
PRELOAD = 400  # events of the sample session played before the pages open
COMMENTATOR = "kq3Z-vYp8_Lw2mXc7RtB9sHd-commentator"
OPERATOR = "kq3Z-vYp8_Lw2mXc7RtB9sHd-operator"
TOKENS = ("DUPLICAST_COMMENTATOR_TOKEN", "DUPLICAST_OPERATOR_TOKEN")
CAP = 256  # deploy/nginx.conf's limit_conn, and the edges' default --max-per-address
SOURCES = [f"127.0.0.{i}" for i in range(2, 12)]  # 10 client addresses
CAPPED = "127.0.0.12"


@dataclass
class Venue:
    lb: Nginx
    edges: list[int]  # the edges' ports
    processes: list[subprocess.Popen[str]]


Hub = tuple[str, str, int, dict[str, str]]  # role, Redis URL, port, environment


def start_hub(role: str, redis: str, port: int, env: dict[str, str]) -> subprocess.Popen[str]:
    """``duplicast serve --role ROLE``, returned once it listens."""
    return start_hubs((role, redis, port, env))[0]


def start_hubs(*hubs: Hub, config: Path = SAMPLE) -> list[subprocess.Popen[str]]:
    """Several ``duplicast serve`` started at once, as compose starts a venue's (each takes
    seconds to start under load: one after the other, a venue waited for the sum), returned
    once each listens; if one does not, every one is stopped. (``config``: the tournament's
    file, the sample's by default.)"""
    started: list[subprocess.Popen[str]] = []
    try:
        for role, redis, port, env in hubs:
            command = [sys.executable, "-m", "hub", "serve", "--role", role]
            command += ["--config", str(config), "--redis", redis, "--port", str(port)]
            started.append(
                subprocess.Popen(
                    command,
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
            )
        for process, (role, *_) in zip(started, hubs, strict=True):
            listening(process, role)
    except BaseException:
        for process in started:
            stop(process)
        raise
    return started


def listening(process: subprocess.Popen[str], role: str) -> None:
    """Once ``process`` says it serves; RuntimeError if it ends or stays silent 60 s."""
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    line = ""
    while f"duplicast {role} for" not in line:
        line = process.stdout.readline()
        if (not line and process.poll() is not None) or time.monotonic() > deadline:
            raise RuntimeError(f"duplicast serve --role {role} did not start")


def stop(process: subprocess.Popen[str]) -> None:
    """End a hub process this test started, by its pid."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def venue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venue]:
    """compose's shape on loopback: Redis, ingest, edge1, edge2, nginx; the edges trust the
    balancer's address through ``DUPLICAST_TRUSTED_PROXIES`` as compose sets it."""
    tmp = tmp_path_factory.mktemp("venue")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")},
        "DUPLICAST_COMMENTATOR_TOKEN": COMMENTATOR,
        "DUPLICAST_OPERATOR_TOKEN": OPERATOR,
        "DUPLICAST_TRUSTED_PROXIES": "127.0.0.1",  # where nginx connects to the edges from
    }
    processes: list[subprocess.Popen[str]] = []
    with RedisServer(tmp / "redis") as redis, contextlib.ExitStack() as stack:
        stack.callback(lambda: [stop(p) for p in reversed(processes)])
        ports = [free_port(), free_port()]
        # the edges get the tokens' proofs only (`duplicast proofs`), as compose gives them
        proofs = {**env, **{k: session_proof(env[k]) for k in TOKENS}}
        processes.append(start_hub("ingest", redis.url, free_port(), env))
        processes += start_hubs(*[("edge", redis.url, port, proofs) for port in ports])
        log = tmp / "session.jsonl"
        log.write_text("".join(SESSION.read_text().splitlines(keepends=True)[:PRELOAD]))
        played = subprocess.run(
            [sys.executable, "-m", "hub", "console", "--redis", redis.url, "replay",
             "--tournament", "ifp-demo", str(log)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert played.returncode == 0, played.stderr
        upstreams = {"edge1:8000": f"127.0.0.1:{ports[0]}", "edge2:8000": f"127.0.0.1:{ports[1]}"}
        with Nginx(tmp / "nginx", upstreams) as lb:
            yield Venue(lb, ports, processes)


def first_deal() -> int:
    first = json.loads(SESSION.read_text().splitlines()[0])
    return int(first["deal"])


@pytest.mark.browser
def test_overlays_draw_through_the_shipped_nginx(browser: Browser, venue: Venue) -> None:
    """Chromium sends ``Origin: http://127.0.0.1:PORT``; nginx must pass the port on in
    ``Host`` (it sent ``$host``: 403 for every overlay socket, blank graphics)."""
    errors: list[str] = []
    page = new_page(browser, 1920, 1080, errors)
    try:
        base = venue.lb.url
        open_overlay(page, base, "leaderboard.html")
        rows = page.locator('[data-testid="team-row"]')
        expect(rows.first).to_be_visible(timeout=5000)
        assert rows.count() >= 2
        assert page.locator('[data-testid="team-row"][data-team="ARG"]').count() == 1
        # as `serve` prints the links: the token after #, which the browser never sends
        open_overlay(page, base, f"table.html?table=1#token={COMMENTATOR}")
        open_overlay(page, base, f"compare.html?deal={first_deal()}&seat=1#token={COMMENTATOR}")
        # another host name for the same balancer: the page's origin is whatever it was opened as
        open_overlay(page, f"http://localhost:{venue.lb.port}", "leaderboard.html")
    finally:
        page.context.close()
    assert errors == []
    assert " 101 " in venue.lb.access_log() and " 403 " not in venue.lb.access_log()
    assert "?token" not in venue.lb.access_log()


async def connect(url: str, source: str, **options: Any) -> tuple[Any, dict[str, Any] | int]:
    """A websocket from ``source`` (the client socket bound to it): ``(socket, hello)``, or
    ``(None, status)`` when the upgrade is refused."""
    try:
        ws = await websockets.connect(
            url, compression=None, local_addr=(source, 0), open_timeout=30, **options
        )
    except websockets.InvalidStatus as exc:
        return None, exc.response.status_code
    first = json.loads(await asyncio.wait_for(ws.recv(), 30))
    return ws, first


async def crowd(url: str, sources: list[str], per_source: int) -> list[tuple[Any, Any]]:
    """``per_source`` clients from each address, at most 64 handshakes at a time."""
    gate = asyncio.Semaphore(64)

    async def one(source: str) -> tuple[Any, Any]:
        async with gate:
            return await connect(url, source)

    return await asyncio.gather(*(one(s) for s in sources for _ in range(per_source)))


async def close_all(results: list[tuple[Any, Any]]) -> None:
    await asyncio.gather(*(ws.close() for ws, _ in results if ws is not None))


def in_thread(coro: Any) -> Any:
    """Run ``coro`` on a loop of its own thread: Playwright's sync API (the browser test of
    this module) leaves an event loop running in the test thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def test_a_thousand_clients_from_ten_addresses_are_all_admitted(venue: Venue) -> None:
    in_thread(thousand(venue))


def test_one_address_gets_its_cap_and_the_operator_still_connects(venue: Venue) -> None:
    """One address fills its cap (forged X-Forwarded-For headers change nothing: nginx writes
    the header, the edges believe only nginx); the next spectator from it is refused, the
    operator and a commentator from the same address are not, nor another address."""
    in_thread(one_address(venue))


async def thousand(venue: Venue) -> None:
    started = time.monotonic()
    results = await crowd(venue.lb.ws_url, SOURCES, 100)
    took = time.monotonic() - started
    try:
        hellos = [r for ws, r in results if ws is not None and r.get("type") == "hello"]
        refused = [r for ws, r in results if ws is None or r.get("type") != "hello"]
        assert len(hellos) == 1000, refused[:5]
        print(f"1000 clients from 10 addresses through nginx admitted in {took:.1f} s")
    finally:
        await close_all(results)


async def one_address(venue: Venue) -> None:
    url = venue.lb.ws_url
    results = await crowd(url, [CAPPED], CAP)
    gate = asyncio.Semaphore(8)

    async def forged(i: int) -> tuple[Any, Any]:
        async with gate:
            headers = {"X-Forwarded-For": f"198.51.100.{i}"}
            return await connect(url, CAPPED, additional_headers=headers)

    extra = await asyncio.gather(*(forged(i) for i in range(16)))
    try:
        admitted = [r for ws, r in results + extra if ws is not None and r["type"] == "hello"]
        assert len(admitted) == CAP
        assert all(ws is None and status == 429 for ws, status in extra), extra
        for token, role in ((OPERATOR, "operator"), (COMMENTATOR, "commentator")):
            ws, hello = await connect(f"{url}?token={session_proof(token)}", CAPPED)
            assert ws is not None and hello["role"] == role, hello
            await ws.close()
        ws, hello = await connect(url, SOURCES[0])
        assert ws is not None and hello["type"] == "hello"
        await ws.close()
    finally:
        await close_all(results + extra)
