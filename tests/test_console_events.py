"""One schema, whichever way an event comes: a bent event decoded straight from msgpack or JSON
(msgspec, the Structs) is taken exactly as `parse_event` takes its mapping, or left to it, which
then names the fault word for word as for any mapping. Hypothesis bends valid events field by
field (missing, None, wrong types, bounds, extra fields) and compares the paths.
"""

from __future__ import annotations

import json
from typing import Any

import msgpack
import msgspec
from hypothesis import event, given, settings
from hypothesis import strategies as st

from hub.domain.errors import Rejection
from hub.domain.games.holdem.events import Call
from hub.domain.games.mahjong.events import Result
from hub.domain.games.registry import EVENT_CLASSES
from hub.engine.events import (
    ACTION_TYPES,
    EVENT_TYPES,
    decode_event,
    decode_event_json,
    parse_event,
)
from hub.wire.codec import unpack

FIELDS = ("v", "tournament", "table", "console", "seq", "type", "ts", "deal", "seat", "amount")
ODD_VALUES = st.sampled_from(
    [
        *(None, True, False, 0, 1, 2, -1, 1.0, 2.5, 2**53 - 1, 2**53),
        *("", "x", "x" * 64, "x" * 65, "call ", "CALL", *sorted(EVENT_TYPES)),
        *([], [1], {}, float("nan")),
    ]
)


def outcome(parse: Any, raw: Any) -> tuple[str, Any]:
    try:
        event = parse(raw)
    except Rejection as exc:
        return "refused", (exc.code, exc.message)
    except Exception as exc:  # the same failure, if any, whichever path
        return "raised", (type(exc), str(exc))
    assert type(event) is EVENT_CLASSES[event.type]
    return "event", (event, msgspec.structs.asdict(event), repr(event), hash(event))


@st.composite
def plain_events(draw: st.DrawFn) -> dict[Any, Any]:
    kind = draw(st.sampled_from([*sorted(ACTION_TYPES), *sorted(EVENT_TYPES)]))
    raw: dict[Any, Any] = {
        "v": 1,
        "tournament": draw(st.sampled_from(["t", "t-test", "x" * 64])),
        "table": draw(st.integers(1, 12)),
        "console": draw(st.sampled_from(["table1", "operator", "c" * 64])),
        "seq": draw(st.integers(1, 2**53 - 1)),
        "type": kind,
    }
    for name in ("ts", "deal", "seat", "amount"):
        if draw(st.booleans()):
            raw[name] = draw(st.floats(0, 1e9) if name == "ts" else st.integers(0, 2**53 - 1))
    for _ in range(draw(st.sampled_from([0, 0, 1, 2, 3]))):  # bend a few fields
        name = draw(st.sampled_from(FIELDS))
        if draw(st.integers(0, 4)) == 0:
            raw.pop(name, None)
        else:
            raw[name] = draw(ODD_VALUES)
    if draw(st.integers(0, 9)) == 0:
        raw[draw(st.sampled_from(["seats", "note", "card", "fan", "draw", "amout", 5]))] = 1
    return raw


def _bytes_first(decode: Any, data: bytes, unpack: Any) -> Any:
    """What a hub makes of an event's bytes: decoded straight, or unpacked and parsed."""
    event = decode(data)
    return event if event is not None else parse_event(unpack(data))


@settings(max_examples=3000, deadline=None)
@given(plain_events())
def test_bytes_and_mappings_go_through_the_same_schema(raw: dict[Any, Any]) -> None:
    expected = outcome(parse_event, raw)
    data = msgpack.packb(raw)
    assert outcome(lambda d: _bytes_first(decode_event, d, unpack), data) == expected
    if all(isinstance(k, str) for k in raw) and "nan" not in repr(raw):
        line = json.dumps(raw).encode()
        assert outcome(lambda d: _bytes_first(decode_event_json, d, json.loads), line) == expected
    event(expected[0])  # hypothesis statistics: how many were accepted, refused


def test_the_fast_path_takes_the_common_events() -> None:
    """The bench's events are plain: the comparison above is not vacuous."""
    raw = {"v": 1, "tournament": "t", "table": 1, "console": "c", "seq": 1, "type": "call"}
    plain = parse_event({**raw, "ts": 1.5, "seat": 2})
    assert plain == Call(v=1, tournament="t", table=1, console="c", seq=1, ts=1.5, seat=2)
    assert type(plain) is Call and plain.type == "call"


def test_a_record_lists_every_field_given_in_the_documented_order() -> None:
    every = Result(
        v=1,
        tournament="t",
        table=1,
        console="c",
        seq=1,
        ts=1.5,
        deal=2,
        seat=3,
        amount=4,
        seats=(1, 2),
        note="n",
        card=1,
        points=5,
        by="o",
        fan=8,
        discarder=2,
        throws="RPS",
        after=6,
    )
    record = every.as_record()
    envelope = ["v", "tournament", "table", "console", "seq", "type"]
    optional = ["ts", "deal", "seat", "amount", "seats", "note", "card", "points", "by"]
    assert list(record) == [*envelope, *optional, "throws", "after", "fan", "discarder"]
    assert record["seats"] == [1, 2] and record["throws"] == "RPS"
    draw = Result(v=1, tournament="t", table=1, console="c", seq=1, draw=True, after=0)
    assert list(draw.as_record()) == [*envelope, "after", "draw"]


def test_a_ts_too_big_for_a_float_is_refused_not_raised() -> None:
    """JSON and msgpack carry integers beyond a float's range: ``Engine.submit`` must refuse
    such a ``ts`` (``bad_schema``) rather than let ``float()`` raise out of it."""
    from hub.engine.core import Engine
    from tests.hubharness import unique_tournament

    config, decks = unique_tournament("ts")
    engine = Engine(config, decks)
    raw = {"v": 1, "tournament": config.id, "table": 1, "console": "table1", "seq": 1}
    raw |= {"type": "start", "deal": config.deal_orders[1][0], "ts": 10**400}
    out = engine.submit(raw, 0.0)
    assert not out.ok and out.code == "bad_schema" and "'ts'" in (out.message or "")
    raw["seq"], raw["ts"] = 2, 12.5
    assert engine.submit(raw, 0.0).ok
