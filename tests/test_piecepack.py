"""Dual Piecepacks Poker (seed 004): tiles, the 17 categories, tie-breaks, best of 7, counts."""

from __future__ import annotations

import doctest
import random
import re
from itertools import combinations, pairwise
from math import comb
from pathlib import Path

import pytest

from hub.cli.main import main
from hub.domain.games.piecepack import tiles as piecepack
from hub.domain.games.piecepack.tiles import (
    CATEGORIES,
    TILES,
    HandValue,
    best_of,
    category_counts,
    evaluate5,
    format_tiles,
    parse_tile,
    parse_tiles,
)

DOC = Path(__file__).resolve().parent.parent / "docs" / "piecepack.md"

# The seed's own example of each hand, in its notation (suit symbol then rank; ♠♥♦♣ black,
# ♤♡♢♧ white), best category first as its table "Ranking of hands" lists them.
SEED_EXAMPLES = [
    ("SF 0P", "♠2,♠3,♠4,♠5,♠N"),
    ("GF 4K", "♤3,♡3,♢3,♧3,♢A"),
    ("NF 5K", "♤3,♣3,♢3,♧3,♦3"),
    ("LF 2P", "♧A,♣3,♧3,♣4,♧4"),
    ("LF 0P", "♧A,♣N,♧3,♣4,♧5"),
    ("GF FH", "♤3,♡3,♢3,♧5,♢5"),
    ("LF 1P", "♧A,♣3,♧3,♣N,♧5"),
    ("GF 3K", "♤3,♡3,♢3,♧4,♢5"),
    ("GF 0P", "♤N,♡A,♢3,♧4,♢5"),
    ("NF 4K", "♤3,♣3,♢3,♧3,♦N"),
    ("GF 2P", "♤3,♡3,♢A,♧5,♢5"),
    ("NF FH", "♤3,♣3,♢3,♧N,♦N"),
    ("GF 1P", "♤3,♡3,♢A,♧4,♢5"),
    ("NF 0P", "♤N,♣A,♢3,♧4,♦5"),
    ("NF 3K", "♤3,♣3,♢3,♧A,♦N"),
    ("NF 2P", "♤3,♣3,♢5,♧5,♦N"),
    ("NF 1P", "♤4,♣4,♢A,♧5,♦N"),
]


def value(text: str) -> HandValue:
    return evaluate5(parse_tiles(text))


def test_the_docstring_examples_hold() -> None:
    results = doctest.testmod(piecepack)
    assert results.attempted >= 4 and results.failed == 0


# -- tiles -------------------------------------------------------------------------------------


def test_48_distinct_tiles_6_ranks_8_suits() -> None:
    assert len(TILES) == len(set(TILES)) == 48
    assert {t[0] for t in TILES} == set("NA2345")
    assert len({t[1:] for t in TILES}) == 8
    assert {t[1] for t in TILES} == {"b", "w"}  # two groups
    assert {t[2] for t in TILES} == set("shdc")  # four links


def test_tile_codes_read_and_print() -> None:
    assert parse_tile("Nbs") == parse_tile("nBS") == parse_tile("N♠") == parse_tile("♠N") == "Nbs"
    assert parse_tile("♡5") == "5wh"
    assert parse_tiles("(♧A, ♣N)") == ("Awc", "Nbc")
    assert format_tiles(["Nbs", "5wh", "Awc", "2bd"]) == "N♠ 5♡ A♧ 2♦"
    for bad in ("Kbs", "Nxs", "Nbx", "N", "Nbsx", "♠K"):
        with pytest.raises(ValueError, match="not a piecepack tile"):
            parse_tile(bad)


# -- the 17 categories -------------------------------------------------------------------------


def test_seventeen_categories_with_the_seeds_abbreviations() -> None:
    assert [c.abbreviation for c in CATEGORIES] == [a for a, _ in SEED_EXAMPLES]
    assert len(set(CATEGORIES)) == 17
    assert CATEGORIES[0].name == "Suit-flush no-pairs"
    assert CATEGORIES[1].name == "Group-flush four-of-a-kind"
    assert CATEGORIES[-1].name == "No-flush one-pair"


@pytest.mark.parametrize(("abbreviation", "hand"), SEED_EXAMPLES)
def test_each_seed_example_is_its_category(abbreviation: str, hand: str) -> None:
    assert value(hand).category.abbreviation == abbreviation


