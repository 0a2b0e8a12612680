"""Duplicate MCR mahjong: tiles, fixed walls, winds per deal, hand results and payments.

In duplicate MCR (docs/mahjong.md) every table of a group plays the same **wall** for a deal:
each player gets 34 tiles restored in order, their 13-tile starting hand and the 21 tiles of
the wall in front of them. The hub never sees the play itself, only the result an official
enters: a winner with the fan total and the discarder (or a self-draw), or a draw.

Tiles are 2-character codes, suit last (the common ``m/p/s/z`` notation):

* ``1m``..``9m`` characters (wan), ``1p``..``9p`` dots (circles), ``1s``..``9s`` bamboos;
* ``1z``..``4z`` the winds East, South, West, North; ``5z`` white dragon (P), ``6z`` green
  dragon (F), ``7z`` red dragon (C).

A wall is a permutation of the 136 tiles (34 kinds x 4, no flowers), index 0 first. Seat ``s``
(1..4) holds tiles ``34(s-1)`` .. ``34s - 1``: the first 13 its hand, the next 21 its wall in
the order it draws them. A ``Wall`` is a ``DeckOrder`` (same secrecy, deck file, commitment:
the commitment line of a deal is its 136 codes concatenated).
"""

from __future__ import annotations

import random
import secrets
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, ClassVar

from hub.domain.deck import DeckOrder
from hub.domain.errors import Rejection
from hub.domain.imp import parse_scale

if TYPE_CHECKING:
    from hub.domain.games.mahjong.events import McrHand
    from hub.domain.games.mahjong.fan import Fan

Tile = str
SUITS = "mps"
KINDS: tuple[Tile, ...] = (
    *(f"{n}{s}" for s in SUITS for n in range(1, 10)),
    *(f"{n}z" for n in range(1, 8)),
)
FULL_SET: tuple[Tile, ...] = tuple(kind for kind in KINDS for _ in range(4))
SEATS = 4
HAND_TILES = 13
WALL_TILES = 21
SEAT_TILES = HAND_TILES + WALL_TILES  # 34; 4 x 34 = 136
WINDS = ("E", "S", "W", "N")
# Labels for people (overlays): honours by their usual letters.
HONOUR_LABELS = {"1z": "E", "2z": "S", "3z": "W", "4z": "N", "5z": "P", "6z": "F", "7z": "C"}


def tile_label(tile: Tile) -> str:
    """``"5m"`` -> ``"5m"``; ``"1z"`` -> ``"E"``; ``"7z"`` -> ``"C"`` (red dragon)."""
    return HONOUR_LABELS.get(tile, tile)


def tiles_of(text: str | Iterable[str]) -> tuple[Tile, ...]:
    """Tiles from a string of 2-character codes (spaces allowed) or an iterable of codes."""
    if isinstance(text, str):
        joined = "".join(text.split())
        if len(joined) % 2:
            raise ValueError("tile codes are 2 characters each")
        items: list[str] = [joined[i : i + 2] for i in range(0, len(joined), 2)]
    else:
        items = list(text)
    known = set(KINDS)
    for tile in items:
        if tile not in known:
            raise ValueError(f"not a tile: {tile!r} (expected 1m..9m, 1p..9p, 1s..9s, 1z..7z)")
    return tuple(items)


@dataclass(frozen=True, repr=False)
class Wall(DeckOrder):
    """One deal's 136 tiles, seat 1's 34 first (see the module docstring)."""

    described: ClassVar[str] = "mahjong walls"

    def __post_init__(self, pieces: object) -> None:  # (136 tiles of its own: no piece set)
        if len(self.cards) != len(FULL_SET):
            raise ValueError(f"a wall has 136 tiles, got {len(self.cards)}")
        counts = Counter(tiles_of(self.cards))
        for kind in KINDS:
            if counts[kind] != 4:
                raise ValueError(f"tile {kind} {counts[kind]} times in the wall (expected 4)")

    def __repr__(self) -> str:
        return "Wall(rehearsal)" if self.rehearsal else "Wall(<secret>)"

    def hand(self, seat: int) -> tuple[Tile, ...]:
        """The 13 starting tiles of ``seat`` (1..4)."""
        start = (seat - 1) * SEAT_TILES
        return self.cards[start : start + HAND_TILES]

    def wall(self, seat: int) -> tuple[Tile, ...]:
        """The 21 tiles in front of ``seat``, in the order it draws them."""
        start = (seat - 1) * SEAT_TILES + HAND_TILES
        return self.cards[start : start + WALL_TILES]


