"""Standard hold'em dealing: which card of a deck order lands where.

The same for the 48 tiles of piecepack hold'em: a tile is dealt where a card would be.

Seats are numbered ``1..seats`` clockwise. The dealer gives two rounds of one card each, starting
with the seat left of the button (``button + 1``, wrapping) and ending with the button; then burns
one card and turns the three-card flop, burns and turns the turn, burns and turns the river.
Index 0 of the deck order is the top card. The hub uses this to know every seat's hole cards and
the board without anyone typing a card in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hub.domain.cards import Card
from hub.domain.deck import DeckOrder

MAX_SEATS = 22  # 2 * 22 hole cards + 3 burns + 5 board cards = 52


@dataclass(frozen=True)
class Dealt:
    """Every seat's two hole cards (in the order dealt) and the five board cards."""

    hole: Mapping[int, tuple[Card, Card]]
    board: tuple[Card, ...]

    @property
    def flop(self) -> tuple[Card, ...]:
        return self.board[:3]

    @property
    def turn(self) -> Card:
        return self.board[3]

    @property
    def river(self) -> Card:
        return self.board[4]


def deal_sequence(button: int, seats: int) -> list[int]:
    """Seats in the order they receive a card in one round: left of the button to the button."""
    if not 2 <= seats <= MAX_SEATS:
        raise ValueError(f"hold'em is dealt to 2..{MAX_SEATS} seats, not {seats}")
    if not 1 <= button <= seats:
        raise ValueError(f"button {button} is not a seat of 1..{seats}")
    return [(button + offset - 1) % seats + 1 for offset in range(1, seats + 1)]


def deal(order: DeckOrder, button: int, seats: int) -> Dealt:
    """Deal ``order`` to ``seats`` seats with the button at ``button``.

    With 6 seats and the button at 6, seat 1 gets cards 0 and 6, seat 6 (the button) cards 5
    and 11; cards 12, 16 and 18 are burnt; the board is cards 13, 14, 15, 17 and 19.
    """
    sequence = deal_sequence(button, seats)
    cards = order.cards
    if 2 * seats + 8 > len(cards):  # 48 tiles deal to 20 seats at most
        raise ValueError(f"{len(cards)} pieces cannot be dealt to {seats} seats")
    hole = {seat: (cards[i], cards[i + seats]) for i, seat in enumerate(sequence)}
    top = 2 * seats  # next card after the hole cards: the first burn
    board = (cards[top + 1], cards[top + 2], cards[top + 3], cards[top + 5], cards[top + 7])
    return Dealt(hole=dict(sorted(hole.items())), board=board)


STREET_CARDS = (("flop", 3), ("turn", 1), ("river", 1))


def card_position(button: int, seats: int, seat: int, which: int) -> int:
    """Index in the deck order of ``seat``'s ``which``-th hole card (1 or 2)."""
    return (which - 1) * seats + deal_sequence(button, seats).index(seat)


def redeal(
    order: DeckOrder,
    button: int,
    seats: int,
    *,
    exposed: tuple[int, int] | None = None,
    early: frozenset[str] = frozenset(),
) -> Dealt:
    """The cards in play after dealer errors, by the home-tournament procedure (Robert's Rules)
    with the stub kept in order where that procedure reshuffles it (a duplicate deck order is
    never reshuffled, and the cards already seen stay out of play).

    ``exposed = (seat, which)``: that hole card was exposed by the dealer (not the first or
    second card of the deal: that is a misdeal). It is replaced by the top card of the stub once
    the hole cards are dealt, and the exposed card serves as the burn before the flop.
    ``early``: streets whose cards were turned before the betting before them closed:

    * ``flop``: the seen flop goes out of play; a new flop is dealt from the stub without a burn;
    * ``turn``: the seen turn goes out of play; burn and turn the next card in its place, then
      the river is the next card without a burn;
    * ``river``: the seen river goes out of play; the next card is the river, without a burn.

    ``ValueError`` when the deck runs out (more seats than these replacements leave cards for).
    """
    cards = order.cards
    hole = {seat: list(pair) for seat, pair in deal(order, button, seats).hole.items()}
    top = 2 * seats
    burn_is_exposed = False
    if exposed is not None:
        seat, which = exposed
        hole[seat][which - 1] = cards[top]
        top += 1
        burn_is_exposed = True
    board: list[Card] = []
    burn_next = True
    for street, count in STREET_CARDS:
        if burn_next and not burn_is_exposed:
            top += 1
        burn_is_exposed = False
        burn_next = True
        if street in early:
            top += count  # the early cards go out of play
            if street == "turn":  # burn, and turn the would-be river in the turn's place;
                top += 1  # the river then comes without a burn
                burn_next = False
            # a new flop or river comes without a burn
        if top + count > len(cards):
            raise ValueError(f"the deck runs out dealing the {street}")
        board.extend(cards[top : top + count])
        top += count
    pairs = {s: (pair[0], pair[1]) for s, pair in sorted(hole.items())}
    return Dealt(hole=pairs, board=tuple(board))
