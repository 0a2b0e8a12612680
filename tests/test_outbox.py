"""The console outbox on disk (issue #9): a console killed mid-stream and restarted resends what
was never acknowledged, in order, with its original seqs, and numbers new events after the
highest seq it used: every event journaled exactly once."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hub.bus.memory import MemoryBus
from hub.bus.redis import RedisBus
from hub.client.console import ConsoleClient
from hub.client.outbox import Outbox, OutboxError
from hub.engine.core import Engine
from hub.roles.embedded import IngestSource
from hub.wire import codec
from tests.hubharness import session_events, unique_tournament

ROOT = Path(__file__).resolve().parent.parent


def test_outbox_keeps_pending_events_and_the_seq_high_water_mark(tmp_path: Path) -> None:
    path = tmp_path / "c1.sqlite"
    box = Outbox(path, "t", 1, "c1")
    assert box.next_seq() == 1 and box.pending() == []
    for seq in (1, 2, 3):
        box.add(seq, b"event %d" % seq)
    box.remove(2)
    box.close()
    box = Outbox(path, "t", 1, "c1")
    assert box.pending() == [(1, b"event 1"), (3, b"event 3")]
    box.remove(1)
    box.remove(3)
    box.close()
    box = Outbox(path, "t", 1, "c1")
    assert box.pending() == [] and box.next_seq() == 4  # a seq is never reused
    box.close()
    with pytest.raises(OutboxError, match="not of 'c2'"):
        Outbox(path, "t", 2, "c2")
    (tmp_path / "junk.sqlite").write_bytes(b"not a database at all" * 100)
    with pytest.raises(OutboxError):
        Outbox(tmp_path / "junk.sqlite", "t", 1, "c1")


@pytest.mark.asyncio
async def test_a_restarted_client_resends_in_order_then_continues(tmp_path: Path) -> None:
    """No hub while the first client runs; it is dropped without closing (a crash). The second
    client on the same file resends seqs 1..5 with their original bytes, then sends 6."""
    bus = MemoryBus()
    path = tmp_path / "outbox.sqlite"
    seen = bus.subscribe("dup:t:console:*")
    first = ConsoleClient(bus, "t", 1, "c1", outbox=path, timeout=60)
    await first.start()
    sent = []
    for seat in range(1, 6):
        await first.submit({"type": "fold", "seat": seat, "deal": 1})
        sent.append((await anext(seen)).data)
    for task in first._tasks:  # the crash: nothing is closed or flushed
        task.cancel()
    second = ConsoleClient(bus, "t", 1, "c1", outbox=path, timeout=60)
    await second.start()
    resent = [(await anext(seen)).data for _ in range(5)]
    assert resent == sent and second.restored == 5 and second.pending == [1, 2, 3, 4, 5]
    await second.submit({"type": "fold", "seat": 6, "deal": 1})
    assert codec.unpack((await anext(seen)).data)["seq"] == 6
    for seq in (1, 2, 3, 4, 5, 6):
        await bus.publish("dup:t:ack:c1", codec.pack({"seq": seq, "ok": True}))
    await second.drain(timeout=5)
    await second.close()
    box = Outbox(path, "t", 1, "c1")
    assert box.pending() == [] and box.next_seq() == 7
    box.close()
    await bus.close()


def console_process(redis_url: str, tournament: str, log: Path, outbox: str) -> Any:
    command = [sys.executable, "-m", "hub", "console", "--redis", redis_url, "replay"]
    command += ["--tournament", tournament, "--pace", "0.01", "--outbox", outbox, str(log)]
    return subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.mark.redis
@pytest.mark.asyncio
async def test_console_killed_mid_stream_loses_and_doubles_nothing(
    redis_url: str, tmp_path: Path
) -> None:
    """A console process is SIGKILLed while the hub is down and events sit unanswered in its
    outbox; the restarted process resends them and finishes the log: exactly once each."""
    config, decks = unique_tournament("outbox")
    events = [e for e in session_events(config.id) if e["table"] in (1, 2)]
    log = tmp_path / "tables12.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    outbox = str(tmp_path / "outbox-{console}.sqlite")
    journal = f"dup:{config.id}:journal"
    bus = RedisBus(redis_url)
    await bus.connect()
    hub = IngestSource(bus, Engine(config, decks), own_bus=False)
    console = None
    try:
        await hub.start()
        console = console_process(redis_url, config.id, log, outbox)
        async with asyncio.timeout(30):
            while len(await bus.read(journal, "0-0", 10_000)) < len(events) // 4:
                await asyncio.sleep(0.05)
        await hub.stop()  # the hub goes away: what the console sends now stays unanswered
        await asyncio.sleep(1.0)
        console.send_signal(signal.SIGKILL)
        console.wait(timeout=10)
        unanswered = 0
        for name in ("table1", "table2"):
            box = Outbox(outbox.format(console=name), config.id, int(name[-1]), name)
            unanswered += len(box.pending())
            box.close()
        assert unanswered > 0
        hub = IngestSource(bus, Engine(config, decks), own_bus=False)
        await hub.start()  # rebuilt from the journal
        console = console_process(redis_url, config.id, log, outbox)
        out, _ = await asyncio.to_thread(console.communicate, timeout=60)
        assert console.returncode == 0, out
        assert "unanswered resent" in out, out
        records = [codec.unpack(d) for _, d in await bus.read(journal, "0-0", 10_000)]
        keys = Counter((r["console"], r["seq"]) for r in records)
        assert [k for k, n in keys.items() if n > 1] == []
        assert sorted(keys) == sorted((e["console"], e["seq"]) for e in events)
    finally:
        if console is not None and console.poll() is None:
            console.kill()
            console.wait(timeout=10)
        await hub.stop()
        prefix = f"dup:{config.id}"
        names = ("journal", "topics", "consoles", "rejected", "ingest", "ingest:token")
        await bus.delete(*(f"{prefix}:{n}" for n in names))
        await bus.close()
