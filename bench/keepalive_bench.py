"""Passive spectators held by an edge (issue #30 item 2): N listen-only clients (default 5,000,
the C load generator ``wsclients.c``, which answers pings as a browser does) on one edge
(``duplicast serve --role edge``, as ``edge_bench.py`` runs it) for ``--seconds`` (default 180)
under a 10-updates/s feed from Redis, while the edge's event loop is held up on purpose: every
``--hold-every`` seconds (default 4) a callback sleeps ``--hold`` seconds (default 1.5, i.e. 30 %
of the loop's time gone; a GC pause or a long callback would do the same, seldom that long). A
client that answers pings must never be cut: the result counts clients closed (by code) and lost
(cut without a close frame). Before the fix, listen-only clients were cut unpinged when their
turn in the keepalive sweep came more than two ping intervals after they last sent anything.

    .venv/bin/python bench/keepalive_bench.py                     # ~4 min, a private Redis
    .venv/bin/python bench/keepalive_bench.py --clients 500 --seconds 30 --json out.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import edge_bench  # noqa: E402
import private_redis  # noqa: E402


def run_held_edge(port: int, redis_url: str, every: float, hold: float, stats: str) -> None:
    """The bench's edge, with its event loop held up for ``hold`` s every ``every`` s."""
    import asyncio

    from hub.roles.edge import EdgeSource

    original = EdgeSource.start

    async def start(self: EdgeSource) -> None:
        await original(self)
        loop = asyncio.get_running_loop()

        def hog() -> None:
            time.sleep(hold)  # blocks the whole loop, as a long callback would
            loop.call_later(every, hog)

        loop.call_later(every, hog)

    EdgeSource.start = start  # type: ignore[method-assign]
    edge_bench.run_server("edge", port, redis_url, stats)


def measure(args: argparse.Namespace, redis_url: str, work: Path) -> dict[str, Any]:
    port = edge_bench.free_port()
    log = (work / "edge.log").open("a")
    server_cmd = [sys.executable, __file__, "_server", str(port), redis_url]
    server_cmd += [str(args.hold_every), str(args.hold), str(work / "gc.json")]
    with edge_bench.started(server_cmd, stdout=subprocess.PIPE, stderr=log) as server:
        edge_bench._wait_line(server, "duplicast edge for", 60)
        address = f"127.0.0.1:{port}"
        command = edge_bench.clients_command("c", "edge", address, args.clients, 0)
        with edge_bench.started(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as pool:
            assert pool.stdin is not None and pool.stdout is not None
            started = time.monotonic()
            edge_bench._wait_line(pool, "connected", 120 + args.clients / 50)
            connect_s = time.monotonic() - started
            pool.stdin.write(f"start {edge_bench.now_ns()}\n")
            pool.stdin.flush()
            pub = subprocess.run(
                [sys.executable, str(HERE / "edge_bench.py"), "_publish", "edge", redis_url,
                 str(args.rate), str(args.seconds)],
                capture_output=True, text=True, timeout=args.seconds * 3 + 60, check=True,
            )  # fmt: skip
            time.sleep(1.0)
            pool.stdin.write("stop\n")
            pool.stdin.flush()
            result = json.loads(pool.stdout.readline())
    published = json.loads(pub.stdout)["published"]
    closes = result.get("closes", {})
    return {
        "clients": args.clients,
        "seconds": args.seconds,
        "rate_hz": args.rate,
        "hold_every_s": args.hold_every,
        "hold_s": args.hold,
        "connect_s": round(connect_s, 1),
        "published": published,
        "delivered_pct": round(100 * result["frames"] / max(1, published * args.clients), 2),
        "p50_ms": result.get("p50_ms"),
        "p99_ms": result.get("p99_ms"),
        "max_ms": result.get("max_ms"),
        "closes": closes,
        "lost": result.get("lost", 0),
        "dropped": sum(int(v) for v in closes.values()) + int(result.get("lost", 0)),
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_server":
        run_held_edge(int(argv[1]), argv[2], float(argv[3]), float(argv[4]), argv[5])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--rate", type=float, default=10.0, help="feed updates per second")
    parser.add_argument("--hold-every", type=float, default=4.0)
    parser.add_argument("--hold", type=float, default=1.5)
    parser.add_argument("--redis", default=None, help="a Redis URL (default: a private one)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    edge_bench.raise_nofile()
    with tempfile.TemporaryDirectory(prefix="keepalive-bench-") as tmp:
        work = Path(tmp)
        if args.redis:
            point = measure(args, args.redis, work)
        else:
            proc, url = private_redis.start(work)
            try:
                point = measure(args, url, work)
            finally:
                proc.terminate()
                proc.wait(10)
    print(json.dumps(point), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(point, indent=2) + "\n")
    return 1 if point["dropped"] else 0


if __name__ == "__main__":
    sys.exit(main())
