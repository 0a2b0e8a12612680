"""The showdown package: pots, side pots and split pots named with the winning hand, every hand
shown, an all-in's run-out with equity per street; the other games' equivalents; the live
table and travellers carry it as soon as a hand settles, the public's only once released."""

from __future__ import annotations

import json
import random
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.domain.dealing import Dealt, deal_sequence
from hub.domain.deck import DeckOrder
from hub.domain.games.holdem.game import PokerGame
from hub.domain.games.holdem.hand import Hand
from hub.domain.games.holdem.showdown import poker_showdown
from hub.domain.games.piecepack.tiles import hand_name as tile_name
from hub.domain.games.piecepack.tiles import parse_tiles
from hub.domain.games.spec import HandSpec
from hub.domain.phh import read_phh, replay
from hub.domain.pieces import CARDS
from hub.engine.core import Engine
from hub.engine.showdown import showdown_payload
from hub.engine.simulate import simulate_session
from hub.files.config import load_config
from hub.files.decks import load_decks
from tests.factories import make_config, make_decks
from tests.test_engine import Console
from tests.test_holdem_properties import play_with_bots, pokerkit_spec, random_spec

HOLDEM = PokerGame("holdem", CARDS)
FAMOUS = Path(__file__).resolve().parent / "data" / "phh" / "famous"


def settled(hand: Hand, *, by: str = "cards", winners: Any = None) -> Any:
    """What ``poker_showdown`` reads of the engine's HandState."""
    return SimpleNamespace(status="complete", hand=hand, settled_by=by, winners=winners, deal=1)


def stacked(button: int, seats: int, hole: dict[int, tuple[str, str]], board: str) -> DeckOrder:
    """A deck order that deals ``hole`` and ``board`` (burns and the rest from what is left)."""
    order: list[str | None] = [None] * 52
    for i, seat in enumerate(deal_sequence(button, seats)):
        order[i], order[i + seats] = hole[seat]
    top = 2 * seats
    for at, card in zip((1, 2, 3, 5, 7), board.split(), strict=True):
        order[top + at] = card
    used = {c for c in order if c}
    rest = iter(r + s for r in "23456789TJQKA" for s in "cdhs" if r + s not in used)
    return DeckOrder(tuple(c if c else next(rest) for c in order), rehearsal=True)


# ---------------------------------------------------------------- domain
def test_a_three_way_all_in_with_a_side_pot_names_main_and_side_pot() -> None:
    """Seat 1 (2,000) and seat 3 (6,000) all in, seat 2 (10,000) calls: the main pot of 6,000
    to the best of the three, the side pot of 8,000 between seats 2 and 3."""
    cards = Dealt(
        hole={1: ("Ac", "Ad"), 2: ("Kc", "Kd"), 3: ("Qc", "Qd")},
        board=("2h", "7s", "9d", "Jc", "3s"),
    )
    spec = HandSpec(
        3, 3, 50, 100, 10_000, pot_limit=False, cards=cards, stacks=(2000, 10_000, 6000)
    )
    hand = Hand(spec)
    hand.act(3, "raise", 6000)
    hand.act(1, "call")
    hand.act(2, "call")
    assert hand.street == "showdown"
    result = hand.settle(None)
    block = poker_showdown(settled(hand), HOLDEM.seat_name)
    assert block is not None
    assert block["pots"] == [
        {
            "amount": 6000,
            "kind": "main",
            "winners": [1],
            "shares": {"1": 6000},
            "hand": "Pair of aces",
        },
        {
            "amount": 8000,
            "kind": "side",
            "winners": [2],
            "shares": {"2": 8000},
            "hand": "Pair of kings",
        },
    ]
    assert block["hands"] == {"1": "Pair of aces", "2": "Pair of kings", "3": "Pair of queens"}
    assert_shares_make_result(block, hand, result)


def assert_shares_make_result(block: dict[str, Any], hand: Hand, result: dict[int, int]) -> None:
    won = {s: 0 for s in hand.committed}
    for pot in block["pots"]:
        assert sum(pot["shares"].values()) == pot["amount"]
        for seat, chips in pot["shares"].items():
            won[int(seat)] += chips
    assert {s: won[s] - hand.committed[s] for s in won} == result


