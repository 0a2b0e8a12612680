"""Desks reconnecting at once through an edge after a played session (issue #30 item 1).

A private Redis, ``duplicast serve --role ingest`` and two edges; the sample's whole session
played by the simulated consoles (``console simulate --pace 0``); then one edge stops and
``--desks`` clients (default 500), each subscribing what a commentator desk may hold (64 topics:
the desk's 30 and comparisons), reconnect at once to the other edge, which holds the session's
history. Each must get every topic's snapshot and stay open ``--hold`` seconds; the result
counts the desks loaded, those closed (by code) and the time until the last one loaded.
Before the fix every desk was closed 4008 "client too slow" within 0.1 s of subscribing.

    .venv/bin/python bench/desk_storm.py                 # ~2-3 min
    .venv/bin/python bench/desk_storm.py --desks 100 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import private_redis  # noqa: E402
import websockets  # noqa: E402

from hub.engine.families import topic_space  # noqa: E402
from hub.files.config import load_config  # noqa: E402

SAMPLE = ROOT / "samples" / "ifp6.toml"
COMMENTATOR = "bench-desk-storm-commentator-token"
BYTES = [0]  # received by every desk until loaded


LISTENING = re.compile(r"duplicast \w+ for .* on http://127\.0\.0\.1:(\d+)")


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    return {
        **env,
        "DUPLICAST_COMMENTATOR_TOKEN": COMMENTATOR,
        "DUPLICAST_LOG": os.environ.get("DESK_STORM_LOG", "WARNING"),
    }


@contextlib.contextmanager
def hub(role: str, redis: str, log: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``duplicast serve --role ROLE`` and its port once it listens; ended by its pid. The
    hub takes a free port itself (``--port 0``) and says which: a port found free here and
    given to it later could be taken meanwhile (a parallel test run binds ports all along)."""
    command = [sys.executable, "-m", "hub", "serve", "--role", role, "--config", str(SAMPLE)]
    command += ["--redis", redis, "--port", "0", "--max-per-address", "100000"]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=ROOT, env=environment(), stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 120
        while not (found := LISTENING.search(log.read_text(errors="replace"))):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{role} did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield proc, int(found.group(1))
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def desk_topics(count: int = 30) -> list[str]:
    """The desk's 30 topics (standings, projection, onair, ticker, clock, suggestions, every
    table, seat and deal); more: comparisons, up to a connection's 64."""
    config = load_config(SAMPLE)
    space = topic_space(config)
    allowed = [t.name for t in space if space.check("commentator", t.name) is None]
    topics = ["standings", "projection", "onair", "ticker", "clock", "suggestions"]
    topics += [f"table:{t}" for t in config.tables] + [f"seat:{s}" for s in range(1, 7)]
    topics += [f"deal:{d}" for d in range(1, config.deals + 1)]
    topics += [t for t in allowed if t.startswith("compare:")]
    return topics[:count]


async def desk(url: str, topics: list[str], hold: float, gate: asyncio.Semaphore) -> Any:
    """One desk: ``(seconds to load, None)`` or ``(None, close code or error)``."""
    started = time.monotonic()
    async with gate:  # handshakes in flight at once
        ws = await websockets.connect(
            url, max_size=None, compression=None, open_timeout=60, ping_interval=None
        )  # (the server pings; a client loop this busy would time its own pings out)
    try:
        await asyncio.wait_for(ws.recv(), 60)  # hello
        await ws.send(json.dumps({"op": "subscribe", "topics": topics}))
        missing = set(topics)
        while missing:
            raw = await asyncio.wait_for(ws.recv(), 60)
            BYTES[0] += len(raw)  # (of the desks that load and those that do not)
            message = json.loads(raw)
            if message.get("type") == "snapshot":
                missing.discard(message.get("topic"))
        loaded = time.monotonic() - started
        with contextlib.suppress(TimeoutError):
            while True:
                await asyncio.wait_for(ws.recv(), hold)
        return loaded, None
    except websockets.ConnectionClosed as exc:
        if exc.rcvd is not None:
            return None, exc.rcvd.code
        return None, f"sent {exc.sent.code}" if exc.sent is not None else "lost"
    except TimeoutError:
        return None, "timeout"
    finally:
        await ws.close()


