"""IMP scales: a difference of score turned into International Match Points.

Duplicate bridge and duplicate mahjong compare each result with the results of the same seat on
the same deal elsewhere and convert the difference with a step table, so that one huge swing
cannot outweigh many ordinary ones. A scale is a list of steps ``(from, imps)``: a difference of
at least ``from`` (and below the next step) is worth ``imps``; below the first step it is worth
0, and a negative difference is worth minus the IMPs of its size.

``WBF`` is the World Bridge Federation scale (20 -> 1 ... 4000 -> 24). Any other scale comes
from a small text file (``parse_scale``), one step per line::

    # difference, IMPs        <- comments and blank lines are ignored
    20, 1
    50, 2
    2.5, 3                    <- an error: the steps must increase

Differences may be integers or decimals (``2.5``: a scale in big blinds); IMPs are integers.
Both must strictly increase from line to line, and the first step must be above 0.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import cached_property


class ScaleError(ValueError):
    """A scale file that is not a list of increasing steps; the message names the line."""


@dataclass(frozen=True)
class ImpScale:
    """Steps ``(from, imps)`` by increasing difference; ``name`` says where it came from."""

    steps: tuple[tuple[Fraction, int], ...]
    name: str = "custom"

    def __post_init__(self) -> None:
        if not self.steps:
            raise ScaleError("a scale needs at least one step")
        previous: tuple[Fraction, int] = (Fraction(0), 0)
        for i, (low, imps) in enumerate(self.steps):
            if i == 0 and low <= 0:
                raise ScaleError(f"the first step must start above 0, not {low}")
            if i and low <= previous[0]:
                raise ScaleError(f"step {low} does not come after step {previous[0]}")
            if imps <= previous[1]:
                raise ScaleError(f"step {low} gives {imps} IMPs, not more than {previous[1]}")
            previous = (low, imps)

    @cached_property
    def bounds(self) -> tuple[Fraction, ...]:
        return tuple(low for low, _ in self.steps)

    def imps(self, difference: Fraction | int) -> int:
        """The IMPs a signed difference is worth (the scale is symmetric about 0)."""
        size = -Fraction(difference) if difference < 0 else Fraction(difference)
        place = bisect_right(self.bounds, size)
        worth = self.steps[place - 1][1] if place else 0
        return worth if difference >= 0 else -worth


_WBF_STEPS: tuple[int, ...] = (
    *(20, 50, 90, 130, 170, 220, 270, 320, 370, 430, 500, 600),
    *(750, 900, 1100, 1300, 1500, 1750, 2000, 2250, 2500, 3000, 3500, 4000),
)
WBF = ImpScale(
    steps=tuple((Fraction(low), imps) for imps, low in enumerate(_WBF_STEPS, start=1)),
    name="WBF",
)
"""The WBF bridge IMP scale: < 20 -> 0, 20 -> 1, 50 -> 2, ... 3500 -> 23, 4000 or more -> 24."""


def _number(text: str, line: int, what: str) -> Fraction:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ScaleError(f"line {line}: {what} {text!r} is not a number") from None
    if not value.is_finite():
        raise ScaleError(f"line {line}: {what} {text!r} is not a number")
    return Fraction(value)


def parse_scale(text: str, name: str = "custom") -> ImpScale:
    """Read a scale file's text (format in the module docstring); ``ScaleError`` names the line."""
    steps: list[tuple[Fraction, int]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = [part.strip() for part in line.split(",")]
        if len(parts) != 2:
            raise ScaleError(f"line {number}: expected 'difference, IMPs', got {raw.strip()!r}")
        low = _number(parts[0], number, "difference")
        imps = _number(parts[1], number, "IMPs")
        if imps.denominator != 1:
            raise ScaleError(f"line {number}: IMPs {parts[1]!r} is not a whole number")
        steps.append((low, int(imps)))
        try:
            ImpScale(tuple(steps))
        except ScaleError as exc:
            raise ScaleError(f"line {number}: {exc}") from None
    if not steps:
        raise ScaleError("no steps (expected lines 'difference, IMPs')")
    return ImpScale(tuple(steps), name)
