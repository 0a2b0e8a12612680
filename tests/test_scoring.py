"""IFP scoring: worked examples computed by hand, like-for-like bookkeeping, locality of changes."""

from __future__ import annotations

import json
from fractions import Fraction
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.domain.scoring import (
    Scoreboard,
    ScoringLayout,
    View,
    full_recompute,
    ifp_ranking,
    json_number,
)


def cyclic_layout(groups: dict[str, tuple[int, ...]], seats: int) -> ScoringLayout:
    """Team k of a group sits at its table i, seat s when k = (i + s) mod N (0-based)."""
    holder: dict[tuple[int, int], str] = {}
    players: dict[tuple[int, int], str] = {}
    for group, tables in groups.items():
        n = len(tables)
        for i, table in enumerate(tables):
            for seat in range(1, seats + 1):
                team = f"{group}{(i + seat - 1) % n}"
                holder[(table, seat)] = team
                players[(table, seat)] = f"{team}@{table}"
    return ScoringLayout(groups=groups, seats=seats, holder=holder, players=players)


# Three tables, three seats, teams A B C (cyclic):
#   table 1: seat 1 A, seat 2 B, seat 3 C
#   table 2: seat 1 B, seat 2 C, seat 3 A
#   table 3: seat 1 C, seat 2 A, seat 3 B
ABC = ScoringLayout(
    groups={"g": (1, 2, 3)},
    seats=3,
    holder={(t, s): "ABC"[(t + s - 2) % 3] for t in (1, 2, 3) for s in (1, 2, 3)},
    players={(t, s): f"{'ABC'[(t + s - 2) % 3]}{t}" for t in (1, 2, 3) for s in (1, 2, 3)},
)


def seat_rows(
    board: Scoreboard, view: View, group: str, seat: int
) -> dict[int, tuple[int, Fraction, int]]:
    """table -> (chips, points, rank) of one seat ranking."""
    standing = board.seat_standing(view, group, seat)
    return {row.table: (row.chips, row.points, row.rank) for row in standing.rows}


def teams(board: Scoreboard, view: View = "running") -> dict[str, tuple[object, ...]]:
    """team -> (rank, points, chips)."""
    return {row.team: (row.rank, row.points, row.chips) for row in board.standings(view)}


def two_seat_board(seat1_chips: list[int]) -> Scoreboard:
    """Six tables, two seats, one hand each: seat 1 scores the given chips, seat 2 the opposite."""
    board = Scoreboard(cyclic_layout({"g": (1, 2, 3, 4, 5, 6)}, seats=2))
    for table, chips in enumerate(seat1_chips, start=1):
        board.set_result(table, 1, {1: chips, 2: -chips})
    return board


def test_two_tied_first_of_six_share_five_and_a_half() -> None:
    # Places 1 and 2 are worth 6 and 5: the two tied leaders get (6 + 5) / 2 = 5.5 each and rank
    # 1; the next player is 3rd (two are strictly better) with 4 points, then 3, 2, 1.
    board = two_seat_board([100, 100, 0, -50, -70, -80])
    assert seat_rows(board, "running", "g", 1) == {
        1: (100, Fraction(11, 2), 1),
        2: (100, Fraction(11, 2), 1),
        3: (0, Fraction(4), 3),
        4: (-50, Fraction(3), 4),
        5: (-70, Fraction(2), 5),
        6: (-80, Fraction(1), 6),
    }
    # Seat 2 is the mirror image: the two tied players are now last, sharing (2 + 1) / 2.
    assert seat_rows(board, "running", "g", 2)[1] == (-100, Fraction(3, 2), 5)
    assert [row.table for row in board.seat_standing("running", "g", 1).rows] == [1, 2, 3, 4, 5, 6]


def test_three_way_tie_and_a_tie_for_last() -> None:
    # Three tied on top occupy places 1..3: (6 + 5 + 4) / 3 = 5 each, rank 1. Table 4 is 4th
    # (3 points). Tables 5 and 6 share places 5 and 6: (2 + 1) / 2 = 1.5 each, rank 5.
    board = two_seat_board([40, 40, 40, -20, -50, -50])
    assert seat_rows(board, "running", "g", 1) == {
        1: (40, Fraction(5), 1),
        2: (40, Fraction(5), 1),
        3: (40, Fraction(5), 1),
        4: (-20, Fraction(3), 4),
        5: (-50, Fraction(3, 2), 5),
        6: (-50, Fraction(3, 2), 5),
    }


