"""`duplicast export`: the journal out of Redis as a JSON Lines event log (``--events``), the
hands of an event log as PHH (``--phh``), the edit of every deal as OpenTimelineIO
(``--timeline``), or the public results site as static files (``--site``, hub.cli.site_export)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from hub.bus import open_bus
from hub.files.config import load_config
from hub.wire.channels import Channels


def export_phh(args: argparse.Namespace) -> int:
    """`duplicast export --phh`: a JSON Lines event log replayed offline, every completed hand
    as PHH (docs/phh.md)."""
    from hub.cli.replay import ReplayError, read_log, replay
    from hub.domain.config import ConfigError
    from hub.engine.core import Engine
    from hub.engine.phh_export import collect, render
    from hub.files.config import load_config
    from hub.files.decks import DeckFileError, load_decks
    from hub.files.phh import write_export

    try:
        config = load_config(args.config)
        engine = Engine(config, load_decks(config, args.config.parent, dict(os.environ)))
        refused = replay(config, read_log(args.log), engine, str(args.log))
    except (ConfigError, ReplayError, DeckFileError) as exc:
        print(f"duplicast export: {exc}", file=sys.stderr)
        return 1
    released = engine.release.released if args.released_only else None
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
    from hub.files.eventlog import dumps, header, journal_events

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


async def export_timeline(args: argparse.Namespace) -> int:
    """`duplicast export --timeline FOLDER`: the edit of every deal (docs/edit.md), from the
    journal in Redis or from an event log (the positional LOG)."""
    from hub.cli.edit import edl_adapter, write_edit
    from hub.cli.replay import ReplayError, read_log
    from hub.cli.timeline import deal_cuts, watch_log
    from hub.domain.config import ConfigError
    from hub.files.decks import DeckFileError, load_decks

    try:
        config = load_config(args.config)
        decks = load_decks(config, args.config.parent, dict(os.environ))
        if args.log is not None:
            entries: list[Any] = list(read_log(args.log))
            source = str(args.log)
        else:
            entries = await _journal(args.redis, config.id)
            source = f"the journal of {config.id!r}"
        engine, refused = watch_log(config, entries, decks, source)
    except (ConfigError, ReplayError, DeckFileError) as exc:
        print(f"duplicast export: {exc}", file=sys.stderr)
        return 1
    cuts = deal_cuts(engine, unfinished=args.unfinished)
    written = write_edit(cuts, config, args.timeline)
    edl = "" if edl_adapter() else " (no .edl: the otio-cmx3600-adapter plug-in is not installed)"
    print(
        f"duplicast export: {len(cuts)} deal(s), {len(written)} file(s) in {args.timeline}{edl}",
        file=sys.stderr,
    )
    diverged = [r for r in refused if r.accepted_live]
    for refusal in diverged[:10]:
        print(f"duplicast export: refused: {refusal}", file=sys.stderr)
    return 3 if diverged else 0


async def export_site_files(args: argparse.Namespace) -> int:
    """`duplicast export --site DIR`: the public site (released deals only) as static files,
    from the journal in Redis or from an event log (the positional LOG)."""
    from hub.cli.replay import read_log
    from hub.cli.site_export import export_site

    if args.log is not None:
        entries: list[Any] = list(read_log(args.log))
        source = str(args.log)
    else:
        config = load_config(args.config)
        entries = await _journal(args.redis, config.id)
        source = f"the journal of {config.id!r}"
    return export_site(args, entries, source)


async def _journal(url: str | None, tournament: str) -> list[Any]:
    """The tournament's journal in Redis as the lines of its export, header first."""
    from hub.files.eventlog import header, journal_events

    bus = open_bus(url)
    await bus.connect()
    try:
        epoch = await bus.get(Channels(tournament).epoch)
        text = None if epoch is None else epoch.decode("utf-8", "replace")
        return [header(tournament, text)] + [e async for e in journal_events(bus, tournament)]
    finally:
        await bus.close()
