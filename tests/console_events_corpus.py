"""Bent console events, to pin every outcome of `parse_event` (tests/test_console_events.py).

One well-formed event of each of the 17 types (and each mahjong result shape) is bent in one
place at a time: a field dropped, an unknown field added, a value replaced by one of every type
and by out-of-range and edge numbers; a few pairs of faults show which one is named first. Each
case is decoded as given (a dict; the test also as another mapping); the outcome (the journal record
of an accepted event, or the refusal's code and exact message) is compared with
tests/data/console_events_golden.json, recorded from the parser before console events were
rebuilt (issue #21). Regenerate it only on purpose: ``python -m tests.console_events_corpus
--write``.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

GOLDEN = Path(__file__).resolve().parent / "data" / "console_events_golden.json"
ENVELOPE: dict[str, Any] = {
    "v": 1,
    "tournament": "t-1",
    "table": 3,
    "console": "table3",
    "seq": 7,
    "ts": 12.5,
}
BASES: dict[str, dict[str, Any]] = {
    "start": {"type": "start", "deal": 2},
    "fold": {"type": "fold", "seat": 1},
    "check": {"type": "check", "seat": 2},
    "call": {"type": "call", "seat": 3, "amount": 100},
    "bet": {"type": "bet", "seat": 1, "amount": 200},
    "raise": {"type": "raise", "seat": 2, "amount": 600},
    "win": {"type": "win", "seats": [3, 1]},
    "undo": {"type": "undo"},
    "reopen": {"type": "reopen", "deal": 1},
    "void": {"type": "void", "by": "chief", "note": "misdeal"},
    "confirm": {"type": "confirm", "deal": 4},
    "exposed": {"type": "exposed", "seat": 2, "card": 1},
    "early": {"type": "early", "deal": 1},
    "penalty": {"type": "penalty", "seat": 2, "note": "slow play", "by": "td", "points": 1},
    "result-discard": {"type": "result", "seat": 1, "fan": 8, "discarder": 3},
    "result-self": {"type": "result", "seat": 2, "fan": 12, "self_draw": True},
    "result-draw": {"type": "result", "draw": True},
    "throws": {"type": "throws", "seat": 2, "throws": "RPS"},
    "reveal": {"type": "reveal", "throws": "SSR"},
}
FIELDS = (
    "v",
    "tournament",
    "table",
    "console",
    "seq",
    "type",
    "ts",
    "deal",
    "seat",
    "amount",
    "seats",
    "note",
    "card",
    "points",
    "by",
    "throws",
    "fan",
    "discarder",
    "self_draw",
    "draw",
)
VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    1,
    2,
    3,
    -1,
    2**53 - 1,
    2**53,
    -(2**53),
    10**30,
    1.0,
    1.5,
    -0.0,
    math.nan,
    math.inf,
    -math.inf,
    1e308,
    "",
    "x",
    "RPS",
    "RRRRRRRRRR",
    "n" * 64,
    "n" * 65,
    "é" * 10,
    "n" * 501,
    [],
    [1],
    [1, 1],
    [0],
    [100],
    [True],
    list(range(1, 12)),
    (2, 1),
    {},
    {"a": 1},
    b"bytes",
    "start",
    "result",
)


def cases() -> Iterator[tuple[str, Any]]:
    """Every bent event, named by what was done to which base."""
    for name, extra in BASES.items():
        good = {**ENVELOPE, **extra}
        yield f"{name}", good
        yield f"{name} without ts", {k: v for k, v in good.items() if k != "ts"}
        for field in good:
            yield f"{name} -{field}", {k: v for k, v in good.items() if k != field}
        yield f"{name} +unknown", {**good, "colour": "red"}
        yield f"{name} +non-str key", {**good, 5: "x"}
        for field in FIELDS:
            for i, value in enumerate(VALUES):
                yield f"{name} {field}={i}", {**good, field: value}
        for first, second in (("table", "seq"), ("seq", "tournament"), ("deal", "seat")):
            yield f"{name} {first}+{second} bad", {**good, first: "x", second: -1}
        yield f"{name} type+v bad", {**good, "type": "bogus", "v": 2}
    for shape in (None, [], "event", 5, [("v", 1)]):
        yield f"not a map {shape!r}", shape


def outcome(raw: Any, as_mapping: bool = False) -> list[Any]:
    """What `parse_event` makes of ``raw``: ["ok", record] or [code, message]."""
    from hub.domain.errors import Rejection
    from hub.engine.events import parse_event

    if as_mapping and isinstance(raw, dict):
        raw = MappingProxyType(raw)
    try:
        event = parse_event(raw)
    except Rejection as exc:
        return [exc.code, exc.message]
    return ["ok", [[k, _plain(v)] for k, v in event.as_record().items()]]  # in its order


def _plain(value: Any) -> Any:
    """A record as JSON holds it (floats by repr: -0.0, 1e308 kept exactly)."""
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def record() -> dict[str, Any]:
    """Every case's outcome (the test also decodes each as a non-dict mapping: the same)."""
    return {name: outcome(raw) for name, raw in cases()}


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        lines = (f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(record().items()))
        GOLDEN.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
        print(f"wrote {GOLDEN}")
    else:
        print(__doc__)
