"""A duplicate MCR hand at one table as the tournament keeps it: started, then one result.

The hub does not follow mahjong play tile by tile: an official enters the hand's result
(winner, fan total, discarder or self-draw; or a draw) when it ends. ``MahjongHand`` answers
the hub's `Hand` protocol (``hub.domain.games.base``), so statuses, corrections
(undo, reopen, void), snapshots, release and travellers serve mahjong unchanged; it has no
betting (``act`` refuses), no pot and no board. ``MahjongDeal`` is a deal's pieces (the
``DealtPieces`` protocol, as hold'em's dealt cards are): each seat's 13-tile hand (``hole``),
its 21 wall tiles and the deal's winds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import msgspec

from hub.domain.errors import Rejection
from hub.domain.games.mahjong import fan
from hub.domain.games.mahjong.events import McrHand
from hub.domain.games.mahjong.rules import (
    SEATS,
    MahjongResult,
    PaymentRule,
    Tile,
    Wall,
    check_result,
    payments,
    seat_winds,
)
from hub.domain.games.records import ActionRecord, Legal, Pot
from hub.domain.games.spec import HandSpec

# The one input of a mahjong hand, as the tournament journals it (seat, kind, amount):
# (0, "draw", None), (winner, "self_draw", fan), (winner, "discard:<seat>", fan); with the
# hand's tiles the amount is their text (`hand_text`), from which the fan is computed again.
DRAW = "draw"
SELF_DRAW = "self_draw"
DISCARD = "discard:"


@dataclass(frozen=True)
class MahjongDeal:
    """A deal's tiles and winds (it answers ``hub.domain.games.base.DealtPieces``): ``hole``
    seat -> its 13 hand tiles, ``walls`` seat -> its 21 wall tiles (draw order), ``winds``
    seat -> seat wind, ``prevalent`` the prevalent wind, ``east`` the East seat. No tile is
    shared: ``board`` is empty."""

    hole: Mapping[int, tuple[Tile, ...]]
    walls: Mapping[int, tuple[Tile, ...]]
    winds: Mapping[int, str]
    prevalent: str = "E"
    east: int = 1

    @property
    def board(self) -> tuple[Tile, ...]:
        return ()


def mahjong_deal(wall: Wall, east: int, prevalent: str) -> MahjongDeal:
    return MahjongDeal(
        hole={seat: wall.hand(seat) for seat in range(1, SEATS + 1)},
        walls={seat: wall.wall(seat) for seat in range(1, SEATS + 1)},
        winds=seat_winds(east),
        prevalent=prevalent,
        east=east,
    )


def no_betting(kind: str) -> str:
    """The refusal of a betting action (or declared winners) in mahjong, which has none."""
    return f"mahjong has no betting: send a 'result', not {kind!r}"


def mahjong_spec(east: int) -> HandSpec:
    """The spec of a mahjong hand: four seats, the East seat as the ``button``, no chips and
    no cards (the tiles are the tournament's ``dealt(deal)``, a ``MahjongDeal``)."""
    return HandSpec(seats=SEATS, button=east, small_blind=1, big_blind=1, cap=1)


def hand_text(result: MahjongResult) -> str:
    """A result's tiles as one input text: ``typed/winds/concealed/melds/winning/flags``,
    e.g. ``"10/SE/1m2m3m/chow:4s5s6s+pung:7z7z7z/5p/last_tile"`` (typed ``-``: none)."""
    assert result.hand is not None
    hand = result.hand
    melds = "+".join(f"{m.kind}:{''.join(m.tiles)}" for m in hand.melds)
    typed = "-" if result.typed is None else str(result.typed)
    parts = (typed, result.winds, "".join(hand.concealed), melds, hand.winning)
    return "/".join((*parts, "+".join(hand.flags)))


def _pairs(text: str) -> tuple[str, ...]:
    return tuple(text[i : i + 2] for i in range(0, len(text), 2))


def text_hand(text: str) -> tuple[int | None, str, McrHand]:
    """(typed fan, winds, hand) of a `hand_text` (``ValueError`` for anything else)."""
    typed, winds, concealed, melds, winning, flags = text.split("/")
    raw = {
        "concealed": _pairs(concealed),
        "melds": [
            {"kind": kind, "tiles": _pairs(tiles)}
            for kind, tiles in (m.split(":") for m in melds.split("+") if m)
        ],
        "winning": winning,
        "flags": [f for f in flags.split("+") if f],
    }
    try:
        hand = msgspec.convert(raw, McrHand, strict=False)
    except msgspec.ValidationError as exc:
        raise ValueError(f"not a mahjong hand: {text!r}") from exc
    if len(winds) != 2:
        raise ValueError(f"not a mahjong hand: {text!r}")
    return (None if typed == "-" else int(typed)), winds, hand


def counted(
    winner: int,
    discarder: int | None,
    hand: McrHand,
    winds: str,
    typed: int | None,
    rule: PaymentRule,
) -> MahjongResult:
    """The result of a win with its tiles: the fans computed (`fan.fans`; raises its
    refusals), the official's ``typed`` total kept beside them."""
    found = fan.fans(hand, discarder is None, winds[0], winds[1], rule.min_fan)
    return MahjongResult(winner, fan.total(found), discarder, hand, found, typed, winds)


def result_input(result: MahjongResult) -> tuple[int, str, int | str | None]:
    if result.winner is None:
        return (0, DRAW, None)
    amount: int | str | None = result.fan if result.hand is None else hand_text(result)
    if result.discarder is None:
        return (result.winner, SELF_DRAW, amount)
    return (result.winner, f"{DISCARD}{result.discarder}", amount)


def input_result(
    entry: tuple[int, str, int | str | None], rule: PaymentRule | None = None
) -> MahjongResult:
    """The result a journaled input records (``ValueError`` for anything else); a result with
    tiles has its fans computed again (``rule``: its minimum)."""
    seat, kind, value = entry
    if kind == DRAW:
        return MahjongResult(None)
    if kind == SELF_DRAW:
        discarder = None
    elif kind.startswith(DISCARD):
        discarder = int(kind[len(DISCARD) :])
    else:
        raise ValueError(f"not a mahjong result input: {entry!r}")
    if isinstance(value, str):  # the tiles (`hand_text`)
        typed, winds, hand = text_hand(value)
        return counted(seat, discarder, hand, winds, typed, rule or PaymentRule())
    return MahjongResult(seat, value, discarder)


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
        # A result whose tiles give another total than the official typed: held (street
        # "showdown", the hand disputed) until an official confirms it (`settle`).
        self.pending: MahjongResult | None = None

    @classmethod
    def replay_inputs(
        cls, spec: HandSpec, rule: PaymentRule, inputs: Iterable[tuple[int, str, int | str | None]]
    ) -> MahjongHand:
        """The hand its journaled inputs give (at most one result; ``Rejection`` otherwise)."""
        hand = cls(spec, rule)
        for entry in inputs:
            if not is_result_input(entry):
                raise Rejection("not_allowed", f"{entry[1]!r} is not a mahjong hand's input")
            hand.set_result(input_result(entry, rule))
        return hand

    def set_result(self, result: MahjongResult) -> None:
        """Record the hand's result (checked against the rule); the hand is complete, or
        waits at "showdown" for an official when the typed total is not the tiles' own."""
        if self.mahjong is not None or self.pending is not None:
            raise Rejection("hand_over", "this hand already has its result")
        check_result(result, self.rule, self.spec.seats)
        if result.disputed:
            self.pending = result
            self.street = "showdown"
            return
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
        raise Rejection("not_allowed", no_betting(kind))

    def act(self, seat: int, kind: str, amount: int | None = None) -> ActionRecord:
        self.verify(seat, kind, amount)
        raise AssertionError("unreachable")  # pragma: no cover

    def pots(self) -> list[Pot]:
        return []

    def awards(self, declared: Iterable[int] | None = None) -> list[tuple[Pot, tuple[int, ...]]]:
        return []

    def copy(self) -> MahjongHand:
        other = MahjongHand(self.spec, self.rule)
        if self.pending is not None:
            other.set_result(self.pending)
        if self.mahjong is not None:
            if self.mahjong.disputed:  # confirmed by an official
                other.set_result(self.mahjong)
                other.settle(None)
            else:
                other.set_result(self.mahjong)
        return other

    @property
    def entered(self) -> MahjongResult | None:
        """The result entered: counted, or held for an official."""
        return self.mahjong or self.pending

    def computed_winners(self) -> frozenset[int] | None:
        return None

    def if_ended_now(self) -> dict[int, int] | None:
        return None

    def settle(self, winners: Iterable[int] | None = None) -> dict[int, int]:
        """An official's confirmation of a held result: its tiles' total scores (``winners``,
        if named, must be its winner alone)."""
        held = self.pending
        if held is None:
            raise Rejection("not_allowed", "a mahjong hand ends with a 'result' event")
        if winners is not None and tuple(winners) != (held.winner,):
            raise Rejection(
                "bad_winner",
                f"the held result's winner is seat {held.winner}: confirm it without seats, "
                "or reopen the deal and enter the result again",
            )
        self.result = payments(held, self.rule, self.spec.seats)
        self.mahjong, self.pending = held, None
        self.street = "complete"
        return dict(self.result)
