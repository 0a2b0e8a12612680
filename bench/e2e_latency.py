"""End to end latency at event load: a console's PUBLISH to the overlay's frame (issue #23.6).

    python bench/e2e_latency.py --quick     # ~15 s: 6 tables, 60 clients, 3 s
    python bench/e2e_latency.py             # reduced: 60 tables x 1 action/s, 2,000 clients, 30 s
    python bench/e2e_latency.py --full      # the event: 60 tables x 1 action/s, 10,000 clients
    python bench/e2e_latency.py --tables 30 --clients 5000 --seconds 60 --json out.json

The real processes, as docker-compose.yml runs them, all on loopback: a private
``redis-server`` started here on a free port (the compose file's AOF ``appendfsync always``,
``--appendfsync`` to change it, and its pub/sub limits; never the Redis on 6379), one
``duplicast serve --role ingest`` and two ``duplicast serve --role edge --reuse-port`` on one
port (what the load balancer spreads over).
The tournament is a bench file of ``--tables`` tables (groups of 6 x 6 seats, seeded rehearsal
decks, so the hub deals, scores and computes equity as at an event).

Load: a console fleet in a child process publishes every table's bot-played events (no
corrections) on the table's console channel, each table one event every ``1/--rate`` s, the
tables' phases spread evenly over the second, each publish timed (CLOCK_MONOTONIC) and its ack
timed on arrival. The spectators are ``bench/wsclients.c`` (marker mode, ``-o``), connected to
the edges with the commentator token, client i watching ``table:{i mod tables + 1}``: the live
table, whose delta adds one action row per action (the public ``table:{t}`` carries no play
before a deal is released, so no per-action frame to time). Each action row a frame adds
(table, ``i``) is a marker, timed at the kernel's receive time. The bench matches it to the
publish of the event that made that row (a ``start`` makes the blinds' rows 0 and 1; each
betting action the next), so per row received: publish -> ack (``ack``, per event), ack ->
frame (``fanout``) and publish -> frame (``e2e``; ``e2e_of_starts``: a deal's first event,
dealing and the preflop equity), each p50/p90/p99/max.
Also: rows delivered against expected, CPU share of every process (load generator apart)
and the machine's load (loadavg, and the busy share of both cores from /proc/stat, other
users included). The clients run at normal priority (``--load-priority idle``: SCHED_IDLE, as
edge_bench.py runs them, standing in for browsers on other machines; on a machine busy with other
work they then starve, their sockets fill and the edges close them as slow). Every process is
ended by its pid.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import bisect
import contextlib
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for where in (ROOT, HERE):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

import edge_bench  # noqa: E402
from ingest_bench import large_data  # noqa: E402

from hub.domain.config import parse_config  # noqa: E402
from hub.domain.deck import seeded_deck_orders  # noqa: E402
from hub.engine.simulate import simulate_session  # noqa: E402
from hub.wire import codec  # noqa: E402
from hub.wire.channels import Channels  # noqa: E402

TARGET_P99_MS = 50.0
BETTING = frozenset({"fold", "check", "call", "bet", "raise"})
# docker-compose.yml's Redis: an ack waits for the fsync of its journal batch.
REDIS_ARGS = ("--appendonly", "yes", "--maxmemory-policy", "noeviction")
REDIS_ARGS += ("--client-output-buffer-limit", "pubsub 16mb 4mb 10")
FSYNC = ("always", "everysec", "no")
SCALES = {  # tables, clients, seconds
    "quick": (6, 60, 3.0),
    "reduced": (60, 2000, 30.0),  # the event's ingest load, a fifth of its spectators
    "full": (60, 10000, 60.0),
}


# -- the tournament and its events -----------------------------------------------------------


def toml_text(data: dict[str, Any]) -> str:
    """The few TOML forms ``large_config``'s data uses: tables of scalars and lists, arrays of
    tables."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)

    out: list[str] = []
    for name, section in data.items():
        for row in section if isinstance(section, list) else [section]:
            out.append(f"[[{name}]]" if isinstance(section, list) else f"[{name}]")
            out += [f"{k} = {value(v)}" for k, v in row.items()]
            out.append("")
    return "\n".join(out)


