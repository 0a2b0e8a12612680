"""The feed: frames encoded once, seqs, history, catching up, the edge's side, wire formats."""

from __future__ import annotations

import json
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.serve.edge_feed import EdgeFeed, load_snapshots
from hub.serve.feed import (
    CATCH_UP_DELTAS,
    HISTORY,
    SNAPSHOT_EVERY,
    Frame,
    IngestFeed,
    decode_feed,
    decode_snapshot,
    encode_feed,
    encode_snapshot,
)
from hub.wire.channels import Channels
from hub.wire.codec import CodecError, pack
from hub.wire.patch import TopicChange, apply_patch

KEY = ("public", "standings")


def replace(path: str, value: Any) -> list[dict[str, Any]]:
    return [{"op": "replace", "path": path, "value": value}]


def message(frame: Frame, fmt: str = "json") -> dict[str, Any]:
    out = frame.outs[fmt]
    decoded: dict[str, Any] = (
        json.loads(out.payload) if fmt == "json" else msgpack.unpackb(out.payload)
    )
    return decoded


def decode(outs: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(o.payload) for o in outs]


def test_first_change_is_a_snapshot_then_patches() -> None:
    feed = IngestFeed()
    first = feed.publish(TopicChange(KEY, None, {"a": 1, "b": [1]}))
    assert first is not None and first.full and first.seq == 1
    assert message(first) == message(first, "msgpack")  # one message, two encodings
    assert message(first) == {
        "type": "snapshot",
        "topic": "standings",
        "seq": 1,
        "data": {"a": 1, "b": [1]},
    }
    patch = [{"op": "add", "path": "/b/-", "value": 2}]
    second = feed.publish(TopicChange(KEY, patch, {"a": 1, "b": [1, 2]}))
    assert second is not None and not second.full
    assert message(second) == {"type": "delta", "topic": "standings", "seq": 2, "patch": patch}
    assert feed.publish(TopicChange(KEY, [], {"a": 1, "b": [1, 2]})) is None
    assert feed.snapshot(KEY) == (2, {"a": 1, "b": [1, 2]})


def test_catch_up_from_history_or_a_snapshot() -> None:
    feed = IngestFeed()
    feed.publish(TopicChange(KEY, None, {"n": 0}))
    for n in range(1, HISTORY + 20):
        feed.publish(TopicChange(KEY, replace("/n", n), {"n": n}))
    head = HISTORY + 20
    assert feed.seq(KEY) == head
    assert feed.catch_up(KEY, "json", head) == []
    missed = decode(feed.catch_up(KEY, "json", head - 3))
    assert [m["seq"] for m in missed] == [head - 2, head - 1, head]
    # Out of the history (or from the future): the snapshot, encoded now, at the head.
    for resume in (None, 1, head + 5):
        (snap,) = decode(feed.catch_up(KEY, "json", resume))
        assert snap == {
            "type": "snapshot",
            "topic": "standings",
            "seq": head,
            "data": {"n": head - 1},
        }
    # A topic with no data yet: an empty snapshot at seq 0.
    assert decode(feed.catch_up(("live", "ops"), "json", None)) == [
        {"type": "snapshot", "topic": "ops", "seq": 0, "data": {}}
    ]


def test_snapshot_encoded_once_per_seq() -> None:
    feed = IngestFeed()
    feed.publish(TopicChange(KEY, None, {"n": 0}))
    feed.publish(TopicChange(KEY, replace("/n", 1), {"n": 1}))
    a = feed.catch_up(KEY, "json", None)[0]
    b = feed.catch_up(KEY, "msgpack", None)[0]
    assert feed.catch_up(KEY, "json", None)[0] is a
    assert msgpack.unpackb(b.payload) == json.loads(a.payload)


_KEYS = [("public", "standings"), ("live", "ops"), ("live", "table:1")]
_STEP = st.one_of(
    st.tuples(st.just("whole"), st.sampled_from(_KEYS)),
    st.tuples(st.just("deltas"), st.sampled_from(_KEYS), st.integers(1, SNAPSHOT_EVERY + 3)),
    st.tuples(st.just("seqs"), st.lists(st.sampled_from(_KEYS), max_size=3)),
    st.tuples(st.just("seed"), st.sampled_from(_KEYS), st.integers(0, 90), st.booleans()),
    st.tuples(st.just("read"), st.sampled_from(_KEYS)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_STEP, max_size=40))
