"""Where an event's time goes between its PUBLISH and the commentator's frame: the stages of
the ingest and the edges, timed in the hub's own processes (issue #31's tail).

Bench-only: the hub is not changed. ``bench/event_cost.py --trace`` starts each hub process as
``python bench/stage_trace.py OUT -m hub serve ...`` instead of ``python -m hub serve ...``:
this file puts the tree's folder (the working directory) first on the path, wraps a few of its
methods with timers, then runs ``hub`` as ``-m hub`` would. A run without ``--trace`` runs the
hub untouched: no cost when off. The wrapped names exist in main and in the tree before issue
#31, so ``--against`` times both.

Times are ``time.monotonic()`` (CLOCK_MONOTONIC, one clock for every process of the machine,
the clock of the fleet's PUBLISH and of the commentators' reads). Each process writes JSON
lines to ``OUT/trace-<pid>.jsonl`` from a thread, once a second:

- ``batch`` (ingest): a batch of console messages taken by the ingest: each message's
  (table, seq, arrived: read off the Redis socket), ``take`` (the pipeline starts on it),
  ``jc`` / ``jr`` (the journal append called: decided; returned: journaled and fsync'd),
  ``ack`` (the acks' PUBLISH returned);
- ``feed`` (ingest): one feed publish: ``enter`` (the publisher starts: waits for the engine,
  takes its changes), ``call`` / ``ret`` (the feed's PUBLISH called: frames built; returned),
  ``cpu`` (the loop thread's CPU seconds from ``enter`` to ``call``: the build, and whatever
  ran in between),
  ``c``: every ``console:T`` frame in it as (T, the highest ``last_seq`` it carries);
- ``recv`` (edge): a ``console:T`` frame of the feed: ``arr`` (read off the Redis socket),
  ``at`` / ``out`` (the edge's feed loop starts on it / is done with it), ``c``;
- ``sent`` (edge): a fan-out flush that wrote ``console:T`` frames to the clients' sockets:
  ``at`` (the flush returned), ``c``;
- ``fetch`` (edge): a snapshot read from the hash after the feed's notice (issue #31):
  ``topic``, ``at`` / ``out``.
"""

from __future__ import annotations

import contextvars
import functools
import json
import os
import re
import runpy
import sys
import threading
import time
from pathlib import Path
from typing import Any

LAST_SEQ = re.compile(rb'"last_seq":(\d+)|/last_seq","value":(\d+)')
CONSOLE = re.compile(rb"console:(\d+)")


class Trace:
    """Records kept in memory and appended to the process's file once a second."""

    def __init__(self, out: Path) -> None:
        self.path = out / f"trace-{os.getpid()}.jsonl"
        self.rows: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._writer, daemon=True).start()

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)  # (list.append is atomic under the GIL)

    def flush(self) -> None:
        with self.lock:
            rows, self.rows = self.rows, []
            if rows:
                with self.path.open("a") as out:
                    out.write("".join(json.dumps(r) + "\n" for r in rows))

    def _writer(self) -> None:
        while True:
            time.sleep(1.0)
            self.flush()


def console_seq(data: bytes) -> tuple[int, int] | None:
    """(table, highest last_seq) of a ``console:T`` frame's bytes; None: another topic."""
    head = CONSOLE.search(data[:300])
    if head is None:
        return None
    seqs = [int(a or b) for a, b in LAST_SEQ.findall(data)]
    return (int(head[1]), max(seqs)) if seqs else None


