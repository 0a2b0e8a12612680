"""The ingest's fair intake (``hub.roles.intake.FairIntake``) looks only at the tables that said
something: a round costs what is waiting, not the tournament's size; and it still sees every
message, every end and every error."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from hub.bus.base import BufferedSubscription, Message
from hub.roles import intake as intake_module
from hub.roles.intake import FairIntake


class Table(BufferedSubscription):
    """A table's subscription, fed by hand (``_deliver``, ``_finish``, ``_fail``)."""

    async def ready(self) -> None:
        return None

    async def aclose(self) -> None:
        self._finish()


class Counted(Table):
    """A subscription that counts how often the intake asks what it holds."""

    asked = 0

    @property
    def pending(self) -> int:
        Counted.asked += 1
        return super().pending


def subs(n: int, cls: type[Table] = Table) -> list[Any]:
    return [cls(f"dup:t:console:{i}", maxsize=4) for i in range(n)]


def say(sub: BufferedSubscription, data: bytes, at: float) -> None:
    sub._deliver(Message(sub.pattern, data, at))


async def test_a_round_asks_only_the_tables_that_said_something() -> None:
    tables = subs(240, Counted)
    intake = FairIntake(tables, batch=512)
    say(tables[7], b"a", 1.0)
    assert [m.data for m in await intake.take()] == [b"a"]  # the first round sees every table
    for n in range(20):
        say(tables[(n * 37) % 240], b"e%d" % n, 2.0 + n)
        Counted.asked = 0
        batch = await intake.take()
        assert [m.data for m in batch] == [b"e%d" % n]
        assert intake.pending == 0
        assert Counted.asked <= 8, Counted.asked  # not 240 (or 480) a round


async def test_every_message_in_arrival_order_then_the_end_once_all_ended() -> None:
    tables = subs(6)
    intake = FairIntake(tables, batch=512)
    for n in range(12):
        say(tables[n % 6], b"%d" % n, float(n))
    tables[2]._finish()  # ended with messages still buffered: they come first
    assert [m.data for m in await intake.take()] == [b"%d" % n for n in range(12)]
    for sub in tables:
        sub._finish()
    assert await asyncio.wait_for(intake.take(), 1.0) == []


async def test_an_error_that_ended_a_table_is_raised_after_its_messages() -> None:
    tables = subs(6)
    intake = FairIntake(tables, batch=512)
    say(tables[4], b"last", 1.0)
    tables[4]._fail(RuntimeError("cut"))
    assert [m.data for m in await intake.take()] == [b"last"]
    with pytest.raises(RuntimeError, match="cut"):
        await asyncio.wait_for(intake.take(), 1.0)


async def test_drops_are_logged_even_after_the_flood_stopped(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = subs(6)
    intake = FairIntake(tables, batch=512)
    clock = [100.0]
    monkeypatch.setattr(intake_module.time, "monotonic", lambda: clock[0])
    caplog.set_level(logging.WARNING, logger="duplicast.ingest")
    for n in range(6):  # four buffered, two dropped
        say(tables[3], b"%d" % n, float(n))
    await intake.take()
    assert "2 message(s) dropped" in caplog.text
    caplog.clear()
    for n in range(6):  # two more dropped, within DROP_LOG_EVERY: not logged yet
        say(tables[3], b"%d" % n, float(n))
    await intake.take()
    assert "dropped" not in caplog.text
    clock[0] += intake_module.DROP_LOG_EVERY  # the flood stopped; another table speaks
    say(tables[0], b"x", 9.0)
    await intake.take()
    assert "2 message(s) dropped" in caplog.text
