"""Projections: the patches the engine hands the feed rebuild exactly the payloads its builders
make, after every event; one action moves the live table and travellers by one row; JSON Patch
diff and apply agree on any JSON."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.domain.config import parse_config
from hub.engine.core import Engine
from hub.engine.simulate import simulate_session
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.wire.patch import Recorder, apply_patch, clone, diff
from hub.wire.topics import LIVE
from tests.factories import config_data, make_config, make_decks
from tests.test_archive import GAMES, SAMPLES, faulty_session, load_game
from tests.test_engine_properties import CONFIG, DECKS, run


class Client:
    """Follows every topic as a browser would: snapshot, then patches."""

    def __init__(self) -> None:
        self.states: dict[tuple[str, str], Any] = {}

    def subscribe_all(self, engine: Engine) -> None:
        """What subscribing to every topic does: the engine builds each, the client holds it."""
        for key in engine.topic_keys():
            payload = engine.projecting.materialize(key)
            assert payload is not None, key
            self.states[key] = clone(payload)

    def take(self, engine: Engine) -> list[tuple[str, str]]:
        """Apply what changed; the keys that did."""
        return self.apply(engine.projecting.flush())

    def apply(self, changes: list[Any]) -> list[tuple[str, str]]:
        """Apply these changes (a flush's); their keys."""
        keys = []
        for change in changes:
            keys.append(change.key)
            if change.patch is None:
                self.states[change.key] = clone(change.payload)
            else:
                # Through JSON, as on the wire: nothing is shared with the engine's documents.
                # In place, as the edge applies them (hub.serve.edge_feed): each state is the
                # client's own (a copy of it for every patch: ~5 % of the staged event's case).
                patch = json.loads(json.dumps(change.patch))
                self.states[change.key] = apply_patch(self.states[change.key], patch, in_place=True)
        return keys


def assert_projected(engine: Engine, client: Client, keys: Any = None) -> None:
    for key in engine.topic_keys() if keys is None else keys:
        built = engine.payload(key)
        assert engine.projecting.projections.docs[key].doc == built, key
        assert client.states[key] == built, key


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_patches_rebuild_every_payload_after_every_event(seed: int, noise: bool) -> None:
    """After every event the topics that changed are checked; every topic every 20 events."""
    client = Client()
    checked = 0

    def check(engine: Engine) -> None:
        nonlocal checked
        if not engine.projecting.projections.active:
            engine.start_feed()
            client.subscribe_all(engine)
        engine.tick(float(checked))  # releases (delay 0 here), as the ingest's ticker does
        changed = client.take(engine)
        assert_projected(engine, client, None if checked % 20 == 0 else changed)
        checked += 1

    engine, _ = run(seed, corrections_noise=noise, after_each=check)
    engine.tick(float("inf"))
    client.take(engine)
    assert_projected(engine, client)
    assert checked > 10


def test_every_payload_and_patch_takes_the_feeds_fast_json_path() -> None:
    """orjson refuses a dict key that is a str subclass (a ``Street``); the feed then encodes
    the whole message with the stdlib's encoder instead, ~4x slower (issue #21's inline-feed
    regression: every compare message took that path)."""
    encoded = 0

    def check(engine: Engine) -> None:
        nonlocal encoded
        if not engine.projecting.projections.active:
            engine.start_feed()
            for key in engine.topic_keys():
                orjson.dumps(engine.projecting.materialize(key))
        for change in engine.projecting.flush():
            orjson.dumps(change.payload if change.patch is None else change.patch)
            encoded += 1

    run(3, corrections_noise=True, after_each=check)
    assert encoded > 100


def test_one_action_is_one_row_in_the_table_and_travellers() -> None:
    config = make_config(seats=6, deals=4)
    decks = make_decks(config)
    engine = Engine(config, decks)
    events = list(simulate_session(config, decks, random.Random(7)))
    engine.start_feed()
    Client().subscribe_all(engine)
    engine.projecting.flush()
    now = 0.0
    seen = 0
    for event in events[:400]:
        now += 1
        out = engine.submit(event, now)
        assert out.ok
        changes = {c.key: c for c in engine.projecting.flush()}
        if event["type"] not in ("fold", "check", "call", "bet", "raise"):
            continue
        if engine.state.hand(event["table"], event.get("deal") or 0) is None:
            pass
        hand = engine.state.tables[event["table"]].current
        if hand is None:  # the action ended the hand: a settle, rebuilt (rarer)
            continue
        seen += 1
        table_patch = changes[("live", f"table:{event['table']}")].patch
        assert table_patch is not None
        appended = [op for op in table_patch if op["op"] == "add"]
        assert [op["path"] for op in appended] == ["/actions/-"]
        compare = changes[("live", f"compare:{hand.deal}:1")]
        assert compare.patch is not None
        adds = [op for op in compare.patch if op["op"] == "add"]
        assert len(adds) == 1 and adds[0]["path"].endswith("/actions/-")
        assert adds[0]["value"]["seat"] == event["seat"]
        # The delta is the change, not the document. An action that closes a street also
        # brings the street's card(s) and that row's equity and outs at the new street.
        dealt = any(op["path"] == "/board" for op in compare.patch)
        share = 2 if dealt else 4
        assert len(json.dumps(compare.patch)) < len(json.dumps(compare.payload)) / share
    assert seen > 50


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(alphabet="ab/~", max_size=3),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text("ab/~", max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(JSON, JSON)
def test_diff_then_apply_gives_the_new_document(old: Any, new: Any) -> None:
    patch = diff(old, new)
    assert apply_patch(old, patch) == new
    assert apply_patch(old, json.loads(json.dumps(patch))) == new
    if old == new:
        assert patch == []


def test_replacing_a_payload_by_itself_keeps_it() -> None:
    """A rebuilt payload can be the very object the recorder holds: the engine memoizes the
    standings until its state changes, so a standings topic marked stale with nothing changed
    rebuilds to the same dict. Clearing the doc then wiped that dict, and with it the memo the
    seat topics are cut from (a KeyError in the projector's publish, seen once in a full run)."""
    doc = {"scoring": {"points": [6, 5]}, "rows": [1, 2]}
    rec = Recorder(doc)
    rec.replace_with(doc)
    assert doc == {"scoring": {"points": [6, 5]}, "rows": [1, 2]} and rec.ops == []


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text("ab", max_size=2), JSON, max_size=4), st.data())
def test_recorded_edits_replay_on_a_copy(doc: dict[str, Any], data: st.DataObject) -> None:
    """Edits recorded between two takes of the operations (a flush) replay on a copy; the
    operations are taken (encoded) before the next edits, as the feed does."""
    copy = clone(doc)
    rec = Recorder(doc)

    def take() -> None:
        nonlocal copy
        copy = apply_patch(copy, json.loads(json.dumps(rec.ops)))
        rec.ops = []
        assert copy == rec.doc

    rec.set(("x",), data.draw(JSON))
    rec.set(("rows",), [])
    take()
    rec.append(("rows",), {"i": 0})
    rec.append(("rows",), {"i": 1})
    take()
    rec.set(("rows", 0, "i"), 5)
    rec.remove(("rows", 0, "i"))
    rec.replace_at(("rows", 1), {"i": 2, "j": [1]})
    rec.replace_with({**clone(rec.doc), "y": data.draw(JSON)})
    take()


