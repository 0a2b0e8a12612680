"""The console-scoped table state (``console:{t}``, hub/engine/console_view.py): what it
offers is what the engine accepts, to the chip, and it holds no card."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.domain.cards import FULL_DECK
from hub.domain.config import parse_config
from hub.domain.games.registry import pads
from hub.domain.games.rps.rules import RpsRules
from hub.engine.changes import PenaltyApplied, Rejected
from hub.engine.console_view import NO_LEGAL
from hub.engine.core import Engine
from hub.files.config import load_config
from hub.files.decks import load_decks
from tests.factories import config_data, console_event, make_decks
from tests.hubharness import ROOT

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def engine_for(betting: str) -> Engine:
    config = parse_config(config_data(seats=4, deals=3, betting=betting), "<test>")
    engine = Engine(config, make_decks(config))
    engine.start_feed()
    return engine


class Table:
    """One table's console, entering events through ``Engine.submit``."""

    def __init__(self, engine: Engine, table: int = 1) -> None:
        self.engine = engine
        self.table = table
        self.seq = 0
        self.now = 0.0

    def send(self, kind: str, **fields: Any) -> Any:
        self.seq += 1
        self.now += 1.0
        event = console_event(self.engine.state.config.id, self.table, self.seq, kind, **fields)
        return self.engine.submit(event, self.now)

    def state(self) -> dict[str, Any]:
        payload = self.engine.payload(("live", f"console:{self.table}"))
        assert payload is not None
        return payload


def offered(legal: dict[str, Any]) -> list[tuple[str, int | None]]:
    """Every action the payload offers, with each bound of a bet or raise."""
    out: list[tuple[str, int | None]] = []
    if legal["fold"]:
        out.append(("fold", None))
    if legal["check"]:
        out.append(("check", None))
    if legal["call"] is not None:
        out.append(("call", legal["call"]))
    for kind in ("bet", "raise"):
        span = legal[kind]
        if span is not None:
            out += [(kind, span["min"]), (kind, span["max"])]
    return out


def outside(legal: dict[str, Any]) -> list[tuple[str, int | None]]:
    """Amounts just outside what the payload offers, and the kinds it does not offer."""
    out: list[tuple[str, int | None]] = []
    if not legal["check"]:
        out.append(("check", None))
    if legal["call"] is not None:
        out += [("call", legal["call"] + 1), ("call", legal["call"] - 1)]
    for kind in ("bet", "raise"):
        span = legal[kind]
        if span is not None:
            out += [(kind, span["min"] - 1), (kind, span["max"] + 1)]
        else:
            out.append((kind, 10**6))
    return out


@PROPERTY
@given(betting=st.sampled_from(["pot-limit", "no-limit"]), data=st.data())
def test_what_the_console_state_offers_is_exactly_what_the_engine_takes(
    betting: str, data: st.DataObject
) -> None:
    engine = engine_for(betting)
    console = Table(engine)
    deal = engine.state.config.deal_orders[1][0]
    assert console.send("start", deal=deal).ok
    hand = engine.state.hand(1, deal)
    assert hand is not None
    for _ in range(60):
        state = console.state()
        if state["winners_needed"] or state["status"] != "in_progress":
            break
        seat, legal = state["to_act"], state["legal"]
        assert seat == hand.hand.to_act and seat is not None
        for kind, amount in offered(legal):  # all accepted (checked without applying)
            hand.hand.verify(seat, kind, amount)
        for kind, amount in outside(legal):  # each refused through the engine, nothing moved
            out = console.send(kind, deal=deal, seat=seat, amount=amount)
            assert not out.ok, (kind, amount, legal)
            assert console.state()["legal"] == legal
        kind, amount = data.draw(st.sampled_from(offered(legal)))
        if kind in ("bet", "raise") and amount == legal[kind]["min"]:
            amount = data.draw(st.integers(legal[kind]["min"], legal[kind]["max"]))
        out = console.send(kind, deal=deal, seat=seat, amount=amount)
        assert out.ok, (kind, amount, out.ack)
        assert console.state()["consoles"] == {"table1": {"last_seq": console.seq}}
    assert not any(card in repr(console.state()) for card in FULL_DECK)


