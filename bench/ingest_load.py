"""The whole ingest on Redis, consoles in another process; and its restart (DESIGN §6).

Run by hand: ``.venv/bin/python bench/ingest_load.py [--events 60000] [--journal 100000]``.

``throughput``: one ``Ingest`` (decode, validate, apply, journal with fenced XADD, acks, the
topic projections' patches encoded once as feed frames, lazy snapshots) runs in this process on
Redis. A console fleet runs in a child process: one console per table of a large tournament,
each keeping ``--window`` events in flight and sending the next as acks come back (as
``hub.client.console`` does, without its outbox bookkeeping, so the fleet is not the bottleneck).
The
figure is events acknowledged per second from the first to the last, with this process's CPU
share. Baseline, same run, same events: msgpack decode + ``Engine.submit`` in a plain loop.
Two deployments (``--feed``): ``inline``, the ingest publishes the feed itself; ``separate``,
the ingest only decides, journals and answers, and a projector in a third process
(``hub.roles.projector``, under ``nice``: the write path comes first) follows the journal and
publishes the feed: its records/s, CPU share and how long after the ingest's last
acknowledgement it had published everything; ``paused``, the same with the projector stopped
during the burst (the write path alone on the machine), then catching up from the journal.

``rebuild``: a journal of ``--journal`` records in Redis; ``Ingest.rebuild`` from the journal
alone, then from an engine snapshot ``--tail`` records before the end plus that tail (the worst
case of snapshots every ``hub.roles.ingest.ENGINE_SNAPSHOT_EVERY`` records), against 3 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import private_redis  # noqa: E402
from ingest_bench import large_session, redis_cleanup  # noqa: E402

from hub.engine.core import Engine  # noqa: E402
from hub.serve.http import tune_gc  # noqa: E402
from hub.wire import codec  # noqa: E402
from hub.wire.channels import Channels  # noqa: E402

TARGET_EVENTS_PER_S = 20_000
TARGET_REBUILD_S = 3.0


# -- the console fleet (child process) ---------------------------------------------------------


async def fleet(url: str, tournament: str, path: Path, window: int) -> None:
    import redis.asyncio as aioredis

    events: list[dict[str, Any]] = codec.unpack(path.read_bytes())
    names = Channels(tournament)
    queues: dict[str, list[tuple[int, bytes, str]]] = defaultdict(list)
    for event in events:
        queues[event["console"]].append(
            (event["seq"], codec.pack(event), names.console(event["table"]))
        )
    client = aioredis.Redis.from_url(url)
    pubsub = client.pubsub()
    await pubsub.psubscribe(names.ack("*"))
    sent = {console: 0 for console in queues}  # index of the next event to send
    acked = {console: 0 for console in queues}  # highest seq acknowledged
    done = asyncio.Event()
    remaining = len(events)

    async def send_more() -> None:
        pipe = client.pipeline(transaction=False)
        n = 0
        for console, queue in queues.items():
            while sent[console] < len(queue) and sent[console] - acked[console] < window:
                _, data, channel = queue[sent[console]]
                pipe.publish(channel, data)
                sent[console] += 1
                n += 1
        if n:
            await pipe.execute()

    async def read_acks() -> None:
        nonlocal remaining
        async for message in pubsub.listen():
            if message["type"] != "pmessage":
                continue
            ack = codec.unpack(message["data"])
            console = message["channel"].decode().rpartition(":")[2]
            seq = ack.get("seq")
            if console in acked and isinstance(seq, int) and seq > acked[console]:
                remaining -= seq - acked[console]
                acked[console] = seq
                if remaining <= 0:
                    done.set()
                    return

    reader = asyncio.create_task(read_acks())
    await send_more()
    while not done.is_set():
        await asyncio.sleep(0.002)
        await send_more()
    reader.cancel()
    await pubsub.aclose()
    await client.aclose()


# -- the ingest (this process) -----------------------------------------------------------------


def baseline(session: Any) -> float:
    packed = [codec.pack(e) for e in session.events]
    engine = Engine(session.config, session.decks, release_delay=0.0)
    t0 = time.perf_counter()
    for data in packed:
        engine.submit(codec.unpack(data), 0.0)
    return len(packed) / (time.perf_counter() - t0)


# -- the projector (child process, ``--feed separate``) -----------------------------------------


async def projector_child(url: str, events: int, seed: int, tid: str) -> None:
    """Follow the journal the ingest writes (``hub.roles.projector``) until ``events`` records are
    applied and published; print its rate, CPU share and when it got there (wall clock)."""
    from hub.bus.redis import RedisBus
    from hub.roles.projector import Projector

    session = large_session(events, seed, tid=tid)
    bus = RedisBus(url)
    await bus.connect()
    projector = Projector(bus, Engine(session.config, session.decks, release_delay=0.0))
    await projector.start()
    tune_gc()  # as `duplicast serve --role projector` does once started
    print("ready", flush=True)
    total = len(session.events)  # every event of the session is accepted (bots play legally)
    while projector.applied == 0:
        await asyncio.sleep(0.001)
    w0, c0 = time.perf_counter(), time.process_time()
    while projector.applied < total:
        await asyncio.sleep(0.002)
    await projector.feed.publish()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    done_at = time.time()
    await projector.stop()
    await bus.close()
    print(
        json.dumps(
            {
                "records": projector.applied,
                "records_per_s": round(projector.applied / wall),
                "cpu_share": round(cpu / wall, 3),
                "done_at": done_at,
            }
        ),
        flush=True,
    )


def record_schedule(ingest: Any) -> dict[str, Any]:
    """What a running ingest did, in order: each event it applied (``[console, seq]``) and after
    how many of them each feed publish came (``flushes``). ``projection_bench --schedule``
    replays it in any checkout's engine: the same events in the same order, the feed flushed at
    the same points, so two trees do the same work whatever the ingest's timing did."""
    applied: list[tuple[str, int]] = []
    flushes: list[int] = []
    submit, publish = ingest.engine.submit, ingest.feed.publish

    def recorded_submit(raw: Any, now: float, **kw: Any) -> Any:
        outcome = submit(raw, now, **kw)
        get = raw.get if isinstance(raw, dict) else lambda name: getattr(raw, name, None)
        applied.append((get("console"), get("seq")))
        return outcome

    async def recorded_publish(**kw: Any) -> None:  # (``paced``: the pipeline's publishes)
        if not flushes or flushes[-1] != len(applied):
            flushes.append(len(applied))
        await publish(**kw)

    ingest.engine.submit = recorded_submit  # (instance attributes: the decider and the feed
    ingest.feed.publish = recorded_publish  # writer look them up on each call)
    return {"applied": applied, "flushes": flushes}