def test_each_seat_hands_out_n_times_n_plus_one_over_two() -> None:
    for chips in (
        [100, 100, 0, -50, -70, -80],
        [40, 40, 40, -20, -50, -50],
        [0] * 6,
        [5, 4, 3, 2, 1, 0],
    ):
        board = two_seat_board(chips)
        for standing in board.seats("running"):
            assert sum(row.points for row in standing.rows) == 21  # 6 * 7 / 2


def test_ifp_ranking_everyone_tied_share_the_middle() -> None:
    assert ifp_ranking({1: 0, 2: 0, 3: 0, 4: 0}) == [
        (k, 0, Fraction(5, 2), 1) for k in (1, 2, 3, 4)
    ]
    assert ifp_ranking({}) == []


def test_team_tie_on_points_broken_by_aggregate_chips() -> None:
    # Seat 1: A(t1) -30, B(t2) -30, C(t3) -20 -> C 3; A and B share places 2-3: 1.5 each.
    # Seat 2: B(t1)   0, C(t2)   0, A(t3) +20 -> A 3; B and C share 1.5 each.
    # Seat 3: C(t1) +30, A(t2) +30, B(t3)   0 -> C and A share places 1-2: 2.5 each; B 1.
    # Points: A 1.5 + 3 + 2.5 = 7, C 3 + 1.5 + 2.5 = 7, B 1.5 + 1.5 + 1 = 4.
    # Chips:  A -30 + 20 + 30 = 20, C -20 + 0 + 30 = 10, B -30 + 0 + 0 = -30: A ahead of C.
    board = Scoreboard(ABC)
    board.set_result(1, 1, {1: -30, 2: 0, 3: 30})
    board.set_result(2, 1, {1: -30, 2: 0, 3: 30})
    board.set_result(3, 1, {1: -20, 2: 20, 3: 0})
    assert teams(board) == {"A": (1, 7, 20), "C": (2, 7, 10), "B": (3, 4, -30)}
    assert [row.team for row in board.standings("running")] == ["A", "C", "B"]


def test_three_teams_level_on_points_ordered_by_chips() -> None:
    # No seat ties here. Seat 1: A -30, B -10, C -20 -> B 3, C 2, A 1.
    # Seat 2: B 0, C -10, A 20 -> A 3, B 2, C 1. Seat 3: C 30, A 20, B 0 -> C 3, A 2, B 1.
    # Everyone has 6 points; chips A -30 + 20 + 20 = 10, C -20 - 10 + 30 = 0, B -10 + 0 + 0 = -10.
    board = Scoreboard(ABC)
    board.set_result(1, 1, {1: -30, 2: 0, 3: 30})
    board.set_result(2, 1, {1: -10, 2: -10, 3: 20})
    board.set_result(3, 1, {1: -20, 2: 20, 3: 0})
    assert teams(board) == {"A": (1, 6, 10), "C": (2, 6, 0), "B": (3, 6, -10)}


def test_full_tie_shares_the_rank() -> None:
    # As in the chips tie-break above but table 3 is {-20, 10, 10}: seat 2 is now A 10 -> still
    # A 3, B and C 1.5; seat 3 is C 30, A 30, B 10 -> unchanged. Points A 7, C 7, B 4.
    # Chips: A -30 + 10 + 30 = 10, C -20 + 0 + 30 = 10: A and C share rank 1; B is 3rd.
    board = Scoreboard(ABC)
    board.set_result(1, 1, {1: -30, 2: 0, 3: 30})
    board.set_result(2, 1, {1: -30, 2: 0, 3: 30})
    board.set_result(3, 1, {1: -20, 2: 10, 3: 10})
    assert teams(board) == {"A": (1, 7, 10), "C": (1, 7, 10), "B": (3, 4, -20)}
    assert [row.team for row in board.standings("running")] == ["A", "C", "B"]  # then by id