def random_wall(rng: random.Random | None = None) -> Wall:
    """A shuffled wall (the OS CSPRNG by default; any other generator marks it rehearsal)."""
    generator = rng if rng is not None else secrets.SystemRandom()
    tiles = list(FULL_SET)
    generator.shuffle(tiles)
    return Wall(tuple(tiles), rehearsal=not isinstance(generator, random.SystemRandom))


def random_walls(deals: int, rng: random.Random | None = None) -> dict[int, DeckOrder]:
    generator = rng if rng is not None else secrets.SystemRandom()
    return {deal: random_wall(generator) for deal in range(1, deals + 1)}


def seeded_walls(seed: int | str, deals: int) -> dict[int, DeckOrder]:
    """Rehearsal walls for deals ``1..deals`` (reproducible, marked rehearsal)."""
    out: dict[int, DeckOrder] = {}
    for deal in range(1, deals + 1):
        tiles = list(FULL_SET)
        random.Random(f"duplicast-mcr-rehearsal:{seed}:{deal}").shuffle(tiles)
        out[deal] = Wall(tuple(tiles), rehearsal=True)
    return out


def wall_from_tiles(text: str | Iterable[str], rehearsal: bool = False) -> Wall:
    return Wall(tiles_of(text), rehearsal)


def seat_winds(east: int, seats: int = SEATS) -> dict[int, str]:
    """Seat -> seat wind for a deal whose East is ``east``; play goes up the seat numbers
    (East, then the next seat South, ...)."""
    return {(east - 1 + i) % seats + 1: WINDS[i] for i in range(seats)}


