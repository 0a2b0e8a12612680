"""Duplicate MCR mahjong (docs/mahjong.md): walls, the result event, payments, IMPs by hand,
corrections, release, the sample session's replay."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from hub.cli.replay import replay_files
from hub.domain.config import ConfigError, TournamentConfig, parse_config
from hub.domain.deck import commitment, commitment_text
from hub.domain.errors import Rejection
from hub.domain.games.mahjong.rules import (
    FULL_SET,
    KINDS,
    MCR_SCALE,
    MahjongResult,
    MahjongRules,
    PaymentRule,
    Wall,
    check_result,
    payments,
    random_wall,
    seat_winds,
    seeded_walls,
    tile_label,
)
from hub.domain.imp import parse_scale
from hub.domain.scoring import full_recompute
from hub.engine.core import Engine
from hub.engine.events import parse_event
from hub.engine.simulate import simulate_session
from hub.engine.snapshot import restore_state, snapshot
from hub.engine.ticker import swing_items
from hub.files.config import load_config
from hub.files.decks import decrypt_orders, encrypt_orders, export_plain, generate_key, parse_plain
from tests.test_projections import Client, assert_projected

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "mcr.toml"
SESSION = ROOT / "samples" / "mcr-session.jsonl"
RULE = PaymentRule()

# Teams A..D in a Latin square: table 1 seats A B C D, table 2 B C D A, table 3 C D A B,
# table 4 D A B C. East is seat 1 on deal 1, seat 2 on deal 2.
DRAW = {"1": ["A", "B", "C", "D"], "2": ["B", "C", "D", "A"]}
DRAW |= {"3": ["C", "D", "A", "B"], "4": ["D", "A", "B", "C"]}


def mcr_data(deals: int = 2, **scoring: Any) -> dict[str, Any]:
    teams = [
        {"id": t, "name": f"Team {t}", "colour": "#112233", "players": [f"{t}{i}" for i in "1234"]}
        for t in "ABCD"
    ]
    data: dict[str, Any] = {
        "tournament": {"id": "mcr-t", "name": "MCR test", "game": "mcr", "seats": 4},
        "teams": teams,
        "groups": [{"id": "G", "tables": [1, 2, 3, 4], "teams": list("ABCD")}],
        "draw": {"tables": DRAW},
        "decks": {"rehearsal_seed": "t"},
    }
    data["tournament"]["deals"] = deals
    if scoring:
        data["scoring"] = scoring
    return data


def mcr_config(deals: int = 2, **scoring: Any) -> TournamentConfig:
    return parse_config(mcr_data(deals, **scoring), "mcr-test.toml")


class Console:
    """Sends events for every table of an engine, one sequence per console."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.seqs: dict[int, int] = {}
        self.clock = 0.0

    def send(self, table: int, kind: str, **fields: Any) -> Any:
        self.seqs[table] = self.seqs.get(table, 0) + 1
        self.clock += 1
        event = {"v": 1, "tournament": self.engine.state.config.id, "table": table}
        event |= {"console": f"table{table}", "seq": self.seqs[table], "type": kind, **fields}
        return self.engine.submit(event, self.clock)

    def ok(self, table: int, kind: str, **fields: Any) -> None:
        outcome = self.send(table, kind, **fields)
        assert outcome.ok, outcome.ack

    def hand(self, table: int, deal: int, **result: Any) -> None:
        self.ok(table, "start", deal=deal)
        self.ok(table, "result", deal=deal, **result)


def seat_imps(engine: Engine, view: str = "like_for_like") -> dict[tuple[int, int], int]:
    """(table, seat) -> IMPs of the engine's scoreboard."""
    board = engine.state.board
    return {
        (row.table, block.seat): row.imps or 0 for block in board.seats(view) for row in block.rows
    }


def team_imps(engine: Engine, view: str = "like_for_like") -> dict[str, int]:
    return {row.team: row.imps or 0 for row in engine.state.board.standings(view)}  # type: ignore[arg-type]


# -- tiles and walls ---------------------------------------------------------------------------


