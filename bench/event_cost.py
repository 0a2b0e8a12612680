"""The cost of one console event on the real processes, and its latency by event type (issue #31).

    python bench/event_cost.py --quick                       # smoke: 6 tables, 20 clients, ~30 s
    python bench/event_cost.py --tables 60,480 --seconds 45 --json out.json
    python bench/event_cost.py --tables 60,240 --against /work/base   # ratios to another tree
    python bench/event_cost.py --full                        # 240 tables x 10,000 clients
    python bench/event_cost.py --tables 60 --saturate        # the highest sustained events/s
    python bench/event_cost.py --tables 240,480 --trace      # where the e2e goes, per stage

Per point (``--tables``), fresh processes as docker-compose.yml runs them, all on loopback
(``bench/e2e_processes.py``): a private ``redis-server`` (AOF, ``appendfsync always``: an ack
waits for the fsync of its journal batch), ``duplicast serve --role ingest``, two edges on one
port. The tournament is ``e2e_latency``'s (groups of 6 x 6 seats, rehearsal decks: the hub
deals, scores and computes equity as at an event).

Load: the console fleet of ``e2e_latency`` in a child process, one console per table, each
table at its own random phase (independent draws, not evenly spaced), ``--rate`` events per
second per table (mean 1), playing the bots' hands of the tournament's deals with the
session's corrections (so every type a console sends in a session occurs: start, fold, check,
call, bet, raise, win at a showdown, a fold that ends a hand (``fold_out``), undo, void,
confirm). One commentator per table (a websocket client of this file, ``DeskReader``: the
frames split off the socket without a websocket library, through an edge with the commentator
token) holds the desk's topics: ``projection``, ``standings``, ``table:T``, ``console:T`` and
``deal:D`` / ``compare:D:1`` of the deals its table plays; the commentators run in child
processes of ``DESK_SHARE`` tables (``--desk-procs``): at 480 tables they read ~130,000 frames
(~400 MiB) a second, which one process reading with ``websockets`` did not keep up with (its
frames waited in its own sockets: the e2e measured the bench). ``--clients`` spectators are
``wsclients.c`` on ``table:T`` (as ``e2e_latency`` runs them).

Measured over the steady window (after ``--warmup``), with the load average and CPU count:
ingest CPU per accepted event (/proc utime+stime) and its context switches per accepted event
(voluntary: it slept, a wakeup each; involuntary: it was preempted; every thread's
``/proc/PID/task/*/status``: less sensitive to the machine's load than its CPU); edge CPU per
frame delivered (the commentators' frames and the spectators' frames that add a row); edge
memory per connection (RSS after the clients connect minus before: the clients' topics
subscribed, no event yet; and ``_after`` the load, when the edges also hold each topic's deltas
for catch-up; with the same 2 s later, the commentators' alone once their snapshots came, and
the edges' RSS before any client: the topics an edge makes on demand, ``Family.lazy``, are made
at subscribe and count here, while a tree that made them eagerly held them before the first
client); every message the ingest publishes on the feed channel (subscribed with redis-py:
count, max, p99, count over 64 KB); e2e latency from the console's PUBLISH to the commentator's
``console:T`` frame carrying that event's seq (its ``last_seq``: every event type moves it),
p50/p99/max per event type, with the ack's latency. The commentators time a frame when their
process reads it (not the kernel's stamp).

``--against DIR``: each point also runs on another checkout's hub (an export of main, say),
the trees alternating point after point, same tournament, events, phases and seeds; ratios
(this / against) are printed. ``--saturate``: at each point the rate is raised (x1.5) until the
acks or the commentators' frames fall behind; the highest sustained events/s is reported.
``--trace``: the hub's processes run under ``bench/stage_trace.py`` (timers around the ingest's,
the feed writer's and the edges' methods, in either tree; without it the hub runs untouched),
and each point reports, per stage (``STAGES``: read by the ingest, taken, decided, journaled,
acked, the feed publish that carries it started, built, published, read by the edge, taken,
sent, read by the commentator), the p50/p99 time from the PUBLISH and of the step from the
stage before; and each feed publish's CPU against the events it covers (``feed_builds``).
``--feed separate``: the ingest only decides, journals and answers, and a projector
(``serve --role projector``) follows the journal and publishes the feed; the projector's CPU
per event and the two together are reported beside the ingest's.
Every process is ended by its pid.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import bisect
import contextlib
import itertools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for where in (ROOT, HERE):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

import e2e_latency  # noqa: E402
import e2e_processes as procs  # noqa: E402
import edge_bench  # noqa: E402

from hub.wire import codec  # noqa: E402
from hub.wire.channels import Channels  # noqa: E402

FEED_LIMIT = 64 * 1024  # the cap on one feed message
SCALES = {  # tables, clients, seconds, warmup
    "quick": ([6], 20, 4.0, 1.0),
    "default": ([60, 240, 480, 720], 200, 45.0, 5.0),
    "full": ([240], 10000, 60.0, 5.0),
}
KINDS: tuple[str, ...] = ("start", "fold", "check", "call", "bet", "raise", "win", "fold_out")
KINDS += ("undo", "void", "confirm")  # the corrections (void and confirm: once a session)
DESK_SHARE = 120  # commentators per process by default (each reads ~275 frames/s at 480 tables)
BEHIND_MS = 1000.0  # a rate is sustained while ack and frame p99 stay under this
SATURATION_STEPS = 12  # x1.5 each: up to 86 times --rate


# -- the events and their kinds ------------------------------------------------------------------


def kinds(full: list[dict[str, Any]]) -> list[str]:
    """Each event's kind for timing: its type, but ``fold_out`` for a fold that ends a hand
    (the next event of its table starts a deal, or it is the session's last)."""
    out = []
    for k, event in enumerate(full):
        kind = event["type"]
        if kind == "fold" and (k + 1 == len(full) or full[k + 1]["type"] == "start"):
            kind = "fold_out"
        out.append(kind)
    return out


def plan(tables: int, seconds: float, warmup: float, rate: float, seed: int) -> dict[str, Any]:
    """The tournament, each table's events (corrections included) and their kinds."""
    per_table = int((warmup + seconds) * rate) + 1
    deals = max(2, math.ceil(per_table / 12) + 1)
    tid = f"cost-{os.getpid()}-{os.urandom(3).hex()}"
    text, config = e2e_latency.tournament(tid, tables, deals)
    full = e2e_latency.session_events(config, seed, corrections=True)
    events = e2e_latency.first_events(full, per_table)
    return {
        "tid": tid,
        "text": text,
        "tables": list(config.tables),
        "events": events,
        "kinds": {t: kinds(v)[:per_table] for t, v in full.items()},
    }


def desk_topics(table: int, events: list[dict[str, Any]]) -> list[str]:
    """A commentator's topics at ``table``: the desk's and the deals its table plays."""
    deals = sorted({e["deal"] for e in events if e["type"] == "start"})
    topics = ["projection", "standings", f"table:{table}", f"console:{table}"]
    for deal in deals[:20]:
        topics += [f"deal:{deal}", f"compare:{deal}:1"]
    return topics


# -- the commentators (child process) ------------------------------------------------------------


LAST_SEQ = re.compile(rb'"last_seq":(\d+)|/last_seq","value":(\d+)')


SNAPSHOT = re.compile(rb'\{"type":"snapshot","topic":"([^"]+)"')
FAMILY = re.compile(rb'\{"type":"(\w+)","topic":"([^":]+)')


def seen_seq(frame: bytes) -> int:
    """The highest console seq a ``console:T`` frame carries: its ``consoles`` map's
    ``last_seq`` (a snapshot, or a delta replacing the map or one entry's field); -1: none."""
    return max((int(a or b) for a, b in LAST_SEQ.findall(frame)), default=-1)


def commentator_share(tables: list[int], share: int, shares: int) -> list[int]:
    """The tables of commentator process ``share`` of ``shares`` (every ``shares``-th)."""
    return sorted(tables)[share::shares]


class DeskReader:
    """One commentator's websocket read without a websocket library: the server's frames
    (unmasked, RFC 6455) split in place off each read of the socket, every frame counted, a
    ``console:T`` frame's ``last_seq`` searched, pings answered. A frame is timed when its
    bytes are read (every frame of one read at once). ``websockets``' ``recv`` took ~6 µs a
    frame: at 480 tables (~130,000 frames/s to the commentators) one process of them was the
    bench's own bottleneck (frames waited in its sockets, not in the hub)."""

    def __init__(self, table: int, topics: list[str]) -> None:
        self.table, self.topics = table, topics
        self.console = f'"console:{table}"'.encode()
        self.missing = set(topics)
        self.frames = self.bytes = 0
        self.marks: list[tuple[int, int, int]] = []
        self.close_code: int | None = None
        self.lost = False
        self.snapshot_bytes: dict[str, int] = {}  # each topic's first snapshot frame's length
        self.bytes_by_kind: dict[str, int] = {}  # "snapshot projection" -> bytes (counted ones)

    async def run(self, port: int, token: str, ready: asyncio.Event, counting: list[bool]) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET /ws?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        response = await reader.readuntil(b"\r\n\r\n")
        if b" 101 " not in response.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"no websocket: {response[:200]!r}")
        subscribe = json.dumps({"op": "subscribe", "topics": self.topics}).encode()
        writer.write(edge_bench.masked_frame(0x1, subscribe))
        buf = bytearray()
        console, marks, table = self.console, self.marks, self.table
        find, last_seq, family = buf.find, LAST_SEQ.findall, FAMILY.match
        by_kind = self.bytes_by_kind
        while self.close_code is None:
            chunk = await reader.read(1 << 18)
            if not chunk:  # the link lost without a close frame
                self.lost = True
                break
            at = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            buf += chunk
            pos, end_of = 0, len(buf)
            while end_of - pos >= 2:
                length, start = buf[pos + 1] & 127, pos + 2
                if length == 126:
                    length, start = int.from_bytes(buf[pos + 2 : pos + 4], "big"), pos + 4
                elif length == 127:
                    length, start = int.from_bytes(buf[pos + 2 : pos + 10], "big"), pos + 10
                end = start + length
                if end > end_of:
                    break
                opcode = buf[pos] & 15
                pos = end
                if opcode in (0x1, 0x2):
                    if counting[0]:
                        self.frames += 1
                        self.bytes += length
                        if kind := family(buf, start):
                            name = f"{kind[1].decode()} {kind[2].decode()}"
                            by_kind[name] = by_kind.get(name, 0) + length
                    if self.missing and (snapshot := SNAPSHOT.match(buf, start)):
                        topic = snapshot[1].decode()
                        self.missing.discard(topic)
                        self.snapshot_bytes.setdefault(topic, length)
                        if not self.missing:
                            ready.set()
                    if find(console, start, min(start + 200, end)) >= 0:
                        seqs = last_seq(buf, start, end)
                        seen = max((int(a or b) for a, b in seqs), default=-1)
                        marks.append((table, seen, at))
                elif opcode == 0x9:  # ping: pong with its payload
                    writer.write(edge_bench.masked_frame(0xA, bytes(buf[start:end])))
                elif opcode == 0x8:
                    code = buf[start : start + 2]
                    self.close_code = int.from_bytes(code, "big") if len(code) == 2 else 1005
            del buf[:pos]
        writer.close()