_FIELDS = st.dictionaries(st.sampled_from(["a", "b", "c", "d/e"]), JSON, max_size=4)


@settings(max_examples=200, deadline=None)
@given(st.lists(_FIELDS, min_size=1, max_size=4), st.data())
def test_update_is_a_set_of_each_field(rows: list[dict[str, Any]], data: st.DataObject) -> None:
    """``update`` and ``update_each`` (the movers' hot path) edit and record exactly what a
    ``set`` of each field in turn would: the same document, the same operations (an equal
    value, ``1`` and ``True`` alike, moves nothing; a new member is an ``add``)."""
    doc = {"seats": clone(rows), "top": data.draw(_FIELDS)}
    new = [data.draw(_FIELDS) for _ in rows]
    top = data.draw(_FIELDS)
    fast, slow = Recorder(clone(doc)), Recorder(clone(doc))
    fast.update(("top",), top)
    fast.update_each(("seats",), new)
    for key, value in top.items():
        slow.set(("top", key), value)
    for i, fields in enumerate(new):
        for key, value in fields.items():
            slow.set(("seats", i, key), value)
    assert fast.doc == slow.doc and fast.ops == slow.ops
    assert apply_patch(doc, json.loads(json.dumps(fast.ops))) == fast.doc


_KEYS = ("a", "b", "c", "d/e")


