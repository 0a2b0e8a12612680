"""One console flooding its own table's channel against another table's acks (issue #20).

Run by hand: ``.venv/bin/python bench/flood_bench.py [--probes 300] [--json out.json]``.

The ingest runs in this process on a private Redis (started here on a free port with the
limits of docker-compose.yml, or ``--redis URL``), feed inline as in ``duplicast serve``. A
probe console in a child process sends its table's events one at a time (``--pace`` apart) and
times each one from its PUBLISH to its ack. Three phases, same run, same ingest: ``baseline``
(nothing else), ``big`` (a flooder process publishes 300-KB msgpack maps on another table's
channel as fast as one Redis client can) and ``tiny`` (the same with one-byte bad events), in
turn, ``--rounds`` times. A flood starts ``--warmup`` s before the probe's events and stops
after them. Target: the probe's
ack p99 under either flood within 2x its baseline. Also reported: the flood's rate, what the
ingest dropped of it, and how often Redis cut the flooded subscription (each one resubscribed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import private_redis  # noqa: E402
from ingest_bench import large_session  # noqa: E402

from hub.engine.core import Engine  # noqa: E402
from hub.serve.http import tune_gc  # noqa: E402
from hub.wire import codec  # noqa: E402
from hub.wire.channels import Channels  # noqa: E402

TARGET_RATIO = 2.0
RESEND = (
    1.0  # s without an ack before the probe sends its event again (hub.client.console's timeout)
)
PROBE_TABLE, FLOOD_TABLE = 1, 2
BIG = codec.pack({f"k{i}": "x" * 295 for i in range(1000)})  # ~300 KB
TINY = b"\xc1"  # never valid msgpack
# What docker-compose.yml gives Redis (docs/security.md, "Redis limits").
REDIS_LIMITS = ("--client-output-buffer-limit", "pubsub 16mb 4mb 10")


# -- children ----------------------------------------------------------------------------------


def flooder(url: str, channel: str, kind: str) -> None:
    """Publish as fast as one pipelined client can until SIGTERM; then print the count."""
    import redis

    data, per_round = (BIG, 4) if kind == "big" else (TINY, 200)
    client = redis.Redis.from_url(url)
    sent = 0
    stop = False

    def on_term(*_: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    client.ping()
    print("ready", flush=True)
    t0 = time.perf_counter()
    while not stop:
        pipe = client.pipeline(transaction=False)
        for _ in range(per_round):
            pipe.publish(channel, data)
        pipe.execute()
        sent += per_round
    print(json.dumps({"sent": sent, "seconds": time.perf_counter() - t0}), flush=True)


async def probe(url: str, tournament: str, path: Path, pace: float) -> None:
    """Per line ``go N`` on stdin: send the next N events one at a time, each after the ack of
    the one before and ``pace`` s; print their ack times (ms) as one JSON line."""
    import redis.asyncio as aioredis

    events: list[dict[str, Any]] = codec.unpack(path.read_bytes())
    names = Channels(tournament)
    client = aioredis.Redis.from_url(url)
    pubsub = client.pubsub()
    await pubsub.subscribe(names.ack(events[0]["console"]))
    await pubsub.get_message(timeout=5)  # the subscribe confirmation
    channel = names.console(PROBE_TABLE)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print("ready", flush=True)
    at = 0
    while line := (await reader.readline()).decode().split():
        times = []
        for event in events[at : at + int(line[1])]:
            t0 = time.perf_counter()
            data = codec.pack(event)
            await client.publish(channel, data)
            resend = t0 + RESEND
            while True:
                message = await pubsub.get_message(timeout=0.1)
                got = message and message["type"] == "message" and codec.unpack(message["data"])
                if got and got.get("seq") == event["seq"]:
                    break
                if time.perf_counter() > resend:  # lost (a cut subscription): as a console
                    await client.publish(channel, data)
                    resend = time.perf_counter() + RESEND
            times.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(pace)
        at += int(line[1])
        print(json.dumps(times), flush=True)
    await client.aclose()


# -- this process: Redis, the ingest, the phases ----------------------------------------------


def refusals(ingest: Any) -> int:
    """Undecodable messages the ingest refused so far (what it read of a flood)."""
    text = ingest.metrics.render(private=True).decode()
    return sum(
        int(float(line.rpartition(" ")[2]))
        for line in text.splitlines()
        if line.startswith("duplicast_rejects_total")
        and ('"too_large"' in line or '"bad_schema"' in line)
    )


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 2)

    return {"p50_ms": at(0.5), "p90_ms": at(0.9), "p99_ms": at(0.99)}


PHASES = ("baseline", "big", "tiny")


async def run(
    url: str, probes: int, pace: float, warmup: float, nice: int, rounds: int = 1
) -> dict[str, Any]:
    """``rounds`` times the three phases in turn, ``probes`` probe events per phase in all
    (a load spike on a shared machine then lands in every phase alike)."""
    from hub.bus.redis import RedisBus
    from hub.roles.ingest import Ingest

    tid = f"flood-{uuid.uuid4().hex[:8]}"
    per_round = max(1, probes // rounds)
    needed = per_round * rounds * len(PHASES)
    session = large_session(max(3000, needed * 8), 1, tid=tid)
    mine = [e for e in session.events if e["table"] == PROBE_TABLE]
    mine = [e for e in mine if e["console"] == mine[0]["console"]][:needed]
    if len(mine) < needed:
        raise RuntimeError(f"the session has only {len(mine)} events of the probe's console")
    with tempfile.NamedTemporaryFile("wb", suffix=".msgpack", delete=False) as f:
        f.write(codec.pack(mine))
    bus = RedisBus(url)
    await bus.connect()
    ingest = Ingest(bus, Engine(session.config, session.decks, release_delay=0.0))
    await ingest.start()
    tune_gc()
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--probe", url, tid, f.name, str(pace), stdin=-1, stdout=-1
    )
    assert child.stdout is not None
    times: dict[str, list[float]] = {phase: [] for phase in PHASES}
    floods: dict[str, list[dict[str, Any]]] = {phase: [] for phase in PHASES[1:]}
    try:
        assert (await child.stdout.readline()).strip() == b"ready"
        for _ in range(rounds):
            for phase in PHASES:
                flood = await Phase(ingest, url, tid, phase, nice).start(warmup)
                times[phase] += await ask(child, per_round)
                if phase != "baseline":
                    floods[phase].append(await flood.stop())
    finally:
        if child.returncode is None:
            child.kill()
        await child.wait()
        await ingest.stop()
        await bus.close()
        os.unlink(f.name)
    return report(times, floods, probes=per_round * rounds, rounds=rounds, pace=pace, nice=nice)


async def ask(child: Any, n: int) -> list[float]:
    """The probe's ack times (ms) of its next ``n`` events."""
    child.stdin.write(f"go {n}\n".encode())
    return list(json.loads(await child.stdout.readline()))


