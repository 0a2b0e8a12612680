"""The engine's read side is declared once per topic family (``hub.engine.families``): every
family has its feed and builder, every engine event is declared, and no event touches a topic of
a family that does not declare its class (checked on every event of simulated sessions)."""

from __future__ import annotations

import random
import sys
import tomllib
from collections import Counter
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from typing import Any, get_args

import pytest

from hub.domain.config import parse_config
from hub.engine.changes import (
    ActionApplied,
    ClockChanged,
    CuesChanged,
    DealReleased,
    EngineEvent,
    HandRewound,
    HandSettled,
    HandStarted,
    LinkChanged,
    Notable,
    OnAirChanged,
    PenaltyApplied,
    PlayoutChanged,
    PreviewChanged,
    Rejected,
    ReleasedDealCorrected,
    ReleasedResultCorrected,
    RosterChanged,
    StageFilled,
    TickerItem,
)
from hub.engine.core import Engine
from hub.engine.families import FAMILIES, FEEDS, UNDECLARED, TopicKeys, feeds_of, touched_by
from hub.engine.projections import Projections
from hub.engine.simulate import simulate_session
from hub.wire.topics import AUDIENCES, TopicKey
from tests.factories import config_data, make_decks
from tests.test_event import SMALL
from tests.test_event import event as console_event

SAMPLES: list[EngineEvent] = [
    HandStarted(1, 2),
    ActionApplied(1, 2, 0),
    HandRewound(2, 1),
    HandSettled(2, 3, "complete"),
    PenaltyApplied(1, 2),
    DealReleased(2),
    ReleasedDealCorrected(2),
    ReleasedResultCorrected(1, 2),
    *(TickerItem(a, {}) for a in AUDIENCES),
    OnAirChanged("compare"),
    CuesChanged(),
    PreviewChanged(),
    PlayoutChanged(),
    Rejected(1, "bad_schema"),
    Rejected(None, "unknown_table"),
    LinkChanged("table1", False),
    ClockChanged("running", 1),
    RosterChanged("BRA"),
    StageFilled("final", (3,), (3, 4)),
    Notable({"kind": "void"}),
]


def family_of(key: TopicKey) -> str:
    return key[1].split(":")[0]


def test_every_family_has_one_feed_with_a_builder() -> None:
    assert FEEDS.keys() == FAMILIES.keys()
    for name, feed in FEEDS.items():
        assert feed.name == name
        assert callable(feed.build) and callable(feed.keys)
        assert feed.events, f"{name}: no engine event touches it"
        assert set(feed.moves) <= set(feed.events), f"{name} moves an event it does not declare"


@pytest.mark.parametrize("name", ["standings", "seat", "table", "deal", "compare", "projection"])
def test_a_family_builds_its_payload_in_its_own_module(name: str) -> None:
    """Issue #31 item 1: a family's builder is part of its declaration, in its module beside
    its mover (five were in ``hub.engine.views``, a module cut for size; the projection's in
    ``hub.engine.projection_view``, cut from it)."""
    module = sys.modules[FEEDS[name].build.__module__]
    assert module.__name__.startswith("hub.engine.families.")
    made = getattr(module, f"{name}_payload", None)
    assert callable(made) and made.__module__ == module.__name__, f"{name}: built elsewhere"


def test_every_engine_event_class_is_declared_by_a_family_or_by_none_explicitly() -> None:
    classes = set(get_args(EngineEvent))
    assert {type(e) for e in SAMPLES} == classes  # (the samples cover every class)
    for cls in classes:
        assert feeds_of(cls) or cls in UNDECLARED, f"{cls.__name__}: declared by no family"
        assert not (feeds_of(cls) and cls in UNDECLARED), f"{cls.__name__}: declared twice"
    for feed in FEEDS.values():
        assert set(feed.events) <= classes, f"{feed.name} declares a class that is no event"


def test_the_known_wrongs_of_the_old_registry_are_right() -> None:
    assert "Link" not in touched_by("ops") and "LinkChanged" in touched_by("ops")
    assert "DealReleased" in touched_by("ops")  # the release table of the ops topic moves


