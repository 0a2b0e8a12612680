"""The fan of an MCR winning hand, computed by PyMahjongGB (``MahjongGB``, the Botzone
project's C++ fan calculator of the Chinese Official rules), and the refusals of a hand that
cannot be (issue #32's contract, word for word).

`impossible` checks what any tile list can be checked for (a meld that is not one, a tile used
more than four times, the count); `fans` asks the library for the fans of a possible hand and
refuses one that does not win (``not_winning``) or does not reach the minimum
(``below_minimum``). The library's names are the MIL English names ("Pure Straight").
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from MahjongGB import MahjongFanCalculator

from hub.domain.errors import Rejection
from hub.domain.games.mahjong.events import McrHand, Meld

# Our codes -> the library's: W characters, B dots, T bamboo, F winds E S W N,
# J dragons (J1 red, J2 green, J3 white: its Reversible Tiles count J3, All Green J2).
_SUIT = {"m": "W", "p": "B", "s": "T"}
_HONOUR = {"1z": "F1", "2z": "F2", "3z": "F3", "4z": "F4", "5z": "J3", "6z": "J2", "7z": "J1"}
_WIND = {"E": 0, "S": 1, "W": 2, "N": 3}
_PACK = {"chow": "CHI", "pung": "PENG", "kong": "GANG", "concealed_kong": "GANG"}


def gb_tile(tile: str) -> str:
    """``"5m"`` -> ``"W5"``, ``"1z"`` -> ``"F1"``, ``"5z"`` -> ``"J3"`` (white)."""
    return _HONOUR.get(tile) or f"{_SUIT[tile[1]]}{tile[0]}"


@dataclass(frozen=True)
class Fan:
    """One fan of a hand: its MIL English ``name``, ``value`` (fan points each) and
    ``count`` (how many times the hand has it)."""

    name: str
    value: int
    count: int = 1

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "value": self.value, "count": self.count}

    @property
    def words(self) -> str:
        """``"Mixed Straight 8"``; ``"Pung of Terminals or Honors 1 x2"``."""
        return f"{self.name} {self.value}" + (f" x{self.count}" if self.count > 1 else "")


def total(fans: tuple[Fan, ...]) -> int:
    return sum(f.value * f.count for f in fans)


def _text(tiles: tuple[str, ...] | list[str]) -> str:
    return " ".join(tiles)


def _meld_fault(meld: Meld) -> str | None:
    tiles = meld.tiles
    if meld.kind == "chow":
        suit = {t[1] for t in tiles}
        numbers = sorted(int(t[0]) for t in tiles)
        if (
            len(tiles) == 3
            and len(suit) == 1
            and "z" not in suit
            and numbers == list(range(numbers[0], numbers[0] + 3))
        ):
            return None
        return f"'{_text(tiles)}' is not a chow: three tiles in a row of one suit"
    if meld.kind == "pung":
        if len(tiles) == 3 and len(set(tiles)) == 1:
            return None
        return f"'{_text(tiles)}' is not a pung: three of the same tile"
    if len(tiles) == 4 and len(set(tiles)) == 1:
        return None
    return f"'{_text(tiles)}' is not a kong: four of the same tile"


def all_tiles(hand: McrHand) -> list[str]:
    """The hand's tiles in the order given: concealed, each meld's, the winning tile."""
    return [*hand.concealed, *(t for m in hand.melds for t in m.tiles), hand.winning]


def impossible(hand: McrHand) -> str | None:
    """Why no hand can be this one (the contract's order: a meld that is not one, a tile
    more than four times, the count of 14 with kongs as 3); None: it may be a hand."""
    for meld in hand.melds:
        fault = _meld_fault(meld)
        if fault is not None:
            return fault
    counts = Counter(all_tiles(hand))
    for tile, n in counts.items():
        if n > 4:
            return f"{tile} is used {n} times: a set has only four of each tile"
    size = len(hand.concealed) + 1 + 3 * len(hand.melds)
    if size != 14:
        return f"a winning hand has 14 tiles, counting each kong as 3: this one has {size}"
    return None


def _packs(hand: McrHand) -> tuple[tuple[str, str, int], ...]:
    """The library's fixed packs: a chow by its middle tile; offer 0 only for a concealed
    kong (a claimed set names another seat: which one does not move the fan)."""
    out = []
    for meld in hand.melds:
        tiles = sorted(meld.tiles, key=lambda t: (t[1], t[0]))
        tile = tiles[1] if meld.kind == "chow" else tiles[0]
        out.append((_PACK[meld.kind], gb_tile(tile), 0 if meld.kind == "concealed_kong" else 1))
    return tuple(out)


def fans(
    hand: McrHand, self_draw: bool, seat_wind: str, prevalent: str, min_fan: int = 8
) -> tuple[Fan, ...]:
    """The fans of ``hand`` won by a seat of wind ``seat_wind`` under the ``prevalent`` wind.
    Raises `Rejection`: ``impossible_hand`` (`impossible`), ``not_winning``, ``below_minimum``
    (the total under ``min_fan``)."""
    fault = impossible(hand)
    if fault is not None:
        raise Rejection("impossible_hand", fault)
    flags = set(hand.flags)
    if "kong_replacement" in flags and not self_draw:
        raise Rejection(
            "impossible_hand", "'kong_replacement' is a self-drawn win: this one is on a discard"
        )
    if "robbing_kong" in flags and self_draw:
        raise Rejection(
            "impossible_hand", "'robbing_kong' is a win on another seat's kong: not self-drawn"
        )
    try:
        found = MahjongFanCalculator(
            _packs(hand),
            tuple(gb_tile(t) for t in hand.concealed),
            gb_tile(hand.winning),
            0,  # no flowers in duplicate MCR
            self_draw,
            "last_of_kind" in flags,
            "kong_replacement" in flags or "robbing_kong" in flags,
            "last_tile" in flags,
            _WIND[seat_wind],
            _WIND[prevalent],
            True,
        )
    except TypeError as exc:  # the library's refusal: ERROR_NOT_WIN
        raise Rejection("not_winning", f"'{_text(all_tiles(hand))}' is not a winning hand") from exc
    out = tuple(Fan(str(en), int(value), int(count)) for value, count, _, en in found)
    got = total(out)
    if got < min_fan:
        listed = ", ".join(f.words for f in out)
        raise Rejection("below_minimum", f"{got} fan is below the {min_fan}-fan minimum: {listed}")
    return out