class Phase:
    """One phase's flooder process (none for the baseline) and what the hub made of it."""

    def __init__(self, ingest: Any, url: str, tid: str, phase: str, nice: int) -> None:
        self.ingest, self.url, self.tid, self.phase, self.nice = ingest, url, tid, phase, nice
        self.intake = getattr(ingest, "intake", None)  # None: a checkout from before it
        self.proc: Any = None

    def counts(self) -> tuple[int, int]:
        if self.intake is None:
            return 0, 0
        return self.intake.dropped, self.intake.resubscribed

    async def start(self, warmup: float) -> Phase:
        self.before, self.refused, self.t0 = self.counts(), refusals(self.ingest), time.time()
        if self.phase == "baseline":
            return self
        niced = ["nice", "-n", str(self.nice)] if self.nice else []
        channel = Channels(self.tid).console(FLOOD_TABLE)
        self.proc = await asyncio.create_subprocess_exec(
            *niced, sys.executable, __file__, "--flood", self.url, channel, self.phase, stdout=-1
        )
        assert (await self.proc.stdout.readline()).strip() == b"ready"
        await asyncio.sleep(warmup)
        return self

    async def stop(self) -> dict[str, Any]:
        self.proc.send_signal(signal.SIGTERM)
        sent = json.loads(await self.proc.stdout.readline())
        await self.proc.wait()
        seconds = time.time() - self.t0
        dropped, cuts = (a - b for a, b in zip(self.counts(), self.before, strict=True))
        read = refusals(self.ingest) - self.refused
        await self.clear()
        size = len(BIG if self.phase == "big" else TINY)
        return {
            "flood_msgs_per_s": sent["sent"] / sent["seconds"],
            "flood_mb_per_s": sent["sent"] * size / sent["seconds"] / 1e6,
            "hub_read_msgs_per_s": read / seconds,
            "dropped": dropped,
            "redis_cuts": cuts,
        }

    async def clear(self) -> None:
        """Before the next phase: cut the connections Redis still holds flood for (it would
        be read for a minute more at the table's rate), let the ingest drain the rest."""
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(self.url, decode_responses=True)
        try:
            for info in await client.client_list(_type="pubsub"):
                if int(info.get("omem", 0)) > 0:
                    await client.client_kill_filter(_id=info["id"])
        finally:
            await client.aclose()
        # What the kernel had buffered for the cut connection is still read (at the table's
        # rate) before the close: wait until the ingest has refused nothing more for 1 s.
        seen, still = refusals(self.ingest), time.monotonic()
        async with asyncio.timeout(120):
            while time.monotonic() - still < 1.0 or (self.intake and self.intake.pending):
                await asyncio.sleep(0.1)
                if (now := refusals(self.ingest)) != seen:
                    seen, still = now, time.monotonic()