def tournament(tid: str, tables: int, deals: int) -> tuple[str, Any]:
    """The bench tournament as a file's text and as parsed: ``tables`` rounded up to groups of
    6 tables x 6 seats, block deal orders, rehearsal decks (the ingest deals and computes
    equity)."""
    data = large_data(tid, math.ceil(tables / 6), deals)
    data["schedule"] = {"method": "blocks", "seed": 5}  # release-aware, as at an event
    return toml_text(data), parse_config(data, "<bench>")


def table_events(config: Any, per_table: int, seed: int) -> dict[int, list[dict[str, Any]]]:
    """Each table's first ``per_table`` bot-played events (no corrections), in its order."""
    decks = seeded_deck_orders("bench", config.deals)
    out: dict[int, list[dict[str, Any]]] = {t: [] for t in config.tables}
    for event in simulate_session(config, decks, random.Random(seed), corrections=False):
        out[event["table"]].append(event)
    short = min(len(v) for v in out.values())
    if short < per_table:
        raise ValueError(f"a table has only {short} events: more deals")
    return {t: v[:per_table] for t, v in out.items()}


def markers(events: list[dict[str, Any]]) -> list[tuple[int, ...]]:
    """The action rows each event adds to its table's ``actions``: a ``start`` the blinds'
    rows 0 and 1, a betting action the next row, anything else none."""
    out: list[tuple[int, ...]] = []
    last = -1
    for event in events:
        if event["type"] == "start":
            last = 1
            out.append((0, 1))
        elif event["type"] in BETTING:
            last += 1
            out.append((last,))
        else:
            out.append(())
    return out


# -- the console fleet (child process) ---------------------------------------------------------


async def fleet(url: str, tid: str, path: Path, rate: float, out: Path) -> None:
    """Publish each table's events on its console channel at ``rate`` per table from half a
    second after it is connected (tables' phases spread over one period); time each publish
    and its ack. Writes the start and the times to ``out``; prints its CPU seconds."""
    import redis.asyncio as aioredis

    per_table: dict[int, list[dict[str, Any]]] = {
        int(t): v for t, v in codec.unpack(path.read_bytes()).items()
    }
    names = Channels(tid)
    tables = sorted(per_table)
    period = 1e9 / rate
    client = aioredis.Redis.from_url(url)
    pubsub = client.pubsub()
    await pubsub.psubscribe(names.ack("*"))
    await client.ping()
    start_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + int(5e8)
    plan = sorted(
        (start_ns + int(k * period + j * period / len(tables)), t, k)
        for j, t in enumerate(tables)
        for k in range(len(per_table[t]))
    )
    acks: dict[tuple[str, int], tuple[int, bool]] = {}

    async def read_acks() -> None:
        async for message in pubsub.listen():
            if message["type"] == "pmessage":
                at = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
                ack = codec.unpack(message["data"])
                console = message["channel"].decode().rpartition(":")[2]
                acks.setdefault((console, ack.get("seq", -1)), (at, bool(ack.get("ok"))))

    reader = asyncio.create_task(read_acks())
    sent: list[tuple[int, int, int]] = []
    cpu0 = time.process_time()
    for due, t, k in plan:
        wait = (due - time.clock_gettime_ns(time.CLOCK_MONOTONIC)) / 1e9
        if wait > 0:
            await asyncio.sleep(wait)
        event = per_table[t][k]
        data = codec.pack(event)
        at = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        await client.publish(names.console(t), data)
        sent.append((t, k, at))
    deadline = time.monotonic() + 5
    while len(acks) < len(sent) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    reader.cancel()
    rows = []
    for t, k, at in sent:
        event = per_table[t][k]
        ack_at, ok = acks.get((event["console"], event["seq"]), (-1, False))
        rows.append([t, k, at, ack_at, ok])
    out.write_text(json.dumps({"start_ns": start_ns, "sent": rows}))
    await pubsub.aclose()
    await client.aclose()
    print(json.dumps({"cpu_s": time.process_time() - cpu0}), flush=True)


# -- the processes -----------------------------------------------------------------------------


free_port = edge_bench.free_port


@contextlib.contextmanager
def started(command: list[str], log: Path, **kw: Any) -> Iterator[subprocess.Popen[str]]:
    """``edge_bench.started`` (ended by its pid, TERM then KILL) writing to ``log``."""
    with log.open("ab") as out, edge_bench.started(command, stdout=out, stderr=-2, **kw) as proc:
        yield proc


