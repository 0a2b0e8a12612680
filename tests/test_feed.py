"""TopicStore: diffs, seqs, history, gaps, and the feed/snapshot wire formats."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.bus.memory import MemoryBus
from hub.codec import CodecError, pack
from hub.feed import (
    TopicStore,
    Update,
    decode_update,
    encode_snapshot,
    encode_update,
    load_snapshots,
    snapshot_field,
    snapshots_key,
)

KEY = ("public", "standings")


def test_first_put_is_full_then_top_level_deltas() -> None:
    store = TopicStore()
    first = store.put(KEY, {"a": 1, "b": {"x": [1, 2]}, "c": "keep"})
    assert first == Update(
        "public", "standings", 1, {"a": 1, "b": {"x": [1, 2]}, "c": "keep"}, (), True
    )
    second = store.put(KEY, {"a": 2, "b": {"x": [1, 2]}, "c": "keep"})
    assert second is not None
    assert (second.seq, second.data, second.removed, second.full) == (2, {"a": 2}, (), False)
    third = store.put(KEY, {"a": 2, "b": {"x": [1, 3]}})
    assert third is not None
    assert (third.seq, third.data, third.removed) == (3, {"b": {"x": [1, 3]}}, ("c",))
    assert store.put(KEY, {"a": 2, "b": {"x": [1, 3]}}) is None
    assert store.snapshot(KEY) == (3, {"a": 2, "b": {"x": [1, 3]}})


def test_unknown_topic_snapshot_is_empty() -> None:
    store = TopicStore()
    assert store.snapshot(("live", "table:1")) == (0, {})
    assert store.since(("live", "table:1"), 0) == []
    assert store.since(("live", "table:1"), 3) is None


def test_since_covers_history_only() -> None:
    store = TopicStore(history=4)
    for i in range(10):
        store.put(KEY, {"n": i})
    assert store.seq(KEY) == 10
    assert store.since(KEY, 10) == []
    assert [u.seq for u in store.since(KEY, 6) or []] == [7, 8, 9, 10]
    assert store.since(KEY, 5) is None  # 6 fell out of the history
    assert store.since(KEY, 11) is None  # from the future: snapshot
    assert store.since(KEY, -1) is None


def test_seed_continues_seqs_after_restart() -> None:
    store = TopicStore()
    seeded = store.seed(KEY, 41, {"a": 1})
    assert seeded.full and seeded.seq == 41
    update = store.put(KEY, {"a": 2})
    assert update is not None and (update.seq, update.data, update.full) == (42, {"a": 2}, False)
    assert [u.seq for u in store.since(KEY, 41) or []] == [42]
    # A resume from before the seed gets the seeded state as a full update (a snapshot).
    assert [(u.seq, u.full) for u in store.since(KEY, 40) or []] == [(41, True), (42, False)]
    assert store.since(KEY, 39) is None
    with pytest.raises(ValueError):
        store.seed(KEY, -1, {})


def test_apply_detects_gaps_and_ignores_old_updates() -> None:
    store = TopicStore()
    assert store.apply(Update("public", "standings", 1, {"a": 1}, (), True))
    assert store.apply(Update("public", "standings", 2, {"b": 2}, (), False))
    assert not store.apply(Update("public", "standings", 4, {"c": 3}, (), False))
    assert store.snapshot(KEY) == (2, {"a": 1, "b": 2})  # the gap changed nothing
    assert store.apply(Update("public", "standings", 2, {"b": 99}, (), False))  # old: ignored
    assert store.snapshot(KEY) == (2, {"a": 1, "b": 2})
    assert store.apply(Update("public", "standings", 3, {}, ("a",), False))
    assert store.snapshot(KEY) == (3, {"b": 2})
    assert store.apply(Update("public", "standings", 9, {"z": 0}, (), True))  # full heals
    assert store.snapshot(KEY) == (9, {"z": 0})


payloads = st.lists(
    st.dictionaries(
        st.sampled_from(["a", "b", "c", "d", "e"]),
        st.one_of(st.integers(0, 3), st.lists(st.integers(0, 2), max_size=2)),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(payloads, st.integers(0, 30))
def test_replica_applying_deltas_tracks_source(
    sequence: list[dict[str, Any]], resume_at: int
) -> None:
    source, replica = TopicStore(history=8), TopicStore()
    states: dict[int, dict[str, Any]] = {0: {}}  # seq -> payload at that seq
    for payload in sequence:
        update = source.put(KEY, payload)
        if update is not None:
            # Through the wire format, as edges receive them.
            assert replica.apply(decode_update(encode_update(update)))
            states[update.seq] = payload
        assert replica.snapshot(KEY) == source.snapshot(KEY) == (source.seq(KEY), payload)
    final = source.seq(KEY)
    assert sorted(states) == list(range(final + 1))
    # A client resuming at any seq either gets exactly the missed deltas or must reload.
    missed = source.since(KEY, resume_at)
    if resume_at > final:
        assert missed is None
    if missed is not None:
        assert [u.seq for u in missed] == list(range(resume_at + 1, final + 1))
        state = dict(states[resume_at])
        for u in missed:
            state = dict(u.data) if u.full else {**state, **u.data}
            for name in u.removed:
                del state[name]
        assert state == states[final]
    elif resume_at <= final:
        assert final - resume_at >= 8  # only beyond the history


def test_decode_update_refuses_garbage() -> None:
    for data in (
        b"\xc1",
        pack([1, 2]),
        pack({"audience": "public"}),
        pack({"audience": "public", "topic": "x", "seq": "1", "data": {}}),
    ):
        with pytest.raises(CodecError):
            decode_update(data)


async def test_load_snapshots_from_the_bus_hash() -> None:
    bus = MemoryBus()
    await bus.hset(snapshots_key("t1"), snapshot_field(KEY), encode_snapshot(7, {"a": 1}))
    await bus.hset(snapshots_key("t1"), snapshot_field(("live", "table:2")), encode_snapshot(3, {}))
    await bus.hset(snapshots_key("t1"), "garbage", b"x")
    await bus.hset(snapshots_key("t1"), "public|deal:1", b"\xc1")
    assert await load_snapshots(bus, "t1") == {KEY: (7, {"a": 1}), ("live", "table:2"): (3, {})}
    assert await load_snapshots(bus, "other") == {}