def test_a_wall_is_136_tiles_each_seat_13_in_hand_and_21_in_front() -> None:
    assert len(KINDS) == 34 and len(FULL_SET) == 136
    wall = random_wall(random.Random(1))
    assert wall.rehearsal and repr(wall) == "Wall(rehearsal)"
    hands = [wall.hand(s) for s in range(1, 5)]
    fronts = [wall.wall(s) for s in range(1, 5)]
    assert [len(h) for h in hands] == [13] * 4 and [len(w) for w in fronts] == [21] * 4
    # seat s holds tiles 34(s-1) .. 34s-1: its 13, then its 21
    assert hands[1] + fronts[1] == wall.cards[34:68]
    assert sorted(t for h, w in zip(hands, fronts, strict=True) for t in h + w) == sorted(FULL_SET)
    assert tile_label("1z") == "E" and tile_label("7z") == "C" and tile_label("5m") == "5m"
    with pytest.raises(ValueError, match="136"):
        Wall(wall.cards[:-1])
    with pytest.raises(ValueError, match=r"[12]m 5 times"):
        first = "1m" if wall.cards[0] != "1m" else "2m"
        Wall((first, *wall.cards[1:]))
    secret = random_wall()
    assert not secret.rehearsal and repr(secret) == "Wall(<secret>)"


def test_walls_go_through_the_deck_file_plain_export_and_commitment() -> None:
    walls = seeded_walls("x", 3)
    assert walls == seeded_walls("x", 3) and walls[1] != walls[2]
    key = generate_key()
    assert decrypt_orders(encrypt_orders(walls, key), key) == walls
    plain = parse_plain(export_plain(walls))  # (a plain export does not say "rehearsal")
    assert {d: w.cards for d, w in plain.items()} == {d: w.cards for d, w in walls.items()}
    assert all(isinstance(w, Wall) for w in plain.values())
    # the commitment line of a deal is its 136 codes run together
    line = commitment_text(walls).splitlines()[1]
    assert line == "1:" + "".join(walls[1].cards) and len(line) == 2 + 272
    assert len(commitment(walls)) == 64


def test_winds_follow_the_east_seat_up_the_seat_numbers() -> None:
    assert seat_winds(1) == {1: "E", 2: "S", 3: "W", 4: "N"}
    assert seat_winds(3) == {3: "E", 4: "S", 1: "W", 2: "N"}


# -- payments ----------------------------------------------------------------------------------


def test_payments_worked_by_hand() -> None:
    # Seat 1 wins 10 fan on seat 2's discard: seat 2 pays 8 + 10 = 18, seats 3 and 4 pay 8
    # each; seat 1 gets 18 + 8 + 8 = 34.
    assert payments(MahjongResult(1, 10, discarder=2), RULE) == {1: 34, 2: -18, 3: -8, 4: -8}
    # Seat 3 self-draws 8 fan: each of the three pays 8 + 8 = 16; seat 3 gets 3 x 16 = 48.
    assert payments(MahjongResult(3, 8), RULE) == {1: -16, 2: -16, 3: 48, 4: -16}
    # A draw: nobody pays.
    assert payments(MahjongResult(None), RULE) == {1: 0, 2: 0, 3: 0, 4: 0}
    # A variant: base 5, seat 4 wins 9 fan on seat 1: seat 1 pays 14, the others 5; 4 gets 24.
    variant = PaymentRule(base=5, min_fan=6)
    assert payments(MahjongResult(4, 9, 1), variant) == {1: -14, 2: -5, 3: -5, 4: 24}


