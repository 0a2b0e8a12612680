"""The feed's part of an engine (hub/engine/projecting.py): the events the engine hands it and
the links the answers hand it, noted only when the feed takes its flush (or a reader its
document), move the feed exactly as if each had been noted the moment it was announced (the
engine before issue #31's walk took the projections out of the decide stop): the same topic
changes, the same patches, the same payloads, in the same order, and the same documents for a
reader arriving between two flushes, whatever falls between the flushes (bursts of events, the
operator's commands, refusals, links going up and down, releases, a programme output's delay).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any, cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.domain.config import parse_config
from hub.engine.changes import EngineEvent
from hub.engine.core import Engine
from hub.engine.projecting import Projecting
from hub.engine.simulate import simulate_session
from hub.wire.topics import TopicKey
from tests.factories import config_data, make_decks
from tests.test_archive import faulty_session, operator_command

DATA = config_data(seats=3, deals=3)
DATA["broadcast"] = {"delay": 7}  # a programme output: a delayed engine's feed part too
CONFIG = parse_config(DATA, "<test>")
DECKS = make_decks(CONFIG)


class AtOnce(Projecting):
    """The engine before: each event noted into the projections as it is announced, each
    batch's links told the desk and noted at once."""

    __slots__ = ()

    def hand(self, events: Iterable[EngineEvent]) -> set[TopicKey]:
        return self._note(events)

    def links(self, links: Mapping[str, bool]) -> None:
        self._note(self.engine.desk.note_links(links))


def twins() -> tuple[Engine, Engine]:
    """Two engines of one tournament, feeds started: one whose feed part takes what it is
    handed at its flush (the hub's), one that notes everything at once (``AtOnce``)."""
    handed, at_once = (Engine(CONFIG, DECKS, release_delay=5.0) for _ in range(2))
    assert at_once.program is not None
    for engine in (at_once, *(cast(Engine, f.delayed) for f in at_once.program.feeds.values())):
        engine.projecting = AtOnce(engine)  # (the programme's delayed engine too)
    for engine in (handed, at_once):
        engine.start_feed()
    return handed, at_once


def flushed(engine: Engine) -> list[tuple[TopicKey, Any, Any]]:
    return [(c.key, c.patch, c.payload) for c in engine.projecting.flush()]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.sampled_from([0.0, 0.3, 0.8]))
def test_what_is_handed_moves_the_feed_as_what_is_noted_at_once(seed: int, burst: float) -> None:
    """After every step, with probability ``1 - burst``, both feeds are flushed: their changes
    are equal, change for change; now and then a reader materializes a topic between two
    flushes (a subscriber, a REST read) and both documents are equal."""
    rng = random.Random(seed)
    handed, at_once = twins()
    events = list(simulate_session(CONFIG, DECKS, rng))
    faults = faulty_session(CONFIG, events, rng)
    consoles = sorted({e["console"] for e in events})
    keys = sorted(handed.topic_keys())
    compared = flushes = 0
    for step in faults.steps:
        links = {c: rng.random() < 0.7 for c in rng.sample(consoles, rng.randint(0, 2))}
        read = rng.choice(keys) if rng.random() < 0.05 else None
        command = None
        if step.command is None and rng.random() < 0.01:
            table = rng.choice(CONFIG.tables)
            deal = rng.randint(1, CONFIG.deals)
            command = operator_command(CONFIG, table, deal, rng)
        for engine in (handed, at_once):
            if step.command is not None:
                engine.control(step.command, step.ts)
            else:
                assert step.event is not None
                engine.submit(step.event, step.ts)
            if command is not None:
                engine.control(command, step.ts)
            engine.projecting.links(links)  # (an answered batch's, as the feed writer hands them)
            engine.tick(step.ts)
        if read is not None:
            assert handed.projecting.materialize(read) == at_once.projecting.materialize(read), read
        if rng.random() >= burst:
            changes = flushed(handed)
            assert changes == flushed(at_once)
            compared += len(changes)
            flushes += 1
    assert flushed(handed) == flushed(at_once)
    assert compared > 100 and flushes > 10, (compared, flushes)
    for key in handed.topic_keys():  # and the documents they hold are their builders'
        assert (
            handed.projecting.materialize(key)
            == at_once.projecting.materialize(key)
            == handed.payload(key)
        ), key


def test_a_link_flap_between_two_flushes_is_noted_in_order() -> None:
    """A console's link down then up again within one feed interval: the desk is told both,
    in order, at the flush (nothing merged), as it was when each was noted at once."""
    handed, at_once = twins()
    seen: list[tuple[str, bool]] = []
    desk = handed.desk
    note_links = desk.note_links

    def watched(links: Mapping[str, bool]) -> list[Any]:
        changed = note_links(links)
        seen.extend((c.console, c.connected) for c in changed)
        return changed

    desk.note_links = watched  # type: ignore[method-assign]
    for engine in (handed, at_once):
        engine.projecting.flush()
        engine.projecting.links({"table1": True})
        engine.projecting.links({"table1": False})
        engine.projecting.links({"table1": True, "table2": False})
    assert seen == []  # handed: nothing told until the flush
    assert flushed(handed) == flushed(at_once)
    assert seen == [("table1", True), ("table1", False), ("table1", True), ("table2", False)]
    assert handed.desk.links == at_once.desk.links == {"table1": True, "table2": False}
