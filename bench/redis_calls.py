"""CPU per call of the bus's per-event Redis commands, on its lean connection and on redis-py.

    python bench/redis_calls.py [--calls 2000]

A private ``redis-server`` (``bench/private_redis.py``); one ``RedisBus`` with its lane
(``hub/bus/redis_lane.py``) and one without (every command through redis-py's asyncio client,
as before the lane), the same calls on each in turn: an ack (``publish_many`` of one message),
three and seven feed messages, a ``publish``, a journal append (``append_many``'s script with a
``maxlen``), a three-field ``hset_many``. This process's CPU time per call (user + system: the
socket's system calls count), and wall time (on a loaded machine, mostly waiting for a core).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for where in (HERE.parent, HERE):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

import private_redis  # noqa: E402
import uvloop  # noqa: E402

from hub.bus.redis import RedisBus  # noqa: E402


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def measure(url: str, calls: int) -> dict[str, dict[str, float]]:
    lane, plain = RedisBus(url), RedisBus(url)
    for bus in (lane, plain):
        await bus.connect()
    plain._lane = None  # redis-py for everything: the bus before the lane
    ack = [("dup:bench:ack:c1", b"a" * 40)]
    fields = {"a": b"1", "b": b"2", "c": b"3"}
    frames = [("dup:bench:feed", b"f" * 600)] * 7
    cases: dict[str, Callable[[RedisBus], Awaitable[Any]]] = {
        "publish_many, 1 message (an ack)": lambda b: b.publish_many(ack),
        "publish_many, 3 messages": lambda b: b.publish_many(frames[:3]),
        "publish_many, 7 messages (a flush)": lambda b: b.publish_many(frames),
        "publish": lambda b: b.publish("dup:bench:ack:c1", b"a" * 40),
        "append_many, 1 record, maxlen (script)": lambda b: b.append_many(
            "dup:bench:journal", [b"r" * 200], maxlen=1000
        ),
        "hset_many, 3 fields": lambda b: b.hset_many("dup:bench:h", fields),
    }
    out: dict[str, dict[str, float]] = {}
    for name, call in cases.items():
        for label, bus in (("lane", lane), ("redis-py", plain)):
            for _ in range(50):
                await call(bus)
            c, w = cpu(), time.perf_counter()
            for _ in range(calls):
                await call(bus)
            out.setdefault(name, {})[label] = 1e6 * (cpu() - c) / calls
            out[name][label + " wall"] = 1e6 * (time.perf_counter() - w) / calls
    for bus in (lane, plain):
        await bus.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        server, url = private_redis.start(Path(work))
        try:
            found = uvloop.run(measure(url, args.calls))
        finally:
            server.terminate()
            server.wait(10)
    print(f"{'call':42s} {'lane':>8s} {'redis-py':>9s}  µs CPU a call (wall: lane / redis-py)")
    for name, got in found.items():
        print(
            f"{name:42s} {got['lane']:8.1f} {got['redis-py']:9.1f}"
            f"  ({got['lane wall']:.0f} / {got['redis-py wall']:.0f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
