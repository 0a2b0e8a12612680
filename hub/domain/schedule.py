"""The session schedule: in which order each table plays the deals, and where the button is.

Every table plays the same deals 1..D with the button at the same seat for a given deal, but in
its own random order, so noise from a neighbouring table never tells a player which hand is
coming (IFP security procedure).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence


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
