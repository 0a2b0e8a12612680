"""What the statistics cost per event (issue #34 item 6: at most 10 % of the ingest's CPU).

Run by hand: ``.venv/bin/python bench/stats_cost.py [--events N] [--every N] [--rounds N]
[--tables N] [--follow N] [--delay S]``.

The projection bench's workload (``projection_bench.py``: the large tournament's bot session, or
``--tables N``, through ``Engine.submit`` with the feed on, the feed part's flush every
``--every`` events; both audiences' ``stats`` followed, and ``--follow N`` live ``dealstats``),
with the statistics' mover (``hub.engine.families.stats.Stats``: ``on``, ``open``, ``flush``,
and the ``Tally`` it makes at the feed's start; with ``--delay S`` the program feed's delayed
engine's too, its statistics followed on the program) timed from inside by the process's CPU
clock: its own CPU per event against the whole run's, in the same run, so the machine's noise
hits both alike (an A/B of two checkouts, ``projection_bench.py --against``, needs a quiet
machine to show a few per cent). The timers' own cost (two clock reads a call) counts as the
statistics'.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import projection_bench  # noqa: E402  (the bench's own folder, as a script)

from hub.engine.families import stats as families_stats  # noqa: E402


def run(session: Any, every: int, follow: int, delay: float | None = None) -> tuple[float, int]:
    """``projection_bench.one_run`` with the feed on, the statistics followed as a desk
    would: both audiences' ``stats``, and the live ``dealstats`` of deals 1..``follow``. With
    ``delay``, a program feed that far behind (one event a second of hub time), its ``stats``
    and ``dealstats`` followed as the live ones, ticked with each flush and run past
    the delay at the end (every record paid twice)."""
    from hub.engine.core import Engine

    projection_bench.clear_caches()
    config = session.config
    if delay is not None:
        config = dataclasses.replace(config, program_delay=delay)
    engine = Engine(config, session.decks)
    engine.start_feed()
    on_air = () if delay is None else ("program",)
    keys = [(a, "stats") for a in ("public", "live", *on_air)]
    keys += [(a, f"dealstats:{d}") for a in ("live", *on_air) for d in range(1, follow + 1)]
    for key in keys:
        engine.projecting.materialize(key)
    changes = 0
    gc.collect()
    started = time.process_time()
    for i, event in enumerate(session.events, 1):
        engine.submit(event, float(i))
        if i % every == 0:
            if delay is not None:
                engine.tick(float(i))
            changes += len(engine.projecting.flush())
    if delay is not None:
        engine.tick(len(session.events) + delay + 1.0)
    changes += len(engine.projecting.flush())
    return time.process_time() - started, changes


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--every", type=int, default=50, help="events between feed flushes")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--tables",
        type=int,
        help="a tournament of this many tables (groups of 6), not the large one",
    )
    parser.add_argument(
        "--follow",
        type=int,
        default=0,
        help="live dealstats topics followed (materialized at the start: deals 1..N); the "
        "stats topics of both audiences always are",
    )
    parser.add_argument(
        "--delay",
        type=float,
        help="a program feed this many seconds behind, its stats and dealstats followed too",
    )
    args = parser.parse_args(argv)
    spent = [0.0]

    def timed(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrap(*a: Any, **k: Any) -> Any:
            started = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                spent[0] += time.process_time() - started

        return wrap

    for name in ("on", "open", "flush"):
        setattr(families_stats.Stats, name, timed(getattr(families_stats.Stats, name)))
    families_stats.Tally.__init__ = timed(families_stats.Tally.__init__)  # type: ignore[method-assign]
    session = projection_bench.session_of(BENCH.parent, args.events, args.seed, args.tables)
    gc.freeze()
    n = len(session.events)
    shares = []
    for _ in range(args.rounds):
        spent[0] = 0.0
        seconds, changes = run(session, args.every, args.follow, args.delay)
        shares.append(spent[0] / seconds)
        print(
            f"{n} events: {1e6 * seconds / n:.1f} us/event with the feed on, the statistics "
            f"{1e6 * spent[0] / n:.2f} us/event ({spent[0] / seconds:.1%}); {changes} changes"
        )
    result = {
        "events": n,
        "tables": len(session.config.tables),
        "shares": [round(s, 4) for s in shares],
        "max_share": max(shares),
    }
    print(f"statistics' share of the per-event CPU: at most {max(shares):.1%} over the rounds")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
