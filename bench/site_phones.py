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
- **Phones**: one ``bench/wsclients.c`` process too (epoll; the Python asyncio phones of
  before, in child processes of 2,500, spent on their own CPU a large part of what a release
  burst measured on 2 cores), of public websockets (no token), ``-a 200``: each group of 200
  from its own loopback source address (127.0.x.y: nginx caps a spectator address at 256),
  subscribed to what a phone on the site follows, ``--phone-topics``: ``deal`` is one deal's
  traveller ``deal:{d}`` (phone i: deal i mod deals + 1), any other name a site-wide topic
  (default ``released``: what every page of the site follows; ``standings``, what it followed
  before, to compare). Public topics move only when a deal is
  released (for every group at once, once every table that plays it has finished it; no
  release delay here), so each ``deal:{d}`` frame is timed from the publish of the event that
  completed deal d at its last table, and each site-wide frame from the latest such release
  before it: console publish -> the public frame (``phones.release``), which includes the
  hub's release tick (every 0.25 s) and its embargo. Frames are never parsed: the C client
  logs each one's kernel receive time and the "topic" and "seq" of its head (``-q``).
  Plus, from child processes of ``PER_PROCESS`` phones (Python, light at ``--poll 60``), each
  phone's periodic HTTP GET (every ``--poll`` s, spread; 0: none) of a data URL with
  ``If-None-Match`` of its last ETag, over a pool of keep-alive connections: the site's
  ``/site/data/...`` (``--urls site``), or the public vMix data sources (``--urls vmix``:
  ``/api/vmix/leaderboard.json`` and ``/api/vmix/compare/{d}/{s}.json``); status counts and p99.
- **The re-read at a release** (``--refetch``, the default; ``--no-refetch`` to compare; with
  it ``--poll`` defaults to 0): what a page of the site does at each frame of ``released``
  (overlays/js/site/site.js ``onReleased``): the feed stamper, seeing a public ``released``
  message on the feed channel, tells the poll processes, and each phone there re-reads its
  page's data (``data/event.json``, then the ranking, ``standings.json`` (+ ``stats.json``),
  for even phones on the index page, or deal ``(i // 2) mod deals + 1``'s data for odd phones
  on its page, once released) after a uniform random wait in [0, 1.5 s] (``SPREAD_MS``), each GET
  with ``If-None-Match`` of the phone's last ETag; a frame that comes while a phone's re-read
  still waits is covered by it (``coalesced``). Reported apart (``phones.refetch``): counts,
  GET statuses and latency, each re-read's time, and per frame the time from its stamp on the
  feed to the last re-read answered that covers it (``release_to_last_answer``).
- **The edge's latency** (``overlays.edge``, ``phones.edge``): the bench SUBSCRIBEs to the feed
  channel on a plain socket with ``SO_TIMESTAMPNS`` and stamps each message's (audience,
  topic, seq) with its kernel receive time (a delta in parts: its last part); a client's frame
  of that (topic, seq) is timed from it: the edge's read of the feed, its fan-out, nginx and
  the kernel, without the hub's release tick or embargo. Overlays read the ``live`` audience,
  phones ``public``. A frame with no feed message (a snapshot from the hash) is counted as
  ``not_on_feed``.

