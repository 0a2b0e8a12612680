"""What an edge holds per topic after a played session, in bytes: no process, no RSS (issue #31).

    python bench/edge_held.py --tables 480                        # this tree
    python bench/edge_held.py --tables 480 --against /tmp/base     # and another checkout's hub

``event_cost.py``'s ``edges_kib_per_connection_after`` is the edges' RSS after the load, which
moves with the garbage collector's timing, the allocator's arenas and how much the clients'
queues held at their peak (one run at 480 tables read 431 KiB a connection against 278, the
next 312 against 362). This counts what the edge's store keeps instead, deterministically:
``event_cost``'s tournament and session (same ``plan``: tables, events per table, seed), each
table at its own phase at ``--rate`` events/s, the engine and the ingest's feed (``IngestFeed``)
in one process, a publish every ``--flush`` s of the session's time (the feed writer's 20 ms,
more under load), every frame applied to an ``EdgeFeed`` as an edge applies the feed channel's
(its start from the snapshot hash, the desk's topics asked for and subscribed, a refresh
when a topic is ``HISTORY // 2`` deltas past its snapshot, at once rather than a round trip
later); ``--subscribe-every S``: a new subscriber to each of those topics every S s (phones
and overlays that come and go: each a fresh snapshot where more than ``CATCH_UP_DELTAS``
deltas follow the stored one). Per topic family: topics, deltas held, the held deltas' bytes
(JSON and msgpack, as the edge keeps both) and the snapshots' bytes; ``--json``: all of it to a
file (the totals are printed). Each tree runs in its own process, importing its own ``hub``;
the session is made once, here.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def session(tables: int, seconds: float, warmup: float, rate: float, seed: int) -> dict[str, Any]:
    """``event_cost.plan``'s tournament and events, each event at its time in the session (a
    table's own random phase, then one event every ``1 / rate`` s), in time order."""
    for where in (ROOT, HERE):
        if str(where) not in sys.path:
            sys.path.insert(0, str(where))
    import event_cost

    setup = event_cost.plan(tables, seconds, warmup, rate, seed)
    phases = random.Random(seed)
    timed = []
    for table, events in setup["events"].items():
        phase = phases.random() / rate
        timed += [(phase + k / rate, table, event) for k, event in enumerate(events)]
    timed.sort(key=lambda x: (x[0], x[1]))
    subscribed = {
        table: event_cost.desk_topics(table, events) for table, events in setup["events"].items()
    }
    return {"text": setup["text"], "timed": timed, "subscribed": subscribed}


