"""The ingest's instructions per console event at 60 tables, outside a shared clock (issue #31).

One process: a private ``redis-server`` (``bench/private_redis.py``, AOF with ``appendfsync
always``), the real ``Ingest`` (feed inline) on a real ``RedisBus``, and a fixed list of
console events of the bench's 60-table session (``projection_bench.session_of``, seed 11),
each handed in as a batch of its own and followed by its own feed publish, as the events come
at 60 tables (``Ingest.handle``: decide, journal, answer, then ``FeedPublisher.publish``; the
publish's scheduling, ``FEED_GATHER``, is left out). Run it under valgrind so two trees
compare by counts (``ROOT``: the tree whose ``hub`` and ``bench`` run; a base tree from
``git -C /work/main archive main | tar -x -C /tmp/base``, ``python -m compileall -q hub`` in
both first, as ``PYTHONDONTWRITEBYTECODE`` is set)::

    PYTHONHASHSEED=0 valgrind --tool=callgrind --collect-atstart=no \\
        --toggle-collect=_operator_call .venv/bin/python bench/ingest_instr.py ROOT --mode all
    PYTHONHASHSEED=0 valgrind --tool=callgrind --collect-atstart=no \\
        --toggle-collect=_operator_call .venv/bin/python bench/ingest_instr.py ROOT --mode flush

``--paced``: each event's publish is the pipeline's (``FeedPublisher.publish(paced=True)``:
the families kept at a cadence move at most once per cadence), on the events' clock; a tree
without cadences publishes as without it.

``--mode all``: the measured events (after ``--warmup`` events) run inside one
``operator.call``, so callgrind counts only them; ``--mode flush``: the engine's flush
(``Projecting.flush``, the families' work) alone, each call through ``operator.call``;
``--mode submit``: the engine's ``submit`` alone (validate and apply, in the decide stage). All
less these is the rest of the ingest's path: framing, the publisher's body, the bus and its
lane, the answers, the journal and decide stages. Divide by ``--events``. (Redis's own work is
in another process; the socket system calls' user-side cost counts.)

``--mode hash``: no valgrind; every byte the bus's lane writes to Redis from the start (the
journal appends, the acks, the feed messages, the hash writes), the journal positions
(time-based ids) replaced by their order of first appearance, as one sha256 and per command;
the same in two trees proves the same records, acks and feed messages.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import inspect
import operator
import pickle
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any


class Tapped:
    """A transport whose writes are seen first (uvloop's ``write`` cannot be replaced)."""

    def __init__(self, transport: Any, tap: Callable[[Callable[[bytes], Any]], Any]) -> None:
        self._transport = transport
        self.write = tap(transport.write)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the tree whose hub and bench run")
    parser.add_argument("--mode", choices=("all", "flush", "submit", "hash", "time"), default="all")
    parser.add_argument("--tables", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--dump", type=Path, help="(hash) also write what is hashed here")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ingest_instr"))
    parser.add_argument(
        "--paced",
        action="store_true",
        help="each publish as the pipeline's (at the families' cadences, on the events' clock)",
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    sys.path[:0] = [str(root), str(root / "bench")]
    import private_redis
    import projection_bench
    import uvloop

    from hub.bus.base import Message
    from hub.bus.redis import RedisBus
    from hub.bus.redis_lane import _Protocol
    from hub.engine.core import Engine
    from hub.engine.projecting import Projecting
    from hub.roles.ingest import Ingest
    from hub.roles.publisher import FeedPublisher
    from hub.wire import codec

    assert Path(sys.modules[Engine.__module__].__file__ or "").is_relative_to(root)
    args.cache.mkdir(parents=True, exist_ok=True)
    total = args.warmup + args.events
    kept = args.cache / f"session-{args.tables}-{total}.pkl"
    if kept.exists():
        session = pickle.loads(kept.read_bytes())
    else:
        session = projection_bench.session_of(root, total, 11, args.tables)
        kept.write_bytes(pickle.dumps(session))
    measuring = False  # (flush, submit: the measured events' calls only)
    if args.mode in ("flush", "submit"):
        owner: Any = Projecting if args.mode == "flush" else Engine
        plain = getattr(owner, args.mode)

        def counted(self: Any, *a: Any, **k: Any) -> Any:
            return operator.call(plain, self, *a, **k) if measuring else plain(self, *a, **k)

        setattr(owner, args.mode, counted)

    hashes: dict[str, Any] = {"all": hashlib.sha256(), "commands": Counter(), "ids": {}}

    def hashing(write: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
        ids: dict[bytes, bytes] = hashes["ids"]

        def position(m: re.Match[bytes]) -> bytes:
            return ids.setdefault(m.group(0), b"P%d" % len(ids))

        def wrap(data: bytes) -> Any:
            text = re.sub(rb"\b1[0-9]{12}-[0-9]+\b", position, bytes(data))
            text = text.replace(hashes["owner"], b"OWNER")  # the lease's (host, pid, random)
            hashes["all"].update(text)
            if args.dump is not None:
                with args.dump.open("ab") as out:
                    out.write(text + b"\n")
            for name in re.findall(rb"\*[0-9]+\r\n\$[0-9]+\r\n([A-Z]+)\r\n", text):
                hashes["commands"][name.decode()] += 1
            return write(data)

        return wrap

    tick = [1_700_000_000.0]

    def clock() -> float:
        return tick[0]

    async def setup(url: str) -> tuple[Any, Any, list[Any]]:
        config, decks = session.config, session.decks
        bus = RedisBus(url)
        await bus.connect()
        engine = Engine(config, decks, release_delay=0.0)
        ingest = Ingest(bus, engine, clock=clock, tick_interval=3600.0, lease_ttl=3600.0)
        hashes["owner"] = ingest.owner.encode()
        # the lease, the rebuild and the feed, as ``Ingest.start`` does them; not its 120
        # subscriptions (the events are handed in here, and their connecting under valgrind
        # times out and retries, work that would count)
        assert await ingest.lease.claim()
        await ingest.rebuild()
        ingest.ready = True
        ingest.feed.serve()
        names = ingest.names
        messages = [
            Message(names.console(event["table"]), codec.pack(event), 0.0)
            for event in session.events
        ]
        return bus, ingest, messages

    pacing = args.paced and "paced" in inspect.signature(FeedPublisher.publish).parameters
    if pacing:
        # The cadences on the events' clock (1/tables s apart), not the wall's (valgrind's
        # is ~50x slower): what a cadence leaves is published by the first event's publish
        # after it is due, as the writer's own timer would at 60 events a second.
        publisher = sys.modules[FeedPublisher.__module__]
        publisher.time = SimpleNamespace(monotonic=clock, thread_time=time.thread_time)  # type: ignore[attr-defined]
        FeedPublisher._paced_due = lambda self: None  # type: ignore[method-assign]

    async def events(ingest: Any, batch: list[Any]) -> None:
        for message in batch:
            tick[0] += 1.0 / args.tables
            await ingest.handle_batch([message])
            if pacing:
                await ingest.feed.publish(paced=True)
            else:
                await ingest.feed.publish()

    async def stop(bus: Any, ingest: Any) -> None:
        await ingest.stop()
        await bus.close()

    if args.mode == "hash":  # every connection of the lane: its writes seen first
        made = _Protocol.connection_made

        def tapped(self: Any, transport: Any) -> None:
            made(self, Tapped(transport, hashing))

        _Protocol.connection_made = tapped  # type: ignore[method-assign]

    with tempfile.TemporaryDirectory() as work:
        server, url = private_redis.start(
            Path(work), "--appendonly", "yes", "--appendfsync", "always"
        )
        try:
            with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                bus, ingest, messages = runner.run(setup(url))
                runner.run(events(ingest, messages[: args.warmup]))
                measured = messages[args.warmup :]
                gc.collect()
                started, cpu = time.perf_counter(), time.process_time()
                measuring = True
                if args.mode == "all":  # callgrind counts inside this call only
                    operator.call(runner.run, events(ingest, measured))
                else:
                    runner.run(events(ingest, measured))
                wall, used = time.perf_counter() - started, time.process_time() - cpu
                applied = ingest.engine.state.events_applied
                runner.run(stop(bus, ingest))
        finally:
            server.terminate()
            server.wait(10)
    print(
        f"{args.mode}: {len(measured)} events measured after {args.warmup} "
        f"({applied} applied): {1e6 * used / len(measured):.0f} us CPU, "
        f"{1e6 * wall / len(measured):.0f} us wall an event"
    )
    if args.mode == "hash":
        print("sha256", hashes["all"].hexdigest())
        print("commands", dict(sorted(hashes["commands"].items())))


if __name__ == "__main__":
    main()
