"""Log lines rate-limited (issue #9): repeats of a template collapse into one summary line."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Iterator

import pytest

from hub import logs
from hub.bus.memory import MemoryBus
from hub.engine.core import Engine
from hub.roles.ingest import Ingest
from tests.hubharness import unique_tournament


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO, logs.RepeatFilter, Clock]]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    clock = Clock()
    repeat = logs.RepeatFilter(handler, first=3, window=10.0, clock=clock)
    handler.addFilter(repeat)
    logger = logging.getLogger("duplicast.test-logs")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        yield logger, out, repeat, clock
    finally:
        logger.removeHandler(handler)
        logger.propagate = True


def lines(out: io.StringIO) -> list[str]:
    return out.getvalue().splitlines()


def test_first_n_then_one_summary_per_window(captured) -> None:  # type: ignore[no-untyped-def]
    logger, out, _, clock = captured
    for i in range(1000):
        logger.warning("undecodable event on %s: %s", f"ch{i}", "junk")
    assert len(lines(out)) == 3
    clock.now += 11.0
    logger.warning("undecodable event on %s: %s", "later", "junk")
    got = lines(out)
    assert len(got) == 5
    assert got[3] == (
        "duplicast.test-logs WARNING 'undecodable event on %s: %s' repeated 997 times in the "
        "last 11 s (not shown)"
    )
    assert got[4].endswith("undecodable event on later: junk")


def test_templates_and_loggers_are_counted_apart(captured) -> None:  # type: ignore[no-untyped-def]
    logger, out, repeat, _ = captured
    other = logger.getChild("other")
    for _ in range(10):
        logger.warning("one %s", 1)
        logger.warning("two %s", 2)
        other.warning("one %s", 1)
    assert len(lines(out)) == 9
    repeat.flush()
    summaries = [line for line in lines(out) if "repeated 7 times" in line]
    assert len(summaries) == 3


def test_install_is_idempotent() -> None:
    logger = logging.getLogger("duplicast.test-install")
    handler = logging.StreamHandler(io.StringIO())
    logger.addHandler(handler)
    try:
        first = logs.install(logger)
        assert logs.install(logger) == first and len(handler.filters) == 2  # repeats, redaction
    finally:
        logger.removeHandler(handler)


def test_garbage_flood_at_the_ingest_writes_a_handful_of_lines(captured) -> None:  # type: ignore[no-untyped-def]
    """10,000 undecodable messages at the ingest: a few lines, not one per message."""
    _, out, _, _ = captured
    ingest_log = logging.getLogger("duplicast.ingest")
    handler = logging.StreamHandler(out)
    handler.addFilter(logs.RepeatFilter(handler, first=5, window=60.0))
    ingest_log.addHandler(handler)
    config, decks = unique_tournament("logs")

    async def flood() -> None:
        ingest = Ingest(MemoryBus(), Engine(config, decks))
        await ingest.start()
        try:
            for i in range(10_000):
                await ingest.handle(f"dup:{config.id}:console:1", b"\xc1garbage" + bytes([i % 256]))
        finally:
            await ingest.stop()

    try:
        asyncio.run(flood())
    finally:
        ingest_log.removeHandler(handler)
    assert len(lines(out)) <= 10


def _fail_at_one_site() -> None:
    raise KeyError((13, 1))


def _fail_elsewhere() -> None:
    raise ValueError("other")


def test_a_traceback_per_exception_site_per_window(captured) -> None:  # type: ignore[no-untyped-def]
    """One bug hit by every request (issue #20: 100 requests, 4,752 log lines) is one traceback
    and one count per window; another failure behind the same template still shows."""
    logger, out, repeat, clock = captured
    for _ in range(100):
        try:
            _fail_at_one_site()
        except KeyError:
            logger.exception("Exception in ASGI application")
    try:
        _fail_elsewhere()
    except ValueError:
        logger.exception("Exception in ASGI application")
    text = out.getvalue()
    assert text.count("Traceback") == 2
    assert len(lines(out)) < 20
    clock.now += 11.0
    repeat.flush()
    summary = lines(out)[-1]
    assert "repeated 99 times" in summary
    assert "KeyError at " in summary and "test_logs.py" in summary
