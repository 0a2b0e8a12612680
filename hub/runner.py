"""Process roles and the commands that start them: `serve`, `console`, `demo`, and `export`
(the journal out of Redis).

- *ingest*: the single writer: console channels → engine → journal → feed channel.
- *edge*: websocket and REST clients, fed from the feed channel (any number of them).
- *all*: both in one process, the edge fed directly by the ingest (also what `demo` runs).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from redis.exceptions import RedisError

from hub import logs
from hub.bus import BusUnavailable, open_bus, redacted_url
from hub.channels import Channels
from hub.cliargs import (
    HelpFormatter,
    add_config,
    add_key_file,
    add_progress,
    add_redis,
    finite,
    positive,
    seed,
)
from hub.configfile import load_config
from hub.console import EventLogError
from hub.consolecli import NO_HUB_TIMEOUT, run_console
from hub.consolecli import phh_events as phh_events  # re-exported: it lived here
from hub.deckfile import KEY_ENV, KEY_FILE_ENV, DeckFileError, load_decks
from hub.demo import run_demo
from hub.domain.config import ConfigError
from hub.domain.states import ProcessRole
from hub.edge import EdgeSource
from hub.embedded import (
    OVERLAYS,
    SAMPLE_CONFIG,
    IngestSource,
    until_signalled,
    weak_tokens_refused,
)
from hub.engine.core import Engine
from hub.httpguard import REQUEST_TIMEOUT
from hub.ingest import Ingest
from hub.links import COMMENTATOR_ENV, OPERATOR_ENV, link_lines, roles_off
from hub.proxies import TRUSTED_PROXIES_ENV, TrustedProxies
from hub.server import ListenError
from hub.topicnames import TopicSpace
from hub.workers import raise_open_files, start_edge_workers, stop_workers, wait_listening

log = logging.getLogger("duplicast")

NO_CONSOLES_WARNING = (
    "duplicast serve: WARNING: the tournament file has no [consoles] section: any console "
    "name is accepted, and whoever writes a table first under a name holds that name "
    "(list each console and its table in [consoles]; docs/security.md)"
)


async def run_serve(args: argparse.Namespace) -> int:
    from hub.auth import Auth
    from hub.fanout import Limits
    from hub.server import create_app, serve, tune_gc

    auth = Auth.from_env()
    if weak_tokens_refused("serve", auth):
        return 2
    if args.processes > 1 and args.role != ProcessRole.EDGE:
        print(
            "duplicast serve: --processes needs --role edge (one ingest writes the journal)",
            file=sys.stderr,
        )
        return 2
    if args.worker_of is not None:  # an edge worker of `--processes N`: ends with its parent
        from hub.lifeline import die_with_parent

        die_with_parent(args.worker_of)
    try:
        proxies = TrustedProxies(args.trusted_proxy or ()) or TrustedProxies.from_env()
    except ValueError as exc:
        print(f"duplicast serve: --trusted-proxy / {TRUSTED_PROXIES_ENV}: {exc}", file=sys.stderr)
        return 2
    raise_open_files()
    config = load_config(args.config)
    print(_serve_line(args, config, proxies), file=sys.stderr, flush=True)
    if args.role in (ProcessRole.INGEST, ProcessRole.ALL) and not config.consoles:
        print(NO_CONSOLES_WARNING, file=sys.stderr, flush=True)
    if args.role != ProcessRole.PROJECTOR and args.worker_of is None:
        for warning in roles_off(auth.commentator_token, auth.operator_token):
            print(f"duplicast serve: warning: {warning}", file=sys.stderr, flush=True)
    bus = open_bus(args.redis)
    await bus.connect()
    if args.role == ProcessRole.PROJECTOR:
        return await run_projector(bus, config, args)
    source: Any
    limits = Limits(max_per_address=args.max_per_address)
    writer: Ingest | None = None  # --feed separate: the ingest beside an edge's server
    lost: asyncio.Event | None = None
    if (
        args.role == ProcessRole.EDGE
    ):  # an edge never needs the deck key: it holds no cards of its own
        source = EdgeSource(bus, config.id, topics=TopicSpace.of(config), limits=limits)
    elif args.role == ProcessRole.INGEST and args.feed == "separate":
        decks = load_decks(config, args.config.parent, dict(os.environ))
        lost = asyncio.Event()
        writer = Ingest(bus, Engine(config, decks), feed=False, on_lost=lost.set)
        source = WriterSource(bus, config.id, writer, topics=TopicSpace.of(config), limits=limits)
        await writer.start()
    else:
        decks = load_decks(config, args.config.parent, dict(os.environ))
        source = IngestSource(bus, Engine(config, decks), own_bus=False, limits=limits)
    metrics = getattr(source, "metrics", None)
    app = create_app(
        source,
        overlays_dir=OVERLAYS,
        auth=auth,
        metrics=metrics,
        trusted_proxies=proxies,
    )
    if writer is None:
        lost = getattr(source, "lost", None)
    stop_metrics = None
    if args.metrics_port:  # every metric, unauthenticated: a port kept off the public network
        from hub.metrics import serve_private

        try:
            stop_metrics = serve_private(app.state.metrics, args.metrics_host, args.metrics_port)
        except OSError as exc:
            raise ListenError(args.metrics_host, args.metrics_port, exc) from None
    workers: list[subprocess.Popen[bytes]] = []
    try:
        several = args.processes > 1 or args.reuse_port
        server = await serve(
            app,
            args.host,
            args.port,
            reuse_port=several,
            join=args.reuse_port,
            request_timeout=args.request_timeout,
            max_pending=args.max_pending_requests,
        )
        if args.processes > 1:
            workers = start_edge_workers(args, server.port)
            await wait_listening(workers)
        tune_gc()
        print(
            f"duplicast {args.role} for {config.id!r} on {server.url}"
            + (f" ({args.processes} processes)" if args.processes > 1 else ""),
            flush=True,
        )
        if args.worker_of is None:  # a worker's parent prints them
            print("\n".join(_links(args, config, auth, server.port)), flush=True)
        stop = asyncio.Event()
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(until_signalled(stop))]
        if lost is not None:
            waits.append(asyncio.ensure_future(lost.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waits:
                waiter.cancel()
            await server.stop()
    finally:
        stop_workers(workers)
        if stop_metrics is not None:
            stop_metrics()
        if writer is not None:
            await writer.stop()
        await bus.close()
    if lost is not None and lost.is_set():
        print("duplicast: this ingest lost its lease to another one; exiting", file=sys.stderr)
        return 3
    return 0


class WriterSource(EdgeSource):
    """What an ingest run with ``--feed separate`` serves: its clients as an edge's (the feed
    comes from the projector), its own metrics and PHH export, and ready only while both the
    edge follows the feed and the ingest holds the lease (not in standby)."""

    def __init__(self, bus: Any, tournament: str, ingest: Ingest, **options: Any) -> None:
        super().__init__(bus, tournament, **options)
        self.ingest = ingest
        self.metrics = ingest.metrics

    @property
    def engine(self) -> Engine:
        """The ingest's engine: what `/api/export/phh` reads (it holds the cards)."""
        return self.ingest.engine

    def ready(self) -> bool:
        return super().ready() and self.ingest.ready


