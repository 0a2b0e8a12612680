"""Equity in the live payloads: the live table and the travellers carry each seat's chances and
outs at the current street, computed once per spot (a card dealt, a fold, an all-in run-out),
and the public sees them only in a released deal's traveller."""

from __future__ import annotations

from typing import Any

from hub.domain.equity import Equity, equity
from hub.engine import equities
from hub.engine.core import Engine
from hub.engine.tournament import HandState
from tests.factories import make_config, make_decks
from tests.test_engine import Console


class Counted:
    """What the engine computed since the caches were emptied: ``rankings`` (every seat's hand
    on the run-outs of a deal's board) and ``spots`` (figures for a group of players)."""

    def __init__(self) -> None:
        equities.figures.cache_clear()
        equities._runouts.cache_clear()

    @property
    def rankings(self) -> int:
        return equities._runouts.cache_info().misses

    @property
    def spots(self) -> int:
        return equities.figures.cache_info().misses


def feed_engine(**config: Any) -> Engine:
    cfg = make_config(**config)
    engine = Engine(cfg, make_decks(cfg), release_delay=0)
    engine.start_feed()
    return engine


def current(engine: Engine, table: int) -> HandState:
    hand = engine.state.tables[table].current
    assert hand is not None
    return hand


def expected(h: HandState, board_cards: int) -> Equity:
    """The figures straight from the domain: the players still in, the folded cards dead."""
    cards = h.spec.cards
    assert cards is not None
    live = {s: c for s, c in cards.hole.items() if s not in h.hand.folded}
    dead = [c for s, cs in cards.hole.items() if s in h.hand.folded for c in cs]
    return equity(live, cards.board[:board_cards], dead)


def figures_of(result: Equity, seat: int) -> dict[str, Any]:
    return {
        "win": round(result.win[seat], 4),
        "tie": round(result.tie[seat], 4),
        "outs": list(result.outs[seat]),
    }


def act(console: Console, h: HandState, kind: str, amount: int | None = None) -> int:
    seat = h.hand.to_act
    assert seat is not None
    fields: dict[str, Any] = {"seat": seat}
    if amount is not None:
        fields["amount"] = amount
    console.ok(kind, **fields)
    return seat


def test_live_table_equity_street_by_street_computed_once_per_spot() -> None:
    counted = Counted()
    engine = feed_engine(seats=4, deals=2)
    key = ("live", "table:1")
    engine.projecting.materialize(key)
    c1 = Console(engine, 1)
    c1.ok("start", deal=engine.state.tables[1].next_deal())
    engine.projecting.flush()
    h = current(engine, 1)
    table = engine.projecting.materialize(key)
    assert table is not None
    block = table["equity"]
    assert block["street"] == "preflop" and block["runout"] is None
    [pre] = block["streets"]
    assert block["now"] == pre  # before any fold: the players who saw the cards are all in
    assert pre["exact"] is False and 0 < pre["error"] <= 0.005
    want = expected(h, 0)
    for row in table["seats"]:
        assert row["equity"] == figures_of(want, row["seat"])
    assert (counted.rankings, counted.spots) == (1, 1)

    # A call changes no chance: nothing computed, no equity in the delta.
    act(c1, h, "call")
    [change] = [c for c in engine.projecting.flush() if c.key == key]
    assert change.patch is not None
    assert not [op for op in change.patch if "equity" in op["path"]]
    assert table["equity"] is block and (counted.rankings, counted.spots) == (1, 1)
    # ... and the block is the very same object (the payloads compare it by identity).
    assert equities.hand_equity(h) is block
    assert equities.hand_traveller_equity(h, 1) is equities.hand_traveller_equity(h, 1)

    # A fold does: the folded seat drops out of the figures now, its cards are dead for the
    # others; the street's figures (as its cards came) stay.
    folded = act(c1, h, "fold")
    [change] = [c for c in engine.projecting.flush() if c.key == key]
    assert change.patch is not None
    paths = {op["path"] for op in change.patch if "equity" in op["path"]}
    assert "/equity" in paths and f"/seats/{folded - 1}/equity" in paths
    # One more spot, no new ranking: the folded cards were already out of the deck.
    assert (counted.rankings, counted.spots) == (1, 2)
    assert table["equity"]["streets"] == [pre]
    want = expected(h, 0)
    for row in table["seats"]:
        if row["seat"] == folded:
            assert row["equity"] is None
        else:
            assert row["equity"] == figures_of(want, row["seat"])

    while h.hand.street == "preflop":
        act(c1, h, "call" if h.hand.legal(h.hand.to_act or 0).call else "check")
    engine.projecting.flush()
    block = table["equity"]
    assert [s["street"] for s in block["streets"]] == ["preflop", "flop"]
    flop = block["streets"][1]
    assert flop["exact"] is True and flop["error"] == 0.0
    want = expected(h, 3)
    assert flop["seats"] == {str(s): figures_of(want, s) for s in want.win}
    assert block["now"] == flop and block["street"] == "flop"
    assert engine.payload(key) == table  # the projection equals the builder
    # Nothing else in the hand was computed: one ranking per board, one spot per fold or card.
    assert counted.rankings == 2
    assert counted.spots == 3 + (h.hand.folded != {folded})


