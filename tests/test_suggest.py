"""Suggested split-screens (``hub.engine.suggest``, the ``suggestions`` topic): each reason and
its weight, the public list holding released deals only, the incremental ranking equal to a
full recompute after every event, and nothing of it built until someone asks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.engine import suggest
from hub.engine.core import Engine
from hub.engine.suggest import Ranking, deal_entries, suggestions_payload
from tests.factories import make_config, make_decks
from tests.test_engine import Console, play_fold_out
from tests.test_engine_properties import run

LIVE = ("live", "suggestions")
PUBLIC = ("public", "suggestions")


@pytest.fixture
def engine() -> Engine:
    config = make_config(seats=3, deals=4)
    engine = Engine(config, make_decks(config))
    engine.start_feed()
    return engine


def entry(engine: Engine, deal: int, seat: int) -> suggest.Entry:
    return deal_entries(engine.state, deal)[seat - 1]


def listed(engine: Engine, key: tuple[str, str]) -> list[dict[str, Any]]:
    doc = engine.projecting.materialize(key)
    assert doc is not None
    engine.projecting.flush()
    assert doc == engine.payload(key)  # the kept document is the builder's
    return list(doc["suggestions"])


def reach(engine: Engine, consoles: dict[int, Console], deal: int) -> None:
    """Fold-outs at every table until each one's next deal is ``deal``."""
    for t, console in consoles.items():
        while engine.state.tables[t].next_deal() != deal:
            play_fold_out(console, engine)