async def throughput(
    url: str,
    events: int,
    window: int,
    seed: int,
    feed: str = "inline",
    schedule_out: Path | None = None,
) -> dict[str, Any]:
    """``feed``: ``inline`` (the ingest publishes the feed itself) or ``separate`` (the ingest
    only decides, journals and answers; a projector in another process publishes the feed from
    the journal: its rate and how long after the last acknowledgement it had published all).
    ``schedule_out``: write what the ingest did (``record_schedule``) there, as JSON."""
    from hub.bus.redis import RedisBus
    from hub.roles.ingest import Ingest

    tid = f"load-{uuid.uuid4().hex[:8]}"
    session = large_session(events, seed, tid=tid)
    tune_gc()  # what `duplicast serve` does once started; for the baseline loop too
    base = baseline(session)
    with tempfile.NamedTemporaryFile("wb", suffix=".msgpack", delete=False) as f:
        f.write(codec.pack(session.events))
    bus = RedisBus(url)
    await bus.connect()
    ingest = Ingest(
        bus, Engine(session.config, session.decks, release_delay=0.0), feed=feed == "inline"
    )
    await ingest.start()
    schedule = None if schedule_out is None else record_schedule(ingest)
    tune_gc()
    projector = None
    if feed in ("separate", "paused"):
        # The write path first: on 2 cores shared with the consoles and Redis, the projector
        # takes what the ingest leaves (``nice``); "paused" stops it for the burst.
        command = ["nice", "-n", "10", sys.executable, __file__, "--projector", url]
        command += [str(events), str(seed), tid]
        projector = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert projector.stdout is not None
        if projector.stdout.readline().strip() != "ready":
            raise RuntimeError("the projector did not start")
        if feed == "paused":
            projector.send_signal(signal.SIGSTOP)
    command = [sys.executable, __file__, "--child", url, session.config.id, f.name, str(window)]
    child = subprocess.Popen(command, cwd=ROOT)
    state = ingest.engine.state
    projected: dict[str, Any] = {}
    try:
        async with asyncio.timeout(300):
            while state.events_applied == 0:
                await asyncio.sleep(0.001)
            w0, c0 = time.perf_counter(), time.process_time()
            while state.events_applied < len(session.events):
                await asyncio.sleep(0.005)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            acked_at = time.time()
            await asyncio.to_thread(child.wait, 60)
            if projector is not None:
                assert projector.stdout is not None
                if feed == "paused":  # it catches up on the whole burst from the journal
                    acked_at = time.time()
                    projector.send_signal(signal.SIGCONT)
                line = await asyncio.to_thread(projector.stdout.readline)
                projected = json.loads(line)
                projected["behind_last_ack_s"] = round(projected.pop("done_at") - acked_at, 3)
                await asyncio.to_thread(projector.wait, 30)
    finally:
        for proc in (child, projector):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        await ingest.stop()
        await bus.close()
        redis_cleanup(url)(session.config.id)
        os.unlink(f.name)
    if schedule is not None and schedule_out is not None:
        schedule.update(events=events, seed=seed, feed=feed)
        schedule_out.write_text(json.dumps(schedule))
    rate = len(session.events) / wall
    out = {
        "events": len(session.events),
        "tables": len(session.config.tables),
        "window": window,
        "feed": feed,
        "events_per_s": round(rate),
        "ingest_cpu_share": round(cpu / wall, 3),
        "ingest_cpu_us_per_event": round(cpu / len(session.events) * 1e6, 2),
        "baseline_decode_submit_per_s": round(base),
        "ratio_to_baseline": round(rate / base, 3),
        "target": TARGET_EVENTS_PER_S,
    }
    if projected:
        out["projector"] = projected
    return out


