"""The seat draw: which team sits in which seat of which table.

Within a group of N teams, N tables and N seats the draw is a Latin square: every team has
exactly one player at each table and exactly one player in each seat position, so every team
meets every seat's cards once and every other team at every table. Two generators:

- ``random_draw``: a random Latin square;
- ``cyclic_draw``: the same clockwise order of teams round every table, rotated one step per
  table ("Brazil acts after Denmark on all tables").

A hand-entered draw goes through ``validate_draw``, which names the exact violated constraint.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

Draw = dict[tuple[int, int], str]
"""(table, seat) -> team id."""

METHODS = ("random", "cyclic")


class DrawError(ValueError):
    """A draw that is not a Latin square of the group; the message names the constraint."""


def _check_sizes(teams: Sequence[str], tables: Sequence[int], seats: int) -> None:
    if len(set(teams)) != len(teams):
        raise DrawError("a team is listed twice in the group")
    if len(set(tables)) != len(tables):
        raise DrawError("a table is listed twice in the group")
    if not len(teams) == len(tables) == seats:
        raise DrawError(
            f"a draw needs as many teams and tables as seats: "
            f"{len(teams)} teams, {len(tables)} tables, {seats} seats"
        )


def random_draw(
    teams: Sequence[str], tables: Sequence[int], seats: int, rng: random.Random
) -> Draw:
    """A random Latin square: the cyclic square with rows, columns and symbols shuffled.

    Every team is equally likely at every (table, seat), and the result is uniform over the
    squares isotopic to the cyclic one. For 4 or more teams that is not every Latin square (other
    isotopy classes exist), which costs nothing in fairness: the draw only has to be a Latin
    square nobody could predict.
    """
    _check_sizes(teams, tables, seats)
    n = seats
    rows = rng.sample(range(n), n)
    cols = rng.sample(range(n), n)
    symbols = rng.sample(list(teams), n)
    return {
        (table, seat): symbols[(rows[r] + cols[seat - 1]) % n]
        for r, table in enumerate(tables)
        for seat in range(1, n + 1)
    }


def cyclic_draw(
    teams: Sequence[str], tables: Sequence[int], seats: int, rng: random.Random
) -> Draw:
    """One random clockwise order of the teams, rotated to a different start at each table."""
    _check_sizes(teams, tables, seats)
    n = seats
    order = rng.sample(list(teams), n)
    shifts = rng.sample(range(n), n)
    return {
        (table, seat): order[(seat - 1 + shifts[r]) % n]
        for r, table in enumerate(tables)
        for seat in range(1, n + 1)
    }


def make_draw(
    method: str, teams: Sequence[str], tables: Sequence[int], seats: int, rng: random.Random
) -> Draw:
    """The draw of one group by method name (``"random"`` or ``"cyclic"``)."""
    if method == "random":
        return random_draw(teams, tables, seats, rng)
    if method == "cyclic":
        return cyclic_draw(teams, tables, seats, rng)
    raise DrawError(f"unknown draw method {method!r} (expected one of {', '.join(METHODS)})")


def validate_draw(
    draw: Mapping[tuple[int, int], str], teams: Sequence[str], tables: Sequence[int], seats: int
) -> None:
    """Raise ``DrawError`` naming the first violated constraint, or return if the draw is good.

    Checks, in this order: the group's sizes; every entry is a table of the group, an existing
    seat and a known team; no team twice at a table; no team twice in a seat position; no empty
    seat.
    """
    _check_sizes(teams, tables, seats)
    known_tables = set(tables)
    known_teams = set(teams)
    for (table, seat), team in sorted(draw.items()):
        if table not in known_tables:
            raise DrawError(f"table {table} is not in the group")
        if not 1 <= seat <= seats:
            raise DrawError(f"table {table} has no seat {seat} (seats are 1..{seats})")
        if team not in known_teams:
            raise DrawError(f"unknown team {team} at table {table} seat {seat}")
    for table in tables:
        seen: set[str] = set()
        for seat in range(1, seats + 1):
            holder = draw.get((table, seat))
            if holder is None:
                continue
            if holder in seen:
                raise DrawError(f"team {holder} twice at table {table}")
            seen.add(holder)
    for seat in range(1, seats + 1):
        seen = set()
        for table in tables:
            holder = draw.get((table, seat))
            if holder is None:
                continue
            if holder in seen:
                raise DrawError(f"team {holder} twice in seat {seat}")
            seen.add(holder)
    for table in tables:
        for seat in range(1, seats + 1):
            if (table, seat) not in draw:
                raise DrawError(f"seat {seat} of table {table} empty")


def relative_order(
    draw: Mapping[tuple[int, int], str], table: int, start: str | None = None
) -> tuple[str, ...]:
    """The teams at ``table`` clockwise (increasing seat number), beginning with ``start``.

    Without ``start`` the order begins at seat 1. Two tables have the same relative order when
    ``relative_order(draw, a, team) == relative_order(draw, b, team)`` for any team.
    """
    seated = [team for (t, _seat), team in sorted(draw.items()) if t == table]
    if not seated:
        raise DrawError(f"table {table} is not in the draw")
    if start is None:
        return tuple(seated)
    if start not in seated:
        raise DrawError(f"team {start} is not at table {table}")
    i = seated.index(start)
    return tuple(seated[i:] + seated[:i])


def is_cyclic(draw: Mapping[tuple[int, int], str], tables: Sequence[int]) -> bool:
    """True when every table seats the teams in the same clockwise order."""
    first = relative_order(draw, tables[0])
    return all(relative_order(draw, table, first[0]) == first for table in tables[1:])
