"""The seat draw: which team sits in which seat of which table.

Within a group of N teams, N tables and N seats the draw is a Latin square: every team has
exactly one player at each table and exactly one player in each seat position, so every team
meets every seat's cards once and every other team at every table. Two generators:

- ``random_draw``: a Latin square drawn uniformly from all Latin squares of that order
  (Jacobson-Matthews Markov chain, see ``uniform_latin_square``);
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
    """A Latin square drawn uniformly from **all** Latin squares of the group's order.

    Rows are the group's tables in order, columns the seats, symbols the teams. The square comes
    from ``uniform_latin_square``; any fixed labelling of a uniform square is uniform, so every
    Latin square of tables x seats x teams is equally likely (and with it every team equally
    likely at every (table, seat)). The same ``rng`` state gives the same draw.
    """
    _check_sizes(teams, tables, seats)
    square = uniform_latin_square(seats, rng)
    return {
        (table, seat): teams[square[r][seat - 1]]
        for r, table in enumerate(tables)
        for seat in range(1, seats + 1)
    }


def mixing_steps(n: int) -> int:
    """Proper squares the Jacobson-Matthews chain visits before one is taken: ``2 n^3``.

    No mixing time is proven for the chain; the literature runs O(n^3) steps (n^3 is common).
    Twice that keeps the draw well mixed for the 2..10 seats of a table at a few milliseconds
    (about 0.1 s for 10 seats); ``tests/test_draw.py`` checks the draw against the uniform
    distribution: all 12 squares of order 3, and the 4 reduced squares of order 4 (144 of the
    576 squares each).
    """
    return 2 * n**3


def uniform_latin_square(n: int, rng: random.Random) -> list[list[int]]:
    """A uniformly distributed Latin square of order ``n`` (symbols ``0..n-1``), row by row.

    Jacobson and Matthews' Markov chain (M. T. Jacobson, P. Matthews, "Generating uniformly
    distributed random Latin squares", J. Combinatorial Designs 4(6), 1996, 405-437). A square
    is its incidence cube ``m[r][c][s]`` (1 when cell (r, c) holds s) with every line summing
    to 1; an *improper* cube also has one entry -1. A step picks a 0 entry (of a proper cube,
    uniformly) or the -1 entry (of an improper one), and for that (r, c, s) the entries r', c',
    s' holding 1 on its three lines (of an improper cube: one of the two, at random); it adds 1
    to (r,c,s), (r,c',s'), (r',c,s'), (r',c',s) and takes 1 from (r',c,s), (r,c',s), (r,c,s'),
    (r',c',s'). The chain is connected and its stationary distribution is uniform on proper
    cubes (their Theorems 6 and 7). The square returned is the ``mixing_steps(n)``-th proper cube
    the chain visits, counted from the cyclic square: the proper cubes visited in turn form the
    chain *watched on* the proper cubes, whose stationary distribution is the uniform one. (Taking
    instead the first proper cube after a fixed number of steps is biased: it favours squares
    that long improper excursions end in, and draws the order-4 squares of the Klein group about
    a third as often as the others.)
    """
    if n < 1:
        raise DrawError(f"a Latin square needs an order of at least 1, not {n}")
    cube = _IncidenceCube(n)
    improper: tuple[int, int, int] | None = None
    steps = mixing_steps(n) if n > 1 else 0
    visits = 0  # proper cubes reached: the square is the one of a fixed visit, see above
    while visits < steps:
        if improper is None:
            r, c = rng.randrange(n), rng.randrange(n)
            (held,) = cube.symbols[r][c]
            s = rng.randrange(n - 1)
            s += s >= held  # uniform over the n - 1 symbols not in (r, c): a 0 entry
            (r1,) = cube.rows[c][s]
            (c1,) = cube.cols[r][s]
            s1 = held
        else:
            r, c, s = improper
            r1 = rng.choice(cube.rows[c][s])
            c1 = rng.choice(cube.cols[r][s])
            s1 = rng.choice(cube.symbols[r][c])
        for cell in ((r, c, s), (r, c1, s1), (r1, c, s1), (r1, c1, s)):
            cube.add(*cell, 1)
        for cell in ((r1, c, s), (r, c1, s), (r, c, s1)):
            cube.add(*cell, -1)
        improper = (r1, c1, s1) if cube.add(r1, c1, s1, -1) < 0 else None
        visits += improper is None
    return [[cube.symbols[r][c][0] for c in range(n)] for r in range(n)]


class _IncidenceCube:
    """The incidence cube of a (possibly improper) Latin square, with the 1 entries of every
    line at hand: ``rows[c][s]``, ``cols[r][s]`` and ``symbols[r][c]`` list them (two entries
    only on the lines through an improper cube's -1). Starts as the cyclic square."""

    def __init__(self, n: int) -> None:
        self.value = [[[0] * n for _ in range(n)] for _ in range(n)]
        self.rows: list[list[list[int]]] = [[[] for _ in range(n)] for _ in range(n)]
        self.cols: list[list[list[int]]] = [[[] for _ in range(n)] for _ in range(n)]
        self.symbols: list[list[list[int]]] = [[[] for _ in range(n)] for _ in range(n)]
        for r in range(n):
            for c in range(n):
                self.add(r, c, (r + c) % n, 1)

    def add(self, r: int, c: int, s: int, delta: int) -> int:
        """Move entry (r, c, s) by ``delta``; returns its new value."""
        old = self.value[r][c][s]
        new = self.value[r][c][s] = old + delta
        if old == 1:
            self.rows[c][s].remove(r)
            self.cols[r][s].remove(c)
            self.symbols[r][c].remove(s)
        elif new == 1:
            self.rows[c][s].append(r)
            self.cols[r][s].append(c)
            self.symbols[r][c].append(s)
        return new


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
