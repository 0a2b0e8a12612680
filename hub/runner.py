"""Process roles and the commands that start them: `serve`, `console`, `demo`.

- *ingest*: the single writer: console channels → engine → journal → feed channel.
- *edge*: websocket and REST clients, fed from the feed channel (any number of them).
- *all*: both in one process, the edge fed directly by the ingest (also what `demo` runs).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import random
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from hub.bus.base import Bus, open_bus
from hub.configfile import load_config
from hub.deckfile import load_decks
from hub.domain.config import TournamentConfig
from hub.engine.core import Engine
from hub.fanout import Fanout
from hub.feed import TopicStore, Update
from hub.ingest import Ingest
from hub.metrics import Metrics

log = logging.getLogger("duplicast")


def _home() -> Path:
    """Where `overlays/` and `samples/` live: $DUPLICAST_HOME, else the source checkout (an
    editable install), else the working directory (a wheel install run from /app in Docker)."""
    if os.environ.get("DUPLICAST_HOME"):
        return Path(os.environ["DUPLICAST_HOME"])
    checkout = Path(__file__).resolve().parent.parent
    return checkout if (checkout / "overlays").is_dir() else Path.cwd()


ROOT = _home()
OVERLAYS = ROOT / "overlays"
SAMPLE_CONFIG = ROOT / "samples" / "ifp6.toml"


class IngestSource:
    """FeedSource for a process that runs the ingest: its edge reads the ingest's own store."""

    def __init__(self, bus: Bus, engine: Engine, *, own_bus: bool = True) -> None:
        self.bus = bus
        self.engine = engine
        self.tournament = engine.config.id
        self.store = TopicStore()
        self.fanout = Fanout(self.store)
        self.metrics = Metrics()
        self.lost = asyncio.Event()  # set when the ingest lost its lease to another one
        self.ingest = self._ingest(engine)
        self._own_bus = own_bus

    def _ingest(self, engine: Engine) -> Ingest:
        return Ingest(
            self.bus,
            engine,
            store=self.store,
            on_update=self._on_update,
            metrics=self.metrics,
            on_lost=self.lost.set,
        )

    def _on_update(self, update: Update) -> None:
        self.fanout.publish_update(update)

    def ready(self) -> bool:
        return self.ingest.ready

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        return await self.ingest.control_now(command)

    async def replace_engine(self, engine: Engine) -> None:
        """Start over with another engine (a new session), keeping clients and topic seqs."""
        await self.ingest.stop()
        self.engine = engine
        self.ingest = self._ingest(engine)
        await self.ingest.start()

    async def start(self) -> None:
        if self._own_bus:
            await self.bus.connect()
        await self.ingest.start()

    async def stop(self) -> None:
        await self.ingest.stop()
        if self._own_bus:
            await self.bus.close()


def load_tournament(config_path: Path) -> tuple[TournamentConfig, Any]:
    config = load_config(config_path)
    decks = load_decks(config, config_path.parent, dict(os.environ))
    return config, decks


