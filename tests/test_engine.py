"""The engine: console events through validation, sequencing, the tournament and the payloads."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hub.domain.config import parse_config
from hub.domain.errors import Rejection
from hub.engine.core import Engine
from hub.engine.events import parse_event
from hub.engine.sequencer import Sequencer
from tests.factories import config_data, make_config, make_decks, without_seqs


def ev(table: int, seq: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {
        "v": 1,
        "tournament": "t-test",
        "table": table,
        "console": f"table{table}",
        "seq": seq,
        "type": kind,
        **fields,
    }


class Console:
    """Numbers events per table, like a real console."""

    def __init__(self, engine: Engine, table: int) -> None:
        self.engine, self.table, self.seq = engine, table, 0

    def send(self, kind: str, now: float = 0.0, **fields: Any) -> Any:
        self.seq += 1
        return self.engine.submit(ev(self.table, self.seq, kind, **fields), now)

    def ok(self, kind: str, **fields: Any) -> Any:
        out = self.send(kind, **fields)
        assert out.ok, out.ack
        return out


@pytest.fixture
def engine() -> Engine:
    config = make_config(seats=3, deals=4)
    return Engine(config, make_decks(config))


def all_payloads(engine: Engine) -> dict[Any, Any]:
    return {key: copy.deepcopy(engine.payload(key)) for key in engine.topic_keys()}


# ---------------------------------------------------------------- schema
@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ([], "must be a map"),
        ({"v": 1}, "missing field"),
        ({**ev(1, 1, "fold", seat=1), "amout": 5}, "unknown field"),
        (ev(1, 1, "fold", seat="1"), "'seat' must be an integer"),
        (ev(1, 1, "fold", seat=True), "'seat' must be an integer"),
        (ev(1, 1, "bet", seat=1), "needs field 'amount'"),
        (ev(1, 1, "teleport"), "unknown event type"),
        ({**ev(1, 1, "undo"), "v": 2}, "unsupported protocol version"),
        (ev(1, 0, "undo"), "'seq' must be at least 1"),
        (ev(1, 1, "win", seats=[2, 2]), "names a seat twice"),
        (ev(1, 1, "win", seats=[]), "list of 1 to 10"),
        ({**ev(1, 1, "undo"), "console": ""}, "non-empty string"),
    ],
)
def test_malformed_events_are_bad_schema(raw: Any, fragment: str) -> None:
    with pytest.raises(Rejection) as info:
        parse_event(raw)
    assert info.value.code == "bad_schema"
    assert fragment in info.value.message


def test_sequencer_duplicates_and_gaps() -> None:
    seq = Sequencer()
    assert seq.check("c", 1) == "new"
    seq.record("c", 1, {"seq": 1, "ok": True})
    assert seq.check("c", 1) == "duplicate"
    assert seq.check("c", 3) == "gap"
    assert seq.expected("c") == 2
    seq.restore({"c": 5, "d": 2})
    assert seq.expected("c") == 6 and seq.expected("d") == 3
    seq.restore({"c": 1})
    assert seq.expected("c") == 6  # never lowered


# ---------------------------------------------------------------- rejections change nothing
def test_rejections_carry_codes_and_change_nothing(engine: Engine) -> None:
    c1 = Console(engine, 1)
    order = engine.state.config.deal_orders[1]
    before = all_payloads(engine)
    wrong = order[1]
    cases = [
        (c1.send("fold", seat=1), "hand_not_started"),
        (c1.send("start", deal=wrong), "wrong_deal"),
        (c1.send("start", deal=99), "unknown_deal"),
        (c1.send("fold", seat=9), "unknown_seat"),
    ]
    for outcome, code in cases:
        assert not outcome.ok and outcome.code == code, outcome.ack
        # Journaled as a refusal (the seq is used up), never as an event.
        assert outcome.record is not None and outcome.record["kind"] == "refused"
        assert outcome.record["code"] == code and outcome.record["seq"] == outcome.ack["seq"]
    after = all_payloads(engine)
    assert without_seqs(before) == without_seqs(after)
    c1.ok("start", deal=order[0])
    spec = engine.state.tables[1].current
    assert spec is not None
    to_act = spec.hand.to_act
    assert to_act is not None
    other = to_act % 3 + 1
    snapshot = all_payloads(engine)
    assert c1.send("call", seat=other).code == "out_of_turn"
    assert c1.send("check", seat=to_act).code == "not_allowed"
    assert c1.send("raise", seat=to_act, amount=5000).code == "over_pot_limit"
    assert c1.send("raise", seat=to_act, amount=20000).code == "over_cap"
    assert c1.send("raise", seat=to_act, amount=150).code == "below_min_raise"
    assert c1.send("start", deal=order[1]).code == "hand_in_progress"
    later = all_payloads(engine)
    assert without_seqs(snapshot) == without_seqs(later)


def test_envelope_checks(engine: Engine) -> None:
    bad_t = {**ev(1, 1, "undo"), "tournament": "other"}
    assert engine.submit(bad_t, 0).code == "unknown_tournament"
    assert engine.submit(ev(7, 1, "undo"), 0).code == "unknown_table"
    foreign = engine.submit(ev(1, 2, "undo"), 0, channel_table=2)
    # Table 1's console on table 2's channel: answered on that channel's error channel, and
    # table 1's seqs are untouched (issue #9.1).
    assert foreign.code == "wrong_channel" and foreign.console is None
    assert not foreign.seq_advanced
    forged = {**ev(1, 2, "undo"), "console": "operator"}
    assert engine.submit(forged, 0).code == "unknown_console"
    # A refusal of its own event used up the seq (the console moved on); a resend is
    # answered the same.
    assert engine.admission.sequencer.expected("table1") == 2
    again = engine.submit(bad_t, 0)
    assert again.duplicate and again.ack["code"] == "unknown_tournament"
    assert engine.admission.sequencer.expected("operator") == 1


def test_bad_schema_with_an_address_uses_up_its_seq(engine: Engine) -> None:
    out = engine.submit(ev(1, 1, "bet", seat=1), 0)  # no amount
    assert out.code == "bad_schema" and out.seq_advanced and out.console == "table1"
    assert engine.submit(ev(1, 2, "start", deal=engine.state.config.deal_orders[1][0]), 0).ok


def test_duplicates_reacked_and_gaps_reported(engine: Engine) -> None:
    deal = engine.state.config.deal_orders[1][0]
    first = engine.submit(ev(1, 1, "start", deal=deal), 0)
    assert first.ok and first.record is not None
    again = engine.submit(ev(1, 1, "start", deal=deal), 0)
    assert again.duplicate and again.ok and again.record is None
    gap = engine.submit(ev(1, 5, "fold", seat=1), 0)
    assert gap.code == "seq_gap" and gap.ack["expected"] == 2
    # A rejected event consumes its seq: the console moves on.
    rejected = engine.submit(ev(1, 2, "start", deal=deal), 0)
    assert rejected.code == "hand_in_progress" and rejected.seq_advanced
    assert engine.submit(ev(1, 2, "start", deal=deal), 0).duplicate
    assert engine.admission.sequencer.expected("table1") == 3


# ---------------------------------------------------------------- hands and corrections
def play_fold_out(console: Console, engine: Engine) -> dict[int, int]:
    """Everyone folds to the big blind: the small blind loses 50, the big blind wins 50."""
    table = engine.state.tables[console.table]
    deal = table.next_deal()
    console.ok("start", deal=deal)
    current = table.current
    assert current is not None
    while current.hand.street != "complete":
        seat = current.hand.to_act
        assert seat is not None
        console.ok("fold", seat=seat)
    result = current.result
    assert result is not None
    return result


def test_fold_out_scores_blinds(engine: Engine) -> None:
    c1 = Console(engine, 1)
    result = play_fold_out(c1, engine)
    assert sorted(result.values()) == [-50, 0, 50]
    assert sum(result.values()) == 0


def test_showdown_with_known_cards_and_dispute(engine: Engine) -> None:
    c1 = Console(engine, 1)
    table = engine.state.tables[1]
    c1.ok("start", deal=table.next_deal())
    current = table.current
    assert current is not None
    while current.hand.street not in ("showdown", "complete"):
        seat = current.hand.to_act
        assert seat is not None
        legal = current.hand.legal(seat)
        c1.ok("call" if legal.call else "check", seat=seat)
    assert current.status == "showdown"
    computed = current.hand.computed_winners()
    assert computed
    loser = next(s for s in (1, 2, 3) if s not in computed)
    out = c1.ok("win", seats=[loser])
    assert current.status == "disputed" and current.result is None
    assert engine.payload(("live", "ops"))["disputes"][0]["declared"] == [loser]
    # A console may confirm; so may the operator (journaled as the operator console).
    confirmed = engine.control({"op": "confirm", "table": 1, "deal": current.deal, "by": "TD"}, 1.0)
    assert confirmed.ok and confirmed.record is not None
    assert confirmed.record["console"] == "operator"
    assert current.status == "complete"
    assert {s for s, v in (current.result or {}).items() if v > 0} <= set(computed)
    assert out.record is not None


def test_undo_void_reopen(engine: Engine) -> None:
    c1 = Console(engine, 1)
    table = engine.state.tables[1]
    deal = table.next_deal()
    c1.ok("start", deal=deal)
    assert c1.send("undo").ok
    assert table.current is None and deal not in table.hands  # the start itself undone
    assert c1.send("undo").code == "hand_not_started"
    result = play_fold_out(c1, engine)
    played = engine.state.config.deal_orders[1][0]
    assert engine.state.board.result(1, played) == result
    assert c1.send("undo").code == "hand_not_started"
    c1.ok("reopen", deal=played)
    assert engine.state.board.result(1, played) is None  # leaves the scores while reopened
    assert c1.send("start", deal=table.next_deal()).code == "hand_in_progress"
    c1.ok("undo")  # retract the last fold: the hand is open again
    current = table.current
    assert current is not None and current.hand.street == "preflop"
    assert c1.send("void").code == "not_allowed"  # a reopened hand is no misdeal
    void = {"op": "void", "table": 1, "deal": played, "reason": "foreign card", "by": "TD"}
    assert engine.control(void, 0.0).ok
    assert current.status == "void" and table.current is None
    assert engine.state.board.result(1, played) == {1: 0, 2: 0, 3: 0}
    assert c1.send("void", deal=played).code == "not_allowed"
    c1.ok("reopen", deal=played)
    assert c1.send("confirm", deal=played).code == "not_allowed"  # betting is open again
    kinds = [c["type"] for c in engine.state.corrections]
    assert kinds == ["undo", "reopen", "undo", "void", "reopen"]


# ---------------------------------------------------------------- release rule
def test_public_sees_a_deal_only_after_every_table(engine: Engine) -> None:
    config = engine.state.config
    consoles = {t: Console(engine, t) for t in config.tables}
    # Give every table the same first deal by playing until each reaches the same one.
    target = config.deal_orders[1][0]
    for t, console in consoles.items():
        while engine.state.tables[t].next_deal() != target:
            play_fold_out(console, engine)
    done_before = engine.state.tables
    del done_before
    for i, (_t, console) in enumerate(consoles.items()):
        public_deal = engine.payload(("public", f"deal:{target}"))
        public_compare = engine.payload(("public", f"compare:{target}:1"))
        assert public_deal is None and public_compare is None
        standings = engine.payload(("public", "standings"))
        assert target not in standings["deals"]["complete"]["G0"]
        play_fold_out(console, engine)
        if i < len(consoles) - 1:
            assert not engine.release.released("G0", target)
    assert engine.release.released("G0", target)
    assert engine.payload(("public", f"deal:{target}")) is not None
    standings = engine.payload(("public", "standings"))
    assert target in standings["deals"]["complete"]["G0"]


def test_release_delay_waits_for_tick() -> None:
    config = make_config(seats=2, deals=2, release_delay=30)
    engine = Engine(config, make_decks(config))
    consoles = [Console(engine, t) for t in config.tables]
    deal = 0
    for console in consoles:
        table = engine.state.tables[console.table]
        while table.next_deal() is not None:
            result = play_fold_out(console, engine)
            assert result
            deal = max(deal, 1)
    assert not engine.release.released("G0", 1)
    assert engine.tick(10.0) == set()
    changed = engine.tick(31.0)
    assert ("public", "standings") in changed
    assert engine.release.released("G0", 1) and engine.release.released("G0", 2)


def test_public_table_topic_hides_the_hand(engine: Engine) -> None:
    c1 = Console(engine, 1)
    c1.ok("start", deal=engine.state.tables[1].next_deal())
    public = engine.payload(("public", "table:1"))
    live = engine.payload(("live", "table:1"))
    assert public is not None and live is not None
    assert "deal" not in public and "actions" not in public and "board" not in public
    assert all("hole" not in s for s in public["seats"])
    assert live["deal"] is not None and all("hole" in s for s in live["seats"])
    # Nothing that moves with this table's own play: no playing/idle, no completed count.
    assert set(public) == {"table", "group", "deals_total", "seats", "released", "showdown"}
    assert public["showdown"] is None
    before = engine.payload(("public", "table:1"))
    play = Console(engine, 2)
    play_fold_out(play, engine)
    assert engine.payload(("public", "table:1")) == before


def test_a_deal_goes_public_only_when_every_group_has_played_it() -> None:
    """Every group is dealt the same deck order of a deal: a deal finished by one group must
    not show its cards, actions or scores while another group has yet to play it."""
    config = make_config(seats=2, deals=2, groups=2)
    engine = Engine(config, make_decks(config))
    consoles = {t: Console(engine, t) for t in config.tables}
    first = {t: config.deal_orders[t][0] for t in config.tables}
    g0, g1 = (config.groups[g].tables for g in ("G0", "G1"))
    target = first[g0[0]]
    for t in g0:  # group G0 plays every deal
        while engine.state.tables[t].next_deal() is not None:
            play_fold_out(consoles[t], engine)
    assert engine.state.board.deal_complete("G0", target)
    engine.control({"op": "onair", "slot": "compare", "value": {"deal": target}}, 0)
    for deal_no in (1, 2):
        assert engine.payload(("public", f"deal:{deal_no}")) is None
        assert engine.payload(("public", f"compare:{deal_no}:1")) is None
    standings = engine.payload(("public", "standings"))
    assert standings["deals"]["complete"] == {"G0": [], "G1": []}
    assert all(row["chips"] == 0 for row in standings["like_for_like"]["teams"])
    assert engine.payload(("public", "onair"))["slots"]["compare"] == {"visible": False}
    for t in g1:
        while engine.state.tables[t].next_deal() is not None:
            play_fold_out(consoles[t], engine)
    assert engine.release.released("G0", 1) and engine.release.released("G1", 2)
    public = engine.payload(("public", "deal:1"))
    assert public is not None and public["hole"] and public["released"] == ["G0", "G1"]
    assert engine.payload(("public", "onair"))["slots"]["compare"]["deal"] == target


def test_resent_events_get_their_original_answer_after_a_restore(engine: Engine) -> None:
    """A resend is answered as the original was, also after a rebuild from the journal and
    however old: a refusal stays a refusal (with its code), an acceptance keeps its position."""
    deal = engine.state.config.deal_orders[1][0]
    started = engine.submit(ev(1, 1, "start", deal=deal), 0)
    engine.admission.sequencer.set_position("table1", 1, "5-0")
    refused = engine.submit(ev(1, 2, "start", deal=deal), 0)
    assert refused.code == "hand_in_progress"
    for _ in range(300):  # far more than any window of recent answers
        engine.submit(ev(1, engine.admission.sequencer.expected("table1"), "undo", deal=99), 0)
    fresh = Engine(engine.state.config, engine.state.decks)
    assert started.record is not None
    fresh.restore(started.record, position="5-0")
    fresh.admission.sequencer.restore_rejected({("table1", 2): refused.ack})
    fresh.admission.sequencer.restore(engine.admission.sequencer.state())
    for hub in (engine, fresh):
        again = hub.submit(ev(1, 2, "start", deal=deal), 0)
        assert again.duplicate and not again.ok and again.ack["code"] == "hand_in_progress"
        first = hub.submit(ev(1, 1, "start", deal=deal), 0)
        assert first.duplicate and first.ok and first.ack["position"] == "5-0"
    # A journal holding a record twice rebuilds the same state (the copy is skipped).
    assert fresh.restore(started.record) == set() and fresh.admission.restore_skipped == 1


def test_onair_control(engine: Engine) -> None:
    value = {"deal": 3, "seat": 2, "visible": True}
    out = engine.control({"op": "onair", "slot": "compare", "value": value}, 0)
    assert out.ok and out.record is not None
    assert engine.payload(("live", "onair"))["slots"]["compare"]["deal"] == 3
    # Deal 3 is not public yet: the public on-air state does not even name it.
    assert engine.payload(("public", "onair"))["slots"]["compare"] == {"visible": False}
    bad = engine.control({"op": "onair", "slot": "nope", "value": {}}, 0)
    assert not bad.ok and bad.code == "bad_request"
    fresh = Engine(engine.state.config, engine.state.decks)
    fresh.restore(out.record)
    assert fresh.payload(("live", "onair")) == engine.payload(("live", "onair"))


def test_projection_if_the_hand_ended_now(engine: Engine) -> None:
    c1 = Console(engine, 1)
    table = engine.state.tables[1]
    c1.ok("start", deal=table.next_deal())
    current = table.current
    assert current is not None
    projection = engine.payload(("live", "projection"))
    assert projection is not None and [h["table"] for h in projection["hands"]] == [1]
    first = {int(s): v for s, v in projection["hands"][0]["result"].items()}
    assert sum(first.values()) == 0 and sorted(first.values())[0] >= -100
    # At showdown the projection is exactly what the cards will award.
    while current.hand.street != "showdown":
        seat = current.hand.to_act
        assert seat is not None
        c1.ok("call" if current.hand.legal(seat).call else "check", seat=seat)
    projected = current.hand.if_ended_now()
    assert projected == current.hand.copy().settle(None)
    assert engine.payload(("public", "projection")) is None
    n = engine.state.config.seats
    points = sum(t["points"] for t in engine.payload(("live", "projection"))["teams"])
    assert points == n * n * (n + 1) / 2


# ---------------------------------------------------------------- issue #9: console isolation
@pytest.mark.parametrize("listed", [True, False], ids=["consoles-listed", "no-allow-list"])
def test_a_console_cannot_stall_another_table_through_its_own_channel(listed: bool) -> None:
    """Issue #9.1: with table 2's credentials, publish on table 2's channel events that name
    table 1's console, seqs 1..40. Table 1's seqs are untouched, nothing of table 1's answers
    is told, and table 1's real events are then accepted. (Without a [consoles] allow-list a
    console is bound to the table it first wrote.)"""
    data = config_data(seats=3, deals=4)
    if listed:
        data["consoles"] = {f"table{t}": t for t in (1, 2, 3)}
    config = parse_config(data, "<test>")
    engine = Engine(config, make_decks(config))
    deal = engine.state.config.deal_orders[1][0]
    if not listed:  # table 1's console has written its table once
        assert engine.submit(ev(1, 1, "start", deal=deal), 0, channel_table=1).ok
        assert engine.submit(ev(1, 2, "undo"), 0, channel_table=1).ok
    first = engine.admission.sequencer.expected("table1")
    for seq in range(first, first + 40):
        forged = {**ev(1, seq, "start", deal=deal), "table": 1}
        out = engine.submit(forged, 0, channel_table=2)
        assert out.code == "wrong_channel" and out.console is None and not out.duplicate
        assert not out.seq_advanced and "position" not in out.ack
        forged_t2 = {**forged, "table": 2}
        assert engine.submit(forged_t2, 0, channel_table=2).code == "wrong_channel"
    assert engine.admission.sequencer.expected("table1") == first
    real = engine.submit(ev(1, first, "start", deal=deal), 0, channel_table=1)
    assert real.ok and not real.duplicate
    # And a resend of an accepted event on the wrong channel reveals nothing either.
    probe = engine.submit(ev(1, first, "start", deal=deal), 0, channel_table=2)
    assert probe.code == "wrong_channel" and not probe.duplicate


@pytest.mark.parametrize("seq", [0, -1, -(2**40), 2**53, 2**60])
def test_seq_out_of_range_is_bad_schema_and_changes_nothing(engine: Engine, seq: int) -> None:
    """Issue #9.5: seq <= 0 was acknowledged "ok, duplicate" unvalidated; seq >= 2^53 got
    seq_gap."""
    deal = engine.state.config.deal_orders[1][0]
    out = engine.submit(ev(1, seq, "start", deal=deal), 0, channel_table=1)
    assert out.code == "bad_schema" and not out.ok and not out.duplicate
    assert "seq" in (out.message or "") and not out.seq_advanced
    assert engine.admission.sequencer.expected("table1") == 1
    assert engine.state.tables[1].current is None


# ---------------------------------------------------------------- clearer refusals (issue 12.8)
@pytest.mark.parametrize("field", ["amount", "seq", "deal", "seat", "table"])
def test_a_too_large_integer_is_refused_as_too_large_with_the_limit(field: str) -> None:
    raw = ev(1, 1, "bet", seat=1, amount=300, deal=1)
    raw[field] = 2**60
    with pytest.raises(Rejection) as info:
        parse_event(raw)
    assert info.value.code == "bad_schema"
    assert info.value.message == (
        f"field '{field}' is too large: at most 9007199254740991 (2^53 - 1), got {2**60}"
    )


def test_the_largest_integer_is_accepted_and_a_negative_one_is_below_the_minimum() -> None:
    assert parse_event(ev(1, 1, "bet", seat=1, amount=2**53 - 1)).amount == 2**53 - 1
    with pytest.raises(Rejection) as info:
        parse_event(ev(1, 1, "bet", seat=1, amount=-1))
    assert info.value.message == "field 'amount' must be at least 0, got -1"


def test_undo_after_the_hand_ended_points_to_reopen(engine: Engine) -> None:
    c1 = Console(engine, 1)
    first = engine.state.config.deal_orders[1][0]
    c1.ok("start", deal=first)
    while (current := engine.state.tables[1].current) is not None:
        seat = current.hand.to_act
        assert seat is not None
        c1.ok("fold", seat=seat)
    out = c1.send("undo")
    assert not out.ok
    assert out.code == "hand_not_started"
    assert out.ack["error"] == (
        f"no hand is in progress at table 1: deal {first} has ended; "
        f"send 'reopen' for deal {first} first, then 'undo'"
    )
    # What the refusal advises works: reopen, then undo.
    c1.ok("reopen", deal=first)
    c1.ok("undo")


def test_undo_before_any_hand_still_says_only_that_no_hand_is_in_progress(engine: Engine) -> None:
    out = Console(engine, 1).send("undo")
    assert out.code == "hand_not_started"
    assert out.ack["error"] == "no hand is in progress at table 1"


def test_undo_naming_an_earlier_finished_deal_points_to_reopen_that_deal(engine: Engine) -> None:
    c1 = Console(engine, 1)
    first, second = engine.state.config.deal_orders[1][:2]
    for deal in (first, second):
        c1.ok("start", deal=deal)
        while (current := engine.state.tables[1].current) is not None:
            assert current.hand.to_act is not None
            c1.ok("fold", seat=current.hand.to_act)
    out = c1.send("undo", deal=first)
    assert out.code == "hand_not_started"
    assert out.ack["error"] == (
        f"no hand is in progress at table 1: deal {first} has ended; "
        f"send 'reopen' for deal {first} first, then 'undo'"
    )
    unplayed = engine.state.config.deal_orders[1][2]
    out = c1.send("undo", deal=unplayed)
    assert out.ack["error"] == "no hand is in progress at table 1"
