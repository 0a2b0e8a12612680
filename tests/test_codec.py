"""hub.wire.codec: round trips, and one CodecError for every malformed input."""

from __future__ import annotations

import math

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.domain.games.holdem.events import Bet
from hub.engine.events import parse_event
from hub.roles import ingest_decide
from hub.roles.ingest_decide import read_event
from hub.wire.codec import (
    MAX_EVENT_BYTES,
    MAX_EVENT_ITEMS,
    MAX_MESSAGE_BYTES,
    CodecError,
    from_json,
    pack,
    pack_plain,
    to_json,
    unpack,
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary()
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.text() | st.integers(-100, 100), children, max_size=5)
    ),
    max_leaves=30,
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5)
    ),
    max_leaves=30,
)

EVENT = {"v": 1, "tournament": "ifp", "table": 3, "console": "c3", "seq": 17, "type": "fold"}


@settings(max_examples=200, deadline=None)
@given(values)
def test_msgpack_round_trip(value: object) -> None:
    assert unpack(pack(value)) == value


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_json_round_trip(value: object) -> None:
    encoded = to_json(value)
    assert isinstance(encoded, bytes)
    assert from_json(encoded) == value
    assert from_json(encoded.decode()) == value


def test_str_and_bytes_stay_distinct_and_int_keys_are_allowed() -> None:
    decoded = unpack(pack({"s": "é", "b": b"\xff\x00", 7: [1, 2]}))
    assert decoded == {"s": "é", "b": b"\xff\x00", 7: [1, 2]}
    assert isinstance(decoded["s"], str) and isinstance(decoded["b"], bytes)


def test_tuples_come_back_as_lists() -> None:
    assert unpack(pack((1, (2, 3)))) == [1, [2, 3]]


def test_to_json_is_compact_utf8() -> None:
    assert to_json({"name": "Zürich", "n": [1, 2]}) == '{"name":"Zürich","n":[1,2]}'.encode()


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_to_json_refuses_non_finite(bad: float) -> None:
    with pytest.raises(CodecError):
        to_json({"x": bad})


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"x": -Infinity}'])
def test_from_json_refuses_non_finite(text: str) -> None:
    with pytest.raises(CodecError):
        from_json(text)


@pytest.mark.parametrize("value", [object(), {1, 2}, {"x": object()}])
def test_unencodable_values_raise_codec_error(value: object) -> None:
    with pytest.raises(CodecError):
        pack(value)
    with pytest.raises(CodecError):
        to_json(value)


def test_pack_keeps_working_after_an_error() -> None:
    with pytest.raises(CodecError):
        pack([1, 2, object()])
    assert unpack(pack(EVENT)) == EVENT


def test_every_truncation_is_a_codec_error() -> None:
    data = pack(EVENT)
    for end in range(len(data)):
        with pytest.raises(CodecError):
            unpack(data[:end])


@pytest.mark.parametrize(
    "data",
    [
        pack(EVENT) + b"\x00",  # extra data
        b"\xc1",  # never-used type byte
        b"\xa2\xff\xfe",  # invalid UTF-8 in a str
        b"\x81\x92\x01\x02\x01",  # unhashable (array) map key
        b"\xd4\x05\x00",  # extension type
        b"\x91" * 100_000,  # absurd nesting
        b"\xdd\xff\xff\xff\xff",  # array claiming 4 billion items
        b"\xdb\xff\xff\xff\xff",  # str claiming 4 GB
    ],
)
def test_malformed_msgpack_is_a_codec_error(data: bytes) -> None:
    with pytest.raises(CodecError):
        unpack(data)


def test_oversized_and_non_bytes_input_is_refused() -> None:
    with pytest.raises(CodecError, match="exceeds"):
        unpack(b"\xc4" + b"\x00" * MAX_MESSAGE_BYTES)
    with pytest.raises(CodecError):
        unpack("not bytes")  # type: ignore[arg-type]
    with pytest.raises(CodecError):
        from_json(123)  # type: ignore[arg-type]


def test_memoryview_and_bytearray_are_accepted() -> None:
    data = pack(EVENT)
    assert unpack(memoryview(data)) == EVENT
    assert unpack(bytearray(data)) == EVENT


