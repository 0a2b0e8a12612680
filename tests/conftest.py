"""Shared fixtures: the machine's Redis (a real part of the tests), unique key prefixes, and a
``bus`` fixture that runs each contract test on the memory bus and on Redis."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from urllib.parse import urlsplit

import pytest
import redis
from redis_server import ping  # tests/ is on sys.path (pytest's rootdir-relative import)

from hub.bus.base import Bus

REDIS_URL = os.environ.get("DUPLICAST_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The shared Redis; unreachable is a failure, not a skip: Redis is part of what we test."""
    parts = urlsplit(REDIS_URL)
    if not ping(parts.port or 6379):
        pytest.fail(
            f"Redis is not reachable at {REDIS_URL}: start it (redis-server) or point "
            "DUPLICAST_TEST_REDIS_URL at one",
            pytrace=False,
        )
    return REDIS_URL


@pytest.fixture
def key_prefix() -> Iterator[str]:
    """A prefix unique to this test for every key and channel; its Redis keys are deleted after."""
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    yield prefix
    try:
        client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1.0)
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