async def run_projector(bus: Any, config: Any, args: argparse.Namespace) -> int:
    """`serve --role projector`: the feed of an ingest started with ``--feed separate``,
    published by following the journal (hub.projector); no HTTP of its own."""
    from hub.projector import Projector
    from hub.server import tune_gc

    decks = load_decks(config, args.config.parent, dict(os.environ))
    lost = asyncio.Event()
    projector = Projector(bus, Engine(config, decks), on_lost=lost.set)
    try:
        await projector.start()
        tune_gc()
        state = "standby" if projector.standby else f"at {projector.position}"
        print(f"duplicast projector for {config.id!r} ({state})", flush=True)
        stop = asyncio.Event()
        waits: list[asyncio.Future[Any]] = [
            asyncio.ensure_future(until_signalled(stop)),
            asyncio.ensure_future(lost.wait()),
        ]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waits:
                waiter.cancel()
    finally:
        await projector.stop()
        await bus.close()
    if lost.is_set():
        print("duplicast: this projector lost its lease to another one; exiting", file=sys.stderr)
        return 3
    return 0


def _links(args: argparse.Namespace, config: Any, auth: Any, port: int) -> list[str]:
    """What to open (``hub.links``). Tokens stand as the variables that hold them: a terminal
    or a service log is no place for a secret, unless ``--show-tokens``."""
    if args.show_tokens:
        commentator, operator = auth.commentator_token, auth.operator_token
    else:
        commentator = auth.commentator_token and f"${COMMENTATOR_ENV}"
        operator = auth.operator_token and f"${OPERATOR_ENV}"
    hidden = "" if args.show_tokens else " (tokens hidden: --show-tokens prints them)"
    return [
        f"Links{hidden}:",
        *link_lines(config, args.host, port, commentator, operator),
    ]


