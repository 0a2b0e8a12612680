"""A table's bookkeeping the payloads read at every rebuild (``hub.engine.hands.TableState``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hub.engine.hands import TableState

# (deal order of the table, the finish time of each deal played: None while in play)
orders = st.lists(st.integers(1, 40), unique=True, max_size=10)
finishes = st.one_of(st.none(), st.sampled_from([0.0, 1.0, 2.0]), st.floats(0, 5))


@given(orders, st.data())
def test_last_finished_is_the_latest_finish_then_the_later_in_the_order(
    order: list[int], data: Any
) -> None:
    table = TableState(1, "G", tuple(order))
    for deal in data.draw(st.lists(st.sampled_from(order), unique=True)) if order else []:
        table.hands[deal] = SimpleNamespace(deal=deal, finished_at=data.draw(finishes))
    done = [h for h in table.hands.values() if h.finished_at is not None]
    expected = (
        max(done, key=lambda h: (h.finished_at, table.order.index(h.deal))).deal if done else None
    )
    assert table.last_finished == expected
