"""Piecepack hold'em (``game = "piecepack-holdem"``): 48-tile deck orders through the same
engine, showdowns by the seed's 17 categories, chip-scores, release and the sample session.

The worked hand (every figure below computed by hand, docs/piecepack.md for the ranking):

    board   2♠ 4♠ 3♣ 5♡ A♢        (2bs 4bs 3bc 5wh Awd)
    seat 1  N♥ N♡  (Nbh Nwh)  best N A 5 4 3, no group holds five: NF 0P, N high
    seat 2  5♦ A♥  (5bd Abh)  five black tiles 5♦ A♥ 2♠ 4♠ 3♣, all ranks distinct: GF 0P
    seat 3  A♡ 2♢  (Awh 2wd)  best A 5 4 3 2 (the pairs of aces and twos rank lower): NF 0P

GF 0P (9th of 17) beats NF 0P (14th): seat 2 wins by category, although seat 1's no-pairs is
N high. Seats 1 and 3 are in the same category, NF 0P; the first rank decides, N > A: seat 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hub.domain.config import ConfigError, parse_config
from hub.domain.dealing import Dealt, card_position, deal
from hub.domain.deck import (
    DeckOrder,
    commitment,
    commitment_text,
    deck_order_from_cards,
    seeded_deck_orders,
)
from hub.domain.games.holdem.hand import Hand
from hub.domain.games.piecepack.pieces import TILES
from hub.domain.games.piecepack.tiles import TILES as TILE_CODES
from hub.domain.games.piecepack.tiles import best_of, format_tiles, is_tile
from hub.domain.games.registry import games, order_from_text
from hub.domain.games.spec import HandSpec
from hub.domain.pieces import CARDS
from hub.engine.core import Engine
from hub.files.config import load_config
from hub.files.decks import (
    DeckFileError,
    decrypt_orders,
    encrypt_orders,
    export_plain,
    generate_key,
    load_decks,
    parse_plain,
)
from tests.factories import config_data
from tests.hubharness import duplicast

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "piecepack.toml"
SESSION = ROOT / "samples" / "piecepack-session.jsonl"

BOARD = ("2bs", "4bs", "3bc", "5wh", "Awd")
HOLE = {1: ("Nbh", "Nwh"), 2: ("5bd", "Abh"), 3: ("Awh", "2wd")}


# ---------------------------------------------------------------- the worked hand
def test_the_worked_hands_categories_and_tie_break() -> None:
    values = {seat: best_of((*hole, *BOARD)) for seat, hole in HOLE.items()}
    assert values[1].category.abbreviation == "NF 0P"
    assert values[1].ranks == ("N", "A", "5", "4", "3")
    assert values[2].category.abbreviation == "GF 0P"
    assert set(values[2].tiles) == {"5bd", "Abh", "2bs", "4bs", "3bc"}
    assert values[3].category.abbreviation == "NF 0P"
    assert values[3].ranks == ("A", "5", "4", "3", "2")
    assert values[2] > values[1] > values[3]  # category first, then N > A inside NF 0P
    assert values[2].category.name == "Group-flush no-pairs"


def test_a_showdown_with_a_side_pot_decided_by_category_then_by_tie_break() -> None:
    """No-limit, stacks 5,000 / 1,000 / 5,000, button seat 1 (seat 2 small blind 50, seat 3
    big blind 100; seat 1 acts first before the flop, seat 3 first after it).

    preflop: 1 calls 100, 2 all in for 1,000, 3 calls 1,000, 1 calls 1,000
    flop:    3 checks, 1 bets 2,000, 3 calls; turn and river checked
    main pot 3 x 1,000 = 3,000, all three eligible: seat 2 (GF 0P beats both NF 0P)
    side pot 2 x 2,000 = 4,000, seats 1 and 3: seat 1 (NF 0P, N high beats A high)
    chip-scores: seat 1 4,000 - 3,000 = +1,000; seat 2 3,000 - 1,000 = +2,000;
                 seat 3 0 - 3,000 = -3,000 (sum 0)
    """
    spec = HandSpec(
        seats=3,
        button=1,
        small_blind=50,
        big_blind=100,
        cap=5000,
        pot_limit=False,
        stacks=(5000, 1000, 5000),
        cards=Dealt(HOLE, BOARD),
        pieces=TILES,
    )
    hand = Hand(spec)
    for seat, kind, amount in [
        (1, "call", None),
        (2, "raise", 1000),
        (3, "call", None),
        (1, "call", None),
        (3, "check", None),
        (1, "bet", 2000),
        (3, "call", None),
        (3, "check", None),
        (1, "check", None),
        (3, "check", None),
        (1, "check", None),
    ]:
        hand.act(seat, kind, amount)
    assert hand.street == "showdown"
    assert [(p.amount, p.eligible) for p in hand.pots()] == [
        (3000, frozenset({1, 2, 3})),
        (4000, frozenset({1, 3})),
    ]
    assert hand.settle() == {1: 1000, 2: 2000, 3: -3000}


def order_dealing(
    hole: dict[int, tuple[str, str]], board: tuple[str, ...], button: int
) -> DeckOrder:
    """A 48-tile deck order that deals ``hole`` and ``board`` (the other tiles after them)."""
    seats = len(hole)
    slots: dict[int, str] = {}
    for seat, pair in hole.items():
        for which, tile in enumerate(pair, 1):
            slots[card_position(button, seats, seat, which)] = tile
    top = 2 * seats  # the burns are at top, top + 4 and top + 6
    for offset, tile in zip((1, 2, 3, 5, 7), board, strict=True):
        slots[top + offset] = tile
    rest = iter(t for t in TILE_CODES if t not in slots.values())
    tiles = tuple(slots.get(i) or next(rest) for i in range(len(TILE_CODES)))
    return DeckOrder(tiles, True, pieces=TILES)


def piecepack_config(**kwargs: Any) -> Any:
    data = config_data(**kwargs)
    data["tournament"]["game"] = "piecepack-holdem"
    return parse_config(data, "<test>")


class Console:
    def __init__(self, engine: Engine, table: int) -> None:
        self.engine, self.table, self.seq = engine, table, 0

    def ok(self, kind: str, **fields: Any) -> Any:
        self.seq += 1
        event = {
            "v": 1,
            "tournament": self.engine.state.config.id,
            "table": self.table,
            "console": f"table{self.table}",
            "seq": self.seq,
            "type": kind,
            **fields,
        }
        out = self.engine.submit(event, 0.0)
        assert out.ok, out.ack
        return out


def test_the_worked_hand_at_three_tables_chip_scores_and_seat_points() -> None:
    """One deal of the worked tiles (blinds 50/100, pot-limit, everyone 10,000) at 3 tables:

    table 1: 1 calls, 2 calls, 3 checks, then checked down: 3 x 100 = 300 to seat 2
             (GF 0P): seat 1 -100, seat 2 +200, seat 3 -100
    table 2: 1 folds, 2 calls, 3 checks, checked down: 200 to seat 2:
             seat 1 0, seat 2 +100, seat 3 -100
    table 3: 1 calls, 2 folds (its 50 stays), 3 checks, checked down between 1 and 3:
             250 to seat 1 (N high beats A high): seat 1 +150, seat 2 -50, seat 3 -100
    seat points, 3 tables (3, 2, 1; ties share): seat 1 T3 3, T2 2, T1 1; seat 2 T1 3, T2 2,
    T3 1; seat 3 all -100, tied: (3 + 2 + 1) / 3 = 2 each.
    """
    config = piecepack_config(seats=3, deals=1)
    assert config.buttons[1] == 1
    engine = Engine(config, {1: order_dealing(HOLE, BOARD, 1)})
    preflop = {
        1: [(1, "call"), (2, "call"), (3, "check")],
        2: [(1, "fold"), (2, "call"), (3, "check")],
        3: [(1, "call"), (2, "fold"), (3, "check")],
    }
    for table in config.tables:
        console = Console(engine, table)
        console.ok("start", deal=1)
        for seat, kind in preflop[table]:
            console.ok(kind, seat=seat)
        current = engine.state.tables[table].current
        assert current is not None
        while current.hand.street != "showdown":
            seat = current.hand.to_act
            assert seat is not None
            console.ok("check", seat=seat)
        winners = current.hand.computed_winners()
        assert winners is not None
        console.ok("win", seats=sorted(winners))
    results = {t: engine.state.board.result(t, 1) for t in config.tables}
    assert results == {
        1: {1: -100, 2: 200, 3: -100},
        2: {1: 0, 2: 100, 3: -100},
        3: {1: 150, 2: -50, 3: -100},
    }
    standings = engine.payload(("public", "standings"))
    assert standings is not None and standings["game"] == "piecepack-holdem"
    points = {
        block["seat"]: {row["table"]: (row["chips"], row["points"]) for row in block["rows"]}
        for block in standings["like_for_like"]["seats"]
    }
    assert points == {
        1: {1: (-100, 1), 2: (0, 2), 3: (150, 3)},
        2: {1: (200, 3), 2: (100, 2), 3: (-50, 1)},
        3: {1: (-100, 2), 2: (-100, 2), 3: (-100, 2)},
    }
    # The tiles, not cards, in the payloads; no chances for tiles (equity null, not wrong).
    compare = engine.payload(("public", "compare:1:1"))
    assert compare is not None and compare["game"] == "piecepack-holdem"
    assert compare["hole"] == ["Nbh", "Nwh"] and compare["board"] == list(BOARD)
    assert all(row["equity"] is None for row in compare["rows"])


# ---------------------------------------------------------------- deck orders of 48 tiles
def test_seeded_tile_orders_deal_and_commit() -> None:
    orders = seeded_deck_orders("pp", 3, TILES)
    assert all(sorted(o.cards) == sorted(TILE_CODES) and o.rehearsal for o in orders.values())
    assert orders == seeded_deck_orders("pp", 3, TILES)
    assert orders[1] != orders[2]
    dealt = deal(orders[1], button=4, seats=4)
    # Button 4: seat 1 gets tiles 0 and 4; burns 8, 12, 14; the board is 9, 10, 11, 13, 15.
    cards = orders[1].cards
    assert dealt.hole[1] == (cards[0], cards[4])
    assert dealt.board == (cards[9], cards[10], cards[11], cards[13], cards[15])
    text = commitment_text(orders)
    lines = text.splitlines()
    assert lines[0] == "duplicast-decks-v1" and len(lines) == 4
    assert lines[1] == "1:" + "".join(orders[1].cards) and len(lines[1]) == 2 + 3 * 48
    import hashlib

    assert commitment(orders) == hashlib.sha256(text.encode()).hexdigest()


def test_tile_orders_round_trip_through_the_deck_file_and_the_plain_export() -> None:
    orders = seeded_deck_orders("pp", 4, TILES)
    key = generate_key()
    back = decrypt_orders(encrypt_orders(orders, key), key)
    assert back == orders and commitment(back) == commitment(orders)
    plain = parse_plain(export_plain(orders))
    assert {d: o.cards for d, o in plain.items()} == {d: o.cards for d, o in orders.items()}
    spelled = format_tiles(TILE_CODES)  # "N♠ A♠ 2♠ ...", as people write them
    assert deck_order_from_cards(spelled, pieces=TILES).cards == TILE_CODES


WHOLE = "^not a permutation of the 52 cards or of the 48 piecepack tiles$"


@pytest.mark.parametrize(
    ("cards", "problem"),
    [
        (TILE_CODES[:-1], WHOLE),
        ((*TILE_CODES[:-1], TILE_CODES[0]), WHOLE),
        ((*TILE_CODES[:-1], "Ah"), WHOLE),
    ],
)
def test_a_tile_order_must_hold_each_of_the_48_tiles_once(
    cards: tuple[str, ...], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        DeckOrder(cards, pieces=TILES)
    if "Ah" not in cards:  # a deck file's line of tiles alike (with a card: a tile's misspelt)
        with pytest.raises(ValueError, match=problem):
            order_from_text("".join(cards))
    with pytest.raises(ValueError, match=r"^a deck order has 52 cards, got 48$"):
        DeckOrder(TILE_CODES)  # an order is of cards unless it is told its set: none is guessed


def test_the_game_and_the_deck_orders_must_agree(tmp_path: Path) -> None:
    config = piecepack_config(seats=3, deals=2)
    with pytest.raises(ValueError, match="not a deck order of game 'piecepack-holdem'"):
        Engine(config, seeded_deck_orders("x", 2))  # 52 cards for a tile game
    key = generate_key()
    (tmp_path / "decks.enc").write_bytes(encrypt_orders(seeded_deck_orders("x", 2), key))
    data = config_data(seats=3, deals=2, rehearsal_seed=None)
    data["tournament"]["game"] = "piecepack-holdem"
    data["decks"] = {"file": "decks.enc"}
    with pytest.raises(DeckFileError, match="not an order of the 48 pieces"):
        load_decks(parse_config(data, "<test>"), tmp_path, {"DUPLICAST_DECK_KEY": key})
    assert games["holdem"].pieces is CARDS and games["piecepack-holdem"].pieces is TILES


def test_the_game_key_is_checked_with_file_key_and_line() -> None:
    text = SAMPLE.read_text().replace('game = "piecepack-holdem"', 'game = "piquet"')
    import tomllib

    with pytest.raises(ConfigError) as caught:
        parse_config(tomllib.loads(text), "samples/piecepack.toml", text)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if s.startswith("game ="))
    assert str(caught.value).startswith(f"samples/piecepack.toml:{line}: tournament.game:")
    assert "'holdem', 'piecepack-holdem'" in str(caught.value)
    assert load_config(SAMPLE).game == "piecepack-holdem"
    assert parse_config(config_data(), "<test>").game == "holdem"


# ---------------------------------------------------------------- release
def test_public_feeds_show_a_tile_deal_only_after_every_table_played_it() -> None:
    config = piecepack_config(seats=3, deals=2)
    engine = Engine(config, seeded_deck_orders("release", 2, TILES))
    consoles = {t: Console(engine, t) for t in config.tables}
    target = config.deal_orders[1][0]
    for t, console in consoles.items():
        while engine.state.tables[t].next_deal() != target:
            play_checked_down(console, engine)
    for i, console in enumerate(consoles.values()):
        assert engine.payload(("public", f"deal:{target}")) is None
        assert engine.payload(("public", f"compare:{target}:1")) is None
        public_table = engine.payload(("public", f"table:{console.table}"))
        assert public_table is not None and "board" not in public_table
        standings = engine.payload(("public", "standings"))
        assert target not in standings["deals"]["complete"]["G0"]
        live = engine.payload(("live", f"compare:{target}:1"))
        if i:  # a table has started it: the live desk sees the tiles already
            assert live is not None and all(is_tile(t) for t in live["hole"])
        play_checked_down(console, engine)
        if i < len(consoles) - 1:
            assert not engine.release.released("G0", target)
    assert engine.release.released("G0", target)
    public = engine.payload(("public", f"deal:{target}"))
    assert public is not None and public["game"] == "piecepack-holdem"
    assert len(public["board"]) == 5 and all(is_tile(t) for t in public["board"])
    assert all(is_tile(t) for pair in public["hole"].values() for t in pair)


def play_checked_down(console: Console, engine: Engine) -> dict[int, int]:
    """Everyone calls or checks to the showdown; the official declares the tiles' winners."""
    table = engine.state.tables[console.table]
    console.ok("start", deal=table.next_deal())
    current = table.current
    assert current is not None
    while current.hand.street != "showdown":
        seat = current.hand.to_act
        assert seat is not None
        console.ok("call" if current.hand.legal(seat).call else "check", seat=seat)
    winners = current.hand.computed_winners()
    assert winners
    console.ok("win", seats=sorted(winners))
    assert current.result is not None
    return current.result


