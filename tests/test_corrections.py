"""Every correction procedure of docs/rules.md and docs/protocol.md, as an official runs it:
undo, reopen and its two closes, disputes and confirmations, misdeals and the operator's voids,
dealer errors with concrete deck orders (the card the hub scores is the one the procedure puts
in play), and the tournament director's penalties."""

from __future__ import annotations

from typing import Any

import pytest

from hub.domain.cards import FULL_DECK
from hub.domain.deck import DeckOrder
from hub.domain.scoring import full_recompute
from hub.engine.core import Engine
from tests.factories import make_config, make_decks

# Deal 1, 3 seats, button at seat 1: cards go to seats 2, 3, 1, then 2, 3, 1 again.
TOP = [
    "2c", "3d", "7h", "2d", "3c", "4c",  # hole: seat 2 2c 2d, seat 3 3d 3c, seat 1 7h 4c
    "Kh",  # burn (or the replacement of an exposed hole card)
    "Ac", "Kd", "9s",  # flop
    "4h", "8c",  # burn, turn
    "5s", "Jd",  # burn, river
    "2h", "Qs", "6d",  # the stub: what replaces early cards
]  # fmt: skip
DECK1 = DeckOrder(tuple(TOP + [c for c in FULL_DECK if c not in TOP]), rehearsal=True)


# What each engine of a test journaled (accepted console events and operator commands).
JOURNAL: dict[int, list[dict[str, Any]]] = {}


def journaled(engine: Engine, out: Any) -> Any:
    if out.record is not None:
        JOURNAL.setdefault(id(engine), []).append(out.record)
    return out


def rebuilt_from_journal(engine: Engine) -> Engine:
    rebuilt = Engine(engine.state.config, engine.state.decks)
    for record in JOURNAL[id(engine)]:
        rebuilt.restore(record)
    rebuilt.tick(float("inf"))
    return rebuilt


def engine_with(**config: Any) -> Engine:
    cfg = make_config(seats=3, deals=2, schedule_seed=None, **config)
    assert all(cfg.deal_orders[t][0] == 1 for t in cfg.tables) and cfg.buttons[1] == 1
    engine = Engine(cfg, {**make_decks(cfg), 1: DECK1})
    JOURNAL.pop(id(engine), None)  # an earlier test's engine may have had this id
    return engine


class Console:
    """One table's console: numbers its events, as a real one does."""

    def __init__(self, engine: Engine, table: int) -> None:
        self.engine, self.table, self.seq, self.now = engine, table, 0, 0.0

    def send(self, kind: str, **fields: Any) -> Any:
        self.seq += 1
        self.now += 1.0
        raw = {
            "v": 1,
            "tournament": "t-test",
            "table": self.table,
            "console": f"table{self.table}",
            "seq": self.seq,
            "type": kind,
            **fields,
        }
        return journaled(self.engine, self.engine.submit(raw, self.now))

    def ok(self, kind: str, **fields: Any) -> Any:
        out = self.send(kind, **fields)
        assert out.ok, out.ack
        return out

    def refused(self, kind: str, code: str, **fields: Any) -> str:
        out = self.send(kind, **fields)
        assert not out.ok and out.code == code, out.ack
        return str(out.message)

    @property
    def hand(self) -> Any:
        current = self.engine.state.tables[self.table].current
        assert current is not None
        return current

    def passive_to(self, street: str) -> None:
        """Call or check until the hand reaches ``street``."""
        while self.hand.hand.street != street:
            seat = self.hand.hand.to_act
            self.ok("call" if self.hand.hand.legal(seat).call else "check", seat=seat)

    def fold_out(self) -> None:
        table = self.engine.state.tables[self.table]
        while table.current is not None and table.current.hand.street != "complete":
            self.ok("fold", seat=table.current.hand.to_act)


def operator(engine: Engine, op: str, **fields: Any) -> Any:
    return journaled(engine, engine.control({"op": op, "table": 1, **fields}, 100.0))


