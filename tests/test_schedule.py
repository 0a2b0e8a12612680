import random
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.domain.schedule import (
    ScheduleError,
    block_deal_orders,
    block_sizes,
    clash_text,
    deal_clashes,
    default_buttons,
    random_deal_orders,
    sequential_deal_orders,
    stage_block_orders,
    validate_buttons,
    validate_deal_orders,
)


def test_random_deal_orders_are_permutations_per_table():
    orders = random_deal_orders([1, 2, 3, 4], 12, random.Random(3))
    assert sorted(orders) == [1, 2, 3, 4]
    for order in orders.values():
        assert sorted(order) == list(range(1, 13))
    assert len(set(orders.values())) > 1
    validate_deal_orders(orders, [1, 2, 3, 4], 12)


def test_random_deal_orders_are_reproducible_from_the_generator():
    a = random_deal_orders([1, 2], 5, random.Random("x"))
    assert a == random_deal_orders([1, 2], 5, random.Random("x"))


def test_default_buttons_move_one_seat_per_deal():
    assert default_buttons(8, 6) == {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 1, 8: 2}
    validate_buttons(default_buttons(8, 6), 8, 6)


def test_sequential_orders():
    assert sequential_deal_orders([2, 5], 3) == {2: (1, 2, 3), 5: (1, 2, 3)}


@pytest.mark.parametrize(
    ("orders", "message"),
    [
        ({1: (1, 2, 3)}, "table 2 has no deal order"),
        ({1: (1, 2, 3), 2: (1, 2, 4)}, "table 2: deal 4 is not one of 1..3"),
        ({1: (1, 2, 3), 2: (1, 1, 3)}, "table 2: deal 1 twice"),
        ({1: (1, 2, 3), 2: (1, 3)}, "table 2: deal 2 missing"),
        ({1: (1, 2, 3), 2: (1, 2, 3), 9: (1, 2, 3)}, "table 9 is not a table"),
    ],
)
def test_validate_deal_orders_names_the_problem(orders, message):
    with pytest.raises(ScheduleError, match=re.escape(message)):
        validate_deal_orders(orders, [1, 2], 3)


def test_validate_buttons_names_the_problem():
    with pytest.raises(ScheduleError, match=re.escape("deal 2: button 7 is not a seat of 1..6")):
        validate_buttons({1: 1, 2: 7}, 2, 6)
    with pytest.raises(ScheduleError, match="deal 2 has no button"):
        validate_buttons({1: 1}, 2, 6)


# Release-aware schedules: blocks (issue #23) ---------------------------------------------------

groups_and_deals = st.integers(1, 6).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.integers(1, 3),  # groups
        st.integers(n, 3 * n + n - 1),  # deals: at least one block
        st.integers(0, 2**32),
    )
)


def _blocks(n: int, groups: int, deals: int, seed: int):
    tables = [[g * 10 + t for t in range(1, n + 1)] for g in range(groups)]
    orders = block_deal_orders(tables, [range(1, deals + 1)], random.Random(seed))
    return tables, orders


@settings(max_examples=60, deadline=None)
@given(groups_and_deals)
def test_blocks_are_latin_and_complete_together(case):
    n, groups, deals, seed = case
    tables, orders = _blocks(n, groups, deals, seed)
    validate_deal_orders(orders, [t for g in tables for t in g], deals)  # each deal once a table
    assert deal_clashes(orders, tables) == []  # no two tables of a group on one deal in a round
    sizes = block_sizes(n, deals)
    assert sum(sizes) == deals and all(n <= size < 2 * n for size in sizes)
    start = 0
    for size in sizes:
        rounds = slice(start, start + size)
        blocks = {frozenset(orders[t][rounds]) for g in tables for t in g}
        assert len(blocks) == 1  # every table of every group plays the block's deals in it
        for group in tables:
            for i in range(start, start + size):  # a Latin rectangle: a deal once a round
                assert len({orders[t][i] for t in group}) == n
        start += size


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 8), st.integers(1, 7), st.integers(0, 2**32))
def test_fewer_deals_than_tables_spread_the_tables_evenly(n, deals, seed):
    if deals >= n:
        return
    tables, orders = _blocks(n, 1, deals, seed)
    validate_deal_orders(orders, tables[0], deals)
    for i in range(deals):
        counts = Counter(orders[t][i] for t in tables[0])
        assert max(counts.values()) - min(counts.values()) <= 1 and len(counts) == deals