async def commentators(port: int, token: str, path: Path, out: Path) -> None:
    """One websocket client (``DeskReader``) per table of ``path`` holding ``desk_topics``;
    prints ``ready`` once every one has its snapshots, then records each ``console:T``
    frame's (T, last_seq, read ns) and counts every frame until stdin closes; writes them to
    ``out``. ``run_point`` runs several of these processes, each a share of the tables."""
    per_table = {int(t): v for t, v in codec.unpack(path.read_bytes()).items()}
    readers = {t: DeskReader(t, desk_topics(t, v)) for t, v in per_table.items()}
    readies = {t: asyncio.Event() for t in per_table}
    counting = [False]
    tasks = [
        asyncio.create_task(r.run(port, token, readies[t], counting)) for t, r in readers.items()
    ]
    gate = asyncio.gather(*(r.wait() for r in readies.values()))
    await asyncio.wait_for(gate, 60 + len(per_table) / 5)
    print("ready", flush=True)
    counting[0] = True
    await asyncio.to_thread(sys.stdin.read)  # until the bench closes it
    closes: dict[str, int] = {}  # close code (None: the link was lost) -> commentators
    for t, task in zip(readers, tasks, strict=True):
        if readers[t].lost or (task.done() and task.exception() is not None):
            closes["None"] = closes.get("None", 0) + 1
    for r in readers.values():
        if r.close_code is not None:
            closes[str(r.close_code)] = closes.get(str(r.close_code), 0) + 1
    seen = {
        "marks": [m for r in readers.values() for m in r.marks],
        "closed": closes,
        "silent": sum(1 for r in readers.values() if r.frames == 0),
        "frames": sum(r.frames for r in readers.values()),
        "bytes": sum(r.bytes for r in readers.values()),
        "snapshot_bytes": {t: n for r in readers.values() for t, n in r.snapshot_bytes.items()},
        "bytes_by_kind": summed([r.bytes_by_kind for r in readers.values()]),
    }
    out.write_text(json.dumps(seen))
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def summed(counts: list[dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for count in counts:
        for key, n in count.items():
            out[key] = out.get(key, 0) + n
    return out


def snapshot_kib(sizes: dict[str, int]) -> dict[str, float]:
    """KiB of the topics' snapshot frames, by family (the topic's name before a colon)."""
    out: dict[str, float] = {}
    for topic, n in sizes.items():
        family = topic.split(":", 1)[0]
        out[family] = out.get(family, 0.0) + n / 1024
    return {family: round(kib, 1) for family, kib in sorted(out.items())}


def merged_desks(outs: list[dict[str, Any]]) -> dict[str, Any]:
    """The commentator processes' records as one: marks joined, counts summed."""
    closed: dict[str, int] = {}
    for out in outs:
        for code, k in out["closed"].items():
            closed[code] = closed.get(code, 0) + k
    snapshots: dict[str, int] = {}
    for out in outs:
        snapshots.update(out.get("snapshot_bytes", {}))
    return {
        "snapshot_bytes": snapshots,
        "bytes_by_kind": summed([out.get("bytes_by_kind", {}) for out in outs]),
        "marks": [m for out in outs for m in out["marks"]],
        "closed": closed,
        **{key: sum(out[key] for out in outs) for key in ("silent", "frames", "bytes")},
    }


# -- the feed's messages and the processes' CPU (threads of this process) -----------------------


class FeedSizes(threading.Thread):
    """The size of every message published on the tournament's feed channel."""

    def __init__(self, url: str, channel: str) -> None:
        super().__init__(daemon=True)
        import redis

        self.client = redis.Redis.from_url(url)
        self.pubsub = self.client.pubsub()
        self.pubsub.subscribe(channel)
        self.sizes: list[int] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            message = self.pubsub.get_message(timeout=0.2)
            if message and message["type"] == "message":
                self.sizes.append(len(message["data"]))

    def stop(self) -> dict[str, Any]:
        self.done.set()
        self.join(5)
        self.pubsub.close()
        self.client.close()
        sizes = sorted(self.sizes)
        p99 = sizes[min(len(sizes) - 1, int(0.99 * len(sizes)))] if sizes else 0
        return {
            "messages": len(sizes),
            "max_bytes": sizes[-1] if sizes else 0,
            "p99_bytes": p99,
            "over_64k": sum(1 for s in sizes if s > FEED_LIMIT),
            "mib": round(sum(sizes) / 2**20, 2),
        }


def context_switches(pid: int) -> tuple[int, int]:
    """(voluntary, involuntary) context switches of a process so far: every thread's
    (``/proc/PID/task/*/status``; ``/proc/PID/status`` counts its main thread's alone)."""
    voluntary = involuntary = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # a thread that ended
            for line in status.read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    voluntary += int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches:"):
                    involuntary += int(line.split()[1])
    return voluntary, involuntary


class CpuSampler(threading.Thread):
    """(monotonic ns, CPU seconds of each group of pids) every ``every`` s; and, for the
    ``switching`` group, its context switches (voluntary, involuntary) at the same times."""

    def __init__(
        self, groups: dict[str, list[int]], every: float = 0.25, switching: str = "ingest"
    ) -> None:
        super().__init__(daemon=True)
        self.groups, self.every, self.switching = groups, every, switching
        self.samples: list[tuple[int, dict[str, float]]] = []
        self.switches: list[tuple[int, int]] = []  # (voluntary, involuntary), one a sample
        self.last: dict[int, float] = {}
        self.done = threading.Event()

    def sample(self) -> None:
        at = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        cpu = {k: sum(self._cpu(p) for p in v) for k, v in self.groups.items()}
        switched = [context_switches(p) for p in self.groups.get(self.switching, [])]
        self.samples.append((at, cpu))
        self.switches.append((sum(v for v, _ in switched), sum(i for _, i in switched)))

    def _cpu(self, pid: int) -> float:
        """A process's CPU seconds; its last reading once it has exited (the console fleet)."""
        try:
            self.last[pid] = procs.cpu_seconds(pid)
        except (FileNotFoundError, ProcessLookupError):
            pass
        return self.last.get(pid, 0.0)

    def run(self) -> None:
        while not self.done.wait(self.every):
            self.sample()

    def between(self, start_ns: int, stop_ns: int) -> tuple[float, dict[str, float]]:
        """Seconds and CPU seconds per group between the samples nearest the two times."""
        times = [at for at, _ in self.samples]
        a = min(bisect.bisect_left(times, start_ns), len(times) - 1)
        b = max(min(bisect.bisect_left(times, stop_ns), len(times) - 1), a)
        (t0, c0), (t1, c1) = self.samples[a], self.samples[b]
        return (t1 - t0) / 1e9, {k: c1[k] - c0.get(k, 0.0) for k in c1}

    def switches_between(self, start_ns: int, stop_ns: int) -> tuple[int, int]:
        """The ``switching`` group's (voluntary, involuntary) context switches between the
        samples nearest the two times (the same samples as ``between``)."""
        times = [at for at, _ in self.samples]
        a = min(bisect.bisect_left(times, start_ns), len(times) - 1)
        b = max(min(bisect.bisect_left(times, stop_ns), len(times) - 1), a)
        (v0, i0), (v1, i1) = self.switches[a], self.switches[b]
        return v1 - v0, i1 - i0


# -- one point -----------------------------------------------------------------------------------


def run_point(
    work: Path,
    setup: dict[str, Any],
    tree: Path,
    clients: int,
    rate: float,
    seed: int,
    warmup: float,
    drain: float = 3.0,
    trace: bool = False,
    desk_procs: int = 0,
    feed: str = "inline",
) -> dict[str, Any]:
    """The figures of one run of ``setup``'s load on ``tree``'s hub (module docstring);
    ``trace``: the hub's processes run under ``bench/stage_trace.py`` (the stages);
    ``desk_procs``: the commentators' processes (0: one per ``DESK_SHARE`` tables);
    ``feed="separate"``: a projector publishes the feed (``--feed``)."""
    edge_bench.raise_nofile()
    binary = edge_bench.wsclients_binary()
    token = base64.urlsafe_b64encode(os.urandom(24)).decode()
    events = setup["events"]
    work.mkdir(parents=True, exist_ok=True)
    events_path = work / "events.msgpack"
    events_path.write_bytes(codec.pack({str(t): v for t, v in events.items()}))
    n = len(events)
    desk_procs = desk_procs or max(1, math.ceil(n / DESK_SHARE))
    traces = work / "trace"
    with contextlib.ExitStack() as stack:
        if trace:
            traces.mkdir(exist_ok=True)
            stack.enter_context(traced_commands(traces))
        redis, url, ingest, edges, port = procs.start_hub(
            work, stack, setup["text"], token, 0, "always", tree, feed
        )
        projector = [p for p in edges if "projector" in p.args]
        edges = [p for p in edges if p not in projector]
        feed = FeedSizes(url, Channels(setup["tid"]).feed)
        rss0 = sum(edge_bench.proc_rss_kib(e.pid) for e in edges)
        desks, desk_outs = [], []
        for share in range(desk_procs):
            mine = commentator_share(list(events), share, desk_procs)
            share_path = work / f"events-{share}.msgpack"
            share_path.write_bytes(codec.pack({str(t): events[t] for t in mine}))
            desk_outs.append(work / f"desk-{share}.json")
            command = [sys.executable, __file__, "_desk", str(port), token]
            command += [str(share_path), str(desk_outs[-1])]
            desks.append(
                stack.enter_context(
                    edge_bench.started(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                )
            )
        for desk in desks:
            edge_bench._wait_line(desk, "ready", 120 + n / 5)
        rss_ready = sum(edge_bench.proc_rss_kib(e.pid) for e in edges)
        command = procs.client_command(binary, f"/ws?token={token}", n, work / "marks.bin", port)
        command += [str(clients), "0", "table:%d"]
        pools = [procs.spectators(stack, command, clients, "normal")]
        time.sleep(1.0)
        rss1 = sum(edge_bench.proc_rss_kib(e.pid) for e in edges)
        time.sleep(2.0)  # the same 2 s later: whether the figure was still moving
        rss1_later = sum(edge_bench.proc_rss_kib(e.pid) for e in edges)
        procs.tell(pools, f"start {time.clock_gettime_ns(time.CLOCK_MONOTONIC)}")
        groups = {"ingest": [ingest.pid], "edges": [e.pid for e in edges], "redis": [redis.pid]}
        if projector:
            groups["projector"] = [p.pid for p in projector]
        groups["load_generator_commentators"] = [desk.pid for desk in desks]
        sampler = CpuSampler(groups)
        sampler.sample()
        sampler.start()
        feed.start()
        busy0 = procs.machine_busy()
        acks_path = work / "acks.json"
        fleet_cmd = [sys.executable, str(HERE / "e2e_latency.py"), "_fleet", url, setup["tid"]]
        fleet_cmd += [str(events_path), str(rate), str(acks_path), str(seed)]
        per_table = max(len(v) for v in events.values())
        # (a child the sampler also reads: the load generator's own CPU beside the hub's)
        fleet = subprocess.Popen(fleet_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        groups["load_generator_consoles"] = [fleet.pid]
        sampler.groups = dict(groups)
        try:
            _, err = fleet.communicate(timeout=per_table / rate * 3 + 60)
        finally:
            if fleet.returncode is None:
                fleet.kill()
                fleet.wait()
        if fleet.returncode:
            raise RuntimeError(f"the console fleet failed: {err.decode()[-2000:]}")
        time.sleep(drain)
        rss2 = sum(edge_bench.proc_rss_kib(e.pid) for e in edges)  # (with the topics' deltas)
        sampler.done.set()
        sampler.join()
        busy1 = procs.machine_busy()
        procs.tell(pools, "stop")
        read = [json.loads(p.stdout.readline()) for p in pools if p.stdout is not None]
        for desk in desks:
            assert desk.stdin is not None
            desk.stdin.close()
        for desk in desks:
            desk.wait(60)
        desk_seen = merged_desks([json.loads(o.read_text()) for o in desk_outs])
        sizes = feed.stop()
    # Redis cut a subscriber (an edge's feed, say) for its pub/sub output buffer limit
    cuts = (work / "redis.log").read_text(errors="replace").count("output buffer limits")
    sizes["redis_output_limit_cuts"] = cuts
    # an exception the hub's processes logged (a batch that failed, a task that died)
    logs = [p for p in work.glob("*.log") if p.name != "redis.log"]
    tracebacks = sum(p.read_text(errors="replace").count("Traceback") for p in logs)
    got = {"desk": desk_seen, "clients": read[0], "feed": sizes, "sampler": sampler}
    got.update(timed=json.loads(acks_path.read_text()), rss=(rss0, rss1, rss2), busy=(busy0, busy1))
    got["rss_more"], got["desk_procs"] = (rss_ready, rss1_later), desk_procs
    got["pids"] = [p for v in groups.values() for p in v] + [pools[0].pid]
    figures = point_figures(setup, got, clients, rate, warmup)
    figures["hub_tracebacks"] = tracebacks
    if trace:
        start_ns = got["timed"]["start_ns"] + int(warmup * 1e9)
        figures["stages"] = stages(
            setup, got["timed"]["sent"], desk_seen["marks"], start_ns, traces
        )
    return figures


def point_figures(
    setup: dict[str, Any], got: dict[str, Any], clients: int, rate: float, warmup: float
) -> dict[str, Any]:
    """``run_point``'s figures from what it ``got``: the fleet's publishes and acks, the
    commentators' frames, the spectators' counts, the feed's sizes, the CPU samples."""
    timed, desk_seen, read, sizes = got["timed"], got["desk"], got["clients"], got["feed"]
    (busy0, busy1), (rss0, rss1, rss2) = got["busy"], got["rss"]
    rss_ready, rss1_later = got.get("rss_more", (rss1, rss1))
    desk_procs = got.get("desk_procs", 1)
    start_ns = timed["start_ns"] + int(warmup * 1e9)
    last_pub = max(row[2] for row in timed["sent"])
    wall, cpu = got["sampler"].between(start_ns, last_pub)
    voluntary, involuntary = got["sampler"].switches_between(start_ns, last_pub)
    in_window = [row for row in timed["sent"] if start_ns <= row[2] <= last_pub]
    accepted = sum(1 for row in in_window if row[4])
    frames = desk_seen["frames"] + read["frames"]
    busy, total = busy1[0] - busy0[0], busy1[1] - busy0[1]
    n = len(setup["events"])
    return {
        "tables": n,
        "clients": clients,
        "commentators": n,
        "rate_per_table": rate,
        "events_published": len(timed["sent"]),
        "events_in_window": len(in_window),
        "accepted_in_window": accepted,  # acknowledged within 5 s of the last publish
        "acked_pct": round(100 * accepted / max(len(in_window), 1), 1),
        "feed_messages_per_event": round(sizes["messages"] / max(len(timed["sent"]), 1), 2),
        "window_s": round(wall, 1),
        "ingest_cpu_ms_per_event": round(1000 * cpu["ingest"] / max(accepted, 1), 3),
        # --feed separate: the projector's, and the two together (what the hub pays an event)
        **(
            {
                "projector_cpu_ms_per_event": round(1000 * cpu["projector"] / max(accepted, 1), 3),
                "ingest_and_projector_cpu_ms_per_event": round(
                    1000 * (cpu["ingest"] + cpu["projector"]) / max(accepted, 1), 3
                ),
            }
            if "projector" in cpu
            else {}
        ),
        # the ingest's context switches per accepted event, over the same window (its
        # wakeups, and its preemptions: less sensitive to the machine's load than its CPU)
        "ingest_switches_per_event": {
            "voluntary": round(voluntary / max(accepted, 1), 2),
            "involuntary": round(involuntary / max(accepted, 1), 2),
        },
        "cpu_pct": {k: round(100 * v / max(wall, 1e-9), 1) for k, v in cpu.items()},
        "edges_cpu_us_per_frame": round(1e6 * cpu["edges"] / max(frames, 1), 1),
        # the same CPU by the events that caused it: a tree that sends fewer, larger frames
        # (a cadence) pays more a frame and less an event; the event is the cost's unit
        "edges_cpu_ms_per_event": round(1000 * cpu["edges"] / max(accepted, 1), 3),
        "frames": {"commentators": desk_seen["frames"], "spectator_rows": read["frames"]},
        "commentator_mib": round(desk_seen["bytes"] / 2**20, 2),
        # the commentators' bytes of the window by frame type and topic family, MiB
        "commentator_mib_by_kind": {
            k: round(n / 2**20, 1)
            for k, n in sorted(desk_seen.get("bytes_by_kind", {}).items(), key=lambda kv: -kv[1])
        },
        "edges_kib_per_connection": round((rss1 - rss0) / max(clients + n, 1), 2),
        # the same after the load (the edges then hold each topic's deltas for catch-up too)
        "edges_kib_per_connection_after": round((rss2 - rss0) / max(clients + n, 1), 2),
        # when the figure before the load is taken: the commentators alone, their snapshots
        # read (per commentator), and the figure's own sample 2 s later (per connection)
        "edges_kib_per_commentator_at_ready": round((rss_ready - rss0) / max(n, 1), 2),
        "edges_kib_per_connection_2s_later": round((rss1_later - rss0) / max(clients + n, 1), 2),
        "commentator_processes": desk_procs,
        "edges_rss_mib_before": round(rss0 / 1024, 1),  # (both edges, no client yet)
        # the JSON snapshot frames the commentators' topics started from, KiB by family (each
        # topic once): what an edge's store holds of them, before the deltas (the topics made
        # on demand, ``console`` and ``compare``, are made at subscribe: they count above)
        "desk_snapshot_kib": snapshot_kib(desk_seen.get("snapshot_bytes", {})),
        "feed": sizes,
        "latency": latency(setup, timed["sent"], desk_seen["marks"], start_ns),
        "closed": {"commentators": desk_seen["closed"], "spectators": read.get("closes", {})},
        "commentators_silent": desk_seen["silent"],  # no frame in the whole run
        "machine": {
            "nproc": os.cpu_count(),
            "loadavg": [round(x, 2) for x in os.getloadavg()],
            "busy_pct_of_all_cores": round(100 * busy / max(total, 1), 1),
        },
        "pids": got["pids"],
    }


def latency(
    setup: dict[str, Any], sent: list[list[Any]], marks: list[list[int]], counted: int
) -> dict[str, Any]:
    """Per event kind: publish -> ack and publish -> the first ``console:T`` frame at or past
    its seq, of the events published in the window; events whose frame never came, counted."""
    frames: dict[int, tuple[list[int], list[int]]] = {}
    for table, seq, at in sorted(marks, key=lambda m: m[2]):
        seqs, times = frames.setdefault(table, ([], []))
        if not seqs or seq > seqs[-1]:  # the running maximum: the first frame reaching a seq
            seqs.append(seq)
            times.append(at)
    e2e: dict[str, list[int]] = {}
    acks: list[int] = []
    missing = 0
    for table, k, pub, ack, _ok in sent:
        if pub < counted:
            continue
        if ack >= 0:
            acks.append(ack - pub)
        seqs, times = frames.get(table, ([], []))
        at = bisect.bisect_left(seqs, setup["events"][table][k]["seq"])
        if at == len(seqs):
            missing += 1
            continue
        e2e.setdefault(setup["kinds"][table][k], []).append(times[at] - pub)
    every = [x for v in e2e.values() for x in v]
    out = {"all": e2e_latency.stats(every), "ack": e2e_latency.stats(acks), "missing": missing}
    out.update({kind: e2e_latency.stats(v) for kind, v in sorted(e2e.items())})
    out["kinds_not_timed"] = [kind for kind in KINDS if kind not in e2e]
    return out


@contextlib.contextmanager
def traced_commands(out: Path) -> Any:
    """The hub's processes started as ``stage_trace.py OUT -m hub ...`` while it lasts."""
    plain = procs.hub_command

    def traced(
        role: str, config: Path, port: int, tree: Path = procs.ROOT, feed: str = "inline"
    ) -> list[str]:
        command = plain(role, config, port, tree, feed)
        return [command[0], str(HERE / "stage_trace.py"), str(out), *command[1:]]

    procs.hub_command = traced
    try:
        yield
    finally:
        procs.hub_command = plain


STAGES = (  # (name, what it times: the first time the event reached it)
    ("ingest_read", "read off the ingest's Redis socket"),
    ("taken", "its batch enters the ingest's pipeline"),
    ("decided", "its batch's journal append is called"),
    ("journaled", "the append returned (AOF fsync'd)"),
    ("acked", "the acks' PUBLISH returned"),
    ("feed_start", "the feed publish that carries it starts"),
    ("feed_built", "its frames built: the feed's PUBLISH called"),
    ("feed_published", "the feed's PUBLISH returned"),
    ("edge_read", "read off an edge's Redis socket"),
    ("edge_taken", "the edge's feed loop starts on it"),
    ("edge_sent", "the edge's fan-out wrote it to the sockets"),
    ("client_read", "the commentator read it"),
)


def _firsts(rows: list[tuple[float, int, int, Any]]) -> dict[int, tuple[list[int], list[Any]]]:
    """Per table, the running maximum of the seqs ``rows`` (at, table, seq, value) reach in
    time order: (seqs, values), so the first row reaching a seq is found by bisection."""
    out: dict[int, tuple[list[int], list[Any]]] = {}
    for _at, table, seq, value in sorted(rows, key=lambda r: r[0]):
        seqs, values = out.setdefault(table, ([], []))
        if not seqs or seq > seqs[-1]:
            seqs.append(seq)
            values.append(value)
    return out


def _first(index: dict[int, tuple[list[int], list[Any]]], table: int, seq: int) -> Any:
    seqs, values = index.get(table, ([], []))
    at = bisect.bisect_left(seqs, seq)
    return values[at] if at < len(seqs) else None


def stages(
    setup: dict[str, Any], sent: list[list[Any]], marks: list[list[int]], counted: int, out: Path
) -> dict[str, Any]:
    """Per stage (``STAGES``): p50 / p99 ms from the PUBLISH to the event reaching it
    (cumulative), and of the step from the stage before; events of the window only, each
    edge's times counted for the events it carried (both edges see every frame)."""
    ingest: dict[tuple[int, int], list[float]] = {}
    feeds: list[tuple[float, int, int, Any]] = []
    edges: dict[str, tuple[list[Any], list[Any]]] = {}
    fetches: list[float] = []
    builds: list[tuple[float, float]] = []  # (enter, CPU s) of each feed publish
    for path in sorted(out.glob("trace-*.jsonl")):
        recv, sent_rows = edges.setdefault(path.name, ([], []))
        for line in path.read_text().splitlines():
            row = json.loads(line)
            kind = row["k"]
            if kind == "batch":
                times = [row["take"], row.get("jc"), row.get("jr"), row.get("ack")]
                for table, seq, arrived in row["msgs"]:
                    ingest.setdefault((table, seq), [arrived, *times])
            elif kind == "feed":
                if "cpu" in row:
                    builds.append((row["enter"], row["cpu"]))
                times = (row["enter"], row.get("call"), row.get("ret"))
                feeds += [(row["enter"], table, seq, times) for table, seq in row["c"]]
            elif kind == "recv":
                table, seq = row["c"]
                recv.append((row["arr"], table, seq, (row["arr"], row["at"])))
            elif kind == "sent":
                sent_rows += [(row["at"], table, seq, row["at"]) for table, seq in row["c"]]
            elif kind == "fetch":
                fetches.append(row["out"] - row["at"])
    feed_index = _firsts(feeds)
    edge_index = [(_firsts(r), _firsts(s)) for r, s in edges.values() if r]
    client = _firsts([(at / 1e9, table, seq, at / 1e9) for table, seq, at in marks])
    names = [name for name, _ in STAGES]
    cumulative: dict[str, list[float]] = {name: [] for name in names}
    steps: dict[str, list[float]] = {name: [] for name in names}
    for table, k, pub_ns, _ack, ok in sent:
        if pub_ns < counted or not ok:
            continue
        seq = setup["events"][table][k]["seq"]
        pub = pub_ns / 1e9
        head = ingest.get((table, seq), [None] * 5)
        feed = _first(feed_index, table, seq) or (None, None, None)
        tail = [_first(client, table, seq)]
        # the edge(s) that wrote it to a commentator (the other one has no subscriber)
        carried = [(r, s, x) for r, s in edge_index if (x := _first(s, table, seq)) is not None]
        for recv, _sent, edge_sent in carried or [(r, s, None) for r, s in edge_index]:
            edge = _first(recv, table, seq) or (None, None)
            times = [*head, *feed, *edge, edge_sent, *tail]
            before = pub
            for name, at in zip(names, times, strict=True):
                if at is None:
                    before = None
                    continue
                cumulative[name].append(1000 * (at - pub))
                if before is not None:
                    steps[name].append(1000 * (at - before))
                before = at
    table_out = {
        name: {
            "what": what,
            "from_publish": e2e_latency.stats([int(x * 1e6) for x in cumulative[name]]),
            "step": e2e_latency.stats([int(x * 1e6) for x in steps[name]]),
        }
        for name, what in STAGES
    }
    fetches_ms = [int(x * 1e9) for x in fetches]
    return {
        "stages": table_out,
        "edges": len(edge_index),
        "hash_fetches": e2e_latency.stats(fetches_ms),
        "feed_builds": feed_builds(builds, ingest, counted / 1e9),
    }


def feed_builds(
    builds: list[tuple[float, float]], ingest: dict[tuple[int, int], list[Any]], start: float
) -> dict[str, Any]:
    """The feed publishes of the window: how many, the events journaled between two (each
    publish covers those), the CPU of one (its build) p50, and a least-squares fit of CPU =
    fixed + per event x events: what a publish costs whatever it covers, and per event."""
    import numpy as np

    journaled = sorted(t[3] for t in ingest.values() if t[3] is not None)
    rows = []
    builds = sorted(builds)
    for (before, _), (at, cpu) in itertools.pairwise(builds):
        if at >= start:
            n = bisect.bisect_left(journaled, at) - bisect.bisect_left(journaled, before)
            rows.append((n, cpu))
    if len(rows) < 3:
        return {"n": len(rows)}
    events = np.array([r[0] for r in rows], dtype=float)
    cpu = np.array([r[1] for r in rows], dtype=float)
    (per_event, fixed), *_ = np.linalg.lstsq(
        np.stack([events, np.ones_like(events)], axis=1), cpu, rcond=None
    )
    return {
        "n": len(rows),
        "events_per_publish_p50": float(np.median(events)),
        "cpu_ms_p50": round(1000 * float(np.median(cpu)), 1),
        "fit_fixed_ms": round(1000 * float(fixed), 1),
        "fit_per_event_ms": round(1000 * float(per_event), 3),
    }


def stage_lines(name: str, r: dict[str, Any]) -> str:
    """The stages of one point, a line each: p50 / p99 from the PUBLISH, and of the step."""
    got = r.get("stages")
    if not got:
        return ""
    lines = [f"{r['tables']} tables {name}: stages (ms, p50 / p99 from PUBLISH | of the step)"]
    for stage, row in got["stages"].items():
        a, b = row["from_publish"], row["step"]
        lines.append(
            f"  {stage:15} {a.get('p50_ms')} / {a.get('p99_ms')}"
            f"  | {b.get('p50_ms')} / {b.get('p99_ms')}  (n {a.get('n')})"
        )
    lines.append(f"  feed publishes: {got['feed_builds']}")
    fetch = got["hash_fetches"]
    if fetch.get("n"):
        p50, p99 = fetch.get("p50_ms"), fetch.get("p99_ms")
        lines.append(f"  hash fetches: {fetch.get('n')}, p50 / p99 {p50} / {p99} ms")
    return "\n".join(lines)


def sustained(point: dict[str, Any]) -> bool:
    lat = point["latency"]
    p99 = max(lat["all"].get("p99_ms", math.inf), lat["ack"].get("p99_ms", math.inf))
    return bool(lat["missing"] == 0) and point["accepted_in_window"] > 0 and p99 < BEHIND_MS


# -- the runs ------------------------------------------------------------------------------------


def measure(args: argparse.Namespace, trees: dict[str, Path], root: Path) -> dict[str, Any]:
    """Every point on every tree, the trees alternating point after point."""
    out: dict[str, Any] = {"points": []}
    for i, tables in enumerate(args.tables):
        setup = plan(tables, args.seconds, args.warmup, args.rate, args.seed)
        names = list(trees) if i % 2 == 0 else list(reversed(trees))
        point: dict[str, Any] = {"tables": len(setup["tables"])}
        for name in names:
            # (a point's own folder: its logs are appended to, and a repeated point, 480,480
            # say, found the Redis "ready" line of the point before and connected too soon)
            work = root / f"{i}-{tables}-{name}"
            result = run_point(
                work,
                setup,
                trees[name],
                args.clients,
                args.rate,
                args.seed,
                args.warmup,
                trace=args.trace,
                desk_procs=args.desk_procs,
                feed=args.feed,
            )
            if args.saturate:
                result["saturation"] = saturation(args, tables, trees[name], root / f"{i}-{name}")
            point[name] = result
            print(summary(name, result), flush=True)
            if args.trace:
                print(stage_lines(name, result), flush=True)
            if args.json:  # what is measured so far, should a later point fail
                args.json.write_text(json.dumps({**out, "partial": point}, indent=1) + "\n")
        if "against" in point:
            point["ratios"] = ratios(point["this"], point["against"])
            print(f"{point['tables']} tables  this/against: {point['ratios']}", flush=True)
        out["points"].append(point)
    return out


def saturation(args: argparse.Namespace, tables: int, tree: Path, root: Path) -> dict[str, Any]:
    """Raise the rate x1.5 from ``--rate`` until not ``sustained``: the highest sustained."""
    rate, best, steps = args.rate, 0.0, []
    warmup = min(args.warmup, 2.0)
    while True:
        setup = plan(tables, args.saturate_seconds, warmup, rate, args.seed)
        work = root / f"sat-{tables}-{rate:g}"
        point = run_point(work, setup, tree, 0, rate, args.seed, warmup)
        events_per_s = point["accepted_in_window"] / max(point["window_s"], 1e-9)
        ok = sustained(point)
        lat = point["latency"]
        steps.append(
            {
                "rate": rate,
                "events_per_s": round(events_per_s),
                "sustained": ok,
                # why it stopped, and who had the CPU (% of one core, per process group)
                "ack_p99_ms": lat["ack"].get("p99_ms"),
                "e2e_p99_ms": lat["all"].get("p99_ms"),
                "missing": lat["missing"],
                "ingest_cpu_ms_per_event": point["ingest_cpu_ms_per_event"],
                "cpu_pct": point["cpu_pct"],
                "loadavg": point["machine"]["loadavg"],
            }
        )
        print(f"  saturation step: {json.dumps(steps[-1])}", flush=True)
        if not ok:
            break
        best = max(best, events_per_s)
        if len(steps) == SATURATION_STEPS:
            break
        rate *= 1.5
    return {"highest_sustained_events_per_s": round(best), "steps": steps}


RATIO_KEYS = (
    "ingest_cpu_ms_per_event",
    "edges_cpu_us_per_frame",
    "edges_cpu_ms_per_event",
    "edges_kib_per_connection",
    "edges_kib_per_connection_after",
)


def ratios(this: dict[str, Any], against: dict[str, Any]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key in RATIO_KEYS:
        out[key] = round(this[key] / against[key], 3) if against[key] else None
    feed_this, feed_against = this["feed"]["max_bytes"], against["feed"]["max_bytes"]
    out["feed_max_bytes"] = round(feed_this / feed_against, 3) if feed_against else None
    for kind in ("voluntary", "involuntary"):
        a, b = this["ingest_switches_per_event"][kind], against["ingest_switches_per_event"][kind]
        out[f"ingest_{kind}_switches_per_event"] = round(a / b, 3) if b else None
    p99 = this["latency"]["all"].get("p99_ms"), against["latency"]["all"].get("p99_ms")
    out["e2e_p99"] = round(p99[0] / p99[1], 3) if p99[0] and p99[1] else None
    ack = this["latency"]["ack"].get("p99_ms"), against["latency"]["ack"].get("p99_ms")
    out["ack_p99"] = round(ack[0] / ack[1], 3) if ack[0] and ack[1] else None
    return out


def summary(name: str, r: dict[str, Any]) -> str:
    lat, feed = r["latency"], r["feed"]
    switches = r.get("ingest_switches_per_event", {"voluntary": None, "involuntary": None})
    return (
        f"{r['tables']} tables {name}: ingest {r['ingest_cpu_ms_per_event']} ms CPU/event"
        f" ({r['cpu_pct']['ingest']} % of a core, {r['acked_pct']} % acked,"
        f" {switches['voluntary']} + {switches['involuntary']} context switches/event),"
        + (
            f" projector {r['projector_cpu_ms_per_event']} ms CPU/event (both"
            f" {r['ingest_and_projector_cpu_ms_per_event']}),"
            if "projector_cpu_ms_per_event" in r
            else ""
        )
        + f" edges {r['edges_cpu_us_per_frame']} µs/frame ({r['edges_cpu_ms_per_event']} ms/event),"
        f" {r['edges_kib_per_connection']}"
        f" KiB/conn ({r['edges_kib_per_connection_after']} after the load),"
        f" feed max {feed['max_bytes']} B (p99 {feed['p99_bytes']}, over 64 KB"
        f" {feed['over_64k']}), e2e p99 {lat['all'].get('p99_ms')} ms (ack p99"
        f" {lat['ack'].get('p99_ms')} ms), load"
        f" {r['machine']['loadavg']} on {r['machine']['nproc']} CPUs"
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_desk":
        port, token, path, out = argv[1:5]
        asyncio.run(commentators(int(port), token, Path(path), Path(out)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    scale = parser.add_mutually_exclusive_group()
    scale.add_argument("--quick", action="store_true", help="6 tables, 20 clients (smoke)")
    scale.add_argument("--full", action="store_true", help="240 tables, 10,000 clients")
    parser.add_argument("--tables", help="points, comma-separated (default 60,240,480,720)")
    parser.add_argument("--clients", type=int, help="spectators (default 200)")
    parser.add_argument("--seconds", type=float, help="measured window per point (default 45)")
    parser.add_argument("--warmup", type=float, help="s of load before the window (default 5)")
    parser.add_argument("--rate", type=float, default=1.0, help="events/s per table (mean)")
    parser.add_argument("--seed", type=int, default=1, help="the bots' and the phases' seed")
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    parser.add_argument("--saturate", action="store_true", help="find the highest rate")
    parser.add_argument("--saturate-seconds", type=float, default=15.0)
    parser.add_argument(
        "--desk-procs", type=int, default=0, help="commentator processes (0: one per 120)"
    )
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument(
        "--feed",
        choices=("inline", "separate"),
        default="inline",
        help="the ingest publishes the feed (inline: docker-compose.yml), or a projector does",
    )
    parser.add_argument(
        "--trace", action="store_true", help="time the stages (bench/stage_trace.py)"
    )
    args = parser.parse_args(argv)
    tables, clients, seconds, warmup = SCALES[
        "quick" if args.quick else "full" if args.full else "default"
    ]
    args.tables = [int(x) for x in args.tables.split(",")] if args.tables else tables
    args.clients = clients if args.clients is None else args.clients
    args.seconds = args.seconds or seconds
    args.warmup = warmup if args.warmup is None else args.warmup
    trees = {"this": ROOT}
    if args.against is not None:
        trees["against"] = args.against.resolve()
    with tempfile.TemporaryDirectory(prefix="duplicast-cost-") as tmp:
        result = measure(args, trees, Path(tmp))
    result["trees"] = {k: str(v) for k, v in trees.items()}
    text = json.dumps(result, indent=1)
    if args.json:
        args.json.write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
