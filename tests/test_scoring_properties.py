"""Property tests: the incremental scoreboard always equals a full recompute of its results, in
every scoring format, and each format's totals match a plain re-derivation."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hub.domain.imp import ImpScale
from hub.domain.scoring import (
    VIEWS,
    Scoreboard,
    ScoringFormat,
    ScoringLayout,
    SeatStanding,
    full_recompute,
)

Result = dict[int, int] | None
Op = tuple[str, int, int, Result]  # ("set" | "check", table, deal, result)


# A scale with small steps, so that the small chip-scores below move IMPs often.
FINE = ImpScale(((Fraction(1), 1), (Fraction(5, 2), 2), (Fraction(6), 3), (Fraction(15), 4)))
FORMATS = [
    ScoringFormat(),
    ScoringFormat(name="imp"),
    ScoringFormat(name="imp", unit=3, unit_name="3 chips", scale=FINE),
    ScoringFormat(name="chips"),
]


@st.composite
def layouts(draw: st.DrawFn, formats: list[ScoringFormat] = FORMATS[:1]) -> ScoringLayout:
    """1-3 groups of 1-4 tables, 2-4 seats; teams seated cyclically within each group."""
    scoring = draw(st.sampled_from(formats))
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
    return ScoringLayout(
        groups=groups, seats=seats, holder=holder, players=players, scoring=scoring
    )


def zero_sum(seats: int) -> st.SearchStrategy[dict[int, int]]:
    """A hand result: seats - 1 small chip-scores and one that balances them (or a void)."""
    void = st.just(dict.fromkeys(range(1, seats + 1), 0))
    played = st.lists(st.integers(-40, 40), min_size=seats - 1, max_size=seats - 1).map(
        lambda xs: {**{s: x for s, x in enumerate(xs, start=1)}, seats: -sum(xs)}
    )
    return st.one_of(void, played)


@st.composite
def scenarios(
    draw: st.DrawFn, formats: list[ScoringFormat] = FORMATS[:1]
) -> tuple[ScoringLayout, list[Op]]:
    layout = draw(layouts(formats))
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


Model = dict[tuple[int, int], dict[int, int]]


def play(board: Scoreboard, ops: list[Op]) -> Model:
    model: Model = {}
    for kind, table, deal, result in ops:
        if kind == "check":
            assert_same_as_recompute(board, model)
            continue
        board.set_result(table, deal, result)
        if result is None:
            model.pop((table, deal), None)
        else:
            model[(table, deal)] = result
    return model


@settings(max_examples=200, deadline=None)
@given(scenarios(FORMATS[1:]))
def test_imp_and_chips_incremental_equals_full_recompute(
    scenario: tuple[ScoringLayout, list[Op]],
) -> None:
    layout, ops = scenario
    board = Scoreboard(layout)
    model = play(board, ops)
    assert_same_as_recompute(board, model)
    if layout.scoring.name == "imp":
        check_imps(board, model)
    else:
        check_chips(board)


@settings(max_examples=100, deadline=None)
@given(scenarios(FORMATS[1:]))
def test_imp_and_chips_recomputed_board_keeps_working_incrementally(
    scenario: tuple[ScoringLayout, list[Op]],
) -> None:
    layout, ops = scenario
    half = len(ops) // 2
    model = play(Scoreboard(layout), [op for op in ops[:half] if op[0] != "check"])
    board = full_recompute(layout, model)
    for _kind, table, deal, result in ops[half:]:
        board.set_result(table, deal, result)
        if result is None:
            model.pop((table, deal), None)
        else:
            model[(table, deal)] = result
    assert_same_as_recompute(board, model)


def check_imps(board: Scoreboard, model: Model) -> None:
    """IMP totals re-derived from the results with the definition: each counted (table, deal)
    against the average of the same seat at the group's other tables that counted the deal
    (like-for-like: complete deals only), in the format's unit, through its scale."""
    scoring = board.layout.scoring
    for view in VIEWS:
        expected: dict[tuple[int, int], int] = {}
        for tables in board.layout.groups.values():
            deals = {deal for (table, deal) in model if table in tables}
            for deal in deals:
                counted = [t for t in tables if (t, deal) in model]
                if view == "like_for_like" and len(counted) < len(tables):
                    continue
                for t in counted:
                    for seat, chips in model[(t, deal)].items():
                        others = [model[(o, deal)][seat] for o in counted if o != t]
                        imps = 0
                        if others:
                            average = Fraction(sum(others), len(others))
                            imps = scoring.scale.imps((chips - average) / scoring.unit)
                        expected[(t, seat)] = expected.get((t, seat), 0) + imps
        for block in board.seats(view):
            for row in block.rows:
                assert row.imps == expected.get((row.table, block.seat), 0)
                assert row.points is None
                assert row.rank == 1 + sum(o.imps > row.imps for o in block.rows)  # type: ignore[operator]
        check_teams(board, view, "imps")


