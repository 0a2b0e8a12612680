"""A delta is never much longer than what it changes (issue #34.6: a release's public standings
delta was 70-160 KB against a 37 KB document at 60 tables, sent to every phone and overlay).

Two rules keep it so: ``hub.wire.patch.diff`` replaces a row whole when that is shorter than
its fields' operations (a ranking whose rows slid: another team at each place), and the feed
(``IngestFeed.publish``) sends a large delta's document whole when that is shorter. Here: the
rules keep every patch exact (a client applying the frames in order ends with the engine's
document), and a played session's release frames are no longer than the document.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hub.engine.core import Engine
from hub.engine.simulate import simulate_session
from hub.serve.feed import IngestFeed, snapshot_payload
from hub.wire.codec import from_json
from hub.wire.patch import apply_patch, diff
from hub.wire.topics import LIVE, PUBLIC
from tests.factories import make_config, make_decks

_VALUE = st.one_of(st.integers(-5, 5), st.text("ab", max_size=3), st.booleans())
_ROW = st.dictionaries(st.sampled_from("abcdefgh"), _VALUE, min_size=1, max_size=8)


def _field_ops(old: dict[str, Any], new: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """What a row's edit is field by field (each operation with its full path)."""
    ops: list[dict[str, Any]] = [
        {"op": "add" if k not in old else "replace", "path": f"{path}/{k}", "value": v}
        for k, v in new.items()
        if k not in old or old[k] != v
    ]
    return ops + [{"op": "remove", "path": f"{path}/{k}"} for k in old if k not in new]


@settings(max_examples=300, deadline=None)
@given(st.lists(_ROW, min_size=1, max_size=8), st.data())
def test_a_diff_of_rows_turns_the_old_into_the_new(rows: list[dict[str, Any]], data: Any) -> None:
    """Rows re-ranked, some fields changed, some added or removed: exact either way."""
    old = {"ranking": {"rows": rows}, "n": len(rows)}
    order = data.draw(st.permutations(range(len(rows))))
    new_rows = [copy.deepcopy(rows[i]) for i in order]
    for row in new_rows:
        edits = data.draw(st.dictionaries(st.sampled_from("abcdefgh"), _VALUE, max_size=4))
        row.update(edits)
        if data.draw(st.booleans()) and len(row) > 1:
            row.pop(next(iter(row)))
    new = {"ranking": {"rows": new_rows}, "n": len(new_rows)}
    ops = diff(old, new)
    assert apply_patch(copy.deepcopy(old), ops) == new
    for op in ops:  # a row replaced whole is shorter than its field operations would be
        if op["op"] == "replace" and op["path"].count("/") == 3:
            i = int(op["path"].rsplit("/", 1)[1])
            fields = _field_ops(old["ranking"]["rows"][i], new_rows[i], op["path"])
            assert len(fields) > 1
            assert len(json.dumps(op["value"])) < sum(len(json.dumps(f)) for f in fields)


def test_every_row_moved_is_one_operation() -> None:
    old = {"rows": [{"team": f"T{i}", "rank": i + 1, "points": 10 - i} for i in range(4)]}
    new = {"rows": [{"team": f"T{i}", "rank": 4 - i, "points": 20 + i} for i in reversed(range(4))]}
    ops = diff(old, new)
    assert [op["path"] for op in ops] == ["/rows/0", "/rows/1", "/rows/2", "/rows/3"]
    assert apply_patch(copy.deepcopy(old), ops) == new
    # one field of a row: that field only
    one = copy.deepcopy(old)
    one["rows"][2]["points"] = 99
    assert diff(old, one) == [{"op": "replace", "path": "/rows/2/points", "value": 99}]


def test_a_session_s_standings_frames_follow_the_document_and_stay_short() -> None:
    """18 tables in 3 groups play 3 deals through the ingest's feed: the public and live
    standings' frames, applied in order by a client, end equal to the engine's documents;
    no public standings frame at a release is longer than the document it moves."""
    config = make_config(seats=6, groups=3, deals=3, tid="t-delta-size")
    decks = make_decks(config)
    events = list(simulate_session(config, decks, random.Random(3), mean_gap=1.0))
    engine = Engine(config, decks, release_delay=0)
    engine.start_feed()
    feed = IngestFeed()
    keys = [(PUBLIC, "standings"), (LIVE, "standings")]
    client: dict[Any, Any] = {}
    for key in keys:
        payload = engine.projecting.materialize(key)
        assert payload is not None
        client[key] = copy.deepcopy(payload)
    public_frames: list[tuple[int, int, bool]] = []  # (frame bytes, document bytes, whole)
    for event in events:
        ts = float(event.get("ts", 0.0))
        assert engine.submit(event, ts).ok
        engine.tick(ts)
        for change in engine.projecting.flush():
            frame = feed.publish(change)
            if frame is None or change.key not in client:
                continue
            message = from_json(frame.outs["json"].payload)
            if frame.full:
                client[change.key] = snapshot_payload(frame)
            else:
                apply_patch(client[change.key], message["patch"], in_place=True)
            assert client[change.key] == change.payload
            if change.key == (PUBLIC, "standings"):
                size = len(frame.outs["json"].payload)
                document = len(json.dumps(change.payload, separators=(",", ":")))
                public_frames.append((size, document, frame.full))
    assert all(engine.release.deal_released(d) for d in range(1, 4))
    for key in keys:
        assert client[key] == engine.payload(key)
    assert public_frames
    for size, document, _whole in public_frames:
        assert size <= document + 200, (size, document)