def test_declared_winners_without_cards_name_no_hand() -> None:
    spec = HandSpec(3, 3, 50, 100, 10_000)
    hand = Hand(spec)
    for seat in (3, 1):
        hand.act(seat, "call")
    hand.act(2, "check")
    for _ in range(3):
        for seat in (1, 2, 3):
            hand.act(seat, "check")
    result = hand.settle((1, 2))
    block = poker_showdown(settled(hand, by="declared", winners=(1, 2)), HOLDEM.seat_name)
    assert block is not None
    assert block["pots"] == [
        {
            "amount": 300,
            "kind": "main",
            "winners": [1, 2],
            "shares": {"1": 150, "2": 150},
            "hand": None,
        }
    ]
    assert block["hands"] == {}
    assert_shares_make_result(block, hand, result)


def test_a_fold_out_names_the_winner_and_shows_no_hand() -> None:
    hand = Hand(
        HandSpec(
            3,
            3,
            50,
            100,
            10_000,
            cards=Dealt(
                {1: ("Ac", "Ad"), 2: ("2c", "7d"), 3: ("Kc", "Kd")}, ("2h", "7s", "9d", "Jc", "3s")
            ),
        )
    )
    hand.act(3, "raise", 300)
    hand.act(1, "fold")
    hand.act(2, "fold")
    block = poker_showdown(settled(hand, by=None), HOLDEM.seat_name)
    assert block == {
        "deal": 1,
        "pots": [
            {"amount": 450, "kind": "main", "winners": [3], "shares": {"3": 450}, "hand": None}
        ],
        "hands": {},
        "runout": None,
    }


def test_nothing_while_in_play_disputed_or_void() -> None:
    hand = Hand(HandSpec(3, 3, 50, 100, 10_000))
    for status in ("in_progress", "showdown", "disputed", "void"):
        h = SimpleNamespace(status=status, hand=hand, settled_by=None, winners=None, deal=1)
        assert poker_showdown(h, HOLDEM.seat_name) is None


def test_a_televised_hand_from_phh_names_both_straights() -> None:
    """Dwan v Ivey, 2009: the wheel against the seven-high straight, a pot of 1,109,500."""
    text = (FAMOUS / "dwan-ivey-2009.phh").read_text()
    hand = replay(read_phh(tomllib.loads(text)))
    assert isinstance(hand, Hand)
    block = poker_showdown(settled(hand), HOLDEM.seat_name)
    assert block is not None
    assert block["hands"] == {"1": "Straight, five high", "3": "Straight, seven high"}
    assert [(p["amount"], p["winners"], p["hand"]) for p in block["pots"]] == [
        (1_109_500, [3], "Straight, seven high")
    ]
    assert_shares_make_result(block, hand, dict(hand.result or {}))


@pytest.mark.parametrize(
    ("tiles", "name"),
    [
        ("Nbs Nwh 2bd 3wc 4bh 5ws Abc", "No-flush no-pairs, null high"),
        ("5bs 5wh 5bd 3wc 3bh Nws Abc", "No-flush full-house, fives"),
    ],
)
def test_piecepack_hands_are_named_by_category_and_top_rank(tiles: str, name: str) -> None:
    assert tile_name(parse_tiles(tiles)) == name


# ---------------------------------------------------------------- engine
def engine_with(hole: dict[int, tuple[str, str]], board: str) -> tuple[Engine, Console, int]:
    """A 3-seat tournament whose deal at table 1 deals these cards."""
    config = make_config(seats=3, deals=4)
    decks = make_decks(config)
    engine = Engine(config, decks)
    deal = engine.state.tables[1].next_deal()
    assert deal is not None
    decks[deal] = stacked(config.buttons[deal], 3, hole, board)
    engine = Engine(config, decks)
    return engine, Console(engine, 1), deal


def play(engine: Engine, console: Console, policy: Any) -> None:
    """Betting by ``policy(hand, seat, legal) -> (kind, amount)`` until the showdown, then the
    winners by the cards."""
    current = engine.state.tables[console.table].current
    assert current is not None
    while current.hand.street not in ("showdown", "complete"):
        seat = current.hand.to_act
        assert seat is not None
        kind, amount = policy(current.hand, seat, current.hand.legal(seat))
        console.ok(kind, seat=seat, **({"amount": amount} if amount is not None else {}))
    if current.hand.street == "showdown":
        console.ok("win", seats=sorted(current.hand.computed_winners() or ()))


