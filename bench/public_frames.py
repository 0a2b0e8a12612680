"""Counts, not timings (issue #34.6): the bytes of the public frames a results-site phone is
sent at each deal's release, on the embedded engine.

Run by hand: ``.venv/bin/python bench/public_frames.py [--groups 10] [--deals 4] [--json F]``.

The tournament of ``bench/e2e_latency.py`` (``ingest_bench.large_config``: groups of 6 tables,
60 tables by default), one bot-played session through ``Engine.submit`` with the feed on
(release delay 0, ``tick`` and ``changes`` after every event, as the ingest's feed does under
a light load). The public topics a phone may follow are made first (``standings``,
``released`` where the hub has that family; each ``deal:{d}`` exists once released) and every
frame of theirs is encoded as the feed encodes it (``hub.serve.feed.Frame``: JSON and
msgpack). Per topic: its first snapshot, then each frame with what caused it (a release, a
correction, a penalty); per release, the bytes one phone is sent and what 10,000 phones are.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import statistics
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from hub.engine.core import Engine  # noqa: E402
from hub.engine.families import FAMILIES  # noqa: E402
from hub.engine.simulate import simulate_session  # noqa: E402
from hub.serve.feed import Frame  # noqa: E402
from hub.wire.topics import PUBLIC  # noqa: E402


def ingest_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ingest_bench", BENCH / "ingest_bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def sizes(frame: Frame) -> dict[str, int]:
    return {fmt: len(out.payload) for fmt, out in frame.outs.items()}


def measure(groups: int, deals: int, seed: int = 1) -> dict[str, Any]:
    """Every public frame of ``standings``, ``deal:{d}`` and ``released`` in one session."""
    bench = ingest_bench()
    config = bench.large_config("frames", groups, deals)
    decks = bench.seeded_deck_orders("bench", deals)
    events = list(simulate_session(config, decks, random.Random(seed), mean_gap=1.0))
    engine = Engine(config, decks, release_delay=0)
    engine.start_feed()
    families = [f for f in ("standings", "released") if f in FAMILIES]
    seqs: dict[str, int] = {}
    frames: list[dict[str, Any]] = []

    def record(topic: str, frame: Frame, cause: str) -> None:
        frames.append({"topic": topic, "full": frame.full, "cause": cause, **sizes(frame)})

    for name in families:
        payload = engine.projecting.materialize((PUBLIC, name))
        assert payload is not None
        seqs[name] = 1
        record(name, Frame.snapshot(name, 1, payload), "subscribe")
    released = 0
    for event in events:
        out = engine.submit(event, float(event.get("ts", 0.0)))
        assert out.ok, out.ack
        engine.tick(float(event.get("ts", 0.0)))
        now = engine.release.released_count
        cause = "release" if now > released else "other"
        released = now
        for change in engine.projecting.flush():
            audience, topic = change.key
            family = topic.split(":")[0]
            if audience != PUBLIC or family not in ("standings", "deal", "released"):
                continue
            seq = seqs[topic] = seqs.get(topic, 0) + 1
            if change.patch is None:
                frame = Frame.snapshot(topic, seq, change.payload)
            else:
                frame = Frame.delta(topic, seq, change.patch)
            record(topic, frame, cause)
    assert all(engine.release.deal_released(d) for d in range(1, deals + 1))
    for name in families:
        payload = engine.payload((PUBLIC, name))
        assert payload is not None
        record(name, Frame.snapshot(name, seqs[name], payload), "end")
    return {"tables": len(config.tables), "deals": deals, "events": len(events), "frames": frames}


def summary(run: dict[str, Any], phones: int = 10_000) -> dict[str, Any]:
    """Per family: the first snapshot, the snapshot at the end, each release's frame (JSON
    bytes; a deal's topic: its snapshot at its release) and what ``phones`` copies are."""
    out: dict[str, Any] = {"tables": run["tables"], "deals": run["deals"], "events": run["events"]}
    for family in ("standings", "deal", "released"):
        mine = [f for f in run["frames"] if f["topic"].split(":")[0] == family]
        if not mine:
            continue
        at_release = [f["json"] for f in mine if f["cause"] == "release"]
        other = [f["json"] for f in mine if f["cause"] == "other"]
        first = [f["json"] for f in mine if f["cause"] == "subscribe"]
        end = [f["json"] for f in mine if f["cause"] == "end"]
        out[family] = {
            "snapshot_first": first[0] if first else None,
            "snapshot_end": end[0] if end else None,
            "release_frames": at_release,
            "release_frame_median": statistics.median(at_release) if at_release else None,
            "release_msgpack": [f["msgpack"] for f in mine if f["cause"] == "release"],
            "other_frames": len(other),
            "other_max": max(other, default=None),
            f"per_release_x{phones}_MB": (
                round(statistics.median(at_release) * phones / 1e6, 1) if at_release else None
            ),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=10, help="groups of 6 tables (10: 60)")
    parser.add_argument("--deals", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write every frame's sizes here")
    args = parser.parse_args()
    run = measure(args.groups, args.deals, args.seed)
    if args.json:
        args.json.write_text(json.dumps(run, indent=1))
    print(json.dumps(summary(run), indent=1))


if __name__ == "__main__":
    main()
