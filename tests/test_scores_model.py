"""The scores mover (``hub.engine.families.scores.Scores``) moves the ``standings`` and
``seat`` topics group by group: after every event of a session of several groups (undo,
void, reopen, disputes, penalties, a roster fix, releases) every one of them, and every
other topic that moved, equals its builder's payload, in both audiences, in the engine and
at a client applying the deltas; a delta names the rows that moved, never a whole list; a
result in one group makes rows again for that group only."""

from __future__ import annotations

import random
from typing import Any

import pytest

from hub.engine.core import Engine
from hub.engine.families import topic_name
from hub.engine.families.scores import Scores
from hub.engine.simulate import simulate_session
from hub.wire.patch import Recorder
from hub.wire.topics import AUDIENCES
from tests.factories import make_config, make_decks
from tests.test_projections import Client

CONFIG = make_config(seats=3, groups=3, deals=3)
DECKS = make_decks(CONFIG)


def score_keys(engine: Engine) -> list[tuple[str, str]]:
    names = [topic_name("standings")] + [topic_name("seat", s) for s in (1, 2, 3)]
    return [(a, n) for a in AUDIENCES for n in names]


def shallow(op: dict[str, Any]) -> bool:
    """An operation that replaces a whole list of rows (or more) of a standings or seat
    payload: ``/running/teams``, ``/like_for_like``, the root."""
    parts = op["path"].split("/")[1:]
    return not parts or (parts[0] in ("running", "like_for_like") and len(parts) < 3)


def client_changes(engine: Engine, client: Client) -> list[Any]:
    """The engine's changes, applied by the client as a browser would (through JSON)."""
    changes = engine.projecting.flush()
    client.apply(changes)
    return changes


def test_scores_move_by_the_rows_that_changed_after_every_event() -> None:
    rng = random.Random(5)
    events = list(simulate_session(CONFIG, DECKS, random.Random(3), mean_gap=1.0))
    engine = Engine(CONFIG, DECKS, release_delay=0.0)
    engine.start_feed()
    client = Client()
    client.subscribe_all(engine)
    keys = score_keys(engine)
    seen_ops = 0
    fixed = False
    for i, event in enumerate(events, 1):
        assert engine.submit(event, float(i)).ok
        if rng.random() < 0.03:  # the director penalises someone, in points or chips
            table = rng.choice(list(CONFIG.tables))
            command = {"op": "penalty", "table": table, "seat": rng.randint(1, 3), "by": "TD"}
            command |= rng.choice([{"chips": 100}, {"points": 1}])
            assert engine.control({**command, "reason": "r"}, float(i)).ok
        if not fixed and i > len(events) // 2:  # a name fixed in the middle of it
            command = {"op": "roster", "team": "T10", "seat": 1, "name": "A. Fixed"}
            assert engine.control({**command, "by": "TD", "reason": "spelling"}, float(i)).ok
            fixed = True
        engine.tick(float(i))  # releases (delay 0), as the ingest's ticker does
        changed = []
        for change in client_changes(engine, client):
            changed.append(change.key)
            if change.key in keys and change.patch is not None:
                assert not [op for op in change.patch if shallow(op)], change.key
                seen_ops += len(change.patch)
            if change.patch is not None:  # a group released joins the rows by its own
                assert not [op for op in change.patch if op["path"] in ("/rows", "/tables")]
        # (and whatever else moved: the public travellers a release grows in the middle)
        for key in dict.fromkeys([*keys, *changed]):
            built = engine.payload(key)
            assert engine.projecting.projections.docs[key].doc == built, (i, key)
            assert client.states[key] == built, (i, key)
    assert seen_ops > 100
    assert "A. Fixed" in str(engine.payload(("public", "seat:1")))


def test_a_result_makes_rows_again_for_its_group_only() -> None:
    events = list(simulate_session(CONFIG, DECKS, random.Random(3), mean_gap=1.0))
    engine = Engine(CONFIG, DECKS, release_delay=0.0)
    engine.start_feed()
    engine.projecting.materialize(("live", "standings"))
    model = engine.projecting.projections.movers["standings"]
    assert isinstance(model, Scores)
    rows = model._rows["live"].teams
    group_of = {t: g for g, grp in CONFIG.groups.items() for t in grp.tables}
    made: set[str] = set()
    wins = 0
    for i, event in enumerate(events, 1):
        win = event["type"] == "win"
        if win:  # what came before it, flushed first
            engine.projecting.flush()
        before = dict(rows)
        engine.submit(event, float(i))
        engine.projecting.flush()
        moved = {g for (view, g), now in rows.items() if before.get((view, g)) is not now}
        made |= moved
        if win:  # (a win the hand's cards deny is disputed: nothing counted yet)
            assert moved <= {group_of[event["table"]]}, (i, moved)
            wins += bool(moved)
    assert made == set(CONFIG.groups) and wins > 10


def test_a_settled_hand_names_its_groups_rows_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The standings and seat deltas of a settled hand name rows of its own group (the doc's
    rows at the paths say so), each a row or a field of one, and no document is made again
    and diffed whole (``Recorder.replace_with``: only a roster fix or a new board does)."""
    whole: list[Any] = []
    replace_with = Recorder.replace_with
    monkeypatch.setattr(
        Recorder, "replace_with", lambda rec, new: (whole.append(rec), replace_with(rec, new))
    )
    events = list(simulate_session(CONFIG, DECKS, random.Random(4), mean_gap=1.0))
    engine = Engine(CONFIG, DECKS, release_delay=0.0)
    engine.start_feed()
    client = Client()
    client.subscribe_all(engine)
    group_of = {t: g for g, grp in CONFIG.groups.items() for t in grp.tables}
    named = 0
    for i, event in enumerate(events, 1):
        if event["type"] == "win":
            client_changes(engine, client)  # what came before it
        assert engine.submit(event, float(i)).ok
        changes = client_changes(engine, client)
        if event["type"] != "win":
            continue
        for change in changes:
            if change.key[0] != "live" or change.patch is None:
                continue
            name = change.key[1].split(":")[0]
            if name not in ("standings", "seat"):
                continue
            doc = engine.projecting.projections.docs[change.key].doc
            for op in change.patch:
                parts = op["path"].split("/")[1:]
                if parts[0] == "deals":
                    continue
                view, kind, index = parts[0], parts[1], int(parts[2])
                assert len(parts) >= 3 and op["op"] == "replace", op
                assert doc[view][kind][index]["group"] == group_of[event["table"]], op
                named += 1
    assert named > 20
    scores = {id(engine.projecting.projections.docs[key]) for key in score_keys(engine)}
    assert not [rec for rec in whole if id(rec) in scores]
