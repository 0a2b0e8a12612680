"""Phones on the public site beside the broadcast overlays, through the shipped nginx (issue #34.6).

    python bench/site_phones.py --quick          # ~40 s: 12 tables, 100 phones + 100 overlays
    python bench/site_phones.py                  # reduced: 60 tables, 1,000 + 1,000, 60 s
    python bench/site_phones.py --phones 10000 --overlays 1000 --seconds 120   # the target
    python bench/site_phones.py --no-phones      # the overlays alone (the baseline)

The processes of ``bench/e2e_latency.py`` (``bench/e2e_processes.py``): a private Redis, one
``duplicast serve --role ingest`` and two ``--role edge`` on one port, the console fleet
playing every table's bot events at ``--rate`` actions/s per table (the event load: 60 tables x
1/s), here with the sequential schedule and no release delay, so that groups release deals
during the run. In front of the edges: Debian's nginx with the SHIPPED ``deploy/nginx.conf``
(``tests/nginx.py``), and every client goes through it.

- **Overlays**: ``bench/wsclients.c`` in marker mode, with the commentator token (uncapped by
  nginx), client i watching ``table:{i mod tables + 1}``, as e2e_latency.py measures them:
  console publish -> the frame that adds the action's row (kernel receive time).
- **Phones**: child processes of 2,500 each (asyncio, ``websockets``) of public websockets (no
  token), each from its own loopback source address (127.0.x.y, at most 200 per address: nginx
  caps a spectator address at 256) subscribed to what a phone on the site follows: ``standings``
  and one deal's traveller ``deal:{d}`` (phone i: deal i mod deals + 1). Public topics move only
  when a deal is released (for every group at once, once every table that plays it has finished
  it; no release delay here), so each ``deal:{d}`` frame is timed from the publish of the event
  that completed deal d at its last table, and each ``standings`` frame from the latest such
  release before it: console publish -> the public frame, which includes the hub's release tick
  (every 0.25 s). Receive times are this process's reads (``time.monotonic_ns``), not the
  kernel's (the overlays' are the kernel's); frames are read as bytes and told apart by their
  first 160 bytes, never parsed (a ``json.loads`` of each phone's copy of the standings made the
  phones' own process the latency measured).
  Plus, from the same process, each phone's periodic HTTP GET (every ``--poll`` s, spread) of a
  data URL with ``If-None-Match`` of its last ETag, over a pool of keep-alive connections:
  the site's ``/site/data/...`` once hub/serve/site.py is merged (``--urls site``), until then
  the public vMix data sources (``--urls vmix``: ``/api/vmix/leaderboard.json`` and
  ``/api/vmix/compare/{d}/{s}.json``, whose ETag code the site's data copies); status counts
  and p99.

Reported: both p99s (``overlays.e2e``, ``phones.release``), their ratio, the overlays' p99
against a run without phones when ``--baseline`` is given, CPU of each process, the machine's
load. Loopback only; every process is ended by its pid.
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
for where in (ROOT, HERE, ROOT / "tests"):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

import e2e_latency  # noqa: E402
import edge_bench  # noqa: E402
from e2e_processes import (  # noqa: E402
    client_command,
    cpu_seconds,
    machine_busy,
    spectators,
    start_hub,
    tell,
)
from ingest_bench import large_data  # noqa: E402
from nginx import Nginx  # noqa: E402

from hub.domain.config import parse_config  # noqa: E402

PER_ADDRESS = 200  # phones per loopback source address (nginx: 256 per spectator address)
PER_PROCESS = 2500  # phones per child process (one asyncio loop: 10,000 in one fell behind)


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (nginx's workers), from /proc."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(stat.parent.name))
    return out


def tournament(tid: str, tables: int, deals: int) -> tuple[str, Any]:
    """The bench tournament (groups of 6 x 6), sequential schedule: every table of a group
    plays deal r in round r, so groups release deals within a short run."""
    data = large_data(tid, math.ceil(tables / 6), deals)
    data["schedule"] = {"method": "sequential"}
    return e2e_latency.toml_text(data), parse_config(data, "<bench>")


# -- the phones (child process) ----------------------------------------------------------------


async def phones_main(
    ws_url: str, http: str, first: int, count: int, deals: int, poll: float, urls: str, out: Path
) -> None:
    """Phones ``first`` .. ``first + count - 1`` (one of ``PER_PROCESS``-sized children)."""
    import httpx
    import websockets

    frames: list[tuple[int, int]] = []  # (deal, receive ns) of each deal:{d} frame with data
    standings: list[int] = []  # receive ns of each standings frame
    closes: dict[str, int] = {}
    stop = asyncio.Event()
    ready = 0
    all_ready = asyncio.Event()
    handshakes = asyncio.Semaphore(256)  # at most so many opening at once: no SYN storm

    async def phone(i: int) -> None:
        nonlocal ready
        d = i % deals + 1
        host = f"127.0.{1 + i // (PER_ADDRESS * 250)}.{1 + (i // PER_ADDRESS) % 250}"
        try:
            async with handshakes:
                ws = await websockets.connect(
                    ws_url,
                    local_addr=(host, 0),
                    max_size=2**22,
                    ping_interval=None,
                    open_timeout=60,
                    origin=None,
                )
            async with ws:
                await ws.send(json.dumps({"op": "subscribe", "topics": ["standings", f"deal:{d}"]}))
                seen = set()
                mine = f'"deal:{d}"'.encode()
                while True:  # until cancelled at the stop (no timer per phone: 10,000 of them
                    # waking twice a second were this process's own load)
                    raw = await ws.recv(decode=False)  # bytes, undecoded: not what is measured
                    at = time.monotonic_ns()
                    head = raw[:160]  # {"type": ..., "topic": ..., "seq": ...: no JSON parse
                    topic = (
                        b"standings" if b'"standings"' in head else mine if mine in head else b""
                    )
                    if topic and topic not in seen and b'"snapshot"' in head:
                        seen.add(topic)  # the answer to the subscribe (the deal's is empty)
                        if len(seen) == 2:
                            ready += 1
                            if ready == count:
                                all_ready.set()
                        continue
                    if topic == b"standings":
                        standings.append(at)
                    elif topic == mine:
                        frames.append((d, at))
        except Exception as exc:  # counted, reported
            closes[type(exc).__name__] = closes.get(type(exc).__name__, 0) + 1

    gets: list[int] = []
    status: dict[str, int] = {}

    async def poller(client: httpx.AsyncClient, share: list[int]) -> None:
        etags: dict[str, str] = {}
        period = poll / max(len(share), 1)
        k = 0
        while not stop.is_set():
            i = share[k % len(share)]
            k += 1
            d = i % deals + 1
            if urls == "site":
                path = "/site/data/standings.json" if k % 2 else f"/site/data/deal/{d}.json"
            else:
                seat = i % 6 + 1
                path = (
                    "/api/vmix/leaderboard.json" if k % 2 else f"/api/vmix/compare/{d}/{seat}.json"
                )
            headers = {"if-none-match": etags[path]} if path in etags else {}
            t0 = time.monotonic_ns()
            try:
                r = await client.get(path, headers=headers)
                gets.append(time.monotonic_ns() - t0)
                status[str(r.status_code)] = status.get(str(r.status_code), 0) + 1
                if "etag" in r.headers:
                    etags[path] = r.headers["etag"]
            except httpx.HTTPError as exc:
                status[type(exc).__name__] = status.get(type(exc).__name__, 0) + 1
            await asyncio.sleep(period)

    tasks = [asyncio.create_task(phone(i)) for i in range(first, first + count)]
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        await asyncio.wait_for(all_ready.wait(), 60 + count / 50)
    except TimeoutError:
        pass
    print(json.dumps({"connected": ready}), flush=True)
    line = (await reader.readline()).decode().split()
    start_ns = int(line[1]) if len(line) > 1 else time.monotonic_ns()
    frames.clear()
    standings.clear()
    pool = 32
    limits = httpx.Limits(max_connections=pool, max_keepalive_connections=pool)
    cpu0 = time.process_time()
    async with httpx.AsyncClient(base_url=http, limits=limits, timeout=10) as client:
        shares = [list(range(first + j, first + count, pool)) for j in range(pool)]
        polls = [asyncio.create_task(poller(client, s)) for s in shares if s]
        await reader.readline()  # "stop"
        stop.set()
        await asyncio.gather(*polls, return_exceptions=True)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    out.write_text(
        json.dumps(
            {
                "start_ns": start_ns,
                "connected": ready,
                "deals": deals,
                "frames": frames,
                "standings_at": standings,
                "closes": closes,
                "gets_ns": gets,
                "status": status,
                "cpu_s": time.process_time() - cpu0,
            }
        )
    )
    print("done", flush=True)


def merged(into: dict[str, Any] | None, got: dict[str, Any]) -> dict[str, Any]:
    """One phone process's figures added to the others'."""
    if into is None:
        return got
    for key in ("connected", "cpu_s"):
        into[key] += got[key]
    for key in ("frames", "standings_at", "gets_ns"):
        into[key].extend(got[key])
    for key in ("closes", "status"):
        for name, n in got[key].items():
            into[key][name] = into[key].get(name, 0) + n
    return into


# -- one run -----------------------------------------------------------------------------------


def releases(
    config: Any, events: dict[int, list[dict[str, Any]]], sent: list[list[Any]]
) -> dict[int, int]:
    """Per deal released in the run, the publish time (ns) of the event that completed it at
    the last table: a deal is public for all groups or none, once every table of every group
    that plays it has finished it (no release delay here). A table finished a deal with the
    last of its events before its next ``start``."""
    pub = {(t, k): at for t, k, at, _ack, _ok in sent}
    ended: dict[tuple[int, int], int] = {}  # (table, deal) -> publish of its last event
    for t, evs in events.items():
        deal = None
        for k, e in enumerate(evs):
            if e["type"] == "start":
                if deal is not None and (t, k - 1) in pub:
                    ended[(t, deal)] = pub[(t, k - 1)]
                deal = e["deal"]
    out: dict[int, int] = {}
    for d in range(1, config.deals + 1):
        times = [ended.get((t, d)) for g in config.groups_playing(d) for t in g.tables]
        if times and all(x is not None for x in times):
            out[d] = max(x for x in times if x is not None)
    return out


def phone_figures(
    config: Any,
    events: dict[int, list[dict[str, Any]]],
    sent: list[list[Any]],
    got: dict[str, Any],
    counted: int,
) -> dict[str, Any]:
    """Each ``deal:{d}`` frame timed from its deal's release, each ``standings`` frame from the
    latest release before it (the public standings move only when a deal is released)."""
    done = releases(config, events, sent)
    order = sorted(done.values())
    deal_ms, standings_ms, unmatched = [], [], 0
    for d, received in got["frames"]:
        at = done.get(d)
        if at is None or at > received:
            unmatched += 1
        elif at >= counted:
            deal_ms.append(received - at)
    for received in got["standings_at"]:
        j = bisect.bisect_right(order, received) - 1
        if j < 0:
            unmatched += 1
        elif order[j] >= counted:
            standings_ms.append(received - order[j])
    phones, deals = got["connected"], got["deals"]
    watching = {d: sum(1 for i in range(phones) if i % deals + 1 == d) for d in done}
    expected = sum(watching[d] for d, at in done.items() if at >= counted)
    return {
        "connected": phones,
        "deals_released": len(done),
        "deal_frames_expected": expected,  # each phone, the release of the deal it watches
        "deal_frames": len(deal_ms),
        "standings_frames_expected": phones * sum(1 for at in order if at >= counted),
        "standings_frames": len(standings_ms),
        "unmatched_frames": unmatched,
        "release": e2e_latency.stats(deal_ms + standings_ms),  # both kinds of frame
        "release_deal_frames": e2e_latency.stats(deal_ms),
        "release_standings_frames": e2e_latency.stats(standings_ms),
        "http": {"requests": len(got["gets_ns"]), "status": got["status"]}
        | e2e_latency.stats(got["gets_ns"]),
        "closes": got["closes"],
    }


def run(args: argparse.Namespace, phones: int) -> dict[str, Any]:
    edge_bench.raise_nofile()
    binary = edge_bench.wsclients_binary()
    tid = f"site-{os.getpid()}-{os.urandom(3).hex()}"
    per_table = int((args.warmup + args.seconds) * args.rate) + 1
    deals = max(2, math.ceil(per_table / 12))
    text, config = tournament(tid, args.tables, deals)
    events = e2e_latency.first_events(e2e_latency.session_events(config, args.seed), per_table)
    token = base64.urlsafe_b64encode(os.urandom(24)).decode()
    with (
        tempfile.TemporaryDirectory(prefix="duplicast-site-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        work = Path(tmp)
        events_path = work / "events.msgpack"
        from hub.wire import codec

        events_path.write_bytes(codec.pack({str(t): v for t, v in events.items()}))
        redis, url, ingest, edges, port = start_hub(work, stack, text, token, 0, "always")
        lb = stack.enter_context(
            Nginx(
                work / "nginx",
                {"edge1:8000": f"127.0.0.1:{port}", "edge2:8000": f"127.0.0.1:{port}"},
            )
        )
        n = len(config.tables)
        marks_path = work / "marks.bin"
        command = client_command(binary, f"/ws?token={token}", n, marks_path, lb.port)
        pools = [
            spectators(
                stack, [*command, str(args.overlays), "0", "table:%d"], args.overlays, "normal"
            )
        ]
        phone_procs: list[subprocess.Popen[bytes]] = []
        phone_outs: list[Path] = []
        for first in range(0, phones, PER_PROCESS):
            phone_outs.append(work / f"phones-{first}.json")
            phone_cmd = [sys.executable, __file__, "_phones", lb.ws_url, lb.url, str(first)]
            phone_cmd += [str(min(PER_PROCESS, phones - first)), str(deals), str(args.poll)]
            phone_cmd += [args.urls, str(phone_outs[-1])]
            phone_procs.append(
                stack.enter_context(
                    edge_bench.started(phone_cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                )
            )
        connected = 0
        for proc in phone_procs:
            assert proc.stdout is not None
            connected += json.loads(proc.stdout.readline())["connected"]
        if connected < phones:
            print(f"site_phones: only {connected} of {phones} phones subscribed", file=sys.stderr)
        time.sleep(1.0)
        start_ns = time.monotonic_ns()
        tell(pools + phone_procs, f"start {start_ns}")
        procs = {"ingest": [ingest.pid], "edges": [e.pid for e in edges], "redis": [redis.pid]}
        procs["nginx"] = [lb.process.pid, *children(lb.process.pid)] if lb.process else []
        before = {k: sum(cpu_seconds(p) for p in v) for k, v in procs.items()}
        busy0, wall0 = machine_busy(), time.monotonic()
        acks_path = work / "acks.json"
        fleet_cmd = [sys.executable, e2e_latency.__file__, "_fleet", url, tid, str(events_path)]
        fleet_cmd += [str(args.rate), str(acks_path)]
        fleet = subprocess.run(
            fleet_cmd, timeout=(args.warmup + args.seconds) * 3 + 60, capture_output=True
        )
        if fleet.returncode:
            raise RuntimeError(f"the console fleet failed: {fleet.stderr.decode()[-2000:]}")
        time.sleep(args.drain)
        wall = time.monotonic() - wall0
        cpu = {k: sum(cpu_seconds(p) for p in v) - before[k] for k, v in procs.items()}
        busy1 = machine_busy()
        tell(pools + phone_procs, "stop")
        read = json.loads(pools[0].stdout.readline()) if pools[0].stdout else {}
        got = None
        for proc, path in zip(phone_procs, phone_outs, strict=True):
            assert proc.stdout is not None
            proc.stdout.readline()
            got = merged(got, json.loads(path.read_text()))
        marks = array("q", marks_path.read_bytes())
        timed = json.loads(acks_path.read_text())
    counted = timed["start_ns"] + int(args.warmup * 1e9)
    sent = timed["sent"]
    result: dict[str, Any] = {
        "overlays": e2e_latency.figures(events, sent, marks, args.overlays, n, counted)
    }
    result["overlays"]["clients_closes"] = read.get("closes", {})
    if got is not None:
        result["phones"] = phone_figures(config, events, sent, got, counted)
        o99 = result["overlays"]["e2e"].get("p99_ms")
        p99 = result["phones"]["release"].get("p99_ms")
        result["ratio_p99_phones_to_overlays"] = round(p99 / o99, 2) if o99 and p99 else None
        result["cpu_pct_phones_process"] = round(100 * got["cpu_s"] / wall, 1)
    result["load"] = {
        "tables": n,
        "actions_per_s_per_table": args.rate,
        "overlays": args.overlays,
        "phones": phones,
        "poll_s": args.poll,
        "urls": args.urls,
        "seconds": args.seconds,
        "events_published": len(sent),
        "deals_released_in_run": len(releases(config, events, sent)),
    }
    result["cpu_pct"] = {k: round(100 * v / wall, 1) for k, v in cpu.items()}
    busy, total = busy1[0] - busy0[0], busy1[1] - busy0[1]
    result["machine"] = {
        "nproc": os.cpu_count(),
        "busy_pct_of_all_cores": round(100 * busy / max(total, 1), 1),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }
    return result


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_phones":
        ws, http, first, count, deals, poll, urls, out = argv[1:9]
        asyncio.run(
            phones_main(ws, http, int(first), int(count), int(deals), float(poll), urls, Path(out))
        )
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--quick", action="store_true", help="12 tables at 3 actions/s, 100 + 100, 20 s"
    )
    parser.add_argument("--tables", type=int, default=60)
    parser.add_argument("--phones", type=int, default=1000)
    parser.add_argument("--overlays", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--drain", type=float, default=3.0)
    parser.add_argument("--rate", type=float, default=1.0, help="actions per second per table")
    parser.add_argument("--poll", type=float, default=10.0, help="s between a phone's GETs")
    parser.add_argument("--urls", choices=("vmix", "site"), default="vmix")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-phones", action="store_true", help="the overlays alone")
    parser.add_argument("--baseline", action="store_true", help="also a run without phones")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    if args.quick:
        args.tables, args.phones, args.overlays, args.seconds, args.rate = 12, 100, 100, 20.0, 3.0
    out: dict[str, Any] = {}
    if args.baseline or args.no_phones:
        out["without_phones"] = run(args, 0)
    if not args.no_phones:
        out["with_phones"] = run(args, args.phones)
    if args.baseline and not args.no_phones:
        a = out["without_phones"]["overlays"]["e2e"].get("p99_ms")
        b = out["with_phones"]["overlays"]["e2e"].get("p99_ms")
        out["overlays_p99_with_over_without"] = round(b / a, 2) if a and b else None
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    random.seed(0)
    sys.exit(main())
