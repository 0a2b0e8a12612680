"""The secure-delay program feed (issue #23 item 2): ``[broadcast] delay``, the delayed engine's
topics as the audience ``program``, held until the real engine releases their deal."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from hub.domain.config import ConfigError, TournamentConfig, parse_config
from hub.engine.core import Engine
from hub.engine.program import HOLD_REASON
from hub.engine.simulate import simulate_session
from hub.wire.patch import apply_patch, clone
from hub.wire.topics import LIVE, PROGRAM, PUBLIC, kind
from tests.factories import config_data, make_decks

DELAY = 30.0


def program_config(delay: Any = DELAY, **kwargs: Any) -> TournamentConfig:
    data = config_data(seats=3, deals=3, **kwargs)
    data["broadcast"] = {"delay": delay}
    return parse_config(data, "<test>")


CONFIG = program_config()
DECKS = make_decks(CONFIG)


def session(seed: int, config: TournamentConfig = CONFIG) -> list[dict[str, Any]]:
    """A whole session's console events, ``ts`` their arrival second (mean gap 4 s)."""
    return list(simulate_session(config, DECKS, random.Random(seed), corrections=True))


class Mirror:
    """A client of every program topic, of every program output: a snapshot, then patches
    (through JSON)."""

    def __init__(self, engine: Engine) -> None:
        keys = [k for k in engine.topic_keys() if kind(k[0]) == PROGRAM]
        self.docs = {k: clone(engine.projecting.materialize(k)) for k in keys}

    def take(self, engine: Engine) -> None:
        for change in engine.projecting.flush():
            if kind(change.key[0]) != PROGRAM:
                continue
            if change.patch is None:
                self.docs[change.key] = clone(change.payload)
            else:
                patch = json.loads(json.dumps(change.patch))
                self.docs[change.key] = apply_patch(self.docs[change.key], patch)


def shown_deals(name: str, doc: Any) -> Iterator[int]:
    """The deals a program document shows play of (a table: its hand, else the last one; the
    number of the hand before is no play, as a hold names its deal too)."""
    if not isinstance(doc, dict) or doc.get("held"):
        return
    if name.startswith(("deal:", "compare:", "dealstats:")):
        yield doc["deal"]
    if name == "stats":  # the deals counted
        yield from doc["deals"]
    if name.startswith("table:"):
        assert "hole" not in json.dumps(doc) or doc["deal"] is not None
        shown = doc["deal"] if doc.get("deal") is not None else doc.get("last_deal")
        if shown is not None:
            yield shown


def play(events: list[dict[str, Any]], check: Any, *, step: float = 1.0) -> Engine:
    """Submit each event at its ``ts``, ticking every ``step`` seconds between, then run the
    clock on until the program has shown everything; ``check(engine, now)`` after each tick."""
    engine = Engine(CONFIG, DECKS)
    engine.start_feed()
    now = 0.0
    for event in events:
        while now + step < event["ts"]:
            now += step
            engine.tick(now)
            check(engine, now)
        now = max(now, event["ts"])
        assert engine.submit(event, now).ok
        engine.tick(now)
        check(engine, now)
    end = now + DELAY + 5
    while now < end:
        now += step
        engine.tick(now)
        check(engine, now)
    return engine


def test_the_delay_is_seconds_or_a_duration() -> None:
    assert program_config("20m").program_delay == 1200.0
    assert program_config("1h30m").program_delay == 5400.0
    assert program_config(90).program_delay == 90.0
    assert parse_config(config_data(), "<test>").program_delay is None
    with pytest.raises(ConfigError, match=r"broadcast\.delay"):
        program_config("twenty minutes")
    with pytest.raises(ConfigError, match=r"broadcast\.delay"):
        program_config(-5)


def test_without_a_delay_there_is_no_program_feed() -> None:
    engine = Engine(parse_config(config_data(seats=3, deals=3), "<test>"), DECKS)
    assert engine.program is None
    assert not [k for k in engine.topic_keys() if k[0] == PROGRAM]


