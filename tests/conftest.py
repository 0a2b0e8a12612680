"""Shared fixtures: a real Redis (a real part of the tests), unique key prefixes, and a ``bus``
fixture that runs each contract test on the memory bus and on Redis.

The Redis is a private ``redis-server`` started for the session on a free port (and stopped by
its pid at the end), or the one ``DUPLICAST_TEST_REDIS_URL`` names explicitly. Never a Redis that
merely answers on 6379: at a venue that is the event's own, and a test run must not write to it."""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from urllib.parse import urlsplit

import pytest
import redis
from redis_server import REDIS_SERVER, RedisServer, ping  # tests/ is on sys.path

from hub import logs
from hub.bus.base import Bus
from tests.browser import browser, page  # noqa: F401 - browser tests' fixtures (tests/browser.py)

EXPLICIT_URL = os.environ.get("DUPLICAST_TEST_REDIS_URL") or None
_active_url = EXPLICIT_URL or ""  # what the session's tests write to (set once one is chosen)


@pytest.fixture(autouse=True)
def _no_hub_log_filters_on_pytest(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """``hub.logs.install()`` (the CLI's runner, which some tests run in-process) filters every
    handler on the root logger, pytest's capture handlers among them, and those live the whole
    session: a later test's sixth line of one template within 60 s was then dropped from its
    ``caplog`` (test_proxies failed so, depending on which files its worker ran before)."""
    for handler in {caplog.handler, *logging.getLogger().handlers}:
        for f in [
            f for f in handler.filters if isinstance(f, logs.RepeatFilter | logs.RedactFilter)
        ]:
            handler.removeFilter(f)
    yield


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Redis; none at all is a failure, not a skip: Redis is part of what we test."""
    global _active_url
    if EXPLICIT_URL:
        if not ping(urlsplit(EXPLICIT_URL).port or 6379, host=urlsplit(EXPLICIT_URL).hostname):
            pytest.fail(f"DUPLICAST_TEST_REDIS_URL={EXPLICIT_URL} does not answer", pytrace=False)
        yield EXPLICIT_URL
        return
    binary = shutil.which("redis-server") or REDIS_SERVER
    if not os.path.exists(binary):
        pytest.fail(
            "there is no redis-server to start: install it (./dev test does, as root) or point "
            "DUPLICAST_TEST_REDIS_URL at a Redis the tests may write to",
            pytrace=False,
        )
    with RedisServer(tmp_path_factory.mktemp("redis"), binary=binary) as server:
        _active_url = server.url
        try:
            yield server.url
        finally:
            _active_url = ""


@pytest.fixture
def key_prefix() -> Iterator[str]:
    """A prefix unique to this test for every key and channel; its Redis keys are deleted after."""
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    yield prefix
    try:
        client = redis.Redis.from_url(_active_url, socket_connect_timeout=1.0)
        try:
            keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
            if keys:
                client.delete(*keys)
        finally:
            client.close()
    except (redis.ConnectionError, ValueError):
        pass  # nothing can have been written to a Redis that is not there (or not yet chosen)


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def bus(request: pytest.FixtureRequest) -> AsyncIterator[Bus]:
    """A connected bus of each kind, closed after the test."""
    if request.param == "memory":
        from hub.bus.memory import MemoryBus

        instance: Bus = MemoryBus()
    else:
        from hub.bus.redis import RedisBus

        instance = RedisBus(request.getfixturevalue("redis_url"))
    await instance.connect()
    try:
        yield instance
    finally:
        await instance.close()


# The files that take longest, longest first (each file's own time, setup included, from the
# junit report of a whole `./dev test` run at two workers, load ~15, 2026-12-06; test_config
# as after its corpus drew each square once): pytest-xdist (`--dist loadfile`) hands whole
# files to its workers in collection order, so these start first and the short files fill the
# end. xdist's own reordering (the files with the most tests first) is turned off: it put the
# long process and browser files, which have the fewest tests (1-5), last, where the run then
# waited minutes for one of them on one core. A file missing here that takes minutes (as
# test_config, 446 s of 5,154 in that run, did) can start late and leave one worker alone.
# (test_program_rest, 56 s then, left: 12 s alone since its hub's answers go out at once.)
SLOWEST_FIRST = (
    "test_bench_smoke.py",  # 301 s in that run
    "test_console_page.py",  # 249 s
    "test_config.py",  # ~220 s (446 s before)
    "test_cli_usability.py",  # 190 s
    "test_broadcast_layout.py",  # 183 s
    "test_projections.py",  # 163 s
    "test_readme_event.py",  # 141 s
    "test_overlays_hub.py",  # 127 s
    "test_cli.py",  # 118 s
    "test_console_games.py",  # 111 s
    "test_event.py",  # 104 s
    "test_deploy.py",  # 103 s
    "test_readyz.py",  # 99 s
    "test_overlays_browser.py",  # 94 s
    "test_playout_templates.py",  # 73 s
    "test_desk_fonts.py",  # 68 s
    "test_stats.py",  # 65 s
    "test_fuzz.py",  # 62 s
    "test_console_nohub.py",  # 62 s
    "test_game_demos.py",  # 61 s
    "test_onair_release.py",  # 57 s
    "test_demand.py",  # ~37 s alone (new)
)


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist present
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file stays whole
