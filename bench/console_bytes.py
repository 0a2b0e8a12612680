"""What the ``console:{t}`` topics weigh at an edge, counted (issue #31: the pad's memory).

    python bench/console_bytes.py                         # ifp6, rps-poker, mcr in this tree
    python bench/console_bytes.py --tree /tmp/base ifp6    # another checkout's hub (main, say)

A sample session (``samples/<name>.toml`` and ``<name>-session.jsonl``) is played through the
engine (``Engine.submit`` then its feed part's ``flush``, as the ingest does); every
``console:{t}`` topic is opened before the first event, and its snapshot and deltas are handed
to an edge's store (``hub.serve.edge_feed.EdgeFeed``, which keeps each topic's last ``HISTORY``
deltas for catch-up). Reported per sample: the mean JSON bytes of a console delta and of its
``/pad`` operations, and the bytes an edge holds per console topic (every wire format's frames)
at the subscribe, before any event, and after the session. Counts, not timings: the same on any
machine, so two trees compare exactly where ``event_cost.py``'s RSS figures scatter.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def held(edge: Any, keys: list[tuple[str, str]]) -> int:
    """The bytes of the frames ``edge`` holds for ``keys`` (snapshot and deltas, every format)."""
    total = 0
    for key in keys:
        log = edge._logs[key]
        for frame in [log.base, *log.deltas]:
            total += sum(len(out.payload) for out in frame.outs.values())
    return total


def count(tree: Path, sample: str) -> dict[str, Any]:
    from hub.engine.core import Engine
    from hub.files.config import load_config
    from hub.files.decks import load_decks
    from hub.serve.edge_feed import EdgeFeed
    from hub.serve.feed import Frame

    config = load_config(tree / "samples" / f"{sample}.toml")
    engine = Engine(config, load_decks(config, tree / "samples", dict(os.environ)))
    engine.start_feed()
    # The feed's part (``engine.projecting``); a ``--tree`` from before it: the engine's own.
    part = getattr(engine, "projecting", None)
    flush = engine.changes if part is None else part.flush
    materialize = engine.materialize if part is None else part.materialize
    keys = [("live", f"console:{t}") for t in config.tables]
    edge, seqs = EdgeFeed(), dict.fromkeys(keys, 1)
    for key in keys:
        payload = materialize(key)
        assert payload is not None, key
        edge.seed(key, Frame.snapshot(key[1], 1, payload))
    flush()
    at_subscribe = held(edge, keys)
    deltas = delta_bytes = pad_bytes = 0
    lines = (tree / "samples" / f"{sample}-session.jsonl").read_text().splitlines()
    for event in (json.loads(x) for x in lines if x.strip()):
        engine.submit(event, float(event.get("ts", 0.0)))
        for change in flush():
            if change.key not in seqs or change.patch is None:
                continue
            seqs[change.key] += 1
            frame = Frame.delta(change.key[1], seqs[change.key], change.patch)
            assert edge.apply(change.key, frame), change.key
            deltas += 1
            delta_bytes += len(frame.outs["json"].payload)
            pad = [op for op in change.patch if op["path"].startswith("/pad")]
            pad_bytes += len(json.dumps(pad, separators=(",", ":"))) if pad else 0
    n = len(keys)
    return {
        "sample": sample,
        "tables": n,
        "console_deltas": deltas,
        "delta_json_bytes": round(delta_bytes / max(deltas, 1)),
        "pad_json_bytes_per_delta": round(pad_bytes / max(deltas, 1)),
        "held_per_topic_at_subscribe": round(at_subscribe / n),
        "held_per_topic_after": round(held(edge, keys) / n),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("samples", nargs="*", default=["ifp6", "rps-poker", "mcr"])
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose hub counts")
    parser.add_argument("--json", action="store_true", help="one JSON line per sample")
    args = parser.parse_args(argv)
    tree = args.tree.resolve()
    sys.path.insert(0, str(tree))
    for sample in args.samples:
        r = count(tree, sample)
        if args.json:
            print(json.dumps(r))
            continue
        print(
            f"{sample}: {r['tables']} tables, {r['console_deltas']} console deltas of"
            f" {r['delta_json_bytes']} B (/pad {r['pad_json_bytes_per_delta']} B); held per"
            f" console topic: {r['held_per_topic_at_subscribe']} B at the subscribe,"
            f" {r['held_per_topic_after']} B after the session"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
