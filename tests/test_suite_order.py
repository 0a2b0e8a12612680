"""The suite's order for pytest-xdist (tests/conftest.py): the files named slowest exist (a
renamed one would quietly go back among the others), are collected first in their order, and
xdist does not reorder the files (by their number of tests) after."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import SLOWEST_FIRST, pytest_collection_modifyitems

HERE = Path(__file__).resolve().parent


def test_every_file_named_slowest_exists() -> None:
    assert len(set(SLOWEST_FIRST)) == len(SLOWEST_FIRST)
    assert [name for name in SLOWEST_FIRST if not (HERE / name).is_file()] == []


def test_the_slowest_files_are_collected_first_and_the_rest_keep_their_order() -> None:
    names = ["test_a.py", SLOWEST_FIRST[1], "test_b.py", SLOWEST_FIRST[0], SLOWEST_FIRST[1]]
    items: list[Any] = [SimpleNamespace(path=HERE / name) for name in [*names, "test_a.py"]]
    pytest_collection_modifyitems(None, items)  # type: ignore[arg-type]
    assert [item.path.name for item in items] == [
        SLOWEST_FIRST[0], SLOWEST_FIRST[1], SLOWEST_FIRST[1], "test_a.py", "test_b.py", "test_a.py"
    ]  # fmt: skip


def test_xdist_keeps_the_collection_order(pytestconfig: pytest.Config) -> None:
    assert getattr(pytestconfig.option, "loadscopereorder", False) is False