def standings(engine: Engine, audience: str = "live") -> Any:
    return engine.payload((audience, "standings"))


# ---------------------------------------------------------------- undo
def test_undo_takes_back_the_last_action_then_the_start() -> None:
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.ok("call", seat=1)
    c.ok("undo")
    assert c.hand.hand.to_act == 1 and c.hand.hand.pot == 150  # the blinds stay
    c.ok("undo")  # no action left: the start itself
    assert engine.state.tables[1].current is None and 1 not in engine.state.tables[1].hands
    c.ok("start", deal=1)  # the deal is unplayed again


# ---------------------------------------------------------------- reopen and its closes
def test_reopened_fold_out_corrected_and_closed_with_confirm() -> None:
    """The documented close: reopen, undo, re-enter the actions ending in a fold, confirm."""
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.fold_out()  # seat 1 folds, seat 2 (small blind) folds: the big blind wins 50
    assert engine.state.board.result(1, 1) == {1: 0, 2: -50, 3: 50}
    c.ok("reopen", deal=1)
    assert engine.state.board.result(1, 1) is None
    c.ok("undo")  # the small blind's fold was wrong: it called, then the big blind folded...
    c.ok("undo")  # ...and seat 1 had called too
    c.ok("call", seat=1)
    c.ok("raise", seat=2, amount=400)
    c.ok("fold", seat=3)
    c.ok("fold", seat=1)  # the corrected betting ends in a fold-out
    assert c.hand.hand.street == "complete" and c.hand.status == "in_progress"
    assert c.hand.reopened and engine.state.board.result(1, 1) is None  # not counted yet
    assert "close it with confirm" in c.refused("win", "not_allowed", seats=[2])
    c.ok("confirm", deal=1)
    assert engine.state.tables[1].current is None
    assert engine.state.board.result(1, 1) == {1: -100, 2: 200, 3: -100}
    assert engine.state.hand(1, 1).status == "complete"  # type: ignore[union-attr]
    assert [k["type"] for k in engine.state.corrections] == ["reopen", "undo", "undo", "confirm"]
    c.refused("confirm", "not_disputed", deal=1)
    # exactly the scores of a log holding only the corrected hand
    clean = engine_with()
    d = Console(clean, 1)
    d.ok("start", deal=1)
    for kind, seat, amount in [("call", 1, None), ("raise", 2, 400), ("fold", 3, None)]:
        d.ok(kind, seat=seat, **({"amount": amount} if amount else {}))
    d.ok("fold", seat=1)
    assert standings(engine)["running"] == standings(clean)["running"]


def test_reopened_fold_out_closed_by_the_operator_or_unchanged() -> None:
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.fold_out()
    c.ok("reopen", deal=1)
    c.ok("undo")
    c.ok("fold", seat=2)  # re-entered as it was
    assert operator(engine, "confirm", deal=1, by="TD").ok  # the operator panel closes it as well
    assert engine.state.board.result(1, 1) == {1: 0, 2: -50, 3: 50}
    c.ok("reopen", deal=1)  # reopened and found right: confirm closes it unchanged
    c.ok("confirm", deal=1)
    assert engine.state.board.result(1, 1) == {1: 0, 2: -50, 3: 50}


def test_reopened_showdown_needs_win_and_a_wrong_win_is_disputed() -> None:
    """protocol.md 1.7: reopen, confirm refused ("declare the winners"), a wrong win makes the
    hand disputed, the operator settles it; a second confirm is not_disputed."""
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.passive_to("showdown")
    c.ok("win", seats=[3])  # the cards agree: seat 3's pair of threes
    c.ok("reopen", deal=1)
    assert c.hand.status == "showdown" and c.hand.winners is None
    assert "declare the winners" in c.refused("confirm", "not_allowed", deal=1)
    c.ok("win", seats=[2])
    hand = engine.state.hand(1, 1)
    assert hand is not None and hand.status == "disputed" and hand.result is None
    assert engine.payload(("live", "ops"))["disputes"][0]["computed"] == [3]
    assert operator(engine, "confirm", deal=1, seats=[2], by="TD").ok  # the official's word stands
    assert hand.status == "complete" and hand.result == {1: -100, 2: 200, 3: -100}
    again = operator(engine, "confirm", deal=1, by="TD")
    assert again.code == "not_disputed"
    assert "neither disputed nor reopened" in again.message