def test_like_for_like_waits_for_every_table_of_the_deal() -> None:
    board = Scoreboard(ABC)
    # Before anything counts, every player ties at 0: (3 + 2 + 1) / 3 = 2 points per seat.
    assert teams(board, "like_for_like") == {t: (1, 6, 0) for t in "ABC"}
    board.set_result(1, 1, {1: -30, 2: 0, 3: 30})
    board.set_result(2, 1, {1: -30, 2: 0, 3: 30})
    board.set_result(1, 2, {1: 50, 2: -25, 3: -25})
    # Deal 1 is not finished at table 3: it counts in running, not in like-for-like.
    assert board.completed_deals("g") == frozenset()
    assert not board.deal_complete("g", 1)
    assert board.counted("running", "g") == 3
    assert board.counted("like_for_like", "g") == 0
    assert teams(board, "like_for_like") == {t: (1, 6, 0) for t in "ABC"}
    assert seat_rows(board, "running", "g", 1)[1] == (20, Fraction(3), 1)

    # Table 3 finishes deal 1: like-for-like now holds deal 1 at all three tables (not deal 2).
    board.set_result(3, 1, {1: -20, 2: 20, 3: 0})
    assert board.completed_deals("g") == frozenset({1})
    assert board.counted("like_for_like", "g") == 3
    assert teams(board, "like_for_like") == {"A": (1, 7, 20), "C": (2, 7, 10), "B": (3, 4, -30)}

    # A correction at table 2 while the deal is complete is applied as a difference.
    board.set_result(2, 1, {1: -10, 2: -10, 3: 20})
    assert teams(board, "like_for_like") == {"A": (1, 6, 10), "C": (2, 6, 0), "B": (3, 6, -10)}

    # Table 3 reopens deal 1: the whole deal leaves like-for-like again.
    board.set_result(3, 1, None)
    assert board.completed_deals("g") == frozenset()
    assert board.result(3, 1) is None
    assert teams(board, "like_for_like") == {t: (1, 6, 0) for t in "ABC"}
    assert board.as_dict() == full_recompute(ABC, board.results()).as_dict()


def test_void_hand_counts_towards_completion() -> None:
    board = Scoreboard(ABC)
    for table in (1, 2, 3):
        board.set_result(table, 7, {1: 0, 2: 0, 3: 0})
    assert board.completed_deals("g") == frozenset({7})
    assert teams(board, "like_for_like") == {t: (1, 6, 0) for t in "ABC"}


def test_setting_the_same_deal_again_replaces_it() -> None:
    board = Scoreboard(ABC)
    board.set_result(1, 1, {1: 10, 2: -10})  # seat 3 left out: scores 0
    board.set_result(1, 1, {1: -5, 2: 5, 3: 0})
    assert board.result(1, 1) == {1: -5, 2: 5, 3: 0}
    assert seat_rows(board, "running", "g", 1)[1][0] == -5
    assert board.counted("running", "g") == 1
    board.set_result(1, 1, None)
    board.set_result(1, 1, None)  # removing what is not counted changes nothing
    assert board.counted("running", "g") == 0
    assert board.as_dict() == Scoreboard(ABC).as_dict()


def test_as_dict_is_json_with_exact_numbers() -> None:
    board = two_seat_board([100, 100, 0, -50, -70, -80])
    data = json.loads(json.dumps(board.as_dict()))
    assert set(data) == {"running", "like_for_like"}
    seat1 = data["running"]["seats"][0]
    assert seat1["group"] == "g" and seat1["seat"] == 1
    assert seat1["rows"][0] == {
        "table": 1,
        "team": "g0",
        "player": "g0@1",
        "chips": 100,
        "points": 5.5,
        "rank": 1,
    }
    assert seat1["rows"][2]["points"] == 4 and isinstance(seat1["rows"][2]["points"], int)
    assert set(data["running"]["teams"][0]) == {"group", "team", "rank", "points", "chips"}
    assert json_number(Fraction(1, 3)) == 0.3333


def test_standings_sorted_by_group_then_rank_then_team() -> None:
    layout = cyclic_layout({"x": (1, 2), "y": (3, 4)}, seats=2)
    board = Scoreboard(layout)
    board.set_result(4, 1, {1: 10, 2: -10})
    rows = [(r.group, r.rank, r.team) for r in board.standings("running")]
    # Group x has no result: its teams tie and go by id. In y, table 4 gave seat 1 (team y1) +10
    # and seat 2 (team y0) -10, so y1 wins both seats: rank goes before team id.
    assert rows == [("x", 1, "x0"), ("x", 1, "x1"), ("y", 1, "y1"), ("y", 2, "y0")]
    assert [(s.group, s.seat) for s in board.seats("running")] == [
        ("x", 1),
        ("x", 2),
        ("y", 1),
        ("y", 2),
    ]


