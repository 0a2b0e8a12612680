"""RPS Poker's part of the tournament file: ``[rps]``, the dealer's throws (docs/rps-poker.md):
read from the deal's deck order ("sequence", duplicate) or chosen at the table and revealed
through the console ("chosen", a plain game)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from hub.domain.config.shape import Checker, Shape
from hub.domain.games.rps.rules import RpsRules

WORDING = {"rps.dealer": "expected 'sequence' or 'chosen', got {got}"}


class Rps(Shape):
    dealer: Literal["sequence", "chosen"] = "sequence"


def section_config(c: Checker, data: Mapping[str, Any]) -> dict[str, Any]:
    """The game's rules from ``[rps]`` (the defaults without the section)."""
    if "rps" not in data:
        return {"game_rules": RpsRules()}
    rps: Rps = c.convert(data["rps"], Rps, "rps", WORDING)
    return {"game_rules": RpsRules(dealer=rps.dealer)}
