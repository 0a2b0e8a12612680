"""What the feed projections cost per event: ``Engine.submit`` with the feed on and off.

Run by hand: ``.venv/bin/python bench/projection_bench.py [--events N] [--every N] [--profile]``.

One bot-played session of the large tournament (``ingest_bench.large_session``) goes through
``Engine.submit``, a fresh engine each run, twice per round: with ``start_feed()`` called first
and the feed part's flush every ``--every`` events (a 20 ms flush under load asks every ~50 events),
and without the feed. Rounds alternate the two, so the machine's noise hits both alike; the
best round of each is reported, and the projections' share of the per-event cost is
``1 - off / on`` (in time per event). The equity caches are emptied before each run, so every
run pays for the equity it shows. Times are the process's CPU time (the machine is shared).
``--root`` imports ``hub`` from another checkout (an older commit, for a before/after in the
same run); ``--profile`` prints a cProfile of one feed-on run; ``--publish`` flushes through
the feed writer (``FeedPublisher.publish`` on a memory bus), so the frames' encoding counts.

``--schedule FILE`` replays what a running ingest did instead (``ingest_load.py --feed inline
--schedule-out FILE``): its session, its events in the order it applied them, a flush
after the same events as its feed publishes. Which tables one flush covers follows the
ingest's timing (its intake, its consoles' acks); replayed, two checkouts do the same work.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import io
import json
import math
import pstats
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

BENCH = Path(__file__).resolve().parent


def ingest_bench(root: Path) -> ModuleType:
    """The ingest bench of ``root`` (its workloads), which imports ``hub`` from ``root``."""
    sys.path.insert(0, str(root))
    spec = importlib.util.spec_from_file_location("ingest_bench", root / "bench/ingest_bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def feed_calls(engine: Any) -> tuple[Callable[[], list[Any]], Callable[[Any], Any]]:
    """The flush and the topic read of ``engine``'s feed: its feed part's (``engine.projecting``:
    ``flush``, ``materialize``). An older checkout run through ``--root`` or ``--against``
    may have only the engine's ``changes`` and ``materialize`` (before the part, or when the
    engine handed them on to it): those then, so this bench still measures it there."""
    part = getattr(engine, "projecting", None)
    if part is None:
        return engine.changes, engine.materialize
    return part.flush, part.materialize


def session_of(root: Path, events: int, seed: int, tables: int | None) -> Any:
    """The large tournament's session (``ingest_bench.large_session``), or one of ``tables``
    tables (groups of 6) cut at ``events`` events: the tables take turns, so a flush covers
    many of them, as at an event."""
    bench = ingest_bench(root)
    if tables is None:
        return bench.large_session(events, seed)
    groups = max(1, tables // 6)
    deals = max(1, math.ceil(events / (21 * 6 * groups)))
    while True:
        config = bench.large_config(f"bench-{tables}", groups, deals)
        decks = bench.seeded_deck_orders("bench", deals)
        played = list(bench.simulate_session(config, decks, random.Random(seed), mean_gap=1.0))
        if len(played) >= events:
            return bench.Session(config, decks, played[:events])
        deals += max(1, deals // 10)


def clear_caches() -> None:
    """Forget the equity figures of earlier runs (a run pays for the equity it shows)."""
    from hub.engine import equities

    equities.figures.cache_clear()
    runouts = getattr(equities, "_runouts", None)
    if runouts is not None:
        runouts.cache_clear()


class Schedule(NamedTuple):
    """A running ingest's order of events, and after how many of them it flushed the feed."""

    events: list[dict[str, Any]]
    flushes: frozenset[int]


def load_schedule(path: Path, root: Path) -> tuple[Any, Schedule]:
    """The session of a recorded schedule (``ingest_load.py --schedule-out``) and its order."""
    recorded = json.loads(path.read_text())
    session = ingest_bench(root).large_session(recorded["events"], recorded["seed"])
    by_seq = {(e["console"], e["seq"]): e for e in session.events}
    events = [by_seq[(console, seq)] for console, seq in recorded["applied"]]
    return session, Schedule(events, frozenset(recorded["flushes"]))