def test_the_seed_examples_rank_best_to_worst() -> None:
    values = [value(hand) for _, hand in SEED_EXAMPLES]
    assert all(a > b for a, b in pairwise(values))


@pytest.mark.parametrize(
    ("better", "worse", "why"),
    [
        # no-pairs beat one-pair (and, without a flush, three-of-a-kind and two-pairs)
        ("2bs 3wh 4bd 5wc Abh", "Nbs Nwh Nbd 5wc 4bh", "NF 0P over NF 3K"),
        ("2bs 3wh 4bd 5wc Abh", "Nbs Nwh 5bd 4wc Abh", "NF 0P over NF 1P"),
        # a flush of a finer kind with a weaker pattern
        ("2ws 2wh 3wd 4wc 5wd", "Nbs Nwh Abd Awc 5bh", "GF 1P over NF 2P"),
        ("2bc 2wc 3bc 3wc 4bc", "Nws Nwh Nwd 5wc 5wd", "LF 2P over GF FH"),
        ("2bc 3wc 4bc 5wc Abc", "2bc 3wc 3bc 5wc Abc", "LF 0P over LF 1P"),
        # five-of-a-kind sits between a group-flush and a no-flush four-of-a-kind
        ("Nbs Nwh Nbd Nwc Nbh", "Nbs Nwh Nbd Nwc Abh", "NF 5K over NF 4K"),
        ("2ws 2wh 2wd 2wc 3wd", "Nbs Nwh Nbd Nwc Nbh", "GF 4K over NF 5K"),
    ],
)
def test_categories_outrank_ranks(better: str, worse: str, why: str) -> None:
    a, b = value(better), value(worse)
    assert why.startswith(f"{a.category.abbreviation} over {b.category.abbreviation}")
    assert CATEGORIES.index(a.category) < CATEGORIES.index(b.category)
    assert a > b and b < a


# -- tie-breaks inside a category ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("better", "worse", "why"),
    [
        ("Nbs Abh 5wd 4wc 2bd", "Abs 5bh 4wd 3wc 2bd", "no-pairs: the null is the highest rank"),
        ("Nbs Abh 5wd 4wc 3bd", "Nws Awh 5bd 4bc 2wd", "no-pairs: the fifth tile decides"),
        ("Nbs Nwh 2wd 3wc 4bd", "Abs Awh 5wd 4wc 3bd", "one-pair: the pair before the kickers"),
        ("Abs Awh 5wd 3wc 2bd", "Abs Awh 4wd 3wc 2bd", "one-pair: then the kickers, high first"),
        ("5bs 5wh 2wd 2bc 3bd", "4bs 4wh 3wd 3bc Nbd", "two-pairs: the high pair first"),
        ("5bs 5wh 3wd 3bc 2bd", "5ws 5bh 2wd 2bc Nbd", "two-pairs: then the low pair"),
        ("5bs 5wh 3wd 3bc Abd", "5ws 5bh 3wc 3bh 4wd", "two-pairs: then the kicker"),
        ("4bs 4wh 4wd 2bc 2bd", "3bs 3wh 3wd Nbc Nwd", "full-house: the three before the two"),
        ("4bs 4wh 4wd Nbc Nwd", "4ws 4bh 4bd Abc Awd", "full-house: then the two"),
        ("Abs Awh Abd Nbc 2bh", "Abs Awh Abd 5bc 4bh", "three-of-a-kind: then the kickers"),
        ("Nbs Nwh Nbd Nwc 2bh", "5bs 5wh 5bd 5wc Abh", "four-of-a-kind: the four first"),
        ("Nbs Nwh Nbd Nwc Abh", "Nbs Nwh Nbd Nwc 5bh", "four-of-a-kind: then the kicker"),
        ("Nbs Nwh Nbd Nwc Nbh", "Abs Awh Abd Awc Abh", "five-of-a-kind: by its rank"),
        ("Nbs Abs 5bs 4bs 3bs", "Nwc Awc 5wc 4wc 2wc", "suit-flush: by ranks, like no-pairs"),
    ],
)
def test_tie_breaks_inside_a_category(better: str, worse: str, why: str) -> None:
    a, b = value(better), value(worse)
    assert a.category == b.category, why
    assert a > b, why


