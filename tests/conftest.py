"""Shared fixtures: a real Redis (a real part of the tests), unique key prefixes, and a ``bus``
fixture that runs each contract test on the memory bus and on Redis.

The Redis is a private ``redis-server`` started for the session on a free port (and stopped by
its pid at the end), or the one ``DUPLICAST_TEST_REDIS_URL`` names explicitly. Never a Redis that
merely answers on 6379: at a venue that is the event's own, and a test run must not write to it."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from urllib.parse import urlsplit

import pytest
import redis
from redis_server import REDIS_SERVER, RedisServer, ping  # tests/ is on sys.path

from hub.bus.base import Bus
from tests.browser import browser, page  # noqa: F401 - browser tests' fixtures (tests/browser.py)

EXPLICIT_URL = os.environ.get("DUPLICAST_TEST_REDIS_URL") or None
_active_url = EXPLICIT_URL or ""  # what the session's tests write to (set once one is chosen)


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


# The files that take longest, longest first (each file's time alone, `pytest -n 0`, on a
# loaded machine): pytest-xdist (`--dist loadfile`) hands whole files to its workers in
# collection order, so these start first and the short files fill the end. xdist's own
# reordering (the files with the most tests first) is turned off: it put these, which have
# the fewest tests (1-5), last, where the run then waited minutes for one of them on one core.
SLOWEST_FIRST = (
    "test_bench_smoke.py",
    "test_readme_event.py",
    "test_failover.py",
    "test_overlays_browser.py",
    "test_readyz.py",
    "test_hub_e2e.py",
    "test_td_browser.py",
    "test_outage.py",
    "test_onair_release.py",
    "test_failover_browser.py",
    "test_edge_forgery.py",
    "test_edge_subscribe.py",
    "test_console_tablets.py",
    "test_console_outage.py",
    "test_lb.py",
    "test_demand.py",
)


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist present
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file stays whole
