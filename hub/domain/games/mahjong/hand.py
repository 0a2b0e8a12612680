"""A duplicate MCR hand at one table as the tournament keeps it: started, then one result.

The hub does not follow mahjong play tile by tile: an official enters the hand's result
(winner, fan total, discarder or self-draw; or a draw) when it ends. ``MahjongHand`` answers
the hub's `Hand` protocol (``hub.domain.games.base``), so statuses, corrections
(undo, reopen, void), snapshots, release and travellers serve mahjong unchanged; it has no
betting (``act`` refuses), no pot and no board. ``MahjongDeal`` stands where the dealt cards
stand: each seat's 13-tile hand (``hole``), its 21 wall tiles and the deal's winds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from hub.domain.dealing import Dealt
from hub.domain.errors import Rejection
from hub.domain.games.holdem.records import ActionRecord, Legal, Pot
from hub.domain.games.holdem.spec import HandSpec
from hub.domain.games.mahjong.rules import (
    SEATS,
    MahjongResult,
    PaymentRule,
    Wall,
    check_result,
    payments,
    seat_winds,
)

# The one input of a mahjong hand, as the tournament journals it (seat, kind, amount):
# (0, "draw", None), (winner, "self_draw", fan), (winner, "discard:<seat>", fan).
DRAW = "draw"
SELF_DRAW = "self_draw"
DISCARD = "discard:"


@dataclass(frozen=True)
class MahjongDeal(Dealt):
    """A deal's tiles and winds: ``hole`` seat -> 13 hand tiles, ``walls`` seat -> 21 wall
    tiles (draw order), ``winds`` seat -> seat wind, ``prevalent`` the prevalent wind."""

    walls: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    winds: Mapping[int, str] = field(default_factory=dict)
    prevalent: str = "E"
    east: int = 1


def mahjong_deal(wall: Wall, east: int, prevalent: str) -> MahjongDeal:
    hands = {seat: wall.hand(seat) for seat in range(1, SEATS + 1)}
    return MahjongDeal(
        hole=cast(Any, hands),
        board=(),
        walls={seat: wall.wall(seat) for seat in range(1, SEATS + 1)},
        winds=seat_winds(east),
        prevalent=prevalent,
        east=east,
    )


def mahjong_spec(east: int) -> HandSpec:
    """The spec of a mahjong hand: four seats, the East seat as the ``button``, no chips and
    no cards (the tiles are the tournament's ``dealt(deal)``, a ``MahjongDeal``)."""
    return HandSpec(seats=SEATS, button=east, small_blind=1, big_blind=1, cap=1)


def result_input(result: MahjongResult) -> tuple[int, str, int | None]:
    if result.winner is None:
        return (0, DRAW, None)
    if result.discarder is None:
        return (result.winner, SELF_DRAW, result.fan)
    return (result.winner, f"{DISCARD}{result.discarder}", result.fan)


def input_result(entry: tuple[int, str, int | str | None]) -> MahjongResult:
    """The result a journaled input records (``ValueError`` for anything else)."""
    seat, kind, value = entry
    if isinstance(value, str):  # a hand's inputs may hold other games' texts (RPS throws)
        raise ValueError(f"not a mahjong result input: {entry!r}")
    fan = value
    if kind == DRAW:
        return MahjongResult(None)
    if kind == SELF_DRAW:
        return MahjongResult(seat, fan)
    if kind.startswith(DISCARD):
        return MahjongResult(seat, fan, int(kind[len(DISCARD) :]))
    raise ValueError(f"not a mahjong result input: {entry!r}")


def is_result_input(entry: tuple[int, str, int | str | None]) -> bool:
    return entry[1] in (DRAW, SELF_DRAW) or entry[1].startswith(DISCARD)


class MahjongHand:
    """One hand in play until its result is set (``street`` "play", then "complete")."""

    def __init__(self, spec: HandSpec, rule: PaymentRule) -> None:
        self.spec = spec
        self.rule = rule
        seats = range(1, spec.seats + 1)
        self.street = "play"
        self.to_act: int | None = None
        self.committed = dict.fromkeys(seats, 0)
        self.street_bet = dict.fromkeys(seats, 0)
        self.folded: frozenset[int] = frozenset()
        self.all_in: frozenset[int] = frozenset()
        self.actions: list[ActionRecord] = []
        self.result: dict[int, int] | None = None
        self.mahjong: MahjongResult | None = None

    @classmethod
    def replay_inputs(
        cls, spec: HandSpec, rule: PaymentRule, inputs: Iterable[tuple[int, str, int | str | None]]
    ) -> MahjongHand:
        """The hand its journaled inputs give (at most one result; ``Rejection`` otherwise)."""
        hand = cls(spec, rule)
        for entry in inputs:
            if not is_result_input(entry):
                raise Rejection("not_allowed", f"{entry[1]!r} is not a mahjong hand's input")
            hand.set_result(input_result(entry))
        return hand

    def set_result(self, result: MahjongResult) -> None:
        """Record the hand's result (checked against the rule); the hand is complete."""
        if self.mahjong is not None:
            raise Rejection("hand_over", "this hand already has its result")
        check_result(result, self.rule, self.spec.seats)
        self.result = payments(result, self.rule, self.spec.seats)
        self.mahjong = result
        self.street = "complete"

    # -- what the hub reads of any hand, answered for a hand without betting -----------------
    @property
    def pot(self) -> int:
        return 0

    @property
    def high_bet(self) -> int:
        return 0

    def board_visible(self) -> tuple[str, ...]:
        return ()

    def legal(self, seat: int) -> Legal:
        return Legal(False, False, None, None, None)

    def verify(self, seat: int, kind: str, amount: int | None = None) -> None:
        raise Rejection("not_allowed", f"mahjong has no betting: send a 'result', not {kind!r}")

    def act(self, seat: int, kind: str, amount: int | None = None) -> ActionRecord:
        self.verify(seat, kind, amount)
        raise AssertionError("unreachable")  # pragma: no cover

    def pots(self) -> list[Pot]:
        return []

    def awards(self, declared: Iterable[int] | None = None) -> list[tuple[Pot, tuple[int, ...]]]:
        return []

    def copy(self) -> MahjongHand:
        other = MahjongHand(self.spec, self.rule)
        if self.mahjong is not None:
            other.set_result(self.mahjong)
        return other

    def computed_winners(self) -> frozenset[int] | None:
        return None

    def if_ended_now(self) -> dict[int, int] | None:
        return None

    def settle(self, winners: Iterable[int] | None = None) -> dict[int, int]:
        raise Rejection("not_allowed", "a mahjong hand ends with a 'result' event")
