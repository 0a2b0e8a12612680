"""The embedded demo: one process, the whole system, nothing to install beyond the package.

Ingest and edge run on the in-memory bus (or on Redis with `--redis`), and a simulated console at
every table sends the bots' actions through the same console protocol a real pad uses, at a pace
a person can watch. When the session is over it starts again (unless `--once`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import secrets
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from hub.bus import open_bus, redacted_url
from hub.client.console import ConsoleClient
from hub.engine.core import Engine
from hub.engine.simulate import simulate_session
from hub.roles.embedded import (
    OVERLAYS,
    SAMPLE_CONFIG,
    IngestSource,
    load_tournament,
    until_signalled,
    weak_tokens_refused,
)
from hub.serve.auth import Auth, ConsoleSeat
from hub.serve.http import create_app, serve
from hub.serve.links import link_lines
from hub.tasks import cancel_and_wait
from hub.wire.channels import Channels

log = logging.getLogger("duplicast.demo")

ENVELOPE = ("v", "tournament", "table", "console", "seq")
BASE_PACE = 1.2  # seconds between two events of one table at speed 1


class DemoRefused(RuntimeError):
    """The demo would delete data it did not write (a tournament's keys on a shared Redis)."""


class Demo:
    def __init__(
        self,
        *,
        config_path: Path = SAMPLE_CONFIG,
        redis_url: str | None = None,
        host: str = "127.0.0.1",
        port: int = 8000,
        speed: float = 1.0,
        seed: int = 7,
        loop_session: bool = True,
        commentator_token: str | None = None,
        operator_token: str | None = None,
        reset: bool = False,
    ) -> None:
        self.config, self.decks = load_tournament(config_path)
        self.reset = reset
        self.bus = open_bus(redis_url)
        self.redis_url = redis_url
        self.host, self.port = host, port
        self.speed = max(speed, 0.01)
        self.seed = seed
        self.loop_session = loop_session
        self.commentator_token = (
            commentator_token
            or os.environ.get("DUPLICAST_COMMENTATOR_TOKEN")
            or "c-" + secrets.token_urlsafe(9)
        )
        self.operator_token = (
            operator_token
            or os.environ.get("DUPLICAST_OPERATOR_TOKEN")
            or "o-" + secrets.token_urlsafe(9)
        )
        self.console_seats = demo_console_seats(self.config)
        self.source: IngestSource | None = None
        self.server: Any = None
        self._tasks: list[asyncio.Task[None]] = []
        self._finished = asyncio.Event()
        self.sessions = 0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.server.port}" if self.server else ""

    async def start(self) -> None:
        await self.bus.connect()
        if self.redis_url:
            held = await self.existing_data()
            if held and not self.reset:
                await self.bus.close()
                raise DemoRefused(
                    f"Redis at {redacted_url(self.redis_url)} already holds data of tournament "
                    f"{self.config.id!r} ({', '.join(held)}): the demo would delete it. Pass "
                    "--reset to delete it, or run the demo on another Redis database "
                    "(e.g. redis://127.0.0.1:6379/15)"
                )
            await self._clear()
        self.source = IngestSource(self.bus, Engine(self.config, self.decks), own_bus=False)
        auth = Auth(self.commentator_token, self.operator_token, self.console_seats)
        app = create_app(self.source, overlays_dir=OVERLAYS, auth=auth, metrics=self.source.metrics)
        self.server = await serve(app, self.host, self.port)
        self._tasks.append(asyncio.create_task(self._play(), name="demo-consoles"))

    async def existing_data(self) -> list[str]:
        """What of the tournament's data this Redis already holds (key: how much)."""
        names = Channels(self.config.id)
        held = []
        journal = await self.bus.read(names.journal, "0-0", 1)
        if journal:
            held.append(f"{names.journal}: at least one record")
        for key in (names.topics, names.topic_seqs, names.engine, names.seqs, names.rejected):
            found = await self.bus.hgetall(key)
            if found:
                held.append(f"{key}: {len(found)} fields")
        return held

    async def _clear(self) -> None:
        await self.bus.delete(*Channels(self.config.id).data_keys)

    async def _play(self) -> None:
        seed = self.seed
        while True:
            await self._session(random.Random(seed))
            self.sessions += 1
            if not self.loop_session:
                self._finished.set()
                return
            await asyncio.sleep(20 / self.speed)
            seed += 1
            await self._restart()

    async def _restart(self) -> None:
        """A new session: fresh journal and engine; topic seqs continue for connected pages."""
        assert self.source is not None
        await self.source.ingest.stop()
        await self._clear()
        await self.source.replace_engine(Engine(self.config, self.decks))

    async def _session(self, rng: random.Random) -> None:
        assert self.source is not None
        if self.config.clock is not None:  # the session clock runs from the first deal
            await self.source.control({"op": "clock", "action": "start"})
        per_table: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for event in simulate_session(self.config, self.decks, rng):
            per_table[event["table"]].append(
                {k: v for k, v in event.items() if k not in ENVELOPE and k != "ts"}
            )
        await asyncio.gather(
            *(
                self._table(t, events, random.Random(rng.random()))
                for t, events in per_table.items()
            )
        )

    async def _table(self, table: int, events: list[dict[str, Any]], rng: random.Random) -> None:
        assert self.source is not None
        first_seq = self.source.engine.admission.sequencer.expected(f"table{table}")
        client = ConsoleClient(
            self.bus, self.config.id, table, f"table{table}", first_seq=first_seq
        )
        await client.start()
        try:
            for fields in events:
                await asyncio.sleep(BASE_PACE * rng.uniform(0.3, 1.7) / self.speed)
                if fields["type"] == "start":
                    await self._stage_open(fields["deal"])
                ack = await client.send(fields)
                if not ack.ok:
                    log.warning("demo console table %s refused: %s", table, ack)
        finally:
            await client.close()

    async def _stage_open(self, deal: int) -> None:
        """A later stage's table waits until the stage before is complete (as an official
        would wait for the draw of the final)."""
        while not self._engine().state.stage_open(deal):
            await asyncio.sleep(BASE_PACE / self.speed)

    def _engine(self) -> Engine:
        assert self.source is not None
        return self.source.engine

    async def wait_finished(self) -> None:
        await self._finished.wait()

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        if self.server is not None:
            await self.server.stop()
        await self.bus.close()

    def banner(self) -> str:
        """The links to open (``hub.serve.links``). Each names what it shows (no on-air slot to Take
        first): the split screen shows the deal table 1 plays first, live at table 1 from the
        first seconds."""
        bus = redacted_url(self.redis_url) if self.redis_url else "embedded in-memory bus"
        lines = [
            f"Duplicast demo: {self.config.name} ({self.config.id}) on {bus}",
            *link_lines(
                self.config,
                self.host,
                self.server.port,
                self.commentator_token,
                self.operator_token,
            ),
            *self.console_links(),
            "Ctrl-C to stop.",
        ]
        return "\n".join(lines)

    def console_links(self) -> list[str]:
        """Each table's web console (its page, with the console's token)."""
        base = f"http://{self.host}:{self.server.port}/overlays/console.html"
        return [
            f"  console of table {seat.table} ({seat.console}): {base}#token={seat.token}"
            for seat in self.console_seats
        ]