@pytest.mark.parametrize("seed", [1, 7, 23])
def test_the_program_never_shows_a_deal_before_its_release(seed: int) -> None:
    """After every tick: each program topic is its builder's payload (the client that applied
    the patches holds the same), and none shows play of a deal the real engine has not
    released; held topics say so in words. Every deal is shown once released."""
    mirror: Mirror | None = None
    held_seen: set[int] = set()

    def check(engine: Engine, now: float) -> None:
        nonlocal mirror
        if mirror is None:
            mirror = Mirror(engine)
        mirror.take(engine)
        for key, doc in mirror.docs.items():
            assert doc == engine.payload(key), key
            for deal in shown_deals(key[1], doc):
                assert engine.release.deal_released(deal), (key, deal, now)
            if doc.get("held"):
                assert doc["reason"] == HOLD_REASON
                assert not engine.release.deal_released(doc["deal"])
                held_seen.add(doc["deal"])

    play(session(seed), check)
    assert mirror is not None and held_seen  # random orders: deals were held on the way
    for d in range(1, CONFIG.deals + 1):  # all released now: the whole play is on the program
        doc = mirror.docs[(PROGRAM, f"compare:{d}:1")]
        assert not doc.get("held") and all(r["actions"] for r in doc["rows"])


def journal(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The journal's records of ``events`` submitted at their ``ts`` (each with its ``at``)."""
    engine = Engine(CONFIG, DECKS)
    records = []
    for event in events:
        out = engine.submit(event, event["ts"])
        assert out.record is not None
        records.append(out.record)
    return records


def delayed_reference(records: list[dict[str, Any]], now: float) -> Engine:
    """An engine fed only the records due by ``now - DELAY``, its clock there: what the
    program's delayed engine should be at ``now``."""
    reference = Engine(CONFIG, DECKS, program=False)
    for record in [r for r in records if r["at"] <= now - DELAY]:
        reference.restore(record)
    reference.tick(now - DELAY)
    return reference


def test_the_program_replays_play_at_its_pace_delay_late() -> None:
    """A program topic of a released deal is, at ``now``, what the live topic was at
    ``now - delay``: a reference engine fed only the records due by then agrees."""
    events = session(5)
    records = journal(events)
    compared = 0

    def check(engine: Engine, now: float) -> None:
        nonlocal compared
        program = engine.program
        assert program is not None
        reference = delayed_reference(records, now)
        for t in CONFIG.tables:
            shown = engine.payload((PROGRAM, f"table:{t}"))
            assert shown is not None
            if not shown.get("held"):
                assert shown == reference.payload((LIVE, f"table:{t}"))
                compared += 1

    play(events, check, step=7.0)
    assert compared > 20


def test_the_program_statistics_are_the_delayed_ones() -> None:
    """``stats`` on the program is, at ``now``, the public statistics of an engine fed only the
    records due by ``now - delay`` (released deals only, in the delayed timeline): it lags the
    public's, never shows a deal the real engine holds. ``dealstats:{d}`` is that engine's live
    deal statistics once the real engine released d (moving hand by hand with the delayed
    play), the hold before."""
    events = session(9)
    records = journal(events)
    seen = {"lagged": 0, "counted": 0, "held": 0, "shown": 0}
    deals = range(1, CONFIG.deals + 1)

    def check(engine: Engine, now: float) -> None:
        reference = delayed_reference(records, now)
        shown = engine.payload((PROGRAM, "stats"))
        assert shown == reference.payload((PUBLIC, "stats"))
        public = engine.payload((PUBLIC, "stats"))
        assert shown is not None and public is not None
        assert set(shown["deals"]) <= set(public["deals"])  # never ahead of the release
        seen["lagged"] += set(shown["deals"]) < set(public["deals"])
        seen["counted"] += bool(shown["deals"])
        for d in deals:
            doc = engine.payload((PROGRAM, f"dealstats:{d}"))
            if engine.release.deal_released(d):
                assert doc == reference.payload((LIVE, f"dealstats:{d}")), (d, now)
                seen["shown"] += 1
            else:
                assert doc == {"held": True, "deal": d, "reason": HOLD_REASON}
                seen["held"] += 1

    final = play(events, check, step=7.0)
    assert all(seen.values()), seen  # each case met on the way
    # caught up: the program's statistics are the public's, every deal's the live ones
    assert final.payload((PROGRAM, "stats")) == final.payload((PUBLIC, "stats"))
    for d in deals:
        assert final.payload((PROGRAM, f"dealstats:{d}")) == final.payload((LIVE, f"dealstats:{d}"))


def test_a_record_shows_no_earlier_than_at_plus_delay() -> None:
    engine = Engine(CONFIG, DECKS)
    engine.start_feed()
    first = session(3)[0]  # a start: the live table shows the hand at once
    assert engine.submit(first, 100.0).ok
    assert engine.program is not None
    program = engine.program.default
    engine.tick(100.0 + DELAY - 0.01)
    assert program.pending and program.delayed.state.tables[first["table"]].current is None
    engine.tick(100.0 + DELAY)
    assert not program.pending
    assert program.delayed.state.tables[first["table"]].current is not None
    doc = engine.payload((PROGRAM, f"table:{first['table']}"))
    assert doc == {
        "held": True,
        "deal": first["deal"],
        "reason": HOLD_REASON,
        "table": first["table"],
    }


def run_with_snapshot(
    engine: Engine, events: list[dict[str, Any]], at: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Submit ``events`` at their ``ts``, ticking: the journal's records, and the engine's
    snapshot after event ``at``."""
    records: list[dict[str, Any]] = []
    snap: dict[str, Any] = {}
    for i, event in enumerate(events):
        out = engine.submit(event, event["ts"])
        assert out.record is not None
        records.append(out.record)
        engine.tick(event["ts"])
        if i == at:
            snap = engine.snapshot()
    return records, snap


def test_a_restart_rebuilds_the_program_from_the_journal_or_a_snapshot() -> None:
    """Journal replay, or a snapshot taken mid-session plus the records after it, give the
    same program as the engine that ran throughout."""
    events = session(11)
    full = Engine(CONFIG, DECKS)
    half = len(events) // 2
    records, snap = run_with_snapshot(full, events, half)
    now = events[-1]["ts"] + DELAY / 2  # part of the session still awaits the program
    full.tick(now)

    replayed = Engine(CONFIG, DECKS)
    for record in records:
        replayed.restore(record)
    replayed.tick(now)

    resumed = Engine(CONFIG, DECKS)
    resumed.restore_snapshot(snap)
    for record in records[half + 1 :]:
        resumed.restore(record)
    resumed.tick(now)

    older = Engine(CONFIG, DECKS)  # a snapshot written without a program: it starts there
    older.restore_snapshot({k: v for k, v in snap.items() if k != "program"})
    for record in records[half + 1 :]:
        older.restore(record)
    older.tick(now + DELAY)
    assert older.program is not None and not older.program.default.pending

    keys = [k for k in full.topic_keys() if k[0] == PROGRAM]
    assert keys
    for engine in (replayed, resumed):
        assert engine.program is not None and full.program is not None
        assert len(engine.program.default.pending) == len(full.program.default.pending) > 0
        for key in keys:
            assert engine.payload(key) == full.payload(key), key


def test_onair_and_clock_of_the_program_are_now() -> None:
    engine = Engine(CONFIG, DECKS)
    engine.start_feed()
    Mirror(engine)
    command = {"op": "onair", "slot": "table", "value": {"visible": True, "table": 2}}
    out = engine.control(command, 5.0)
    assert out.ok, out.ack
    changed = {c.key: c for c in engine.projecting.flush()}
    assert (PROGRAM, "onair") in changed
    assert engine.payload((PROGRAM, "onair")) == engine.payload(("public", "onair"))
