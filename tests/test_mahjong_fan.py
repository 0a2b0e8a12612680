"""MCR fans from the hand's tiles (issue #32): the contract's refusals word for word, the fans
against PyMahjongGB's own answer for random legal winning hands, a typed fan that differs held
as a dispute until `confirm`, and the journal's tiles recomputed by `duplicast replay`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from MahjongGB import MahjongFanCalculator

from hub.cli.replay import replay_files
from hub.domain.errors import Rejection
from hub.domain.games.mahjong import fan
from hub.domain.games.mahjong.events import McrHand, Meld
from hub.domain.games.mahjong.rules import KINDS, seeded_walls
from hub.engine.core import Engine
from hub.engine.families.ops import dispute_row
from hub.engine.snapshot import restore_state, snapshot
from tests.test_mahjong import Console, mcr_config, mcr_data

# The library's codes, written out here (not read from hub): characters W, dots B, bamboo T,
# winds F1..F4 (E S W N), dragons J1 red, J2 green, J3 white.
ORACLE = {
    f"{n}{s}": f"{c}{n}" for s, c in (("m", "W"), ("p", "B"), ("s", "T")) for n in range(1, 10)
}
ORACLE |= {"1z": "F1", "2z": "F2", "3z": "F3", "4z": "F4", "5z": "J3", "6z": "J2", "7z": "J1"}


def tiles(text: str) -> list[str]:
    return text.split()


PURE_STRAIGHT = {
    "concealed": tiles("1m 2m 3m 4m 5m 6m 7m 8m 9m 5p 5p 5p 7s"),
    "melds": [],
    "winning": "7s",
}


def mcr_hand(raw: dict[str, Any]) -> McrHand:
    melds = tuple(Meld(m["kind"], tuple(m["tiles"])) for m in raw.get("melds", ()))
    flags = tuple(raw.get("flags", ()))
    return McrHand(tuple(raw["concealed"]), raw["winning"], melds, flags)


# -- the contract's refusals -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("melds", "concealed", "words"),
    [
        ([("chow", "4s 5s 7s")], 10, "'4s 5s 7s' is not a chow: three tiles in a row of one suit"),
        ([("chow", "1z 2z 3z")], 10, "'1z 2z 3z' is not a chow: three tiles in a row of one suit"),
        ([("pung", "4s 4s 5s")], 10, "'4s 4s 5s' is not a pung: three of the same tile"),
        ([("kong", "4s 4s 4s 5s")], 10, "'4s 4s 4s 5s' is not a kong: four of the same tile"),
        (
            [("concealed_kong", "4s 4s 4s")],
            10,
            "'4s 4s 4s' is not a kong: four of the same tile",
        ),
        # a bad meld is named before a tile used five times and before the count
        ([("pung", "5p 5p 5p"), ("chow", "1m 2m 4m")], 3, "'1m 2m 4m' is not a chow"),
        ([("kong", "5p 5p 5p 5p")], 10, "5p is used 6 times: a set has only four of each tile"),
        ([], 12, "a winning hand has 14 tiles, counting each kong as 3: this one has 13"),
        (
            [("kong", "9m 9m 9m 9m")],
            10,
            "a winning hand has 14 tiles, counting each kong as 3: this one has 14",
        ),
    ],
)
def test_impossible_hands_are_refused_in_the_contracts_words(
    melds: list[tuple[str, str]], concealed: int, words: str
) -> None:
    pool = tiles("1p 2p 3p 4p 5p 6p 7p 8p 9p 1s 1s 2s 2s")
    raw = {
        "concealed": pool[:concealed],
        "melds": [{"kind": k, "tiles": t.split()} for k, t in melds],
        "winning": "5p",
    }
    problem = fan.impossible(mcr_hand(raw))
    if words.endswith("this one has 14"):  # 10 + 1 + 3: possible by count; not by tiles
        assert problem is None
        return
    assert problem is not None and problem.startswith(words)


def test_not_winning_and_below_minimum_in_the_contracts_words() -> None:
    odd = tiles("1m 3m 5m 7m 9m 1p 3p 5p 7p 1s 3s 5s 7s")
    with pytest.raises(Rejection) as caught:
        fan.fans(mcr_hand({"concealed": odd, "winning": "9s"}), False, "E", "E")
    assert caught.value.code == "not_winning"
    assert caught.value.message == f"'{' '.join([*odd, '9s'])}' is not a winning hand"
    # 123m 456m 234p 789s + 5p pair, won on a discard: 5 fan
    low = tiles("1m 2m 3m 4m 5m 6m 2p 3p 4p 7s 8s 9s 5p")
    with pytest.raises(Rejection) as caught:
        fan.fans(mcr_hand({"concealed": low, "winning": "5p"}), False, "E", "E")
    assert caught.value.code == "below_minimum"
    assert caught.value.message == (
        "5 fan is below the 8-fan minimum: Concealed Hand 2, All Chows 2, Short Straight 1"
    )


def test_pure_straight_is_counted_as_the_library_names_it() -> None:
    found = fan.fans(mcr_hand(PURE_STRAIGHT), False, "E", "E")
    assert [(f.name, f.value, f.count) for f in found] == [
        ("Pure Straight", 16, 1),
        ("Concealed Hand", 2, 1),
        ("No Honors", 1, 1),
        ("Single Wait", 1, 1),
    ]
    assert fan.total(found) == 20
    # the same tiles self-drawn: Fully Concealed Hand instead of Concealed Hand
    drawn = fan.fans(mcr_hand(PURE_STRAIGHT), True, "E", "E")
    assert "Fully Concealed Hand" in [f.name for f in drawn]


def test_winds_and_dragons_map_to_the_library_tiles() -> None:
    # 4z pung is the seat wind of North and the prevalent wind of a North deal only
    raw = {
        "concealed": tiles("1m 2m 3m 4z 4z 4z 5p 6p 7p 9s 9s 9s 5z"),
        "winning": "5z",
        "melds": [],
    }
    names = [f.name for f in fan.fans(mcr_hand(raw), True, "N", "N", min_fan=1)]
    assert "Seat Wind" in names and "Prevalent Wind" in names
    names = [f.name for f in fan.fans(mcr_hand(raw), True, "E", "S", min_fan=1)]
    assert "Seat Wind" not in names and "Prevalent Wind" not in names
    green = {
        "concealed": tiles("2s 3s 4s 2s 3s 4s 6s 6s 6s 6z 6z 6z 8s"),
        "winning": "8s",
    }
    assert "All Green" in [f.name for f in fan.fans(mcr_hand(green), False, "E", "E")]
    # the white dragon (5z) is a reversible tile, the red (7z) is not
    for dragon, reversible in (("5z", True), ("7z", False)):
        raw = {
            "concealed": [*tiles("1p 2p 3p 3p 4p 5p 4s 5s 6s 2s"), dragon, dragon, dragon],
            "winning": "2s",
        }
        names = [f.name for f in fan.fans(mcr_hand(raw), False, "E", "E", min_fan=1)]
        assert ("Reversible Tiles" in names) == reversible, (dragon, names)


# -- random legal winning hands against the library --------------------------------------------

SUITED = [k for k in KINDS if k[1] != "z"]


@st.composite
def winning_hands(draw: st.DrawFn) -> tuple[dict[str, Any], bool]:
    """Four sets and a pair, no tile more than four times; some sets shown as melds, the
    winning tile one of the standing tiles; a self-draw or not."""
    counts: Counter[str] = Counter()
    sets: list[tuple[str, list[str]]] = []
    while len(sets) < 4:
        kind = draw(st.sampled_from(["chow", "pung", "kong"]))
        if kind == "chow":
            start = draw(st.sampled_from([k for k in SUITED if int(k[0]) <= 7]))
            tiles = [f"{int(start[0]) + i}{start[1]}" for i in range(3)]
        else:
            tile = draw(st.sampled_from(KINDS))
            tiles = [tile] * (3 if kind == "pung" else 4)
        if all(counts[t] + tiles.count(t) <= 4 for t in tiles):
            counts.update(tiles)
            sets.append((kind, tiles))
    pair = draw(st.sampled_from([k for k in KINDS if counts[k] <= 2]))
    shown = draw(st.lists(st.booleans(), min_size=4, max_size=4))
    melds, standing = [], [pair, pair]
    for (kind, tiles), is_shown in zip(sets, shown, strict=True):
        if kind == "kong":
            melds.append({"kind": "kong" if is_shown else "concealed_kong", "tiles": tiles})
        elif is_shown:
            melds.append({"kind": kind, "tiles": tiles})
        else:
            standing += tiles
    standing = draw(st.permutations(standing))
    winning = standing[draw(st.integers(0, len(standing) - 1))]
    concealed = list(standing)
    concealed.remove(winning)
    flags = draw(st.lists(st.sampled_from(["last_tile", "last_of_kind"]), unique=True))
    self_draw = draw(st.booleans())
    if any(m["kind"] in ("kong", "concealed_kong") for m in melds) and draw(st.booleans()):
        flags.append("kong_replacement" if self_draw else "robbing_kong")
    raw = {"concealed": concealed, "melds": melds, "winning": winning, "flags": flags}
    return raw, self_draw


def oracle(raw: dict[str, Any], self_draw: bool, seat: int, prevalent: int) -> list[Any]:
    packs = []
    for m in raw["melds"]:
        tiles = sorted(m["tiles"], key=lambda t: (t[1], t[0]))
        kind = {"chow": "CHI", "pung": "PENG"}.get(m["kind"], "GANG")
        tile = tiles[1] if m["kind"] == "chow" else tiles[0]
        packs.append((kind, ORACLE[tile], 0 if m["kind"] == "concealed_kong" else 1))
    flags = raw["flags"]
    return list(
        MahjongFanCalculator(
            tuple(packs),
            tuple(ORACLE[t] for t in raw["concealed"]),
            ORACLE[raw["winning"]],
            0,
            self_draw,
            "last_of_kind" in flags,
            "kong_replacement" in flags or "robbing_kong" in flags,
            "last_tile" in flags,
            seat,
            prevalent,
            True,
        )
    )


@settings(max_examples=300, deadline=None)
@given(winning_hands(), st.integers(0, 3), st.integers(0, 3))
def test_random_winning_hands_score_as_the_library_says(
    case: tuple[dict[str, Any], bool], seat: int, prevalent: int
) -> None:
    raw, self_draw = case
    hand = mcr_hand(raw)
    assert fan.impossible(hand) is None
    want = oracle(raw, self_draw, seat, prevalent)
    total = sum(value * count for value, count, _, _ in want)
    winds = "ESWN"
    try:
        got = fan.fans(hand, self_draw, winds[seat], winds[prevalent])
    except Rejection as exc:
        assert exc.code == "below_minimum" and total < 8
        assert exc.message.startswith(f"{total} fan is below the 8-fan minimum: ")
        return
    assert [(f.value, f.count, f.name) for f in got] == [(v, c, en) for v, c, _, en in want]
    assert fan.total(got) == total >= 8


@settings(max_examples=200, deadline=None)
@given(winning_hands(), st.data())
def test_a_broken_winning_hand_is_refused_first_by_the_contracts_order(
    case: tuple[dict[str, Any], bool], data: st.DataObject
) -> None:
    raw, _ = case
    how = data.draw(st.sampled_from(["drop", "add", "meld"]))
    if how == "meld" and raw["melds"]:
        tiles = raw["melds"][0]["tiles"]
        tiles[-1] = "1z" if tiles[0] != "1z" else "2z"  # no chow, pung or kong any more
        problem = fan.impossible(mcr_hand(raw)) or ""
        assert problem.startswith(f"'{' '.join(tiles)}' is not a"), problem
        return
    if how == "drop" or how == "meld":
        raw["concealed"] = raw["concealed"][1:]
        size = len(raw["concealed"]) + 1 + 3 * len(raw["melds"])
        words = f"a winning hand has 14 tiles, counting each kong as 3: this one has {size}"
        assert fan.impossible(mcr_hand(raw)) == words
        return
    tile = raw["winning"]  # a fifth (or more) of the winning tile
    used = Counter(fan.all_tiles(mcr_hand(raw)))[tile]
    raw["concealed"] = [*raw["concealed"], *[tile] * (5 - used)]
    assert fan.impossible(mcr_hand(raw)) == (
        f"{tile} is used 5 times: a set has only four of each tile"
    )


# -- the engine: scores from the tiles, disputes, snapshots, replay -----------------------------


def test_the_tiles_score_the_hand_and_the_showdown_package_names_its_fans() -> None:
    engine = Engine(mcr_config(), seeded_walls("t", 2))
    console = Console(engine)
    console.hand(1, 1, seat=1, discarder=2, hand=PURE_STRAIGHT)
    assert engine.state.board.result(1, 1) == {1: 44, 2: -28, 3: -8, 4: -8}  # 20 fan
    engine.tick(console.clock)
    live = engine.payload(("live", "table:1"))
    assert live is not None
    package = live["showdown"]
    assert package["winner"] == 1 and package["discarder"] == 2 and not package["self_draw"]
    assert package["fan"] == 20 and package["hand"] == PURE_STRAIGHT
    assert package["fans"][0] == {"name": "Pure Straight", "value": 16, "count": 1}
    # the same hand with the official's matching total is no dispute
    console.hand(2, 1, seat=1, discarder=2, hand=PURE_STRAIGHT, fan=20)
    assert engine.state.board.result(2, 1) == {1: 44, 2: -28, 3: -8, 4: -8}


def test_refusals_of_the_tiles_change_nothing() -> None:
    engine = Engine(mcr_config())
    console = Console(engine)
    console.ok(1, "start", deal=1)
    bad_chow = {**PURE_STRAIGHT, "melds": [{"kind": "chow", "tiles": ["4s", "5s", "7s"]}]}
    for fields, code in [
        ({"seat": 1, "discarder": 1, "hand": PURE_STRAIGHT}, "bad_winner"),
        ({"seat": 1, "discarder": 2, "hand": bad_chow}, "impossible_hand"),
        ({"seat": 1, "discarder": 2, "hand": {**PURE_STRAIGHT, "winning": "6s"}}, "not_winning"),
    ]:
        outcome = console.send(1, "result", **fields)
        assert not outcome.ok and outcome.code == code, outcome.ack
    outcome = console.send(1, "result", seat=1, discarder=2, hand={"concealed": ["xx"]})
    assert outcome.code == "bad_schema" and "field 'hand' is malformed" in outcome.ack["error"]
    assert engine.state.tables[1].current is not None
    assert engine.state.board.result(1, 1) is None


def test_a_typed_fan_the_tiles_do_not_give_is_a_dispute_until_confirmed() -> None:
    engine = Engine(mcr_config(), seeded_walls("t", 2))
    console = Console(engine)
    console.hand(1, 1, seat=1, discarder=2, hand=PURE_STRAIGHT, fan=24)
    state = engine.state
    h = state.tables[1].hands[1]
    assert h.status == "disputed" and state.board.result(1, 1) is None
    # what the table's official reads on the tablet, and the TD on the desk
    engine.tick(console.clock)
    dispute = engine.payload(("live", "console:1"))["dispute"]  # type: ignore[index]
    assert dispute["reason"].startswith(
        "the official typed 24 fan but the tiles give 20 (Pure Straight 16, Concealed Hand 2, "
        "No Honors 1, Single Wait 1): the hand is held until an official confirms it"
    )
    assert dispute["mahjong"]["typed"] == 24 and dispute["mahjong"]["fan"] == 20
    row = dispute_row(state, h)
    assert row["reason"] == dispute["reason"] and row["declared"] == [1]
    engine.tick(console.clock)
    assert engine.payload(("live", "table:1"))["showdown"] is None  # type: ignore[index]
    # a snapshot keeps the held result
    copy = restore_state(state.config, state.decks, snapshot(state))
    assert copy.tables[1].hands[1].status == "disputed"
    # a confirm naming another winner is refused; a plain confirm scores the tiles' 20 fan
    assert console.send(1, "confirm", deal=1, seats=[2]).code == "bad_winner"
    console.ok(1, "confirm", deal=1)
    assert h.status == "complete"
    assert state.board.result(1, 1) == {1: 44, 2: -28, 3: -8, 4: -8}
    copy = restore_state(state.config, state.decks, snapshot(state))
    assert copy.board.results() == state.board.results()
    # reopened and entered again with the right total: no dispute
    console.ok(1, "reopen", deal=1)
    console.ok(1, "result", seat=1, discarder=3, hand=PURE_STRAIGHT, fan=20)
    assert state.board.result(1, 1) == {1: 44, 2: -8, 3: -28, 4: -8}


def test_replay_recomputes_the_fan_from_the_journals_tiles_and_old_results_replay(
    tmp_path: Path,
) -> None:
    config = tmp_path / "mcr.toml"
    data = mcr_data(1)
    lines = [
        "[tournament]",
        *(f"{k} = {json.dumps(v)}" for k, v in data["tournament"].items()),
        "[decks]",
        'rehearsal_seed = "t"',
        "[draw.tables]",
        *(f'"{t}" = {json.dumps(seats)}' for t, seats in data["draw"]["tables"].items()),
    ]
    for team in data["teams"]:
        lines += ["[[teams]]", *(f"{k} = {json.dumps(v)}" for k, v in team.items())]
    for group in data["groups"]:
        lines += ["[[groups]]", *(f"{k} = {json.dumps(v)}" for k, v in group.items())]
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    head = {"v": 1, "tournament": "mcr-t", "deal": 1}
    results = [
        {"seat": 1, "discarder": 2, "hand": PURE_STRAIGHT},  # 20 fan from the tiles
        {"seat": 2, "fan": 10, "discarder": 4},  # an old result: the typed fan
        {"seat": 3, "self_draw": True, "hand": PURE_STRAIGHT, "fan": 16},  # a dispute
        {"draw": True},
    ]
    events = []
    for table, result in enumerate(results, start=1):
        console = {"table": table, "console": f"table{table}"}
        events.append(head | console | {"seq": 1, "type": "start"})
        events.append(head | console | {"seq": 2, "type": "result", **result})
    log = tmp_path / "session.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    live = Engine(mcr_config(1), seeded_walls("t", 1))
    for i, event in enumerate(events):
        assert live.submit(event, float(i)).ok
    standings = replay_files(config, log, {})
    assert live.state.board.results() == {
        (1, 1): {1: 44, 2: -28, 3: -8, 4: -8},
        (2, 1): {1: -8, 2: 34, 3: -8, 4: -18},
        (4, 1): {1: 0, 2: 0, 3: 0, 4: 0},
    }
    assert live.state.tables[3].hands[1].status == "disputed"
    want = live.state.board.as_dict()["running"]
    assert {k: standings["running"][k] for k in ("seats",)} == {"seats": want["seats"]}


def test_public_and_program_feeds_show_no_fan_of_a_deal_before_its_release() -> None:
    """The showdown package goes the poker package's way: nothing of a deal's winning hand or
    fans on a public or programme topic until every table has played it."""
    from hub.domain.config import parse_config
    from hub.wire.topics import PROGRAM, PUBLIC, kind

    data = mcr_data(2)
    data["broadcast"] = {"delay": 10}
    engine = Engine(parse_config(data, "mcr-test.toml"), seeded_walls("t", 2))
    engine.start_feed()
    console = Console(engine)

    def outside(now: float, audiences: tuple[str, ...] = (PUBLIC, PROGRAM)) -> str:
        engine.tick(now)
        keys = [k for k in engine.topic_keys() if kind(k[0]) in audiences]
        return json.dumps([engine.projecting.materialize(k) for k in keys])

    for table in (1, 2, 3):
        console.hand(table, 1, seat=1, discarder=2, hand=PURE_STRAIGHT)
    console.ok(4, "start", deal=1)
    text = outside(console.clock + 60)  # well past the programme's delay
    assert "Pure Straight" not in text and '"fans"' not in text
    assert "Pure Straight" in json.dumps(engine.projecting.materialize(("live", "table:1")))
    console.ok(4, "result", seat=1, discarder=2, hand=PURE_STRAIGHT)
    console.clock += 60
    assert "Pure Straight" in outside(console.clock, (PUBLIC,))
    assert "Pure Straight" in outside(console.clock, (PROGRAM,))


def test_a_result_with_tiles_decodes_alike_from_msgpack_json_and_a_mapping() -> None:
    import msgpack

    from hub.engine.events import decode_event, decode_event_json, parse_event

    raw = {"v": 1, "tournament": "t", "table": 1, "console": "c", "seq": 1, "type": "result"}
    raw |= {"seat": 1, "self_draw": True, "hand": {**PURE_STRAIGHT, "flags": ["last_tile"]}}
    event = parse_event(raw)
    assert decode_event(msgpack.packb(raw)) == event == decode_event_json(json.dumps(raw))
    assert event.as_record() == raw  # the journal keeps the tiles as they came


def test_every_feed_follows_results_with_tiles_disputes_and_confirms_incrementally() -> None:
    """Each topic's patches rebuild the payload a fresh build gives, through results with
    tiles, a dispute, its confirmation, a reopen and a new result."""
    from tests.test_projections import Client, assert_projected

    engine = Engine(mcr_config(), seeded_walls("t", 2))
    client = Client()
    engine.start_feed()
    client.subscribe_all(engine)
    console = Console(engine)
    steps: list[tuple[int, str, dict[str, Any]]] = []
    for table in (1, 2, 3, 4):
        steps.append((table, "start", {"deal": 1}))
        fan_typed = {"fan": 30} if table == 2 else {}
        steps.append(
            (table, "result", {"seat": 1, "discarder": 2, "hand": PURE_STRAIGHT, **fan_typed})
        )
    steps += [
        (2, "confirm", {"deal": 1}),
        (3, "reopen", {"deal": 1}),
        (3, "result", {"seat": 1, "self_draw": True, "hand": PURE_STRAIGHT, "fan": 21}),
    ]
    for table, kind, fields in steps:
        console.ok(table, kind, **fields)
        engine.tick(console.clock)
        assert_projected(engine, client, client.take(engine))
    assert engine.state.tables[3].hands[1].status == "disputed"
    assert_projected(engine, client)