def test_unsaved_names_every_topic_behind_its_persisted_seq(steps: list[Any]) -> None:
    """Which topics a publish persists the seq of (``unsaved``, read from the topics due)
    is what the rules say, after any run of changes, seeds, persists and reads: a model
    counts each topic's seq and its deltas since it was persisted."""
    feed = IngestFeed(lambda key: {"made": key[1]})
    seq: dict[Any, int] = {}
    behind: dict[Any, int] = {}
    held: dict[Any, bool] = {}  # whether the store holds the topic's payload
    for step in steps:
        kind, key = step[0], step[1]
        if kind == "whole":
            feed.publish(TopicChange(key, None, {"n": 0}))
            seq[key], behind[key], held[key] = seq.get(key, 0) + 1, SNAPSHOT_EVERY, True
        elif kind == "deltas":
            for n in range(step[2]):
                feed.publish(TopicChange(key, replace("/n", n), {"n": n}))
            seq[key] = seq.get(key, 0) + step[2]
            behind[key] = behind.get(key, 0) + step[2]
            held[key] = True
        elif kind == "seqs":
            feed.seqs(key)
            for k in key:
                if seq.get(k, 0) > 0:
                    behind[k] = 0
        elif kind == "seed":
            feed.seed(key, step[2], {"n": -1} if step[3] else None)
            seq[key], behind[key], held[key] = step[2], 0, step[3]
        elif not held.get(key, False):  # a read: made by the engine if the store lacks it
            feed.snapshot(key)
            seq.setdefault(key, 1)
            behind[key], held[key] = SNAPSHOT_EVERY, True
        for at_least in (1, SNAPSHOT_EVERY, SNAPSHOT_EVERY + 2):
            expected = {k for k, n in behind.items() if n >= at_least and seq[k] > 0}
            assert sorted(feed.unsaved(at_least=at_least)) == sorted(expected)


def test_seed_continues_after_restart_with_a_snapshot() -> None:
    feed = IngestFeed()
    feed.seed(KEY, 41 + SNAPSHOT_EVERY, {"a": 1})
    frame = feed.publish(TopicChange(KEY, None, {"a": 2}))
    assert frame is not None and frame.seq == 42 + SNAPSHOT_EVERY
    with pytest.raises(ValueError):
        feed.seed(KEY, -1, {})


def test_seqs_persisted_every_few_deltas_snapshots_when_asked() -> None:
    feed = IngestFeed()
    feed.publish(TopicChange(KEY, None, {"n": 0}))
    assert feed.unsaved(at_least=SNAPSHOT_EVERY) == [KEY]  # a new topic's seq: at once
    assert feed.seqs([KEY]) == {"public|standings": b"1"}
    for n in range(1, SNAPSHOT_EVERY):
        feed.publish(TopicChange(KEY, replace("/n", n), {"n": n}))
        assert feed.unsaved(at_least=SNAPSHOT_EVERY) == []
    assert feed.unsaved() == [KEY]
    feed.publish(TopicChange(KEY, replace("/n", 99), {"n": 99}))
    assert feed.unsaved(at_least=SNAPSHOT_EVERY) == [KEY]
    assert feed.seqs([KEY]) == {"public|standings": str(SNAPSHOT_EVERY + 1).encode()}
    assert feed.unsaved() == []
    frame = decode_snapshot(feed.snapshots([KEY])["public|standings"])  # an edge asked
    assert frame.seq == SNAPSHOT_EVERY + 1
    assert json.loads(frame.outs["json"].payload)["data"] == {"n": 99}