def test_a_dispute_confirmed_without_names_goes_by_the_cards() -> None:
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.passive_to("showdown")
    c.ok("win", seats=[1])
    c.ok("confirm", deal=1)
    assert engine.state.board.result(1, 1) == {1: -100, 2: -100, 3: 200}


def test_no_other_hand_while_one_is_reopened() -> None:
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.fold_out()
    c.ok("start", deal=2)
    c.refused("reopen", "hand_in_progress", deal=1)
    c.fold_out()
    c.ok("reopen", deal=1)
    c.refused("start", "hand_in_progress", deal=2)
    c.refused("reopen", "hand_in_progress", deal=2)
    c.ok("undo")  # the last fold taken back: betting is open again
    assert "betting is open" in c.refused("confirm", "not_allowed", deal=1)


def test_a_reopen_during_the_release_delay_cancels_the_release() -> None:
    engine = engine_with(release_delay=30)
    consoles = [Console(engine, t) for t in engine.state.config.tables]
    for c in consoles:
        c.ok("start", deal=1)
        c.fold_out()
    c1 = consoles[0]
    c1.ok("reopen", deal=1)
    assert engine.tick(1000.0) == set() and not engine.release.deal_released(1)
    c1.ok("confirm", deal=1)
    assert not engine.release.deal_released(1)
    engine.tick(c1.now + 31)
    assert engine.release.deal_released(1)


def test_a_dispute_blocks_the_release_and_later_corrections_reach_the_public() -> None:
    engine = engine_with()
    consoles = [Console(engine, t) for t in engine.state.config.tables]
    for c in consoles[1:]:
        c.ok("start", deal=1)
        c.fold_out()
    c1 = consoles[0]
    c1.ok("start", deal=1)
    c1.passive_to("showdown")
    c1.ok("win", seats=[1])  # disputed: every other table is done, but deal 1 stays secret
    assert not engine.release.deal_released(1) and engine.payload(("public", "deal:1")) is None
    c1.ok("confirm", deal=1)
    assert engine.release.deal_released(1)

    def public_row() -> Any:
        rows = engine.payload(("public", "deal:1"))["tables"]
        return next(r for r in rows if r["table"] == 1)

    assert public_row()["status"] == "complete" and public_row()["result"]["3"] == 200
    c1.ok("reopen", deal=1)  # after the release: the public sees the correction as it happens
    assert public_row()["status"] == "showdown" and public_row()["result"] is None
    c1.ok("undo")  # the last check of the river
    c1.ok("bet", seat=1, amount=100)
    c1.ok("fold", seat=2)
    c1.ok("fold", seat=3)
    c1.ok("confirm", deal=1)
    assert public_row()["status"] == "complete" and public_row()["result"]["1"] == 200
    assert standings(engine, "public")["like_for_like"] == standings(engine)["like_for_like"]


# ---------------------------------------------------------------- misdeals and voids
def test_a_misdeal_only_before_two_players_have_acted() -> None:
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.ok("void")  # no action yet: a misdeal
    assert engine.state.board.result(1, 1) == {1: 0, 2: 0, 3: 0}
    c.ok("start", deal=2)
    c.ok("call", seat=2)  # deal 2: button at seat 2, seat 2 acts first
    c.ok("void")  # one player acted: still a misdeal
    engine2 = engine_with()
    d = Console(engine2, 1)
    d.ok("start", deal=1)
    d.ok("call", seat=1)
    d.ok("call", seat=2)
    message = d.refused("void", "not_allowed")
    assert "2 actions after the blinds" in message and "played out" in message
    d.refused("void", "not_allowed", deal=1)
    d.refused("void", "wrong_deal", deal=2)  # not played at this table
    assert d.hand.status == "in_progress"


