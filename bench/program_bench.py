"""What the program feed (``[broadcast] delay``, ``hub.engine.program``) costs: the
projection bench's workload with and without it.

Run by hand: ``.venv/bin/python bench/program_bench.py [--events N] [--delay S] [--rounds N]``.

One bot-played session of the large tournament (``ingest_bench.large_session``) goes through
``Engine.submit`` at one event a second of hub time, the feed on, ``tick`` and ``changes()``
every ``--every`` events (as the feed's writer does, its tick every 0.25 s), a fresh engine
each run: without a program feed, and with one ``--delay`` seconds behind. Rounds alternate
the two (the machine's noise hits both alike); the best of each is reported, in CPU time.
The run with the program ends with the clock moved past the delay, so it has paid for every
record twice. Memory: what the engine holds at the end of a run with the delay not yet
passed (``tracemalloc``, a run of its own), with and without the program.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import time
import tracemalloc
from typing import Any

from projection_bench import BENCH, clear_caches, ingest_bench


def one_run(session: Any, *, delay: float | None, every: int, drain: bool = True) -> Any:
    """(seconds, changes, engine) of one run; ``delay`` None: no program feed."""
    from hub.engine.core import Engine

    clear_caches()
    config = dataclasses.replace(session.config, program_delay=delay)
    engine = Engine(config, session.decks)
    engine.start_feed()
    changes = 0
    started = time.process_time()
    for i, event in enumerate(session.events, 1):
        engine.submit(event, float(i))
        if i % every == 0:
            engine.tick(float(i))
            changes += len(engine.changes())
    if drain and delay is not None:
        engine.tick(len(session.events) + delay + 1.0)
    changes += len(engine.changes())
    return time.process_time() - started, changes, engine


def held_bytes(session: Any, delay: float | None, every: int) -> int:
    gc.collect()
    tracemalloc.start()
    _, _, engine = one_run(session, delay=delay, every=every, drain=False)
    gc.collect()
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del engine
    return size


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--every", type=int, default=50, help="events between tick+changes()")
    parser.add_argument("--delay", type=float, default=1200.0, help="program delay (s)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--no-memory", action="store_true")
    args = parser.parse_args(argv)
    session = ingest_bench(BENCH.parent).large_session(args.events, args.seed)
    gc.freeze()
    n = len(session.events)
    best: dict[str, float] = {"off": float("inf"), "on": float("inf")}
    counts: dict[str, int] = {}
    for _ in range(args.rounds):
        for name, delay in (("off", None), ("on", args.delay)):
            seconds, count, _ = one_run(session, delay=delay, every=args.every)
            best[name] = min(best[name], seconds)
            counts[name] = count
    result: dict[str, Any] = {
        "events": n,
        "delay": args.delay,
        "without_eps": round(n / best["off"]),
        "with_eps": round(n / best["on"]),
        "without_us": round(1e6 * best["off"] / n, 1),
        "with_us": round(1e6 * best["on"] / n, 1),
        "ratio": round(best["off"] / best["on"], 3),
        "changes": counts,
    }
    if not args.no_memory:
        result["held_mb_without"] = round(held_bytes(session, None, args.every) / 2**20, 1)
        result["held_mb_with"] = round(held_bytes(session, args.delay, args.every) / 2**20, 1)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
