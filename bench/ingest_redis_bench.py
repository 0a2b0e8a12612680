"""The ingest alone on Redis: consoles in another process, as at a venue.

`ingest_bench.py` measures the whole pipeline in one process, console clients included, so its
Redis figure is mostly the clients' cost. Here the consoles run as a subprocess
(`python -m hub console replay`), and this process runs only the `Ingest`: the figure is what
one ingest process sustains on Redis: decode, validate, apply, journal (XADD), acks, topic
snapshots and feed updates.

Baseline, measured in the same run on the same events: msgpack decode + `Engine.submit` in a
plain loop (no I/O, no payloads). The ratio says how much of the engine's speed survives the
I/O and the feed.

    .venv/bin/python bench/ingest_redis_bench.py --sessions 4 [--redis URL] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import private_redis  # noqa: E402
from ingest_bench import redis_cleanup  # noqa: E402

from hub.bus.redis import RedisBus  # noqa: E402
from hub.engine.core import Engine  # noqa: E402
from hub.roles.ingest import Ingest  # noqa: E402
from hub.wire import codec  # noqa: E402
from tests.hubharness import session_events, unique_tournament  # noqa: E402


def engine_baseline(config: Any, decks: Any, events: list[dict[str, Any]]) -> float:
    """Events per second of decode + submit, best of 3."""
    packed = [codec.pack(e) for e in events]
    best = 0.0
    for _ in range(3):
        engine = Engine(config, decks, release_delay=0.0)
        t0 = time.perf_counter()
        for data in packed:
            engine.submit(codec.unpack(data), time.time())
        best = max(best, len(packed) / (time.perf_counter() - t0))
    return best


async def one_session(url: str, timeout: float) -> dict[str, Any]:
    config, decks = unique_tournament("rbench")
    events = session_events(config.id)
    baseline = engine_baseline(config, decks, events)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as log:
        for event in events:
            log.write(json.dumps(event) + "\n")
    bus = RedisBus(url)
    await bus.connect()
    ingest = Ingest(bus, Engine(config, decks, release_delay=0.0))
    await ingest.start()
    command = [sys.executable, "-m", "hub", "console", "--redis", url, "replay"]
    consoles = subprocess.Popen(
        [*command, "--tournament", config.id, log.name],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        state = ingest.engine.state
        async with asyncio.timeout(timeout):
            while state.events_applied == 0:
                await asyncio.sleep(0.001)
            w0, c0, n0 = time.perf_counter(), time.process_time(), state.events_applied
            while state.events_applied < len(events):
                await asyncio.sleep(0.002)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            output, _ = await asyncio.to_thread(consoles.communicate)
    finally:
        if consoles.poll() is None:
            consoles.kill()
            consoles.wait()
        await ingest.stop()
        await bus.close()
        redis_cleanup(url)(config.id)
        os.unlink(log.name)
    rate = (len(events) - n0) / wall
    return {
        "events": len(events),
        "events_per_s": round(rate),
        "ingest_cpu_share": round(cpu / wall, 3),
        "baseline_events_per_s": round(baseline),
        "ratio_to_baseline": round(rate / baseline, 3),
        "consoles": output.strip().splitlines()[-1] if output.strip() else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--redis", help="a Redis to use (default: a private one started here)")
    parser.add_argument("--timeout", type=float, default=120.0, help="per session, seconds")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    with private_redis.redis_url(args.redis) as url:
        runs = [asyncio.run(one_session(url, args.timeout)) for _ in range(args.sessions)]
    rates = sorted(r["events_per_s"] for r in runs)
    summary = {
        "runs": runs,
        "median_events_per_s": rates[len(rates) // 2],
        "median_ratio_to_baseline": sorted(r["ratio_to_baseline"] for r in runs)[len(runs) // 2],
    }
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