@settings(max_examples=200, deadline=None)
@given(st.lists(_FIELDS, min_size=1, max_size=4), st.data())
def test_update_values_is_update_of_their_fields(
    rows: list[dict[str, Any]], data: st.DataObject
) -> None:
    """``update_values`` and ``update_rows`` (a table's and a console's seats after an action:
    the rows that did not move passed over whole) edit and record exactly what ``update`` of
    the same fields does, a map that lacks some of them included."""
    doc = {"seats": clone(rows), "top": data.draw(_FIELDS)}
    values = st.tuples(*(JSON for _ in _KEYS))
    new = [data.draw(values) for _ in rows]
    top = data.draw(values)
    if data.draw(st.booleans()):  # (rows that did not move)
        new = [tuple(row.get(k, 0) for k in _KEYS) for row in rows]
    fast, slow = Recorder(clone(doc)), Recorder(clone(doc))
    fast.update_values(("top",), _KEYS, top)
    fast.update_rows(("seats",), _KEYS, new)
    slow.update(("top",), dict(zip(_KEYS, top, strict=True)))
    slow.update_each(("seats",), [dict(zip(_KEYS, v, strict=True)) for v in new])
    assert fast.doc == slow.doc and fast.ops == slow.ops
    assert apply_patch(doc, json.loads(json.dumps(fast.ops))) == fast.doc


def test_public_ticker_ids_count_only_what_the_public_saw() -> None:
    """Issue #9.7: one ticker per audience. Public ids have no gaps that hint at hidden items,
    and live-only items never push released items out of the public list."""
    config = make_config(seats=3, deals=3)
    decks = make_decks(config)
    engine = Engine(config, decks, release_delay=0)
    now = 0.0
    for event in simulate_session(config, decks, random.Random(3)):
        now += 1
        assert engine.submit(event, now).ok
        engine.tick(now)
        public = engine.payload(("public", "ticker"))
        live = engine.payload(("live", "ticker"))
        assert public is not None and live is not None
        ids = [item["id"] for item in public["items"]]
        assert ids == list(range(len(ids), 0, -1)) or ids == list(
            range(ids[0], ids[0] - len(ids), -1)
        )
        released = {d for d in range(1, config.deals + 1) if engine.release.deal_released(d)}
        assert {item["deal"] for item in public["items"]} <= released
    assert len(engine.payload(("live", "ticker"))["items"]) > 0  # type: ignore[index]


def test_config_is_the_property_session() -> None:
    assert CONFIG.seats == 3 and DECKS


def test_a_ticker_delta_is_its_new_items() -> None:
    old = {"items": [{"id": i} for i in range(30, 0, -1)]}
    new = {"items": [{"id": i} for i in range(32, 2, -1)]}  # two new in front, two gone
    patch = diff(old, new)
    assert patch == [
        {"op": "remove", "path": "/items/29"},
        {"op": "remove", "path": "/items/28"},
        {"op": "add", "path": "/items/0", "value": {"id": 32}},
        {"op": "add", "path": "/items/1", "value": {"id": 31}},
    ]
    assert apply_patch(old, patch) == new