def test_suits_never_break_a_tie() -> None:
    black = value("Nbs Nbh Abd 5bc 4bd")  # GF 1P
    white = value("Nws Nwh Awd 5wc 4wd")  # GF 1P, same ranks
    assert black.category == white.category
    assert black == white and not black > white and not white > black
    assert black.ranks == ("N", "A", "5", "4")


def test_ranks_list_most_tiles_first_then_high_first() -> None:
    assert value("2bs 2wh Nwd Nbc 2bd").ranks == ("2", "N")  # full house: the three first
    assert value("3bs 3wh Awd Abc Nbd").ranks == ("A", "3", "N")
    assert value("2bs 3wh Nwd Abc 5bd").ranks == ("N", "A", "5", "3", "2")


def test_evaluate5_rejects_what_is_not_five_distinct_tiles() -> None:
    for hand in (["Nbs"] * 5, ["Nbs", "Abs", "2bs", "3bs"], ["Nbs", "Abs", "2bs", "3bs", "Kbs"]):
        with pytest.raises(ValueError, match="five distinct"):
            evaluate5(hand)


# -- best five of seven (hold'em) --------------------------------------------------------------


def test_best_of_seven_throws_away_a_pocket_pair_for_no_pairs() -> None:
    hole, board = ["Nbs", "Nwh"], ["2bd", "3wc", "4bh", "5ws", "Abc"]
    best = best_of([*hole, *board])
    assert best.category.abbreviation == "NF 0P"
    assert best.ranks == ("N", "A", "5", "4", "3")
    assert {"Abc", "5ws", "4bh", "3wc"} < set(best.tiles)
    assert best > evaluate5(["Nbs", "Nwh", "Abc", "5ws", "4bh"])  # the pair of nulls


def test_best_of_seven_finds_a_group_flush_across_hole_and_board() -> None:
    best = best_of(["Awh", "Nbs", "2ws", "3wh", "4wd", "5wc", "Nbd"])
    assert best.category.abbreviation == "GF 0P"
    assert set(best.tiles) == {"Awh", "2ws", "3wh", "4wd", "5wc"}
    assert best > evaluate5(["Nbs", "Awh", "5wc", "4wd", "3wh"])  # the NF 0P of the high ranks


def test_best_of_is_the_best_five_and_splits_equal_hands() -> None:
    board = ["Nbs", "Nwh", "Abd", "Awc", "5bh"]
    # the board is two pairs; a 2 or a 3 in the hand makes N A 5 3 2 no-pairs, which beats it
    a = best_of(["2ws", "3wd", *board])
    b = best_of(["2wc", "3ws", *board])  # (2♠ 3♦ black would be a group-flush with N♠ A♦ 5♥)
    assert a == b and a.category.abbreviation == "NF 0P" and a.ranks == ("N", "A", "5", "3", "2")
    assert a > best_of(board) == evaluate5(board)
    assert best_of(board).category.abbreviation == "NF 2P"
    for bad in (board[:4], [*board, "2ws", "3wd", "4wd"], [*board, "Nbs"]):
        with pytest.raises(ValueError):
            best_of(bad)


def test_best_of_is_the_maximum_of_evaluate5_over_every_five() -> None:
    rng = random.Random(13)
    for size in (5, 6, 7) * 100:
        pool = rng.sample(TILES, size)
        best = best_of(pool)
        assert best == max(evaluate5(five) for five in combinations(pool, 5))
        assert best.category == evaluate5(best.tiles).category
        assert best.ranks == evaluate5(best.tiles).ranks


# -- counts ------------------------------------------------------------------------------------


def closed_forms() -> dict[str, int]:
    """Counts of some categories worked out by hand (docs/piecepack.md shows the arithmetic)."""
    sf_0p = 8 * comb(6, 5)  # a suit, 5 of its 6 ranks
    lf_0p = 4 * comb(6, 5) * (2**5 - 2)  # a link, 5 ranks, each of its 2 suits, not all one
    lf_1p = 4 * 6 * comb(5, 3) * 2**3  # a link, the pair (both suits), 3 more ranks
    gf_0p = 2 * comb(6, 5) * (4**5 - 4)  # a group, 5 ranks, its 4 suits, not all one
    gf_1p = 2 * 6 * comb(4, 2) * comb(5, 3) * 4**3  # a group, the pair, 3 more distinct ranks
    gf_2p = 2 * comb(6, 2) * comb(4, 2) ** 2 * (4 * 4)  # the kicker: 4 other ranks of 4 suits
    all_0p = comb(6, 5) * 8**5
    all_1p = 6 * comb(8, 2) * comb(5, 3) * 8**3
    return {
        "SF 0P": sf_0p,
        "GF 4K": 2 * 6 * 20,
        "NF 5K": 6 * comb(8, 5),
        "LF 0P": lf_0p,
        "LF 1P": lf_1p,
        "GF 0P": gf_0p,
        "GF 1P": gf_1p,
        "GF 2P": gf_2p,
        "NF 0P": all_0p - sf_0p - lf_0p - gf_0p,
        "NF 1P": all_1p - lf_1p - gf_1p,
    }