async def storm(url: str, desks: int, hold: float, count: int) -> dict[str, Any]:
    """``desks`` desks at once from this process: each one's load time or why it failed."""
    topics = desk_topics(count)
    gate = asyncio.Semaphore(100)
    results = await asyncio.gather(*(desk(url, topics, hold, gate) for _ in range(desks)))
    return {"results": results, "bytes": BYTES[0]}


def storm_in_process(url: str, desks: int, hold: float, count: int) -> dict[str, Any]:
    return asyncio.run(storm(url, desks, hold, count))


def storms(url: str, desks: int, hold: float, processes: int, count: int) -> dict[str, Any]:
    """The desks spread over ``processes`` load-generator processes (one Python process
    parsing 500 desks' snapshots is slower than the edge sending them)."""
    started = time.monotonic()
    shares = [desks // processes + (i < desks % processes) for i in range(processes)]
    with ProcessPoolExecutor(processes) as pool:
        more = [[hold] * processes, [count] * processes]
        parts = list(pool.map(storm_in_process, [url] * processes, shares, *more))
    results = [r for part in parts for r in part["results"]]
    loaded = sorted(r[0] for r in results if r[0] is not None)
    closes: dict[str, int] = {}
    for _, code in results:
        if code is not None:
            closes[str(code)] = closes.get(str(code), 0) + 1
    return {
        "desks": desks,
        "topics_each": count,
        "load_processes": processes,
        "loaded": len(loaded),
        "closed": closes,
        "load_p50_s": round(loaded[len(loaded) // 2], 2) if loaded else None,
        "last_loaded_s": round(loaded[-1], 2) if loaded else None,
        "storm_s": round(time.monotonic() - started, 2),
        "mib_per_desk": round(sum(p["bytes"] for p in parts) / desks / 2**20, 2),
    }


def run(args: argparse.Namespace, redis: str, work: Path) -> dict[str, Any]:
    with contextlib.ExitStack() as stack:
        stack.enter_context(hub("ingest", redis, work / "ingest.log"))
        _, edge1_port = stack.enter_context(hub("edge", redis, work / "edge1.log"))
        edge2, _ = stack.enter_context(hub("edge", redis, work / "edge2.log"))
        started = time.monotonic()
        # (the hubs are up: a minute without an answer is a loaded machine, not a hub missing)
        simulate = subprocess.run(
            [sys.executable, "-m", "hub", "console", "simulate", "--config", str(SAMPLE),
             "--redis", redis, "--pace", "0", "--seed", "30", "--no-outbox",
             "--no-hub-timeout", "60"],
            cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        if simulate.returncode != 0:
            raise RuntimeError(f"console simulate failed: {simulate.stderr[-2000:]}")
        played = time.monotonic() - started
        stop(edge2)  # its desks reconnect to the other edge, all at once
        url = f"ws://127.0.0.1:{edge1_port}/ws?token={COMMENTATOR}"
        result = storms(url, args.desks, args.hold, args.processes, args.topics)
    if result["loaded"] < args.desks:  # what the edge said
        print((work / "edge1.log").read_text(errors="replace")[-3000:], file=sys.stderr)
    return {"session_s": round(played, 1), **result}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--desks", type=int, default=500)
    parser.add_argument("--topics", type=int, default=30, help="per desk (30: the desk's)")
    parser.add_argument("--processes", type=int, default=4, help="load-generator processes")
    parser.add_argument("--hold", type=float, default=2.0, help="seconds each stays open")
    parser.add_argument("--redis", default=None, help="a Redis URL (default: a private one)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="desk-storm-") as tmp:
        work = Path(tmp)
        if args.redis:
            result = run(args, args.redis, work)
        else:
            proc, url = private_redis.start(work)
            try:
                result = run(args, url, work)
            finally:
                proc.terminate()
                proc.wait(10)
    print(json.dumps(result), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["loaded"] == args.desks else 1


if __name__ == "__main__":
    sys.exit(main())