def test_a_split_pot_names_the_odd_chip_and_the_shared_hand() -> None:
    hole = {1: ("Th", "5c"), 2: ("Td", "6h"), 3: ("3c", "4d")}
    engine, console, deal = engine_with(hole, "As Kd Qh Jc 8s")
    engine.start_feed()
    console.ok("start", deal=deal)

    def policy(hand: Hand, seat: int, legal: Any) -> tuple[str, int | None]:
        if hand.street == "flop" and legal.check and hand.high_bet == 0:
            return "bet", 101  # 3 x 100 + 3 x 101 = 603: an odd chip for two winners
        return ("call", None) if legal.call else ("check", None)

    play(engine, console, policy)
    h = engine.state.hand(1, deal)
    assert h is not None and h.status == "complete"
    live = engine.payload(("live", "table:1"))
    assert live is not None and live["status"] == "idle"
    block = live["showdown"]
    button = engine.state.config.buttons[deal]
    first = next(s for s in deal_sequence(button, 3) if s in (1, 2))  # left of the button first
    assert block["pots"] == [
        {
            "amount": 603,
            "kind": "main",
            "winners": sorted((1, 2), key=lambda s: s != first),
            "shares": {str(first): 302, str(3 - first): 301},
            "hand": "Straight, ace high",
        }
    ]
    assert block["hands"] == {
        "1": "Straight, ace high",
        "2": "Straight, ace high",
        "3": "High card, ace",
    }
    assert block["runout"] is None
    assert_shares_make_result(block, h.hand, dict(h.result or {}))
    compare = engine.payload(("live", f"compare:{deal}:1"))
    assert compare is not None
    assert compare["rows"][0]["showdown"] == block


def test_a_three_way_all_in_run_out_carries_equity_street_by_street() -> None:
    hole = {1: ("Ac", "Ad"), 2: ("Kc", "Kd"), 3: ("Qc", "Qd")}
    engine, console, deal = engine_with(hole, "2h 7s Kh Jc 3s")

    def shove(hand: Hand, seat: int, legal: Any) -> tuple[str, int | None]:
        if legal.max_to is not None:
            return "raise", legal.max_to
        return "call", None

    console.ok("start", deal=deal)
    play(engine, console, shove)
    block = engine.payload(("live", "table:1"))["showdown"]
    assert (
        block["pots"][0]["winners"] == [2] and block["pots"][0]["hand"] == "Three of a kind, kings"
    )
    assert block["pots"][0]["amount"] == 30_000 and block["pots"][0]["kind"] == "main"
    runout = block["runout"]
    assert [r["street"] for r in runout] == ["preflop", "flop", "turn", "river"]
    assert set(runout[0]["equity"]) == {"1", "2", "3"}
    assert runout[0]["equity"]["1"] > runout[0]["equity"]["2"] > runout[0]["equity"]["3"]
    for street in runout:
        assert sum(street["equity"].values()) + max(street["tie"].values()) == pytest.approx(
            100, abs=1
        )
    assert runout[-1]["equity"] == {"1": 0.0, "2": 100.0, "3": 0.0}
    # On the turn only the two aces left (40 of 42 rivers) save seat 1 from the kings' set.
    assert runout[2]["equity"] == {"1": round(200 / 42, 1), "2": round(4000 / 42, 1), "3": 0.0}


def test_public_topics_hold_the_showdown_until_the_deal_is_released() -> None:
    config = make_config(seats=3, deals=4)
    engine = Engine(config, make_decks(config))
    engine.start_feed()
    deal = 0
    for table in (1, 2, 3):
        console = Console(engine, table)
        deal = deal or engine.state.tables[table].next_deal() or 0
        while engine.state.tables[table].next_deal() != deal:
            console.ok("start", deal=engine.state.tables[table].next_deal())
            play(
                engine,
                console,
                lambda hand, seat, legal: (
                    ("fold", None)
                    if legal.fold and not legal.check
                    else ("check", None)
                    if legal.check
                    else ("call", None)
                ),
            )
        live = engine.payload(("live", f"table:{table}"))
        console.ok("start", deal=deal)
        play(
            engine,
            console,
            lambda hand, seat, legal: ("check", None) if legal.check else ("call", None),
        )
        live = engine.payload(("live", f"table:{table}"))
        assert live is not None and live["showdown"]["deal"] == deal
        assert live["showdown"]["hands"]  # checked down: every hand shown
        if table < 3:
            assert engine.payload(("public", f"compare:{deal}:1")) is None
            public = engine.payload(("public", f"table:{table}"))
            assert public is not None and public["showdown"] is None
    engine.tick(1e9)
    assert engine.release.released(config.groups_playing(deal)[0].id, deal)
    for table in (1, 2, 3):
        public = engine.payload(("public", f"table:{table}"))
        assert public is not None
        assert (
            public["showdown"]
            == engine.payload(("live", f"compare:{deal}:1"))["rows"][table - 1]["showdown"]
        )
        assert public["showdown"]["deal"] == deal
    compare = engine.payload(("public", f"compare:{deal}:2"))
    assert compare is not None and all(row["showdown"]["hands"] for row in compare["rows"])


