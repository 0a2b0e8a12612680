"""When do deals become public? Independent random orders against release-aware blocks (#23.1).

Run by hand: ``.venv/bin/python bench/schedule_sim.py [--tables 6] [--deals 12] [--seeds 2000]``.

A deal is public once every table has played it (docs/rules.md "Release"). For each seed the
simulation draws both schedules of one group (``random_deal_orders``: each table its own random
order; ``block_deal_orders``: blocks of as many deals as tables, each a Latin square) and plays
them at the same table paces: every hand takes ``uniform(--hand-min, --hand-max)`` minutes times
its table's pace, a factor drawn once per table from ``uniform(1 - drift, 1 + drift)`` (a slow
table stays slow), or exactly one "hand" per round at every table with ``--lockstep``. Reported,
as means over the seeds (and the 10th/90th percentiles where they say more):

- ``share``: the share of the session (from the first ``start`` to the last table's last hand)
  during which at least one deal is public;
- ``deals_public``: the share of the deals public, averaged over the session's time;
- ``first``: when the first deal is released, in minutes, and as a round: the number of hands
  the median table has completed by then;
- ``public@r``: deals public when the median table has completed ``r`` hands;
- ``lag`` (blocks): from the moment the median table ends a block to the release of that
  block's last deal, in mean hand times. The release of a block's last deal is exactly the end
  of the block at its slowest table (asserted): what remains is how far that table trails.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hub.domain.schedule import block_deal_orders, block_sizes, random_deal_orders

Orders = Mapping[int, Sequence[int]]


def paces(tables: Sequence[int], deals: int, args: argparse.Namespace, rng: random.Random):
    """Each table's finishing time of each of its hands (by position), in minutes."""
    finish: dict[int, list[float]] = {}
    for table in tables:
        factor = 1.0 if args.lockstep else rng.uniform(1 - args.drift, 1 + args.drift)
        clock, times = 0.0, []
        for _ in range(deals):
            hand = 4.0 if args.lockstep else rng.uniform(args.hand_min, args.hand_max)
            clock += hand * factor
            times.append(clock)
        finish[table] = times
    return finish


def play(orders: Orders, finish: Mapping[int, list[float]]) -> dict[int, float]:
    """When each deal is released: when the last table to play it finishes it."""
    released: dict[int, float] = {}
    for table, order in orders.items():
        for position, deal in enumerate(order):
            released[deal] = max(released.get(deal, 0.0), finish[table][position])
    return released


def measure(
    released: Mapping[int, float], finish: Mapping[int, list[float]], rounds: Sequence[int]
) -> dict[str, float]:
    """The figures of one played schedule (see the module docstring)."""
    end = max(times[-1] for times in finish.values())
    first = min(released.values())
    deals = len(released)
    median = [statistics.median(finish[t][i] for t in finish) for i in range(deals)]
    figures = {
        "share": (end - first) / end,
        "deals_public": sum(end - t for t in released.values()) / (deals * end),
        "first_min": first,
        "first_round": float(sum(1 for t in median if t <= first)),
    }
    for r in rounds:
        figures[f"public@{r}"] = float(sum(1 for t in released.values() if t <= median[r - 1]))
    return figures


def block_lag(
    released: Mapping[int, float],
    orders: Orders,
    finish: Mapping[int, list[float]],
    tables: int,
    hand: float,
) -> list[float]:
    """Per block: its last deal's release after the median table ends it, in hand times."""
    lags, start = [], 0
    any_order = next(iter(orders.values()))
    for size in block_sizes(tables, len(any_order)):
        block = any_order[start : start + size]
        start += size
        median_end = statistics.median(times[start - 1] for times in finish.values())
        last_end = max(times[start - 1] for times in finish.values())
        # every table plays the whole block in its rounds: the last to end it releases it all
        assert max(released[d] for d in block) == last_end
        lags.append((max(released[d] for d in block) - median_end) / hand)
    return lags


def summary(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "mean": round(statistics.fmean(ordered), 3),
        "p10": round(ordered[len(ordered) // 10], 3),
        "p90": round(ordered[len(ordered) * 9 // 10], 3),
    }


def run(args: argparse.Namespace) -> dict[str, object]:
    tables = list(range(1, args.tables + 1))
    rounds = [r for r in (args.tables, args.deals * 2 // 3, args.deals - 1) if r <= args.deals]
    rng = random.Random(args.seed)
    got: dict[str, dict[str, list[float]]] = {"random": {}, "blocks": {}}
    lags: list[float] = []
    hand = 4.0 if args.lockstep else (args.hand_min + args.hand_max) / 2
    for _ in range(args.seeds):
        finish = paces(tables, args.deals, args, rng)
        schedules = {
            "random": random_deal_orders(tables, args.deals, rng),
            "blocks": block_deal_orders([tables], [range(1, args.deals + 1)], rng),
        }
        for name, orders in schedules.items():
            released = play(orders, finish)
            for key, value in measure(released, finish, rounds).items():
                got[name].setdefault(key, []).append(value)
            if name == "blocks":
                lags.extend(block_lag(released, orders, finish, args.tables, hand))
    result: dict[str, object] = {
        name: {key: summary(values) for key, values in figures.items()}
        for name, figures in got.items()
    }
    result["blocks_lag_hands"] = summary(lags)
    result["blocks_lag_within_one_hand"] = round(sum(1 for x in lags if x <= 1) / len(lags), 4)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=6)
    parser.add_argument("--deals", type=int, default=12)
    parser.add_argument("--seeds", type=int, default=2000)
    parser.add_argument("--seed", default="schedule-sim", help="the simulation's own seed")
    parser.add_argument("--hand-min", type=float, default=2.0, help="minutes")
    parser.add_argument("--hand-max", type=float, default=6.0, help="minutes")
    parser.add_argument("--drift", type=float, default=0.15, help="table pace spread (+/-)")
    parser.add_argument("--lockstep", action="store_true", help="every hand 4 min everywhere")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    began = time.perf_counter()
    result = run(args)
    result["settings"] = {k: v for k, v in vars(args).items() if k != "json"}
    result["seconds"] = round(time.perf_counter() - began, 1)
    print(table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str) + "\n", encoding="utf-8")


def table(result: dict[str, object]) -> str:
    """The figures as a Markdown table (mean, and p10..p90), random against blocks."""
    random_, blocks = result["random"], result["blocks"]
    assert isinstance(random_, dict) and isinstance(blocks, dict)
    lines = ["| figure | random orders | blocks |", "|---|---|---|"]
    for key in random_:
        cells = [f"{s['mean']} ({s['p10']}..{s['p90']})" for s in (random_[key], blocks[key])]
        lines.append(f"| {key} | {cells[0]} | {cells[1]} |")
    lag = result["blocks_lag_hands"]
    assert isinstance(lag, dict)
    lines.append(
        f"| block end (median table) to its last release, hands | - | {lag['mean']} "
        f"({lag['p10']}..{lag['p90']}); within one hand: {result['blocks_lag_within_one_hand']} |"
    )
    return "\n".join(lines) + f"\n\n{result['settings']}, {result['seconds']} s"


if __name__ == "__main__":
    main()
