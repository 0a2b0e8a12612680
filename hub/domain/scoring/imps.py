"""IMPs of one deal: each seat (or team) against the average of the tables of its group."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from hub.domain.scoring.format import ScoringFormat


def deal_imps(
    results: Mapping[int, Mapping[int, int]], scoring: ScoringFormat
) -> dict[int, dict[int, int]]:
    """Every table's IMPs on one deal: table -> seat -> IMPs, from table -> seat -> chip-score
    of the tables of one group that counted the deal.

    A seat's difference is its chip-score minus the average chip-score of the same seat at the
    other tables, divided by the unit (exact fractions, no rounding before the scale); a table
    alone on the deal has nobody to compare with and scores 0.
    """
    others = len(results) - 1
    if others < 1:
        return {table: dict.fromkeys(result, 0) for table, result in results.items()}
    sums: dict[int, int] = {}
    for result in results.values():
        for seat, chips in result.items():
            sums[seat] = sums.get(seat, 0) + chips
    scale, unit = scoring.scale, scoring.unit
    if scoring.average == "all":  # chips - sum / n, the table itself in the average
        n = len(results)
        return {
            table: {
                seat: scale.imps(Fraction(chips * n - sums[seat], n * unit))
                for seat, chips in result.items()
            }
            for table, result in results.items()
        }
    return {
        table: {
            seat: scale.imps(Fraction(chips * others - (sums[seat] - chips), others * unit))
            for seat, chips in result.items()
        }
        for table, result in results.items()
    }


def team_deal_imps(
    results: Mapping[int, Mapping[int, int]],
    holder: Mapping[tuple[int, int], str],
    scoring: ScoringFormat,
) -> dict[str, int]:
    """Each team's IMPs on one deal counted at every table of its group (``teams =
    "totals"``): the team's total (its players' results summed over the tables) against the
    average total of the group's teams, in the unit, by the scale."""
    totals: dict[str, int] = {}
    for table, result in results.items():
        for seat, chips in result.items():
            team = holder[(table, seat)]
            totals[team] = totals.get(team, 0) + chips
    if not totals:
        return {}
    n, whole = len(totals), sum(totals.values())
    return {
        team: scoring.scale.imps(Fraction(total * n - whole, n * scoring.unit))
        for team, total in totals.items()
    }
