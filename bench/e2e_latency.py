"""End to end latency at event load: a console's PUBLISH to the overlay's frame (issue #23.6).

    python bench/e2e_latency.py --quick     # ~15 s: 6 tables, 60 clients, 3 s
    python bench/e2e_latency.py             # reduced: 60 tables x 1 action/s, 2,000 clients, 30 s
    python bench/e2e_latency.py --full      # the event: 60 tables x 1 action/s, 10,000 clients
    python bench/e2e_latency.py --tables 30 --clients 5000 --seconds 60 --json out.json
    python bench/e2e_latency.py --program-delay 30 --seconds 90   # and the program feed

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
users included). With ``--program-delay S`` the tournament has ``[broadcast] delay = S`` and
the sequential schedule, and ``--program-share`` of the clients (10 %) watch the same topics on
``?feed=program``: the program's delay accuracy, ``bench/e2e_program.py`` (the processes are in
``bench/e2e_processes.py``). The clients run at normal priority (``--load-priority idle``:
SCHED_IDLE, as edge_bench.py runs them, standing in for browsers on other machines; on a
machine busy with other work they then starve, their sockets fill and the edges close them as
slow). Every process is
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
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for where in (ROOT, HERE):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

import e2e_program  # noqa: E402
import edge_bench  # noqa: E402
from e2e_processes import (  # noqa: E402
    client_command,
    cpu_seconds,
    machine_busy,
    niced,
    spectators,
    start_hub,
    tell,
)
from ingest_bench import large_data  # noqa: E402

from hub.domain.config import parse_config  # noqa: E402
from hub.domain.deck import seeded_deck_orders  # noqa: E402
from hub.engine.simulate import simulate_session  # noqa: E402
from hub.wire import codec  # noqa: E402
from hub.wire.channels import Channels  # noqa: E402

TARGET_P99_MS = 50.0
BETTING = frozenset({"fold", "check", "call", "bet", "raise"})
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


def tournament(tid: str, tables: int, deals: int, program_delay: float = 0.0) -> tuple[str, Any]:
    """The bench tournament as a file's text and as parsed: ``tables`` rounded up to groups of
    6 tables x 6 seats, block deal orders, rehearsal decks (the ingest deals and computes
    equity). With ``program_delay``: ``[broadcast] delay`` and the sequential schedule, whose
    deals are released within a short run (``e2e_program``)."""
    data = large_data(tid, math.ceil(tables / 6), deals)
    data["schedule"] = {"method": "blocks", "seed": 5}  # release-aware, as at an event
    if program_delay:
        data["schedule"] = dict(e2e_program.SCHEDULE)
        data["broadcast"] = {"delay": program_delay}
    return toml_text(data), parse_config(data, "<bench>")


def session_events(
    config: Any, seed: int, corrections: bool = False
) -> dict[int, list[dict[str, Any]]]:
    """Each table's bot-played events of the session (by default no corrections), in order."""
    decks = seeded_deck_orders("bench", config.deals)
    out: dict[int, list[dict[str, Any]]] = {t: [] for t in config.tables}
    for event in simulate_session(config, decks, random.Random(seed), corrections=corrections):
        out[event["table"]].append(event)
    return out


def first_events(
    full: dict[int, list[dict[str, Any]]], per_table: int
) -> dict[int, list[dict[str, Any]]]:
    short = min(len(v) for v in full.values())
    if short < per_table:
        raise ValueError(f"a table has only {short} events: more deals")
    return {t: v[:per_table] for t, v in full.items()}


def table_events(config: Any, per_table: int, seed: int) -> dict[int, list[dict[str, Any]]]:
    """Each table's first ``per_table`` bot-played events (no corrections), in its order."""
    return first_events(session_events(config, seed), per_table)


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


def publish_plan(
    counts: dict[int, int], start_ns: int, period: float, phase_seed: int = 0
) -> list[tuple[int, int, int]]:
    """(due ns, table, index) of each table's ``counts[t]`` events, one per ``period`` ns,
    in time order: the tables' phases spread evenly over a period or, with a ``phase_seed``,
    each drawn at random (independently: some tables then publish close together)."""
    draw = random.Random(phase_seed).random
    phases = [draw() if phase_seed else j / len(counts) for j in range(len(counts))]
    return sorted(
        (start_ns + int((k + phases[j]) * period), t, k)
        for j, t in enumerate(sorted(counts))
        for k in range(counts[t])
    )


class _Link(asyncio.Protocol):
    """A raw Redis connection for the fleet: commands written as they are due (never waiting
    for a reply: the consoles are independent), replies parsed by hiredis; on a subscribed
    connection each pushed message is handed to ``on_push`` with its read time."""

    def __init__(self, on_push: Any = None) -> None:
        import hiredis

        self.reader = hiredis.Reader()
        self.on_push = on_push
        self.replies = 0
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        at = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        self.reader.feed(data)
        while (reply := self.reader.gets()) is not False:
            self.replies += 1
            if self.on_push is not None and isinstance(reply, list):
                self.on_push(reply, at)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost.done():
            self.lost.set_result(None)


