"""Equity and outs against independent computations: phevaluator one hand at a time over every
run-out (brute force), PokerKit's own evaluator, and spots worked out by hand."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from phevaluator import _pheval
from pokerkit import StandardHighHand

from hub.domain.cards import FULL_DECK
from hub.domain.equity import SAMPLES, Runouts, equity, error_bound, outs, tally
from hub.domain.evaluation import strength
from hub.domain.strength_tables import CARD_BITS, CARD_KEYS, card_ids, strengths


def brute_force(
    holes: dict[int, tuple[str, str]], board: tuple[str, ...], dead: tuple[str, ...] = ()
) -> tuple[dict[int, float], dict[int, float]]:
    """Win and tie shares over every run-out, one ``evaluation.strength`` call per hand."""
    seen = {*board, *dead, *(c for h in holes.values() for c in h)}
    deck = [c for c in FULL_DECK if c not in seen]
    wins = dict.fromkeys(holes, 0)
    ties = dict.fromkeys(holes, 0)
    n = 0
    for rest in itertools.combinations(deck, 5 - len(board)):
        full = (*board, *rest)
        ranks = {p: strength(h, full) for p, h in holes.items()}
        best = min(ranks.values())
        top = [p for p, r in ranks.items() if r == best]
        for p in top:
            (wins if len(top) == 1 else ties)[p] += 1
        n += 1
    return {p: w / n for p, w in wins.items()}, {p: t / n for p, t in ties.items()}


def test_batch_strengths_equal_phevaluator_on_random_and_suited_hands() -> None:
    rng = random.Random(5)
    hands = [rng.sample(FULL_DECK, 7) for _ in range(3000)]
    # Flushes and straight flushes of every suit, with pairs beside them.
    for suit in "cdhs":
        hands.append([r + suit for r in "AKQJT"] + ["Ac" if suit != "c" else "Ad", "2h"])
        hands.append([r + suit for r in "5432A98"])
    hands.append(["As", "Ah", "Ad", "Ac", "Ks", "Kh", "Kd"])  # quads beside trips
    ids = np.array([card_ids(h) for h in hands])
    ours = strengths(CARD_BITS[ids].sum(axis=1), CARD_KEYS[ids].sum(axis=1))
    assert ours.tolist() == [strength(h[:2], h[2:]) for h in hands]


def test_aces_against_kings_preflop_within_the_stated_bound() -> None:
    holes = {1: ("As", "Ah"), 2: ("Kd", "Kc")}
    result = equity(holes)
    assert not result.exact and result.runouts == SAMPLES
    assert result.error == pytest.approx(error_bound(SAMPLES)) and result.error <= 0.005
    # Every one of the C(48, 5) boards, ranked with phevaluator one hand at a time.
    a, k = card_ids(holes[1]), card_ids(holes[2])
    deck = [i for i in range(52) if i not in (*a, *k)]
    evaluate = _pheval.evaluate_7cards
    won = lost = 0
    for b in itertools.combinations(deck, 5):
        x, y = evaluate(*a, *b), evaluate(*k, *b)
        won += x < y
        lost += y < x
    n = 1_712_304
    assert (won, lost) == (1_388_072, 317_694)  # 81.06 % against 18.55 %, 0.38 % split
    assert abs(result.win[1] - won / n) <= result.error
    assert abs(result.win[2] - lost / n) <= result.error
    assert abs(result.tie[1] - (n - won - lost) / n) <= result.error
    assert result.win[1] == pytest.approx(0.82, abs=0.015)  # "about 82/18"
    assert result.win[2] == pytest.approx(0.18, abs=0.015)
    assert equity(holes) == result  # the same cards, the same figures (fixed seed)


def test_set_over_set_on_the_flop_has_one_out() -> None:
    # Kings need the last king and no last ace: 43 of the C(45, 2) = 990 turn-river pairs.
    result = equity({1: ("Ac", "Ad"), 2: ("Kc", "Kd")}, ("Ah", "Kh", "2s"))
    assert result.exact and result.runouts == 990 and result.error == 0.0
    assert result.win == {1: 947 / 990, 2: 43 / 990}
    assert result.tie == {1: 0.0, 2: 0.0}
    assert result.outs == {1: (), 2: ("Ks",)}


def test_flush_and_overcards_against_queens_on_the_turn() -> None:
    # 9 hearts, 3 aces and 3 kings win the river for AK: 15 of 44.
    result = equity({1: ("Ah", "Kh"), 2: ("Qc", "Qd")}, ("2h", "7h", "Js", "3c"))
    assert result.win == {1: 15 / 44, 2: 29 / 44}
    assert set(result.outs[1]) == {"Ac", "Ad", "As", "Kc", "Kd", "Ks"} | {
        r + "h" for r in "QJT986543"
    }
    assert result.outs[1][:3] == ("Ac", "Ad", "As")  # strongest rank first
    assert result.outs[2] == ()


def test_royal_flush_on_the_board_is_split_by_everyone() -> None:
    result = equity(
        {1: ("2c", "3d"), 2: ("4h", "5c"), 3: ("7d", "8c")}, ("As", "Ks", "Qs", "Js", "Ts")
    )
    assert result.win == {1: 0.0, 2: 0.0, 3: 0.0}
    assert result.tie == {1: 1.0, 2: 1.0, 3: 1.0}
    assert result.outs == {1: (), 2: (), 3: ()}  # no outs on the river


def test_one_player_left_has_won() -> None:
    result = equity({4: ("2c", "7d")}, ("As", "Ks", "Qs"))
    assert result.win == {4: 1.0} and result.tie == {4: 0.0} and result.exact


def test_dead_cards_leave_the_deck() -> None:
    holes = {1: ("Ac", "Ad"), 2: ("Kc", "Kd")}
    board = ("Ah", "Kh", "2s")
    assert equity(holes, board, dead=("Ks", "9c")).win[2] == 0.0  # the one out is dead
    assert outs(holes, board, dead=("Ks",)) == {1: (), 2: ()}


def test_sampling_agrees_with_enumeration_within_its_bound() -> None:
    holes = {1: ("9h", "8h"), 2: ("Ac", "Kd"), 3: ("Qs", "Qc")}
    board = ("Th", "7c", "2h")
    exact = equity(holes, board)
    sampled = equity(holes, board, samples=600)  # fewer than the 741 run-outs: sampled
    assert exact.exact and not sampled.exact and sampled.runouts == 600
    for p in holes:
        assert abs(sampled.win[p] - exact.win[p]) <= sampled.error
        assert abs(sampled.tie[p] - exact.tie[p]) <= sampled.error


def test_bad_cards_are_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        equity({1: ("Ac", "Ad"), 2: ("Ac", "Kd")})
    with pytest.raises(ValueError, match="not a card"):
        equity({1: ("Ac", "Xd"), 2: ("Kc", "Kd")})
    with pytest.raises(ValueError, match="at most 5"):
        equity({1: ("Ac", "Ad")}, tuple(FULL_DECK[4:10]))
    with pytest.raises(ValueError, match="at least one"):
        equity({})


@st.composite
def spots(
    draw: st.DrawFn, streets: tuple[int, ...] = (3, 4, 5)
) -> tuple[dict[int, tuple[str, str]], tuple[str, ...], tuple[str, ...]]:
    players = draw(st.integers(2, 6))
    shown = draw(st.sampled_from(streets))
    dead = draw(st.integers(0, 4))
    cards = draw(st.permutations(FULL_DECK))[: 2 * players + shown + dead]
    seats = draw(st.lists(st.integers(1, 9), min_size=players, max_size=players, unique=True))
    holes = {s: (cards[2 * i], cards[2 * i + 1]) for i, s in enumerate(seats)}
    board = tuple(cards[2 * players : 2 * players + shown])
    return holes, board, tuple(cards[2 * players + shown :])


@settings(max_examples=25, deadline=None)
@given(spots())
def test_random_spots_equal_brute_force(
    spot: tuple[dict[int, tuple[str, str]], tuple[str, ...], tuple[str, ...]],
) -> None:
    holes, board, dead = spot
    result = equity(holes, board, dead)
    wins, ties = brute_force(holes, board, dead)
    assert result.exact
    assert result.win == pytest.approx(wins, abs=1e-12)
    assert result.tie == pytest.approx(ties, abs=1e-12)


def pokerkit_hand(hole: tuple[str, str], board: tuple[str, ...]) -> StandardHighHand:
    return StandardHighHand.from_game("".join(hole), "".join(board))


@settings(max_examples=25, deadline=None)
@given(spots(streets=(4,)))
def test_random_turn_spots_equal_pokerkit(
    spot: tuple[dict[int, tuple[str, str]], tuple[str, ...], tuple[str, ...]],
) -> None:
    """On the turn, each river ranked by PokerKit's evaluator: the win and tie shares, and the
    outs (rivers that put a player behind on the turn ahead of everyone alone)."""
    holes, board, dead = spot
    seen = {*board, *dead, *(c for h in holes.values() for c in h)}
    rivers = [c for c in FULL_DECK if c not in seen]
    now = {p: pokerkit_hand(h, board) for p, h in holes.items()}
    behind = {p for p in holes if any(now[q] > now[p] for q in holes)}
    wins = dict.fromkeys(holes, 0)
    ties = dict.fromkeys(holes, 0)
    expected_outs: dict[int, set[str]] = {p: set() for p in holes}
    for river in rivers:
        hands = {p: pokerkit_hand(h, (*board, river)) for p, h in holes.items()}
        best = max(hands.values())
        top = [p for p, h in hands.items() if h == best]
        for p in top:
            (wins if len(top) == 1 else ties)[p] += 1
        if len(top) == 1 and top[0] in behind:
            expected_outs[top[0]].add(river)
    result = equity(holes, board, dead)
    assert result.win == pytest.approx({p: w / len(rivers) for p, w in wins.items()}, abs=1e-12)
    assert result.tie == pytest.approx({p: t / len(rivers) for p, t in ties.items()}, abs=1e-12)
    assert {p: set(o) for p, o in result.outs.items()} == expected_outs


@settings(max_examples=25, deadline=None)
@given(spots(streets=(0, 3, 4)), st.data())
def test_runouts_of_a_deal_give_each_group_its_own_equity(
    spot: tuple[dict[int, tuple[str, str]], tuple[str, ...], tuple[str, ...]],
    data: st.DataObject,
) -> None:
    """Ranked once for every player, then any group of them (the others folded, their cards
    dead) has exactly the figures computed for that group alone, before the flop too."""
    holes, board, dead = spot
    runouts = Runouts(holes, board, dead, samples=2000)
    live = data.draw(st.sets(st.sampled_from(sorted(holes)), min_size=1))
    folded = [c for p in holes if p not in live for c in holes[p]]
    alone = equity({p: holes[p] for p in live}, board, (*dead, *folded), samples=2000)
    assert runouts.equity(live) == alone
    with pytest.raises(ValueError, match="not among"):
        runouts.equity({99})


def test_prepare_makes_what_the_first_deal_needs() -> None:
    from hub.domain import equity as module
    from hub.domain import strength_tables

    strength_tables.tables.cache_clear()
    module._sampled_picks.cache_clear()
    module.prepare(6)
    assert strength_tables.tables.cache_info().currsize == 1
    drawn = module._sampled_picks.cache_info()
    assert drawn.currsize == 1
    equity({p: (FULL_DECK[2 * p], FULL_DECK[2 * p + 1]) for p in range(6)})  # 40 unseen cards
    assert module._sampled_picks.cache_info().misses == drawn.misses  # found made


@settings(max_examples=60, deadline=None)
@given(
    players=st.integers(min_value=1, max_value=9),
    runouts=st.integers(min_value=1, max_value=40),
    levels=st.integers(min_value=1, max_value=4),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_tally_counts_every_group_as_comparing_it_directly(
    players: int, runouts: int, levels: int, seed: int
) -> None:
    """The tallies of every group equal comparing that group's ranks run-out by run-out (few
    strength levels, so ties are common; up to nine players, past one byte of bits)."""
    ranked = np.random.default_rng(seed).integers(0, levels, (players, runouts)).astype(np.uint16)
    wins, ties = tally(ranked)
    for group in range(1, 1 << players):
        rows = [i for i in range(players) if group >> i & 1]
        sub = ranked[rows]
        best = sub == sub.min(axis=0)
        alone = best.sum(axis=0) == 1
        for k, i in enumerate(rows):
            assert wins[i, group] == int((best[k] & alone).sum())
            assert ties[i, group] == int((best[k] & ~alone).sum())