@pytest.mark.parametrize(
    "data",
    [b"", b"{", b'{"a": 1} x', b"\xff\xfe", "[" * 100_000, b'{"a": "\\ud800"', b"\x00"],
)
def test_malformed_json_is_a_codec_error(data: bytes | str) -> None:
    with pytest.raises(CodecError):
        from_json(data)


def test_codec_error_is_a_value_error() -> None:
    assert issubclass(CodecError, ValueError)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_raise_codec_error(data: bytes) -> None:
    try:
        unpack(data)
    except CodecError:
        pass
    try:
        from_json(data)
    except CodecError:
        pass


@settings(max_examples=200, deadline=None)
@given(values, st.data())
def test_corrupted_messages_decode_or_raise_codec_error(value: object, data: st.DataObject) -> None:
    encoded = bytearray(pack(value))
    if encoded:
        i = data.draw(st.integers(0, len(encoded) - 1))
        encoded[i] = data.draw(st.integers(0, 255))
    try:
        unpack(bytes(encoded))
    except CodecError:
        pass


def test_matches_reference_msgpack_encoding() -> None:
    assert pack(EVENT) == msgpack.packb(EVENT, use_bin_type=True)


@settings(max_examples=300, deadline=None)
@given(values)
def test_pack_plain_is_pack_byte_for_byte(value: object) -> None:
    assert pack_plain(value) == pack(value)


@pytest.mark.parametrize(
    "value",
    [
        0,
        -1,
        -32,
        -33,
        127,
        128,
        255,
        256,
        65535,
        65536,
        2**32 - 1,
        2**32,
        2**63,
        2**64 - 1,
        -128,
        -129,
        -(2**15) - 1,
        -(2**31) - 1,
        -(2**63),
        1.5,
        math.inf,
        -0.0,
        "a" * 31,
        "a" * 32,
        "a" * 255,
        "a" * 256,
        "a" * 65536,
        "é",
        b"",
        b"a" * 256,
        b"a" * 65536,
        bytearray(b"ab"),
        memoryview(b"ab"),
        (1, (2, 3)),
        [None, True, False],
        {i: i for i in range(16)},
        {str(i): [i] for i in range(17)},
        {1.5: 2, None: 3},
        list(range(16)),
        list(range(65536)),
    ],
)
def test_pack_plain_is_pack_at_every_size_boundary(value: object) -> None:
    assert pack_plain(value) == pack(value)


def test_pack_plain_leaves_to_pack_what_msgspec_refuses() -> None:
    class Name(str):
        pass

    class Count(int):
        pass

    assert pack_plain({"n": Name("x"), "c": Count(5)}) == pack({"n": "x", "c": 5})
    for bad in (2**64, -(2**63) - 1, [object()]):
        with pytest.raises(CodecError):
            pack_plain(bad)


def test_a_console_event_is_decoded_straight_into_its_class_or_left_to_parse_event() -> None:
    raw = {"v": 1, "tournament": "t", "table": 2, "console": "c", "seq": 3, "type": "bet"}
    plain = read_event(pack({**raw, "seat": 1, "amount": 200}))
    assert type(plain) is Bet and plain.amount == 200  # no dict on the way
    bent = read_event(pack({**raw, "seat": 1, "amount": -5}))
    assert bent == {**raw, "seat": 1, "amount": -5}  # parse_event names the fault
    with pytest.raises(Exception, match="field 'amount' must be at least 0, got -5"):
        parse_event(bent)


def test_an_oversized_event_is_refused_before_any_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(data: bytes) -> None:
        raise AssertionError("decoded an oversized message")

    monkeypatch.setattr(ingest_decide, "decode_event", never)
    with pytest.raises(CodecError, match="exceeds"):
        read_event(b"\x81" + b"\xc0" * MAX_EVENT_BYTES)


def test_a_long_map_is_refused_as_before_even_of_one_key_repeated() -> None:
    """Only a fixmap (at most 15 entries) is decoded straight into its class: a map of more
    than MAX_EVENT_ITEMS entries, a valid key repeated, is refused as unpacking refuses it."""
    head = {"v": 1, "tournament": "t", "table": 1, "console": "c", "seq": 1, "type": "fold"}
    entries = [*head.items(), *[("seat", 1)] * MAX_EVENT_ITEMS]
    data = b"\xde" + len(entries).to_bytes(2, "big")
    data += b"".join(pack(k) + pack(v) for k, v in entries)
    with pytest.raises(CodecError, match="malformed msgpack"):
        read_event(data)