def install(trace: Trace) -> None:
    """Wrap the tree's ingest, publisher, bus and edge methods with timers."""
    from hub.bus.redis import RedisBus
    from hub.bus.redis_subscription import RedisSubscription
    from hub.roles.edge import EdgeSource
    from hub.roles.ingest import Ingest
    from hub.roles.publisher import FeedPublisher
    from hub.serve.fanout import Fanout
    from hub.wire import codec

    now = time.monotonic
    batch_var: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
        "batch", default=None
    )
    feed_var: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
        "feed", default=None
    )

    handle_batch = Ingest.handle_batch

    @functools.wraps(handle_batch)
    async def traced_batch(self: Any, batch: Any, *args: Any, **kw: Any) -> Any:
        row: dict[str, Any] = {"k": "batch", "take": now(), "msgs": []}
        for message in batch:
            if ":console:" not in message.channel:
                continue
            try:
                event = codec.unpack(message.data)
                row["msgs"].append([int(event["table"]), int(event["seq"]), message.arrived])
            except Exception:
                continue
        token = batch_var.set(row)
        try:
            return await handle_batch(self, batch, *args, **kw)
        finally:
            batch_var.reset(token)
            row["end"] = now()
            if row["msgs"]:
                trace.add(row)

    Ingest.handle_batch = traced_batch  # type: ignore[method-assign]

    append_many = RedisBus.append_many

    @functools.wraps(append_many)
    async def traced_append(self: Any, stream: str, *args: Any, **kw: Any) -> Any:
        row = batch_var.get()
        if row is None or not stream.endswith(":journal"):
            return await append_many(self, stream, *args, **kw)
        row.setdefault("jc", now())
        out = await append_many(self, stream, *args, **kw)
        row["jr"] = now()
        return out

    RedisBus.append_many = traced_append  # type: ignore[method-assign]

    publish_many = RedisBus.publish_many

    @functools.wraps(publish_many)
    async def traced_publish_many(self: Any, messages: Any) -> Any:
        feed, row = feed_var.get(), batch_var.get()
        if feed is not None and any(c.endswith(":feed") for c, _ in messages):
            feed["call"] = now()
            feed["cpu"] = time.thread_time() - feed.pop("cpu0")
            for channel, data in messages:
                if channel.endswith(":feed") and (found := console_seq(data)) is not None:
                    feed["c"].append(found)
            out = await publish_many(self, messages)
            feed["ret"] = now()
            return out
        if row is not None and "ack" not in row and any(":ack:" in c for c, _ in messages):
            out = await publish_many(self, messages)
            row["ack"] = now()
            return out
        return await publish_many(self, messages)

    RedisBus.publish_many = traced_publish_many  # type: ignore[method-assign]

    publish = FeedPublisher.publish

    @functools.wraps(publish)
    async def traced_publish(self: Any, **kw: Any) -> Any:  # (``paced``: the pipeline's)
        row: dict[str, Any] = {"k": "feed", "enter": now(), "c": [], "cpu0": time.thread_time()}
        token = feed_var.set(row)
        try:
            return await publish(self, **kw)  # (what it returns: the caller paces the feed by it)
        finally:
            feed_var.reset(token)
            if row["c"]:
                trace.add(row)

    FeedPublisher.publish = traced_publish  # type: ignore[method-assign]

    follow = getattr(FeedPublisher, "follow", None)
    if follow is not None:  # (the feed's pace: issue #31)

        @functools.wraps(follow)
        async def traced_follow(self: Any, waiting: bool) -> Any:
            at, before = now(), getattr(self, "_published", 0.0)
            try:
                return await follow(self, waiting)
            finally:
                published = getattr(self, "_published", 0.0) != before
                interval = getattr(self, "interval", None)
                trace.add({"k": "follow", "at": at, "w": waiting, "p": published, "i": interval})

        FeedPublisher.follow = traced_follow  # type: ignore[method-assign]

    # -- the edge --
    last: list[Any] = [None]  # the message the edge's feed loop read last
    anext = RedisSubscription.__anext__

    @functools.wraps(anext)
    async def traced_anext(self: Any) -> Any:
        message = await anext(self)
        last[0] = message
        return message

    RedisSubscription.__anext__ = traced_anext  # type: ignore[method-assign]

    receive = EdgeSource.receive

    @functools.wraps(receive)
    async def traced_receive(self: Any, key: Any, frame: Any) -> Any:
        at = now()
        found = None
        if key[1].startswith("console:"):
            json_out = frame.outs.get("json")
            if json_out is not None:
                found = console_seq(b'"console:' + key[1][8:].encode() + b'"' + json_out.payload)
        try:
            return await receive(self, key, frame)
        finally:
            if found is not None:
                arrived = last[0].arrived if last[0] is not None else 0.0
                trace.add({"k": "recv", "arr": arrived, "at": at, "out": now(), "c": found})

    EdgeSource.receive = traced_receive  # type: ignore[method-assign]

    fetch = getattr(EdgeSource, "fetch", None)
    if fetch is not None:  # (the notices of snapshots in the hash: issue #31)

        @functools.wraps(fetch)
        async def traced_fetch(self: Any, key: Any, seq: int) -> Any:
            at = now()
            try:
                return await fetch(self, key, seq)
            finally:
                trace.add({"k": "fetch", "topic": key[1], "at": at, "out": now()})

        EdgeSource.fetch = traced_fetch  # type: ignore[attr-defined]

    flush = Fanout.flush

    @functools.wraps(flush)
    def traced_flush(self: Any) -> None:
        found = []
        for key, frames in self._pending:
            if key[1].startswith("console:") and (json_out := frames.get("json")) is not None:
                seqs = [int(a or b) for a, b in LAST_SEQ.findall(json_out.payload)]
                if seqs:
                    found.append([int(key[1][8:]), max(seqs)])
        flush(self)
        if found:
            trace.add({"k": "sent", "at": now(), "c": found})

    Fanout.flush = traced_flush  # type: ignore[method-assign]


def main() -> None:
    """``stage_trace.py OUT -m hub ARGS...``: run ``hub`` with the timers installed."""
    out = Path(sys.argv[1])
    if sys.argv[2:4] != ["-m", "hub"]:
        raise SystemExit("usage: stage_trace.py OUT -m hub ARGS...")
    sys.path.insert(0, os.getcwd())  # the tree's hub, as ``-m hub`` run in it would find
    trace = Trace(out)
    install(trace)
    sys.argv = ["hub", *sys.argv[4:]]
    import atexit

    atexit.register(trace.flush)
    runpy.run_module("hub", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
