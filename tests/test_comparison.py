"""The traveller: one deal, one seat, every table of the group side by side (``compare_payload``).

A six-table tournament plays deal 1 so that its six tables stand at every status a row can show:
waiting, in progress, showdown, complete, void and disputed.
"""

from __future__ import annotations

from typing import Any

import pytest

from hub.domain.dealing import deal
from hub.engine.core import Engine
from hub.engine.families.travellers import compare_payload
from tests.factories import make_config, make_decks

CONFIG = make_config(seats=6, deals=2, schedule_seed=None)  # every table plays 1, 2 in order
DECKS = make_decks(CONFIG)
DEAL = 1
STREETS = ("preflop", "flop", "turn", "river")
WAITING, IN_PROGRESS, SHOWDOWN, COMPLETE, VOID, DISPUTED = 1, 2, 3, 4, 5, 6


class Console:
    def __init__(self, engine: Engine, table: int) -> None:
        self.engine, self.table, self.seq = engine, table, 0

    def ok(self, kind: str, **fields: Any) -> None:
        self.seq += 1
        event = {
            "v": 1,
            "tournament": CONFIG.id,
            "table": self.table,
            "console": f"table{self.table}",
            "seq": self.seq,
            "type": kind,
            **fields,
        }
        out = self.engine.submit(event, float(self.seq))
        assert out.ok, out.ack

    def passive(self) -> None:
        """The seat to act checks or calls."""
        current = self.engine.state.tables[self.table].current
        assert current is not None and current.hand.to_act is not None
        seat = current.hand.to_act
        self.ok("check" if current.hand.legal(seat).check else "call", seat=seat)

    def to_showdown(self) -> None:
        current = self.engine.state.tables[self.table].current
        assert current is not None
        while current.hand.to_act is not None:
            self.passive()
        assert current.status == "showdown"


@pytest.fixture(scope="module")
def engine() -> Engine:
    assert len(CONFIG.groups) == 1 and len(CONFIG.tables) == 6
    assert all(CONFIG.deal_orders[t][0] == DEAL for t in CONFIG.tables)
    engine = Engine(CONFIG, DECKS)
    consoles = {t: Console(engine, t) for t in CONFIG.tables}
    # WAITING: deal 1 not started.
    consoles[IN_PROGRESS].ok("start", deal=DEAL)
    for _ in range(3):
        consoles[IN_PROGRESS].passive()
    consoles[SHOWDOWN].ok("start", deal=DEAL)
    consoles[SHOWDOWN].to_showdown()
    consoles[COMPLETE].ok("start", deal=DEAL)
    consoles[COMPLETE].to_showdown()
    current = engine.state.tables[COMPLETE].current
    assert current is not None
    winners = current.hand.computed_winners()
    assert winners
    consoles[COMPLETE].ok("win", seats=sorted(winners))
    consoles[VOID].ok("start", deal=DEAL)
    consoles[VOID].passive()
    consoles[VOID].ok("void")
    consoles[DISPUTED].ok("start", deal=DEAL)
    consoles[DISPUTED].to_showdown()
    current = engine.state.tables[DISPUTED].current
    assert current is not None
    computed = current.hand.computed_winners()
    assert computed
    live = sorted(set(range(1, CONFIG.seats + 1)) - current.hand.folded)
    wrong = [s for s in live if s not in computed][:1] or [live[0]]
    assert set(wrong) != computed
    consoles[DISPUTED].ok("win", seats=wrong)
    statuses = {
        t: (h.status if (h := engine.state.hand(t, DEAL)) else "waiting") for t in CONFIG.tables
    }
    assert statuses == {
        WAITING: "waiting",
        IN_PROGRESS: "in_progress",
        SHOWDOWN: "showdown",
        COMPLETE: "complete",
        VOID: "void",
        DISPUTED: "disputed",
    }
    return engine