def test_a_window_delta_drops_the_oldest_and_appends_the_new() -> None:
    """The operator's last 50 corrections: two new ones are two removes and two appends, not
    every row of the window replaced."""
    old = {"corrections": [{"id": i, "at": i} for i in range(50)]}
    new = {"corrections": [{"id": i, "at": i} for i in range(2, 52)]}
    patch = diff(old, new)
    assert patch == [
        {"op": "remove", "path": "/corrections/0"},
        {"op": "remove", "path": "/corrections/0"},
        {"op": "add", "path": "/corrections/-", "value": {"id": 50, "at": 50}},
        {"op": "add", "path": "/corrections/-", "value": {"id": 51, "at": 51}},
    ]
    assert apply_patch(old, patch) == new


def test_a_release_after_its_delay_moves_every_payload_that_shows_it() -> None:
    """With a release delay the release comes on a later tick, apart from any hand event:
    the live deal's released list, the public deal, travellers, standings, tables and ticker
    all follow (every document equal to its builder's payload)."""
    config = make_config(seats=3, deals=3)
    decks = make_decks(config)
    engine = Engine(config, decks, release_delay=30.0)
    engine.start_feed()
    client = Client()
    client.subscribe_all(engine)
    now = 0.0
    for event in simulate_session(config, decks, random.Random(5)):
        now += 1.0
        assert engine.submit(event, now).ok
        client.take(engine)
    for _ in range(3):
        now += 31.0
        engine.tick(now)
        for key in engine.topic_keys():  # what a client subscribing now would get
            if key not in client.states and engine.projecting.materialize(key) is not None:
                client.states[key] = clone(engine.payload(key))
        client.take(engine)
        assert_projected(engine, client)
    assert all(engine.release.deal_released(d) for d in range(1, config.deals + 1))


# -- the families moved in place by a model (``Feed.mover``): each held to its builder --------

MOVED = (
    "projection",
    "ops",
    "console",
    "deal",
    "compare",
    "table",
    "ticker",
    "standings",
    "seat",
    "released",
)


def moved_keys(engine: Engine) -> list[Any]:
    """The topics that exist now of the families a mover keeps (a public deal's and its
    travellers' once the deal is released)."""
    return [key for key in engine.topic_keys() if key[1].split(":")[0] in MOVED]


def assert_moved(engine: Engine, client: Client, keys: Any = None) -> int:
    """Every topic of the families a mover keeps (of ``keys``) equals its builder's payload,
    in the engine and in the client that applied the deltas; how many topics were checked."""
    checked = 0
    for key in engine.topic_keys() if keys is None else keys:
        if key[1].split(":")[0] not in MOVED:
            continue
        built = engine.payload(key)
        doc = engine.projecting.projections.docs[key].doc
        if key[1] == "ops":  # (the time of the last event it shows: a seq gap is not one)
            assert doc["at"] <= built["at"]
            built = {**built, "at": doc["at"]}
        assert doc == built, key
        assert client.states[key] == built, key
        checked += 1
    return checked


# The session of ``run`` in each scoring format: a traveller row's ``points`` (IMPs, chips)
# move with every table of its group on the deal.
FORMATS = {
    name: parse_config({**config_data(seats=3, deals=3), "scoring": {"format": name}}, "<t>")
    for name in ("imp", "chips")
}
FORMATS["ifp-points"] = CONFIG


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.booleans(), st.sampled_from(sorted(FORMATS)))
def test_moved_families_equal_their_builders_after_every_event(
    seed: int, noise: bool, scoring: str
) -> None:
    """Bots play (with undo, reopen, void, confirm, exposed cards, the operator's voids and
    penalties mixed in), in each scoring format: after every event the projection, the desk,
    every console state and every deal and traveller (live, and the public's once released)
    are their builders' payloads."""
    client = Client()
    steps = 0

    def check(engine: Engine) -> None:
        nonlocal steps
        if not engine.projecting.projections.active:
            engine.start_feed()
            client.subscribe_all(engine)
        engine.tick(float(steps))
        client.take(engine)
        config = engine.state.config
        assert assert_moved(engine, client) == len(moved_keys(engine))
        assert len(moved_keys(engine)) >= 2 + len(config.tables) + config.deals * (1 + 3)
        steps += 1

    run(seed, corrections_noise=noise, after_each=check, config=FORMATS[scoring])
    assert steps > 10