def test_all_in_run_out_shows_every_street() -> None:
    engine = feed_engine(seats=3, deals=1, betting="no-limit")
    engine.projecting.materialize(("live", "table:1"))
    c1 = Console(engine, 1)
    c1.ok("start", deal=1)
    h = current(engine, 1)
    shover = act(c1, h, "raise", 10_000)
    caller = act(c1, h, "call")
    act(c1, h, "fold")
    engine.projecting.flush()
    assert h.hand.street == "showdown"
    table = engine.projecting.materialize(("live", "table:1"))
    assert table is not None
    block = table["equity"]
    assert block["street"] == "river"
    assert [s["street"] for s in block["streets"]] == ["preflop", "flop", "turn", "river"]
    assert len(block["streets"][0]["seats"]) == 3  # everyone saw the deal
    in_hand = {str(shover), str(caller)}
    # The moment of the all-in: the two players, no board yet, the folded cards dead.
    runout = block["runout"]
    assert runout["street"] == "preflop" and set(runout["seats"]) == in_hand
    want = expected(h, 0)
    assert runout["seats"] == {str(s): figures_of(want, s) for s in want.win}
    for entry, cards in zip(block["streets"][1:], (3, 4, 5), strict=True):
        want = expected(h, cards)
        assert entry["seats"] == {str(s): figures_of(want, s) for s in want.win}
    river = block["now"]["seats"]
    assert set(river) == in_hand
    assert max(river[s]["win"] + river[s]["tie"] for s in in_hand) == 1.0
    seats = {row["seat"]: row for row in table["seats"]}
    assert seats[shover]["equity"] == river[str(shover)]


def test_travellers_carry_each_tables_equity_and_the_public_waits_for_release() -> None:
    engine = feed_engine(seats=3, deals=1)
    live = ("live", "compare:1:2")
    public = ("public", "compare:1:2")
    engine.projecting.materialize(live)
    consoles = {t: Console(engine, t) for t in (1, 2, 3)}
    for console in consoles.values():
        console.ok("start", deal=1)
    # Table 1: everyone calls to the flop; table 2: seat 2 folds at once if it can.
    h1, h2 = current(engine, 1), current(engine, 2)
    while h1.hand.street == "preflop":
        act(consoles[1], h1, "call" if h1.hand.legal(h1.hand.to_act or 0).call else "check")
    while h2.hand.to_act != 2:
        act(consoles[2], h2, "call")
    act(consoles[2], h2, "fold")
    engine.projecting.flush()
    doc = engine.projecting.materialize(live)
    assert doc is not None
    rows = {row["table"]: row for row in doc["rows"]}
    assert set(rows[1]["equity"]["streets"]) == {"preflop", "flop"}
    assert rows[1]["equity"]["streets"]["flop"] == figures_of(expected(h1, 3), 2)
    assert rows[1]["equity"]["now"] == rows[1]["equity"]["streets"]["flop"]
    h3 = current(engine, 3)
    assert rows[3]["equity"]["streets"] == {"preflop": figures_of(expected(h3, 0), 2)}
    # Table 2's seat 2 folded: it had the same cards against the same hands as table 3's when
    # they came, and has no chance now.
    assert rows[2]["equity"]["streets"] == rows[3]["equity"]["streets"]
    assert rows[2]["equity"]["now"] is None and rows[2]["equity"]["runout"] is None
    assert engine.payload(live) == doc
    assert engine.payload(public) is None  # nothing of an unreleased deal
    public_table = engine.payload(("public", "table:1"))
    assert public_table is not None and "equity" not in public_table
    assert all("equity" not in row for row in public_table["seats"])

    for t, console in consoles.items():  # every table finishes: the deal is released
        h = current(engine, t)
        while h.hand.street not in ("showdown", "complete"):
            act(console, h, "call" if h.hand.legal(h.hand.to_act or 0).call else "check")
        if h.hand.street == "showdown":
            console.ok("win", seats=sorted(h.hand.computed_winners() or ()))
    engine.tick(1.0)
    released = engine.payload(public)
    assert released is not None
    final = engine.payload(live)
    assert final is not None
    assert [r["equity"] for r in released["rows"]] == [r["equity"] for r in final["rows"]]
    assert any(r["equity"]["streets"].get("river") for r in released["rows"])


def test_the_feed_starts_with_what_equity_needs_made() -> None:
    from hub.domain import equity as module
    from hub.domain import strength_tables

    strength_tables.tables.cache_clear()
    module._sampled_picks.cache_clear()
    cfg = make_config(seats=3, deals=1)
    Engine(cfg).start_feed()  # no deck orders: no equity, nothing made
    assert strength_tables.tables.cache_info().currsize == 0
    feed_engine(seats=3, deals=1)
    assert strength_tables.tables.cache_info().currsize == 1
    assert module._sampled_picks.cache_info().currsize == 1


def test_a_voided_hand_shows_no_equity() -> None:
    engine = feed_engine(seats=3, deals=1)
    live = ("live", "compare:1:1")
    engine.projecting.materialize(live)
    c1 = Console(engine, 1)
    c1.ok("start", deal=1)
    act(c1, current(engine, 1), "call")
    engine.projecting.flush()
    doc = engine.projecting.materialize(live)
    assert doc is not None and doc["rows"][0]["equity"]["now"] is not None
    c1.ok("void", deal=1)  # a misdeal: its cards do not count
    engine.projecting.flush()
    assert doc["rows"][0]["status"] == "void" and doc["rows"][0]["equity"] is None
    assert engine.payload(live) == doc