@pytest.fixture(scope="module")
def counts() -> dict[str, int]:
    return {c.abbreviation: n for c, n in category_counts().items()}


def test_counts_sum_to_all_five_tile_hands(counts: dict[str, int]) -> None:
    assert list(counts) == [c.abbreviation for c in CATEGORIES]
    assert sum(counts.values()) == comb(48, 5) == 1_712_304
    assert all(n > 0 for n in counts.values())


def test_counts_match_the_closed_forms(counts: dict[str, int]) -> None:
    expected = closed_forms()
    assert {a: counts[a] for a in expected} == expected
    # where the seed's table slips (docs/piecepack.md): LF 0P, GF 1P, NF 0P, NF 1P
    assert (counts["LF 0P"], counts["GF 1P"]) == (720, 46_080)
    assert (counts["NF 0P"], counts["NF 1P"]) == (183_600, 812_160)


def test_the_seeds_order_is_still_rarest_first(counts: dict[str, int]) -> None:
    ordered = list(counts.values())
    assert ordered == sorted(ordered) and len(set(ordered)) == 17


@pytest.mark.parametrize(
    "subdeck",
    [
        [t for t in TILES if t[0] in "NA2"],  # every suit: five- and four-of-a-kind
        [t for t in TILES if t[0] != "5" and t[1:] in ("bs", "bh", "ws", "wh")],  # flushes
    ],
    ids=["3-ranks-8-suits", "5-ranks-4-suits"],
)
def test_counting_by_signature_agrees_with_evaluate5_hand_by_hand(subdeck: list[str]) -> None:
    tally = dict.fromkeys(CATEGORIES, 0)
    for hand in combinations(subdeck, 5):
        tally[evaluate5(hand).category] += 1
    assert category_counts(subdeck) == tally


def test_counting_refuses_repeated_or_unknown_tiles() -> None:
    for tiles in ([*TILES[:6], TILES[0]], [*TILES[:6], "Kbs"]):
        with pytest.raises(ValueError, match="distinct piecepack tiles"):
            category_counts(tiles)


# -- the command and the docs ------------------------------------------------------------------


def test_piecepack_counts_prints_17_lines_best_to_worst(
    capsys: pytest.CaptureFixture[str], counts: dict[str, int]
) -> None:
    assert main(["piecepack-counts"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert out.endswith("\n") and len(lines) == 17
    assert all(re.fullmatch(r"[SLGN]F (0P|1P|2P|3K|FH|4K|5K)\t\d+", line) for line in lines)
    assert lines[0] == "SF 0P\t48" and lines[-1] == "NF 1P\t812160"
    assert [line.split("\t")[0] for line in lines] == [c.abbreviation for c in CATEGORIES]
    assert sum(int(line.split("\t")[1]) for line in lines) == 1_712_304
    assert dict(line.split("\t") for line in lines) == {a: str(n) for a, n in counts.items()}


def test_the_docs_table_is_the_enumeration(counts: dict[str, int]) -> None:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and re.fullmatch(r"[SLGN]F (0P|1P|2P|3K|FH|4K|5K)", cells[1]):
            enumerated, seed = (int(c.replace(",", "").strip("*")) for c in cells[3:5])
            rows[cells[1]] = (enumerated, seed, cells[5] if len(cells) > 5 else "")
    assert list(rows) == list(counts)
    assert {a: r[0] for a, r in rows.items()} == counts
    differs = {a for a, (mine, seed, _) in rows.items() if mine != seed}
    assert differs == {"LF 0P", "GF 1P", "NF 0P", "NF 1P"}
    assert all(rows[a][2] for a in differs)  # each difference is explained
    assert sum(r[1] for r in rows.values()) == 1_712_304  # the seed's column sums right too
