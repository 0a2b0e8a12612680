"""The rows of the standings: a player's line in a seat ranking, a team's line in its group."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hub.domain.scoring.format import json_number


def _format_fields(points: Fraction | None, imps: int | None) -> dict[str, Any]:
    """A row's format-specific totals: ``points`` (ifp-points), ``imps`` (imp), or none."""
    out: dict[str, Any] = {}
    if points is not None:
        out["points"] = json_number(points)
    if imps is not None:
        out["imps"] = imps
    return out


@dataclass(frozen=True)
class SeatRow:
    """One player's line in a seat ranking (``points`` under ifp-points, ``imps`` under imp)."""

    table: int
    team: str
    player: str
    chips: int
    points: Fraction | None
    rank: int
    imps: int | None = None
    penalty: tuple[int, Fraction] = (0, Fraction(0))  # (chips, points) taken off, included

    def as_dict(self) -> dict[str, Any]:
        out = {
            "table": self.table,
            "team": self.team,
            "player": self.player,
            "chips": self.chips,
            **_format_fields(self.points, self.imps),
            "rank": self.rank,
        }
        if any(self.penalty):
            out["penalty"] = penalty_dict(self.penalty)
        return out

    def totals(self) -> dict[str, Any]:
        """The fields of ``as_dict`` a result moves (the rest stand while the row holds the
        same table, player and penalty)."""
        return {"chips": self.chips, **_format_fields(self.points, self.imps), "rank": self.rank}


def penalty_dict(penalty: tuple[int, Fraction]) -> dict[str, Any]:
    return {"chips": penalty[0], "points": json_number(penalty[1])}


@dataclass(frozen=True)
class SeatStanding:
    """The ranking of one seat position in one group; rows by rank, then table."""

    group: str
    seat: int
    rows: tuple[SeatRow, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"group": self.group, "seat": self.seat, "rows": [r.as_dict() for r in self.rows]}


@dataclass(frozen=True)
class TeamStanding:
    """One team's line in its group: its format's total (IFP points or IMPs), aggregate
    chip-score, shared rank."""

    group: str
    team: str
    rank: int
    points: Fraction | None
    chips: int
    imps: int | None = None
    penalty: tuple[int, Fraction] = (0, Fraction(0))  # its players' penalties, included

    def as_dict(self) -> dict[str, Any]:
        out = {
            "group": self.group,
            "team": self.team,
            "rank": self.rank,
            **_format_fields(self.points, self.imps),
            "chips": self.chips,
        }
        if any(self.penalty):
            out["penalty"] = penalty_dict(self.penalty)
        return out

    def totals(self) -> dict[str, Any]:
        """The fields of ``as_dict`` a result moves (the rest stand while the row holds the
        same team and penalty)."""
        return {"rank": self.rank, **_format_fields(self.points, self.imps), "chips": self.chips}