def replay(plan: dict[str, Any], flush: float, every: float) -> dict[str, Any]:
    """The session through this process's ``hub`` (the tree on ``sys.path`` first): what the
    edge's store holds at the end, per family; ``every`` s (0: never) a new subscriber to each
    of the commentators' topics (a fresh snapshot where more than ``CATCH_UP_DELTAS`` deltas
    follow the stored one)."""
    from hub.engine.core import Engine
    from hub.engine.families import FAMILIES
    from hub.files.config import load_config
    from hub.files.decks import load_decks
    from hub.serve.edge_feed import EdgeFeed
    from hub.serve.feed import HISTORY, IngestFeed, decode_snapshot
    from hub.wire.topics import LIVE, key_for

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "event.toml"
        path.write_text(plan["text"])
        config = load_config(path)
        decks = load_decks(config, tmp, {})
    engine = Engine(config, decks)
    engine.start_feed()
    # The feed's part (``engine.projecting``); an ``--against`` tree from before it: the engine's.
    projecting = getattr(engine, "projecting", None)
    materialize = projecting.materialize if projecting is not None else engine.materialize
    take = projecting.flush if projecting is not None else engine.changes
    feed = IngestFeed(materialize)
    edge = EdgeFeed(live=True)
    refreshed: dict[Any, int] = {}

    def from_hash(keys: list[Any]) -> None:
        """An edge's read of the snapshot hash after the writer put ``keys`` there."""
        for field, data in feed.snapshots(keys).items():
            audience, _, topic = field.partition("|")
            edge.seed((audience, topic), decode_snapshot(data))

    from_hash(engine.topics_named(None))  # the edge's start
    wanted = {
        key_for(LIVE, topic, FAMILIES) for topics in plan["subscribed"].values() for topic in topics
    }
    from_hash(sorted(wanted))  # the commentators' topics asked for, then subscribed
    for key in sorted(wanted):
        edge.catch_up(key, "json", None)
    frames = whole = 0

    def publish(now: float) -> None:
        nonlocal frames, whole
        engine.tick(now)
        changes = take()
        out = [(c.key, feed.publish(c)) for c in changes]
        out += feed.take_made(c.key for c in changes)
        for key, frame in out:
            if frame is None:
                continue
            frames += 1
            whole += frame.full
            if edge.apply(key, frame) is False:
                raise RuntimeError(f"a gap at {key} seq {frame.seq}")
            spaced = frame.seq >= refreshed.get(key, 0) + HISTORY // 4
            if edge.behind(key) > HISTORY // 2 and spaced:  # (the edge's refresh)
                refreshed[key] = frame.seq
                from_hash([key])

    start = 1_000.0
    due, subscribe = flush, every or float("inf")
    for at, _table, event in plan["timed"]:
        while at >= due:
            publish(start + due)
            due += flush
        if at >= subscribe:
            for key in sorted(wanted):
                edge.catch_up(key, "json", None)
            subscribe += every
        engine.submit(event, start + at)
    publish(start + due)
    families: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for key in edge.keys():
        log = edge._logs[key]
        row = families[f"{key[0]}|{key[1].partition(':')[0]}"]
        row["topics"] += 1
        row["deltas"] += len(log.deltas)
        row["delta_bytes"] += sum(len(o.payload) for f in log.deltas for o in f.outs.values())
        if log.base is not None:
            row["snapshot_bytes"] += sum(len(o.payload) for o in log.base.outs.values())
        row["most_deltas"] = max(row["most_deltas"], len(log.deltas))
    total = {k: sum(r[k] for r in families.values()) for k in ("topics", "deltas")}
    for k in ("delta_bytes", "snapshot_bytes"):
        total[k] = sum(r[k] for r in families.values())
    return {
        "frames": frames,
        "whole_frames": whole,
        "total": total,
        "families": {k: dict(v) for k, v in sorted(families.items())},
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_replay":
        tree, plan_path, out = argv[1], Path(argv[2]), Path(argv[5])
        flush, every = float(argv[3]), float(argv[4])
        sys.path[:] = [tree] + [p for p in sys.path if Path(p or ".").resolve() != ROOT]
        plan = json.loads(plan_path.read_text())
        out.write_text(json.dumps(replay(plan, flush, every)) + "\n")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=480)
    parser.add_argument("--seconds", type=float, default=20.0, help="as event_cost's")
    parser.add_argument("--warmup", type=float, default=5.0, help="as event_cost's")
    parser.add_argument("--rate", type=float, default=1.0, help="events/s per table")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--flush", type=float, default=0.02, help="s of session per publish")
    parser.add_argument(
        "--subscribe-every", type=float, default=0.0, help="s between new subscribers (0: none)"
    )
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    trees = {"this": ROOT}
    if args.against is not None:
        trees["against"] = args.against.resolve()
    result: dict[str, Any] = {"tables": args.tables, "seconds": args.warmup + args.seconds}
    result.update(flush=args.flush, subscribe_every=args.subscribe_every)
    with tempfile.TemporaryDirectory(prefix="duplicast-held-") as tmp:
        plan_path = Path(tmp) / "plan.json"
        plan = session(args.tables, args.seconds, args.warmup, args.rate, args.seed)
        plan_path.write_text(json.dumps(plan))
        for name, tree in trees.items():
            out = Path(tmp) / f"{name}.json"
            command = [sys.executable, __file__, "_replay", str(tree), str(plan_path)]
            command += [str(args.flush), str(args.subscribe_every), str(out)]
            subprocess.run(command, check=True, cwd=tree)
            result[name] = json.loads(out.read_text())
            total = result[name]["total"]
            print(
                f"{name}: {result[name]['frames']} frames ({result[name]['whole_frames']} whole),"
                f" {total['topics']} topics, {total['deltas']} deltas held"
                f" {total['delta_bytes'] / 1024:.0f} KiB, snapshots"
                f" {total['snapshot_bytes'] / 1024:.0f} KiB",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
