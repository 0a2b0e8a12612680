"""7-card hand evaluation: ``hub.domain.evaluation.strength`` (phevaluator) vs PokerKit.

Run by hand: ``.venv/bin/python bench/evaluator_bench.py [--hands 5000] [--repeat 3]``
(about 10 s with the defaults).

Both evaluators rank the same random 7-card hands (2 hole cards + 5 board cards, distinct cards
drawn with ``--seed``). For each we report the best of ``--repeat`` timed passes in µs per hand,
and the ratio to ours. PokerKit is timed twice: from card strings, as ``strength`` takes them
(``StandardHighHand.from_game("AhKd", "2c7s9c3s4d")``), and from pre-parsed ``pokerkit.Card``
tuples (its evaluation alone, without parsing). phevaluator's public ``evaluate_cards`` is timed
too (``strength`` calls its private ``_pheval``, pinned: see hub/domain/evaluation.py). Before
timing, the two must order every pair of consecutive hands the same way (lower ``strength`` is
stronger; a greater PokerKit hand is).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phevaluator import evaluate_cards
from pokerkit import Card, Hand, StandardHighHand

from hub.domain.cards import FULL_DECK
from hub.domain.evaluation import strength

Hands = list[tuple[tuple[str, ...], tuple[str, ...]]]


def random_hands(count: int, seed: int) -> Hands:
    rng = random.Random(seed)
    hands: Hands = []
    for _ in range(count):
        cards = rng.sample(FULL_DECK, 7)
        hands.append((tuple(cards[:2]), tuple(cards[2:])))
    return hands


def best_of(repeat: int, work: Callable[[], object]) -> float:
    """The fastest of ``repeat`` timed calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def disagreements(ours: Sequence[int], theirs: Sequence[Hand]) -> int:
    """Consecutive pairs that the two evaluators order differently (should be none)."""
    count = 0
    for i in range(len(ours) - 1):
        mine = (ours[i] < ours[i + 1]) - (ours[i] > ours[i + 1])  # 1: hand i is stronger
        other = (theirs[i] > theirs[i + 1]) - (theirs[i] < theirs[i + 1])
        count += mine != other
    return count


def run(hands: int = 5000, repeat: int = 3, seed: int = 1) -> dict[str, Any]:
    sample = random_hands(hands, seed)
    strings = [("".join(hole), "".join(board)) for hole, board in sample]
    parsed = [(tuple(Card.parse(hole)), tuple(Card.parse(board))) for hole, board in strings]

    ours_ranks = [strength(hole, board) for hole, board in sample]
    pokerkit_hands = [StandardHighHand.from_game(hole, board) for hole, board in strings]
    wrong = disagreements(ours_ranks, pokerkit_hands)
    if wrong:
        raise AssertionError(f"the evaluators order {wrong} pairs of hands differently")

    def ours() -> None:
        for hole, board in sample:
            strength(hole, board)

    def public_api() -> None:
        for hole, board in sample:
            evaluate_cards(*hole, *board)

    def pokerkit_strings() -> None:
        for hole, board in strings:
            StandardHighHand.from_game(hole, board)

    def pokerkit_parsed() -> None:
        for hole, board in parsed:
            StandardHighHand.from_game(hole, board)

    figures: dict[str, Any] = {
        "hands": hands,
        "repeat": repeat,
        "seed": seed,
        "python": platform.python_version(),
        "pairs_checked": max(hands - 1, 0),
        "disagreements": wrong,
        "evaluators": {},
    }
    base: float | None = None
    for name, work in (
        ("strength (phevaluator)", ours),
        ("phevaluator.evaluate_cards (public API, strings)", public_api),
        ("pokerkit StandardHighHand.from_game (strings)", pokerkit_strings),
        ("pokerkit StandardHighHand.from_game (parsed Cards)", pokerkit_parsed),
    ):
        seconds = best_of(repeat, work)
        us = seconds / hands * 1e6
        base = us if base is None else base
        figures["evaluators"][name] = {
            "seconds": round(seconds, 4),
            "us_per_hand": round(us, 3),
            # (3 significant digits: a run of a few hundred hands preempted once on a busy
            # machine made one ratio round to 0.0 at one decimal)
            "ratio_to_strength": float(f"{us / base:.3g}"),
        }
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=5000, help="random 7-card hands")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes; the best counts")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    figures = run(args.hands, args.repeat, args.seed)
    print(
        f"{figures['hands']} hands, best of {figures['repeat']}, seed {figures['seed']}, "
        f"CPython {figures['python']}; orderings agree on {figures['pairs_checked']} pairs"
    )
    print(f"{'evaluator':<52} {'µs/hand':>10} {'ratio':>8}")
    for name, row in figures["evaluators"].items():
        print(f"{name:<52} {row['us_per_hand']:>10.2f} {row['ratio_to_strength']:>7.1f}x")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
