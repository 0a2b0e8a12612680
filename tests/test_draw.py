import itertools
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.domain.draw import (
    DrawError,
    cyclic_draw,
    is_cyclic,
    make_draw,
    random_draw,
    relative_order,
    uniform_latin_square,
    validate_draw,
)

TEAMS = ["ARG", "BRA", "CHN", "DEN", "ECU", "FIN"]
TABLES = [1, 2, 3, 4, 5, 6]

# The IFP guide's example (see samples/ifp6.toml): a cyclic draw.
IFP = {
    1: ["ECU", "ARG", "CHN", "FIN", "BRA", "DEN"],
    2: ["ARG", "CHN", "FIN", "BRA", "DEN", "ECU"],
    3: ["CHN", "FIN", "BRA", "DEN", "ECU", "ARG"],
    4: ["FIN", "BRA", "DEN", "ECU", "ARG", "CHN"],
    5: ["BRA", "DEN", "ECU", "ARG", "CHN", "FIN"],
    6: ["DEN", "ECU", "ARG", "CHN", "FIN", "BRA"],
}


def grid(rows):
    return {(t, s): team for t, row in rows.items() for s, team in enumerate(row, start=1)}


def assert_latin(draw, teams, tables, seats):
    assert set(draw) == {(t, s) for t in tables for s in range(1, seats + 1)}
    for t in tables:
        assert sorted(draw[(t, s)] for s in range(1, seats + 1)) == sorted(teams)
    for s in range(1, seats + 1):
        assert sorted(draw[(t, s)] for t in tables) == sorted(teams)


sizes = st.integers(min_value=2, max_value=8)


@settings(max_examples=150, deadline=None)
@given(n=sizes, seed=st.integers(), method=st.sampled_from(["random", "cyclic"]))
def test_every_generated_draw_is_a_latin_square(n, seed, method):
    teams = [f"T{i}" for i in range(n)]
    tables = [10 + 3 * i for i in range(n)]
    draw = make_draw(method, teams, tables, n, random.Random(seed))
    assert_latin(draw, teams, tables, n)
    validate_draw(draw, teams, tables, n)


@settings(max_examples=150, deadline=None)
@given(n=sizes, seed=st.integers())
def test_cyclic_draw_keeps_the_same_relative_order_at_every_table(n, seed):
    teams = [f"T{i}" for i in range(n)]
    tables = list(range(1, n + 1))
    draw = cyclic_draw(teams, tables, n, random.Random(seed))
    assert is_cyclic(draw, tables)
    first = relative_order(draw, tables[0], teams[0])
    for table in tables:
        assert relative_order(draw, table, teams[0]) == first


def test_random_draw_is_not_always_cyclic_and_varies():
    draws = [random_draw(TEAMS, TABLES, 6, random.Random(seed)) for seed in range(30)]
    assert not all(is_cyclic(d, TABLES) for d in draws)
    assert len({tuple(sorted(d.items())) for d in draws}) == 30


def test_every_team_lands_everywhere_over_many_random_draws():
    rng = random.Random(5)
    places = set()
    for _ in range(300):
        draw = random_draw(TEAMS[:4], [1, 2, 3, 4], 4, rng)
        places.update((key, team) for key, team in draw.items())
    assert len(places) == 4 * 4 * 4


def test_ifp_example_is_valid_and_cyclic():
    draw = grid(IFP)
    validate_draw(draw, TEAMS, TABLES, 6)
    assert is_cyclic(draw, TABLES)
    assert relative_order(draw, 1) == ("ECU", "ARG", "CHN", "FIN", "BRA", "DEN")
    assert relative_order(draw, 4, "BRA") == ("BRA", "DEN", "ECU", "ARG", "CHN", "FIN")
    assert relative_order(draw, 2, "BRA") == relative_order(draw, 6, "BRA")


def with_changes(**changes):
    rows = {t: list(row) for t, row in IFP.items()}
    draw = grid(rows)
    for key, team in changes.items():
        table, seat = (int(x) for x in key[1:].split("_"))
        if team is None:
            del draw[(table, seat)]
        else:
            draw[(table, seat)] = team
    return draw


@pytest.mark.parametrize(
    ("draw", "message"),
    [
        # table 3 is CHN FIN BRA DEN ECU ARG; putting BRA in seat 1 repeats BRA at the table
        (with_changes(t3_1="BRA"), "team BRA twice at table 3"),
        (with_changes(t2_5=None), "seat 5 of table 2 empty"),
        # swap two seats of table 1: the table is fine, seat columns repeat ARG in seat 1
        (with_changes(t1_1="ARG", t1_2="ECU"), "team ARG twice in seat 1"),
        (with_changes(t1_2="XYZ"), "unknown team XYZ at table 1 seat 2"),
        ({**grid(IFP), (7, 1): "ARG"}, "table 7 is not in the group"),
        ({**grid(IFP), (2, 7): "ARG"}, "table 2 has no seat 7 (seats are 1..6)"),
    ],
)
def test_validate_draw_names_the_exact_constraint(draw, message):
    with pytest.raises(DrawError) as info:
        validate_draw(draw, TEAMS, TABLES, 6)
    assert str(info.value) == message