def test_a_later_void_needs_the_operator_and_a_reason_both_journaled() -> None:
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.passive_to("flop")
    assert operator(engine, "void", deal=1).code == "bad_request"
    assert operator(engine, "void", deal=1, reason="foreign card").code == "bad_request"
    out = operator(engine, "void", deal=1, reason="a red-backed card in the deck", by="TD Ana")
    assert out.ok and engine.state.board.result(1, 1) == {1: 0, 2: 0, 3: 0}
    record = out.record
    assert record["console"] == "operator" and record["type"] == "void"
    assert record["note"] == "a red-backed card in the deck" and record["by"] == "TD Ana"
    correction = engine.state.corrections[-1]
    assert correction["by"] == "TD Ana" and correction["reason"] == "a red-backed card in the deck"
    # a finished hand: only the operator voids it
    c.ok("start", deal=2)
    c.fold_out()
    assert "is finished" in c.refused("void", "not_allowed", deal=2)
    assert operator(engine, "void", deal=2, reason="duplicate card", by="TD Ana").ok
    assert operator(engine, "void", deal=2, reason="again", by="TD Ana").code == "not_allowed"
    assert standings(rebuilt_from_journal(engine)) == standings(engine)


# ---------------------------------------------------------------- dealer errors
def board_and_holes(c: Console) -> tuple[list[str], dict[int, tuple[str, str]]]:
    cards = c.hand.spec.cards
    return list(cards.board), dict(cards.hole)


def test_an_exposed_hole_card_is_replaced_by_the_top_of_the_stub() -> None:
    """Seat 2's second card (2d) is exposed: it becomes the burn, and the card that would have
    been the first burn (Kh) is seat 2's. Seat 2's kings then beat seat 3's threes."""
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    assert "misdeal" in c.refused("exposed", "not_allowed", seat=2, card=1)  # card 1 of the deal
    assert "misdeal" in c.refused("exposed", "not_allowed", seat=3, card=1)  # card 2 of the deal
    c.ok("exposed", seat=2, card=2)
    board, hole = board_and_holes(c)
    assert hole[2] == ("2c", "Kh") and hole[3] == ("3d", "3c") and hole[1] == ("7h", "4c")
    assert board == ["Ac", "Kd", "9s", "8c", "Jd"]  # the exposed card was the burn
    live = engine.payload(("live", "table:1"))
    assert next(s for s in live["seats"] if s["seat"] == 2)["hole"] == ["2c", "Kh"]
    assert "more than one" in c.refused("exposed", "not_allowed", seat=1, card=2)
    c.ok("call", seat=1)
    assert "before the first action" in c.refused("exposed", "not_allowed", seat=1, card=2)
    c.passive_to("showdown")
    c.ok("win", seats=[2])  # the cards agree: not disputed
    assert engine.state.board.result(1, 1) == {1: -100, 2: 200, 3: -100}
    # table 2, no dealer error: the same deal goes to seat 3
    d = Console(engine, 2)
    d.ok("start", deal=1)
    d.passive_to("showdown")
    d.ok("win", seats=[2])
    assert engine.state.hand(2, 1).status == "disputed"  # type: ignore[union-attr]
    assert engine.state.hand(2, 1).computed == (3,)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("street", "board", "winner"),
    [
        # the seen flop (Ac Kd 9s) out; a new flop without a burn; burn, turn; burn, river
        ("preflop", ["4h", "8c", "5s", "2h", "6d"], 1),  # seat 1: 4-5-6-7-8
        # the seen turn (8c) out; burn (5s), turn Jd in its place; the river without a burn
        ("flop", ["Ac", "Kd", "9s", "Jd", "2h"], 2),  # seat 2: three twos
        # the seen river (Jd) out; the next card is the river, without a burn
        ("turn", ["Ac", "Kd", "9s", "8c", "2h"], 2),
    ],
)
def test_a_board_card_dealt_early_is_replaced_in_procedure_order(
    street: str, board: list[str], winner: int
) -> None:
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.passive_to(street)
    if street != "preflop":  # the first player of the round checks, then the card comes early
        c.ok("check", seat=2)
    else:
        c.ok("call", seat=1)
    c.ok("early")
    assert board_and_holes(c)[0] == board
    assert "already" in c.refused("early", "not_allowed")
    c.passive_to("showdown")
    assert c.hand.hand.computed_winners() == {winner}
    c.ok("win", seats=[winner])
    result = engine.state.board.result(1, 1)
    assert result is not None and result[winner] == 200
    # undo takes the dealer error back like any input; a reopen keeps it
    c.ok("reopen", deal=1)
    assert board_and_holes(c)[0] == board
    rebuilt = rebuilt_from_journal(engine)
    assert rebuilt.state.hand(1, 1).spec.cards.board == tuple(board)  # type: ignore[union-attr]


