"""The scoring format of a tournament (``[scoring]``) and the two views standings are kept in.

Points are exact ``Fraction``s; ``json_number`` turns one into what JSON payloads carry.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, TypeAlias

from hub.domain.imp import WBF, ImpScale

View: TypeAlias = Literal["running", "like_for_like"]
VIEWS: tuple[View, ...] = ("running", "like_for_like")
Format: TypeAlias = Literal["ifp-points", "imp", "chips"]
FORMATS: tuple[Format, ...] = ("ifp-points", "imp", "chips")

JsonNumber: TypeAlias = int | float


def json_number(value: Fraction) -> JsonNumber:
    """An exact number as JSON likes it: ``int`` when whole, else a float rounded to 4 places."""
    if value.denominator == 1:
        return value.numerator
    return round(float(value), 4)


@dataclass(frozen=True)
class ScoringFormat:
    """How standings are scored; see the module docstring for the three formats.

    For ``imp``: ``unit`` is the chips in one unit the difference is measured in (1 for chips,
    the big blind for big blinds), ``unit_name`` its name for people, ``scale`` the IMP scale.
    """

    name: Format = "ifp-points"
    unit: int = 1
    unit_name: str = "chips"
    scale: ImpScale = WBF
    # imp: a seat's result against the average of the "others" tables (poker's default) or of
    # "all" the tables, itself included (duplicate mahjong, docs/mahjong.md).
    average: str = "others"
    # imp: a team's IMPs are the sum of its "players" IMPs, or each deal's team "totals"
    # (its players' results summed) against the teams' average, turned into IMPs.
    teams: str = "players"

    def __post_init__(self) -> None:
        if self.name not in FORMATS:
            raise ValueError(f"unknown scoring format {self.name!r} (expected one of {FORMATS})")
        if self.unit < 1:
            raise ValueError(f"the IMP unit must be at least 1 chip, not {self.unit}")

    @property
    def column(self) -> str:
        """The row field that ranks: ``points``, ``imps`` or ``chips``."""
        return {"ifp-points": "points", "imp": "imps", "chips": "chips"}[self.name]

    def describe(self) -> dict[str, Any]:
        """What the standings payloads say of the format (overlays pick column and heading)."""
        heading = {"ifp-points": "Pts", "imp": "IMPs", "chips": "Chips"}[self.name]
        out: dict[str, Any] = {"format": self.name, "column": self.column, "heading": heading}
        if self.name == "imp":
            out.update(unit=self.unit_name, unit_chips=self.unit, scale=self.scale.name)
            if (self.average, self.teams) != ("others", "players"):
                out.update(average=self.average, teams=self.teams)
        return out


DEFAULT_SCORING = ScoringFormat()
"""IFP points: the format when the tournament file names none."""
