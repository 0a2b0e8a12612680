"""The commands that start the hub's processes or talk to it over Redis: `serve`
(``hub.cli.serve``), `console` (``hub.cli.console``), `demo` (``hub.cli.demo``) and `export`
(``hub.cli.export``): their parsers, and the loop each runs on with one line for any error."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeAlias

from redis.exceptions import RedisError

from hub import logs
from hub.bus import BusUnavailable
from hub.cli.args import (
    HelpFormatter,
    add_config,
    add_key_file,
    add_progress,
    add_redis,
    finite,
    positive,
    seed,
)
from hub.cli.console import NO_HUB_TIMEOUT, run_console
from hub.cli.demo import run_demo
from hub.cli.export import export_phh, export_site_files, export_timeline, run_export
from hub.cli.serve import run_serve
from hub.client.logreplay import EventLogError
from hub.domain.config import ConfigError
from hub.domain.states import ProcessRole
from hub.files.decks import DeckFileError
from hub.roles.embedded import SAMPLE_CONFIG
from hub.serve.http import ListenError
from hub.serve.httpguard import REQUEST_TIMEOUT

log = logging.getLogger("duplicast")


def _run_export_command(args: argparse.Namespace) -> int:
    if args.phh:
        if args.log is None or args.out is None:
            print("duplicast export --phh: needs an event log and --out", file=sys.stderr)
            return 2
        return export_phh(args)
    if args.timeline is not None:
        return _sync(export_timeline)(args)
    if args.site is not None:
        return _sync(export_site_files)(args)
    return _sync(run_export)(args)


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


Sub: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_parsers(sub: Sub) -> None:
    """The commands of this module, in the order `duplicast --help` lists them."""
    _add_serve(sub)
    _add_export(sub)
    _add_console(sub)
    _add_demo(sub)
    _add_reset(sub)


def _add_serve(sub: Sub) -> None:
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
    _add_listen_options(p)
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
        help="print the commentator, operator and console tokens in the links printed at "
        "start (default: the variables and the file that hold them)",
    )
    add_key_file(p, "the tournament's deck file (ingest and all; an edge needs none)")
    # set by `--processes N` on the workers it starts: the parent's pid (hub.roles.lifeline)
    p.add_argument("--worker-of", type=int, default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=_sync(run_serve))


def _add_listen_options(p: argparse.ArgumentParser) -> None:
    """Where `serve` listens, and how many connections it takes."""
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


def _add_export(sub: Sub) -> None:
    x = sub.add_parser(
        "export",
        help="a live tournament's journal out of Redis (--events: JSON Lines for replay)",
        description="Write what the hub journaled in Redis. --events: every journal record as "
        "the JSON Lines `duplicast replay` reads, to rescore a live event offline or archive it. "
        "--timeline: the edit of every deal finished at every table (OpenTimelineIO). "
        "--site: the public results site as static files (released deals only).",
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
    what.add_argument(
        "--timeline",
        type=Path,
        metavar="FOLDER",
        help="the edit: per deal an OpenTimelineIO timeline, one track per table camera, and an "
        "EDL per track (docs/edit.md), from the journal in Redis or the positional LOG",
    )
    what.add_argument(
        "--site",
        type=Path,
        metavar="DIR",
        help="the public results site as static files under DIR (released deals only; the same "
        "paths as /site/, hostable anywhere), from the journal in Redis or the positional LOG",
    )
    x.add_argument(
        "log",
        type=Path,
        nargs="?",
        default=None,
        help="with --phh (required), --timeline or --site: console events, JSON Lines",
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
    x.add_argument(
        "--unfinished",
        action="store_true",
        help="with --timeline: also the deals not yet finished at every table",
    )
    add_redis(x)
    add_key_file(x, "with --phh: the tournament's deck file (showdowns need the cards)")
    x.set_defaults(func=_run_export_command)


def _add_console(sub: Sub) -> None:
    c = sub.add_parser(
        "console",
        help="console client: send, replay or simulate",
        formatter_class=HelpFormatter,
    )
    add_redis(c)
    csub = c.add_subparsers(dest="action", required=True)
    send = _add_console_send(csub)
    replay = _add_console_replay(csub)
    sim = _add_console_simulate(csub)
    for parser in (replay, sim):
        add_progress(parser)
    for parser in (send, replay, sim):
        _add_delivery_options(parser)
    c.set_defaults(func=_sync(run_console))


def _add_console_send(csub: Sub) -> argparse.ArgumentParser:
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
    return send


def _add_console_replay(csub: Sub) -> argparse.ArgumentParser:
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
    return replay


def _add_console_simulate(csub: Sub) -> argparse.ArgumentParser:
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
    return sim


def _add_delivery_options(parser: argparse.ArgumentParser) -> None:
    """What every `console` action shares: its Redis, its outbox, when it gives up."""
    add_redis(parser, default=argparse.SUPPRESS, help="as `console --redis`")
    parser.add_argument(
        "--outbox",
        default=None,
        help="unacknowledged events on disk (SQLite), resent after a crash; {console} and "
        "{tournament} are filled in (default: "
        "$XDG_STATE_HOME/duplicast/outbox-{tournament}-{console}.sqlite)",
    )
    parser.add_argument("--no-outbox", action="store_true", help="keep the outbox in memory only")
    parser.add_argument(
        "--no-hub-timeout",
        type=finite,
        default=NO_HUB_TIMEOUT,
        metavar="SECONDS",
        help="give up (one line, exit 1) when an event waits this long with nothing heard "
        "from any hub: none serves the tournament on this Redis (0: wait for ever)",
    )


def _add_demo(sub: Sub) -> None:
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


def _add_reset(sub: Sub) -> None:
    r = sub.add_parser(
        "reset",
        help="delete a tournament's data from Redis (after a rehearsal): asks first",
        description="Delete the journal, standings, feed and event epoch of the tournament "
        "from Redis, so the next `serve` starts the event afresh (after a rehearsal on the "
        "event's own database). Says what it holds and asks for the tournament id first "
        "(--yes: no question); refused while a hub serves the tournament there.",
        formatter_class=HelpFormatter,
    )
    r.add_argument("--config", type=Path, required=True, help="tournament TOML file (its id)")
    add_redis(r)
    r.add_argument("--yes", action="store_true", help="delete without asking")
    r.set_defaults(func=_sync(_reset))


async def _reset(args: argparse.Namespace) -> int:
    from hub.cli.reset import run_reset

    return await run_reset(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)
