"""MCR mahjong's console event: a hand's ``result`` (docs/mahjong.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from hub.domain.console_event import ConsoleEvent, Natural, Positive, integer, valid


class Result(ConsoleEvent, tag="result", frozen=True, kw_only=True):
    """A mahjong hand's result: a win (``seat``, ``fan``, ``discarder`` or ``self_draw``) or
    a ``draw``."""

    fan: Natural | None = None  # the winner's fan total
    discarder: Positive | None = None  # the seat whose discard won
    self_draw: Literal[True] | None = None  # won on a tile from the winner's wall
    draw: Literal[True] | None = None  # nobody won

    def __post_init__(self) -> None:
        super().__post_init__()
        problem = _shape(lambda name: getattr(self, name))
        if problem is not None:
            raise ValueError(problem)

    @classmethod
    def problem(cls, raw: Mapping[str, Any]) -> str | None:
        for flag in ("self_draw", "draw"):
            if raw.get(flag) is not None and raw[flag] is not True:
                return f"field '{flag}' must be true when given"
        problem = _shape(raw.get)
        if problem is not None or raw.get("draw"):
            return problem
        if not valid(raw["fan"], Natural):
            return integer("fan", raw["fan"], 0)
        if raw.get("discarder") is not None and not valid(raw["discarder"], Positive):
            return integer("discarder", raw["discarder"], 1)
        return None

    def as_record(self) -> dict[str, Any]:
        out = super().as_record()
        if self.fan is not None:
            out["fan"] = self.fan
        if self.discarder is not None:
            out["discarder"] = self.discarder
        if self.self_draw is not None:
            out["self_draw"] = self.self_draw
        if self.draw is not None:
            out["draw"] = self.draw
        return out


def _shape(get: Callable[[str], Any]) -> str | None:
    """A draw names nothing else; a win names its winner (``seat``), ``fan`` and exactly one
    of ``discarder`` and ``self_draw``."""
    if get("draw"):
        extra = [n for n in ("seat", "fan", "discarder", "self_draw") if get(n) is not None]
        if extra:
            return f"a drawn hand has no winner: field '{extra[0]}' does not belong"
        return None
    if get("seat") is None or get("fan") is None:
        return "a 'result' needs the winner's 'seat' and 'fan' (or 'draw': true)"
    if (get("discarder") is None) == (get("self_draw") is None):
        return "a win needs exactly one of 'discarder' (a seat) and 'self_draw': true"
    return None