@pytest.mark.parametrize("seat", range(1, 7))
def test_compare_rows_cover_every_status(engine: Engine, seat: int) -> None:
    state = engine.state
    payload = compare_payload(state, DEAL, seat, live=True, released=lambda g, d: False)
    assert payload is not None
    assert (payload["deal"], payload["seat"]) == (DEAL, seat)
    assert payload["button"] == CONFIG.buttons[DEAL]

    dealt = deal(DECKS[DEAL], CONFIG.buttons[DEAL], CONFIG.seats)
    assert payload["hole"] == list(dealt.hole[seat])
    assert payload["board"] == list(dealt.board)  # the longest board shown at any table

    rows = {row["table"]: row for row in payload["rows"]}
    assert [row["table"] for row in payload["rows"]] == list(CONFIG.tables)
    by_status = {row["status"]: table for table, row in rows.items()}
    assert by_status == {
        "waiting": WAITING,
        "in_progress": IN_PROGRESS,
        "showdown": SHOWDOWN,
        "complete": COMPLETE,
        "void": VOID,
        "disputed": DISPUTED,
    }

    for table, row in rows.items():
        team, player = CONFIG.seat_holder(table, seat)
        assert (row["team"], row["player"]) == (team.id, player)
        h = state.hand(table, DEAL)
        if h is None:
            assert row["actions"] == [] and row["pot"] == 0 and row["committed"] == 0
            assert row["chips"] is None and "swing" not in row
            continue
        assert [
            (a["seat"], a["kind"], a["to"], a["added"], a["street"]) for a in row["actions"]
        ] == [(a.seat, a.kind, a.to, a.added, a.street) for a in h.hand.actions]
        streets = [STREETS.index(a["street"]) for a in row["actions"]]
        assert streets == sorted(streets)
        assert [a["kind"] for a in row["actions"][:2]] == ["small_blind", "big_blind"]
        assert row["pot"] == h.hand.pot == sum(h.hand.committed.values())
        assert row["committed"] == h.hand.committed[seat]

    # How far each table got, as the action rows tell it.
    assert {a["street"] for a in rows[IN_PROGRESS]["actions"]} == {"preflop"}
    assert {a["street"] for a in rows[VOID]["actions"]} == {"preflop"}
    for table in (SHOWDOWN, COMPLETE, DISPUTED):
        assert {a["street"] for a in rows[table]["actions"]} == set(STREETS)
        assert rows[table]["pot"] == CONFIG.seats * CONFIG.big_blind  # called and checked down

    # Only counted hands (complete, void) have chips; the swing is against their average.
    result = state.hand(COMPLETE, DEAL).result  # type: ignore[union-attr]
    assert result is not None
    chips = {table: row["chips"] for table, row in rows.items()}
    assert chips == {
        WAITING: None,
        IN_PROGRESS: None,
        SHOWDOWN: None,
        COMPLETE: result[seat],
        VOID: 0,
        DISPUTED: None,
    }
    average = (result[seat] + 0) / 2
    assert payload["average"] == round(average, 2)
    swings = {table: row["swing"] for table, row in rows.items() if "swing" in row}
    assert swings == {
        COMPLETE: round(result[seat] - average, 2),
        VOID: round(0 - average, 2),
    }


def test_the_live_topic_is_the_payload_and_the_public_sees_nothing_unreleased(
    engine: Engine,
) -> None:
    for seat in (1, 4):
        direct = compare_payload(engine.state, DEAL, seat, live=True, released=lambda g, d: False)
        assert engine.payload(("live", f"compare:{DEAL}:{seat}")) == direct
        assert not engine.release.released("G0", DEAL)
        assert engine.payload(("public", f"compare:{DEAL}:{seat}")) is None
        assert (
            compare_payload(engine.state, DEAL, seat, live=False, released=lambda g, d: False)
            is None
        )


def test_a_deal_no_table_has_started_is_all_waiting(engine: Engine) -> None:
    payload = compare_payload(engine.state, 2, 3, live=True, released=lambda g, d: False)
    assert payload is not None
    # No table has started deal 2: its cards exist only in the ingest (issue #9.6).
    assert payload["hole"] == []
    assert payload["board"] == [] and payload["average"] is None
    assert {row["status"] for row in payload["rows"]} == {"waiting"}
    assert all(row["chips"] is None and "swing" not in row for row in payload["rows"])


def test_cards_of_a_deal_leave_the_ingest_only_once_a_table_started_it() -> None:
    """Issue #9.6: the live deal and comparison payloads held every deal's cards from the
    start of the session; now a deal's cards appear once a table has started it."""
    engine = Engine(CONFIG, DECKS)
    dealt = deal(DECKS[DEAL], CONFIG.buttons[DEAL], CONFIG.seats)
    assert engine.payload(("live", f"deal:{DEAL}"))["hole"] == {}  # type: ignore[index]
    assert engine.payload(("live", f"deal:{DEAL}"))["board"] == []  # type: ignore[index]
    assert engine.payload(("live", f"compare:{DEAL}:1"))["hole"] == []  # type: ignore[index]
    Console(engine, CONFIG.tables[0]).ok("start", deal=DEAL)
    live = engine.payload(("live", f"deal:{DEAL}"))
    assert live is not None and live["hole"]["1"] == list(dealt.hole[1])
    assert live["board"] == list(dealt.board)
    assert engine.payload(("live", f"compare:{DEAL}:1"))["hole"] == list(dealt.hole[1])  # type: ignore[index]
    other = CONFIG.deal_orders[CONFIG.tables[0]][1]
    assert engine.payload(("live", f"deal:{other}"))["hole"] == {}  # type: ignore[index]