def test_a_hand_through_the_console_state_dispute_and_misdeal_window() -> None:
    engine = engine_for("pot-limit")
    console = Table(engine)
    empty = console.state()
    assert empty["status"] == "none" and empty["deal"] is None and empty["to_act"] is None
    assert empty["schedule"] == list(engine.state.config.deal_orders[1])
    deal = empty["next_deal"]
    assert console.send("start", deal=deal).ok
    state = console.state()
    assert state["deal"] == deal and state["status"] == "in_progress"
    assert state["misdeal_window"] is True
    assert [a["kind"] for a in state["actions"]] == ["small_blind", "big_blind"]
    while not console.state()["winners_needed"]:
        state = console.state()
        kind = "call" if state["legal"]["call"] is not None else "check"
        assert console.send(kind, deal=deal, seat=state["to_act"]).ok
        assert console.state()["misdeal_window"] is False or len(state["actions"]) < 3
    state = console.state()
    assert state["street"] == "showdown" and state["legal"]["fold"] is False
    hand = engine.state.hand(1, deal)
    assert hand is not None
    computed = hand.hand.computed_winners()
    assert computed
    wrong = next(s for s in range(1, 5) if s not in computed)
    assert console.send("win", deal=deal, seats=[wrong]).ok  # acked: the hand is disputed
    state = console.state()
    assert state["status"] == "disputed" and state["winners_needed"] is False
    assert state["dispute"]["declared"] == [wrong]
    assert state["dispute"]["computed"] == sorted(computed)
    assert "official" in state["dispute"]["reason"]
    assert not any(card in repr(state) for card in FULL_DECK)


def test_a_projector_following_the_journal_shows_a_refusals_seq() -> None:
    """A refused event that used up its seq is journaled as a ``refused`` record; an engine
    following the journal (the projector) moves ``console:{t}``'s ``last_seq`` by it."""
    writer = engine_for("pot-limit")
    console = Table(writer)
    deal = writer.state.config.deal_orders[1][0]
    records = [console.send("start", deal=deal).record]
    refused = console.send("fold", deal=deal, seat=99)
    assert not refused.ok and refused.record["kind"] == "refused"
    records.append(refused.record)
    reader = engine_for("pot-limit")
    reader.projecting.materialize(("live", "console:1"))
    for record in records:
        reader.restore(record)
        moved = {change.key: change for change in reader.projecting.flush()}
        doc = reader.projecting.materialize(("live", "console:1"))
        assert doc == reader.payload(("live", "console:1"))
        assert doc["consoles"]["table1"]["last_seq"] == record["seq"]
        assert ("live", "console:1") in moved


def test_refusals_and_penalties_touch_their_own_tables_console_state() -> None:
    """Routes are cached per class and ``routed_by`` fields: a refusal or a penalty at table
    2 after one at table 1 touches ``console:2``, not table 1's again."""
    engine = engine_for("pot-limit")
    projections = engine.projecting.projections
    for make in (lambda t: Rejected(t, "out_of_turn"), lambda t: PenaltyApplied(t, 1, chips=100)):
        for table in (1, 2, 3):
            consoles = {k for k in projections.on(make(table)) if k[1].startswith("console:")}
            assert consoles == {("live", f"console:{table}")}


