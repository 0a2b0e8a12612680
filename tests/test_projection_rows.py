"""The projection's standings rows moved in place: a ranking whose order changed names only the
rows that moved (removed, then added at their new place; the fewest), every other row gets
the totals it moved; the deltas, applied to the document before, give the document after."""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from fractions import Fraction
from functools import partial
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hub.domain.scoring import SeatRow, TeamStanding
from hub.engine.core import Engine
from hub.engine.families import projection
from hub.engine.families.projection import Projection, _move_rows, _named_row, _team_row
from hub.wire.patch import Recorder, apply_patch, clone
from hub.wire.topics import LIVE
from tests.test_engine_properties import run
from tests.test_projections import Client, assert_moved
from tests.test_scores_model import client_changes

_NONE = (0, Fraction(0))


def _rising(order: list[int]) -> int:
    """The length of a longest rising run of ``order`` (patience sorting)."""
    tails: list[int] = []
    for value in order:
        i = bisect_left(tails, value)
        tails[i : i + 1] = [value]
    return len(tails)


@st.composite
def rankings(draw: st.DrawFn) -> tuple[list[Any], list[Any], bool]:
    """A ranking before and after: the same members in any order, some totals, ranks and
    penalties moved (seat rows or team rows)."""
    teams = draw(st.booleans())
    n = draw(st.integers(1, 8))
    order = draw(st.permutations(range(n)))

    def row(member: int, chips: int, penalty: tuple[int, Fraction], rank: int) -> Any:
        if teams:
            return TeamStanding("A", f"T{member}", rank, Fraction(rank, 2), chips, None, penalty)
        points = Fraction(rank)
        return SeatRow(member + 1, f"T{member}", f"P{member}", chips, points, rank, None, penalty)

    was = [row(m, 100 - m, _NONE, m + 1) for m in range(n)]
    now = []
    for m in order:
        kept = draw(st.integers(0, 3))
        if kept == 0:
            now.append(was[m])  # (a row whose totals stand is the same object, moved or not)
            continue
        penalty = (100, Fraction(1)) if kept == 1 else _NONE
        now.append(row(m, draw(st.integers(-500, 500)), penalty, draw(st.integers(1, n))))
    return was, now, teams


@settings(max_examples=300, deadline=None)
@given(rankings(), st.integers(0, 3), st.integers(0, 3))
def test_a_ranking_moves_by_the_rows_that_moved(
    ranking: tuple[list[Any], list[Any], bool], before: int, after: int
) -> None:
    """Any reorder of one ranking (among other rankings' rows, as a group's teams are): the
    document becomes the new ranking's rows, the deltas applied to the old document give it,
    the rows removed are the fewest (those off a longest run that keeps its order), and no
    operation names the list or another ranking's rows."""
    was, now, teams = ranking
    info = {f"T{m}": {"name": f"Team {m}", "code": f"T{m}", "colour": "#000000"} for m in range(8)}
    whole = partial(_team_row, info=info) if teams else partial(_named_row, roster=None)
    other = [{"group": "Z", "team": f"Z{k}"} for k in range(before + after)]
    rows = [*other[:before], *map(whole, was), *other[before:]]
    doc = {"teams": rows} if teams else {"seats": [{"rows": rows}]}
    at: tuple[str | int, ...] = ("teams",) if teams else ("seats", 0, "rows")
    old = clone(doc)
    rec = Recorder(doc)
    items = doc["teams"] if teams else doc["seats"][0]["rows"]
    _move_rows(rec, items, at, before, was, now, whole)
    expected = [*other[:before], *map(whole, now), *other[before:]]
    assert items == expected
    assert apply_patch(old, json.loads(json.dumps(rec.ops))) == doc
    order = [next(j for j, w in enumerate(was) if w.team == r.team) for r in now]
    removed = [op for op in rec.ops if op["op"] == "remove"]
    assert len(removed) == len(now) - _rising(order)
    prefix = "/teams/" if teams else "/seats/0/rows/"
    for op in rec.ops:
        assert op["path"].startswith(prefix), op
        index = int(op["path"][len(prefix) :].split("/")[0])
        assert before <= index < before + len(now), op


def _reorders(changes: list[Any]) -> int:
    """How many standings rows of the projection's deltas were moved (removed and added)."""
    return sum(
        1
        for change in changes
        if change.key == (LIVE, "projection") and change.patch
        for op in change.patch
        if op["op"] == "remove" and re.fullmatch(r"/(teams/\d+|seats/\d+/rows/\d+)", op["path"])
    )


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 10_000))
def test_the_projection_moves_its_rows_after_every_event(seed: int) -> None:
    """Bots play with every correction mixed in (undo, reopen, void, wrong winners disputed
    and confirmed, penalties): after every event the projection is its builder's payload, a
    client that applied the deltas holds it too, and no delta replaces a ranking's list or a
    whole row of a player who did not move (a row moved is removed and added)."""
    client = Client()
    moved = 0

    def check(engine: Engine) -> None:
        nonlocal moved
        if not engine.projecting.projections.active:
            engine.start_feed()
            client.subscribe_all(engine)
        changes = client_changes(engine, client)
        for change in changes:
            if change.key != (LIVE, "projection") or not change.patch:
                continue
            for op in change.patch:
                path = op["path"]
                assert not re.fullmatch(r"/(teams|seats|seats/\d+|seats/\d+/rows)", path), op
                assert not re.fullmatch(r"/(teams/\d+|seats/\d+/rows/\d+)/(player|table)", path)
        moved += _reorders(changes)
        assert assert_moved(engine, client, [(LIVE, "projection")]) == 1

    run(seed, corrections_noise=True, after_each=check)
    assert moved


def test_the_builder_reads_the_board_its_mover_keeps(monkeypatch: Any) -> None:
    """The projection's builder reads its family's mover through ``Reading.mover`` (none
    before projecting starts nor once the projections are made anew: it then makes a board):
    while projecting, it makes no board of its own and gives what the open document holds."""
    engine, _ = run(3, corrections_noise=False)
    key = (LIVE, "projection")
    assert engine.payloads.mover("projection") is None
    replayed = engine.payload(key)
    engine.start_feed()
    mover = engine.payloads.mover("projection")
    assert isinstance(mover, Projection)
    doc = engine.projecting.materialize(key)

    def made(*_: Any) -> Any:
        raise AssertionError("the builder made a board while its mover keeps one")

    monkeypatch.setattr(projection, "projected_board", made)
    assert engine.payload(key) == doc == replayed
    monkeypatch.undo()
    engine.projecting.restart()
    assert engine.payloads.mover("projection") is None
    assert engine.payload(key) == replayed
