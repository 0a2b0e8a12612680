"""Numbers from outside the hub: finite, and integers every client can hold exactly.

Every entry point (console events, operator commands over websocket JSON or msgpack and REST,
tournament files, PHH files) runs its input through here before anything else looks at it. A
NaN compares false with every bound (``abs(nan) > limit`` is False), so a range check alone
lets it through, and a NaN or an infinity that reaches the state poisons every sum after it
and cannot be written as JSON at all (the feeds, the journal export). An integer beyond 2^64
cannot be packed as msgpack on its way from an edge to the ingest, and one beyond 2^53 is read
wrong by a browser: both are refused where they arrive, with a coded sentence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hub.domain.errors import Rejection

MAX_SAFE_INT = 2**53 - 1
"""The largest integer JavaScript (and so every overlay and web console) holds exactly."""
MAX_TOML_INT = 2**63 - 1
"""TOML's integers are 64-bit signed: beyond, the specification says a reader must refuse."""


def number_problem(value: object, max_int: int = MAX_SAFE_INT) -> str | None:
    """What is wrong with one scalar as a number from outside, or None (not a number, or fine)."""
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a finite number"
    if isinstance(value, int) and not isinstance(value, bool):
        if -max_int <= value <= max_int:
            return None
        bound = {MAX_SAFE_INT: "2^53 - 1", MAX_TOML_INT: "2^63 - 1"}.get(max_int, str(max_int))
        return f"an integer beyond ±({bound}) is out of range"
    return None


def find_bad_number(
    value: Any, where: str = "", max_int: int = MAX_SAFE_INT
) -> tuple[str, str] | None:
    """The first number anywhere in ``value`` (maps, lists, tuples, nested) that is not
    finite or not a safe integer: ``(path, problem)``, the path as ``a.b[2]``. Iterative: a
    deeply nested document costs a loop, never the Python stack."""
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in item.items())
            stack.extend((path or "a key", k) for k in item if not isinstance(k, str))
        elif isinstance(item, list | tuple):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(item))
        else:
            problem = number_problem(item, max_int)
            if problem is not None:
                return path or "the value", problem
    return None


def refuse_bad_numbers(value: Any, code: str = "bad_request") -> None:
    """Raise ``Rejection(code, ...)`` naming the first bad number in ``value``."""
    found = find_bad_number(value)
    if found is not None:
        path, problem = found
        raise Rejection(code, f"field '{path}': {problem}")