def report(
    times: dict[str, list[float]], floods: dict[str, list[dict[str, Any]]], **run: Any
) -> dict[str, Any]:
    result: dict[str, Any] = dict(run)
    for phase, samples in times.items():
        row: dict[str, Any] = summary(samples)
        if phase in floods:
            rows = floods[phase]
            for key in ("flood_msgs_per_s", "flood_mb_per_s", "hub_read_msgs_per_s"):
                row[key] = round(statistics.mean(r[key] for r in rows), 1)
            row["dropped"] = sum(r["dropped"] for r in rows)
            row["redis_cuts"] = sum(r["redis_cuts"] for r in rows)
            for q in ("p50", "p90", "p99"):
                row[f"ratio_{q}"] = round(row[f"{q}_ms"] / result["baseline"][f"{q}_ms"], 2)
        result[phase] = row
    result["target_p99_ratio"] = TARGET_RATIO
    result["met"] = all(result[p]["ratio_p99"] <= TARGET_RATIO for p in PHASES[1:])
    return result


def main() -> None:
    if sys.argv[1:2] == ["--flood"]:
        flooder(*sys.argv[2:5])
        return
    if sys.argv[1:2] == ["--probe"]:
        url, tid, path, pace = sys.argv[2:6]
        asyncio.run(probe(url, tid, Path(path), float(pace)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", help="a Redis to use (default: a private one started here)")
    parser.add_argument("--probes", type=int, default=600, help="probe events per phase")
    parser.add_argument("--rounds", type=int, default=3, help="times the phases run in turn")
    parser.add_argument("--pace", type=float, default=0.01, help="s between probe events")
    parser.add_argument("--warmup", type=float, default=2.0, help="s of flood before probing")
    parser.add_argument(
        "--nice",
        type=int,
        default=0,
        help="run the flooder under nice -n N (at a venue the flooding console is another "
        "machine: 19 keeps it from taking the CPU the hub and Redis need on this one)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with private_redis.redis_url(args.redis, *REDIS_LIMITS) as url:
        result = asyncio.run(run(url, args.probes, args.pace, args.warmup, args.nice, args.rounds))
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