def test_an_entry_made_on_an_earlier_screen_is_refused_stale() -> None:
    """Issue #30 item 6: two tablets on one console. An entry carries the table's ``moves``
    it was made on (``after``); the hub refuses it ``stale`` when the table moved since, uses
    up its seq (journaled as refused) and changes nothing. An entry without ``after`` (a Redis
    console) is not checked. A journal replay rebuilds the same ``moves``."""
    engine = engine_for("pot-limit")
    console = Table(engine)
    deal = console.state()["next_deal"]
    assert console.state()["moves"] == 0
    assert console.send("start", deal=deal, after=0).ok
    state = console.state()
    assert state["moves"] == 1
    seat = state["to_act"]
    # tablet A calls for the seat to act; tablet B, on the same screen, folds it a moment later
    first = console.send("call", deal=deal, seat=seat, after=state["moves"])
    assert first.ok
    second = console.send("fold", deal=deal, seat=seat, after=state["moves"])
    assert not second.ok and second.code == "stale", second.ack
    assert "NOT entered" in second.ack["error"] and "came first" in second.ack["error"]
    assert second.record is not None and second.record["kind"] == "refused"
    after = console.state()
    assert after["moves"] == 2 and after["consoles"]["table1"]["last_seq"] == console.seq
    assert [a["kind"] for a in after["actions"]][-1] == "call"
    # the next seat's entry on the fresh screen goes in; without `after` it is not checked
    assert console.send("call", deal=deal, seat=after["to_act"], after=after["moves"]).ok
    assert console.send("call", deal=deal, seat=console.state()["to_act"]).ok
    assert console.state()["moves"] == 4
    ahead = console.send("fold", deal=deal, seat=console.state()["to_act"], after=9)
    assert not ahead.ok and ahead.code == "stale"
    # the rules block the page's rules module reads (no card)
    rules = console.state()["rules"]
    assert rules["seats"] == 4 and rules["pot_limit"] is True and rules["big_blind"] > 0
    # restored from a snapshot: the same moves
    restored = Engine(engine.state.config, make_decks(engine.state.config))
    restored.restore_snapshot(engine.snapshot())
    assert restored.state.tables[1].moves == 4
    assert restored.payload(("live", "console:1"))["moves"] == 4


SESSIONS = ("ifp6", "piecepack", "mcr", "rps-poker")
SHARED = {"start", "undo", "void", "reopen", "confirm", "penalty"}


@pytest.mark.parametrize("sample", SESSIONS)
def test_every_entry_of_a_sample_session_is_one_the_pad_offered(sample: str) -> None:
    """Issue #32: the pad is what the game says is legal now (``pad``; the seat to act's
    betting: ``to_act`` and ``legal``). Before each entry of a sample session, the table's
    console state offered that entry (its type, its seat among the choices, its amount within
    the bounds, a secret field's seats never with their values), and offered nothing else of
    what the game refuses now: no betting while RPS Poker's throws are awaited, the seat to
    act shown only with the betting. The declarations are the game's, served once by the hub
    (``pads``), never in the topic."""
    config = load_config(ROOT / "samples" / f"{sample}.toml")
    engine = Engine(config, load_decks(config, ROOT / "samples", dict(os.environ)))
    engine.start_feed()
    lines = (ROOT / "samples" / f"{sample}-session.jsonl").read_text().splitlines()
    declared = {e.key: e for e in config_game(config).pad}
    assert [e["key"] for e in pads()[config.game]] == list(declared)
    checked = 0
    for event in (json.loads(x) for x in lines if x.strip()):
        state = engine.payload(("live", f"console:{event['table']}"))
        assert state is not None
        assert "pad_entries" not in state
        pad = {o["key"]: o for o in state["pad"]}
        assert not [k for k in pad if declared[k].to_act], pad  # (the betting is `legal`)
        assert state["winners_needed"] == ("win" in pad)
        legal, to_act = state["legal"], state["to_act"]
        if to_act is None:
            assert legal == NO_LEGAL, state
        if event["type"] not in SHARED:
            keys = [k for k, e in declared.items() if e.type == event["type"]]
            if any(declared[k].to_act for k in keys):  # the betting: to_act and legal
                assert event["seat"] == to_act, (event, to_act)
                kind = event["type"]
                assert legal[kind] not in (None, False), (event, legal)
                if kind in ("bet", "raise"):
                    assert legal[kind]["min"] <= event["amount"] <= legal[kind]["max"], event
                checked += 1
                assert engine.submit(event, float(event.get("ts", 0.0))).ok, event
                continue
            offer = next((pad[k] for k in keys if k in pad), None)
            assert offer is not None, (event, list(pad))
            seats = offer["fields"].get("seat", {}).get("choices")
            if "seat" in event and seats is not None:
                assert event["seat"] in seats, (event, offer)
            checked += 1
        assert engine.submit(event, float(event.get("ts", 0.0))).ok, event
        if event["type"] == "throws" and len(event["throws"]) > 1:  # a seat's are secret
            after = engine.payload(("live", f"console:{event['table']}"))
            assert event["throws"] not in json.dumps(after), event
    assert checked >= 50


