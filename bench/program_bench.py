"""What the program feed (``[broadcast] delay``, ``hub.engine.program``) costs: the
projection bench's workload with and without it.

Run by hand: ``.venv/bin/python bench/program_bench.py [--events N] [--delay S] [--rounds N]
[--outputs N]``.

One bot-played session of the large tournament (``ingest_bench.large_session``) goes through
``Engine.submit`` at one event a second of hub time, the feed on, ``tick`` and the feed part's
``flush`` every ``--every`` events (as the feed's writer does, its tick every 0.25 s), a fresh
engine each run: without a program feed, and with one ``--delay`` seconds behind. Rounds alternate
the two (the machine's noise hits both alike); the best of each is reported, in CPU time.
The run with the program ends with the clock moved past the delay, so it has paid for every
record twice. Memory: what the engine holds at the end of a run with the delay not yet
passed (``tracemalloc``, a run of its own), with and without the program.

``--outputs N`` (default 1) runs N program outputs (``[broadcast.outputs]``): the default one
``--delay`` behind and N - 1 more, each a different delay (``delay * k / N``, as a venue's
screens run shorter than the stream), so each is a delayed engine of its own; the engine
snapshot's size (msgpack) is reported too, as the ingest writes it.
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


def outputs_of(delay: float, n: int) -> dict[str, float]:
    """The N - 1 outputs beside the default one, each its own delay below ``delay``."""
    return {f"out{k}": delay * k / n for k in range(1, n)}


def one_run(
    session: Any, *, delay: float | None, every: int, drain: bool = True, outputs: int = 1
) -> Any:
    """(seconds, changes, engine) of one run; ``delay`` None: no program feed."""
    from hub.engine.core import Engine

    clear_caches()
    more = {} if delay is None else outputs_of(delay, outputs)
    config = dataclasses.replace(session.config, program_delay=delay, program_outputs=more)
    engine = Engine(config, session.decks)
    engine.start_feed()
    changes = 0
    started = time.process_time()
    for i, event in enumerate(session.events, 1):
        engine.submit(event, float(i))
        if i % every == 0:
            engine.tick(float(i))
            changes += len(engine.projecting.flush())
    if drain and delay is not None:
        engine.tick(len(session.events) + delay + 1.0)
    changes += len(engine.projecting.flush())
    return time.process_time() - started, changes, engine


def held_bytes(session: Any, delay: float | None, every: int, outputs: int = 1) -> int:
    gc.collect()
    tracemalloc.start()
    _, _, engine = one_run(session, delay=delay, every=every, drain=False, outputs=outputs)
    gc.collect()
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del engine
    return size


def snapshot_bytes(session: Any, delay: float | None, every: int, outputs: int = 1) -> int:
    """The engine snapshot's size as the ingest stores it, the delay not yet passed."""
    from hub.wire import codec

    _, _, engine = one_run(session, delay=delay, every=every, drain=False, outputs=outputs)
    return len(codec.pack(engine.snapshot()))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--every", type=int, default=50, help="events between tick+flush")
    parser.add_argument("--delay", type=float, default=1200.0, help="program delay (s)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--outputs", type=int, default=1, help="program outputs (delays)")
    parser.add_argument("--no-memory", action="store_true")
    args = parser.parse_args(argv)
    session = ingest_bench(BENCH.parent).large_session(args.events, args.seed)
    gc.freeze()
    n = len(session.events)
    best: dict[str, float] = {"off": float("inf"), "on": float("inf")}
    counts: dict[str, int] = {}
    for _ in range(args.rounds):
        for name, delay in (("off", None), ("on", args.delay)):
            seconds, count, _ = one_run(
                session, delay=delay, every=args.every, outputs=args.outputs
            )
            best[name] = min(best[name], seconds)
            counts[name] = count
    result: dict[str, Any] = {
        "events": n,
        "delay": args.delay,
        "outputs": args.outputs,
        "without_eps": round(n / best["off"]),
        "with_eps": round(n / best["on"]),
        "without_us": round(1e6 * best["off"] / n, 1),
        "with_us": round(1e6 * best["on"] / n, 1),
        "ratio": round(best["off"] / best["on"], 3),
        "changes": counts,
    }
    if not args.no_memory:
        result["held_mb_without"] = round(held_bytes(session, None, args.every) / 2**20, 1)
        with_program = held_bytes(session, args.delay, args.every, args.outputs)
        result["held_mb_with"] = round(with_program / 2**20, 1)
        for name, delay in (("without", None), ("with", args.delay)):
            size = snapshot_bytes(session, delay, args.every, args.outputs)
            result[f"snapshot_mb_{name}"] = round(size / 2**20, 2)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
