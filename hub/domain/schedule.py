"""The session schedule: in which order each table plays the deals, and where the button is.

Every table plays the same deals 1..D with the button at the same seat for a given deal, but in
its own random order, so noise from a neighbouring table never tells a player which hand is
coming (IFP security procedure). ``block_deal_orders`` makes those orders release-aware: blocks
of as many deals as a group has tables, each a Latin square of tables x rounds, so no two tables
play one deal in one round and a block's deals are public once the block is played;
``deal_clashes`` finds where a written schedule breaks the first of these.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from hub.domain.draw import uniform_latin_square


class ScheduleError(ValueError):
    """A deal order or button list that breaks the schedule's rules."""


def random_deal_orders(
    tables: Sequence[int], deals: int, rng: random.Random
) -> dict[int, tuple[int, ...]]:
    """Each table its own independent random permutation of deals ``1..deals``."""
    return {table: tuple(rng.sample(range(1, deals + 1), deals)) for table in tables}


def sequential_deal_orders(tables: Sequence[int], deals: int) -> dict[int, tuple[int, ...]]:
    """Every table plays ``1..deals`` in order (tests and demos; not for a real event)."""
    return {table: tuple(range(1, deals + 1)) for table in tables}


def default_buttons(deals: int, seats: int) -> dict[int, int]:
    """The button moves one seat per deal: deal ``d`` has it at ``((d - 1) % seats) + 1``."""
    return {deal: (deal - 1) % seats + 1 for deal in range(1, deals + 1)}


def validate_deal_orders(
    orders: Mapping[int, Sequence[int]], tables: Sequence[int], deals: int
) -> None:
    """Raise ``ScheduleError`` unless every table has an order that is a permutation of 1..deals."""
    for table in sorted(orders):
        if table not in tables:
            raise ScheduleError(f"table {table} is not a table of the tournament")
    expected = set(range(1, deals + 1))
    for table in tables:
        if table not in orders:
            raise ScheduleError(f"table {table} has no deal order")
        order = list(orders[table])
        for deal in order:
            if deal not in expected:
                raise ScheduleError(f"table {table}: deal {deal} is not one of 1..{deals}")
        seen: set[int] = set()
        for deal in order:
            if deal in seen:
                raise ScheduleError(f"table {table}: deal {deal} twice")
            seen.add(deal)
        missing = sorted(expected - seen)
        if missing:
            raise ScheduleError(f"table {table}: deal {missing[0]} missing")


def validate_buttons(buttons: Mapping[int, int], deals: int, seats: int) -> None:
    """Raise ``ScheduleError`` unless every deal 1..deals has a button seat in 1..seats."""
    for deal in sorted(buttons):
        if not 1 <= deal <= deals:
            raise ScheduleError(f"deal {deal} is not one of 1..{deals}")
        if not 1 <= buttons[deal] <= seats:
            raise ScheduleError(f"deal {deal}: button {buttons[deal]} is not a seat of 1..{seats}")
    for deal in range(1, deals + 1):
        if deal not in buttons:
            raise ScheduleError(f"deal {deal} has no button")


def session_deal_orders(
    sessions: Mapping[int, Sequence[range]], rng: random.Random | None
) -> dict[int, tuple[int, ...]]:
    """Events with sessions: each table plays its stage's sessions one after the other, the
    deals of each in its own random order (``rng``) or in order (``None``)."""
    orders: dict[int, tuple[int, ...]] = {}
    for table, ranges in sessions.items():
        order: list[int] = []
        for deals in ranges:
            order.extend(rng.sample(list(deals), len(deals)) if rng else deals)
        orders[table] = tuple(order)
    return orders


def validate_session_orders(
    orders: Mapping[int, Sequence[int]], sessions: Mapping[int, Sequence[range]]
) -> None:
    """Raise ``ScheduleError`` unless each table plays each session of its stage in turn, every
    deal of it once."""
    for table in sorted(orders):
        if table not in sessions:
            raise ScheduleError(f"table {table} is not a table of the tournament")
    for table, ranges in sessions.items():
        if table not in orders:
            raise ScheduleError(f"table {table} has no deal order")
        order = list(orders[table])
        start = 0
        for deals in ranges:
            part = order[start : start + len(deals)]
            if sorted(part) != list(deals):
                raise ScheduleError(
                    f"table {table}: expected deals {deals.start}..{deals.stop - 1} "
                    f"(a session) in some order at positions {start + 1}..{start + len(deals)}"
                )
            start += len(deals)
        if start != len(order):
            raise ScheduleError(f"table {table}: {len(order) - start} deals more than its stage")


# Release-aware schedules ------------------------------------------------------------------------
#
# A deal is public only once every table has played it (rules.md "Release"). With independent
# random orders the last table to reach a deal decides, so almost nothing is public before the
# last rounds. Blocks fix that: the deals are cut into blocks of as many deals as the group has
# tables, and every table plays a block's deals in the same rounds (a Latin square of tables x
# rounds), so every deal of a block is complete everywhere once the block is played, and no two
# tables of a group play the same deal in the same round.


