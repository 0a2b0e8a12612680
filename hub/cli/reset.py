"""`duplicast reset`: delete a tournament's data from Redis (after a rehearsal on the event's
own database), so the next `serve` starts the event afresh: an empty journal, no standings, a
new event epoch (the consoles set their rehearsal outboxes aside and start at seq 1).

It says what it would delete and asks (the tournament id typed back) unless ``--yes``; without
a terminal to ask on and without ``--yes`` it deletes nothing. It refuses while a hub serves the
tournament on that Redis (an ingest or projector holds its lease): stop it first. The lease keys
and their fencing tokens are kept (tokens only ever grow, so a stopped writer stays fenced).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from hub.bus import open_bus, redacted_url
from hub.wire.channels import Channels

__all__ = ["run_reset"]


async def run_reset(
    args: argparse.Namespace,
    ask: Callable[[str], str] | None = None,
    interactive: bool | None = None,
) -> int:
    """0 deleted (or nothing to delete), 1 refused (a hub serves it, or not confirmed), 2 no
    ``--yes`` and no terminal to ask on. ``ask``/``interactive``: for tests (``input`` and
    whether stdin is a terminal)."""
    from hub.cli.offline import load_for_preparation

    config = load_for_preparation(args.config)  # its id only: no [draw] needed
    names = Channels(config.id)
    where = f"tournament {config.id!r} at {redacted_url(args.redis)}"
    bus = open_bus(args.redis)
    await bus.connect()
    try:
        for lease, role in ((names.lease, "an ingest"), (names.projector_lease, "a projector")):
            holder = await bus.get(lease)
            if holder is not None:
                print(
                    f"duplicast reset: refused: {role} is serving {where} (it holds {lease}: "
                    f"{holder.decode('utf-8', 'replace')}); stop it first (a hub killed "
                    "without a clean stop holds it a few seconds more)",
                    file=sys.stderr,
                )
                return 1
        held = await holdings(bus, names)
        if not held:
            print(f"duplicast reset: nothing to delete: no data of {where}", file=sys.stderr)
            return 0
        listed = "; ".join(held)
        if not args.yes:
            if not (sys.stdin.isatty() if interactive is None else interactive):
                print(
                    f"duplicast reset: {where} holds {listed}. Nothing deleted: give --yes to "
                    "delete without being asked (no terminal to ask on)",
                    file=sys.stderr,
                )
                return 2
            answer = (ask or input)(
                f"Delete every record of {where} ({listed})? It cannot be undone "
                "(`duplicast export --events` keeps a copy of the journal). "
                f"Type the tournament id ({config.id}) to delete: "
            )
            if answer.strip() != config.id:
                print("duplicast reset: not confirmed; nothing deleted", file=sys.stderr)
                return 1
        await bus.delete(*names.data_keys)
        print(
            f"deleted {where} ({listed}): the next `duplicast serve` starts the event "
            "afresh, with a new event epoch (consoles set their old outboxes aside)",
            file=sys.stderr,
        )
        return 0
    finally:
        await bus.close()


async def holdings(bus: Any, names: Channels) -> list[str]:
    """What the tournament's keys hold, in words ("the journal (1,204 records)", ...)."""
    held = []
    records = await journal_length(bus, names.journal)
    if records:
        held.append(f"the journal ({records:,} records)")
    for key, what in (
        (names.seqs, "consoles' seqs"),
        (names.rejected, "refusals"),
        (names.topics, "feed topics"),
        (names.engine, "engine snapshot"),
    ):
        fields = await bus.hgetall(key)
        if fields:
            held.append(f"{what} ({len(fields)})")
    if await bus.get(names.epoch) is not None:
        held.append("the event epoch")
    return held


async def journal_length(bus: Any, stream: str) -> int:
    """The journal's records, read in pages (the bus has no XLEN)."""
    count, after = 0, "0-0"
    while True:
        page = await bus.read(stream, after, 1000)
        if not page:
            return count
        count += len(page)
        after = page[-1][0]
