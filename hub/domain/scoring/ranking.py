"""Rankings with ties shared: IFP points per seat position, plain totals, teams with tie-breaks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from functools import lru_cache
from math import lcm

from hub.domain.scoring.format import Format
from hub.domain.scoring.rows import TeamStanding


def ifp_ranking(chips: Mapping[int, int]) -> list[tuple[int, int, Fraction, int]]:
    """Rank players (key -> total chips): ``(key, chips, points, rank)``, best first.

    With N players, places 1..N earn N..1 points; a tie over places p..q shares their average,
    ``N + 1 - (p + q) / 2``; the rank of a tie is p (competition ranking).
    """
    order = sorted(chips.items(), key=lambda item: (-item[1], item[0]))
    n = len(order)
    ranked: list[tuple[int, int, Fraction, int]] = []
    start = 0
    while start < n:
        end = start + 1
        while end < n and order[end][1] == order[start][1]:
            end += 1
        # 0-based start..end-1 are places start+1..end.
        points = halves(2 * n + 1 - start - end)
        ranked.extend((key, total, points, start + 1) for key, total in order[start:end])
        start = end
    return ranked


@lru_cache(maxsize=4096)
def halves(count: int) -> Fraction:
    """``count / 2`` (a ranking makes the same few values again and again: made once)."""
    return Fraction(count, 2)


def exact_sum(values: Iterable[Fraction]) -> Fraction:
    """The sum of ``values``, made as one ``Fraction`` (integer sums over the common
    denominator: adding Fractions one by one normalises each partial sum)."""
    values = tuple(values)
    common = lcm(*(v.denominator for v in values)) if values else 1
    return Fraction(sum(v.numerator * (common // v.denominator) for v in values), common)


def plain_ranking(scores: Mapping[int, int]) -> list[tuple[int, int, int]]:
    """Rank players (key -> total) by total, best first: ``(key, total, rank)``; a tie shares
    the rank of its first place (competition ranking) and is listed by key."""
    order = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    ranked: list[tuple[int, int, int]] = []
    for i, (key, total) in enumerate(order):
        rank = ranked[-1][2] if ranked and ranked[-1][1] == total else i + 1
        ranked.append((key, total, rank))
    return ranked


def rank_teams(
    group: str,
    points: Mapping[str, Fraction],
    chips: Mapping[str, int],
    scoring: Format = "ifp-points",
    penalties: Mapping[str, tuple[int, Fraction]] | None = None,
) -> tuple[TeamStanding, ...]:
    """Teams by their format's total (``points``: IFP points or IMPs; unused under chips),
    then aggregate chips; equal on both -> shared rank, then by team id. ``penalties``: each
    team's (chips, points) taken off, already included in the totals (shown on the row)."""
    penalties = penalties or {}
    if scoring == "chips":
        points = dict.fromkeys(chips, Fraction(0))
    # The order of the points as integers over their common denominator: the same order as
    # the Fractions', without their arithmetic in every comparison.
    common = lcm(*(p.denominator for p in points.values())) if points else 1
    scaled = {team: p.numerator * (common // p.denominator) for team, p in points.items()}
    order = sorted(points, key=lambda team: (-scaled[team], -chips[team], team))
    rows: list[TeamStanding] = []
    previous: tuple[int, int] | None = None
    for i, team in enumerate(order):
        key = (scaled[team], chips[team])
        rank = rows[-1].rank if rows and previous == key else i + 1
        previous = key
        total = points[team]
        rows.append(
            TeamStanding(
                group,
                team,
                rank,
                total if scoring == "ifp-points" else None,
                chips[team],
                int(total) if scoring == "imp" else None,
                penalties.get(team, (0, Fraction(0))),
            )
        )
    return tuple(rows)
