"""What an edge holds per topic stays what it can still send (issue #31: an edge's memory after
a played session).

An edge keeps, per topic, a snapshot and the deltas after it; a subscriber's fresh snapshot
(``EdgeFeed._base``) moves the snapshot to the head, and the deltas before it were then kept
for nothing but the last ``CATCH_UP_DELTAS`` (what a resume may be sent). ``EdgeFeed._trim``
drops them: every answer stays the same (a store that trims nothing answers alike), and after a
played session no topic holds more than its deltas after the snapshot and the last few.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hub.engine.core import Engine
from hub.engine.simulate import simulate_session
from hub.serve.edge_feed import EdgeFeed
from hub.serve.feed import CATCH_UP_DELTAS, HISTORY, Frame, IngestFeed, _Log
from hub.wire.patch import TopicChange
from hub.wire.topics import TopicKey
from tests.factories import make_config, make_decks

KEY = ("live", "table:1")


class Untrimmed(EdgeFeed):
    """An edge's store as before the trim: every delta up to ``HISTORY``."""

    @staticmethod
    def _trim(log: _Log) -> None:
        return None


def answers(edge: EdgeFeed, key: TopicKey) -> list[Any]:
    """Everything a client may be sent of ``key``: a subscribe, every resume, a REST read."""
    seq = edge.seq(key)
    out: list[Any] = [edge.snapshot(key)]
    for fmt in ("json", "msgpack"):
        # (an older resume is answered as these: more missed than a resume is sent)
        for resume in [None, 0, 1, seq // 2, *range(max(-1, seq - CATCH_UP_DELTAS - 3), seq + 3)]:
            out.append([(o.seq, o.payload) for o in edge.catch_up(key, fmt, resume)])
    return out


def held(edge: EdgeFeed, key: TopicKey) -> int:
    log = edge._logs[key]
    return len(log.deltas)


def bound(edge: EdgeFeed, key: TopicKey) -> int:
    """The deltas an edge needs of ``key``: those after its snapshot, and the last few."""
    log = edge._logs[key]
    assert log.base is not None
    return max(log.seq - log.base.seq, CATCH_UP_DELTAS)


_STEP = st.one_of(
    st.tuples(st.just("delta"), st.integers(1, 40)),  # that many deltas
    st.tuples(st.just("whole"), st.just(0)),  # a delta sent whole (a snapshot frame)
    st.tuples(st.just("subscribe"), st.just(0)),  # a new subscriber (a fresh snapshot)
    st.tuples(st.just("hash"), st.integers(0, 12)),  # the hash's snapshot, that many behind
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_STEP, min_size=1, max_size=25))
def test_a_trimmed_edge_answers_as_one_that_keeps_every_delta(steps: list[Any]) -> None:
    """Deltas, whole frames, subscribers and the hash's snapshots in any order: after each,
    every subscribe, resume and REST read is answered alike by both stores, and the trimmed
    one holds no delta it could not send."""
    ingest = IngestFeed()
    trimmed, untrimmed = EdgeFeed(), Untrimmed()
    rows: list[int] = []
    sent: list[Frame] = []  # (the ingest's frames, for the hash's older snapshots)
    first = ingest.publish(TopicChange(KEY, None, {"rows": []}))
    assert first is not None
    for edge in (trimmed, untrimmed):
        assert edge.apply(KEY, first)
    for kind, n in steps:
        if kind == "delta" or kind == "whole":
            for _ in range(max(n, 1)):
                rows.append(len(rows))
                patch = [{"op": "add", "path": "/rows/-", "value": rows[-1]}]
                frame = ingest.publish(TopicChange(KEY, patch, {"rows": list(rows)}))
                assert frame is not None
                if kind == "whole":  # as IngestFeed sends a large delta shorter whole
                    frame = Frame.snapshot(KEY[1], frame.seq, {"rows": list(rows)})
                sent.append(frame)
                for edge in (trimmed, untrimmed):
                    assert edge.apply(KEY, frame)
        elif kind == "subscribe":
            for edge in (trimmed, untrimmed):
                edge.catch_up(KEY, "json", None)
        else:
            seq = max(1, ingest.seq(KEY) - n)
            snapshot = Frame.snapshot(KEY[1], seq, {"rows": rows[: max(0, seq - 1)]})
            for edge in (trimmed, untrimmed):
                edge.seed(KEY, snapshot)
        assert answers(trimmed, KEY) == answers(untrimmed, KEY)
        assert held(trimmed, KEY) <= bound(trimmed, KEY)


def test_a_played_session_leaves_each_topic_its_deltas_after_the_snapshot_and_a_few() -> None:
    """18 tables play 3 deals through the ingest's feed; an edge applies every frame, and its
    subscribers come and go (a fresh snapshot of every topic every 40 events): at the end no
    topic holds more deltas than it can send, fewer than a store that trims nothing, and
    every answer is the same."""
    config = make_config(seats=6, groups=3, deals=3, tid="t-edge-held")
    decks = make_decks(config)
    events = list(simulate_session(config, decks, random.Random(5), mean_gap=1.0))
    engine = Engine(config, decks, release_delay=0)
    engine.start_feed()
    ingest = IngestFeed(engine.projecting.materialize)
    trimmed, untrimmed = EdgeFeed(), Untrimmed()
    for k, event in enumerate(events):
        ts = float(event.get("ts", 0.0))
        assert engine.submit(event, ts).ok
        engine.tick(ts)
        changes = engine.projecting.flush()
        out = [(c.key, ingest.publish(c)) for c in changes]
        for key, frame in out + ingest.take_made(c.key for c in changes):
            if frame is None:
                continue
            for edge in (trimmed, untrimmed):
                assert edge.apply(key, frame) is not False  # (no gap in process)
        if k % 40 == 39:
            for key in list(trimmed.keys()):
                for edge in (trimmed, untrimmed):
                    edge.catch_up(key, "json", None)
    kept = dropped = 0
    for key in trimmed.keys():
        assert held(trimmed, key) <= bound(trimmed, key), key
        assert held(trimmed, key) <= HISTORY
        assert answers(trimmed, key) == answers(untrimmed, key), key
        kept += held(trimmed, key)
        dropped += held(untrimmed, key) - held(trimmed, key)
    assert kept and dropped > kept  # (most of what was held could not be sent)
