"""The statistics (``hub.engine.stats``, the ``stats`` and ``dealstats:{d}`` families): a small
session whose counts are counted by hand below; the incremental tally equals a recount from
scratch after every event (corrections, voids, disputes, releases group by group, a roster
fix), in both audiences, in the engine and at a client applying the deltas; the public's
statistics hold released deals only; a game without betting counts swings only."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.engine.core import Engine
from hub.engine.families import topic_name
from hub.engine.simulate import simulate_session
from hub.engine.stats import dealstats_payload, stats_payload
from hub.wire.patch import apply_patch, clone
from hub.wire.topics import AUDIENCES, LIVE, PUBLIC
from tests.factories import console_event, make_config, make_decks
from tests.test_archive import GAMES, load_game
from tests.test_engine_properties import run
from tests.test_projections import Client
from tests.test_scores_model import client_changes

# ------------------------------------------------------------------ the hand-counted session
# Three tables, three seats, two deals; positions BTN (the button), SB, BB; blinds 50/100.
# Preflop the button acts first (three-handed), after the flop the small blind. Amounts of a
# bet or raise are what the street's bet reaches. "win": the winners by the cards (the hub's).
HISTORIES: dict[tuple[int, int], list[tuple[str, str, int | None]]] = {
    # deal 1
    (1, 1): [  # BTN raises, SB folds, BB calls; BB calls a flop bet, bets the river, BTN folds
        ("BTN", "raise", 300),
        ("SB", "fold", None),
        ("BB", "call", None),
        ("BB", "check", None),
        ("BTN", "bet", 400),
        ("BB", "call", None),
        ("BB", "check", None),
        ("BTN", "check", None),
        ("BB", "bet", 600),
        ("BTN", "fold", None),
    ],
    (2, 1): [  # BTN folds, SB completes, BB checks; SB bets, BB raises, SB calls; to showdown
        ("BTN", "fold", None),
        ("SB", "call", None),
        ("BB", "check", None),
        ("SB", "bet", 200),
        ("BB", "raise", 800),
        ("SB", "call", None),
        ("SB", "check", None),
        ("BB", "check", None),
        ("SB", "check", None),
        ("BB", "check", None),
    ],
    (3, 1): [("BTN", "fold", None), ("SB", "fold", None)],  # a walk: BB wins the blinds
    # deal 2
    (1, 2): [  # BTN limps, SB raises, BB folds, BTN calls; SB bets the flop, BTN raises, SB folds
        ("BTN", "call", None),
        ("SB", "raise", 400),
        ("BB", "fold", None),
        ("BTN", "call", None),
        ("SB", "bet", 500),
        ("BTN", "raise", 2000),
        ("SB", "fold", None),
    ],
    (2, 2): [  # BTN raises, SB re-raises, BB folds, BTN calls; flop bet-call, turn check-bet-call
        ("BTN", "raise", 250),
        ("SB", "raise", 800),
        ("BB", "fold", None),
        ("BTN", "call", None),
        ("SB", "bet", 1000),
        ("BTN", "call", None),
        ("SB", "check", None),
        ("BTN", "bet", 2000),
        ("SB", "call", None),
        ("SB", "check", None),
        ("BTN", "check", None),
    ],
    (3, 2): [  # BTN folds, SB raises, BB calls; flop checked; turn bet-call; river checked
        ("BTN", "fold", None),
        ("SB", "raise", 300),
        ("BB", "call", None),
        ("SB", "check", None),
        ("BB", "check", None),
        ("SB", "bet", 300),
        ("BB", "call", None),
        ("SB", "check", None),
        ("BB", "check", None),
    ],
}
# Counted by hand from the histories: per hand and position, (VPIP, PFR, bets and raises
# after the flop, calls after the flop, saw the flop, went to showdown) and the preflop.
HAND_COUNTS: dict[tuple[int, int], dict[str, tuple[tuple[int, ...], str]]] = {
    (1, 1): {
        "BTN": ((1, 1, 1, 0, 1, 0), "raise"),  # flop bet; folded the river
        "SB": ((0, 0, 0, 0, 0, 0), "fold"),
        "BB": ((1, 0, 1, 1, 1, 0), "call"),  # flop call, river bet; won without a showdown
    },
    (2, 1): {
        "BTN": ((0, 0, 0, 0, 0, 0), "fold"),
        "SB": ((1, 0, 1, 1, 1, 1), "call"),  # the completed blind is voluntary
        "BB": ((0, 0, 1, 0, 1, 1), "check"),  # the big blind's check is not
    },
    (3, 1): {
        "BTN": ((0, 0, 0, 0, 0, 0), "fold"),
        "SB": ((0, 0, 0, 0, 0, 0), "fold"),
        "BB": ((0, 0, 0, 0, 0, 0), "check"),  # a walk: no flop seen
    },
    (1, 2): {
        "BTN": ((1, 0, 1, 0, 1, 0), "call"),  # limp-call; the flop raise
        "SB": ((1, 1, 1, 0, 1, 0), "raise"),
        "BB": ((0, 0, 0, 0, 0, 0), "fold"),
    },
    (2, 2): {
        "BTN": ((1, 1, 1, 1, 1, 1), "raise"),  # flop call, turn bet
        "SB": ((1, 1, 1, 1, 1, 1), "raise"),  # flop bet, turn call
        "BB": ((0, 0, 0, 0, 0, 0), "fold"),
    },
    (3, 2): {
        "BTN": ((0, 0, 0, 0, 0, 0), "fold"),
        "SB": ((1, 1, 1, 0, 1, 1), "raise"),  # turn bet
        "BB": ((1, 0, 0, 1, 1, 1), "call"),  # turn call
    },
}
POSITIONS = ("BTN", "SB", "BB")


def seat_of(config: Any, deal: int, position: str) -> int:
    button = config.buttons[deal]
    return (button - 1 + POSITIONS.index(position)) % config.seats + 1


def play_scripted(engine: Engine) -> None:
    config = engine.state.config
    seqs = dict.fromkeys(config.tables, 0)
    now = 0.0

    def send(table: int, kind: str, **fields: Any) -> None:
        nonlocal now
        now += 1.0
        seqs[table] += 1
        out = engine.submit(console_event(config.id, table, seqs[table], kind, **fields), now)
        assert out.ok, (table, kind, fields, out.ack)
        engine.tick(now)

    for round_ in range(config.deals):
        for t in config.tables:
            deal = config.deal_orders[t][round_]
            send(t, "start", deal=deal)
            for position, kind, amount in HISTORIES[(t, deal)]:
                fields: dict[str, Any] = {"seat": seat_of(config, deal, position)}
                if amount is not None:
                    fields["amount"] = amount
                send(t, kind, **fields)
            h = engine.state.hand(t, deal)
            assert h is not None
            if h.status != "complete":
                computed = h.hand.computed_winners()
                assert computed is not None
                send(t, "win", seats=sorted(computed))
            assert engine.state.hand(t, deal).status == "complete"  # type: ignore[union-attr]


def test_the_statistics_of_a_hand_counted_session() -> None:
    config = make_config(seats=3, deals=2)
    engine = Engine(config, make_decks(config), release_delay=0.0)
    engine.start_feed()
    keys = [(a, topic_name("stats")) for a in AUDIENCES]
    keys += [(LIVE, topic_name("dealstats", d)) for d in (1, 2)]
    for key in keys:
        engine.projecting.materialize(key)
    play_scripted(engine)
    engine.projecting.flush()
    state = engine.state
    for audience in AUDIENCES:  # every deal is released: both audiences count the same
        payload = engine.payload((audience, "stats"))
        assert engine.projecting.projections.docs[(audience, "stats")].doc == payload
        assert payload["deals"] == [1, 2] and payload["poker"] is True
        by_id = {p["id"]: p for p in payload["players"]}
        assert len(by_id) == 9
        for t in config.tables:
            for s in range(1, 4):
                team, name = state.seat_holder(t, s, None)  # type: ignore[misc]
                want = [0] * 6
                for d in (1, 2):
                    position = next(p for p in POSITIONS if seat_of(config, d, p) == s)
                    for k, v in enumerate(HAND_COUNTS[(t, d)][position][0]):
                        want[k] += v
                vpip, pfr, aggressive, calls, saw, shown = want
                row = by_id[f"{team.code}-{s}"]
                assert row["name"] == name
                assert row["counts"] == {
                    "hands": 2,
                    "vpip": vpip,
                    "pfr": pfr,
                    "aggressive": aggressive,
                    "calls": calls,
                    "saw_flop": saw,
                    "showdown": shown,
                }, (t, s)
                assert row["vpip"] == vpip * 50.0 and row["pfr"] == pfr * 50.0
                assert row["af"] == (round(aggressive / calls, 2) if calls else None)
                assert row["wtsd"] == (round(100 * shown / saw, 1) if saw else None)
                assert row["stack"] is None  # no hand in play
    for d in (1, 2):
        live = engine.payload((LIVE, f"dealstats:{d}"))
        assert engine.projecting.projections.docs[(LIVE, f"dealstats:{d}")].doc == live
        for position in POSITIONS:
            s = seat_of(config, d, position)
            seat = live["seats"][s - 1]
            counted = {"raise": 0, "call": 0, "fold": 0, "check": 0}
            for t in config.tables:
                counted[HAND_COUNTS[(t, d)][position][1]] += 1
            assert seat["preflop"] == counted, (d, position)
            assert seat["tables"] == 3
            chips = [state.hand(t, d).result[s] for t in config.tables]  # type: ignore[union-attr]
            assert seat["field_avg"] == round(sum(chips) / 3, 2)
            assert [r["chips"] for r in seat["rows"]] == chips
            assert [r["swing"] for r in seat["rows"]] == [
                round(c - sum(chips) / 3, 2) for c in chips
            ]
            assert seat["best"]["chips"] == max(chips)
    d1 = engine.payload((LIVE, "dealstats:1"))
    bb1 = seat_of(config, 1, "BB")
    assert {1, 3} <= set(d1["seats"][bb1 - 1]["won"])  # the river bet and the walk
    assert f"2 of 3 tables folded seat {seat_of(config, 1, 'BTN')} preflop" in d1["summary"]
    d2 = engine.payload((LIVE, "dealstats:2"))
    assert f"3 of 3 tables raised seat {seat_of(config, 2, 'SB')} preflop" in d2["summary"]
    assert 1 in d2["seats"][seat_of(config, 2, "BTN") - 1]["won"]  # the flop raise took it
    assert 1 not in d2["seats"][seat_of(config, 2, "SB") - 1]["won"]


def test_a_stack_and_pot_show_while_a_hand_is_in_play() -> None:
    config = make_config(seats=3, deals=2)
    engine = Engine(config, make_decks(config), release_delay=0.0)
    engine.start_feed()
    engine.projecting.materialize((LIVE, "stats"))
    deal = config.deal_orders[1][0]
    for seq, (kind, fields) in enumerate(
        [
            ("start", {"deal": deal}),
            ("raise", {"seat": seat_of(config, deal, "BTN"), "amount": 300}),
        ],
        1,
    ):
        assert engine.submit(console_event(config.id, 1, seq, kind, **fields), float(seq)).ok
    changes = {c.key: c for c in engine.projecting.flush()}
    ops = changes[(LIVE, "stats")].patch
    # An action moves its player's stack and its table's pot, field by field.
    assert ops and {op["path"] for op in ops} <= {
        *(f"/players/{i}/{f}" for i in range(9) for f in ("stack", "stack_bb")),
        *(f"/tables/0/{f}" for f in ("deal", "pot", "pot_bb")),
    }, ops
    payload = engine.payload((LIVE, "stats"))
    assert engine.projecting.projections.docs[(LIVE, "stats")].doc == payload
    team, _ = engine.state.seat_holder(1, seat_of(config, deal, "BTN"), deal)  # type: ignore[misc]
    row = next(
        p for p in payload["players"] if p["id"] == f"{team.code}-{seat_of(config, deal, 'BTN')}"
    )
    assert (row["stack"], row["stack_bb"]) == (9700, 97.0)
    assert payload["tables"][0] == {"table": 1, "deal": deal, "pot": 450, "pot_bb": 4.5}
    public = engine.payload((PUBLIC, "stats"))
    assert all(p["stack"] is None for p in public["players"]) and public["tables"] == []
    assert engine.payload((PUBLIC, f"dealstats:{deal}")) is None  # embargoed


# ------------------------------------------------------------------ incremental = recount

STATS_KEYS = [(a, topic_name("stats")) for a in AUDIENCES]


def stats_keys(config: Any) -> list[tuple[str, str]]:
    deals = range(1, config.deals + 1)
    return STATS_KEYS + [(a, topic_name("dealstats", d)) for a in AUDIENCES for d in deals]


def follow(engine: Engine, keys: list[tuple[str, str]]) -> Client:
    """A client of the statistics' topics only (every other topic the engine hands out
    whole or patched is taken, not checked)."""
    client = Client()
    for key in keys:
        payload = engine.projecting.materialize(key)
        if payload is not None:
            client.states[key] = clone(payload)
    return client


def take(engine: Engine, client: Client) -> None:
    """The engine's changes; those of the statistics applied as a browser would."""
    for change in engine.projecting.flush():
        if change.key[1].split(":")[0] not in ("stats", "dealstats"):
            continue
        if change.patch is None:
            client.states[change.key] = clone(change.payload)
        else:
            patch = json.loads(json.dumps(change.patch))
            client.states[change.key] = apply_patch(client.states[change.key], patch)