def test_block_sizes():
    assert block_sizes(6, 12) == [6, 6]
    assert block_sizes(6, 16) == [6, 10]
    assert block_sizes(6, 6) == [6]
    assert block_sizes(6, 4) == [4]
    assert block_sizes(4, 15) == [4, 4, 7]


def test_blocks_are_reproducible_from_the_generator_and_differ_between_seeds():
    a = block_deal_orders([[1, 2, 3]], [range(1, 7)], random.Random("x"))
    assert a == block_deal_orders([[1, 2, 3]], [range(1, 7)], random.Random("x"))
    seen = {
        tuple(block_deal_orders([[1, 2, 3]], [range(1, 7)], random.Random(s)).values())
        for s in range(20)
    }
    assert len(seen) > 15


def test_every_table_meets_every_deal_in_every_round_across_seeds():
    """Uniformity sanity: over many seeds each (table, round) holds each deal about equally."""
    n, deals, runs = 3, 6, 800
    counts: Counter[tuple[int, int, int]] = Counter()
    rng = random.Random(23)
    for _ in range(runs):
        orders = block_deal_orders([[1, 2, 3]], [range(1, deals + 1)], rng)
        for table, order in orders.items():
            for i, deal in enumerate(order):
                counts[(table, i, deal)] += 1
    assert len(counts) == n * deals * deals  # every pairing occurs
    expected = runs / deals
    assert all(abs(c - expected) < 0.3 * expected for c in counts.values())


def test_groups_of_one_size_share_the_blocks_groups_of_another_size_do_not_need_to():
    orders = block_deal_orders([[1, 2, 3], [4, 5, 6]], [range(1, 7)], random.Random(5))
    assert {frozenset(o[:3]) for o in orders.values()} == {frozenset(orders[1][:3])}
    assert orders[1] != orders[4] or orders[2] != orders[5]  # squares of their own


def test_sessions_are_blocked_one_after_the_other():
    orders = block_deal_orders([[1, 2]], [range(1, 5), range(5, 9)], random.Random(1))
    for order in orders.values():
        assert sorted(order[:4]) == [1, 2, 3, 4] and sorted(order[4:]) == [5, 6, 7, 8]
    assert deal_clashes(orders, [[1, 2]]) == []
    staged = stage_block_orders(
        [[1, 2], [3, 4]],
        {1: [range(1, 3)], 2: [range(1, 3)], 3: [range(3, 5)], 4: [range(3, 5)]},
        random.Random(2),
    )
    assert sorted(staged[1]) == [1, 2] and sorted(staged[3]) == [3, 4]
    assert deal_clashes(staged, [[1, 2], [3, 4]]) == []


def test_clashes_name_round_deal_and_tables():
    orders = {1: (1, 2, 3), 2: (1, 3, 2), 3: (2, 3, 1), 4: (1, 2, 3)}
    assert deal_clashes(orders, [[1, 2, 3], [4]]) == [(1, 1, (1, 2)), (2, 3, (2, 3))]
    assert clash_text(1, 6, (1, 2)) == "tables 1 and 2 both play deal 6 in round 1"
    assert clash_text(3, 4, (1, 2, 5)) == "tables 1, 2 and 5 all play deal 4 in round 3"
    assert deal_clashes(orders, [[1], [2], [3, 4]]) == []  # only within a group