async def rebuild(url: str, records: int, tail: int, seed: int) -> dict[str, Any]:
    import redis.asyncio as aioredis

    from hub.bus.redis import RedisBus
    from hub.roles.ingest import Ingest

    session = large_session(records, seed, tid=f"rebuild-{uuid.uuid4().hex[:8]}")
    engine = Engine(session.config, session.decks, release_delay=0.0)
    journal: list[dict[str, Any]] = []
    for event in session.events:
        out = engine.submit(event, float(event.get("ts", 0.0)))
        if out.record is not None:
            journal.append(out.record)
    names = Channels(session.config.id)
    client = aioredis.Redis.from_url(url)
    ids: list[str] = []
    try:
        for start in range(0, len(journal), 5000):
            pipe = client.pipeline(transaction=False)
            for record in journal[start : start + 5000]:
                pipe.xadd(names.journal, {b"d": codec.pack(record)})
            ids += [i.decode() for i in await pipe.execute()]
        out: dict[str, Any] = {"records": len(journal), "tail": tail}

        async def timed_rebuild() -> tuple[float, float, Ingest]:
            bus = RedisBus(url)
            await bus.connect()
            ingest = Ingest(bus, Engine(session.config, session.decks, release_delay=0.0))
            w0, c0 = time.perf_counter(), time.process_time()
            await ingest.rebuild()
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            await bus.close()
            return wall, cpu, ingest

        wall, cpu, full = await timed_rebuild()
        phases = {k: round(v, 3) for k, v in full.timings.items()}
        out["journal_only"] = {"seconds": round(wall, 3), "cpu": round(cpu, 3), "phases": phases}
        # The snapshot an ingest would have written ``tail`` records before the end.
        head = Engine(session.config, session.decks, release_delay=0.0)
        cut = len(journal) - tail
        for i, record in enumerate(journal[:cut]):
            head.restore(record, position=ids[i])
        snapshot = codec.pack({"position": ids[cut - 1], "engine": head.snapshot()})
        await client.hset(names.engine, "snapshot", snapshot)
        wall, cpu, resumed = await timed_rebuild()
        if resumed.engine.standings_json() != full.engine.standings_json():
            raise AssertionError("snapshot + tail differs from the full replay")
        out["snapshot_plus_tail"] = {
            "seconds": round(wall, 3),
            "cpu": round(cpu, 3),
            "replayed": resumed.replayed,
            "phases": {k: round(v, 3) for k, v in resumed.timings.items()},
            "snapshot_bytes": len(snapshot),
            "target": TARGET_REBUILD_S,
        }
    finally:
        keys = [k async for k in client.scan_iter(match=f"dup:{session.config.id}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        url, tournament, path, window = sys.argv[2:6]
        asyncio.run(fleet(url, tournament, Path(path), int(window)))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--projector":
        url, events, seed, tid = sys.argv[2:6]
        asyncio.run(projector_child(url, int(events), int(seed), tid))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", help="a Redis to use (default: a private one started here)")
    parser.add_argument("--events", type=int, default=60_000)
    parser.add_argument("--window", type=int, default=64, help="events in flight per console")
    parser.add_argument("--journal", type=int, default=100_000)
    parser.add_argument("--tail", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--only", choices=("throughput", "rebuild"), help="run one part")
    parser.add_argument(
        "--schedule-out",
        type=Path,
        help="write the order the ingest applied the events in and its feed publishes "
        "(JSON, for projection_bench.py --schedule; with one --feed mode)",
    )
    parser.add_argument(
        "--feed",
        choices=("inline", "separate", "paused", "all"),
        default="all",
        help="throughput with the feed published by the ingest (inline); by a projector "
        "process following the journal at the same time (separate); by a projector stopped "
        "during the burst that then catches up (paused: the write path alone); or all three",
    )
    args = parser.parse_args()
    result: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()}
    }
    modes = ("paused", "separate", "inline") if args.feed == "all" else (args.feed,)
    if args.only == "rebuild":
        modes = ()
    if args.schedule_out is not None and len(modes) > 1:
        parser.error("--schedule-out records one run: name its --feed")
    with private_redis.redis_url(args.redis) as url:
        for mode in modes:
            result[f"throughput_{mode}"] = asyncio.run(
                throughput(url, args.events, args.window, args.seed, mode, args.schedule_out)
            )
        if args.only in (None, "rebuild"):
            result["rebuild"] = asyncio.run(rebuild(url, args.journal, args.tail, args.seed))
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