def assert_recounted(engine: Engine, client: Client, keys: list[tuple[str, str]]) -> None:
    state, released = engine.state, engine.release.released
    for audience, name in keys:
        if name == "stats":
            built = stats_payload(state, released, audience)
        else:
            built = dealstats_payload(state, int(name.split(":")[1]), released, audience)
        rec = engine.projecting.projections.docs.get((audience, name))
        if built is None:
            assert rec is None, name
            continue
        assert rec is not None and rec.doc == built, (audience, name)
        assert client.states[(audience, name)] == built, (audience, name)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_the_tally_equals_a_recount_after_every_event(seed: int, noise: bool) -> None:
    """Undo, void, reopen, disputes and their confirmations, dealer errors, penalties."""
    client = Client()
    step = 0

    def check(engine: Engine) -> None:
        nonlocal step
        if not engine.projecting.projections.active:
            engine.start_feed()
            client.subscribe_all(engine)
        engine.tick(float(step))
        step += 1
        client_changes(engine, client)
        assert_recounted(engine, client, stats_keys(engine.state.config))

    run(seed, corrections_noise=noise, after_each=check)


def test_the_tally_follows_groups_released_one_by_one_and_a_roster_fix() -> None:
    config = make_config(seats=3, groups=3, deals=3)
    decks = make_decks(config)
    engine = Engine(config, decks, release_delay=0.0)
    engine.start_feed()
    client = Client()
    client.subscribe_all(engine)
    keys = stats_keys(config)
    now = 0.0
    fixed = False
    public_seen: set[int] = set()
    for raw in simulate_session(config, decks, random.Random(3), mean_gap=1.0):
        now += 1.0
        assert engine.submit(raw, now).ok
        engine.tick(now)
        if not fixed and now > 40:
            held = engine.state.seat_holder(1, 2, None)
            assert held is not None
            fix = {"op": "roster", "team": held[0].id, "table": 1, "name": "A. Renamed"}
            assert engine.control({**fix, "by": "TD"}, now).ok
            fixed = True
        client_changes(engine, client)
        assert_recounted(engine, client, keys)
        public = engine.payload((PUBLIC, "stats"))
        shown = engine.release.released
        released = {d for d in range(1, 4) if any(shown(g, d) for g in config.groups)}
        assert set(public["deals"]) <= released
        public_seen |= set(public["deals"])
    assert fixed and public_seen == {1, 2, 3}
    names = {p["name"] for p in engine.payload((LIVE, "stats"))["players"]}
    assert "A. Renamed" in names


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_game_s_sample_session_recounts(game: str) -> None:
    """Each game's sample session (stages, piecepack, RPS Poker, mahjong): the tally equals
    the recount every few events; mahjong has no betting: hands and swings only."""
    config, decks, events = load_game(game)
    engine = Engine(config, decks, release_delay=0.0)
    engine.start_feed()
    keys = stats_keys(config)
    client = follow(engine, keys)
    every = max(1, len(events) // 20)
    for i, raw in enumerate(events):
        now = float(i)
        engine.submit(raw, now)  # (a session may hold refusals: they change nothing)
        engine.tick(now)
        take(engine, client)
        if i % every == 0:
            assert_recounted(engine, client, keys)
    assert_recounted(engine, client, keys)
    payload = engine.payload((LIVE, "stats"))
    poker = game != "mcr"
    assert payload["poker"] is poker
    assert any(p["hands"] for p in payload["players"])
    assert any(p["swing"] for p in payload["players"])
    if poker:
        assert any(p["vpip"] for p in payload["players"])
    else:
        assert all(p["vpip"] is None and p["af"] is None for p in payload["players"])