def wait_for(proc: subprocess.Popen[Any], log: Path, text: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    tail = log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"{proc.args[:6]}: no {text!r} within {timeout} s:\n{tail}")


def redis_server(
    work: Path, stack: contextlib.ExitStack, nice: int = 0, fsync: str = "always"
) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(work)]
    log = work / "redis.log"
    command += [*REDIS_ARGS, "--appendfsync", fsync]
    proc = stack.enter_context(started(command, log, preexec_fn=niced(nice)))
    wait_for(proc, log, "Ready to accept connections", 15)
    return proc, f"redis://127.0.0.1:{port}/0"


def niced(nice: int) -> Any:
    """A ``preexec_fn`` moving a hub process's nice value by ``nice`` (None: unchanged)."""
    if not nice:
        return None
    return lambda: os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + nice)


def hub_command(role: str, config: Path, port: int) -> list[str]:
    command = [sys.executable, "-m", "hub", "serve", "--role", role, "--config", str(config)]
    command += ["--port", str(port)]
    if role == "edge":
        command += ["--reuse-port", "--max-per-address", "1000000"]
    return command


def hub_env(url: str, token: str) -> dict[str, str]:
    env = dict(os.environ, DUPLICAST_REDIS_URL=url, DUPLICAST_LOG="WARNING")
    env["DUPLICAST_COMMENTATOR_TOKEN"] = token
    env["DUPLICAST_OPERATOR_TOKEN"] = base64.urlsafe_b64encode(os.urandom(24)).decode()
    env["PYTHONPATH"] = str(ROOT)
    return env


def start_hub(
    work: Path, stack: contextlib.ExitStack, text: str, token: str, nice: int, fsync: str
) -> tuple[subprocess.Popen[str], str, subprocess.Popen[str], list[subprocess.Popen[str]], int]:
    """Redis, the ingest and two edges on one port (started together, waited for in turn):
    (redis, its URL, the ingest, the edges, the edges' port)."""
    config_path = work / "event.toml"
    config_path.write_text(text)
    redis, url = redis_server(work, stack, nice, fsync)
    env = hub_env(url, token)
    port = free_port()
    roles = [("ingest", free_port()), ("edge", port), ("edge", port)]
    hubs = [
        stack.enter_context(
            started(
                hub_command(role, config_path, at),
                work / f"{role}{n}.log",
                env=env,
                preexec_fn=niced(nice),
            )
        )
        for n, (role, at) in enumerate(roles)
    ]
    for n, (role, _) in enumerate(roles):
        wait_for(hubs[n], work / f"{role}{n}.log", f"duplicast {role} for", 180)
    return redis, url, hubs[0], hubs[1:], port


# -- the machine ---------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    return edge_bench.proc_cpu_s(pid)


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all cores from /proc/stat, every process of the machine."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return float(sum(fields) - idle), float(sum(fields))


# -- one run -----------------------------------------------------------------------------------