def check_chips(board: Scoreboard) -> None:
    for view in VIEWS:
        for block in board.seats(view):
            for row in block.rows:
                assert row.points is None and row.imps is None
                assert row.rank == 1 + sum(o.chips > row.chips for o in block.rows)
        check_teams(board, view, "chips")


def check_teams(board: Scoreboard, view: str, column: str) -> None:
    """A team's total is the sum of its players' rows; teams rank by it, then by chips."""
    totals: dict[str, list[int]] = {}
    for block in board.seats(view):  # type: ignore[arg-type]
        for row in block.rows:
            total = totals.setdefault(row.team, [0, 0])
            total[0] += getattr(row, column)
            total[1] += row.chips
    rows = board.standings(view)  # type: ignore[arg-type]
    assert {row.team: [getattr(row, column), row.chips] for row in rows} == totals
    for row in rows:
        mine = (getattr(row, column), row.chips)
        better = sum((getattr(o, column), o.chips) > mine for o in rows if o.group == row.group)
        assert row.rank == better + 1


Shown = tuple[Any, ...]


def shown(board: Scoreboard, group: str) -> Shown:
    """What a reader of one group takes from the board: its rankings, its completed deals."""
    seats = range(1, board.layout.seats + 1)
    return (
        *(board.group_standings(view, group) for view in VIEWS),
        *(board.seat_standing(view, group, s) for view in VIEWS for s in seats),
        board.completed_deals(group),
    )


def rows_by_holder(ranking: Any) -> list[tuple[Any, Any]]:
    """A seat ranking's rows by table, a group's team rows by team."""
    if isinstance(ranking, SeatStanding):
        return [(row.table, row) for row in ranking.rows]
    return [(row.team, row) for row in ranking]


PENALTY_POINTS = [0, 1, Fraction(1, 2), Fraction(1, 3)]  # (a third: no longer in halves)


@settings(max_examples=200, deadline=None)
@given(scenarios(FORMATS), st.data())
def test_the_groups_a_board_says_moved_are_every_group_that_moved(
    scenario: tuple[ScoringLayout, list[Op]], data: st.DataObject
) -> None:
    """Readers (the standings model, the projection) read only the groups ``moved_since``
    names and compare rankings and rows by identity: a group it leaves out shows the very
    same objects as before, and a ranking made again keeps each row that did not move."""
    layout, ops = scenario
    board = Scoreboard(layout)
    model: Model = {}
    penalties: list[tuple[int, int, int, int | Fraction]] = []
    stamp = 0
    seen = {group: shown(board, group) for group in layout.groups}
    for kind, table, deal, result in ops:
        if kind == "check":  # a penalty, this time
            seat = data.draw(st.integers(1, layout.seats))
            chips = data.draw(st.integers(0, 30))
            points = data.draw(st.sampled_from(PENALTY_POINTS))
            if layout.scoring.name != "ifp-points":
                points = int(points)
            board.add_penalty(table, seat, chips, points)
            penalties.append((table, seat, chips, points))
        else:
            board.set_result(table, deal, result)
            if result is None:
                model.pop((table, deal), None)
            else:
                model[(table, deal)] = result
        moved, stamp = board.moved_since(stamp)
        assert len(set(moved)) == len(moved)
        for group in layout.groups:
            before, now = seen[group], shown(board, group)
            if group not in moved:  # the same rankings (objects), the same deals complete
                assert all(a is b for a, b in zip(before[:-1], now[:-1], strict=True)), group
                assert before[-1] == now[-1]
            for old, new in zip(before[:-1], now[:-1], strict=True):  # rows that stood
                kept = dict(rows_by_holder(old))
                for at, row in rows_by_holder(new):
                    assert kept[at] is row or kept[at] != row
            seen[group] = now
    oracle = full_recompute(layout, model, penalties)  # type: ignore[arg-type]
    assert board.as_dict() == oracle.as_dict()
    if layout.scoring.name == "ifp-points":  # a team's points: its players', summed plainly
        for view in VIEWS:
            for group in layout.groups:
                for team in board.group_standings(view, group):
                    rows = [
                        row
                        for s in range(1, layout.seats + 1)
                        for row in board.seat_standing(view, group, s).rows
                        if row.team == team.team
                    ]
                    assert team.points == sum((row.points for row in rows), Fraction(0))
                    assert team.chips == sum(row.chips for row in rows)


