"""Engine snapshots: restoring one and applying the rest of the journal is the same as having
applied the whole journal, whatever the cut (mid-hand, at showdown, disputed, reopened, void)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.domain.bots import choose_action
from hub.domain.deck import DeckOrder
from hub.domain.errors import Rejection
from hub.engine.core import Engine
from hub.engine.events import ConsoleEvent, parse_event
from hub.engine.sequencer import Sequencer
from hub.engine.simulate import simulate_session
from hub.engine.snapshot import restore_state, snapshot
from hub.engine.tournament import DISPUTED, SHOWDOWN, VOID, TournamentState
from hub.wire import codec
from tests.factories import make_config, make_decks
from tests.test_engine_properties import CONFIG as PCONFIG
from tests.test_engine_properties import DECKS as PDECKS
from tests.test_engine_properties import run

CONFIG = make_config(seats=3, deals=3)
DECKS = make_decks(CONFIG)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

Attempt = tuple[ConsoleEvent, float]


def noisy_session(seed: int, decks: Mapping[int, DeckOrder] | None) -> list[Attempt]:
    """Console events as an official might enter them, some refused: bots play every deal at
    every table, mixed with random undo / reopen / void / confirm, dealer errors (exposed,
    early), the operator's voids and penalties, wrong winners (disputes) and confirmations by
    the cards or naming seats. Times are fractional."""
    rng = random.Random(seed)
    state = TournamentState(CONFIG, decks)
    attempts: list[Attempt] = []
    seqs: dict[int | str, int] = dict.fromkeys(state.tables, 0)
    seqs["operator"] = 0
    now = 0.0

    def send(table: int, kind: str, *, operator: bool = False, **fields: Any) -> bool:
        nonlocal now
        now += rng.random() * 3
        who: int | str = "operator" if operator else table
        seqs[who] += 1
        raw = {
            "v": 1,
            "tournament": CONFIG.id,
            "table": table,
            "console": "operator" if operator else f"table{table}",
            "seq": seqs[who],
            "type": kind,
            **{k: v for k, v in fields.items() if v is not None},
        }
        try:
            event = parse_event(raw)
        except Rejection:  # e.g. a reopen before any deal was played: never reaches the state
            return False
        attempts.append((event, now))
        try:
            state.apply(event, now)
        except Rejection:
            return False
        return True

    def some_seats() -> list[int] | None:
        return rng.choice([None, [rng.randint(1, CONFIG.seats)], list(range(1, CONFIG.seats))])

    for _ in range(3000):
        tables = [t for t, s in state.tables.items() if s.current or s.next_deal()]
        if not tables:
            break
        t = rng.choice(tables)
        table = state.tables[t]
        if rng.random() < 0.12:
            played = sorted(table.hands)
            kind = rng.choice(["undo", "reopen", "void", "confirm", "exposed", "early", "penalty"])
            named = kind in ("reopen", "confirm") or (kind == "void" and rng.random() < 0.5)
            deal = rng.choice(played) if played and named else None
            if kind == "exposed":
                send(t, kind, seat=rng.randint(1, CONFIG.seats), card=rng.randint(1, 2))
            elif kind == "penalty":
                chips, points = rng.choice([(100, None), (None, 1), (50, 1)])
                send(
                    t,
                    kind,
                    operator=True,
                    seat=rng.randint(1, 3),
                    amount=chips,
                    points=points,
                    note="slow play",
                    by="TD",
                )
            elif kind == "void" and rng.random() < 0.5:  # the operator's, with a reason
                send(t, kind, operator=True, deal=deal, note="foreign card", by="TD")
            else:
                send(t, kind, deal=deal, seats=some_seats() if kind == "confirm" else None)
            continue
        current = table.current
        if current is None:
            assert send(t, "start", deal=table.next_deal())
        elif current.status == SHOWDOWN:
            computed = current.hand.computed_winners()
            if computed is None:  # no cards: a plausible declaration, or a random one
                right = sorted({min(p.eligible) for p in current.hand.pots() if p.eligible})
            else:
                right = sorted(computed)
            if rng.random() < 0.3:
                send(t, "win", seats=[rng.randint(1, CONFIG.seats)])
            else:
                assert send(t, "win", seats=right)
        elif current.hand.street == "complete":  # a reopened fold-out: close it again
            assert send(t, "confirm", deal=current.deal)
        else:
            seat = current.hand.to_act
            assert seat is not None
            kind, amount = choose_action(current.hand, seat, rng)
            assert send(t, kind, seat=seat, amount=amount)
    for hand in state.disputes():
        send(hand.table, "confirm", deal=hand.deal, seats=some_seats())
    return attempts


def simulated(seed: int) -> list[Attempt]:
    """A `hub.engine.simulate` session (one void, one dispute confirmed, a few undos)."""
    rng = random.Random(seed)
    return [(parse_event(e), e["ts"]) for e in simulate_session(CONFIG, DECKS, rng)]


def observe(state: TournamentState) -> dict[str, Any]:
    """Everything a reader of the state can see, the `Hand` internals included."""
    tables = {}
    for number, table in state.tables.items():
        hands = {}
        for deal_no, h in table.hands.items():
            hand = h.hand
            hands[deal_no] = {
                "status": h.status,
                "result": h.result,
                "inputs": h.inputs,
                "winners": (h.winners, h.declared, h.computed, h.settled_by),
                "flags": (h.reopened, h.started_at, h.finished_at),
                "hand": vars(hand),  # actions, committed, street, to_act, result, pending, ...
                "legal": hand.legal(hand.to_act) if hand.to_act else None,
                "pots": hand.pots(),
            }
        tables[number] = {
            "order": list(table.hands),  # the order hands were started in
            "hands": hands,
            "current": None if table.current is None else table.current.deal,
            "current_is_hand": table.current is None
            or table.current is table.hands[table.current.deal],
            "at": (table.last_event_at, table.last_seq, table.console, table.next_deal()),
        }
    return {
        "tables": tables,
        "board": state.board.as_dict(),
        "counted": list(state.board.results().items()),
        "corrections": state.corrections,
        "penalties": state.penalties,
        "events_applied": state.events_applied,
        "disputes": [(h.table, h.deal) for h in state.disputes()],
    }


def apply(state: TournamentState, event: ConsoleEvent, now: float) -> tuple[str, str] | None:
    """The rejection an event got (code, message), or None when applied."""
    try:
        state.apply(event, now)
    except Rejection as exc:
        return exc.code, exc.message
    return None


def play(attempts: list[Attempt], decks: Mapping[int, DeckOrder] | None) -> TournamentState:
    state = TournamentState(CONFIG, decks)
    for event, now in attempts:
        apply(state, event, now)
    return state


def round_trip(state: TournamentState, decks: Mapping[int, DeckOrder] | None) -> TournamentState:
    data = snapshot(state)
    unpacked = codec.unpack(codec.pack(data))
    assert unpacked == data  # plain data only: no tuples, no objects
    restored = restore_state(CONFIG, decks, unpacked)
    assert snapshot(restored) == data
    return restored


def check_cut(
    attempts: list[Attempt],
    cut: int,
    decks: Mapping[int, DeckOrder] | None,
    every: Callable[[int], bool] = lambda i: True,
) -> None:
    """Snapshot after ``cut`` attempts, restore, then feed both the rest: same answers, same
    observable state (after every event where ``every(i)``), same snapshots."""
    original = play(attempts[:cut], decks)
    restored = round_trip(original, decks)
    assert observe(restored) == observe(original)
    for i, (event, now) in enumerate(attempts[cut:]):
        assert apply(restored, event, now) == apply(original, event, now), event
        if every(i):
            assert observe(restored) == observe(original), (i, event)
    assert observe(restored) == observe(original)
    assert snapshot(restored) == snapshot(original)


@FAST
@given(st.integers(0, 10_000), st.booleans(), st.floats(0.0, 1.0))
def test_restore_then_rest_of_journal_equals_whole_journal(
    seed: int, cards: bool, where: float
) -> None:
    decks = DECKS if cards else None
    attempts = noisy_session(seed, decks)
    check_cut(attempts, round(where * len(attempts)), decks)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_simulated_session_restored_at_any_cut(seed: int, where: float) -> None:
    attempts = simulated(seed)
    check_cut(attempts, round(where * len(attempts)), DECKS)


def first_cut(attempts: list[Attempt], found: Callable[[TournamentState], bool]) -> int | None:
    state = TournamentState(CONFIG, DECKS)
    for i, (event, now) in enumerate(attempts):
        apply(state, event, now)
        if found(state):
            return i + 1
    return None


def hands(state: TournamentState) -> list[Any]:
    return [h for t in state.tables.values() for h in t.hands.values()]


SITUATIONS: dict[str, Callable[[TournamentState], bool]] = {
    "mid_hand": lambda s: any(
        t.current is not None and t.current.inputs and t.current.hand.street in ("flop", "turn")
        for t in s.tables.values()
    ),
    "mid_showdown": lambda s: any(
        t.current is not None and t.current.status == SHOWDOWN for t in s.tables.values()
    ),
    "disputed": lambda s: any(h.status == DISPUTED for h in hands(s)),
    "void_after_settled": lambda s: any(
        h.status == VOID and h.hand.street == "complete" and h.settled_by for h in hands(s)
    ),
    "void_while_disputed": lambda s: any(
        h.status == VOID and h.declared is not None for h in hands(s)
    ),
    "reopened_at_showdown": lambda s: any(
        t.current is not None and t.current.reopened and t.current.status == SHOWDOWN
        for t in s.tables.values()
    ),
    "reopened_fold_out": lambda s: any(
        t.current is not None and t.current.reopened and t.current.hand.street == "complete"
        for t in s.tables.values()
    ),
    "dealer_errors": lambda s: any(
        {"exposed", "early"} <= {i[1] for i in h.inputs} and h.status == "complete"
        for h in hands(s)
    ),
    "penalised": lambda s: len(s.penalties) > 1,
    "confirmed_naming_seats": lambda s: any(
        h.settled_by == "declared" and h.computed is not None for h in hands(s)
    ),
}


@pytest.mark.parametrize("situation", sorted(SITUATIONS))
def test_snapshot_in_each_situation(situation: str) -> None:
    """Search seeds for a cut in the situation; restore there and play on."""
    for seed in range(200):
        attempts = noisy_session(seed, DECKS)
        cut = first_cut(attempts, SITUATIONS[situation])
        if cut is not None:
            check_cut(attempts, cut, DECKS)
            return
    pytest.fail(f"no session reached {situation}")  # pragma: no cover


def test_disputed_hand_keeps_the_unsettled_copy() -> None:
    attempts = simulated(4)
    cut = first_cut(attempts, SITUATIONS["disputed"])
    assert cut is not None
    restored = round_trip(play(attempts[:cut], DECKS), DECKS)
    (disputed,) = restored.disputes()
    assert disputed.hand.street == "showdown" and disputed.hand.result is None
    assert disputed.result is None and disputed.settled_by is None
    assert disputed.declared is not None and disputed.computed is not None
    assert restored.board.result(disputed.table, disputed.deal) is None


def test_unknown_version_and_other_tournament_or_decks_are_refused() -> None:
    state = play(simulated(1)[:40], DECKS)
    data = snapshot(state)
    with pytest.raises(ValueError, match="version 99 is not supported"):
        restore_state(CONFIG, DECKS, {**data, "version": 99})
    with pytest.raises(ValueError, match="version None"):
        restore_state(CONFIG, DECKS, {})
    with pytest.raises(ValueError, match="other deck orders"):
        restore_state(CONFIG, make_decks(CONFIG, "other"), data)
    with pytest.raises(ValueError, match="other deck orders"):
        restore_state(CONFIG, None, data)
    other = make_config(seats=3, deals=3, tid="another")
    with pytest.raises(ValueError, match="not of 'another'"):
        restore_state(other, DECKS, data)


def test_a_snapshot_that_does_not_replay_is_refused() -> None:
    state = play(simulated(1)[:40], DECKS)
    data = codec.unpack(codec.pack(snapshot(state)))
    hand = next(h for t in data["tables"] for h in t["hands"] if len(h["inputs"]) > 1)
    hand["inputs"][1][0] = hand["inputs"][0][0]  # the same seat twice: out of turn
    with pytest.raises(ValueError, match="inputs do not replay: out_of_turn"):
        restore_state(CONFIG, DECKS, data)


def test_sequencer_round_trip() -> None:
    seq = Sequencer()
    for n in range(1, 8):
        ack: dict[str, Any] = {"seq": n, "ok": n != 4}
        if n == 4:
            ack |= {"code": "out_of_turn", "error": "seat 2 is to act, not seat 3"}
        seq.record("table1", n, ack)
        if ack["ok"]:
            seq.set_position("table1", n, f"1700000000000-{n}")
    seq.record("table2", 1, {"seq": 1, "ok": True})
    data = seq.snapshot()
    restored = Sequencer.from_snapshot(codec.unpack(codec.pack(data)))
    assert restored.snapshot() == data
    assert restored.state() == seq.state() == {"table1": 7, "table2": 1}
    for console in ("table1", "table2", "table3"):
        for n in range(0, 10):
            assert restored.previous_ack(console, n) == seq.previous_ack(console, n)
            assert restored.check(console, n) == seq.check(console, n)
    with pytest.raises(ValueError, match="version 2 is not supported"):
        Sequencer.from_snapshot({**data, "version": 2})


def test_a_hand_in_play_must_be_the_current_one() -> None:
    attempts = noisy_session(3, DECKS)
    cut = first_cut(attempts, SITUATIONS["mid_hand"])
    assert cut is not None
    data = codec.unpack(codec.pack(snapshot(play(attempts[:cut], DECKS))))
    table = next(t for t in data["tables"] if t["current"] is not None)
    table["current"] = None
    with pytest.raises(ValueError, match="in_progress but not the current hand"):
        restore_state(CONFIG, DECKS, data)


# -- the engine: snapshot + journal tail == full replay (issue #8.6) ---------------------------


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.booleans(), st.floats(0, 1))
def test_engine_snapshot_plus_tail_equals_a_full_replay(
    seed: int, noise: bool, where: float
) -> None:
    _, records = run(seed, corrections_noise=noise)
    onair = {"kind": "control", "op": "onair", "slot": "seat", "value": {"seat": 2}, "at": 1.0}
    records.insert(len(records) // 3, onair)
    cut = int(len(records) * where)
    full = Engine(PCONFIG, PDECKS)
    for i, record in enumerate(records):
        full.restore(record, position=f"{i + 1}-0")
    head = Engine(PCONFIG, PDECKS)
    for i, record in enumerate(records[:cut]):
        head.restore(record, position=f"{i + 1}-0")
    data = codec.unpack(codec.pack(head.snapshot()))
    assert data == head.snapshot()  # plain data: equal to its own msgpack round trip
    resumed = Engine(PCONFIG, PDECKS)
    resumed.restore_snapshot(data)
    for i, record in enumerate(records[cut:], start=cut):
        resumed.restore(record, position=f"{i + 1}-0")
    for engine in (full, resumed):
        engine.tick(float("inf"))
    assert set(resumed.topic_keys()) == set(full.topic_keys())
    for key in full.topic_keys():
        assert resumed.payload(key) == full.payload(key), key
    assert resumed.snapshot() == full.snapshot()
    assert resumed.admission.sequencer.previous_ack(
        "table1", 1
    ) == full.admission.sequencer.previous_ack("table1", 1)


def test_engine_snapshot_refused_when_it_does_not_fit() -> None:
    engine = Engine(CONFIG, DECKS)
    data = engine.snapshot()
    with pytest.raises(ValueError):
        Engine(CONFIG, DECKS).restore_snapshot({**data, "version": 9})
    with pytest.raises(ValueError):
        Engine(CONFIG, make_decks(CONFIG, "other")).restore_snapshot(data)
    used = Engine(CONFIG, DECKS)
    used.start_feed()
    with pytest.raises(ValueError):
        used.restore_snapshot(data)