def config_game(config: Any) -> Any:
    from hub.domain.games.registry import game_of

    return game_of(config.game)


def test_rps_poker_offers_the_throws_then_the_dealers_then_the_betting() -> None:
    """A chosen dealer: the seats still to throw, then his `reveal` once every player threw
    (and not before), then the gambit's betting; the throws' values never in the state."""
    config = replace(
        load_config(ROOT / "samples" / "rps-poker.toml"), game_rules=RpsRules(dealer="chosen")
    )
    engine = Engine(config, load_decks(config, ROOT / "samples", dict(os.environ)))
    engine.start_feed()
    table = Table(engine)
    deal = config.deal_orders[1][0]
    dealer = config.buttons[deal]
    assert table.send("start", deal=deal).ok
    players = [s for s in range(1, config.seats + 1) if s != dealer]
    for i, seat in enumerate(players):
        state = table.state()
        (offer,) = state["pad"]
        assert offer["key"] == "throws" and state["to_act"] is None
        assert offer["fields"]["seat"] == {"choices": players, "awaited": players[i:]}
        assert offer["fields"]["throws"] == {"count": 3, "done": players[:i]}
        assert table.send("throws", deal=deal, seat=seat, throws="RPS").ok
    state = table.state()
    assert [o["key"] for o in state["pad"]] == ["throws", "reveal"]  # (a throw may change)
    assert state["pad"][1]["fields"] == {"throws": {"count": 3}}
    assert "RPS" not in json.dumps(state)
    assert table.send("reveal", deal=deal, throws="SSR").ok
    state = table.state()
    assert state["to_act"] is not None and "throws" not in {o["key"] for o in state["pad"]}


def test_a_betting_action_moves_no_pad_and_no_topic_carries_the_declarations() -> None:
    """Issue #31 (the edges' memory per connection): the seat to act's betting is ``to_act``
    and ``legal``, so a hold'em betting action's console delta has no ``/pad`` operation
    (``pad`` moves when a hand starts and when its betting is over), and no console topic
    carries the game's declarations (served once by ``GET /api/topics``: ``pads``)."""
    config = load_config(ROOT / "samples" / "ifp6.toml")
    engine = Engine(config, load_decks(config, ROOT / "samples", dict(os.environ)))
    engine.start_feed()
    for t in config.tables:
        assert "pad_entries" not in (engine.projecting.materialize(("live", f"console:{t}")) or {})
    engine.projecting.flush()
    lines = (ROOT / "samples" / "ifp6-session.jsonl").read_text().splitlines()
    betting = moved = 0
    for event in (json.loads(x) for x in lines if x.strip()):
        before = engine.payload(("live", f"console:{event['table']}"))
        assert before is not None
        assert engine.submit(event, float(event.get("ts", 0.0))).ok, event
        after = engine.payload(("live", f"console:{event['table']}"))
        assert after is not None
        for change in engine.projecting.flush():
            if change.key != ("live", f"console:{event['table']}") or change.patch is None:
                continue
            pad_ops = [op for op in change.patch if op["path"].startswith("/pad")]
            if event["type"] in ("fold", "check", "call", "bet", "raise"):
                betting += 1
                ended = (
                    after["street"] in ("showdown", "complete") or after["status"] != "in_progress"
                )
                if not ended:  # (the betting still on: the pad shows what it showed)
                    assert not pad_ops, (event, pad_ops)
                moved += bool(pad_ops)
    assert betting >= 500 and moved < betting / 10, (betting, moved)
