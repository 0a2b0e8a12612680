"""Decode + schema check of console events, this checkout against another, in the same run.

Run by hand: ``.venv/bin/python bench/event_schema_bench.py --against /work/base``. Each tree is
measured in its own child process, the trees alternating round after round; each figure is the
best of its rounds (noise only adds). The events are this checkout's golden corpus
(tests/console_events_corpus.py): the well-formed events of each type (common), the other
accepted ones (ok: a field given as None, seats unsorted, ...) and the refused ones, each as a
table's console sends it (msgpack bytes: ``codec.unpack_event`` then ``parse_event``), as a mapping
(``parse_event``) and as a JSON Lines row (``decode_event_json``, else ``json.loads`` and
``parse_event``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def workloads() -> dict[str, list[Any]]:
    """The corpus's accepted and refused events, as a mapping, msgpack and JSON."""
    import msgpack

    sys.path.insert(0, str(ROOT))
    from tests import console_events_corpus as corpus

    golden = json.loads(corpus.GOLDEN.read_text(encoding="utf-8"))
    out: dict[str, list[Any]] = {}
    for name, raw in corpus.cases():
        if not isinstance(raw, dict) or any(not isinstance(k, str) for k in raw):
            continue
        kind = "ok" if golden[name][0] == "ok" else "refused"
        if name in corpus.BASES or name.endswith(" without ts"):
            kind = "common"  # the well-formed events of every type, as consoles send them
        out.setdefault(f"{kind} map", []).append(raw)
        try:
            out.setdefault(f"{kind} msgpack", []).append(msgpack.packb(raw))
            out.setdefault(f"{kind} jsonl", []).append(json.dumps(raw, allow_nan=False).encode())
        except (OverflowError, TypeError, ValueError):
            continue
    return out


def measure(tree: Path, repeat: int) -> dict[str, float]:
    """In a child: ns per event of each workload with ``tree``'s code, best of ``repeat``."""
    loads = workloads()
    for name in [m for m in sys.modules if m == "hub" or m.startswith("hub.")]:
        del sys.modules[name]
    sys.path.insert(0, str(tree))
    from hub.domain.errors import Rejection
    from hub.engine.events import decode_event_json, parse_event
    from hub.wire import codec

    def via_msgpack(data: bytes) -> Any:
        return parse_event(codec.unpack_event(data))

    def via_jsonl(line: bytes) -> Any:
        event = decode_event_json(line)
        return event if event is not None else parse_event(json.loads(line))

    paths = {"map": parse_event, "msgpack": via_msgpack, "jsonl": via_jsonl}
    result: dict[str, float] = {}
    for name, items in loads.items():
        run = paths[name.split()[1]]
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            for item in items:
                try:
                    run(item)
                except Rejection:
                    pass
            best = min(best, time.perf_counter() - start)
        result[name] = best / len(items) * 1e9
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child, args.repeat)))
        return
    trees = {"this": ROOT} | ({"against": args.against.resolve()} if args.against else {})
    best: dict[str, dict[str, float]] = {}
    for _ in range(args.rounds):
        for label, tree in trees.items():
            command = [sys.executable, __file__, "--child", str(tree), "--repeat", str(args.repeat)]
            got = json.loads(subprocess.run(command, check=True, capture_output=True).stdout)
            mine = best.setdefault(label, {})
            for name, ns in got.items():
                mine[name] = min(mine.get(name, float("inf")), ns)
    for name in sorted(best["this"]):
        line = f"{name:<16} this {best['this'][name]:>8.0f} ns/event"
        if "against" in best:
            ratio = best["this"][name] / best["against"][name]
            line += f"   against {best['against'][name]:>8.0f}   ratio {ratio:.2f}"
        print(line)


if __name__ == "__main__":
    main()
