"""The event epoch (issue #20.13): a console's outbox is keyed to the hub it talks to, so a
rehearsal on another Redis never blocks the real event, and a console run that sends nothing
says so and fails."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from hub.bus.memory import MemoryBus
from hub.bus.redis import RedisBus
from hub.client.console import ConsoleClient
from hub.client.logreplay import replay_log
from hub.client.outbox import Outbox
from hub.engine.core import Engine
from hub.roles.ingest import Ingest
from hub.wire.channels import Channels
from tests.hubharness import ROOT, SAMPLE, session_events, unique_tournament
from tests.redis_server import RedisServer

pytestmark = pytest.mark.redis


@asynccontextmanager
async def hub_on(url: str, config: object, decks: object) -> AsyncIterator[Ingest]:
    bus = RedisBus(url)
    await bus.connect()
    ingest = Ingest(bus, Engine(config, decks))  # type: ignore[arg-type]
    await ingest.start()
    try:
        yield ingest
    finally:
        await ingest.stop()
        await bus.close()


def table_events(tournament: str, table: int) -> list[dict[str, object]]:
    return [e for e in session_events(tournament) if e["table"] == table][:40]


async def test_a_rehearsal_outbox_does_not_block_the_real_event(tmp_path: Path) -> None:
    config, decks = unique_tournament("epoch")
    events = table_events(config.id, 1)
    outbox = str(tmp_path / "outbox-{tournament}-{console}.sqlite")
    with (
        RedisServer(tmp_path / "rehearsal") as rehearsal,
        RedisServer(tmp_path / "event") as event,
    ):
        async with hub_on(rehearsal.url, config, decks) as hub:
            rehearsal_epoch = hub.epoch
            bus = RedisBus(rehearsal.url)
            await bus.connect()
            report = await replay_log(bus, config.id, events, outbox=outbox, timeout=0.5)
            await bus.close()
            assert report.accepted == len(events)
        # The hub restarted on the same Redis keeps its epoch: the outbox is its own.
        async with hub_on(rehearsal.url, config, decks) as hub:
            assert hub.epoch == rehearsal_epoch
            bus = RedisBus(rehearsal.url)
            await bus.connect()
            again = await replay_log(bus, config.id, events, outbox=outbox, timeout=0.5)
            await bus.close()
            assert again.skipped == len(events) and again.accepted == 0  # resumed: all sent
        # The real event, on another Redis: a new epoch; the same outbox file is set aside.
        async with hub_on(event.url, config, decks) as hub:
            assert hub.epoch and hub.epoch != rehearsal_epoch
            bus = RedisBus(event.url)
            await bus.connect()
            real = await replay_log(bus, config.id, events, outbox=outbox, timeout=0.5)
            await bus.close()
            assert real.skipped == 0 and real.accepted == len(events), real
            assert hub.engine.admission.sequencer.last("table1") == len(events)
    path = Path(outbox.format(tournament=config.id, console="table1"))
    assert path.with_name(f"{path.name}.epoch-{rehearsal_epoch}").exists()
    assert Outbox(path, config.id, 1, "table1", hub.epoch).next_seq() == len(events) + 1


def test_an_outbox_of_another_epoch_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "box.sqlite"
    box = Outbox(path, "t", 1, "c1", "rehearsal")
    box.add(305, b"x")
    box.close()
    same = Outbox(path, "t", 1, "c1", "rehearsal")
    assert same.set_aside is None and same.next_seq() == 306
    same.close()
    real = Outbox(path, "t", 1, "c1", "event")
    assert real.set_aside == tmp_path / "box.sqlite.epoch-rehearsal"
    assert real.next_seq() == 1 and real.pending() == []
    real.close()
    kept = Outbox(real.set_aside, "t", 1, "c1", "rehearsal")  # still readable, for the record
    assert kept.pending() == [(305, b"x")]
    kept.close()
    # A Redis with no epoch at all (no hub started there yet) is not the rehearsal's hub either.
    Outbox(path, "t", 1, "c1", "rehearsal").close()
    fresh = Outbox(path, "t", 1, "c1", "")
    assert fresh.set_aside is not None and fresh.next_seq() == 1
    fresh.close()


async def duplicast_async(*args: str) -> tuple[int, str]:
    """`duplicast ...` as a user runs it, without blocking this loop (the hub runs in it)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hub", *args, cwd=ROOT, env=dict(os.environ),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(), 60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return int(process.returncode or 0), (out + err).decode()