def _serve_line(args: argparse.Namespace, config: Any, proxies: TrustedProxies) -> str:
    """What `serve` runs on, before it starts: no silent defaults."""
    sample = " (the bundled SAMPLE: give --config FILE for an event)" if _is_sample(args) else ""
    decks = ""
    if args.role != ProcessRole.EDGE and config.decks is not None:
        if config.decks.rehearsal_seed is not None:
            decks = f", REHEARSAL deck orders (seed {config.decks.rehearsal_seed!r})"
        else:
            decks = f", deck file {config.decks.file} (key {_key_source()})"
    return (
        f"duplicast serve: role {args.role}, tournament {config.id!r} from "
        f"{args.config}{sample}, Redis {redacted_url(args.redis)}{decks}, "
        f"HTTP on {args.host}:{args.port}"
        + (f", metrics on {args.metrics_host}:{args.metrics_port}" if args.metrics_port else "")
        + (f", client addresses from X-Forwarded-For of {proxies}" if proxies else "")
    )


def _is_sample(args: argparse.Namespace) -> bool:
    return Path(args.config).resolve() == SAMPLE_CONFIG.resolve()


def _key_source() -> str:
    if os.environ.get(KEY_FILE_ENV):
        return f"from {os.environ[KEY_FILE_ENV]}"
    if os.environ.get(KEY_ENV):
        return f"from ${KEY_ENV}"
    return "not given"


def export_phh(args: argparse.Namespace) -> int:
    """`duplicast export --phh`: a JSON Lines event log replayed offline, every completed hand
    as PHH (docs/phh.md)."""
    from hub.configfile import load_config
    from hub.deckfile import DeckFileError, load_decks
    from hub.domain.config import ConfigError
    from hub.engine.core import Engine
    from hub.engine.phh_export import collect, render
    from hub.phhfiles import write_export
    from hub.replay import ReplayError, read_events, replay

    try:
        config = load_config(args.config)
        engine = Engine(config, load_decks(config, args.config.parent, dict(os.environ)))
        refused = replay(config, read_events(args.log), engine, str(args.log))
    except (ConfigError, ReplayError, DeckFileError) as exc:
        print(f"duplicast export: {exc}", file=sys.stderr)
        return 1
    released = engine.released if args.released_only else None
    rendered = render(collect(engine.state, released), config.name)
    print(write_export(rendered, args.out))
    diverged = [r for r in refused if r.accepted_live]
    for refusal in diverged[:10]:
        print(f"duplicast export: refused: {refusal}", file=sys.stderr)
    if diverged:  # as `replay`: these are not the hands the live event played
        print(
            f"duplicast export: {len(diverged)} event(s) the live hub accepted were refused: "
            "these hands are NOT those of the live event",
            file=sys.stderr,
        )
        return 3
    return 0


def _run_export_command(args: argparse.Namespace) -> int:
    if args.phh:
        if args.log is None or args.out is None:
            print("duplicast export --phh: needs an event log and --out", file=sys.stderr)
            return 2
        return export_phh(args)
    return _sync(run_export)(args)


async def run_export(args: argparse.Namespace) -> int:
    """`duplicast export --events`: the journal as the JSON Lines `replay` reads."""
    from hub.export import dumps, header, journal_events

    config = load_config(args.config)
    bus = open_bus(args.redis)
    await bus.connect()
    count = 0
    out = args.out.open("w", encoding="utf-8") if args.out else sys.stdout
    try:
        epoch = await bus.get(Channels(config.id).epoch)
        text = None if epoch is None else epoch.decode("utf-8", "replace")
        out.write(dumps(header(config.id, text)) + "\n")
        async for event in journal_events(bus, config.id):
            out.write(dumps(event) + "\n")
            count += 1
    finally:
        if args.out:
            out.close()
        await bus.close()
    where = args.out or "stdout"
    print(f"duplicast export: {count} journal records of {config.id!r} to {where}", file=sys.stderr)
    return 0