@pytest.mark.parametrize(
    ("result", "code", "words"),
    [
        (MahjongResult(1, 7, 2), "bad_amount", "at least 8 fan"),
        (MahjongResult(2, 10, 2), "bad_winner", "own discard"),
        (MahjongResult(5, 10, 2), "unknown_seat", "winner seat 5"),
        (MahjongResult(1, 10, 6), "unknown_seat", "discarder seat 6"),
        (MahjongResult(1, None, 2), "bad_amount", "fan total"),
    ],
)
def test_impossible_results_are_refused(result: MahjongResult, code: str, words: str) -> None:
    with pytest.raises(Rejection) as caught:
        check_result(result, RULE)
    assert caught.value.code == code and words in caught.value.message


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"seat": 1, "fan": 10}, "exactly one of 'discarder'"),
        ({"seat": 1, "fan": 10, "discarder": 2, "self_draw": True}, "exactly one"),
        ({"fan": 10, "self_draw": True}, "needs the winner's 'seat'"),
        ({"draw": True, "seat": 1}, "no winner"),
        ({"draw": False}, "must be true"),
        ({"seat": 1, "fan": "ten", "self_draw": True}, "'fan' must be an integer"),
    ],
)
def test_result_events_with_bad_fields_are_bad_schema(fields: dict[str, Any], words: str) -> None:
    raw = {"v": 1, "tournament": "t", "table": 1, "console": "c", "seq": 1, "type": "result"}
    with pytest.raises(Rejection) as caught:
        parse_event(raw | fields)
    assert caught.value.code == "bad_schema" and words in caught.value.message
    with pytest.raises(Rejection, match="belongs to a 'result'"):
        parse_event(raw | {"type": "fold", "seat": 1, "fan": 8})


def test_the_engine_refuses_impossible_results_and_changes_nothing() -> None:
    engine = Engine(mcr_config())
    console = Console(engine)
    console.ok(1, "start", deal=1)
    for fields, code in [
        ({"seat": 1, "fan": 7, "discarder": 2}, "bad_amount"),
        ({"seat": 3, "fan": 8, "discarder": 3}, "bad_winner"),
        ({"seat": 5, "fan": 8, "self_draw": True}, "unknown_seat"),
        ({"seat": 1, "fan": 8, "discarder": 9}, "unknown_seat"),
    ]:
        outcome = console.send(1, "result", **fields)
        assert not outcome.ok and outcome.code == code, outcome.ack
    assert console.send(1, "fold", seat=1).code == "not_allowed"  # no betting in mahjong
    assert engine.state.tables[1].current is not None  # still in play, nothing counted
    assert engine.state.board.result(1, 1) is None


POKER_EVENTS = {
    "fold": {"seat": 1},
    "check": {"seat": 1},
    "call": {"seat": 1},
    "bet": {"seat": 1, "amount": 4},
    "raise": {"seat": 1, "amount": 8},
    "win": {"seats": [1]},
    "exposed": {"seat": 1, "card": 1},
    "early": {},
}


@pytest.mark.parametrize("state", ["no hand", "in play", "reopened", "done"])
def test_a_poker_event_at_a_mahjong_table_is_refused_in_mahjongs_words(state: str) -> None:
    """MCR plays the shared events and its result, not hold'em's: a console's bet, winners or
    card error is refused before any handler, in every state of the table (a bet in play got
    the first sentence from the hand; with no hand in play it was 'hand_not_started', a `win`
    'betting is not over', an `early` 'no board card comes after the play')."""
    from hub.domain.games.registry import games

    assert {"fold", "bet", "win", "exposed", "early"}.isdisjoint(games["mcr"].handlers)
    engine = Engine(mcr_config())
    console = Console(engine)
    if state != "no hand":
        console.ok(1, "start", deal=1)
    if state in ("reopened", "done"):
        console.ok(1, "result", deal=1, draw=True)
    if state == "reopened":
        console.ok(1, "reopen", deal=1)
    before = snapshot(engine.state)
    for kind, fields in POKER_EVENTS.items():
        outcome = console.send(1, kind, deal=1, **fields)
        betting = f"mahjong has no betting: send a 'result', not '{kind}'"
        card_error = f"'{kind}' is a card error: mahjong has none"
        words = card_error if kind in ("exposed", "early") else betting
        assert (outcome.code, outcome.ack["error"]) == ("not_allowed", words), kind
    assert snapshot(engine.state) == before


def test_a_poker_tournament_refuses_a_result() -> None:
    from tests.factories import make_config

    engine = Engine(make_config(seats=3, deals=2))
    console = Console(engine)
    console.ok(1, "start", deal=engine.state.tables[1].next_deal())
    outcome = console.send(1, "result", draw=True)
    assert outcome.code == "not_allowed" and "mahjong" in outcome.ack["error"]


