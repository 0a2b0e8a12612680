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
# The outcomes of the same cases sent as bytes (msgpack, a console's JSON, a JSON Lines log)
# where they differ from the mapping's (a tuple arrives as a list, a key 5 as "5", NaN is no
# JSON, ...), and of the few cases only bytes can hold; every other bytes outcome is the
# mapping's in GOLDEN.
WIRE_GOLDEN = GOLDEN.with_name("console_events_wire_golden.json")
FORMATS = ("msgpack", "json", "jsonl")
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
    # a win with its tiles (issue #32): the hub computes the fan; a typed one may come too
    "result-hand": {
        "type": "result",
        "seat": 1,
        "discarder": 3,
        "hand": {
            "concealed": ["1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m", "7s"],
            "melds": [{"kind": "pung", "tiles": ["5p", "5p", "5p"]}],
            "winning": "7s",
            "flags": ["last_tile"],
        },
    },
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
    "hand",
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


def _pairs(pairs: list[tuple[str, Any]], fmt: str) -> bytes:
    """A map written key by key (a key may come twice), as msgpack or JSON."""
    import msgpack

    if fmt == "msgpack":
        head = bytes([0x80 + len(pairs)]) if len(pairs) < 16 else b"\xde" + len(pairs).to_bytes(2)
        return head + b"".join(msgpack.packb(k) + msgpack.packb(v) for k, v in pairs)
    return ("{" + ",".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in pairs) + "}").encode()


def wire_cases() -> Iterator[tuple[str, str, bytes]]:
    """Every case as each format's bytes (when the format can hold it), then cases only bytes
    can hold: a key given twice, a map of more than 15 entries, malformed bytes."""
    import msgpack

    for name, raw in cases():
        try:
            packed = msgpack.packb(raw, use_bin_type=True)
        except (OverflowError, TypeError, ValueError):
            packed = None  # an integer beyond 64 bits
        if packed is not None:
            yield name, "msgpack", packed
        try:
            line = json.dumps(raw).encode()
        except (TypeError, ValueError):
            continue  # bytes: not JSON
        yield name, "json", line
        yield name, "jsonl", line
    fold = [*ENVELOPE.items(), ("type", "fold"), ("seat", 1)]
    extra = [("seats", None), ("note", None), ("card", None), ("points", None), ("by", None)]
    wire: dict[str, list[tuple[str, Any]]] = {
        "seat twice": [*fold, ("seat", 2)],
        "type twice alike": [*fold, ("type", "fold")],
        "type twice unlike": [*fold, ("type", "bet"), ("amount", 5)],
        "sixteen entries": [*fold, *extra, ("throws", None), ("after", 0), ("deal", None)],
        "sixteen entries bad": [*fold, *extra, ("throws", None), ("after", -1), ("deal", None)],
    }
    for name, pairs in wire.items():
        for fmt in FORMATS:
            yield f"wire {name}", fmt, _pairs(pairs, fmt)
    good = json.dumps({**ENVELOPE, "type": "fold", "seat": 1})
    for name, text in (
        ("truncated", good[:-1]),
        ("trailing", good + "{}"),
        ("empty", ""),
        ("nan ts", good.replace("12.5", "NaN")),
    ):
        for fmt in ("json", "jsonl"):
            yield f"wire {name}", fmt, text.encode()
    good_mp = msgpack.packb({**ENVELOPE, "type": "fold", "seat": 1})
    for name, data in (
        ("truncated", good_mp[:-1]),
        ("trailing", good_mp + b"\x80"),
        ("empty", b""),
        ("ext type", msgpack.packb({**ENVELOPE, "type": "fold", "seat": msgpack.ExtType(1, b"")})),
        ("too large", msgpack.packb({**ENVELOPE, "type": "fold", "note": "n" * 70_000})),
    ):
        yield f"wire {name}", "msgpack", data


def wire_outcome(data: bytes, fmt: str) -> list[Any]:
    """What the hub makes of an event's bytes, each format the way it arrives: msgpack on a
    table's channel (``codec.unpack_event``), a web console's signed JSON
    (``codec.from_json_strict``), a JSON Lines log being replayed (``decode_event_json``, else
    ``json.loads``); then ``parse_event``. ["codec", message] when the bytes are no event."""
    from hub.domain.errors import Rejection
    from hub.engine.events import decode_event_json, parse_event
    from hub.wire import codec

    try:
        if fmt == "msgpack":
            raw = codec.unpack_event(data)
        elif fmt == "json":
            raw = codec.from_json_strict(data)
        else:
            raw = decode_event_json(data)
            if raw is None:
                raw = json.loads(data)
        event = parse_event(raw)
    except codec.CodecError as exc:
        return ["codec", str(exc)]
    except ValueError as exc:  # json.loads of a malformed line
        return ["json", type(exc).__name__]
    except Rejection as exc:
        return [exc.code, exc.message]
    return ["ok", [[k, _plain(v)] for k, v in event.as_record().items()]]


def wire_record(golden: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each wire case's outcome where it is not the mapping's in ``golden``."""
    out: dict[str, dict[str, Any]] = {}
    for name, fmt, data in wire_cases():
        got = wire_outcome(data, fmt)
        if got != golden.get(name):
            out.setdefault(name, {})[fmt] = got
    return out


def _write(path: Path, outcomes: dict[str, Any]) -> None:
    lines = (f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(outcomes.items()))
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        _write(GOLDEN, record())
    elif sys.argv[1:] == ["--write-wire"]:
        _write(WIRE_GOLDEN, wire_record(json.loads(GOLDEN.read_text(encoding="utf-8"))))
    else:
        print(__doc__)