def run_loop(coro: Awaitable[int]) -> int:
    """Run a command's coroutine on uvloop when installed (uvicorn[standard] brings it: the
    fan-out's socket writes and Redis reads cost less there), else on asyncio's loop."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn[standard] installs it
        return asyncio.run(coro)  # type: ignore[arg-type]
    return uvloop.run(coro)  # type: ignore[arg-type]


def _sync(coro_fn: Callable[[argparse.Namespace], Awaitable[int]]) -> Callable[..., int]:
    def run(args: argparse.Namespace) -> int:
        logging.basicConfig(
            level=os.environ.get("DUPLICAST_LOG", "INFO"),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        repeats = logs.install()  # a flood of bad input must not flood the log
        try:
            return run_loop(coro_fn(args))
        except KeyboardInterrupt:
            return 130
        except (
            BusUnavailable,
            RedisError,
            ConfigError,
            DeckFileError,
            EventLogError,
            ListenError,
        ) as exc:
            # One line that says what is wrong, not the tracebacks of the layers it went
            # through: an unreachable Redis, a refused password, a bad file.
            print(f"duplicast {args.command}: {exc}", file=sys.stderr)
            return 1
        finally:
            for repeat in repeats:
                repeat.flush()

    return run


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve",
        help="run the hub on Redis: ingest, edge or both",
        description="Run the hub on Redis. Prints, before it starts, the tournament file, "
        "Redis, deck key and address it uses.",
        formatter_class=HelpFormatter,
    )
    add_config(p, SAMPLE_CONFIG)
    add_redis(p)
    p.add_argument(
        "--role",
        choices=tuple(ProcessRole),
        default=ProcessRole.ALL,
        help="ingest: the single writer; edge: serves clients; all: both in one process; "
        "projector: publishes the feed by following the journal (with --feed separate)",
    )
    p.add_argument(
        "--feed",
        choices=("inline", "separate"),
        default="inline",
        help="ingest role: publish the feed itself (inline), or leave it to a "
        "`--role projector` process so the ingest's core is the write path's alone",
    )
    p.add_argument("--host", default="127.0.0.1", help="address the HTTP/websocket server binds")
    p.add_argument("--port", type=int, default=8000, help="port of the HTTP/websocket server")
    p.add_argument(
        "--max-per-address",
        type=int,
        default=256,
        help="websocket connections one client address may hold (a venue's OBS machines "
        "behind one NAT address, a load test)",
    )
    p.add_argument(
        "--request-timeout",
        type=positive,
        default=REQUEST_TIMEOUT,
        metavar="SECONDS",
        help="a connection has this long to send a complete request head (a websocket "
        "upgrade, a REST call), else it is closed: half-sent requests cannot pile up",
    )
    p.add_argument(
        "--max-pending-requests",
        type=int,
        default=None,
        metavar="N",
        help="at most N incomplete requests at once; past it the oldest is closed "
        "(default: a quarter of the open-file limit, at most 1024)",
    )
    p.add_argument(
        "--trusted-proxy",
        action="append",
        metavar="ADDRESS|CIDR",
        default=None,
        help="a load balancer whose X-Forwarded-For/-Host name the client (repeatable; "
        "default: $DUPLICAST_TRUSTED_PROXIES, comma-separated; else none)",
    )
    p.add_argument(
        "--processes",
        type=int,
        default=1,
        help="edge role: this many edge processes on the one port (SO_REUSEPORT); one per core",
    )
    p.add_argument(
        "--reuse-port",
        action="store_true",
        help="share the port with other edge processes started separately (SO_REUSEPORT)",
    )
    p.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="every metric here, no token: a private address (default: off)",
    )
    p.add_argument("--metrics-host", default="127.0.0.1", help="address of --metrics-port")
    p.add_argument(
        "--show-tokens",
        action="store_true",
        help="print the commentator and operator tokens in the links printed at start "
        "(default: the variables that hold them)",
    )
    add_key_file(p, "the tournament's deck file (ingest and all; an edge needs none)")
    # set by `--processes N` on the workers it starts: the parent's pid (hub.lifeline)
    p.add_argument("--worker-of", type=int, default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=_sync(run_serve))

    x = sub.add_parser(
        "export",
        help="a live tournament's journal out of Redis (--events: JSON Lines for replay)",
        description="Write what the hub journaled in Redis. --events: every journal record as "
        "the JSON Lines `duplicast replay` reads, to rescore a live event offline or archive it.",
        formatter_class=HelpFormatter,
    )
    x.add_argument("--config", type=Path, required=True, help="tournament TOML file (its id)")
    what = x.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--events", action="store_true", help="the journal in Redis as a JSON Lines event log"
    )
    what.add_argument(
        "--phh",
        action="store_true",
        help="every completed hand of an event log (the positional LOG) as PHH (docs/phh.md)",
    )
    x.add_argument(
        "log", type=Path, nargs="?", default=None, help="with --phh: console events, JSON Lines"
    )
    x.add_argument(
        "--out",
        type=Path,
        default=None,
        help="--events: file to write (default: stdout); --phh: a folder (one .phh per hand) "
        "or a .phhs bundle (required)",
    )
    x.add_argument(
        "--released-only", action="store_true", help="with --phh: only deals released to the public"
    )
    add_redis(x)
    add_key_file(x, "with --phh: the tournament's deck file (showdowns need the cards)")
    x.set_defaults(func=_run_export_command)

    c = sub.add_parser(
        "console",
        help="console client: send, replay or simulate",
        formatter_class=HelpFormatter,
    )
    add_redis(c)
    csub = c.add_subparsers(dest="action", required=True)
    send = csub.add_parser(
        "send", help="send one event: type=fold seat=3 ...", formatter_class=HelpFormatter
    )
    send.add_argument("--tournament", required=True, help="tournament id")
    send.add_argument("--table", type=int, required=True, help="the console's table")
    send.add_argument("--console", default=None, help="console name (default: table{TABLE})")
    send.add_argument(
        "--seq", type=int, required=True, help="this console's next seq (if its outbox has none)"
    )
    send.add_argument("fields", nargs="+", help="key=value (type=raise seat=3 amount=350)")
    replay = csub.add_parser(
        "replay",
        help="send a JSON Lines event log, or play PHH hands at a table (--phh)",
        formatter_class=HelpFormatter,
    )
    replay.add_argument("--tournament", default=None, help="with a log: the tournament id")
    replay.add_argument("--pace", type=finite, default=0.0, help="seconds between events")
    replay.add_argument(
        "log", type=Path, nargs="?", default=None, help="console events, JSON Lines"
    )
    replay.add_argument(
        "--phh", type=Path, nargs="+", default=None, help="PHH files: one hand each, in order"
    )
    add_config(replay, SAMPLE_CONFIG, "with --phh: the tournament file")
    replay.add_argument("--table", type=int, default=1, help="with --phh: the table")
    replay.add_argument("--console", default=None, help="with --phh (default: table{N})")
    replay.add_argument(
        "--deal",
        type=int,
        default=None,
        help="with --phh: the first hand's deal (default: the table's first); "
        "later files take the deals after it in the table's order",
    )
    sim = csub.add_parser(
        "simulate", help="bots play a table or the whole session", formatter_class=HelpFormatter
    )
    add_config(sim, SAMPLE_CONFIG)
    sim.add_argument("--table", type=int, default=None, help="one table (default: all)")
    sim.add_argument(
        "--seed",
        type=seed,
        default=None,
        help="the bots' choices (default: the current time, printed)",
    )
    sim.add_argument("--pace", type=finite, default=0.5, help="seconds between a table's events")
    add_key_file(sim)
    for parser in (replay, sim):
        add_progress(parser)
    for parser in (send, replay, sim):
        add_redis(parser, default=argparse.SUPPRESS, help="as `console --redis`")
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
        parser.add_argument(
            "--no-hub-timeout",
            type=finite,
            default=NO_HUB_TIMEOUT,
            metavar="SECONDS",
            help="give up (one line, exit 1) when an event waits this long with nothing heard "
            "from any hub: none serves the tournament on this Redis (0: wait for ever)",
        )
    c.set_defaults(func=_sync(run_console))

    d = sub.add_parser(
        "demo",
        help="embedded demo: no Redis needed, overlays served",
        formatter_class=HelpFormatter,
    )
    add_config(d, SAMPLE_CONFIG)
    d.add_argument(
        "--redis", default=None, metavar="URL", help="run the same demo on Redis (default: none)"
    )
    d.add_argument("--host", default="127.0.0.1", help="address the HTTP/websocket server binds")
    d.add_argument("--port", type=int, default=8000, help="port of the HTTP/websocket server")
    d.add_argument("--speed", type=finite, default=1.0, help="2 = twice as fast")
    d.add_argument("--seed", type=seed, default=7, help="the bots' choices")
    d.add_argument("--once", action="store_true", help="stop after one session")
    d.add_argument(
        "--reset",
        action="store_true",
        help="with --redis: delete the tournament's data already there (refused without it)",
    )
    add_key_file(d)
    d.set_defaults(func=_sync(run_demo))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)
