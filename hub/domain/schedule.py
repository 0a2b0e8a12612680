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