async def _link(url: str, on_push: Any = None) -> _Link:
    from redis.connection import parse_url

    address = parse_url(url)
    loop = asyncio.get_running_loop()
    host, port = address.get("host", "localhost"), address.get("port", 6379)
    _, link = await loop.create_connection(lambda: _Link(on_push), host, port)
    setup = []
    if address.get("password") is not None:
        user = address.get("username")
        setup.append(("AUTH", user, address["password"]) if user else ("AUTH", address["password"]))
    if address.get("db"):
        setup.append(("SELECT", int(address["db"])))
    if setup and link.transport is not None:
        import hiredis

        link.transport.write(b"".join(hiredis.pack_command(tuple(c)) for c in setup))
    return link


async def fleet(
    url: str, tid: str, path: Path, rate: float, out: Path, phase_seed: int = 0
) -> None:
    """Publish each table's events on its console channel at ``rate`` per table from half a
    second after it is connected (tables' phases spread evenly over one period; with a
    ``phase_seed``, each table's phase drawn at random, independently); time each publish
    and its ack. Writes the start and the times to ``out``; prints its CPU seconds.
    Open loop and lean (issue #31: redis-py's client, one awaited PUBLISH at a time and its
    pub/sub reader, cost this process more CPU than the ingest spent on the events, on the
    same 2 cores): every event due is written at once on one raw connection, whatever Redis
    has answered, and the acks are parsed by hiredis off another."""
    import hiredis

    per_table: dict[int, list[dict[str, Any]]] = {
        int(t): v for t, v in codec.unpack(path.read_bytes()).items()
    }
    names = Channels(tid)
    tables = sorted(per_table)
    period = 1e9 / rate
    acks: dict[tuple[str, int], tuple[int, bool]] = {}
    unpack = codec.unpack

    subscribed = asyncio.Event()

    def on_ack(reply: list[Any], at: int) -> None:
        if reply[0] == b"psubscribe":
            subscribed.set()
        elif reply[0] == b"pmessage":
            ack = unpack(reply[3])
            console = reply[2].decode().rpartition(":")[2]
            acks.setdefault((console, ack.get("seq", -1)), (at, bool(ack.get("ok"))))

    listener = await _link(url, on_ack)
    assert listener.transport is not None
    listener.transport.write(hiredis.pack_command(("PSUBSCRIBE", names.ack("*"))))
    sender = await _link(url)
    assert sender.transport is not None
    sender.transport.write(hiredis.pack_command(("PING",)))
    # every PUBLISH packed beforehand (the hot loop only writes)
    channels = {t: names.console(t) for t in tables}
    pack = hiredis.pack_command
    commands = {
        t: [pack(("PUBLISH", channels[t], codec.pack(e))) for e in per_table[t]] for t in tables
    }
    await asyncio.wait_for(subscribed.wait(), 10)
    while not sender.replies:  # the sender connected and answered
        await asyncio.sleep(0.01)
    start_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + int(5e8)
    counts = {t: len(per_table[t]) for t in tables}
    plan = publish_plan(counts, start_ns, period, phase_seed)
    write = sender.transport.write
    sent: list[tuple[int, int, int]] = []
    cpu0 = time.process_time()
    i = 0
    while i < len(plan):
        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        due = plan[i][0]
        if due > now:
            await asyncio.sleep((due - now) / 1e9)
            continue
        chunk = []
        while i < len(plan) and plan[i][0] <= now:  # every event due by now, in one write
            _, t, k = plan[i]
            chunk.append(commands[t][k])
            sent.append((t, k, time.clock_gettime_ns(time.CLOCK_MONOTONIC)))
            i += 1
        write(b"".join(chunk))
        await asyncio.sleep(0)  # (the acks are read meanwhile)
    deadline = time.monotonic() + 5
    while len(acks) < len(sent) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    rows = []
    for t, k, at in sent:
        event = per_table[t][k]
        ack_at, ok = acks.get((event["console"], event["seq"]), (-1, False))
        rows.append([t, k, at, ack_at, ok])
    out.write_text(json.dumps({"start_ns": start_ns, "sent": rows}))
    for link in (listener, sender):
        if link.transport is not None:
            link.transport.close()
    print(json.dumps({"cpu_s": time.process_time() - cpu0}), flush=True)


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
    program_delay: float = 0.0,
    program_share: float = 0.1,
) -> dict[str, Any]:
    """One measured run at this scale; the figures (see the module docstring). With
    ``program_delay``, ``program_share`` of the clients watch the program feed instead."""
    edge_bench.raise_nofile()
    binary = edge_bench.wsclients_binary()
    tid = f"e2e-{os.getpid()}-{os.urandom(3).hex()}"
    per_table = int((warmup + seconds) * rate) + 1
    deals = max(2, math.ceil(per_table / 15))
    text, config = tournament(tid, tables, deals, program_delay)
    full = session_events(config, seed)
    events = first_events(full, per_table)
    token = base64.urlsafe_b64encode(os.urandom(24)).decode()
    on_program = max(1, round(clients * program_share)) if program_delay else 0
    live = clients - on_program
    with (
        tempfile.TemporaryDirectory(prefix="duplicast-e2e-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        work = Path(tmp)
        events_path = work / "events.msgpack"
        events_path.write_bytes(codec.pack({str(t): v for t, v in events.items()}))
        redis, url, ingest, edges, port = start_hub(work, stack, text, token, hub_nice, fsync)
        marks_path, program_path = work / "marks.bin", work / "program.bin"
        n = len(config.tables)
        command = client_command(binary, f"/ws?token={token}", n, marks_path, port)
        pools = [spectators(stack, [*command, str(live), "0", "table:%d"], live, priority)]
        if on_program:
            path = f"/ws?token={token}&feed=program"
            command = client_command(binary, path, n, program_path, port)
            command[1:1] = ["-s"]
            command += [str(on_program), "0", "table:%d"]
            pools.append(spectators(stack, command, on_program, priority))
        time.sleep(1.0)
        start_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)  # the fleet's start is later
        tell(pools, f"start {start_ns}")
        procs = {"ingest": [ingest.pid], "edges": [e.pid for e in edges], "redis": [redis.pid]}
        before = {k: sum(cpu_seconds(p) for p in v) for k, v in procs.items()}
        load0 = sum(cpu_seconds(p.pid) for p in pools)
        busy0, wall0 = machine_busy(), time.monotonic()
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
        # the last frames (a busy machine delays them by seconds); the program's come later
        time.sleep(drain + (program_delay + 0.5 if program_delay else 0.0))
        wall = time.monotonic() - wall0
        cpu = {k: sum(cpu_seconds(p) for p in v) - before[k] for k, v in procs.items()}
        load1, busy1 = sum(cpu_seconds(p.pid) for p in pools), machine_busy()
        stop_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        tell(pools, "stop")
        read = [json.loads(p.stdout.readline()) for p in pools if p.stdout is not None]
        marks = array("q", marks_path.read_bytes())
        program_marks = array("q", program_path.read_bytes() if on_program else b"")
        timed = json.loads(acks_path.read_text())
    usage = json.loads(fleet_run.stdout)["cpu_s"]
    counted = timed["start_ns"] + int(warmup * 1e9)
    sent = timed["sent"]
    result = figures(events, sent, marks, live, len(config.tables), counted)
    if on_program:
        result["program"] = e2e_program.program_figures(
            full, sent, program_marks, on_program, program_delay, counted, stop_ns, markers, stats
        )
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
    if on_program:
        result["load"].update(live_clients=live, program_clients=on_program)
        result["load"]["schedule"] = e2e_program.SCHEDULE["method"]
    result["cpu_pct"] = {k: round(100 * v / wall, 1) for k, v in cpu.items()}
    result["ingest_cpu_ms_per_event"] = round(1000 * cpu["ingest"] / max(len(sent), 1), 2)
    result["frames"] = read[0]["frames"]  # frames that added rows (one or more)
    result["edges_cpu_us_per_frame"] = round(1e6 * cpu["edges"] / max(result["frames"], 1), 1)
    result["cpu_pct"]["load_generator_clients"] = round(100 * (load1 - load0) / wall, 1)
    result["cpu_pct"]["load_generator_consoles"] = round(100 * usage / wall, 1)
    busy, total = busy1[0] - busy0[0], busy1[1] - busy0[1]
    result["machine"] = {
        "nproc": os.cpu_count(),
        "busy_pct_of_all_cores": round(100 * busy / max(total, 1), 1),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }
    result["pids"] = [pid for pids in procs.values() for pid in pids] + [p.pid for p in pools]
    result["clients_closes"] = read[0].get("closes", {})
    result["clients_lost"] = read[0].get("lost", 0)
    if on_program:
        result["program"]["frames"] = read[1]["frames"]
        result["program"]["clients_closes"] = read[1].get("closes", {})
        result["program"]["clients_lost"] = read[1].get("lost", 0)
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
        seed = int(argv[6]) if len(argv) > 6 else 0
        asyncio.run(fleet(url, tid, Path(path), float(rate), Path(out), seed))
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
    parser.add_argument(
        "--program-delay",
        type=float,
        default=0.0,
        help="s: [broadcast] delay and the sequential schedule (deals released within the run); "
        "a share of the clients watch the program feed and its delay accuracy is reported "
        "(default 0: no program, the default run)",
    )
    parser.add_argument(
        "--program-share",
        type=float,
        default=0.1,
        help="with --program-delay: the share of the clients on ?feed=program (at least one)",
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
        args.program_delay,
        args.program_share,
    )
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