@settings(max_examples=100, deadline=None)
@given(scenarios(FORMATS))
def test_a_hands_points_add_up_to_the_seat_rankings(
    scenario: tuple[ScoringLayout, list[Op]],
) -> None:
    """``deal_points`` (a traveller row's ``points``): each counted hand's IMPs (or chips),
    summed over the deals a view counts, is the seat's total in that view's ranking, and the
    same as a board built from scratch says; under IFP points there is none (per session)."""
    layout, ops = scenario
    board = Scoreboard(layout)
    model = play(board, [op for op in ops if op[0] != "check"])
    oracle = full_recompute(layout, model)
    column = layout.scoring.column
    for table, deal in model:
        assert board.deal_points(table, deal) == oracle.deal_points(table, deal)
    if column == "points":
        assert all(board.deal_points(t, d) is None for t, d in model)
        return
    for view in VIEWS:
        summed: dict[tuple[int, int], int] = {}
        for group, tables in layout.groups.items():
            for table in tables:
                for deal in range(1, 4):
                    scored = board.deal_points(table, deal)
                    if scored is None:
                        assert (table, deal) not in model
                        continue
                    if view == "like_for_like" and not board.deal_complete(group, deal):
                        continue
                    for seat, value in scored.items():
                        summed[(table, seat)] = summed.get((table, seat), 0) + value
        for block in board.seats(view):
            for row in block.rows:
                assert getattr(row, column) == summed.get((row.table, block.seat), 0)


def team_ranking_by_plain_sums(board: Scoreboard, view: str, group: str) -> list[Any]:
    """A group's teams ranked from scratch, independently of the board's ranking code: each
    team's points and chips summed plainly over its players' seat rows (less its players'
    penalties, already in the rows), ordered by points then chips (down), then team id;
    equal points and chips share the rank of the first."""
    sums: dict[str, list[Any]] = {}
    for seat in range(1, board.layout.seats + 1):
        for row in board.seat_standing(view, group, seat).rows:  # type: ignore[arg-type]
            total = sums.setdefault(row.team, [Fraction(0), 0])
            total[0] += row.points
            total[1] += row.chips
    order = sorted(sums, key=lambda team: (-sums[team][0], -sums[team][1], team))
    ranked = []
    for i, team in enumerate(order):
        points, chips = sums[team]
        tied = [t for t in order[:i] if sums[t] == sums[team]]
        rank = order.index(tied[0]) + 1 if tied else i + 1
        ranked.append((team, rank, points, chips))
    return ranked


@settings(max_examples=300, deadline=None)
@given(scenarios(), st.data())
def test_the_incremental_team_ranking_equals_a_full_recompute_after_every_event(
    scenario: tuple[ScoringLayout, list[Op]], data: st.DataObject
) -> None:
    """Under IFP points a group's team ranking moves by the seat rankings made again (their
    teams' sums out and in, ``Scoreboard._rank_teams_ifp``): after every result set or
    removed (a hand, a projected hand taken back), read at once or after several moves, it
    equals the ranking summed from scratch (the board's general path and plain sums, ties
    broken alike), and a full recompute's; a penalty (here and there) leaves the incremental
    path for the general one."""
    layout, ops = scenario
    board = Scoreboard(layout)
    model: Model = {}
    penalties: list[tuple[int, int, int, int]] = []
    for kind, table, deal, result in ops:
        if kind == "check" and data.draw(st.integers(0, 3)) == 0:
            seat = data.draw(st.integers(1, layout.seats))
            chips, points = data.draw(st.integers(0, 30)), data.draw(st.integers(0, 2))
            board.add_penalty(table, seat, chips, points)
            penalties.append((table, seat, chips, points))
        elif kind != "check":
            board.set_result(table, deal, result)
            if result is None:
                model.pop((table, deal), None)
            else:
                model[(table, deal)] = result
        if not data.draw(st.booleans()):  # (not read: the next read takes several moves)
            continue
        oracle = full_recompute(layout, model, penalties)
        for view in VIEWS:
            for group in layout.groups:
                teams = board.group_standings(view, group)
                seats = [board.seat_standing(view, group, s) for s in range(1, layout.seats + 1)]
                assert teams == board._rank_teams(group, seats, None)
                assert teams == oracle.group_standings(view, group)
                assert [(t.team, t.rank, t.points, t.chips) for t in teams] == (
                    team_ranking_by_plain_sums(board, view, group)
                )
                assert all(t.group == group and t.imps is None for t in teams)
