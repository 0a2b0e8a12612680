"""MCR mahjong's console event: a hand's ``result`` (docs/mahjong.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from hub.domain.console_event import ConsoleEvent, Natural, Positive, integer, valid

# A tile code (1m..9m, 1p..9p, 1s..9s, 1z..7z: rules.KINDS).
TileCode = Annotated[str, Meta(pattern="^(?:[1-9][mps]|[1-7]z)$")]
MeldKind = Literal["chow", "pung", "kong", "concealed_kong"]
# Flags of the winning tile (issue #32's contract): last_tile the last of the wall,
# kong_replacement out on a kong's replacement tile, robbing_kong robbing a kong,
# last_of_kind the 4th of its kind.
Flag = Literal["last_tile", "kong_replacement", "robbing_kong", "last_of_kind"]


class Meld(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A set shown (or a concealed kong declared): its ``kind`` and its tiles as given (a
    meld that is not one is refused when the result is applied: ``fan.impossible``)."""

    kind: MeldKind
    tiles: Annotated[tuple[TileCode, ...], Meta(min_length=1, max_length=4)]


class McrHand(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The winner's hand: ``concealed`` the standing tiles without the winning tile, the
    ``melds``, the ``winning`` tile and its ``flags`` (any subset)."""

    concealed: Annotated[tuple[TileCode, ...], Meta(max_length=20)]
    winning: TileCode
    melds: Annotated[tuple[Meld, ...], Meta(max_length=4)] = ()
    flags: Annotated[tuple[Flag, ...], Meta(max_length=4)] = ()

    def as_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "concealed": list(self.concealed),
            "melds": [{"kind": m.kind, "tiles": list(m.tiles)} for m in self.melds],
            "winning": self.winning,
        }
        if self.flags:
            out["flags"] = list(self.flags)
        return out


class Result(ConsoleEvent, tag="result", frozen=True, kw_only=True):
    """A mahjong hand's result: a win (``seat``, ``discarder`` or ``self_draw``, and its
    ``hand`` or the official's ``fan``: both may be given) or a ``draw``."""

    fan: Natural | None = None  # the winner's fan total as the official typed it
    discarder: Positive | None = None  # the seat whose discard won
    self_draw: Literal[True] | None = None  # won on a tile from the winner's wall
    draw: Literal[True] | None = None  # nobody won
    hand: McrHand | None = None  # the winning hand's tiles: the hub computes its fan

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
        if raw.get("fan") is not None and not valid(raw["fan"], Natural):
            return integer("fan", raw["fan"], 0)
        if raw.get("discarder") is not None and not valid(raw["discarder"], Positive):
            return integer("discarder", raw["discarder"], 1)
        if raw.get("hand") is not None:
            return _hand_problem(raw["hand"])
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
        if self.hand is not None:
            out["hand"] = self.hand.as_record()
        return out


def _hand_problem(value: Any) -> str | None:
    """The refusal of a ``hand`` that is not of the hand's shape (None: it is)."""
    try:
        msgspec.convert(value, McrHand, strict=True)
    except msgspec.ValidationError as exc:
        return f"field 'hand' is malformed: {exc}"
    return None


def _shape(get: Callable[[str], Any]) -> str | None:
    """A draw names nothing else; a win names its winner (``seat``), ``fan`` or ``hand``
    (or both) and exactly one of ``discarder`` and ``self_draw``."""
    if get("draw"):
        extra = [n for n in ("seat", "fan", "discarder", "self_draw", "hand") if get(n) is not None]
        if extra:
            return f"a drawn hand has no winner: field '{extra[0]}' does not belong"
        return None
    if get("seat") is None or (get("fan") is None and get("hand") is None):
        return "a 'result' needs the winner's 'seat' and 'fan' (or 'draw': true)"
    if (get("discarder") is None) == (get("self_draw") is None):
        return "a win needs exactly one of 'discarder' (a seat) and 'self_draw': true"
    return None