# ---------------------------------------------------------------- the sample, from the CLI
def test_simulate_reproduces_the_committed_sample_session(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    run = duplicast("simulate", "--config", str(SAMPLE), "--seed", "1", "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert out.read_text() == SESSION.read_text()
    events = [json.loads(line) for line in SESSION.read_text().splitlines()]
    kinds = {e["type"] for e in events}
    assert {"start", "fold", "check", "call", "bet", "raise", "win", "undo", "void"} <= kinds


def test_replay_scores_the_sample_session() -> None:
    run = duplicast("replay", "--config", str(SAMPLE), str(SESSION))
    assert run.returncode == 0, run.stderr
    standings = json.loads(run.stdout)
    assert standings["game"] == "piecepack-holdem"
    assert standings["deals"]["complete"]["A"] == list(range(1, 9))
    n = 4  # 4 tables of 4 seats: seat points 4..1, 10 per seat, 40 per deal set of tables
    teams = standings["like_for_like"]["teams"]
    assert {t["team"] for t in teams} == {"OAK", "SUN", "MOO", "CRO"}
    assert sum(t["points"] for t in teams) == n * n * (n + 1) / 2
    assert sum(t["chips"] for t in teams) == 0
    # The deck orders are the sample's: every showdown the official declared as the tiles
    # say, but the one the simulator declares wrongly on purpose (a dispute, confirmed later).
    assert "1 of" in run.stderr and "contradicted" in run.stderr


def test_decks_and_verify_for_the_piecepack_sample(tmp_path: Path) -> None:
    key_file = tmp_path / "deck.key"
    made = duplicast("decks", "--new-key", "--key-out", str(key_file))
    assert made.returncode == 0, made.stderr
    env = {"DUPLICAST_DECK_KEY_FILE": str(key_file)}
    out = tmp_path / "decks.enc"
    run = duplicast("decks", "--config", str(SAMPLE), "--out", str(out), env=env)
    assert run.returncode == 0, run.stderr
    printed = next(line for line in run.stdout.splitlines() if line.startswith("commitment:"))
    from hub.files.decks import read_deck_file

    orders = read_deck_file(out, key_file.read_text().strip())
    assert sorted(orders) == list(range(1, 9))
    assert all(sorted(o.cards) == sorted(TILE_CODES) for o in orders.values())
    assert printed == f"commitment: sha256:{commitment(orders)}"
    verify = duplicast("decks", "verify", "--commitment", printed, "--deck-file", str(out), env=env)
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.startswith("commitment matches")


def test_the_tiles_are_the_piecepack_folders_declaration() -> None:
    """The 48 tiles are declared in games/piecepack/ and are the piecepack game's ``pieces``,
    which the registry makes known (``pieces.PIECE_SETS``); the shared modules of piece sets and
    deck orders name no game's pieces but the cards (issue #31)."""
    import ast

    from hub.domain import deck, pieces

    assert TILES.__class__ is pieces.PieceSet and games["piecepack-holdem"].pieces is TILES
    assert pieces.PIECE_SETS[TILES.game] is TILES
    for module in (pieces, deck):
        tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
        imported = {
            node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        } | {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        assert not any(name.startswith("hub.domain.games") for name in imported), imported
    assert not hasattr(pieces, "TILES")
    assert order_from_text("".join(TILE_CODES)) == DeckOrder(TILE_CODES, pieces=TILES)