def one_run(
    session: Any,
    *,
    feed: bool,
    every: int,
    warm: bool,
    schedule: Schedule | None = None,
    publish: bool = False,
    follow: bool = False,
    desk: bool = False,
) -> tuple[float, int]:
    """Seconds to submit the session's events (and flush the feed), and how many changes;
    with a ``schedule``, its events in its order, flushed where it was; with ``publish``,
    each flush made by the feed writer (framed and encoded, ``_publishing``); with
    ``follow``, the live ``compare:{d}:1`` of every deal asked for first (the desks of
    ``event_cost.py`` follow one seat's traveller of each deal); with ``desk``, every topic
    ``event_cost.py``'s commentators hold made first (``projection``, ``standings``, every
    ``table:T`` and ``console:T``, every ``deal:D`` and ``compare:D:1``): the ingest's
    work per event as on the real processes."""
    from hub.engine.core import Engine

    if not warm:
        clear_caches()
    if schedule is None:
        engine = Engine(session.config, session.decks)
    else:  # as the recording ingest (``ingest_load.py``) was built
        engine = Engine(session.config, session.decks, release_delay=0.0)
    flush, materialize = feed_calls(engine)
    if feed:
        engine.start_feed()
        for deal in range(1, session.config.deals + 1) if follow or desk else ():
            materialize(("live", f"compare:{deal}:1"))
        for topic in desk_topics(session.config) if desk else ():
            materialize(("live", topic))
    events = session.events if schedule is None else schedule.events
    flushes = schedule.flushes if schedule is not None else range(every, len(events) + 1, every)
    flush_after = [feed and i in flushes for i in range(len(events) + 1)]
    changes = 0
    gc.collect()  # the last run's engine collected now, not in this run's time
    if feed and publish:
        return _publishing(engine, events, flush_after)
    started = time.process_time()
    for i, event in enumerate(events, 1):
        engine.submit(event, float(i))
        if flush_after[i]:
            changes += len(flush())
    if feed:
        changes += len(flush())
    return time.process_time() - started, changes


def desk_topics(config: Any) -> list[str]:
    """The live topics the commentators of ``event_cost.py`` hold (``event_cost.desk_topics``,
    one desk per table): ``compare:D:1`` is ``--follow``'s."""
    topics = ["projection", "standings"]
    topics += [f"{family}:{table}" for table in config.tables for family in ("table", "console")]
    return topics + [f"deal:{deal}" for deal in range(1, config.deals + 1)]


def _publishing(engine: Any, events: list[Any], flush_after: list[bool]) -> tuple[float, int]:
    """``one_run``'s loop with each flush made by the feed writer, as the ingest makes it
    (``FeedPublisher.publish`` on a memory bus with no subscriber: the engine's changes, each
    framed and encoded once, the seqs due, one ``publish_many``); seconds and frames."""
    import asyncio

    from hub.bus.memory import MemoryBus
    from hub.roles.publisher import FeedPublisher

    frames = 0

    def count(key: Any, frame: Any) -> None:
        nonlocal frames
        frames += 1

    publisher = FeedPublisher(MemoryBus(), engine, on_frame=count)

    async def run() -> float:
        started = time.process_time()
        for i, event in enumerate(events, 1):
            engine.submit(event, float(i))
            if flush_after[i]:
                await publisher.publish()
        await publisher.publish()
        return time.process_time() - started

    return asyncio.run(run()), frames


def against(args: argparse.Namespace, argv: list[str]) -> None:
    """Each round runs this bench once per checkout (``--root`` and ``--against``), one child
    process each, alternating: the machine's noise hits both alike; the best of each shows."""
    roots = [args.root.resolve(), args.against.resolve()]
    passed = [a for a in argv if a != "--profile"]
    best: dict[Path, dict[str, Any]] = {}
    seen: dict[Path, dict[str, list[float]]] = {r: {"on": [], "off": []} for r in roots}
    for _ in range(args.rounds):
        for root in roots:
            cmd = [sys.executable, __file__, *passed, "--rounds", "1", "--root", str(root)]
            cmd.append("--child")
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            got = json.loads(out.splitlines()[-1])
            print(f"  {root}: feed on {got['feed_on_us']} us/event, off {got['feed_off_us']}")
            seen[root]["on"].append(got["feed_on_us"])
            seen[root]["off"].append(got["feed_off_us"])
            old = best.get(root)
            if old is None:
                best[root] = got
            else:
                old["feed_on_us"] = min(old["feed_on_us"], got["feed_on_us"])
                old["feed_off_us"] = min(old["feed_off_us"], got["feed_off_us"])
    for root, got in best.items():
        on, off = got["feed_on_us"], got["feed_off_us"]
        print(
            f"{root}: feed on {1e6 / on:,.0f} ev/s ({on:.1f} us/event), feed off "
            f"{1e6 / off:,.0f} ev/s ({off:.1f} us/event); projections {on - off:.1f} us/event, "
            f"{1 - off / on:.0%} of the per-event cost"
        )
    new, old = (best[r] for r in roots)
    faster = old["feed_on_us"] / new["feed_on_us"]
    cheaper = (old["feed_on_us"] - old["feed_off_us"]) / (new["feed_on_us"] - new["feed_off_us"])
    print(
        f"feed on: {faster:.2f}x the events/s of {roots[1]}; projections alone {cheaper:.2f}x "
        "cheaper per event"
    )
    mid = {r: {k: statistics.median(v) for k, v in seen[r].items()} for r in roots}
    print(
        f"medians: feed on {mid[roots[1]]['on'] / mid[roots[0]]['on']:.2f}x, feed off "
        f"{mid[roots[1]]['off'] / mid[roots[0]]['off']:.2f}x the events/s of {roots[1]} "
        "(a busy machine: the medians say more than the best)"
    )


