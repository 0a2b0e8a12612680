"""Shared fixtures: a real Redis (a real part of the tests), unique key prefixes, and a ``bus``
fixture that runs each contract test on the memory bus and on Redis.

The Redis is the machine's on 127.0.0.1:6379 when one answers there, else a private
``redis-server`` started for the session on a free port (and stopped by its pid at the end), so
a fresh machine with the ``redis-server`` binary needs nothing running beforehand."""

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

EXPLICIT_URL = os.environ.get("DUPLICAST_TEST_REDIS_URL")
REDIS_URL = EXPLICIT_URL or "redis://127.0.0.1:6379/0"
_active_url = REDIS_URL  # what the session's tests write to (the private server, if started)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Redis; none at all is a failure, not a skip: Redis is part of what we test."""
    global _active_url
    if ping(urlsplit(REDIS_URL).port or 6379):
        yield REDIS_URL
        return
    binary = shutil.which("redis-server") or REDIS_SERVER
    if EXPLICIT_URL or not os.path.exists(binary):
        pytest.fail(
            f"Redis is not reachable at {REDIS_URL} and there is no redis-server to start: "
            "install it (./dev test does, as root) or point DUPLICAST_TEST_REDIS_URL at one",
            pytrace=False,
        )
    with RedisServer(tmp_path_factory.mktemp("redis"), binary=binary) as server:
        _active_url = server.url
        try:
            yield server.url
        finally:
            _active_url = REDIS_URL


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
    except redis.ConnectionError:
        pass  # nothing can have been written to a Redis that is not there


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
