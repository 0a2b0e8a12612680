"""Tables (markdown) and a chart (PNG) from a bench/edge_bench.py result file.

python bench/edge_report.py bench/results/edge.json docs/edge_bench.png
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

NAMES = {
    "edge": "our edge (1 process)",
    "edgex2": "our edge (2 processes)",
    "naive": "naive Starlette",
    "websockets": "websockets broadcast()",
    "socketio": "Socket.IO 4.8",
}

# The load generator of a point (bench/edge_bench.py --clients); files written before the
# option existed had the Python clients.
GENERATORS = {"c": "C clients", "python": "Python clients"}


def label(p: dict[str, Any]) -> str:
    text = f"{p['clients'] // 1000 if p['clients'] >= 1000 else p['clients']}"
    text += "k" if p["clients"] >= 1000 else ""
    text += f" x {p['rate_hz']:g} Hz"
    if p.get("stalled"):
        text += f", {p['stalled']} stalled"
    return text


def table(points: list[dict[str, Any]]) -> str:
    rows = [
        "| point | server | frames/s | delivered | µs CPU/frame | p50 ms | p99 ms | p999 ms "
        "| KiB/conn | GC max ms (>10 ms) | server CPU | clients CPU |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in points:
        name = NAMES.get(p["server"], p["server"])
        if "error" in p:
            rows.append(f"| {label(p)} | {name} | failed: {p['error'][:80]} |||||||||")
            continue
        gc = f"{p['gc_max_ms']} ({p['gc_over_10ms']})" if "gc_max_ms" in p else "n/a"
        rows.append(
            f"| {label(p)} | {name} | {p['frames_per_s']:,} | {p['delivered_pct']} % "
            f"| {p['server_us_per_frame']} | {p['p50_ms']} | {p['p99_ms']} | {p['p999_ms']} "
            f"| {p['kib_per_conn']} | {gc} | {p['server_cpu_pct']} % "
            f"| {p['clients_cpu_pct']} % ({GENERATORS[p.get('load_generator', 'python')]}"
            f"{', SCHED_IDLE' if p.get('load_priority') == 'idle' else ''}) |"
        )
    return "\n".join(rows)


def ratios(points: list[dict[str, Any]], ours: str = "edge") -> str:
    """Server CPU per frame of the peers divided by ours, per point."""
    by_point: dict[str, dict[str, dict[str, Any]]] = {}
    for p in points:
        if "error" not in p:
            by_point.setdefault(label(p), {})[p["server"]] = p
    rows = ["| point | vs naive | vs websockets | vs Socket.IO |", "|---|---|---|---|"]
    for name, servers in by_point.items():
        mine = servers.get(ours)
        if not mine:
            continue
        cells = []
        for peer in ("naive", "websockets", "socketio"):
            other = servers.get(peer)
            if other is None:
                cells.append("n/a")
            else:
                ratio = other["server_us_per_frame"] / mine["server_us_per_frame"]
                cells.append(f"{ratio:.2f}x {NAMES[peer].split()[0]}")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def chart(points: list[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(dict.fromkeys(label(p) for p in points))
    servers = list(dict.fromkeys(p["server"] for p in points))
    fig, axes = plt.subplots(2, 1, figsize=(11, 8), constrained_layout=True)
    width = 0.8 / max(1, len(servers))
    for k, server in enumerate(servers):
        cpu, p99 = [], []
        for lab in labels:
            match = [p for p in points if p["server"] == server and label(p) == lab]
            ok = match and "error" not in match[0]
            cpu.append(match[0]["server_us_per_frame"] if ok else 0)
            p99.append(max(match[0]["p99_ms"], 0.1) if ok else 0)
        xs = [i + (k - (len(servers) - 1) / 2) * width for i in range(len(labels))]
        axes[0].bar(xs, cpu, width, label=NAMES.get(server, server))
        axes[1].bar(xs, p99, width, label=NAMES.get(server, server))
    axes[0].set_ylabel("server µs CPU per delivered frame")
    axes[1].set_ylabel("p99 publish→receive, ms (log)")
    axes[1].set_yscale("log")
    axes[1].axhline(50, color="red", linestyle="--", linewidth=1)
    for ax in axes:
        ax.set_xticks(range(len(labels)), labels, rotation=15)
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("Duplicast edge vs peers (bench/edge_bench.py, one run, 2 cores, loopback)")
    fig.savefig(out, dpi=90)


def main() -> int:
    data = json.loads(Path(sys.argv[1]).read_text())
    points = data["points"]
    print(f"machine: {data['machine']}\n")
    print(table(points))
    print()
    print(ratios(points))
    if len(sys.argv) > 2:
        chart(points, Path(sys.argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