def main(argv: list[str] | None = None, *, freeze: bool = True) -> dict[str, Any]:
    """Run the bench (``freeze``: move everything made so far, the session included, out of
    the garbage collector's reach, as ``gc.freeze`` does for the whole process)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--every", type=int, default=50, help="events between feed flushes")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--tables", type=int, help="a tournament of this many tables (groups of 6), not ~48"
    )
    parser.add_argument("--root", type=Path, default=BENCH.parent, help="checkout to import")
    parser.add_argument(
        "--warm-equity",
        action="store_true",
        help="keep the equity figures of a first run: measure the projections without the "
        "equity maths (hub.domain.equity) they show",
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="another checkout (e.g. the previous commit): interleaved runs of both, a ratio",
    )
    parser.add_argument(
        "--gc-threshold",
        type=int,
        help="gc.set_threshold(N, 100, 100) for the runs (what a projection process might use)",
    )
    parser.add_argument(
        "--schedule",
        type=Path,
        help="replay a running ingest's order and flushes (ingest_load.py --schedule-out)",
    )
    parser.add_argument(
        "--publish",
        action="store_true",
        help="flush through the feed writer (FeedPublisher.publish on a memory bus): the "
        "frames' encoding counted too",
    )
    parser.add_argument(
        "--follow",
        action="store_true",
        help="ask for the live compare:{d}:1 of every deal first (a desk per deal follows"
        " one seat's traveller; the others are made on demand, issue #34)",
    )
    parser.add_argument(
        "--desk",
        action="store_true",
        help="make every topic event_cost.py's commentators hold first (projection, standings,"
        " table:T, console:T, deal:D, compare:D:1): the real ingest's work per event",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args(argv)
    if args.against is not None and not args.child:
        against(args, sys.argv[1:] if argv is None else argv)
        return {}
    schedule = None
    if args.schedule is not None:
        session, schedule = load_schedule(args.schedule.resolve(), args.root.resolve())
    else:
        session = session_of(args.root.resolve(), args.events, args.seed, args.tables)
    if freeze:  # the session's events are the bench's, not the engine's: out of every collection
        gc.freeze()
    if args.gc_threshold:
        gc.set_threshold(args.gc_threshold, 100, 100)
    elif schedule is not None:  # as the recording ingest ran (``hub.serve.http.tune_gc``)
        gc.set_threshold(50_000, 20, 100)
    n = len(session.events)
    best = {True: float("inf"), False: float("inf")}
    changes = 0
    if args.warm_equity:
        one_run(session, feed=True, every=args.every, warm=False, schedule=schedule)
    for _ in range(args.rounds):
        for feed in (True, False):
            seconds, count = one_run(
                session,
                feed=feed,
                every=args.every,
                warm=args.warm_equity,
                schedule=schedule,
                publish=args.publish,
                follow=args.follow,
                desk=args.desk,
            )
            best[feed] = min(best[feed], seconds)
            changes = max(changes, count)
    on, off = n / best[True], n / best[False]
    result = {
        "root": str(args.root),
        "events": n,
        "tables": len(session.config.tables),
        "every": args.every if schedule is None else None,
        "schedule": None if args.schedule is None else str(args.schedule),
        "feed_on_eps": round(on),
        "feed_off_eps": round(off),
        "feed_on_us": round(1e6 / on, 1),
        "feed_off_us": round(1e6 / off, 1),
        "projection_share": round(1 - best[False] / best[True], 3),
        "changes": changes,
        "warm_equity": args.warm_equity,
        "publish": args.publish,
        "follow": args.follow,
    }
    if args.child:  # run by ``against``: the figures as JSON
        print(json.dumps(result))
        return result
    print(
        f"{args.root}: {n} events, "
        + (f"changes() every {args.every}: " if schedule is None else f"{args.schedule}: ")
        + f"feed on {on:,.0f} ev/s ({1e6 / on:.1f} us/event), "
        + f"feed off {off:,.0f} ev/s ({1e6 / off:.1f} us/event); "
        + f"projections {result['projection_share']:.0%} of the per-event cost "
        + f"({changes} {'frames' if args.publish else 'topic changes'}"
        + f"{', equity caches warm' if args.warm_equity else ''})"
    )
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        one_run(
            session,
            feed=True,
            every=args.every,
            warm=args.warm_equity,
            schedule=schedule,
            publish=args.publish,
            follow=args.follow,
            desk=args.desk,
        )
        profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
        stats.print_stats(args.top)
        out.write("\n")
        stats.sort_stats("tottime").print_stats(args.top)
        print(out.getvalue())
    return result


if __name__ == "__main__":
    main()