# -- IMPs by hand ------------------------------------------------------------------------------


def test_individual_imps_of_one_deal_across_four_tables() -> None:
    engine = Engine(mcr_config())
    console = Console(engine)
    console.hand(1, 1, seat=1, fan=10, discarder=3)  # seat 1: +34
    console.hand(2, 1, draw=True)  # seat 1: 0
    console.hand(3, 1, seat=1, fan=8, self_draw=True)  # seat 1: +48
    console.hand(4, 1, seat=2, fan=12, discarder=1)  # seat 1: -(8 + 12) = -20
    # Seat 1: the average of all four tables is (34 + 0 + 48 - 20) / 4 = 62 / 4 = 15.5.
    # Differences, on the MCR scale (2->1, 5->2, 9->3, 13->4, 17->5, 22->6, 27->7, 32->8, 37->9):
    #   table 1: 34 - 15.5 = +18.5 -> +5;  table 2: 0 - 15.5 = -15.5 -> -4;
    #   table 3: 48 - 15.5 = +32.5 -> +8;  table 4: -20 - 15.5 = -35.5 -> -8.
    imps = seat_imps(engine)
    assert [imps[(t, 1)] for t in (1, 2, 3, 4)] == [5, -4, 8, -8]
    # Seat 2: table 1 -8 (seat 1 won on seat 3's discard), table 2 0, table 3 -16 (seat 1's
    # self-draw), table 4 +36 (won 12 fan on seat 1: 8 + 12 from seat 1, 8 from seats 3 and 4).
    # Average (-8 + 0 - 16 + 36) / 4 = 3; differences -11 -> -3, -3 -> -1, -19 -> -5, +33 -> +8.
    assert [imps[(t, 2)] for t in (1, 2, 3, 4)] == [-3, -1, -5, 8]
    # The ticker's swing of table 4's seat 2 (+36 - 3 = +33, past the threshold of 20 points),
    # worded in points: a mahjong hand has no chips.
    swings = [i["text"] for i in swing_items(engine.state, 4, 1) if i["seat"] == 2]
    assert len(swings) == 1 and "+36 points on deal 1, +33 against seat 2's average" in swings[0]
    # The same through the poker rule (against the others' average) would differ: table 1
    # seat 1, 34 - (0 + 48 - 20) / 3 = 24.67 -> 6, not 5.
    others = Engine(mcr_config(format="imp", average="others"))
    again = Console(others)
    for table, fields in [
        (1, {"seat": 1, "fan": 10, "discarder": 3}),
        (2, {"draw": True}),
        (3, {"seat": 1, "fan": 8, "self_draw": True}),
        (4, {"seat": 2, "fan": 12, "discarder": 1}),
    ]:
        again.hand(table, 1, **fields)
    assert seat_imps(others)[(1, 1)] == 6


def test_team_imps_over_two_deals_from_team_totals() -> None:
    engine = Engine(mcr_config())
    console = Console(engine)
    # Deal 1: table 1 seat 1 (team A) self-draws 8 fan: A +48, B, C, D -16 each (table 1 seats
    # A B C D); the other tables draw. Team totals A +48, B -16, C -16, D -16; their average is
    # 0; IMPs A 48 -> +10 (43 -> 10), B, C, D -16 -> -4 (13 -> 4).
    console.hand(1, 1, seat=1, fan=8, self_draw=True)
    for table in (2, 3, 4):
        console.hand(table, 1, draw=True)
    assert engine.state.board.team_deal_imps("G", 1) == {"A": 10, "B": -4, "C": -4, "D": -4}
    # Deal 2: table 2 (B C D A) seat 2 wins 10 fan on seat 3: C +34, D -18, B -8, A -8;
    # table 3 (C D A B) seat 4 wins 8 fan on seat 1: B +32, C -16, D -8, A -8; tables 1, 4 draw.
    # Totals: A -16, B +24, C +18, D -26 (sum 0, average 0); IMPs A -4, B +6 (22 -> 6),
    # C +5 (17 -> 5), D -6.
    console.hand(1, 2, draw=True)
    console.hand(2, 2, seat=2, fan=10, discarder=3)
    console.hand(3, 2, seat=4, fan=8, discarder=1)
    assert team_imps(engine) == {"A": 10, "B": -4, "C": -4, "D": -4}  # deal 2 not complete
    console.hand(4, 2, draw=True)
    assert engine.state.board.team_deal_imps("G", 2) == {"A": -4, "B": 6, "C": 5, "D": -6}
    # Session: A 10 - 4 = 6, B -4 + 6 = 2, C -4 + 5 = 1, D -4 - 6 = -10.
    assert team_imps(engine) == {"A": 6, "B": 2, "C": 1, "D": -10}
    assert team_imps(engine, "running") == team_imps(engine)
    ranks = {row.team: row.rank for row in engine.state.board.standings("like_for_like")}
    assert ranks == {"A": 1, "B": 2, "C": 3, "D": 4}
    # The same board from scratch (the oracle) agrees.
    scratch = full_recompute(engine.state.layout, engine.state.board.results())  # type: ignore[union-attr]
    assert [(r.team, r.imps) for r in scratch.standings("like_for_like")] == [
        (r.team, r.imps) for r in engine.state.board.standings("like_for_like")
    ]