def test_team_twice_in_a_seat_when_tables_are_swapped_by_hand():
    rows = {t: list(row) for t, row in IFP.items()}
    rows[4] = list(rows[3])  # table 4 copies table 3: every seat repeats
    with pytest.raises(DrawError, match=r"^team CHN twice in seat 1$"):
        validate_draw(grid(rows), TEAMS, TABLES, 6)


def test_sizes_must_match():
    with pytest.raises(DrawError, match="5 teams, 6 tables, 6 seats"):
        random_draw(TEAMS[:5], TABLES, 6, random.Random(0))
    with pytest.raises(DrawError, match="unknown draw method"):
        make_draw("swiss", TEAMS, TABLES, 6, random.Random(0))
    with pytest.raises(DrawError, match="team ARG is not at table 1"):
        relative_order(with_changes(t1_2="XYZ"), 1, "ARG")


# -- uniform over all Latin squares (issue 12.7) ----------------------------------------------


def reduced(draw, teams, tables):
    """The reduced form of a draw: columns (seats) ordered by the first table's teams, then
    rows (tables) by their first seat. Each of the 4 reduced squares of order 4 stands for
    exactly 4! x 3! = 144 of the 576 Latin squares, so a uniform draw hits each with 1/4."""
    n = len(tables)
    square = [[teams.index(draw[(t, s)]) for s in range(1, n + 1)] for t in tables]
    columns = sorted(range(n), key=lambda c: square[0][c])
    rows = sorted(([row[c] for c in columns] for row in square), key=lambda row: row[0])
    return tuple(tuple(row) for row in rows)


def chi_square(counts, cells, draws):
    expected = draws / cells
    return sum((counts.get(cell, 0) - expected) ** 2 / expected for cell in range(cells))


def all_latin_squares(n):
    """Every Latin square of order n by brute force (an oracle independent of the draw)."""
    perms = list(itertools.permutations(range(n)))
    out = []

    def extend(rows):
        if len(rows) == n:
            out.append(tuple(rows))
            return
        for p in perms:
            if all(p[c] != row[c] for row in rows for c in range(n)):
                extend([*rows, p])

    extend([])
    return out


def test_order_4_draws_hit_every_reduced_square_uniformly():
    """Order 4 has 576 squares in two isotopy classes (432 of the cyclic group's, 144 of the
    Klein group's); a draw isotopic to the cyclic square never reaches the Klein one."""
    teams, tables = ["A", "B", "C", "D"], [1, 2, 3, 4]
    squares = all_latin_squares(4)
    assert len(squares) == 576
    forms = sorted(
        {
            reduced(
                {(t, s): teams[sq[t - 1][s - 1]] for t in tables for s in range(1, 5)},
                teams,
                tables,
            )
            for sq in squares
        }
    )
    assert len(forms) == 4
    rng = random.Random(20261123)
    draws = 1200
    seen = Counter(
        forms.index(reduced(random_draw(teams, tables, 4, rng), teams, tables))
        for _ in range(draws)
    )
    assert set(seen) == {0, 1, 2, 3}
    # 3 degrees of freedom: 16.27 is the 0.1 % critical value.
    assert chi_square(seen, 4, draws) < 16.27, seen


def test_order_3_draws_hit_all_12_latin_squares_uniformly():
    squares = all_latin_squares(3)
    assert len(squares) == 12
    rng = random.Random(7)
    draws = 1200
    seen = Counter(
        squares.index(tuple(map(tuple, uniform_latin_square(3, rng)))) for _ in range(draws)
    )
    # 11 degrees of freedom: 31.26 is the 0.1 % critical value.
    assert chi_square(seen, 12, draws) < 31.26, seen


@pytest.mark.parametrize("n", [1, 2, 5, 10])
def test_uniform_latin_square_is_a_latin_square_and_reproducible(n):
    square = uniform_latin_square(n, random.Random(99))
    assert all(sorted(row) == list(range(n)) for row in square)
    assert all(sorted(column) == list(range(n)) for column in zip(*square, strict=True))
    assert uniform_latin_square(n, random.Random(99)) == square


def test_seeded_random_draws_are_reproducible():
    one = make_draw("random", TEAMS, TABLES, 6, random.Random("event-7"))
    two = make_draw("random", TEAMS, TABLES, 6, random.Random("event-7"))
    assert one == two
    validate_draw(one, TEAMS, TABLES, 6)