def _roster_fix(config: Any, rng: random.Random) -> dict[str, Any]:
    team = rng.choice(sorted(config.teams))
    if rng.random() < 0.5:
        return {"op": "roster", "team": team, "by": "TD", "team_name": f"T{rng.randrange(99)}"}
    return {"op": "roster", "team": team, "by": "TD", "colour": "#12AB34"}


@pytest.mark.timeout(600)  # the staged event: 131 s alone at load 17 (the default is 180 s)
@pytest.mark.parametrize("game", ["holdem", *sorted(GAMES)])
def test_moved_families_follow_every_game_and_every_fault(game: str) -> None:
    """Each sample session (hold'em, a staged event, piecepack, mahjong, RPS) with refusals,
    resends, gaps, dealer errors, the operator's voids, penalties, withdrawals, confirmations
    and takes, roster fixes, consoles' links going up and down, and releases: after every
    step, the projection, the desk and the console states, deals and travellers that changed
    (both audiences) are their builders' payloads, and every one of them every 25 steps."""
    if game == "holdem":
        config = load_config(SAMPLES / "ifp6.toml")
        decks = load_decks(config, SAMPLES, dict(os.environ))
        lines = (SAMPLES / "ifp6-session.jsonl").read_text().splitlines()
        events = [json.loads(line) for line in lines if line]
    else:
        config, decks, events = load_game(game)
    rng = random.Random(game)
    faults = faulty_session(config, events, rng)
    engine = Engine(config, decks, release_delay=5.0)
    engine.start_feed()
    client = Client()
    client.subscribe_all(engine)
    consoles = sorted({e["console"] for e in events})
    kinds: set[str] = set()
    every = [(LIVE, "projection"), (LIVE, "ops")]
    for n, step in enumerate(faults.steps):
        if step.command is not None:
            kinds.add(step.command["op"])
            engine.control(step.command, step.ts)
        else:
            assert step.event is not None
            engine.submit(step.event, step.ts)
        roll = rng.random()
        if roll < 0.01:
            engine.control(_roster_fix(config, rng), step.ts)
        elif roll < 0.03:
            engine.projecting.links({rng.choice(consoles): rng.random() < 0.5})
        engine.tick(step.ts)
        for key in engine.topic_keys():  # a deal's public topics, once it is released
            if key not in client.states and engine.projecting.materialize(key) is not None:
                client.states[key] = clone(engine.payload(key))
        changed = client.take(engine)
        if n % 25 == 0:
            assert assert_moved(engine, client) == len(moved_keys(engine))
        else:
            assert assert_moved(engine, client, {*every, *changed}) >= 2
    assert kinds  # (the operator came in)


