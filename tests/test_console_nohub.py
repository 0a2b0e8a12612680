"""A console sending where no hub serves it says so and stops, instead of resending for ever:
a table the tournament does not have, or one the console does not write, is answered on the
table's error channel (docs/protocol.md), which the console client listens on; a tournament
no hub serves at all (no ack, nothing on the error channel) ends after ``--no-hub-timeout``
with one line naming the tournament and the Redis (password masked)."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from redis_server import RedisServer, free_port

from hub.bus.memory import MemoryBus
from hub.client.console import ConsoleClient
from hub.client.hubwatch import ConsoleFailure
from hub.files.config import load_config

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
TOKENS = {
    "DUPLICAST_COMMENTATOR_TOKEN": "Rb5t-Km2_Wq9nXz4PvC7sJh-comm",
    "DUPLICAST_OPERATOR_TOKEN": "Rb5t-Km2_Wq9nXz4PvC7sJh-oper",
}


async def test_a_console_with_no_hub_gives_up_and_one_that_hears_one_does_not() -> None:
    bus = MemoryBus()
    await bus.connect()
    async with ConsoleClient(bus, "nobody", 1, "table1", timeout=0.2, no_hub_timeout=1.0) as pad:
        started = time.monotonic()
        with pytest.raises(ConsoleFailure, match="no hub is serving tournament 'nobody'"):
            await pad.send({"type": "start", "deal": 1})
        assert 0.9 < time.monotonic() - started < 5
        with pytest.raises(ConsoleFailure):  # and it stays stopped
            await pad.submit({"type": "start", "deal": 1})
    await bus.close()


def env(url: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    return {**clean, **TOKENS, "PYTHONUNBUFFERED": "1", "DUPLICAST_REDIS_URL": url}


def send(url: str, tournament: str, table: int, console: str, *more: str, deal: int = 1):
    command = [sys.executable, "-m", "hub", "console", "send", "--tournament", tournament]
    command += ["--table", str(table), "--console", console, "--seq", "1", "--no-outbox"]
    command += [*more, "type=start", f"deal={deal}"]
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env(url),
                          timeout=120)  # fmt: skip
    return done, time.monotonic() - started


@pytest.mark.redis
def test_console_send_says_when_no_hub_serves_its_table_or_tournament(tmp_path: Path) -> None:
    password = secrets.token_urlsafe(18)
    with RedisServer(tmp_path / "redis", extra=("--requirepass", password)) as server:
        url = f"redis://default:{password}@127.0.0.1:{server.port}/0"
        # No hub at all: one line naming the tournament and the Redis, password masked.
        done, took = send(url, "nobody", 1, "table1", "--no-hub-timeout", "3")
        assert done.returncode == 1
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith("duplicast console send: no hub is serving tournament 'nobody'")
        assert f"redis://default:***@127.0.0.1:{server.port}/0" in last
        assert password not in done.stderr + done.stdout
        assert 2.5 < took < 30, took
        # A hub that does not have table 9, or does not give it to this console: answered on
        # the table's error channel, heard at once (before: resent for ever).
        log = tmp_path / "ingest.log"
        command = [sys.executable, "-m", "hub", "serve", "--role", "ingest"]
        command += ["--config", str(SAMPLE), "--port", str(free_port())]
        with log.open("wb") as out:
            ingest = subprocess.Popen(
                command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env(url)
            )
        try:
            deadline = time.monotonic() + 60
            while "duplicast ingest for" not in log.read_text():
                assert ingest.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
            for console in ("table1", "table9"):  # the hub listens on its own tables only
                done, took = send(url, "ifp-demo", 9, console, "--no-hub-timeout", "30")
                assert done.returncode == 1, done.stderr
                last = done.stderr.strip().splitlines()[-1]
                assert "serves tournament 'ifp-demo' without a table 9" in last, last
                assert "seq" not in done.stdout, done.stdout  # nothing was sent
                assert took < 20, took  # told at once, not timed out
            done, took = send(url, "ifp-demo", 2, "table1", "--no-hub-timeout", "30")
            assert done.returncode == 1, done.stderr
            assert "table 2 seq 1 REJECTED wrong_channel" in done.stdout, done.stdout
            assert took < 20, took  # answered, not timed out
            first = load_config(SAMPLE).deal_orders[1][0]  # the right table still plays
            done, _ = send(url, "ifp-demo", 1, "table1", deal=first)
            assert done.returncode == 0 and "1 accepted" in done.stdout, done.stdout
        finally:
            ingest.send_signal(signal.SIGTERM)
            ingest.wait(20)


async def test_unknown_table_is_answered_on_its_error_channel_and_touches_no_console() -> None:
    """The ingest's answer itself: on ``errors:9``, naming the console, no seq used up."""
    from hub.bus.base import Message
    from hub.engine.core import Engine
    from hub.roles.ingest import Ingest
    from hub.wire import codec
    from tests.hubharness import unique_tournament

    config, decks = unique_tournament("nohub")
    bus = MemoryBus()
    await bus.connect()
    ingest = Ingest(bus, Engine(config, decks))
    await ingest.start()
    errors = bus.subscribe(ingest.names.errors(9))
    try:
        event = {"v": 1, "tournament": config.id, "table": 9, "console": "table1", "seq": 1}
        event["type"] = "start"
        await ingest.handle_batch(
            [Message(ingest.names.console(9), codec.pack(event), time.monotonic())]
        )
        answer = codec.unpack((await asyncio.wait_for(anext(errors), 5)).data)
        assert answer["code"] == "unknown_table" and answer["console"] == "table1"
        assert answer["seq"] == 1 and answer["ok"] is False
        assert ingest.engine.admission.sequencer.expected("table1") == 1  # nothing used up
    finally:
        await errors.aclose()
        await ingest.stop()
        await bus.close()
