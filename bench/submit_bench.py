"""Decode + ``Engine.submit`` throughput, this checkout against another, in the same run.

Run by hand: ``.venv/bin/python bench/submit_bench.py --against /tmp/base [--events 20000 60000]``
where ``/tmp/base`` is an export of the commit to compare with (``git archive HEAD | tar -x -C
/tmp/base``). Timing figures on a shared machine are noisy, so each tree is measured in its own
child process, the trees alternating round after round, and each figure is the best of its
rounds (noise only adds; the medians are printed too: on a shared machine one lucky round can
decide a best). The workload is ``ingest_bench.large_session`` (bot-played hands of a
large tournament, msgpack bytes), a fresh engine per run, no feed: what ``hub.roles.ingest`` pays
per
event before I/O. Every child also prints a digest of every outcome (ack, record, refusal code
and message): two trees that behave alike print the same digest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def measure(tree: Path, events: int, repeat: int) -> dict[str, Any]:
    """In a child: decode + submit ``events`` events of ``tree``'s code, best of ``repeat``."""
    sys.path.insert(0, str(tree / "bench"))
    sys.path.insert(0, str(tree))
    from ingest_bench import large_session

    from hub.engine.core import Engine

    try:
        from hub.wire import codec
    except ImportError:  # a tree from before the regroup (issue #21)
        from hub import codec  # type: ignore[attr-defined,no-redef]

    session = large_session(events, 7, tid="submit-bench")
    packed = [codec.pack(e) for e in session.events]
    best_wall = best_cpu = float("inf")
    outcomes: list[Any] = []
    for _ in range(repeat):
        engine = Engine(session.config, session.decks, release_delay=0.0)
        # The ingest's decoder (read_event since issue #31, unpack_event since #21; unpack before).
        try:
            from hub.roles.ingest_decide import read_event as unpack
        except ImportError:
            unpack = getattr(codec, "unpack_event", codec.unpack)
        submit = engine.submit
        outcomes = []
        keep = outcomes.append
        w0, c0 = time.perf_counter(), time.process_time()
        for data in packed:
            keep(submit(unpack(data), 0.0))
        best_wall = min(best_wall, time.perf_counter() - w0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    digest = hashlib.sha256()
    for out in outcomes:
        digest.update(codec.pack([out.ack, out.record, out.code, out.message]))
    return {
        "events": len(packed),
        "wall_events_per_s": round(len(packed) / best_wall),
        "cpu_events_per_s": round(len(packed) / best_cpu),
        "accepted": sum(1 for o in outcomes if o.ok),
        "digest": digest.hexdigest()[:16],
    }


def child(tree: Path, events: int, repeat: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", str(tree), "--events", str(events)]
    command += ["--repeat", str(repeat)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    parser.add_argument("--events", type=int, nargs="+", default=[20_000, 60_000])
    parser.add_argument("--rounds", type=int, default=3, help="child runs per tree and size")
    parser.add_argument("--repeat", type=int, default=2, help="timed passes in each child")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child.resolve(), args.events[0], args.repeat)))
        return
    trees = {"this": ROOT}
    if args.against is not None:
        trees["against"] = args.against.resolve()
    for events in args.events:
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        for r in range(args.rounds):
            names = list(trees) if r % 2 == 0 else list(reversed(trees))
            for name in names:
                runs[name].append(child(trees[name], events, args.repeat))
        best, middle = {}, {}
        for name, results in runs.items():
            wall = [x["wall_events_per_s"] for x in results]
            cpu = [x["cpu_events_per_s"] for x in results]
            digests = {x["digest"] for x in results}
            best[name] = (max(wall), max(cpu))
            middle[name] = statistics.median(cpu)
            print(
                f"{events} events  {name:8} {trees[name]}: best {max(wall)}/s wall,"
                f" {max(cpu)}/s CPU, median {middle[name]:.0f}/s CPU (rounds wall {wall}),"
                f" accepted {results[0]['accepted']}, digest {' '.join(sorted(digests))}"
            )
        if "against" in best:
            same = {x["digest"] for x in runs["this"]} == {x["digest"] for x in runs["against"]}
            print(
                f"{events} events  ratio this/against: {best['this'][0] / best['against'][0]:.2f}"
                f" wall, {best['this'][1] / best['against'][1]:.2f} CPU (best rounds),"
                f" {middle['this'] / middle['against']:.2f} CPU (median rounds);"
                f" outcomes {'identical' if same else 'DIFFER'}"
            )


if __name__ == "__main__":
    main()