def run(
    tables: int,
    clients: int,
    seconds: float,
    rate: float,
    seed: int = 1,
    priority: str = "normal",
    drain: float = 3.0,
    hub_nice: int = 0,
    fsync: str = "always",
    warmup: float = 2.0,
) -> dict[str, Any]:
    """One measured run at this scale; the figures (see the module docstring)."""
    edge_bench.raise_nofile()
    binary = edge_bench.wsclients_binary()
    tid = f"e2e-{os.getpid()}-{os.urandom(3).hex()}"
    per_table = int((warmup + seconds) * rate) + 1
    deals = max(2, math.ceil(per_table / 15))
    text, config = tournament(tid, tables, deals)
    events = table_events(config, per_table, seed)
    token = base64.urlsafe_b64encode(os.urandom(24)).decode()
    with (
        tempfile.TemporaryDirectory(prefix="duplicast-e2e-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        work = Path(tmp)
        events_path = work / "events.msgpack"
        events_path.write_bytes(codec.pack({str(t): v for t, v in events.items()}))
        redis, url, ingest, edges, port = start_hub(work, stack, text, token, hub_nice, fsync)
        marks_path = work / "marks.bin"
        client_cmd = [str(binary), "-p", f"/ws?token={token}", "-k", str(len(config.tables))]
        client_cmd += ["-o", str(marks_path), "edge", f"127.0.0.1:{port}", str(clients), "0"]
        client_cmd += ["table:%d"]
        pool = stack.enter_context(
            edge_bench.started(
                client_cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                preexec_fn=edge_bench.load_priority(priority),
            )
        )
        edge_bench._wait_line(pool, "connected", 60 + clients / 100)
        time.sleep(1.0)
        start_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)  # the fleet's start is later
        assert pool.stdin is not None and pool.stdout is not None
        pool.stdin.write(f"start {start_ns}\n")
        pool.stdin.flush()
        procs = {"ingest": [ingest.pid], "edges": [e.pid for e in edges], "redis": [redis.pid]}
        before = {k: sum(cpu_seconds(p) for p in v) for k, v in procs.items()}
        load0, busy0, wall0 = cpu_seconds(pool.pid), machine_busy(), time.monotonic()
        acks_path = work / "acks.json"
        fleet_cmd = [sys.executable, __file__, "_fleet", url, tid, str(events_path), str(rate)]
        fleet_cmd.append(str(acks_path))
        fleet_run = subprocess.run(
            fleet_cmd,
            timeout=(warmup + seconds) * 3 + 60,
            capture_output=True,
            preexec_fn=niced(hub_nice),
        )
        if fleet_run.returncode:
            raise RuntimeError(f"the console fleet failed: {fleet_run.stderr.decode()[-2000:]}")
        time.sleep(drain)  # the last frames (a busy machine delays them by seconds)
        wall = time.monotonic() - wall0
        cpu = {k: sum(cpu_seconds(p) for p in v) - before[k] for k, v in procs.items()}
        load1, busy1 = cpu_seconds(pool.pid), machine_busy()
        pool.stdin.write("stop\n")
        pool.stdin.flush()
        clients_result = json.loads(pool.stdout.readline())
        marks = array("q", marks_path.read_bytes())
        timed = json.loads(acks_path.read_text())
    usage = json.loads(fleet_run.stdout)["cpu_s"]
    counted = timed["start_ns"] + int(warmup * 1e9)
    sent = timed["sent"]
    result = figures(events, sent, marks, clients, len(config.tables), counted)
    result["load"] = {
        "tables": len(config.tables),
        "actions_per_s_per_table": rate,
        "clients": clients,
        "seconds": seconds,
        "warmup_seconds": warmup,
        "events_published": len(sent),
        "clients_priority": priority,
        "hub_nice": hub_nice,
        "appendfsync": fsync,
    }
    result["cpu_pct"] = {k: round(100 * v / wall, 1) for k, v in cpu.items()}
    result["ingest_cpu_ms_per_event"] = round(1000 * cpu["ingest"] / max(len(sent), 1), 2)
    result["frames"] = clients_result["frames"]  # frames that added rows (one or more)
    result["edges_cpu_us_per_frame"] = round(1e6 * cpu["edges"] / max(result["frames"], 1), 1)
    result["cpu_pct"]["load_generator_clients"] = round(100 * (load1 - load0) / wall, 1)
    result["cpu_pct"]["load_generator_consoles"] = round(100 * usage / wall, 1)
    busy, total = busy1[0] - busy0[0], busy1[1] - busy0[1]
    result["machine"] = {
        "nproc": os.cpu_count(),
        "busy_pct_of_all_cores": round(100 * busy / max(total, 1), 1),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }
    result["pids"] = [pid for pids in procs.values() for pid in pids] + [pool.pid]
    result["clients_closes"] = clients_result.get("closes", {})
    result["clients_lost"] = clients_result.get("lost", 0)
    return result


# -- the figures ---------------------------------------------------------------------------------


def stats(values_ns: Any) -> dict[str, float]:
    import numpy as np

    if len(values_ns) == 0:
        return {"n": 0}
    ms = np.sort(np.asarray(values_ns, dtype=np.float64)) / 1e6
    at = {f"p{q}_ms": round(float(np.percentile(ms, q)), 2) for q in (50, 90, 99)}
    return {"n": len(ms), **at, "max_ms": round(float(ms[-1]), 2)}


def figures(
    events: dict[int, list[dict[str, Any]]],
    sent: list[list[Any]],
    marks: array[int],
    clients: int,
    tables: int,
    counted: int = 0,
) -> dict[str, Any]:
    """Each row a client received matched to the publish that made it: the latest publish on
    that table whose event adds that row, at or before the frame's receive time. Under a
    backlog the ingest batches events, so one frame may carry several rows (each timed from
    its own publish). Events published before ``counted`` (the warm-up: the ingest's first
    equity builds its tables) are matched but not counted."""
    index = {t: markers(v) for t, v in events.items()}
    pubs: dict[tuple[int, int], list[tuple[int, int, bool]]] = {}
    ack_times, refused, expected = [], 0, 0
    watchers = {t: sum(1 for c in range(clients) if c % tables + 1 == t) for t in events}
    for t, k, pub, ack, ok in sent:
        refused += not ok
        if ack >= 0 and pub >= counted:
            ack_times.append(ack - pub)
        for row in index[t][k]:
            pubs.setdefault((t, row), []).append((pub, ack, events[t][k]["type"] == "start"))
            expected += watchers[t] if pub >= counted else 0
    e2e, fanout, starts, unmatched = [], [], [], 0
    for n in range(0, len(marks), 3):
        table, row, received = marks[n], marks[n + 1], marks[n + 2]
        candidates = pubs.get((table, row), [])
        at = bisect.bisect_right(candidates, (received, 1 << 62, True)) - 1
        if at < 0:
            unmatched += 1
            continue
        pub, ack, start = candidates[at]
        if pub < counted:
            continue
        e2e.append(received - pub)
        if start:
            starts.append(received - pub)
        if ack >= 0:
            fanout.append(received - ack)
    return {
        "rows": len(e2e),  # received, of events published in the window
        "rows_received": len(marks) // 3,  # the warm-up's too
        "rows_expected": expected,
        "rows_unmatched": unmatched,
        "delivered_pct": round(100 * len(e2e) / max(expected, 1), 2),
        "refused_events": refused,
        "e2e": stats(e2e),
        "e2e_of_starts": stats(starts),  # a deal's first event: dealing and preflop equity
        "ack": stats(ack_times),
        "fanout": stats(fanout),
        "target_p99_ms": TARGET_P99_MS,
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_fleet":
        url, tid, path, rate, out = argv[1:6]
        asyncio.run(fleet(url, tid, Path(path), float(rate), Path(out)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    scale = parser.add_mutually_exclusive_group()
    scale.add_argument("--quick", action="store_true", help="6 tables, 60 clients, 3 s (smoke)")
    scale.add_argument("--full", action="store_true", help="the event: 60 tables, 10,000 clients")
    parser.add_argument("--tables", type=int, help="default: 60 (reduced scale)")
    parser.add_argument("--clients", type=int, help="default: 2,000 (reduced scale)")
    parser.add_argument("--seconds", type=float, help="default: 30")
    parser.add_argument("--drain", type=float, default=3.0, help="s for the last frames")
    parser.add_argument(
        "--warmup", type=float, default=2.0, help="s of load before the measured window"
    )
    parser.add_argument("--rate", type=float, default=1.0, help="actions per second per table")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--load-priority",
        choices=edge_bench.PRIORITIES,
        default="normal",
        help="the C clients' scheduling: as any process (default) or SCHED_IDLE (on a quiet "
        "machine only: on a busy one they starve, fall behind and are closed as slow)",
    )
    parser.add_argument(
        "--hub-nice",
        type=int,
        default=0,
        help="move the nice value of Redis, the ingest, the edges and the console fleet (which "
        "times publishes and acks) by this (e.g. -10, as root: on a machine shared with other "
        "work they then wait less behind it, standing in for machines of their own)",
    )
    parser.add_argument(
        "--appendfsync",
        choices=FSYNC,
        default="always",
        help="Redis's AOF fsync: always (docker-compose.yml: an ack waits for the disk), or "
        "less, to see the disk's share",
    )
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    tables, clients, seconds = SCALES["quick" if args.quick else "full" if args.full else "reduced"]
    result = run(
        args.tables or tables,
        args.clients or clients,
        args.seconds or seconds,
        args.rate,
        args.seed,
        args.load_priority,
        args.drain,
        args.hub_nice,
        args.appendfsync,
        args.warmup,
    )
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
