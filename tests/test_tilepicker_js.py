"""The MCR tile picker's check of an impossible hand (overlays/js/tilepicker.js `handProblem`,
issue #32 item 1) in node: the refusal sentences of CONTRACT32 word for word and in their order
(a meld that is not one, a tile used more than four times, not 14 tiles counting each kong as
3), and on random hands driven by hypothesis the same answer as `reference`, a Python reading
of the same three rules written here from the contract, and the hub's own validator
(`hub.domain.games.mahjong.fan.impossible`) for every hand its schema admits: the tablet and the
hub refuse the same hands with the same sentence."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.domain.games.mahjong.events import McrHand
from hub.domain.games.mahjong.fan import impossible

WORKER = Path(__file__).resolve().parent / "js" / "tilepicker_worker.mjs"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

SUITS = "mps"
TILES = [f"{n}{s}" for s in SUITS for n in range(1, 10)] + [f"{n}z" for n in range(1, 8)]
SIZE = {"chow": 3, "pung": 3, "kong": 4, "concealed_kong": 4}

Hand = dict[str, Any]


def reference(hand: Hand) -> str | None:
    """CONTRACT32's refusals of an impossible hand, the first that applies, or None."""
    for meld in hand["melds"]:
        tiles, kind = meld["tiles"], meld["kind"]
        text = " ".join(tiles)
        if kind == "chow":
            numbers = sorted(int(t[0]) for t in tiles)
            in_a_row = (
                len(tiles) == 3
                and len({t[1] for t in tiles}) == 1
                and tiles[0][1] in SUITS
                and numbers == list(range(numbers[0], numbers[0] + 3))
            )
            if not in_a_row:
                return f"'{text}' is not a chow: three tiles in a row of one suit"
        elif len(tiles) != SIZE[kind] or len(set(tiles)) != 1:
            if SIZE[kind] == 3:
                return f"'{text}' is not a pung: three of the same tile"
            return f"'{text}' is not a kong: four of the same tile"
    every = hand["concealed"] + [t for m in hand["melds"] for t in m["tiles"]] + [hand["winning"]]
    used = Counter(every)  # (in order of first appearance: the first tile over four is named)
    for tile, times in used.items():
        if times > 4:
            return f"{tile} is used {times} times: a set has only four of each tile"
    count = len(hand["concealed"]) + 3 * len(hand["melds"]) + 1
    if count != 14:
        return f"a winning hand has 14 tiles, counting each kong as 3: this one has {count}"
    return None


