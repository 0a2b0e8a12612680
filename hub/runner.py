"""Process roles and the commands that start them: `serve`, `console`, `demo`.

- *ingest*: the single writer: console channels → engine → journal → feed channel.
- *edge*: websocket and REST clients, fed from the feed channel (any number of them).
- *all*: both in one process, the edge fed directly by the ingest (also what `demo` runs).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from hub import logs
from hub.bus import open_bus
from hub.configfile import load_config
from hub.deckfile import load_decks
from hub.demo import run_demo
from hub.embedded import (
    OVERLAYS,
    SAMPLE_CONFIG,
    IngestSource,
    load_tournament,
    until_signalled,
    weak_tokens_refused,
)
from hub.engine.core import Engine
from hub.engine.topics import TopicSpace

log = logging.getLogger("duplicast")


async def run_serve(args: argparse.Namespace) -> int:
    from hub.auth import Auth
    from hub.edge import EdgeSource
    from hub.server import create_app, serve, tune_gc

    auth = Auth.from_env()
    if weak_tokens_refused("serve", auth):
        return 2
    config = load_config(args.config)
    bus = open_bus(args.redis)
    await bus.connect()
    source: Any
    if args.role == "edge":  # an edge never needs the deck key: it holds no cards of its own
        source = EdgeSource(bus, config.id, topics=TopicSpace.of(config))
    else:
        decks = load_decks(config, args.config.parent, dict(os.environ))
        source = IngestSource(bus, Engine(config, decks), own_bus=False)
    metrics = getattr(source, "metrics", None)
    app = create_app(source, overlays_dir=OVERLAYS, auth=auth, metrics=metrics)
    lost = getattr(source, "lost", None)
    stop_metrics = None
    if args.metrics_port:  # every metric, unauthenticated: a port kept off the public network
        from hub.metrics import serve_private

        stop_metrics = serve_private(app.state.metrics, args.metrics_host, args.metrics_port)
    try:
        server = await serve(app, args.host, args.port)
        tune_gc()
        print(f"duplicast {args.role} for {config.id!r} on {server.url}", flush=True)
        stop = asyncio.Event()
        waits = [asyncio.ensure_future(until_signalled(stop))]
        if lost is not None:
            waits.append(asyncio.ensure_future(lost.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waits:
                waiter.cancel()
            await server.stop()
    finally:
        if stop_metrics is not None:
            stop_metrics()
        await bus.close()
    if lost is not None and lost.is_set():
        print("duplicast: this ingest lost its lease to another one; exiting", file=sys.stderr)
        return 3
    return 0


async def run_console(args: argparse.Namespace) -> int:
    from hub.console import replay_log
    from hub.outbox import default_outbox_template

    outbox = None if args.no_outbox else (args.outbox or default_outbox_template())
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
            report = await replay_log(bus, args.tournament, events, outbox=outbox, resume=False)
        elif args.action == "replay" and args.phh:
            config = load_config(args.config)
            events = phh_events(config, args.phh, args.table, args.console, args.deal)
            report = await replay_log(bus, config.id, events, pace=args.pace, outbox=outbox)
        elif args.action == "replay":
            if args.tournament is None or args.log is None:
                print("console replay: needs --tournament and a log (or --phh)", file=sys.stderr)
                return 2
            report = await replay_log(bus, args.tournament, args.log, pace=args.pace, outbox=outbox)
        else:
            config, decks = load_tournament(args.config)
            from hub.engine.simulate import simulate_session

            rng = random.Random(args.seed)
            tables = [args.table] if args.table else None
            events = list(simulate_session(config, decks, rng, tables=tables))
            report = await replay_log(bus, config.id, events, pace=args.pace, outbox=outbox)
        print(
            f"{report.events} events from {report.consoles} console(s) in {report.seconds:.1f} s: "
            f"{report.accepted} accepted, {report.rejected} rejected, "
            f"{report.duplicates} duplicates, {report.resent} resent"
            + (
                f", {report.already} already held by the hub (nothing applied)"
                if report.already
                else ""
            )
            + (
                f"; from the outbox: {report.restored} unanswered resent, "
                f"{report.skipped} sent before"
                if report.restored or report.skipped
                else ""
            ),
            flush=True,
        )
        return 1 if report.rejected or (report.already and args.action == "send") else 0
    finally:
        await bus.close()


def phh_events(
    config: Any, files: list[Path], table: int, console: str | None, deal: int | None
) -> list[dict[str, Any]]:
    """The console events of PHH hands played one after another at ``table``."""
    from hub.domain.phh import read_phh
    from hub.phhfiles import ImportRefused, console_events, hands_in

    if table not in config.deal_orders:
        raise SystemExit(f"console replay: table {table} is not in {config.id}")
    order = list(config.deal_orders[table])
    start = order.index(deal) if deal is not None and deal in order else 0
    if deal is not None and deal not in order:
        raise SystemExit(f"console replay: deal {deal} is not played at table {table}")
    events: list[dict[str, Any]] = []
    hands = [(name, data) for path in files for name, data in hands_in(path)]
    if len(hands) > len(order) - start:
        raise SystemExit(
            f"console replay: {len(hands)} hands, table {table} has deals left "
            f"for {len(order) - start}"
        )
    for (name, data), deal_no in zip(hands, order[start:], strict=False):
        try:
            if isinstance(data, str):
                raise ImportRefused(data)
            phh = read_phh(data)
            events += console_events(
                config, phh, table=table, deal=deal_no, console=console or f"table{table}"
            )
        except (ImportRefused, ValueError, KeyError) as exc:
            raise SystemExit(f"console replay: {name}: {exc}") from None
    return events


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


def _sync(coro_fn: Callable[[argparse.Namespace], Awaitable[int]]) -> Callable[..., int]:
    def run(args: argparse.Namespace) -> int:
        logging.basicConfig(
            level=os.environ.get("DUPLICAST_LOG", "INFO"),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        repeats = logs.install()  # a flood of bad input must not flood the log
        try:
            return asyncio.run(coro_fn(args))  # type: ignore[arg-type]
        except KeyboardInterrupt:
            return 130
        finally:
            for repeat in repeats:
                repeat.flush()

    return run


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the hub on Redis: ingest, edge or both")
    p.add_argument("--config", type=Path, default=SAMPLE_CONFIG)
    p.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    p.add_argument("--role", choices=("all", "ingest", "edge"), default="all")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--metrics-port", type=int, default=None, help="every metric here, no token (private)"
    )
    p.add_argument("--metrics-host", default="127.0.0.1", help="address of --metrics-port")
    p.set_defaults(func=_sync(run_serve))

    c = sub.add_parser("console", help="console client: send, replay or simulate")
    c.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    csub = c.add_subparsers(dest="action", required=True)
    send = csub.add_parser("send", help="send one event: type=fold seat=3 ...")
    send.add_argument("--tournament", required=True)
    send.add_argument("--table", type=int, required=True)
    send.add_argument("--console", default=None)
    send.add_argument(
        "--seq", type=int, required=True, help="this console's next seq (if its outbox has none)"
    )
    send.add_argument("fields", nargs="+", help="key=value (type=raise seat=3 amount=350)")
    replay = csub.add_parser(
        "replay", help="send a JSON Lines event log, or play PHH hands at a table (--phh)"
    )
    replay.add_argument("--tournament", default=None, help="with a log: the tournament id")
    replay.add_argument("--pace", type=float, default=0.0, help="seconds between events")
    replay.add_argument("log", type=Path, nargs="?", default=None)
    replay.add_argument(
        "--phh", type=Path, nargs="+", default=None, help="PHH files: one hand each, in order"
    )
    replay.add_argument("--config", type=Path, default=SAMPLE_CONFIG, help="with --phh")
    replay.add_argument("--table", type=int, default=1, help="with --phh: the table")
    replay.add_argument("--console", default=None, help="with --phh (default: table{N})")
    replay.add_argument(
        "--deal",
        type=int,
        default=None,
        help="with --phh: the first hand's deal (default: the table's first); "
        "later files take the deals after it in the table's order",
    )
    sim = csub.add_parser("simulate", help="bots play a table or the whole session")
    sim.add_argument("--config", type=Path, default=SAMPLE_CONFIG)
    sim.add_argument("--table", type=int, default=None, help="one table (default: all)")
    sim.add_argument("--seed", type=int, default=int(time.time()))
    sim.add_argument("--pace", type=float, default=0.5, help="seconds between a table's events")
    for parser in (send, replay, sim):
        parser.add_argument("--redis", default=argparse.SUPPRESS)
        parser.add_argument(
            "--outbox",
            default=None,
            help="unacknowledged events on disk (SQLite), resent after a crash; {console} and "
            "{tournament} are filled in (default: "
            "$XDG_STATE_HOME/duplicast/outbox-{tournament}-{console}.sqlite)",
        )
        parser.add_argument(
            "--no-outbox", action="store_true", help="keep the outbox in memory only"
        )
    c.set_defaults(func=_sync(run_console))

    d = sub.add_parser("demo", help="embedded demo: no Redis needed, overlays served")
    d.add_argument("--config", type=Path, default=SAMPLE_CONFIG)
    d.add_argument("--redis", default=None, help="run the same demo on Redis")
    d.add_argument("--host", default="127.0.0.1")
    d.add_argument("--port", type=int, default=8000)
    d.add_argument("--speed", type=float, default=1.0, help="2 = twice as fast")
    d.add_argument("--seed", type=int, default=7)
    d.add_argument("--once", action="store_true", help="stop after one session")
    d.add_argument(
        "--reset",
        action="store_true",
        help="with --redis: delete the tournament's data already there (refused without it)",
    )
    d.set_defaults(func=_sync(run_demo))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)
