"""`duplicast console send|replay|simulate`: the console client on the command line.

Each sends through ``hub.client.logreplay.replay_log`` and prints one summary line; exit 1 when an
event
was refused, and when the console gave up (``hub.client.hubwatch.ConsoleFailure``: no hub answers,
or Redis refuses its user), in one line naming the tournament and the Redis (password masked).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hub.bus import open_bus
from hub.files.config import load_config
from hub.roles.embedded import load_tournament

if TYPE_CHECKING:
    from hub.client.logreplay import ReplayReport

NO_HUB_TIMEOUT = 10.0  # seconds: a hub restarting (lease, rebuild) answers well within it


async def run_console(args: argparse.Namespace) -> int:
    from hub.client.hubwatch import ConsoleFailure
    from hub.client.outbox import default_outbox_template

    outbox = None if args.no_outbox else (args.outbox or default_outbox_template())
    phh_config, phh = None, None
    if args.action == "replay" and args.phh:  # files first: a bad one is said before Redis
        phh_config = load_config(args.config)
        phh = phh_events(phh_config, args.phh, args.table, args.console, args.deal)
    bus = open_bus(args.redis)
    await bus.connect()
    try:
        return await _console_action(args, bus, outbox, phh_config, phh)
    except ConsoleFailure as exc:  # nobody answers, or Redis refuses: resending cannot help
        print(f"duplicast console {args.action}: {exc}", file=sys.stderr, flush=True)
        return 1
    finally:
        await bus.close()


async def _console_action(
    args: argparse.Namespace,
    bus: Any,
    outbox: str | None,
    phh_config: Any = None,
    phh: list[dict[str, Any]] | None = None,
) -> int:
    from hub.client.logreplay import replay_log

    wait = {"no_hub_timeout": args.no_hub_timeout}
    report: ReplayReport | int
    if args.action == "send":
        events = [_event_to_send(args)]
        report = await replay_log(bus, args.tournament, events, outbox=outbox, resume=False, **wait)
    elif phh_config is not None and phh is not None:  # read before Redis was opened
        report = await replay_log(bus, phh_config.id, phh, pace=args.pace, outbox=outbox, **wait)
    elif args.action == "replay":
        report = await _replay(args, bus, outbox, wait)
    else:
        report = await _simulate(args, bus, outbox, wait)
    if isinstance(report, int):
        return report
    return _summary(args, report)


def _event_to_send(args: argparse.Namespace) -> dict[str, Any]:
    """`console send`: the event its options and ``key=value`` fields make."""
    fields = _parse_fields(args.fields)
    return {
        "tournament": args.tournament,
        "table": args.table,
        "console": args.console or f"table{args.table}",
        "seq": args.seq,
        "v": 1,
        **fields,
    }


async def _replay(
    args: argparse.Namespace, bus: Any, outbox: str | None, wait: dict[str, Any]
) -> ReplayReport | int:
    """`console replay LOG`: the log's events, a progress line as they are answered."""
    from hub.cli.progress import Progress
    from hub.client.logreplay import load_events, replay_log

    if args.tournament is None or args.log is None:
        print("console replay: needs --tournament and a log (or --phh)", file=sys.stderr)
        return 2
    events = load_events(args.log)
    with Progress(len(events), "console replay", enabled=args.progress) as bar:
        return await replay_log(
            bus,
            args.tournament,
            events,
            pace=args.pace,
            outbox=outbox,
            on_answer=bar.advance,
            **wait,
        )


async def _simulate(
    args: argparse.Namespace, bus: Any, outbox: str | None, wait: dict[str, Any]
) -> ReplayReport:
    """`console simulate`: bots play the session (or one table), seeded and said so."""
    from hub.cli.progress import Progress
    from hub.client.logreplay import replay_log

    config, decks = load_tournament(args.config)
    from hub.engine.simulate import simulate_session

    seed = args.seed if args.seed is not None else int(time.time())
    print(f"duplicast console simulate: seed {seed}", file=sys.stderr, flush=True)
    rng = random.Random(seed)
    tables = [args.table] if args.table else None
    events = list(simulate_session(config, decks, rng, tables=tables))
    with Progress(len(events), "console simulate", enabled=args.progress) as bar:
        return await replay_log(
            bus,
            config.id,
            events,
            pace=args.pace,
            outbox=outbox,
            on_answer=bar.advance,
            **wait,
        )


def _summary(args: argparse.Namespace, report: ReplayReport) -> int:
    """The one line every action prints, and its exit status."""
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
            f"; from the outbox: {report.restored} unanswered resent, {report.skipped} sent before"
            if report.restored or report.skipped
            else ""
        ),
        flush=True,
    )
    if report.events and report.skipped >= report.events and not report.restored:
        print(
            f"duplicast console {args.action}: NOTHING SENT: this console's outbox shows all "
            f"{report.events} event(s) as sent to this hub before (a finished run resumed); "
            "--no-outbox or another --outbox sends them again, with new seqs",
            file=sys.stderr,
        )
        return 1
    return 1 if report.rejected or (report.already and args.action == "send") else 0


def phh_events(
    config: Any, files: list[Path], table: int, console: str | None, deal: int | None
) -> list[dict[str, Any]]:
    """The console events of PHH hands played one after another at ``table``."""
    from hub.domain.phh import read_phh
    from hub.files.phh import ImportRefused, console_events, hands_in

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