class Node:
    """One node process answering a line of hands at a time."""

    def __init__(self) -> None:
        assert NODE is not None
        self.proc = subprocess.Popen(
            [NODE, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.hands = 0
        self.seen: Counter[str] = Counter()

    def problems(self, hands: list[Hand]) -> list[str | None]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(hands) + "\n")
        self.proc.stdin.flush()
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert "error" not in answer, answer.get("error")
        self.hands += len(hands)
        return list(answer["problems"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def node() -> Iterator[Node]:
    worker = Node()
    yield worker
    worker.close()
    print(f"tilepicker.js compared with the reference on {worker.hands} hands: {dict(worker.seen)}")
    if worker.seen:  # the property test ran: every outcome was compared many times
        for name in ("possible", *OUTCOMES):
            assert worker.seen[name] >= 30, dict(worker.seen)
        assert worker.hands >= 1000, worker.hands


def hand(concealed: str, winning: str, *melds: str) -> Hand:
    """``hand("2s 3s", "8s", "chow 4s 5s 6s", ...)``."""
    return {
        "concealed": concealed.split(),
        "melds": [{"kind": m.split()[0], "tiles": m.split()[1:]} for m in melds],
        "winning": winning,
    }


def chow(tiles: str) -> str:
    return f"'{tiles}' is not a chow: three tiles in a row of one suit"


def pung(tiles: str) -> str:
    return f"'{tiles}' is not a pung: three of the same tile"


def kong(tiles: str) -> str:
    return f"'{tiles}' is not a kong: four of the same tile"


def used(tile: str, times: int) -> str:
    return f"{tile} is used {times} times: a set has only four of each tile"


def count(n: int) -> str:
    return f"a winning hand has 14 tiles, counting each kong as 3: this one has {n}"


# A winning hand with a concealed kong, a pung and a chow (Half Flush, Dragon Pung...).
MELDS = ("concealed_kong 1s 1s 1s 1s", "pung 7z 7z 7z", "chow 4s 5s 6s")
GOOD = hand("2s 3s 4s 8s", "8s", *MELDS)
KONGS = ("kong 1m 1m 1m 1m", "kong 2m 2m 2m 2m", "concealed_kong 5z 5z 5z 5z", "kong 9s 9s 9s 9s")
NINE = "1m 2m 3m 4m 5m 6m 7m 8m 9m"

CASES: list[tuple[str, Hand, str | None]] = [
    ("possible", GOOD, None),
    ("chow in any order", hand("2s 3s 4s 8s", "8s", "chow 6s 4s 5s", *MELDS[:2]), None),
    ("four kongs and a pair", hand("3p", "3p", *KONGS), None),
    ("seven pairs", hand("1m 1m 3m 3m 5p 5p 7s 7s 1z 1z 6z 6z 9p", "9p"), None),
    ("chow with a gap", hand("", "8s", "chow 4s 5s 7s"), chow("4s 5s 7s")),
    ("chow of two suits", hand("", "8s", "chow 4s 5p 6s"), chow("4s 5p 6s")),
    ("chow of winds", hand("", "8s", "chow 1z 2z 3z"), chow("1z 2z 3z")),
    ("chow of two tiles", hand("", "8s", "chow 4s 5s"), chow("4s 5s")),
    ("chow of a pung", hand("", "8s", "chow 4s 4s 4s"), chow("4s 4s 4s")),
    ("pung", hand("", "8s", "pung 4s 4s 5s"), pung("4s 4s 5s")),
    ("pung of four", hand("", "8s", "pung 4s 4s 4s 4s"), pung("4s 4s 4s 4s")),
    ("kong", hand("", "8s", "kong 4s 4s 4s 5s"), kong("4s 4s 4s 5s")),
    ("concealed kong", hand("", "8s", "concealed_kong 4s 4s 4s 5s"), kong("4s 4s 4s 5s")),
    ("kong of three", hand("", "8s", "kong 4s 4s 4s"), kong("4s 4s 4s")),
    (
        "the first bad meld",
        hand("", "8s", "pung 1m 1m 1m", "kong 2m 2m", "chow 1z 2z 3z"),
        kong("2m 2m"),
    ),
    ("seven of a tile", hand(f"5p 5p 5p {NINE} 9m", "5p", "pung 5p 5p 5p"), used("5p", 7)),
    ("five with the winning tile", hand(f"5p 5p 5p 5p {NINE}", "5p"), used("5p", 5)),
    (
        "the first to appear",
        hand("7z 7z 7z 7z 7z 3m 3m 3m 3m 3m", "1m"),
        used("7z", 5),
    ),
    (
        "the first to appear, melds after concealed",
        hand("9s 9s 9s 9s", "1m", "kong 1m 1m 1m 1m", "pung 9s 9s 9s"),
        used("9s", 7),
    ),
    ("a bad meld before five", hand("5p 5p 5p 5p 5p", "8s", "chow 4s 5s 7s"), chow("4s 5s 7s")),
    ("five before the count", hand("5p 5p 5p 5p 5p", "8s"), used("5p", 5)),
    ("thirteen", hand("2s 3s 4s", "8s", *MELDS), count(13)),
    ("fifteen", hand("2s 3s 4s 8s 9s", "8s", *MELDS), count(15)),
    ("a kong counts 3", hand("2s 3s 4s 8s 1p 2p 3p", "8s", "kong 1s 1s 1s 1s"), count(11)),
]


@pytest.mark.parametrize(("name", "given_hand", "sentence"), CASES, ids=[c[0] for c in CASES])
def test_the_contract_sentences_word_for_word(
    node: Node, name: str, given_hand: Hand, sentence: str | None
) -> None:
    assert reference(given_hand) == sentence, "the reference reads the contract otherwise"
    assert node.problems([given_hand]) == [sentence]


# Random hands: mostly near a possible one, so that every rule (and none) is met often.
tiles = st.sampled_from(TILES)
crowded = st.sampled_from(["5p", "5p", "4s", "7z"])  # few tiles: used more than four times


@st.composite
def melds(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(SIZE)))
    if draw(st.integers(0, 5)) == 0:  # anything
        return {"kind": kind, "tiles": draw(st.lists(tiles | crowded, min_size=1, max_size=5))}
    if kind == "chow":
        suit = draw(st.sampled_from(SUITS))
        low = draw(st.integers(1, 7))
        meld = [f"{low + i}{suit}" for i in range(3)]
    else:
        meld = [draw(crowded if draw(st.booleans()) else tiles)] * SIZE[kind]
    meld = list(draw(st.permutations(meld)))
    if draw(st.integers(0, 3)) == 0:  # a near miss: one tile another of its suit, or any
        at = draw(st.integers(0, len(meld) - 1))
        near = [f"{n}{meld[at][1]}" for n in range(1, 8 if meld[at][1] == "z" else 10)]
        meld[at] = draw(st.sampled_from(near) | tiles)
    return {"kind": kind, "tiles": meld}


@st.composite
def hands(draw: st.DrawFn) -> Hand:
    declared = draw(st.lists(melds(), max_size=4))
    size = 13 - 3 * len(declared) + draw(st.sampled_from([0, 0, 0, -1, 1, -3, 2]))
    pool = crowded if draw(st.integers(0, 3)) == 0 else tiles
    concealed = draw(st.lists(pool, min_size=max(size, 0), max_size=max(size, 0)))
    return {"concealed": concealed, "melds": declared, "winning": draw(pool)}


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(batch=st.lists(hands(), min_size=1, max_size=20))
def test_random_hands_get_the_references_answer(node: Node, batch: list[Hand]) -> None:
    expected = [reference(h) for h in batch]
    assert node.problems(batch) == expected
    for given_hand, sentence in zip(batch, expected, strict=True):
        try:  # the hub's schema refuses some shapes first ('bad_schema'): not this check's
            typed = msgspec.convert(given_hand, McrHand)
        except msgspec.ValidationError:
            continue
        assert impossible(typed) == sentence, "the hub and the tablet disagree"
    for sentence in expected:
        node.seen[outcome(sentence)] += 1


OUTCOMES = ("not a chow", "not a pung", "not a kong", "is used", "has 14 tiles")


def outcome(sentence: str | None) -> str:
    return "possible" if sentence is None else next(o for o in OUTCOMES if o in sentence)