def default_prevalent(deals: int) -> dict[int, str]:
    """Prevalent wind per deal when the file names none: E for deals 1-4, S for 5-8, ..."""
    return {deal: WINDS[((deal - 1) // SEATS) % 4] for deal in range(1, deals + 1)}


@dataclass(frozen=True)
class PaymentRule:
    """MCR payments: a win on a discard, the discarder pays ``base + fan``, the two others
    ``base`` each; a self-draw, each of the three pays ``base + fan``. ``min_fan``: the
    smallest fan total that may win (8 in MCR)."""

    base: int = 8
    min_fan: int = 8
    max_fan: int = 1000  # a guard against typing slips (the largest MCR hand is far below)


@dataclass(frozen=True)
class MahjongResult:
    """One hand at one table: ``winner`` None for a draw; ``discarder`` None for a self-draw.
    ``fan`` is the total that scores: the computed one when the ``hand``'s tiles were entered
    (``fans`` its fans; ``typed`` the official's own total, if given), else the official's."""

    winner: int | None
    fan: int | None = None
    discarder: int | None = None
    hand: McrHand | None = None
    fans: tuple[Fan, ...] = ()
    typed: int | None = None
    winds: str = ""  # the winner's seat wind and the prevalent wind its fans were counted with

    @property
    def disputed(self) -> bool:
        """The official typed a total the tiles do not give (an official must confirm)."""
        return self.hand is not None and self.typed is not None and self.typed != self.fan

    @property
    def draw(self) -> bool:
        return self.winner is None

    @property
    def self_draw(self) -> bool:
        return self.winner is not None and self.discarder is None

    def as_dict(self) -> dict[str, object]:
        if self.winner is None:
            return {"kind": "draw"}
        out: dict[str, object] = {
            "kind": "self_draw" if self.discarder is None else "discard",
            "winner": self.winner,
            "fan": self.fan,
            "discarder": self.discarder,
        }
        if self.hand is not None:
            out["hand"] = self.hand.as_record()
            out["fans"] = [f.as_dict() for f in self.fans]
            if self.typed is not None:
                out["typed"] = self.typed
        return out


def check_result(result: MahjongResult, rule: PaymentRule, seats: int = SEATS) -> None:
    """Raises ``Rejection`` for a result that cannot be: fan below the minimum, a discarder
    who is the winner, a seat that does not exist."""
    if result.winner is None:
        if result.fan is not None or result.discarder is not None:
            raise Rejection("bad_winner", "a draw has no fan total and no discarder")
        return
    for name, seat in (("winner", result.winner), ("discarder", result.discarder)):
        if seat is not None and not 1 <= seat <= seats:
            raise Rejection("unknown_seat", f"{name} seat {seat} does not exist (1..{seats})")
    if result.fan is None:
        raise Rejection("bad_amount", "a win needs its fan total")
    if result.fan < rule.min_fan:
        raise Rejection("bad_amount", f"a win needs at least {rule.min_fan} fan, got {result.fan}")
    if result.fan > rule.max_fan:
        raise Rejection("bad_amount", f"{result.fan} fan is more than {rule.max_fan}")
    if result.discarder == result.winner:
        raise Rejection("bad_winner", f"seat {result.winner} cannot win on its own discard")


def payments(result: MahjongResult, rule: PaymentRule, seats: int = SEATS) -> dict[int, int]:
    """Points per seat for one hand (zero-sum): see ``PaymentRule``; a draw is 0 for all.

    >>> payments(MahjongResult(1, 10, discarder=2), PaymentRule())
    {1: 34, 2: -18, 3: -8, 4: -8}
    >>> payments(MahjongResult(3, 8), PaymentRule())
    {1: -16, 2: -16, 3: 48, 4: -16}
    """
    out = dict.fromkeys(range(1, seats + 1), 0)
    if result.winner is None:
        return out
    check_result(result, rule, seats)
    fan = result.fan or 0
    for seat in out:
        if seat == result.winner:
            continue
        pays = rule.base + fan if result.discarder in (None, seat) else rule.base
        out[seat] -= pays
        out[result.winner] += pays
    return out


def random_result(rng: random.Random, rule: PaymentRule, seats: int = SEATS) -> MahjongResult:
    """A plausible hand result for simulations: about 1 in 6 a draw, a third of wins
    self-drawn, fan mostly near the minimum with a long tail."""
    if rng.random() < 0.16:
        return MahjongResult(None)
    winner = rng.randint(1, seats)
    fan = min(rule.max_fan, rule.min_fan + int(rng.expovariate(1 / 5)))
    if rng.random() < 0.05:
        fan = rng.choice((24, 32, 48, 64, 88))
    if rng.random() < 0.33:
        return MahjongResult(winner, fan)
    discarder = rng.choice([s for s in range(1, seats + 1) if s != winner])
    return MahjongResult(winner, fan, discarder)


def result_text(result: MahjongResult, winds: Mapping[int, str] | None = None) -> str:
    """One line for people: ``"seat 2 (S) 10 fan on seat 4's discard"``, ``"draw"``."""
    if result.winner is None:
        return "draw"

    def name(seat: int) -> str:
        return f"seat {seat} ({winds[seat]})" if winds else f"seat {seat}"

    how = "self-drawn" if result.discarder is None else f"on {name(result.discarder)}'s discard"
    return f"{name(result.winner)} {result.fan} fan {how}"


@dataclass(frozen=True)
class MahjongRules:
    """The ``[mahjong]`` section: the payment rule and the prevalent wind of each deal (the
    East seat of each deal is the schedule's ``buttons``)."""

    rule: PaymentRule
    prevalent: Mapping[int, str]


# The default duplicate-MCR IMP scale: a data file shipped with the package, with where it
# comes from written in it (the WBF bridge scale with every step divided by 10; docs/mahjong.md).
MCR_SCALE_FILE = "imp-scale-mcr.csv"
MCR_SCALE = parse_scale(
    resources.files(__package__).joinpath(MCR_SCALE_FILE).read_text(encoding="utf-8"),
    name="MCR (WBF / 10)",
)


def result_fields(result: MahjongResult) -> dict[str, object]:
    """The fields of the console's ``result`` event for ``result`` (docs/mahjong.md)."""
    if result.winner is None:
        return {"draw": True}
    if result.discarder is None:
        return {"seat": result.winner, "fan": result.fan, "self_draw": True}
    return {"seat": result.winner, "fan": result.fan, "discarder": result.discarder}