async def test_console_simulate_and_send_after_a_rehearsal(tmp_path: Path) -> None:
    """The commands of issue #20.13: after a rehearsal, `console simulate` sends, and
    `console send --seq 1` is seq 1; a run that sends nothing exits non-zero."""
    config, decks = unique_tournament("epoch")
    outbox = str(tmp_path / "outbox-{tournament}-{console}.sqlite")
    toml = tmp_path / "event.toml"
    toml.write_text(SAMPLE.read_text().replace('id = "ifp-demo"', f'id = "{config.id}"', 1))
    simulate = [
        "console", "simulate", "--config", str(toml), "--table", "2", "--seed", "7",
        "--pace", "0", "--outbox", outbox,
    ]  # fmt: skip
    with (
        RedisServer(tmp_path / "rehearsal") as rehearsal,
        RedisServer(tmp_path / "event") as event,
    ):
        async with hub_on(rehearsal.url, config, decks):
            code, out = await duplicast_async(*simulate, "--redis", rehearsal.url)
            assert code == 0, out
            code, out = await duplicast_async(*simulate, "--redis", rehearsal.url)
            assert code == 1 and "NOTHING SENT" in out, out  # resumed a finished run
        async with hub_on(event.url, config, decks) as hub:
            code, out = await duplicast_async(*simulate, "--redis", event.url)
            assert code == 0 and " 0 accepted" not in out, out
            assert hub.engine.admission.sequencer.last("table2") > 0
            send = [
                "console", "send", "--redis", event.url, "--tournament", config.id,
                "--table", "3", "--seq", "1", "--outbox", outbox, "type=start",
                f"deal={config.deal_orders[3][0]}",
            ]  # fmt: skip
        async with hub_on(rehearsal.url, config, decks):  # the rehearsal's table 3 moved on
            bus = RedisBus(rehearsal.url)
            await bus.connect()
            await replay_log(bus, config.id, table_events(config.id, 3), outbox=outbox)
            await bus.close()
        async with hub_on(event.url, config, decks) as hub:
            code, out = await duplicast_async(*send)
            assert code == 0, out
            assert hub.engine.admission.sequencer.last("table3") == 1
    assert Channels(config.id).epoch.endswith(":epoch")


class NoEpochRead(MemoryBus):
    """A console's Redis user from an ACL file older than the epoch: GET is refused."""

    async def get(self, key: str) -> bytes | None:
        raise PermissionError("NOPERM this user has no permissions to access the key")


async def test_a_console_that_may_not_read_the_epoch_still_sends(tmp_path: Path) -> None:
    bus = NoEpochRead()
    await bus.connect()
    box = tmp_path / "box.sqlite"
    Outbox(box, "t", 1, "c1", "rehearsal").close()
    client = ConsoleClient(bus, "t", 1, "c1", outbox=box, timeout=60)
    await client.start()  # warns, the outbox unchecked (not set aside, not lost)
    try:
        assert client.next_seq == 1 and client._store is not None
        assert client._store.set_aside is None
    finally:
        await client.close()


async def test_an_outbox_opened_before_any_hub_is_bound_to_the_first_that_answers(
    tmp_path: Path,
) -> None:
    """Two Redis servers where no hub has started yet look alike (no epoch). A console that
    opened its outbox then binds it to the hub that first answers it, so the same outbox on
    another Redis later is set aside, not taken for that hub's (issue #20.13)."""
    config, decks = unique_tournament("epochbind")
    events = table_events(config.id, 1)
    outbox = str(tmp_path / "outbox-{tournament}-{console}.sqlite")
    path = Path(outbox.format(tournament=config.id, console="table1"))
    with (
        RedisServer(tmp_path / "rehearsal") as rehearsal,
        RedisServer(tmp_path / "event") as event,
    ):
        bus = RedisBus(rehearsal.url)  # the console first, its hub a moment later
        await bus.connect()
        console = asyncio.create_task(
            replay_log(bus, config.id, events, outbox=outbox, timeout=0.5, no_hub_timeout=60)
        )
        await asyncio.sleep(1.0)
        assert not console.done()
        async with hub_on(rehearsal.url, config, decks) as hub:
            first = await asyncio.wait_for(console, 60)
            assert first.accepted == len(events), first
            rehearsal_epoch = hub.epoch
        await bus.close()
        assert Outbox(path, config.id, 1, "table1").epoch == rehearsal_epoch
        bus = RedisBus(event.url)  # the event's Redis: again the console before the hub
        await bus.connect()
        console = asyncio.create_task(
            replay_log(bus, config.id, events, outbox=outbox, timeout=0.5, no_hub_timeout=60)
        )
        await asyncio.sleep(1.0)
        async with hub_on(event.url, config, decks) as hub:
            real = await asyncio.wait_for(console, 60)
            assert real.skipped == 0 and real.accepted == len(events), real
            assert hub.engine.admission.sequencer.last("table1") == len(events)
        await bus.close()
    assert path.with_name(f"{path.name}.epoch-{rehearsal_epoch}").exists()