def demo_console_seats(config: Any) -> tuple[ConsoleSeat, ...]:
    """One made-up web console token per table: its first console in ``[consoles]``, else
    ``table{N}`` (the names the demo's simulated consoles use too: a page entering play while
    the bots play the same table is refused as their seqs cross)."""
    consoles = config.consoles or {}
    seats = []
    for table in config.tables:
        names = sorted(name for name, t in consoles.items() if t == table)
        name = names[0] if names else f"table{table}"
        seats.append(ConsoleSeat(name, table, "k-" + secrets.token_urlsafe(18)))
    return tuple(seats)


async def run_demo(args: argparse.Namespace) -> int:
    if weak_tokens_refused("demo", Auth.from_env()):  # made-up tokens when none are set
        return 2
    demo = Demo(
        config_path=args.config,
        redis_url=args.redis,
        host=args.host,
        port=args.port,
        speed=args.speed,
        seed=args.seed,
        loop_session=not args.once,
        reset=args.reset,
    )
    from hub.roles.obs_link import ObsSettingsError, obs_settings, start_obs_link

    try:
        obs = obs_settings(demo.config, os.environ)  # the OBS link (DUPLICAST_OBS_URL)
        await demo.start()
    except (DemoRefused, ObsSettingsError) as exc:
        print(f"duplicast demo: refusing to start: {exc}", file=sys.stderr)
        return 2
    assert demo.source is not None
    link = (
        None
        if obs is None
        else start_obs_link(demo.source.store, *obs, demo.source.metrics.registry)
    )
    print(demo.banner(), flush=True)
    stop = asyncio.Event()
    waiter = asyncio.create_task(until_signalled(stop))
    done = asyncio.create_task(demo.wait_finished()) if args.once else None
    try:
        wait_for: list[asyncio.Task[Any]] = [waiter] + ([done] if done else [])
        await asyncio.wait(wait_for, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if done:
            done.cancel()
        if link is not None:
            await link.stop()
        await demo.stop()
    return 0
