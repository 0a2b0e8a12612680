"""Filling a stage's groups from the standings of the stage before (the ``advance`` rule).

Deterministic by construction: teams are compared by the standings' own rules (IFP points,
then aggregate chip-score) and a tie that survives both is broken by team id, the order in which
standings list tied teams. The qualifiers are

1. the best ``top_per_group`` teams of each group, seeded place by place (every group's winner
   before any runner-up; within a place, by points then chips);
2. then the best of all remaining teams across groups, by points then chips, until the stage's
   seats are taken (``top_per_group = 0``: the best across groups only).

They are dealt into the new stage's groups in snake order (1→A, 2→B, 3→B, 4→A, ...), so the
strongest seeds are spread; a group's teams are kept in seeding order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from hub.domain.scoring import TeamStanding

__all__ = ["AdvanceError", "distribute", "fill", "order_key", "qualifiers"]


class AdvanceError(ValueError):
    """The rule cannot fill the stage (too few teams in the stage before)."""


def order_key(row: TeamStanding) -> tuple[Fraction, int, str]:
    """Best first: more points, then more chips, then team id."""
    return (-(row.points or Fraction(0)), -row.chips, row.team)


def qualifiers(
    groups: Mapping[str, Sequence[TeamStanding]], top_per_group: int, needed: int
) -> list[str]:
    """The ``needed`` qualifying teams in seeding order (see the module docstring)."""
    ranked = {g: sorted(rows, key=order_key) for g, rows in groups.items()}
    total = sum(len(rows) for rows in ranked.values())
    if total < needed:
        raise AdvanceError(f"{needed} teams advance but the stage before has only {total}")
    if top_per_group * len(ranked) > needed:
        raise AdvanceError(
            f"top {top_per_group} of {len(ranked)} groups is more than the {needed} places"
        )
    chosen: list[str] = []
    for place in range(top_per_group):
        at_place = [rows[place] for rows in ranked.values() if place < len(rows)]
        chosen.extend(row.team for row in sorted(at_place, key=order_key))
    taken = set(chosen)
    rest = sorted(
        (row for rows in ranked.values() for row in rows if row.team not in taken), key=order_key
    )
    chosen.extend(row.team for row in rest[: needed - len(chosen)])
    return chosen


def distribute(seeded: Sequence[str], groups: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Deal seeded teams into groups in snake order."""
    out: dict[str, list[str]] = {g: [] for g in groups}
    n = len(groups)
    for i, team in enumerate(seeded):
        turn, pos = divmod(i, n)
        out[groups[pos if turn % 2 == 0 else n - 1 - pos]].append(team)
    return {g: tuple(teams) for g, teams in out.items()}


def fill(
    groups: Mapping[str, Sequence[TeamStanding]],
    top_per_group: int,
    targets: Sequence[str],
    size: int,
) -> dict[str, tuple[str, ...]]:
    """The teams of each target group (``size`` each) from the source groups' standings."""
    return distribute(qualifiers(groups, top_per_group, size * len(targets)), targets)
