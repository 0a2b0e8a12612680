"""Invariants of whole simulated sessions: replay, recompute, release, conservation."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.domain.bots import choose_action
from hub.domain.config import TournamentConfig
from hub.domain.scoring import full_recompute
from hub.engine.core import Engine
from hub.engine.simulate import simulate_session
from tests.factories import make_config, make_decks

CONFIG = make_config(seats=3, deals=3)
DECKS = make_decks(CONFIG)
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run(
    seed: int,
    *,
    corrections_noise: bool,
    after_each: Callable[[Engine], None] | None = None,
    config: TournamentConfig = CONFIG,
) -> tuple[Engine, list[dict[str, Any]]]:
    """Bots play the whole session on `engine` (of ``config``, ``CONFIG``'s shape: its decks
    are ``DECKS``); with noise, random undo/void/reopen/confirm are mixed in (some of them
    refused, which must change nothing). `after_each` is called after every applied event."""
    rng = random.Random(seed)
    engine = Engine(config, DECKS)
    records: list[dict[str, Any]] = []
    seqs = dict.fromkeys(engine.state.tables, 0)
    now = 0.0

    def send(table: int, kind: str, **fields: Any) -> bool:
        nonlocal now
        now += 1.0
        seqs[table] += 1
        event = {
            "v": 1,
            "tournament": config.id,
            "table": table,
            "console": f"table{table}",
            "seq": seqs[table],
            "type": kind,
            **{k: v for k, v in fields.items() if v is not None},
        }
        out = engine.submit(event, now)
        if out.record:
            records.append(out.record)
        if out.ok and after_each is not None:
            after_each(engine)
        return out.ok

    for _ in range(5000):
        tables = [t for t, s in engine.state.tables.items() if s.current or s.next_deal()]
        if not tables:
            break
        t = rng.choice(tables)
        state = engine.state.tables[t]
        if corrections_noise and rng.random() < 0.12:
            played = sorted(state.hands)
            kind = rng.choice(["undo", "reopen", "void", "confirm", "exposed", "early", "op"])
            deal = rng.choice(played) if played and kind in ("reopen", "confirm", "op") else None
            if kind == "exposed":
                send(t, kind, seat=rng.randint(1, config.seats), card=rng.randint(1, 2))
            elif kind == "op":  # the operator voids a hand or penalises a player
                now += 1.0
                seat = rng.randint(1, config.seats)
                command = rng.choice(
                    [
                        {"op": "void", "deal": deal},
                        {"op": "penalty", "seat": seat, "chips": 100},
                        {"op": "penalty", "seat": seat, "points": 1},
                    ]
                )
                out = engine.control({**command, "table": t, "reason": "r", "by": "TD"}, now)
                if out.record:
                    records.append(out.record)
                if out.ok and after_each is not None:
                    after_each(engine)
            else:
                send(t, kind, deal=deal)
            continue
        current = state.current
        if current is None:
            assert send(t, "start", deal=state.next_deal())
        elif current.status == "showdown":
            winners = current.hand.computed_winners()
            assert winners
            if corrections_noise and rng.random() < 0.3:
                send(t, "win", seats=[rng.randint(1, config.seats)])
            else:
                assert send(t, "win", seats=sorted(winners))
        elif current.hand.street == "complete":  # a reopened fold-out: close it again
            assert send(t, "confirm", deal=current.deal)
        else:
            seat = current.hand.to_act
            assert seat is not None
            kind, amount = choose_action(current.hand, seat, rng)
            assert send(t, kind, seat=seat, amount=amount), (kind, amount)
    for hand in engine.state.disputes():
        send(hand.table, "confirm", deal=hand.deal)
    return engine, records


def results_of(engine: Engine) -> dict[tuple[int, int], dict[int, int]]:
    return {
        (t, d): h.result
        for t, table in engine.state.tables.items()
        for d, h in table.hands.items()
        if h.result is not None
    }


@FAST
@given(st.integers(0, 10_000), st.booleans())
def test_journal_replay_rebuilds_the_same_state(seed: int, noise: bool) -> None:
    engine, records = run(seed, corrections_noise=noise)
    rebuilt = Engine(CONFIG, DECKS)
    for record in records:
        rebuilt.restore(record)
    rebuilt.tick(float("inf"))
    engine.tick(float("inf"))
    keys = sorted(set(engine.topic_keys()) - {("live", "ops")})
    assert keys == sorted(set(rebuilt.topic_keys()) - {("live", "ops")})
    for key in keys:
        assert engine.payload(key) == rebuilt.payload(key), key


def assert_scores_equal_full_recompute(engine: Engine) -> None:
    """Both views (running and like-for-like) of the incremental board equal a board built from
    scratch from the results the hands count right now."""
    counted = results_of(engine)
    assert engine.state.board.results() == counted
    penalties = [(p["table"], p["seat"], p["chips"], p["points"]) for p in engine.state.penalties]
    oracle = full_recompute(engine.state.layout, counted, penalties)
    # the operator's release table counts from the board: the tables whose hand counts
    for row in engine.release.release_state():
        tables = engine.state.config.groups[row["group"]].tables
        hands = [engine.state.hand(t, row["deal"]) for t in tables]
        assert row["tables_complete"] == sum(1 for h in hands if h is not None and h.counts)
    board = engine.state.board.as_dict()
    expected = oracle.as_dict()
    assert set(board) == set(expected) == {"running", "like_for_like"}
    for view in ("running", "like_for_like"):
        assert board[view] == expected[view], view


@FAST
@given(st.integers(0, 10_000), st.booleans())
def test_incremental_scores_equal_full_recompute(seed: int, noise: bool) -> None:
    applied = 0

    def check(engine: Engine) -> None:
        nonlocal applied
        applied += 1
        assert_scores_equal_full_recompute(engine)

    engine, _ = run(seed, corrections_noise=noise, after_each=check)
    assert applied > 0
    assert_scores_equal_full_recompute(engine)


def test_undo_of_a_reopened_void_hand_without_inputs_unplays_the_deal() -> None:
    """start, void (no action yet), reopen, undo: the reopened hand has no input to take back,
    so the undo takes back its start and the deal is not played at all."""
    engine = Engine(CONFIG, DECKS)
    table = engine.state.tables[1]
    deal = table.next_deal()
    assert deal is not None
    seq = 0

    def ok(kind: str, **fields: Any) -> None:
        nonlocal seq
        seq += 1
        event = {
            "v": 1,
            "tournament": CONFIG.id,
            "table": 1,
            "console": "table1",
            "seq": seq,
            "type": kind,
            **fields,
        }
        out = engine.submit(event, float(seq))
        assert out.ok, out.ack
        assert_scores_equal_full_recompute(engine)

    ok("start", deal=deal)
    ok("void")
    assert engine.state.board.result(1, deal) == dict.fromkeys(range(1, CONFIG.seats + 1), 0)
    ok("reopen", deal=deal)
    current = table.current
    assert current is not None and current.reopened and not current.inputs
    ok("undo")
    assert table.current is None and deal not in table.hands
    assert table.next_deal() == deal
    assert engine.state.board.result(1, deal) is None
    assert [c["type"] for c in engine.state.corrections] == ["void", "reopen", "undo"]
    # The deal can be played again from scratch.
    ok("start", deal=deal)
    assert table.current is not None and table.current.deal == deal


@FAST
@given(st.integers(0, 10_000))
def test_chips_conserved_and_points_sum(seed: int) -> None:
    engine, _ = run(seed, corrections_noise=False)
    n = len(CONFIG.groups["G0"].tables)
    for result in results_of(engine).values():
        assert sum(result.values()) == 0
        assert all(-CONFIG.cap <= v for v in result.values())
    standings = engine.standings_json()
    for view in ("running", "like_for_like"):
        for block in standings[view]["seats"]:
            assert sum(row["points"] for row in block["rows"]) == n * (n + 1) / 2


@FAST
@given(st.integers(0, 10_000))
def test_public_payloads_never_mention_unreleased_deals(seed: int) -> None:
    rng = random.Random(seed)
    engine = Engine(CONFIG, DECKS)
    now = 0.0
    for event in simulate_session(CONFIG, DECKS, rng):
        now += 1.0
        out = engine.submit(event, now)
        assert out.ok
        released = {d for d in range(1, CONFIG.deals + 1) if engine.release.released("G0", d)}
        always = {("public", "standings"), ("public", "ticker"), ("public", "stats")}
        deals = range(1, CONFIG.deals + 1)
        always |= {("public", f"dealstats:{d}") for d in deals}
        for key in out.changed | always:
            if key[0] != "public":
                continue
            payload = engine.payload(key)
            if payload is None:
                continue
            topic = key[1]
            if topic.startswith(("deal:", "compare:", "dealstats:")):
                assert int(topic.split(":")[1]) in released
            if topic == "stats":  # counted over released deals only, nothing in play
                assert set(payload["deals"]) <= released
                assert all(p["stack"] is None for p in payload["players"])
                assert payload["tables"] == []
            if topic == "standings":
                assert set(payload["deals"]["complete"]["G0"]) <= released
                assert "running" not in payload
            if topic == "ticker":
                assert {item["deal"] for item in payload["items"]} <= released
            if topic.startswith("table:"):
                keys = {"table", "group", "deals_total", "seats", "released", "showdown"}
                assert set(payload) <= keys and keys - set(payload) <= {"showdown"}
                showdown = payload.get("showdown")  # the latest released deal's, if any
                assert showdown is None or showdown["deal"] in released, (showdown, released)
                assert payload["released"] == len(released)
