"""Property tests: the incremental scoreboard always equals a full recompute of its results."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hub.domain.scoring import VIEWS, Scoreboard, ScoringLayout, full_recompute

Result = dict[int, int] | None
Op = tuple[str, int, int, Result]  # ("set" | "check", table, deal, result)


@st.composite
def layouts(draw: st.DrawFn) -> ScoringLayout:
    """1-3 groups of 1-4 tables, 2-4 seats; teams seated cyclically within each group."""
    seats = draw(st.integers(2, 4))
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    groups: dict[str, tuple[int, ...]] = {}
    holder: dict[tuple[int, int], str] = {}
    players: dict[tuple[int, int], str] = {}
    table = 0
    for g, size in enumerate(sizes):
        tables = tuple(range(table + 1, table + size + 1))
        table += size
        groups[f"G{g}"] = tables
        for i, t in enumerate(tables):
            for seat in range(1, seats + 1):
                team = f"G{g}T{(i + seat) % size}"
                holder[(t, seat)] = team
                players[(t, seat)] = f"{team}s{seat}"
    return ScoringLayout(groups=groups, seats=seats, holder=holder, players=players)


def zero_sum(seats: int) -> st.SearchStrategy[dict[int, int]]:
    """A hand result: seats - 1 small chip-scores and one that balances them (or a void)."""
    void = st.just(dict.fromkeys(range(1, seats + 1), 0))
    played = st.lists(st.integers(-40, 40), min_size=seats - 1, max_size=seats - 1).map(
        lambda xs: {**{s: x for s, x in enumerate(xs, start=1)}, seats: -sum(xs)}
    )
    return st.one_of(void, played)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[ScoringLayout, list[Op]]:
    layout = draw(layouts())
    tables = [t for ts in layout.groups.values() for t in ts]
    op = st.tuples(
        st.sampled_from(["set", "set", "set", "remove", "check"]),
        st.sampled_from(tables),
        st.integers(1, 3),  # few deals, so that deals often complete, reopen and re-complete
        zero_sum(layout.seats),
    ).map(lambda o: (o[0], o[1], o[2], None if o[0] == "remove" else o[3]))
    return layout, draw(st.lists(op, max_size=40))


def assert_same_as_recompute(
    board: Scoreboard, model: dict[tuple[int, int], dict[int, int]]
) -> None:
    assert board.results() == model
    oracle = full_recompute(board.layout, model)
    assert board.as_dict() == oracle.as_dict()
    for group in board.layout.groups:
        assert board.completed_deals(group) == oracle.completed_deals(group)
        for view in VIEWS:
            assert board.counted(view, group) == oracle.counted(view, group)


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_incremental_equals_full_recompute(scenario: tuple[ScoringLayout, list[Op]]) -> None:
    layout, ops = scenario
    board = Scoreboard(layout)
    model: dict[tuple[int, int], dict[int, int]] = {}
    for kind, table, deal, result in ops:
        if kind == "check":  # reads in between fill the caches that later writes must drop
            assert_same_as_recompute(board, model)
            continue
        board.set_result(table, deal, result)
        if result is None:
            model.pop((table, deal), None)
        else:
            model[(table, deal)] = result
    assert_same_as_recompute(board, model)
    check_points(board)


@settings(max_examples=100, deadline=None)
@given(scenarios())
def test_recomputed_board_keeps_working_incrementally(
    scenario: tuple[ScoringLayout, list[Op]],
) -> None:
    layout, ops = scenario
    half = len(ops) // 2
    model: dict[tuple[int, int], dict[int, int]] = {}
    for kind, table, deal, result in ops[:half]:
        if kind != "check":
            if result is None:
                model.pop((table, deal), None)
            else:
                model[(table, deal)] = result
    board = full_recompute(layout, model)
    for kind, table, deal, result in ops[half:]:
        if kind != "check":
            board.set_result(table, deal, result)
            if result is None:
                model.pop((table, deal), None)
            else:
                model[(table, deal)] = result
    assert_same_as_recompute(board, model)


def check_points(board: Scoreboard) -> None:
    """Points re-derived independently of the ranking code, and the totals they must reach."""
    seats = board.layout.seats
    for view in VIEWS:
        for block in board.seats(view):
            n = len(block.rows)
            assert sum(row.points for row in block.rows) == Fraction(n * (n + 1), 2)
            for row in block.rows:
                better = sum(other.chips > row.chips for other in block.rows)
                tied = sum(other.chips == row.chips for other in block.rows)  # row included
                # Places better+1 .. better+tied share their points equally.
                assert row.points == n - better - Fraction(tied - 1, 2)
                assert row.rank == better + 1
        by_group: dict[str, list[Any]] = {}
        for team in board.standings(view):
            by_group.setdefault(team.group, []).append(team)
        for group, rows in by_group.items():
            n = len(board.layout.groups[group])
            assert sum(row.points for row in rows) == seats * Fraction(n * (n + 1), 2)
            for row in rows:
                better = sum((o.points, o.chips) > (row.points, row.chips) for o in rows)
                assert row.rank == better + 1
