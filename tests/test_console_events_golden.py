"""Every outcome of `parse_event` pinned: ~31,000 bent events (tests/console_events_corpus.py)
accepted with the same journal record, or refused with the same code and message word for word,
as recorded from the parser of protocol v1 before console events were rebuilt (issue #21)."""

from __future__ import annotations

import json

import msgpack

from hub.engine.events import decode_event, decode_event_json, parse_event
from tests import console_events_corpus as corpus


def test_every_outcome_of_the_corpus_is_as_recorded() -> None:
    golden = json.loads(corpus.GOLDEN.read_text(encoding="utf-8"))
    got = corpus.record()
    assert got.keys() == golden.keys()
    changed = [
        f"{name}\n  was {golden[name]}\n  now {got[name]}"
        for name in golden
        if got[name] != golden[name]
    ]
    assert not changed, f"{len(changed)} outcomes changed:\n" + "\n".join(changed[:20])


def test_a_mapping_that_is_not_a_dict_gets_the_same_outcome() -> None:
    for name, raw in corpus.cases():
        if isinstance(raw, dict):
            assert corpus.outcome(raw, as_mapping=True) == corpus.outcome(raw), name


def test_the_corpus_covers_every_type_and_every_refusal_kind() -> None:
    golden = json.loads(corpus.GOLDEN.read_text(encoding="utf-8"))
    accepted = {dict(map(tuple, out[1]))["type"] for out in golden.values() if out[0] == "ok"}
    assert len(accepted) == 17
    assert len({out[1] for out in golden.values() if out[0] != "ok"}) > 200


def test_decoding_straight_from_msgpack_accepts_only_what_parse_event_accepts_alike() -> None:
    """`decode_event` (msgspec, from the bytes) takes an event only as `parse_event` would
    have it; what it leaves (None) goes the full way, which gives the recorded refusal."""
    golden = json.loads(corpus.GOLDEN.read_text(encoding="utf-8"))
    taken = 0
    for name, raw in corpus.cases():
        try:
            data = msgpack.packb(raw, use_bin_type=True)
        except (OverflowError, TypeError, ValueError):
            continue  # not msgpack (an integer beyond 64 bits)
        event = decode_event(data)
        if event is None:
            continue
        taken += 1
        assert golden[name][0] == "ok", name
        assert [[k, corpus._plain(v)] for k, v in event.as_record().items()] == golden[name][1]
        assert event == parse_event(raw), name
    assert taken > 1500  # of ~1,770 accepted: the common events do take the short way


def test_decoding_json_lines_straight_accepts_only_what_parse_event_accepts_alike() -> None:
    taken = 0
    for name, raw in corpus.cases():
        try:
            line = json.dumps(raw)
        except (TypeError, ValueError):
            continue  # bytes: not JSON
        event = decode_event_json(line)
        if event is None:
            continue
        taken += 1
        assert event == parse_event(json.loads(line)), name
        assert type(event).type == event.type
    assert taken > 1500


def test_a_key_given_twice_counts_once_the_last_as_unpacking_does() -> None:
    head = {"v": 1, "tournament": "t", "table": 1, "console": "c", "seq": 1}
    pairs = [*head.items(), ("type", "fold"), ("seat", 1), ("seat", 2)]
    data = b"\x88" + b"".join(msgpack.packb(k) + msgpack.packb(v) for k, v in pairs)
    assert decode_event(data) == parse_event(msgpack.unpackb(data))
    line = "{" + ",".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in pairs) + "}"
    assert decode_event_json(line) == parse_event(json.loads(line))
    pairs[5] = ("type", "bet")  # a type twice, unlike: left to the full check
    pairs.append(("type", "fold"))
    line = "{" + ",".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in pairs) + "}"
    assert decode_event_json(line) is None


def test_every_outcome_of_the_corpus_as_bytes_is_as_recorded() -> None:
    """The same cases as a console sends them (msgpack, signed JSON) and as a log holds them
    (JSON Lines), and a few only bytes can hold: each outcome word for word as recorded
    (tests/data/console_events_wire_golden.json where it is not the mapping's)."""
    golden = json.loads(corpus.GOLDEN.read_text(encoding="utf-8"))
    wire = json.loads(corpus.WIRE_GOLDEN.read_text(encoding="utf-8"))
    changed, seen = [], 0
    for name, fmt, data in corpus.wire_cases():
        seen += 1
        want = wire.get(name, {}).get(fmt, golden.get(name))
        got = corpus.wire_outcome(data, fmt)
        if got != want:
            changed.append(f"{name} ({fmt})\n  was {want}\n  now {got}")
    assert not changed, f"{len(changed)} outcomes changed:\n" + "\n".join(changed[:20])
    assert seen > 40_000