def test_every_settled_hand_of_a_session_shares_its_pots_to_its_result() -> None:
    """Bots play a session: every complete hand's showdown pays exactly its chip-scores, the
    winners of each pot are among its eligible seats, and fold-outs show no hand."""
    config = make_config(seats=3, deals=4)
    decks = make_decks(config)
    engine = Engine(config, decks)
    for event in simulate_session(config, decks, random.Random(5)):
        engine.submit(event, 0.0)
    checked = 0
    for table in engine.state.tables.values():
        for h in table.hands.values():
            block = engine.payload(("live", f"compare:{h.deal}:1"))["rows"][table.table - 1][
                "showdown"
            ]
            if h.status != "complete":
                assert block is None
                continue
            assert_shares_make_result(block, h.hand, dict(h.result or {}))
            live = [s for s in h.hand.committed if s not in h.hand.folded]
            assert (block["hands"] == {}) == (len(live) == 1)
            checked += 1
    assert checked >= 10


# ---------------------------------------------------------------- every game's sample session
SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.mark.parametrize("name", ["rps-poker", "mcr", "piecepack"])
def test_each_games_sample_session_names_its_showdowns(name: str) -> None:
    """The sample sessions replayed: every complete hand's showdown pays its chip-scores
    (RPS Poker: throws against the dealer's named; piecepack: tiles' categories), mahjong's
    carries the entered result and its payments."""
    config = load_config(SAMPLES / f"{name}.toml")
    engine = Engine(config, load_decks(config, SAMPLES, {}))
    lines = (SAMPLES / f"{name}-session.jsonl").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        engine.submit(json.loads(line), float(i))
    names: list[str] = []
    for table in engine.state.tables.values():
        for h in table.hands.values():
            block = showdown_payload(h, engine.state.game)
            if h.status != "complete":
                assert block is None
                continue
            assert block is not None and block["deal"] == h.deal
            if name == "mcr":
                assert block["pots"] == [] and block["mahjong"]["points"] == {
                    str(s): p for s, p in (h.result or {}).items()
                }
                names.append(block["mahjong"]["kind"])
                continue
            assert_shares_make_result(block, h.hand, dict(h.result or {}))
            names += block["hands"].values()
    assert names
    if name == "rps-poker":
        assert any(" against the dealer: " in n for n in names)
        assert any(n.endswith(", the dealer's") for n in names)
    if name == "piecepack":
        assert all(
            n.split()[0] in ("Suit-flush", "Link-flush", "Group-flush", "No-flush") for n in names
        )
    if name == "mcr":
        assert set(names) <= {"draw", "self_draw", "discard"} and len(set(names)) > 1


# ---------------------------------------------------------------- property
@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from(["standard", "unequal", "pokerkit"]))
def test_the_package_pays_exactly_what_settle_paid(seed: int, kind: str) -> None:
    """Any hand bots play to the end (any seats, unequal stacks, antes, PokerKit's odd-chip
    rule): the pots' shares less what each seat committed are the chip-scores, every winner
    could win its pot, the main pot comes first, and a hand shown is named for each player in."""
    rng = random.Random(seed)
    if kind == "pokerkit":
        spec = pokerkit_spec(rng, rng.random() < 0.5)
    else:
        spec = random_spec(rng, rng.random() < 0.5, unequal=kind == "unequal")
    hand = play_with_bots(spec, rng)
    block = poker_showdown(settled(hand), HOLDEM.seat_name)
    assert block is not None
    assert_shares_make_result(block, hand, dict(hand.result or {}))
    pots = block["pots"]
    assert [p["kind"] for p in pots] == ["main"] + ["side"] * (len(pots) - 1)
    live = {s for s in hand.committed if s not in hand.folded}
    for p in pots:
        assert set(p["winners"]) <= live and p["winners"]
    if len(live) > 1:
        assert set(block["hands"]) == {str(s) for s in live}
    else:
        assert block["hands"] == {} and pots[0]["winners"] == sorted(live)