def test_edge_forwards_bytes_heals_gaps_and_decodes_only_for_rest() -> None:
    ingest = IngestFeed()
    edge = EdgeFeed()
    frames = [ingest.publish(TopicChange(KEY, None, {"rows": []}))]
    for n in range(5):
        patch = [{"op": "add", "path": "/rows/-", "value": n}]
        frames.append(ingest.publish(TopicChange(KEY, patch, {"rows": list(range(n + 1))})))
    assert all(f is not None for f in frames)
    assert edge.apply(KEY, frames[0]) is True  # type: ignore[arg-type]
    assert edge.apply(KEY, frames[1]) is True  # type: ignore[arg-type]
    assert edge.apply(KEY, frames[1]) is None  # type: ignore[arg-type]  # an old one: ignored
    assert edge.apply(KEY, frames[3]) is False  # type: ignore[arg-type]  # a gap
    assert edge.seq(KEY) == 2
    # The same bytes go out: a new subscriber gets the snapshot and the deltas after it.
    outs = edge.catch_up(KEY, "json", None)
    assert outs[0] is frames[0].outs["json"] and outs[1] is frames[1].outs["json"]  # type: ignore[union-attr]
    assert edge.snapshot(KEY) == (2, {"rows": [0]})
    # Healing: a fresher snapshot from the hash, then the frames after it.
    snapshot = decode_snapshot(ingest.snapshots([KEY])["public|standings"])
    assert edge.seed(KEY, snapshot)
    assert not edge.seed(KEY, snapshot)  # not newer
    assert edge.snapshot(KEY) == (6, {"rows": [0, 1, 2, 3, 4]})
    assert edge.behind(KEY) == 0


def test_a_subscribe_through_an_edge_costs_a_bounded_number_of_frames() -> None:
    """Issue #30 item 1: an edge holding a snapshot and 100 deltas after it answers a new
    subscriber with one fresh snapshot (made once, shared by the next subscribers), and one
    that missed more than ``CATCH_UP_DELTAS`` with the snapshot, not the deltas."""
    ingest = IngestFeed()
    edge = EdgeFeed()
    frames = [ingest.publish(TopicChange(KEY, None, {"rows": []}))]
    for n in range(100):
        patch = [{"op": "add", "path": "/rows/-", "value": n}]
        frames.append(ingest.publish(TopicChange(KEY, patch, {"rows": list(range(n + 1))})))
    for frame in frames:
        assert frame is not None and edge.apply(KEY, frame)
    for fmt in ("json", "msgpack", "json"):
        outs = edge.catch_up(KEY, fmt, None)
        assert len(outs) == 1 and outs[0].seq == 101
    assert edge.compactions == 1
    message = json.loads(edge.catch_up(KEY, "json", None)[0].payload)
    assert message == {"type": "snapshot", "topic": "standings", "seq": 101,
                       "data": {"rows": list(range(100))}}  # fmt: skip
    assert msgpack.unpackb(edge.catch_up(KEY, "msgpack", None)[0].payload) == message
    # resuming: the few deltas missed, or the snapshot when more
    assert [o.seq for o in edge.catch_up(KEY, "json", 101 - CATCH_UP_DELTAS)] == list(
        range(102 - CATCH_UP_DELTAS, 102)
    )
    assert [o.seq for o in edge.catch_up(KEY, "json", 100 - CATCH_UP_DELTAS)] == [101]
    assert [o.seq for o in ingest.catch_up(KEY, "json", 100 - CATCH_UP_DELTAS)] == [101]
    assert edge.snapshot(KEY) == (101, {"rows": list(range(100))})


def test_an_edge_rebases_on_a_snapshot_it_has_already_passed() -> None:
    """The hash answers a refresh at the edge's seq, or behind it: clients are sent nothing
    (they have it all), the edge's deltas start from it instead."""
    ingest = IngestFeed()
    edge = EdgeFeed()
    frames = [ingest.publish(TopicChange(KEY, None, {"rows": []}))]
    for n in range(10):
        patch = [{"op": "add", "path": "/rows/-", "value": n}]
        frames.append(ingest.publish(TopicChange(KEY, patch, {"rows": list(range(n + 1))})))
    for frame in frames[:8]:  # seqs 1..8
        assert frame is not None and edge.apply(KEY, frame)
    behind = decode_snapshot(ingest.snapshots([KEY])["public|standings"])  # at seq 11
    at_6 = Frame(6, True, behind.outs)  # (its bytes do not matter here)
    assert edge.behind(KEY) == 7
    assert not edge.seed(KEY, at_6)  # behind the edge: not sent, but the new base
    assert edge.behind(KEY) == 2 and edge.seq(KEY) == 8
    outs = edge.catch_up(KEY, "json", None)
    assert outs[0] is at_6.outs["json"] and outs[1:] == [f.outs["json"] for f in frames[6:8]]  # type: ignore[union-attr]
    assert not edge.seed(KEY, Frame(5, True, behind.outs))  # older than the base: ignored
    assert edge.behind(KEY) == 2
    at_8 = Frame(8, True, behind.outs)
    assert not edge.seed(KEY, at_8)  # the edge's own seq: not sent either
    assert edge.behind(KEY) == 0 and edge.catch_up(KEY, "json", None) == [at_8.outs["json"]]
    assert edge.seed(KEY, behind)  # ahead: taken and sent
    assert edge.seq(KEY) == 11