def test_early_on_the_river_has_nothing_to_replace() -> None:
    engine = engine_with()
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.passive_to("river")
    assert "no board card comes after the river" in c.refused("early", "not_allowed")
    c.ok("check", seat=2)
    c.ok("undo")
    c.ok("undo")  # the last call of the turn: back on the turn
    assert c.hand.hand.street == "turn"


# ---------------------------------------------------------------- penalties
def test_penalties_show_in_the_standings_and_are_journaled() -> None:
    engine = engine_with()
    consoles = [Console(engine, t) for t in engine.state.config.tables]
    for c in consoles:
        c.ok("start", deal=1)
        c.fold_out()
    before = standings(engine, "public")
    team, _ = engine.state.config.seat_holder(1, 3)
    consoles[0].refused("penalty", "not_allowed", seat=3, amount=100, note="x", by="TD")
    assert operator(engine, "penalty", seat=3, chips=100).code == "bad_request"  # no reason
    assert operator(engine, "penalty", seat=3, reason="r", by="TD").code == "bad_amount"
    out = operator(engine, "penalty", seat=3, chips=80, reason="slow play", by="TD Ana")
    assert out.ok and out.record["note"] == "slow play" and out.record["by"] == "TD Ana"
    assert operator(engine, "penalty", seat=3, points=1, reason="phone", by="TD Ana").ok
    for audience in ("public", "live"):
        after = standings(engine, audience)
        seat3 = next(b for b in after["like_for_like"]["seats"] if b["seat"] == 3)
        row = next(r for r in seat3["rows"] if r["table"] == 1)
        assert row["penalty"] == {"chips": 80, "points": 1}
        assert row["chips"] == 50 - 80  # the big blind's 50, less the penalty
        teams = {t["team"]: t for t in after["like_for_like"]["teams"]}
        old = {t["team"]: t for t in before["like_for_like"]["teams"]}
        assert teams[team.id]["penalty"] == {"chips": 80, "points": 1}
        assert teams[team.id]["chips"] == old[team.id]["chips"] - 80
        # seat 3 of table 1 falls from a three-way tie (2 points each) to last: 1 point, less 1
        assert row["points"] == 0 and row["rank"] == 3
        assert "penalty" not in next(r for r in seat3["rows"] if r["table"] != 1)
    assert engine.payload(("live", "ops"))["penalties"][-1]["reason"] == "phone"
    # journal and snapshot give the penalties back
    assert standings(rebuilt_from_journal(engine), "public") == standings(engine, "public")
    restored = Engine(engine.state.config, engine.state.decks)
    restored.restore_snapshot(engine.snapshot())
    assert standings(restored, "public") == standings(engine, "public")
    assert standings(restored) == standings(engine)
    oracle = full_recompute(
        engine.state.layout,
        engine.state.board.results(),
        [(1, 3, 80, 0), (1, 3, 0, 1)],
    )
    assert oracle.as_dict()["running"] == engine.state.board.as_dict()["running"]
