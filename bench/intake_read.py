"""The ingest's intake alone: CPU per console message read off Redis (issue #31).

    python bench/intake_read.py --tables 60 --rate 2000 --seconds 10 [--against DIR]

A private ``redis-server``; in a child process (per tree, the trees alternating round after
round) the ingest's subscriptions as ``Ingest._run`` makes them (one per table's console
channel, on a connection each, ``TABLE_*`` limits) read into a ``FairIntake`` whose batches
are taken and dropped; this process publishes ``--rate`` messages a second (a console event's
bytes each) over the tables at random, written every millisecond on one raw connection. The
figure: the child's CPU (utime + stime) per message, from its first message to its last.

``--cachegrind``: the child runs under valgrind's cachegrind instead, twice per tree and
round (``--seconds`` and three times as long), and the figure is the instructions per message
(the difference of the two runs' totals over the difference of their messages: the start and
the end cancel out), which the machine's load does not blur. Compile both trees first
(``python -m compileall -q hub``: ``PYTHONDONTWRITEBYTECODE`` would leave the compiling to
the runs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for where in (ROOT, HERE):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

import private_redis  # noqa: E402

EVENT = b"\x87\xa4type\xa4call\xa7console\xa3c-1\xa3seq\x01\xa5table\x01\xa4deal\x01" + b"x" * 40


async def child(url: str, tables: int, count: int) -> None:
    from hub.bus.redis import RedisBus
    from hub.roles.intake import TABLE_BUFFER, TABLE_BYTES, TABLE_RATE, FairIntake

    bus = RedisBus(url)
    await bus.connect()
    subs = [
        bus.subscribe(
            f"bench:console:{t}", buffer=TABLE_BUFFER, max_bytes=TABLE_BYTES, rate=TABLE_RATE
        )
        for t in range(tables)
    ]
    await asyncio.gather(*(s.ready() for s in subs))
    intake = FairIntake(subs, batch=512)
    print("ready", flush=True)
    got, batches = 0, 0
    first = None
    while got < count:
        batch = await intake.take()
        if first is None:
            first = time.process_time()
        got += len(batch)
        batches += 1
    cpu = time.process_time() - (first or 0.0)
    print(json.dumps({"cpu_s": cpu, "messages": got, "batches": batches}), flush=True)
    for sub in subs:
        await sub.aclose()
    await bus.close()


def publish(port: int, tables: int, rate: float, seconds: float, seed: int) -> int:
    """``rate`` PUBLISHes a second for ``seconds``, a table at random each, written every ms."""
    import hiredis

    draw = random.Random(seed)
    commands = [
        hiredis.pack_command(("PUBLISH", f"bench:console:{t}", EVENT)) for t in range(tables)
    ]
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setblocking(False)
    total = int(rate * seconds)
    start = time.monotonic()
    sent = 0
    while sent < total:
        due = min(total, int((time.monotonic() - start) * rate) + 1)
        if due > sent:
            data = b"".join(commands[draw.randrange(tables)] for _ in range(due - sent))
            sock.setblocking(True)
            sock.sendall(data)
            sock.setblocking(False)
            sent = due
        try:
            while sock.recv(1 << 20):
                pass
        except BlockingIOError:
            pass
        time.sleep(0.001)
    sock.close()
    return sent


def run_child(
    tree: Path, url: str, port: int, args: argparse.Namespace, seed: int, seconds: float
) -> tuple[dict[str, float], int]:
    """The child's figures, and its instructions (0 unless ``--cachegrind``)."""
    count = int(args.rate * seconds)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, __file__, "_child", str(tree), url, str(args.tables), str(count)]
    with tempfile.TemporaryDirectory(prefix="duplicast-cg-") as tmp:
        out = Path(tmp) / "cachegrind.out"
        if args.cachegrind:
            grind = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--log-file=/dev/null"]
            command = [*grind, f"--cachegrind-out-file={out}", *command]
        proc = subprocess.Popen(command, cwd=tree, env=env, stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError("the child did not start")
            publish(port, args.tables, args.rate, seconds, seed)
            line = proc.stdout.readline()
            proc.wait(300 if args.cachegrind else 30)
        finally:
            if proc.returncode is None:
                proc.kill()
                proc.wait()
        instructions = 0
        if args.cachegrind:
            for row in out.read_text().splitlines():
                if row.startswith("summary:"):
                    instructions = int(row.split()[1])
    return json.loads(line), instructions


def one(tree: Path, url: str, port: int, args: argparse.Namespace, seed: int) -> dict[str, float]:
    got, instructions = run_child(tree, url, port, args, seed, args.seconds)
    figures = {
        "us_per_message": round(1e6 * got["cpu_s"] / max(got["messages"], 1), 2),
        "messages_per_batch": round(got["messages"] / max(got["batches"], 1), 1),
        "loadavg": round(os.getloadavg()[0], 2),
    }
    if args.cachegrind:
        longer, more = run_child(tree, url, port, args, seed + 1000, 3 * args.seconds)
        messages = longer["messages"] - got["messages"]
        figures["instructions_per_message"] = round((more - instructions) / max(messages, 1))
        figures["messages_per_batch"] = round(longer["messages"] / max(longer["batches"], 1), 1)
    return figures


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_child"]:
        tree, url, tables, count = argv[1:5]
        sys.path.insert(0, tree)  # that tree's hub, not this file's
        asyncio.run(child(url, int(tables), int(count)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=60)
    parser.add_argument("--rate", type=float, default=2000.0, help="messages a second, all tables")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument(
        "--cachegrind", action="store_true", help="instructions per message (module docstring)"
    )
    args = parser.parse_args(argv)
    trees = {"this": ROOT}
    if args.against:
        trees["against"] = args.against.resolve()
    out: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="duplicast-intake-") as tmp:
        redis, url = private_redis.start(Path(tmp))
        try:
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            for r in range(args.rounds):
                names = list(trees) if r % 2 == 0 else list(reversed(trees))
                for name in names:
                    got = one(trees[name], url, port, args, r)
                    out[name].append(got)
                    print(name, json.dumps(got), flush=True)
        finally:
            redis.terminate()
            redis.wait(10)
    figure, unit = "us_per_message", "µs CPU"
    if args.cachegrind:
        figure, unit = "instructions_per_message", "instructions"
    for name, rows in out.items():
        values = sorted(row[figure] for row in rows)
        print(f"{name}: median {values[len(values) // 2]} {unit} per message over {len(values)}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
