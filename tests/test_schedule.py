import random
import re

import pytest

from hub.domain.schedule import (
    ScheduleError,
    default_buttons,
    random_deal_orders,
    sequential_deal_orders,
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