async def _until_signalled(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()


async def run_serve(args: argparse.Namespace) -> int:
    from hub.edge import EdgeSource
    from hub.server import create_app, serve, tune_gc

    config, decks = load_tournament(args.config)
    bus = open_bus(args.redis)
    await bus.connect()
    source: Any
    if args.role == "edge":
        source = EdgeSource(bus, config.id)
    else:
        source = IngestSource(bus, Engine(config, decks), own_bus=False)
    app = create_app(source, overlays_dir=OVERLAYS, metrics=getattr(source, "metrics", None))
    lost = getattr(source, "lost", None)
    try:
        server = await serve(app, args.host, args.port)
        tune_gc()
        print(f"duplicast {args.role} for {config.id!r} on {server.url}", flush=True)
        stop = asyncio.Event()
        waits = [asyncio.ensure_future(_until_signalled(stop))]
        if lost is not None:
            waits.append(asyncio.ensure_future(lost.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waits:
                waiter.cancel()
            await server.stop()
    finally:
        await bus.close()
    if lost is not None and lost.is_set():
        print("duplicast: this ingest lost its lease to another one; exiting", file=sys.stderr)
        return 3
    return 0


async def run_console(args: argparse.Namespace) -> int:
    from hub.console import replay_log

    bus = open_bus(args.redis)
    await bus.connect()
    try:
        if args.action == "send":
            fields = _parse_fields(args.fields)
            events = [
                {
                    "tournament": args.tournament,
                    "table": args.table,
                    "console": args.console or f"table{args.table}",
                    "seq": args.seq,
                    "v": 1,
                    **fields,
                }
            ]
            report = await replay_log(bus, args.tournament, events)
        elif args.action == "replay":
            report = await replay_log(bus, args.tournament, args.log, pace=args.pace)
        else:
            config, decks = load_tournament(args.config)
            from hub.engine.simulate import simulate_session

            rng = random.Random(args.seed)
            tables = [args.table] if args.table else None
            events = list(simulate_session(config, decks, rng, tables=tables))
            report = await replay_log(bus, config.id, events, pace=args.pace)
        print(
            f"{report.events} events from {report.consoles} console(s) in {report.seconds:.1f} s: "
            f"{report.accepted} accepted, {report.rejected} rejected, "
            f"{report.duplicates} duplicates, {report.resent} resent",
            flush=True,
        )
        return 1 if report.rejected else 0
    finally:
        await bus.close()


def _parse_fields(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if key == "seats":
            out[key] = [int(v) for v in value.split(",") if v]
        elif value.lstrip("-").isdigit():
            out[key] = int(value)
        else:
            out[key] = value
    return out


async def run_demo(args: argparse.Namespace) -> int:
    from hub.demo import Demo

    demo = Demo(
        config_path=args.config,
        redis_url=args.redis,
        host=args.host,
        port=args.port,
        speed=args.speed,
        seed=args.seed,
        loop_session=not args.once,
    )
    await demo.start()
    print(demo.banner(), flush=True)
    stop = asyncio.Event()
    waiter = asyncio.create_task(_until_signalled(stop))
    done = asyncio.create_task(demo.wait_finished()) if args.once else None
    try:
        wait_for: list[asyncio.Task[Any]] = [waiter] + ([done] if done else [])
        await asyncio.wait(wait_for, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if done:
            done.cancel()
        await demo.stop()
    return 0


def _sync(coro_fn: Callable[[argparse.Namespace], Awaitable[int]]) -> Callable[..., int]:
    def run(args: argparse.Namespace) -> int:
        logging.basicConfig(
            level=os.environ.get("DUPLICAST_LOG", "INFO"),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        try:
            return asyncio.run(coro_fn(args))  # type: ignore[arg-type]
        except KeyboardInterrupt:
            return 130

    return run


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the hub on Redis: ingest, edge or both")
    p.add_argument("--config", type=Path, default=SAMPLE_CONFIG)
    p.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    p.add_argument("--role", choices=("all", "ingest", "edge"), default="all")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.set_defaults(func=_sync(run_serve))

    c = sub.add_parser("console", help="console client: send, replay or simulate")
    c.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    csub = c.add_subparsers(dest="action", required=True)
    send = csub.add_parser("send", help="send one event: type=fold seat=3 ...")
    send.add_argument("--tournament", required=True)
    send.add_argument("--table", type=int, required=True)
    send.add_argument("--console", default=None)
    send.add_argument("--seq", type=int, required=True, help="this console's next seq")
    send.add_argument("fields", nargs="+", help="key=value (type=raise seat=3 amount=350)")
    replay = csub.add_parser("replay", help="send a JSON Lines event log")
    replay.add_argument("--tournament", required=True)
    replay.add_argument("--pace", type=float, default=0.0, help="seconds between events")
    replay.add_argument("log", type=Path)
    sim = csub.add_parser("simulate", help="bots play a table or the whole session")
    sim.add_argument("--config", type=Path, default=SAMPLE_CONFIG)
    sim.add_argument("--table", type=int, default=None, help="one table (default: all)")
    sim.add_argument("--seed", type=int, default=int(time.time()))
    sim.add_argument("--pace", type=float, default=0.5, help="seconds between a table's events")
    for parser in (send, replay, sim):
        parser.add_argument("--redis", default=argparse.SUPPRESS)
    c.set_defaults(func=_sync(run_console))

    d = sub.add_parser("demo", help="embedded demo: no Redis needed, overlays served")
    d.add_argument("--config", type=Path, default=SAMPLE_CONFIG)
    d.add_argument("--redis", default=None, help="run the same demo on Redis")
    d.add_argument("--host", default="127.0.0.1")
    d.add_argument("--port", type=int, default=8000)
    d.add_argument("--speed", type=float, default=1.0, help="2 = twice as fast")
    d.add_argument("--seed", type=int, default=7)
    d.add_argument("--once", action="store_true", help="stop after one session")
    d.set_defaults(func=_sync(run_demo))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)