def test_bad_input_is_refused_without_change() -> None:
    board = Scoreboard(ABC)
    with pytest.raises(ValueError, match="table 9"):
        board.set_result(9, 1, {1: 0})
    with pytest.raises(ValueError, match="no seat 4"):
        board.set_result(1, 1, {4: 0})
    with pytest.raises(ValueError, match="not an integer"):
        board.set_result(1, 1, {1: 1.5})  # type: ignore[dict-item]
    assert board.results() == {}


def test_layout_validation() -> None:
    with pytest.raises(ValueError, match="no holder"):
        ScoringLayout(groups={"g": (1,)}, seats=2, holder={(1, 1): "A"}, players={(1, 1): "a"})
    with pytest.raises(ValueError, match="groups"):
        ScoringLayout(
            groups={"g": (1,), "h": (1,)}, seats=1, holder={(1, 1): "A"}, players={(1, 1): "a"}
        )
    with pytest.raises(ValueError, match="no tables"):
        ScoringLayout(groups={"g": ()}, seats=1, holder={}, players={})


def test_layout_from_a_config_by_duck_typing() -> None:
    teams_ = {name: SimpleNamespace(id=name) for name in "ABC"}

    def seat_holder(table: int, seat: int) -> tuple[SimpleNamespace, str]:
        team = "ABC"[(table + seat - 2) % 3]
        return teams_[team], f"{team}{table}"

    config = SimpleNamespace(
        groups={"g": SimpleNamespace(tables=(1, 2, 3))}, seats=3, seat_holder=seat_holder
    )
    assert ScoringLayout.from_config(config) == ABC
    as_list = SimpleNamespace(
        groups=[SimpleNamespace(id="g", tables=[1, 2, 3])], seats=3, seat_holder=seat_holder
    )
    assert ScoringLayout.from_config(as_list) == ABC


def test_a_change_recomputes_only_its_own_group() -> None:
    groups = {f"g{k}": tuple(range(6 * k + 1, 6 * k + 7)) for k in range(10)}
    board = Scoreboard(cyclic_layout(groups, seats=6))
    board.as_dict()
    assert board.rankings_computed == 10 * 6 * 2  # every (view, group, seat), once
    before = {g: board.group_standings("running", g) for g in groups}

    board.set_result(13, 1, {1: 30, 2: -30, 3: 0, 4: 0, 5: 0, 6: 0})  # group g2
    board.as_dict()
    # Only the running rankings of seats 1 and 2 of g2 changed; deal 1 is not complete.
    assert board.rankings_computed == 120 + 2
    for g in groups:
        unchanged = board.group_standings("running", g) is before[g]
        assert unchanged == (g != "g2")

    for table in range(14, 19):  # the rest of g2 plays deal 1: like-for-like takes it in
        board.set_result(table, 1, {1: 30, 2: -30, 3: 0, 4: 0, 5: 0, 6: 0})
    computed = board.rankings_computed
    board.as_dict()
    assert board.rankings_computed == computed + 4  # seats 1 and 2 of g2, in both views
    assert board.completed_deals("g2") == frozenset({1})


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(-3, 3), min_size=6, max_size=6),  # seat 1's chips, deal by deal
        min_size=1,
        max_size=5,
    )
)
def test_a_seat_ranking_moved_in_place_is_ifp_ranking_of_its_totals(
    deals: list[list[int]],
) -> None:
    """The seat ranking the board keeps as results come and go (its rows reused where they
    stand) is ``ifp_ranking`` of the seat's totals after every result: order, chips, shared
    points (ties, small totals so there are many) and ranks."""
    board = two_seat_board([0] * 6)
    for deal, chips in enumerate(deals, start=2):
        for table, c in enumerate(chips, start=1):
            board.set_result(table, deal, {1: c, 2: -c})
            totals = {t: sum(d[t - 1] for d in deals[: deal - 1]) for t in range(1, 7)}
            for t in range(table + 1, 7):  # (not counted yet at this deal)
                totals[t] -= chips[t - 1]
            standing = board.seat_standing("running", "g", 1)
            got = [(r.table, r.chips, r.points, r.rank) for r in standing.rows]
            assert got == [tuple(row) for row in ifp_ranking(totals)]