def test_feed_and_snapshot_wire_formats() -> None:
    feed = IngestFeed()
    frame = feed.publish(TopicChange(("live", "table:3"), None, {"pot": 30}))
    assert frame is not None
    decoded = decode_feed(encode_feed(("live", "table:3"), frame))
    assert decoded.key == ("live", "table:3")
    assert decoded.frame.seq == 1 and decoded.frame.full
    assert decoded.frame.outs["json"].payload == frame.outs["json"].payload
    assert decoded.frame.outs["msgpack"].payload == frame.outs["msgpack"].payload
    snap = decode_snapshot(encode_snapshot(frame))
    assert snap.seq == 1 and snap.outs["json"].payload == frame.outs["json"].payload
    loaded = load_snapshots({"live|table:3": encode_snapshot(frame), "bad": b"x", "a|b": b"\xc1"})
    assert list(loaded) == [("live", "table:3")]
    for bad in (pack({"v": 1}), pack([1, 2]), pack({"v": 2, "a": "x", "t": 1, "s": 1})):
        with pytest.raises(CodecError):
            decode_feed(bad)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_garbage_on_the_feed_is_one_codec_error(data: bytes) -> None:
    try:
        decode_feed(data)
    except CodecError:
        pass


def test_channel_names_spelled_once() -> None:
    names = Channels("ifp")
    assert names.console(3) == "dup:ifp:console:3"
    assert names.consoles_pattern == "dup:ifp:console:*"
    assert names.ack("table1") == "dup:ifp:ack:table1"
    assert names.errors(2) == "dup:ifp:errors:2"
    assert (names.feed, names.topics, names.journal) == (
        "dup:ifp:feed",
        "dup:ifp:topics",
        "dup:ifp:journal",
    )
    assert names.table_of(names.console(12)) == 12
    assert names.table_of("dup:ifp:console:x") is None


def test_patches_applied_by_a_client_rebuild_the_payload() -> None:
    feed = IngestFeed()
    payloads = [{"rows": [], "n": 0}, {"rows": [{"a": 1}], "n": 1}, {"rows": [{"a": 2}], "n": 1}]
    state: dict[str, Any] = {}
    from hub.wire.patch import diff

    for i, payload in enumerate(payloads):
        change = TopicChange(KEY, None if i == 0 else diff(payloads[i - 1], payload), payload)
        frame = feed.publish(change)
        assert frame is not None
        m = message(frame)
        state = m["data"] if m["type"] == "snapshot" else apply_patch(state, m["patch"])
        assert state == payload


def test_after_a_restart_topics_are_built_when_asked_for_or_when_they_change() -> None:
    """A restarted ingest knows each topic's persisted seq, not its payload. A subscriber makes
    the engine build it (a snapshot at the seq above any a client has seen, nothing sent to
    anyone else); a topic that changes first is sent whole at the next seq."""
    built: list[Any] = []

    def materialize(key: Any) -> dict[str, Any] | None:
        built.append(key)
        return {"n": 1} if key == KEY else None

    feed = IngestFeed(materialize)
    feed.seed(KEY, 40 + SNAPSHOT_EVERY)
    feed.seed(("live", "ops"), 7 + SNAPSHOT_EVERY)
    (snap,) = decode(feed.catch_up(KEY, "json", None))
    assert (snap["type"], snap["seq"], snap["data"]) == ("snapshot", 40 + SNAPSHOT_EVERY, {"n": 1})
    assert built == [KEY] and feed.unsaved(at_least=SNAPSHOT_EVERY) == [KEY]
    frame = feed.publish(TopicChange(KEY, replace("/n", 2), {"n": 2}))
    assert frame is not None and not frame.full and frame.seq == 41 + SNAPSHOT_EVERY
    # Never asked for, then changed: sent whole.
    ops = feed.publish(TopicChange(("live", "ops"), None, {"at": 1}))
    assert ops is not None and ops.full and ops.seq == 8 + SNAPSHOT_EVERY
    # A topic the engine does not have: an empty snapshot, and nothing kept of it.
    assert decode(feed.catch_up(("live", "deal:9"), "json", None))[0]["seq"] == 0
    assert ("live", "deal:9") not in set(feed.keys())