def block_sizes(tables: int, deals: int) -> list[int]:
    """How ``deals`` deals are cut into blocks for a group of ``tables`` tables, in play order.

    Blocks of ``tables`` deals; the remainder joins the last block (a Latin rectangle of
    ``tables`` rows and ``tables + rest`` rounds), since a block of fewer deals than tables
    would put two tables on one deal in one round. Fewer deals than tables: one block (two
    tables on one deal in a round cannot be avoided then).
    """
    if deals <= tables:
        return [deals] if deals else []
    sizes = [tables] * (deals // tables)
    sizes[-1] += deals % tables
    return sizes


def block_rounds(
    tables: Sequence[int], deals: Sequence[int], rng: random.Random
) -> dict[int, list[int]]:
    """One group's tables playing ``deals`` in blocks already cut (``deals`` in block order).

    Each block of ``m`` deals is an ``m``-order Latin square drawn uniformly (Jacobson-Matthews,
    ``hub.domain.draw.uniform_latin_square``): its columns are the block's rounds, its symbols
    the block's deals, and ``len(tables)`` of its rows, drawn at random, are the tables' rows
    (with ``m`` below the table count, a row serves several tables, spread evenly).
    """
    orders: dict[int, list[int]] = {table: [] for table in tables}
    start = 0
    for size in block_sizes(len(tables), len(deals)):
        block = deals[start : start + size]
        start += size
        square = uniform_latin_square(size, rng)
        if size >= len(tables):
            rows = rng.sample(range(size), len(tables))
        else:
            rows = rng.sample([i % size for i in range(len(tables))], len(tables))
        for table, row in zip(tables, rows, strict=True):
            orders[table].extend(block[symbol] for symbol in square[row])
    return orders


def block_deal_orders(
    groups: Sequence[Sequence[int]],
    sessions: Sequence[range],
    rng: random.Random,
) -> dict[int, tuple[int, ...]]:
    """Release-aware orders: every group's tables play each run of deals (a session) in blocks.

    ``groups`` are the tables of each group; ``sessions`` the runs of deals they play in turn
    (``[range(1, deals + 1)]`` without sessions). Each session's deals are shuffled and cut into
    blocks (``block_sizes``), so which deals share a block, and the order of the blocks, are
    random and secret. Groups of the same size share the cut (the same deals in the same block,
    released together, since release waits for every group) with squares of their own.
    """
    orders: dict[int, list[int]] = {table: [] for group in groups for table in group}
    for deals in sessions:
        cuts: dict[int, list[int]] = {}
        for group in groups:
            cut = cuts.setdefault(len(group), rng.sample(list(deals), len(deals)))
            for table, part in block_rounds(group, cut, rng).items():
                orders[table].extend(part)
    return {table: tuple(order) for table, order in orders.items()}


def stage_block_orders(
    groups: Sequence[Sequence[int]],
    sessions: Mapping[int, Sequence[range]],
    rng: random.Random,
) -> dict[int, tuple[int, ...]]:
    """``block_deal_orders`` for an event with stages: ``sessions`` are each table's sessions
    (groups of one stage share them); the groups of a stage are blocked together."""
    by_stage: dict[tuple[range, ...], list[Sequence[int]]] = {}
    for group in groups:
        by_stage.setdefault(tuple(sessions[group[0]]), []).append(group)
    orders: dict[int, tuple[int, ...]] = {}
    for runs, members in by_stage.items():
        orders.update(block_deal_orders(members, runs, rng))
    return orders


def deal_clashes(
    orders: Mapping[int, Sequence[int]], groups: Sequence[Sequence[int]]
) -> list[tuple[int, int, tuple[int, ...]]]:
    """Where two or more tables of one group play the same deal in the same round: ``(round,
    deal, tables)``, by round then deal (rounds count from 1 in each table's order)."""
    clashes = []
    for group in groups:
        rounds = max((len(orders.get(t, ())) for t in group), default=0)
        for i in range(rounds):
            at: dict[int, list[int]] = {}
            for table in group:
                order = orders.get(table, ())
                if i < len(order):
                    at.setdefault(order[i], []).append(table)
            for deal, tables in at.items():
                if len(tables) > 1:
                    clashes.append((i + 1, deal, tuple(sorted(tables))))
    return sorted(clashes)


def clash_text(round_: int, deal: int, tables: Sequence[int]) -> str:
    """A clash in words: "tables 1 and 2 both play deal 6 in round 1"."""
    names = ", ".join(str(t) for t in tables[:-1]) + f" and {tables[-1]}"
    both = "both" if len(tables) == 2 else "all"
    return f"tables {names} {both} play deal {deal} in round {round_}"