def test_all_in_dispute_spread_and_swing_each_count_with_their_reason(engine: Engine) -> None:
    config = engine.state.config
    cap = config.cap // config.big_blind  # 100 big blinds
    consoles = {t: Console(engine, t) for t in config.tables}
    deal = config.deal_orders[1][0]
    reach(engine, consoles, deal)
    assert not [e for e in listed(engine, LIVE) if e["deal"] == deal]
    c1 = consoles[1]
    c1.ok("start", deal=deal)
    hand = engine.state.tables[1].current
    assert hand is not None
    while not hand.hand.all_in:  # pot-sized raises until someone has the cap in
        seat = hand.hand.to_act
        assert seat is not None
        legal = hand.hand.legal(seat)
        if legal.max_to is not None:
            c1.ok("raise" if hand.hand.high_bet else "bet", seat=seat, amount=legal.max_to)
        else:
            c1.ok("call", seat=seat)
    shover = min(hand.hand.all_in)
    e = entry(engine, deal, shover)
    assert e.reasons == ("all-in at T1",) and e.score == 2 * cap and e.tables == (1,)
    live = listed(engine, LIVE)
    assert {"deal": deal, "seat": shover, "tables": [1], "score": 2 * cap} | {
        "reasons": ["all-in at T1"]
    } in live
    assert listed(engine, PUBLIC) == []  # the deal is not released
    while hand.status == "in_progress":  # the others call or fold it down to a showdown
        seat = hand.hand.to_act
        assert seat is not None
        c1.ok("call" if hand.hand.legal(seat).call else "check", seat=seat)
    computed = hand.hand.computed_winners()
    assert computed
    loser = next(s for s in hand.hand.committed if s not in computed and s not in hand.hand.folded)
    c1.ok("win", seats=[loser])
    assert hand.status == "disputed"
    contested = {loser, *computed}
    for seat in range(1, config.seats + 1):
        reasons = entry(engine, deal, seat).reasons
        assert (reasons == ("disputed at T1",)) == (seat in contested), (seat, reasons)
        if seat in contested:
            assert entry(engine, deal, seat).score == cap
    assert engine.control({"op": "confirm", "table": 1, "deal": deal, "by": "TD"}, 1.0).ok
    assert entry(engine, deal, loser).score == 0  # one counted hand: nothing to compare yet
    play_fold_out(consoles[2], engine)
    for seat in range(1, config.seats + 1):
        a = engine.state.hand(1, deal).result[seat]  # type: ignore[union-attr]
        b = engine.state.hand(2, deal).result[seat]  # type: ignore[union-attr]
        e = entry(engine, deal, seat)
        spread, swing = abs(a - b), abs(a - b) / 2
        assert e.score == int((spread + swing) // config.big_blind)
        if spread:
            # Both tables are as far from the average: the first one's team is named.
            team = engine.state.seat_holder(1, seat, deal)[0].name  # type: ignore[index]
            sign = "+" if a > b else "\u2212"
            assert e.reasons == (
                f"spread {spread:,} chips",
                f"{team} {sign}{round(swing):,} vs seat average",
            )
            assert e.tables == (1, 2)
    assert listed(engine, PUBLIC) == []
    play_fold_out(consoles[3], engine)  # every table has played it: released (no delay)
    assert engine.release.deal_released(deal)
    public = listed(engine, PUBLIC)
    assert public and {e["deal"] for e in public} == {deal}
    assert [e for e in listed(engine, LIVE) if e["deal"] == deal] == public


def play_raise_out(console: Console, engine: Engine) -> None:
    """The first to act raises to 300 and the blinds fold: +150 for him, -50 and -100."""
    table = engine.state.tables[console.table]
    console.ok("start", deal=table.next_deal())
    current = table.current
    assert current is not None and current.hand.to_act is not None
    console.ok("raise", seat=current.hand.to_act, amount=300)
    while current.hand.street != "complete":
        console.ok("fold", seat=current.hand.to_act)


def play_every_deal(engine: Engine) -> None:
    """Every deal of every table: a raise-out at table 2, fold-outs elsewhere."""
    for t in engine.state.config.tables:
        console = Console(engine, t)
        while engine.state.tables[t].next_deal() is not None:
            (play_raise_out if t == 2 else play_fold_out)(console, engine)  # type: ignore[operator]


def test_equal_scores_keep_deal_then_seat_order(engine: Engine) -> None:
    """Every deal: a raise-out at table 2, fold-outs elsewhere: the button's and the big
    blind's entries score 2 (spread 150 and swing 100 chips) in every deal, the small blind's
    nothing: eight equal scores, listed by deal then seat."""
    config = engine.state.config
    play_every_deal(engine)
    live = listed(engine, LIVE)
    assert len(live) == suggest.TOP and {e["score"] for e in live} == {2}
    keys = [(e["deal"], e["seat"]) for e in live]
    assert keys == sorted(keys) and len({d for d, _ in keys}) == config.deals
    assert live == listed(engine, PUBLIC)  # every deal is released
    everything = [
        e for d in range(1, config.deals + 1) for e in deal_entries(engine.state, d) if e.score
    ]
    best = sorted(everything, key=lambda e: e.key)[: suggest.TOP]
    assert [(e.deal, e.seat) for e in best] == [(e["deal"], e["seat"]) for e in live]


@pytest.fixture
def entries_made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The deals whose suggestion entries are computed, in order (``suggest.deal_entries``
    counted)."""
    seen: list[int] = []
    real = suggest.deal_entries

    def counting(state: Any, deal: int) -> list[suggest.Entry]:
        seen.append(deal)
        return real(state, deal)

    monkeypatch.setattr(suggest, "deal_entries", counting)
    return seen


def test_nothing_of_it_is_built_until_someone_subscribes(entries_made: list[int]) -> None:
    seen = entries_made
    checks = 0

    def check(engine: Engine) -> None:
        nonlocal checks
        if not engine.projecting.projections.active:
            engine.start_feed()
        changed = {c.key for c in engine.projecting.flush()}
        assert LIVE not in changed and PUBLIC not in changed
        checks += 1

    engine, _ = run(3, corrections_noise=True, after_each=check)
    assert checks > 50 and seen == [] and "suggestions" not in engine.projecting.projections.models
    assert (
        LIVE not in engine.projecting.projections.docs
        and PUBLIC not in engine.projecting.projections.docs
    )
    assert engine.projecting.materialize(LIVE) == engine.payload(LIVE)
    assert seen and "suggestions" in engine.projecting.projections.models


def test_a_hand_event_recomputes_only_its_deals_entries(
    engine: Engine, entries_made: list[int]
) -> None:
    """A start recomputes its deal's entries (and no other deal's); an action that makes
    nobody all-in recomputes nothing (statuses and results move by the other hand events)."""
    config = engine.state.config
    consoles = {t: Console(engine, t) for t in config.tables}
    for t in (1, 2):
        play_fold_out(consoles[t], engine)
    listed(engine, LIVE)
    seen = entries_made
    seen.clear()  # (what listing it computed)
    deal = engine.state.tables[3].next_deal()
    consoles[3].ok("start", deal=deal)
    engine.projecting.flush()
    assert seen == [deal]
    seen.clear()
    current = engine.state.tables[3].current
    assert current is not None and current.hand.to_act is not None
    consoles[3].ok("call", seat=current.hand.to_act)
    engine.projecting.flush()
    assert seen == []
    seat = current.hand.to_act
    assert seat is not None
    consoles[3].ok("raise", seat=seat, amount=current.hand.legal(seat).max_to)
    engine.projecting.flush()
    assert seen == ([deal] if current.hand.all_in else [])


def check_incremental(engine: Engine) -> None:
    """After every event: both lists equal a full recompute, and every kept entry equals its
    deal's entries computed now."""
    if not engine.projecting.projections.active:
        engine.start_feed()
        engine.projecting.materialize(LIVE)
        engine.projecting.materialize(PUBLIC)
    engine.projecting.flush()
    docs = engine.projecting.projections.docs
    state, released = engine.state, engine.release.deal_released
    for key in (LIVE, PUBLIC):
        assert docs[key].doc == suggestions_payload(state, released, key[0]), key
    ranking = engine.projecting.projections.models["suggestions"]
    assert isinstance(ranking, Ranking)
    for d in range(1, engine.state.config.deals + 1):
        for e in deal_entries(state, d):
            assert ranking.entries[(e.deal, e.seat)] == e


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000))
def test_the_incremental_ranking_equals_a_full_recompute_after_every_event(seed: int) -> None:
    """Bots play a session with corrections mixed in (undo, void, reopen, disputes and their
    confirmation, dealer errors, operator voids and penalties)."""
    engine, _ = run(seed, corrections_noise=True, after_each=check_incremental)
    assert engine.projecting.projections.docs[LIVE].doc["suggestions"]
    assert engine.projecting.projections.docs[PUBLIC].doc["suggestions"]


def test_a_roster_fix_renames_the_team_in_the_reasons(engine: Engine) -> None:
    config = engine.state.config
    play_every_deal(engine)
    live = listed(engine, LIVE)
    team = next(tm for tm in config.teams.values() if tm.name in " ".join(live[0]["reasons"]))
    fix = {"op": "roster", "team": team.id, "team_name": "Renamed", "by": "TD", "reason": "typo"}
    assert engine.control(fix, 9.0).ok
    engine.projecting.flush()
    doc = engine.projecting.projections.docs[LIVE].doc
    assert doc == engine.payload(LIVE)
    assert "Renamed" in " ".join(doc["suggestions"][0]["reasons"])