def test_a_drawn_deal_scores_zero_for_everyone() -> None:
    engine = Engine(mcr_config())
    console = Console(engine)
    for table in (1, 2, 3, 4):
        console.hand(table, 1, draw=True)
    assert set(seat_imps(engine).values()) == {0}
    assert team_imps(engine) == dict.fromkeys("ABCD", 0)
    assert {row.chips for row in engine.state.board.standings("like_for_like")} == {0}


def test_the_default_scale_is_the_shipped_data_file() -> None:
    text = (ROOT / "hub" / "domain" / "games" / "mahjong" / "imp-scale-mcr.csv").read_text(
        encoding="utf-8"
    )
    assert parse_scale(text).steps == MCR_SCALE.steps
    assert "Where it comes from" in text  # the file says where it came from
    wbf = parse_scale((ROOT / "samples" / "imp-scale-wbf.csv").read_text(encoding="utf-8"))
    # WBF / 10 (every WBF step is a multiple of 10)
    assert [low for low, _ in MCR_SCALE.steps] == [low // 10 for low, _ in wbf.steps]
    assert MCR_SCALE.imps(-35.5) == -8 and MCR_SCALE.imps(1) == 0 and MCR_SCALE.imps(999) == 24


# -- corrections -------------------------------------------------------------------------------


def test_undo_reopen_and_void_leave_the_scores_as_a_recompute_would() -> None:
    engine = Engine(mcr_config())
    console = Console(engine)
    console.ok(1, "start", deal=1)
    console.ok(1, "undo")  # the start taken back: the deal is not played
    assert 1 not in engine.state.tables[1].hands
    console.hand(1, 1, seat=1, fan=10, discarder=2)
    assert engine.state.board.result(1, 1) == {1: 34, 2: -18, 3: -8, 4: -8}
    console.ok(1, "reopen", deal=1)  # the result leaves the scores until it is entered again
    assert engine.state.board.result(1, 1) is None
    console.ok(1, "result", seat=1, fan=10, discarder=3)  # the right discarder
    assert engine.state.board.result(1, 1) == {1: 34, 2: -8, 3: -18, 4: -8}
    console.ok(1, "reopen", deal=1)
    console.ok(1, "confirm", deal=1)  # reopened, then confirmed as it was
    assert engine.state.board.result(1, 1) == {1: 34, 2: -8, 3: -18, 4: -8}
    console.ok(2, "start", deal=1)
    console.ok(2, "void")  # a misdeal (the wrong wall restored): 0 for everyone
    assert engine.state.board.result(2, 1) == {1: 0, 2: 0, 3: 0, 4: 0}
    assert console.send(2, "result", draw=True).code == "hand_not_started"
    # The state after these corrections survives a snapshot.
    copy = restore_state(engine.state.config, engine.state.decks, snapshot(engine.state))
    assert copy.board.results() == engine.state.board.results()
    assert copy.hand(1, 1).hand.mahjong == MahjongResult(1, 10, 3)  # type: ignore[union-attr, attr-defined]


# -- release and secrecy -----------------------------------------------------------------------


def test_public_feeds_show_no_tile_of_a_deal_before_every_table_played_it() -> None:
    walls = seeded_walls("t", 2)
    engine = Engine(mcr_config(), walls)
    console = Console(engine)
    hand1 = walls[1].cards[:13]  # seat 1's starting hand on deal 1
    for table in (1, 2, 3):
        console.hand(table, 1, seat=2, fan=9, self_draw=True)
    console.ok(4, "start", deal=1)
    engine.tick(console.clock)

    def public_text() -> str:
        keys = [key for key in engine.topic_keys() if key[0] == "public"]
        return json.dumps([engine.payload(key) for key in keys])

    assert engine.payload(("public", "compare:1:1")) is None
    assert engine.payload(("public", "deal:1")) is None
    text = public_text()
    assert not any(f'"{tile}"' in text for tile in hand1)
    live = engine.payload(("live", "table:4"))
    assert live is not None and live["mahjong"]["hands"]["1"] == list(hand1)
    assert live["mahjong"]["winds"] == {"1": "E", "2": "S", "3": "W", "4": "N"}
    console.ok(4, "result", seat=2, fan=9, self_draw=True)
    engine.tick(console.clock + 1)
    compare = engine.payload(("public", "compare:1:1"))
    assert compare is not None and compare["hole"] == list(hand1)
    assert compare["mahjong"]["wind"] == "E" and compare["mahjong"]["prevalent"] == "E"
    rows = compare["rows"]
    assert [row["chips"] for row in rows] == [-17, -17, -17, -17]  # 8 + 9 each
    assert rows[0]["result"] == {
        "kind": "self_draw",
        "winner": 2,
        "fan": 9,
        "discarder": None,
        "points": {"1": -17, "2": 51, "3": -17, "4": -17},
    }
    public_table = engine.payload(("public", "table:4"))
    assert (
        public_table is not None and "mahjong" not in public_table
    )  # the public table: roster only


# -- the sample --------------------------------------------------------------------------------


def test_the_sample_session_replays_and_its_patches_rebuild_every_payload() -> None:
    config = load_config(SAMPLE)
    assert config.game == "mcr" and config.deals == 16
    assert config.rules_of(MahjongRules) is config.game_rules is not None
    assert ", game='mcr', mahjong=MahjongRules(rule=PaymentRule(" in repr(config)  # its old digest
    standings = replay_files(SAMPLE, SESSION, {})
    counted = standings["like_for_like"]
    assert len(counted["teams"]) == 4 and all("imps" in row for row in counted["teams"])
    assert standings["scoring"]["heading"] == "IMPs" and standings["scoring"]["teams"] == "totals"
    # Every deal was played at every table: 64 hands, and the log is what the simulator makes.
    lines = SESSION.read_text(encoding="utf-8").splitlines()
    decks = seeded_walls("mcr-demo", 16)
    regenerated = simulate_session(config, decks, random.Random(1))
    assert [json.loads(line) for line in lines] == list(regenerated)
    engine = Engine(config, decks)
    client = Client()
    engine.start_feed()
    client.subscribe_all(engine)
    for i, line in enumerate(lines):
        assert engine.submit(json.loads(line), float(i)).ok
        engine.tick(float(i))
        assert_projected(engine, client, client.take(engine))
    assert_projected(engine, client)
    assert sum(len(t.hands) for t in engine.state.tables.values()) == 64
    assert engine.state.board.as_dict()["like_for_like"] == {
        k: v for k, v in counted.items() if k in ("teams", "seats")
    } | {
        "teams": [
            {k: v for k, v in row.items() if k not in ("name", "code", "colour")}
            for row in counted["teams"]
        ]
    }


def test_config_errors_name_the_key() -> None:
    data = mcr_data()
    data["tournament"]["seats"] = 5
    with pytest.raises(ConfigError, match=r"tournament\.seats: MCR mahjong is played by 4 seats"):
        parse_config(data, "x.toml")
    data = mcr_data()
    data["mahjong"] = {"prevalent": ["E", "X"]}
    with pytest.raises(ConfigError, match=r"mahjong.prevalent\[1\]: expected E, S, W or N"):
        parse_config(data, "x.toml")
    data = mcr_data()
    data["tournament"]["game"] = "go"
    with pytest.raises(ConfigError, match=r"tournament\.game: expected one of"):
        parse_config(data, "x.toml")
    data = mcr_data(average="median")
    with pytest.raises(ConfigError, match=r"scoring\.average"):
        parse_config(data, "x.toml")
    config = mcr_config(4)
    rules = config.rules_of(MahjongRules)
    assert rules is not None and dict(rules.prevalent) == {
        1: "E",
        2: "E",
        3: "E",
        4: "E",
    }


def test_decks_writes_encrypted_walls_and_verify_matches_the_commitment(tmp_path: Path) -> None:
    """`duplicast decks` on a mahjong tournament: 136-tile walls in the encrypted file, the
    commitment printed before play, and `decks verify` after it (as for card decks)."""
    import subprocess
    import sys

    key = tmp_path / "deck.key"
    run = [sys.executable, "-m", "hub"]
    env = {"PATH": "/usr/bin:/bin", "DUPLICAST_DECK_KEY_FILE": str(key)}
    subprocess.run([*run, "decks", "--new-key", "--key-out", str(key)], check=True, env=env)
    walls = tmp_path / "walls.enc"
    made = subprocess.run(
        [*run, "decks", "--config", str(SAMPLE), "--out", str(walls)],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    line = made.stdout.strip().splitlines()[-1]
    assert line.startswith("commitment: sha256:")
    from hub.files.decks import read_deck_file

    orders = read_deck_file(walls, key.read_text().strip())
    assert len(orders) == 16 and all(isinstance(w, Wall) for w in orders.values())
    assert not any(w.rehearsal for w in orders.values())
    assert line == f"commitment: sha256:{commitment(orders)}"
    checked = subprocess.run(
        [*run, "decks", "verify", "--commitment", line, "--deck-file", str(walls)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0 and "commitment matches" in checked.stdout + checked.stderr


def test_a_penalty_in_points_comes_off_the_players_and_the_teams_imps() -> None:
    engine = Engine(mcr_config())
    console = Console(engine)
    console.hand(1, 1, seat=1, fan=8, self_draw=True)
    for table in (2, 3, 4):
        console.hand(table, 1, draw=True)
    # As in the team example: A +10 (table 1 seat 1 is A), B, C, D -4.
    assert team_imps(engine) == {"A": 10, "B": -4, "C": -4, "D": -4}
    out = engine.control(
        {"op": "penalty", "table": 1, "seat": 1, "points": 3, "reason": "slow", "by": "TD"}, 50.0
    )
    assert out.ok, out.ack
    # Player (table 1, seat 1): 48 - 12 = +36 against the seat average (48 + 0 + 0 + 0) / 4 = 12
    # -> +8 (32 -> 8), less 3 = 5; team A: 10 - 3 = 7.
    assert seat_imps(engine)[(1, 1)] == 5
    assert team_imps(engine) == {"A": 7, "B": -4, "C": -4, "D": -4}


def test_a_deck_file_of_the_other_game_is_refused(tmp_path: Path) -> None:
    from hub.domain.deck import seeded_deck_orders
    from hub.files.decks import DeckFileError, load_decks, write_deck_file

    key = generate_key()
    data = mcr_data()
    data["decks"] = {"file": "decks.enc"}
    config = parse_config(data, str(tmp_path / "t.toml"))
    write_deck_file(tmp_path / "decks.enc", seeded_deck_orders("x", 2), key)
    with pytest.raises(DeckFileError, match="card decks, not mahjong walls"):
        load_decks(config, tmp_path, {"DUPLICAST_DECK_KEY": key})
    write_deck_file(tmp_path / "decks.enc", seeded_walls("x", 2), key)
    assert load_decks(config, tmp_path, {"DUPLICAST_DECK_KEY": key}) == seeded_walls("x", 2)