def test_a_released_deal_corrected_moves_its_tables_public_rows_only() -> None:
    """A released deal reopened at one table, an action taken back, the hand played again
    and confirmed: after every step the public deal and travellers are their builders'
    payloads, and each of their deltas names that table's row (or a field of the whole
    traveller: a row's swing, the average, the board), never another row."""
    from tests.test_corrections import Console, engine_with

    engine = engine_with()
    engine.start_feed()
    client = Client()
    client.subscribe_all(engine)
    consoles = [Console(engine, t) for t in engine.state.config.tables]
    for c in consoles[1:]:
        c.ok("start", deal=1)
        c.fold_out()
    c1 = consoles[0]
    c1.ok("start", deal=1)
    c1.passive_to("showdown")
    c1.ok("win", seats=[1])  # disputed: deal 1 waits
    c1.ok("confirm", deal=1)
    assert engine.release.deal_released(1)
    client.take(engine)
    names = ["deal:1", *(f"compare:1:{s}" for s in range(1, engine.state.config.seats + 1))]
    public = [k for k in engine.topic_keys() if k[0] == "public" and k[1] in names]
    assert len(public) == 1 + engine.state.config.seats
    for key in public:
        assert engine.projecting.materialize(key) is not None
        client.states.setdefault(key, clone(engine.payload(key)))
    row = r"/(tables|rows)/0(/|$)|/rows/\d+/swing$|/(average|board|hole|released)$"
    steps = [("reopen", {"deal": 1}), ("undo", {}), ("bet", {"seat": 1, "amount": 100})]
    steps += [("fold", {"seat": 2}), ("fold", {"seat": 3}), ("confirm", {"deal": 1})]
    moved = 0
    for kind, fields in steps:
        c1.ok(kind, **fields)
        for change in engine.projecting.flush():
            key = change.key
            if key in client.states and change.patch is not None:  # (through JSON, as sent)
                patch = json.loads(json.dumps(change.patch))
                client.states[key] = apply_patch(client.states[key], patch)
            if key in public:
                assert change.patch is not None, key
                for op in change.patch:
                    assert re.match(row, op["path"]), (key, op["path"])
                moved += 1
        for key in public:
            assert engine.projecting.projections.docs[key].doc == engine.payload(key), key
            assert client.states[key] == engine.payload(key), key
    assert moved >= len(steps)


def test_topics_made_on_demand_are_made_when_asked_for_and_then_moved() -> None:
    """The live travellers, deal statistics, consoles and the suggestions (``Family.lazy``):
    no event makes one (an action touches six travellers; a desk follows one); one asked for
    is moved by events, equal to its builder's; an edge's request for every topic leaves out
    those nobody asked for; a writer restarting makes again those its predecessor made,
    whole."""
    config = dataclasses.replace(make_config(seats=6, deals=4), program_delay=2.0)
    decks = make_decks(config)
    events = list(simulate_session(config, decks, random.Random(7)))
    engine = Engine(config, decks)
    engine.start_feed()
    asked, program = ("live", "compare:2:3"), ("program", "compare:2:3")
    lazy = {("live", f"compare:{d}:{s}") for d in range(1, 5) for s in range(1, 7)}
    lazy |= {("live", f"dealstats:{d}") for d in range(1, 5)}
    lazy |= {("live", "suggestions"), ("public", "suggestions")}
    lazy |= {("live", f"console:{t}") for t in config.tables}
    lazy |= {("program", f"compare:{d}:{s}") for d in range(1, 5) for s in range(1, 7)}
    assert all(engine.on_demand(key) for key in lazy)
    assert not engine.on_demand(("public", "compare:2:3"))
    assert not engine.on_demand(("live", "deal:2"))
    doc: dict[str, Any] = {}
    made = 0
    for i, event in enumerate(events, 1):
        engine.submit(event, float(i))
        if i == 30:
            doc = clone(engine.projecting.materialize(asked) or {})
            assert engine.projecting.materialize(program) is not None
        for change in engine.projecting.flush():
            assert change.key not in lazy - {asked, program}, change.key  # made for nobody
            if change.key == asked:
                assert change.patch is not None
                doc = apply_patch(doc, clone(change.patch))
                made += 1
    assert made > 10 and doc == engine.payload(asked)
    named = set(engine.topics_named(None))
    assert {asked, program, ("public", "compare:2:3")} <= named
    assert not named & (lazy - {asked, program})
    restarted = Engine(config, decks)
    for i, event in enumerate(events, 1):
        restarted.submit(event, float(i))
    restarted.start_feed()
    restarted.hold([asked, program, ("live", "table:1")])
    changes = {c.key: c for c in restarted.projecting.flush()}
    assert changes[asked].patch is None and changes[asked].payload == engine.payload(asked)
    assert changes[program].patch is None
    assert ("live", "table:1") not in changes  # (not made on demand: made when an event moves it)