Reported: the p99s (``overlays.e2e``, ``phones.release``; ``overlays.edge``, ``phones.edge``)
and the ratio phones / overlays of each (``ratio_p99_phones_to_overlays``: the issue asks the
edge's within 2x), the overlays' p99s against a run without phones when ``--baseline`` is
given, the phones' generator (its CPU per frame), CPU of each process, the machine's load.
Loopback only; every process is ended by its pid.
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
import socket
import struct
import subprocess
import sys
import tempfile
import threading
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
from hub.wire.channels import Channels  # noqa: E402

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux
PER_ADDRESS = 200  # phones per loopback source address (nginx: 256 per spectator address)
PER_PROCESS = 2500  # phones whose data GETs one child process makes
REREAD_PER_PROCESS = 500  # with --refetch: a release's re-reads of 2,500 phones in 1.5 s


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


# -- the phones' polls (child processes) --------------------------------------------------------


SPREAD_S = 1.5  # overlays/js/site/site.js SPREAD_MS: a page's re-read waits up to this long


def page_reads(i: int, deals: int, event: dict[str, Any]) -> list[str]:
    """What phone ``i``'s page reads after ``data/event.json`` at a refresh (site.js ``load``):
    even phones are on the index page (the ranking: ``standings.json``, ``stats.json`` when
    the event has statistics), odd ones on deal ``(i // 2) mod deals + 1``'s page (its data,
    once the event lists the deal as released: before, a page does not ask)."""
    if i % 2 == 0:
        return ["data/standings.json"] + (["data/stats.json"] if event.get("stats") else [])
    d = (i // 2) % deals + 1
    return [f"data/deal/{d}.json"] if d in event.get("released", ()) else []


async def pollers_main(
    http: str,
    first: int,
    count: int,
    deals: int,
    poll: float,
    urls: str,
    refetch: bool,
    out: Path,
) -> None:
    """The data GETs of phones ``first`` .. ``first + count - 1``, over a pool of keep-alive
    connections, each with ``If-None-Match`` of that phone's last ETag for the URL:

    - periodic polls (``poll`` > 0): each phone a GET every ``poll`` s (spread);
    - the re-read at a ``released`` frame (``refetch``): on each "release NS K" line, each phone
      schedules its page's re-read (``data/event.json``, then its page's data:
      ``page_reads``) after a uniform random wait in [0, ``SPREAD_S``], as site.js
      ``onReleased``/``refreshSoon`` do: a frame that comes while the phone's re-read is still
      waiting is covered by it (``coalesced``), not a second one.

    Reads "start NS", then release lines, then "stop" on stdin; at "stop", waits for the
    re-reads under way; writes its figures to ``out``."""
    import httpx

    stop = asyncio.Event()
    gets: list[int] = []
    status: dict[str, int] = {}
    re_gets: list[int] = []  # each re-read GET's latency
    re_status: dict[str, int] = {}
    re_reads: list[int] = []  # each re-read: its first GET sent -> its last GET answered
    last_answer: dict[str, int] = {}  # release K -> the last re-read answered that covers it
    waiting: dict[int, list[str]] = {}  # phone -> the releases its waiting re-read covers
    tally = {"signals": 0, "refreshes": 0, "coalesced": 0, "failed": 0}
    etags: dict[int, dict[str, str]] = {}  # phone -> URL -> its last ETag
    events: dict[str, dict[str, Any]] = {}  # event.json by ETag (parsed once a process)
    tasks: set[asyncio.Task[None]] = set()
    pool = 32
    # At most a request per connection handed to httpx: its pool's queue, a release's
    # thousands of requests waiting in it, costs this process a core (its assignment of
    # requests to connections goes over all of them at each turn) and times them out.
    sending = asyncio.Semaphore(pool)

    def count_status(table: dict[str, int], name: str) -> None:
        table[name] = table.get(name, 0) + 1

    async def get(client: httpx.AsyncClient, i: int, path: str) -> str:
        """One GET, its body read as sent (gzip, not decoded: a phone's browser does that on
        its own CPU, not the bench's), but ``data/event.json``'s, parsed once an ETag. Its
        ETag."""
        mine = etags.setdefault(i, {})
        headers = {"if-none-match": mine[path]} if path in mine else {}
        async with sending:  # (a free connection: timed from here)
            t0 = time.monotonic_ns()
            async with client.stream("GET", path, headers=headers) as r:
                tag = r.headers.get("etag", "")
                if path.endswith("/event.json") and r.status_code == 200 and tag not in events:
                    events[tag] = json.loads(await r.aread())
                else:
                    async for _ in r.aiter_raw():
                        pass
            re_gets.append(time.monotonic_ns() - t0)
        count_status(re_status, str(r.status_code))
        if tag:
            mine[path] = tag
        return tag

    async def reread(client: httpx.AsyncClient, i: int) -> None:
        covers = waiting.pop(i, [])
        tally["refreshes"] += 1
        t0 = time.monotonic_ns()  # (its wait for one of the pool's connections counts)
        try:
            event = events[await get(client, i, "/site/data/event.json")]
            for path in page_reads(i, deals, event):
                await get(client, i, "/site/" + path)
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            tally["failed"] += 1
            count_status(re_status, type(exc).__name__)
            return
        end = time.monotonic_ns()
        re_reads.append(end - t0)
        for k in covers:
            last_answer[k] = max(last_answer.get(k, 0), end)

    def due(client: httpx.AsyncClient, i: int) -> None:
        task = asyncio.create_task(reread(client, i))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def released(client: httpx.AsyncClient, k: str) -> None:
        tally["signals"] += 1
        loop = asyncio.get_running_loop()
        for i in range(first, first + count):
            if i in waiting:  # a re-read already waiting covers this frame too
                waiting[i].append(k)
                tally["coalesced"] += 1
                continue
            waiting[i] = [k]
            loop.call_later(random.uniform(0, SPREAD_S), due, client, i)

    async def poller(client: httpx.AsyncClient, share: list[int]) -> None:
        mine: dict[str, str] = {}
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
            headers = {"if-none-match": mine[path]} if path in mine else {}
            t0 = time.monotonic_ns()
            try:
                r = await client.get(path, headers=headers)
                gets.append(time.monotonic_ns() - t0)
                count_status(status, str(r.status_code))
                if "etag" in r.headers:
                    mine[path] = r.headers["etag"]
            except httpx.HTTPError as exc:
                count_status(status, type(exc).__name__)
            with contextlib.suppress(TimeoutError):  # (the stop does not wait for a sleep)
                await asyncio.wait_for(stop.wait(), period)

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print("connected", flush=True)
    await reader.readline()  # "start NS"
    limits = httpx.Limits(max_connections=pool, max_keepalive_connections=pool)
    async with httpx.AsyncClient(base_url=http, limits=limits, timeout=10) as client:
        shares = [list(range(first + j, first + count, pool)) for j in range(pool)]
        polls = [asyncio.create_task(poller(client, s)) for s in shares if s and poll > 0]
        while True:
            line = (await reader.readline()).decode().split()
            if not line or line[0] == "stop":
                break
            if line[0] == "release" and refetch:
                released(client, line[2])
        stop.set()
        await asyncio.gather(*polls, return_exceptions=True)
        give_up = time.monotonic() + 30
        while (waiting or tasks) and time.monotonic() < give_up:
            await asyncio.sleep(0.05)
    out.write_text(
        json.dumps(
            {
                "gets_ns": gets,
                "status": status,
                "refetch": tally
                | {
                    "gets_ns": re_gets,
                    "status": re_status,
                    "rereads_ns": re_reads,
                    "last_answer": last_answer,
                    "unfinished": len(waiting) + len(tasks),
                },
            }
        )
    )
    print("done", flush=True)


# -- the feed channel and the frame logs -------------------------------------------------------


class FeedStamps(threading.Thread):
    """Every message on the tournament's feed channel with the time the kernel received it
    (``SO_TIMESTAMPNS`` on a plain socket SUBSCRIBEd to the channel, moved to
    ``CLOCK_MONOTONIC`` as ``wsclients`` moves its clients' stamps: a stamp taken by a Python
    thread when it got to run was, under load, later than the clients' receipt of the frame),
    decoded after ``stop``: the time each (audience, topic, seq) was on the channel (a delta
    sent in parts: its last part; a snapshot stored in the hash: its notice), which the edge
    latency starts from. A read is stamped with its last segment's time, and the kernel merges
    a segment that comes while the socket still holds one into it, with the later time: a
    message read late is stamped with the arrival of the next, later than the clients' receipt
    of its frame (the CI's 7 of 63 phones' frames ``stamped_after`` under load 7-10). So this
    thread reads at a real-time priority where it may (``SCHED_FIFO``; else nice -10; else as
    it is: ``priority``), woken as a message comes before the machine's busy processes: it
    only waits in ``recvmsg`` and appends."""

    READ = 16384
    # Called (from this thread) with the stamp of each whole public ``released`` message as it
    # comes (``--refetch``: the poll processes' signal), while set.
    notify: Any = None

    def __init__(self, url: str, channel: str) -> None:
        super().__init__(daemon=True)
        from urllib.parse import urlsplit

        where = urlsplit(url)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # A receive buffer that holds a release's burst while this thread waits for a core:
        # a full one would hold Redis's writes back, and stamp them late.
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.settimeout(10)
        self.sock.connect((where.hostname or "127.0.0.1", where.port or 6379))
        name = channel.encode()
        self.sock.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$%d\r\n%s\r\n" % (len(name), name))
        reply = b"*3\r\n$9\r\nsubscribe\r\n$%d\r\n%s\r\n:1\r\n" % (len(name), name)
        self.buf = b""
        while len(self.buf) < len(reply):  # (the reply alone: a message after it is stamped)
            self.buf += self.sock.recv(len(reply) - len(self.buf))
        assert self.buf == reply, self.buf
        self.buf = b""
        self.sock.settimeout(0.2)
        self.got: list[tuple[int, bytes]] = []
        self.done = threading.Event()

    priority = "none"

    def run(self) -> None:
        tid = threading.get_native_id()
        try:
            os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(1))
            self.priority = "fifo"
        except OSError:
            try:
                os.setpriority(os.PRIO_PROCESS, tid, -10)  # (a thread's own, on Linux)
                self.priority = "nice"
            except OSError:
                pass
        offset = time.clock_gettime_ns(time.CLOCK_REALTIME) - time.monotonic_ns()
        ctl = socket.CMSG_SPACE(16)
        while not self.done.is_set():
            try:
                data, anc, _flags, _addr = self.sock.recvmsg(self.READ, ctl)
            except TimeoutError:
                continue
            if not data:
                return
            at = time.monotonic_ns()
            for level, kind, raw in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack("qq", raw[:16])
                    at = sec * 1_000_000_000 + nsec - offset
            self.buf += data
            self.parse(at)

    def parse(self, at: int) -> None:
        """The whole pub/sub messages in the buffer (``*3 $7 message $N channel $M data``)."""
        buf, i = self.buf, 0
        while True:
            heads, j = [], i
            for _ in range(4):  # *3, $7 + "message", $N + channel, $M
                end = buf.find(b"\r\n", j)
                if end < 0:
                    break
                heads.append(buf[j:end])
                j = end + 2
                if len(heads) in (2, 3):  # skip the bulk string's bytes
                    j += int(heads[-1][1:]) + 2
            if len(heads) < 4 or j > len(buf):
                break
            size = int(heads[3][1:])
            if j + size + 2 > len(buf):
                break
            self.got.append((at, buf[j : j + size]))
            if self.notify is not None and b"released" in buf[j : j + size]:
                self.released(at, buf[j : j + size])
            i = j + size + 2
        self.buf = buf[i:]

    def released(self, at: int, data: bytes) -> None:
        from hub.wire.codec import unpack

        msg = unpack(data)
        whole = "n" not in msg or msg["i"] == msg["n"] - 1  # (a delta: with its last part)
        notify = self.notify
        if whole and notify is not None and (msg.get("a"), msg.get("t")) == ("public", "released"):
            notify(at, msg["s"])

    def stop(self) -> dict[tuple[str, str, int], int]:
        from hub.wire.codec import unpack

        self.done.set()
        self.join(5)
        self.sock.close()
        stamps: dict[tuple[str, str, int], int] = {}
        for at, data in self.got:
            msg = unpack(data)
            if "n" in msg and msg["i"] != msg["n"] - 1:
                continue  # a part of a delta: the frame is on the channel with its last part
            stamps.setdefault((msg["a"], msg["t"], msg["s"]), at)
        return stamps


def frame_log(path: Path) -> tuple[list[str], array[int]]:
    """A ``wsclients -q`` log: the topic names and the (client, topic id, seq, receive ns)
    quadruples."""
    names = Path(f"{path}.topics").read_text().splitlines()
    return names, array("q", path.read_bytes())


def edge_figures(
    names: list[str],
    log: array[int],
    stamps: dict[tuple[str, str, int], int],
    audience: str,
    counted: int,
) -> dict[str, Any]:
    """Each logged frame timed from its (audience, topic, seq) on the feed channel: the edge's
    part (the edge's read of the feed, its fan-out, nginx, the kernel) without the hub's
    release tick or embargo. Frames whose feed message is before ``counted`` are not counted;
    a frame with no feed message (a snapshot an edge took from the hash) is ``not_on_feed``, one
    received before its feed message's stamp (a read of several messages stamped with its last
    segment's time) ``stamped_after``: neither is counted."""
    ms, missing, after = [], 0, 0
    for n in range(0, len(log), 4):
        at = stamps.get((audience, names[log[n + 1]], log[n + 2]))
        if at is None:
            missing += 1
        elif at > log[n + 3]:
            after += 1
        elif at >= counted:
            ms.append(log[n + 3] - at)
    return e2e_latency.stats(ms) | {"not_on_feed": missing, "stamped_after": after}


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


def phone_frames(names: list[str], log: array[int]) -> tuple[list[tuple[int, int]], list[int], int]:
    """The phones' frame log as (deal, receive ns) of each ``deal:{d}`` frame and the receive
    times of every site-wide topic's frames (``standings``, ``released``: any other topic)."""
    deals: list[tuple[int, int]] = []
    sitewide: list[int] = []
    ids = {k: int(name[5:]) for k, name in enumerate(names) if name.startswith("deal:")}
    for n in range(0, len(log), 4):
        d = ids.get(log[n + 1])
        if d is None:
            sitewide.append(log[n + 3])
        else:
            deals.append((d, log[n + 3]))
    return deals, sitewide, len(log) // 4


def phone_figures(
    config: Any,
    events: dict[int, list[dict[str, Any]]],
    sent: list[list[Any]],
    got: dict[str, Any],
    counted: int,
) -> dict[str, Any]:
    """Each ``deal:{d}`` frame timed from its deal's release, each site-wide frame from the
    latest release before it (the public topics move only when a deal is released)."""
    done = releases(config, events, sent)
    order = sorted(done.values())
    deal_ms, sitewide_ms, unmatched = [], [], 0
    for d, received in got["frames"]:
        at = done.get(d)
        if at is None or at > received:
            unmatched += 1
        elif at >= counted:
            deal_ms.append(received - at)
    for received in got["sitewide_at"]:
        j = bisect.bisect_right(order, received) - 1
        if j < 0:
            unmatched += 1
        elif order[j] >= counted:
            sitewide_ms.append(received - order[j])
    phones, deals = got["connected"], got["deals"]
    watching = {d: sum(1 for i in range(phones) if i % deals + 1 == d) for d in done}
    expected = sum(watching[d] for d, at in done.items() if at >= counted) if got["deal"] else 0
    return {
        "connected": phones,
        "deals_released": len(done),
        "deal_frames_expected": expected,  # each phone, the release of the deal it watches
        "deal_frames": len(deal_ms),
        # each phone, each site-wide topic once a release
        "sitewide_frames_expected": phones
        * got["sitewide_topics"]
        * sum(1 for at in order if at >= counted),
        "sitewide_frames": len(sitewide_ms),
        "unmatched_frames": unmatched,
        "release": e2e_latency.stats(deal_ms + sitewide_ms),  # both kinds of frame
        "release_deal_frames": e2e_latency.stats(deal_ms),
        "release_sitewide_frames": e2e_latency.stats(sitewide_ms),
        "http": {"requests": len(got["gets_ns"]), "status": got["status"]}
        | e2e_latency.stats(got["gets_ns"]),
        "closes": got["closes"],
    }


def add_counts(into: dict[str, int], more: dict[str, int]) -> None:
    for name, k in more.items():
        into[name] = into.get(name, 0) + k


def refetch_figures(phones: int, signals: list[int], parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The re-reads at the ``released`` frames (``--refetch``), from the poll processes'
    figures: how many (each phone one per frame, or covered by one already waiting:
    ``coalesced``), their GETs (status, latency), each re-read's time (its first GET sent ->
    its last answered) and, per frame, the time from its stamp on the feed channel to the last
    re-read answered that covers it (the spread, 1.5 s, plus the burst's queue)."""
    tally = {k: sum(p[k] for p in parts) for k in ("refreshes", "coalesced", "failed")}
    status: dict[str, int] = {}
    for p in parts:
        add_counts(status, p["status"])
    last: dict[int, int] = {}
    for p in parts:
        for k, at in p["last_answer"].items():
            last[int(k)] = max(last.get(int(k), 0), at)
    to_last = [last[k] - at for k, at in enumerate(signals) if k in last]
    return {
        "released_frames": len(signals),
        "expected": phones * len(signals),  # == refreshes + coalesced
        **tally,
        "unfinished": sum(p["unfinished"] for p in parts),
        "gets": {"requests": sum(len(p["gets_ns"]) for p in parts), "status": status}
        | e2e_latency.stats([ns for p in parts for ns in p["gets_ns"]]),
        "reread": e2e_latency.stats([ns for p in parts for ns in p["rereads_ns"]]),
        "release_to_last_answer": e2e_latency.stats(to_last),
        "releases_unanswered": len(signals) - len(to_last),
    }


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a and b else None


def run(args: argparse.Namespace, phones: int) -> dict[str, Any]:
    edge_bench.raise_nofile()
    binary = edge_bench.wsclients_binary()
    tid = f"site-{os.getpid()}-{os.urandom(3).hex()}"
    per_table = int((args.warmup + args.seconds) * args.rate) + 1
    deals = max(2, math.ceil(per_table / 12))
    text, config = tournament(tid, args.tables, deals)
    events = e2e_latency.first_events(e2e_latency.session_events(config, args.seed), per_table)
    token = base64.urlsafe_b64encode(os.urandom(24)).decode()
    topics = args.phone_topics.split(",")
    sitewide = [t for t in topics if t != "deal"]
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
        marks_path, overlay_log = work / "marks.bin", work / "overlay-frames.bin"
        command = client_command(binary, f"/ws?token={token}", n, marks_path, lb.port)
        command[1:1] = ["-q", str(overlay_log)]
        pools = [
            spectators(
                stack, [*command, str(args.overlays), "0", "table:%d"], args.overlays, "normal"
            )
        ]
        phone_log = work / "phone-frames.bin"
        if phones:
            phone_cmd = [str(binary), "-p", "/ws", "-k", str(deals), "-q", str(phone_log)]
            phone_cmd += ["-a", str(PER_ADDRESS), "edge", f"127.0.0.1:{lb.port}", str(phones)]
            phone_cmd += ["0", ",".join("deal:%d" if t == "deal" else t for t in topics)]
            pools.append(spectators(stack, phone_cmd, phones, "normal"))
        pollers: list[subprocess.Popen[str]] = []
        poller_outs: list[Path] = []
        per = min(PER_PROCESS, REREAD_PER_PROCESS) if args.refetch else PER_PROCESS
        for first in range(0, phones if args.poll > 0 or args.refetch else 0, per):
            poller_outs.append(work / f"polls-{first}.json")
            poll_cmd = [sys.executable, __file__, "_polls", lb.url, str(first)]
            poll_cmd += [str(min(per, phones - first)), str(deals), str(args.poll)]
            poll_cmd += [args.urls, "1" if args.refetch else "0", str(poller_outs[-1])]
            pollers.append(
                stack.enter_context(
                    edge_bench.started(poll_cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                )
            )
        for proc in pollers:
            edge_bench._wait_line(proc, "connected", 60)
        feed = FeedStamps(url, Channels(tid).feed)
        feed.start()
        time.sleep(1.0)
        start_ns = time.monotonic_ns()
        tell(pools + pollers, f"start {start_ns}")
        signals: list[int] = []  # the stamp of each public `released` frame told the polls
        signalling = threading.Lock()

        def signal(at: int, seq: int) -> None:
            with signalling:
                if feed.notify is not None:
                    tell(pollers, f"release {at} {len(signals)}")
                    signals.append(at)

        if pollers and args.refetch:
            feed.notify = signal
        procs = {"ingest": [ingest.pid], "edges": [e.pid for e in edges], "redis": [redis.pid]}
        procs["nginx"] = [lb.process.pid, *children(lb.process.pid)] if lb.process else []
        procs["overlays_clients"] = [pools[0].pid]
        if phones:
            procs["phones_clients"] = [pools[1].pid]
            procs["phones_polls"] = [p.pid for p in pollers]
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
        with signalling:
            feed.notify = None
        tell(pools + pollers, "stop")
        read = [json.loads(pool.stdout.readline()) if pool.stdout else {} for pool in pools]
        polled: dict[str, Any] = {"gets_ns": [], "status": {}}
        rereads: list[dict[str, Any]] = []
        for proc, path in zip(pollers, poller_outs, strict=True):
            assert proc.stdout is not None
            proc.stdout.readline()
            one = json.loads(path.read_text())
            polled["gets_ns"] += one["gets_ns"]
            add_counts(polled["status"], one["status"])
            rereads.append(one["refetch"])
        stamps = feed.stop()
        marks = array("q", marks_path.read_bytes())
        overlay_frames = frame_log(overlay_log)
        phone_frames_log = frame_log(phone_log) if phones else None
        timed = json.loads(acks_path.read_text())
    counted = timed["start_ns"] + int(args.warmup * 1e9)
    sent = timed["sent"]
    result: dict[str, Any] = {
        "overlays": e2e_latency.figures(events, sent, marks, args.overlays, n, counted)
    }
    result["overlays"]["edge"] = edge_figures(*overlay_frames, stamps, "live", counted)
    result["overlays"]["clients_closes"] = read[0].get("closes", {})
    result["overlays"]["clients_lost"] = read[0].get("lost", 0)
    if phone_frames_log is not None:
        deal_frames, sitewide_at, logged = phone_frames(*phone_frames_log)
        got = {
            "connected": phones,
            "deals": deals,
            "deal": "deal" in topics,
            "sitewide_topics": len(sitewide),
            "frames": deal_frames,
            "sitewide_at": sitewide_at,
            "closes": read[1].get("closes", {})
            | ({"lost": read[1]["lost"]} if read[1].get("lost") else {}),
        } | polled
        result["phones"] = phone_figures(config, events, sent, got, counted)
        if args.refetch:
            result["phones"]["refetch"] = refetch_figures(phones, signals, rereads)
        result["phones"]["edge"] = edge_figures(*phone_frames_log, stamps, "public", counted)
        o, p = result["overlays"], result["phones"]
        result["ratio_p99_phones_to_overlays"] = {
            "e2e": ratio(p["release"].get("p99_ms"), o["e2e"].get("p99_ms")),
            "edge": ratio(p["edge"].get("p99_ms"), o["edge"].get("p99_ms")),
        }
        result["phones_generator"] = {  # the C clients' own CPU (what this tree changed)
            "frames": logged,
            "cpu_s": round(cpu["phones_clients"], 2),
            "cpu_us_per_frame": round(1e6 * cpu["phones_clients"] / logged, 1) if logged else None,
            "pings": read[1].get("pings"),  # the edges' keepalive, answered (every 20 s)
            "polls_cpu_s": round(cpu["phones_polls"], 2),
        }
    result["load"] = {
        "tables": n,
        "actions_per_s_per_table": args.rate,
        "overlays": args.overlays,
        "phones": phones,
        "phone_topics": args.phone_topics,
        "poll_s": args.poll,
        "refetch": args.refetch,
        "urls": args.urls,
        "seconds": args.seconds,
        "events_published": len(sent),
        "feed_messages": len(feed.got),
        "feed_stamper_priority": feed.priority,
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
    if argv and argv[0] == "_polls":
        http, first, count, deals, poll, urls, refetch, path = argv[1:9]
        asyncio.run(
            pollers_main(
                http,
                int(first),
                int(count),
                int(deals),
                float(poll),
                urls,
                refetch == "1",
                Path(path),
            )
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
    parser.add_argument(
        "--poll",
        type=float,
        default=None,
        help="s between a phone's periodic GETs (0: none; default 0 with --refetch, else 10)",
    )
    parser.add_argument(
        "--refetch",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="each phone re-reads its page's data within 1.5 s of each public `released` "
        "frame, as the site's pages do (default; --no-refetch: not)",
    )
    parser.add_argument(
        "--phone-topics",
        default="released",
        help="what each phone subscribes to: deal (phone i: deal:{i mod deals + 1}) and "
        "site-wide topics (standings, released: each timed from the latest release)",
    )
    parser.add_argument("--urls", choices=("vmix", "site"), default="vmix")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-phones", action="store_true", help="the overlays alone")
    parser.add_argument("--baseline", action="store_true", help="also a run without phones")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    if args.poll is None:
        args.poll = 0.0 if args.refetch else 10.0
    if args.quick:
        args.tables, args.phones, args.overlays, args.seconds, args.rate = 12, 100, 100, 20.0, 3.0
    out: dict[str, Any] = {}
    if args.baseline or args.no_phones:
        out["without_phones"] = run(args, 0)
    if not args.no_phones:
        out["with_phones"] = run(args, args.phones)
    if args.baseline and not args.no_phones:
        without, with_ = out["without_phones"]["overlays"], out["with_phones"]["overlays"]
        out["overlays_p99_with_over_without"] = {
            k: ratio(with_[k].get("p99_ms"), without[k].get("p99_ms")) for k in ("e2e", "edge")
        }
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    random.seed(0)
    sys.exit(main())
