"""`duplicast export`: the journal out of Redis as a JSON Lines event log (``--events``), or
the hands of an event log as PHH (``--phh``)."""

from __future__ import annotations

import argparse
import os
import sys

from hub.bus import open_bus
from hub.channels import Channels
from hub.configfile import load_config


def export_phh(args: argparse.Namespace) -> int:
    """`duplicast export --phh`: a JSON Lines event log replayed offline, every completed hand
    as PHH (docs/phh.md)."""
    from hub.configfile import load_config
    from hub.deckfile import DeckFileError, load_decks
    from hub.domain.config import ConfigError
    from hub.engine.core import Engine
    from hub.engine.phh_export import collect, render
    from hub.phhfiles import write_export
    from hub.replay import ReplayError, read_log, replay

    try:
        config = load_config(args.config)
        engine = Engine(config, load_decks(config, args.config.parent, dict(os.environ)))
        refused = replay(config, read_log(args.log), engine, str(args.log))
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
