"""The tests' own Redis: never the one that merely answers on 6379 (at a venue, the event's)."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import conftest  # tests/ is on sys.path
import pytest


def test_the_tests_redis_is_their_own_or_named(redis_url: str) -> None:
    named = os.environ.get("DUPLICAST_TEST_REDIS_URL")
    if named:
        assert redis_url == named
    else:
        assert urlsplit(redis_url).port != 6379, "tests wrote to the Redis on 6379"
        assert conftest._active_url == redis_url


def test_a_named_redis_that_does_not_answer_fails_not_falls_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from redis_server import free_port

    monkeypatch.setattr(conftest, "EXPLICIT_URL", f"redis://127.0.0.1:{free_port()}/0")
    fixture = conftest.redis_url.__wrapped__(tmp_path_factory)  # type: ignore[attr-defined]
    with pytest.raises(pytest.fail.Exception, match="does not answer"):
        next(fixture)