# -- failover: a store that is not live serves nothing it does not hold (DESIGN §7) ------------


def test_a_writer_store_that_is_not_live_serves_nothing() -> None:
    """A standby or rebuilding ingest: no empty snapshot, REST unavailable (not 404)."""
    feed = IngestFeed(live=False)
    assert feed.catch_up(KEY, "json", None) == []
    assert not feed.available(KEY)
    feed.live = True
    assert decode(feed.catch_up(KEY, "json", None)) == [
        {"type": "snapshot", "topic": "standings", "seq": 0, "data": {}}
    ]
    assert feed.available(KEY)


def test_an_edge_store_never_sends_an_empty_or_older_snapshot() -> None:
    behind: list[Any] = []
    edge = EdgeFeed(live=False, on_behind=behind.append)
    other = ("public", "table:1")
    assert edge.catch_up(other, "json", None) == []  # not in sync: "no data yet" is not ours
    assert not edge.available(other)
    edge.seed(KEY, Frame.snapshot("standings", 40, {"n": 40}))
    assert edge.available(KEY)  # its last good state
    assert decode(edge.catch_up(KEY, "json", None))[0]["seq"] == 40
    assert edge.catch_up(KEY, "json", 52) == []  # the client is ahead: nothing older
    assert behind == [KEY]  # and the edge fetches the writer's snapshot of it
    edge.live = True
    assert decode(edge.catch_up(other, "json", None))[0] == {
        "type": "snapshot",
        "topic": "table:1",
        "seq": 0,
        "data": {},
    }


def test_the_writer_answers_a_client_ahead_of_it_with_its_snapshot() -> None:
    """The writer's seq is the truth: a client ahead of it holds another history."""
    feed = IngestFeed()
    feed.publish(TopicChange(KEY, None, {"n": 0}))
    assert decode(feed.catch_up(KEY, "json", 9))[0]["seq"] == 1


def test_an_edge_asks_the_writer_for_a_topic_made_on_demand_before_answering() -> None:
    """A live traveller the edge never saw may be one the writer makes only when asked: a
    subscriber is sent nothing and the writer is asked (never the empty snapshot it may not
    be); once the writer said it has no data, the empty snapshot at seq 0 is the answer."""
    asked: list[Any] = []
    edge = EdgeFeed(on_unknown=asked.append)
    lazy, program, eager = ("live", "compare:3:2"), ("program", "compare:3:2"), ("live", "table:1")
    assert edge.catch_up(lazy, "json", None) == [] and asked == [lazy]
    assert edge.catch_up(program, "json", 7) == [] and asked == [lazy, program]
    assert not edge.available(lazy)  # REST: 503, not 404 "no data yet"
    assert decode(edge.catch_up(eager, "json", None))[0]["seq"] == 0  # as ever: not on demand
    assert decode(edge.catch_up(("program", "onair"), "json", None))[0]["seq"] == 0
    assert edge.empty(lazy)  # the writer has no data of it
    assert not edge.empty(lazy)  # (once)
    assert decode(edge.catch_up(lazy, "json", None)) == [
        {"type": "snapshot", "topic": "compare:3:2", "seq": 0, "data": {}}
    ]
    assert edge.available(lazy) and asked == [lazy, program]
    assert edge.apply(program, Frame.snapshot("compare:3:2", 9, {"rows": []}))
    assert not edge.unknown(program) and not edge.empty(program)
    assert decode(edge.catch_up(program, "json", None))[0]["seq"] == 9
    assert edge.seed(lazy, Frame.snapshot("compare:3:2", 4, {"rows": [1]}))  # it has data now
    assert decode(edge.catch_up(lazy, "json", None))[0]["data"] == {"rows": [1]}
    plain = EdgeFeed()  # (a store with no writer to ask answers as ever)
    assert decode(plain.catch_up(lazy, "json", None))[0]["seq"] == 0