def test_a_family_touches_only_its_own_topics() -> None:
    config = parse_config(config_data(seats=3, deals=4), "<test>")
    keys = TopicKeys(config, FAMILIES)
    for event in SAMPLES:
        for feed in feeds_of(type(event)):
            emitted = list(feed.keys(keys, event))
            assert emitted, f"{feed.name} declares {type(event).__name__} but touches nothing"
            assert {family_of(k) for k in emitted} == {feed.name}, (feed.name, event, emitted)


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Every ``Projections.on`` checked: each topic an event touched belongs to a family that
    declares the event's class, and its cached route (by ``routed_by``) is the one routing it
    afresh gives. Yields the count of events seen per class."""
    seen: Counter[str] = Counter()
    on = Projections.on

    def checking_on(self: Projections, event: EngineEvent) -> AbstractSet[TopicKey]:
        keys = on(self, event)
        seen[type(event).__name__] += 1
        assert self._routed(event) == self.route(event), f"{event!r}: a stale cached route"
        assert keys == self.route(event)[0]
        for key in keys:
            declared = FEEDS[family_of(key)].events
            assert type(event) in declared, f"{event!r} touched {key}, undeclared by its family"
        return keys

    monkeypatch.setattr(Projections, "on", checking_on)
    yield seen


@pytest.mark.parametrize("feed", [False, True])
def test_no_event_of_a_session_touches_an_undeclared_topic(
    checked: Counter[str], feed: bool
) -> None:
    """A whole event of two stages (the final's teams fixed at its first start), operator
    commands, and a released deal corrected (reopened, then an action taken back)."""
    data = tomllib.loads(SMALL)
    data["clock"] = {"levels": [{"minutes": 10}, {"minutes": 10}], "on_time_up": "flag"}
    config = parse_config(data, "<test>")
    decks = make_decks(config)
    engine = Engine(config, decks, release_delay=0)
    if feed:
        engine.start_feed()
    now = 0.0

    def after(out: Any) -> None:
        assert out.ok, out.ack
        if feed:
            engine.projecting.flush()

    after(engine.control({"op": "clock", "action": "start"}, now))
    for i, raw in enumerate(simulate_session(config, decks, random.Random(5))):
        now += 30.0
        after(engine.submit(raw, now))
        engine.tick(now)
        counted = any(h.counts for h in engine.state.tables[1].hands.values())
        if i >= 20 and counted and not engine.desk.links:
            # (once table 1 has a counted hand: a penalty counts in the session it plays)
            after(engine.control({"op": "onair", "slot": "compare", "value": {"deal": 1}}, now))
            cue = {"op": "cue", "action": "add", "slot": "seat", "value": {"seat": 2}}
            after(engine.control(cue, now))  # CuesChanged
            after(engine.control({"op": "preview", "action": "next"}, now))  # PreviewChanged
            report = {"op": "playout", "tool": "spx", "page": "ticker", "state": "play"}
            after(engine.control(report, now))  # PlayoutChanged
            engine.projecting.links({"table1": False})
            assert not engine.submit({"v": 1, "type": "nonsense"}, now).ok  # Rejected
            penalty = {"op": "penalty", "table": 1, "seat": 2, "chips": 50}
            after(engine.control({**penalty, "reason": "slow", "by": "TD"}, now))
            held = engine.state.seat_holder(1, 2, None)
            assert held is not None
            fix = {"op": "roster", "team": held[0].id, "table": 1, "name": "A. Renamed"}
            after(engine.control({**fix, "colour": "#112233", "by": "TD"}, now))
    deal = config.deal_orders[1][0]
    assert engine.release.deal_released(deal) and "StageFilled" in checked
    seq = engine.admission.sequencer.expected("table1")
    after(engine.submit(console_event(config, 1, seq, "reopen", deal=deal), now))
    after(engine.submit(console_event(config, 1, seq + 1, "undo"), now))
    routed = {c.__name__ for c in get_args(EngineEvent) if c not in UNDECLARED}
    assert routed <= set(checked), checked
