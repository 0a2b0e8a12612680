"""What a hand needs before its first action, whatever the game (the `Hand` protocol's ``spec``,
``base.py``): ``HandSpec`` (seats, button, blinds, cap, betting, the cards when known, the rules
it follows) and the dealt cards it may read. Shared by every game (hold'em's betting machine,
mahjong's and RPS Poker's hands, a third party's) and read by the engine; hold'em's own
declaration is ``holdem/game.py``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from hub.domain.pieces import CARDS, PieceSet

RULES = ("standard", "pokerkit")
# Who posts the blinds and who opens: "holdem" (blinds left of the button, pre-flop opened left
# of the big blind) or "rps" (RPS Poker: blinds the two seats right of the dealer, so the order
# goes small blind, big blind, dealer; the seat left of the dealer opens every round).
ORDERS = ("holdem", "rps")
# How a split pot's odd chips go: "one-at-a-time" (the tournament's rule: each pot's odd chips
# one at a time to its winners from the left of the button) or "all-to-first" (PokerKit's: pots
# of the same remaining players merged, then all the odd chips to the first winner left of it).
ODD_CHIPS = ("one-at-a-time", "all-to-first")


class KnownCards(Protocol):
    """The dealt cards of a hold'em hand: two hole cards a seat, the board (``dealing.Dealt``
    satisfies it, as a PHH file's cards do; another game's pieces, ``base.DealtPieces``, do
    not: ``holdem.game.holdem_cards`` narrows a deal to hold'em's)."""

    @property
    def hole(self) -> Mapping[int, tuple[str, str]]: ...

    @property
    def board(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class HandSpec:
    """What a hand needs before its first action.

    ``stacks`` (one per seat, seat 1 first) exists for hands where players start unequal (PHH
    imports, rule tests); ``None`` means every seat starts with exactly ``cap`` chips.
    ``antes`` (one per seat, seat 1 first; ``None``: no antes, as in the tournament),
    ``dead_antes``, ``min_bet`` (``None``: the big blind), ``rules`` and ``odd_chips`` (``None``:
    as ``rules`` have it) serve hands from elsewhere (PHH files); the tournament leaves them at
    their defaults. ``pieces``: what
    ``cards`` are and who wins a showdown with them (``hub.domain.pieces``; the game's).
    """

    seats: int
    button: int
    small_blind: int
    big_blind: int
    cap: int
    pot_limit: bool = True
    cards: KnownCards | None = None
    stacks: tuple[int, ...] | None = None
    antes: tuple[int, ...] | None = None
    dead_antes: bool = False
    min_bet: int | None = None
    rules: str = "standard"
    pieces: PieceSet = CARDS
    order: str = "holdem"
    limit: bool = False  # fixed-limit betting (``pot_limit`` is then ignored)
    # A fold with checking free is taken (a cash game's, as PHH files record and PokerKit plays
    # them); a tournament console's is refused ("check instead"), as the rules say.
    free_fold: bool = False
    odd_chips: str | None = None  # one of ODD_CHIPS; None: ``odd_chip_rule`` by ``rules``

    def __post_init__(self) -> None:
        if self.seats < 2:
            raise ValueError(f"a hand needs at least 2 seats, not {self.seats}")
        if not 1 <= self.button <= self.seats:
            raise ValueError(f"button {self.button} is not a seat of 1..{self.seats}")
        if not 0 < self.small_blind <= self.big_blind:
            raise ValueError("blinds must satisfy 0 < small blind <= big blind")
        if self.cap <= 0:
            raise ValueError("the cap must be positive")
        if self.stacks is not None and (len(self.stacks) != self.seats or min(self.stacks) <= 0):
            raise ValueError("stacks needs one positive stack per seat")
        if self.antes is not None and (len(self.antes) != self.seats or min(self.antes) < 0):
            raise ValueError("antes needs one ante (0 or more) per seat")
        if self.min_bet is not None and self.min_bet <= 0:
            raise ValueError("the minimum bet must be positive")
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {self.order!r}")
        if self.order == "rps" and self.seats < 3:
            raise ValueError("RPS Poker needs at least 3 seats (two blinds and the dealer)")
        if self.rules not in RULES:
            raise ValueError(f"rules must be one of {', '.join(RULES)}, not {self.rules!r}")
        if self.odd_chips is not None and self.odd_chips not in ODD_CHIPS:
            raise ValueError(
                f"odd_chips must be one of {', '.join(ODD_CHIPS)}, not {self.odd_chips!r}"
            )
        if self.cards is not None:
            # Cards from a DeckOrder are distinct by construction; hand-written ones (PHH
            # imports, tests) are not, and a duplicate would rank hands that cannot exist.
            seen: set[str] = set()
            for seat in sorted(self.cards.hole):
                for card in self.cards.hole[seat]:
                    if card in seen:
                        raise ValueError(f"card {card} dealt twice (hole cards of seat {seat})")
                    seen.add(card)
            for card in self.cards.board:
                if card in seen:
                    raise ValueError(f"card {card} dealt twice (board)")
                seen.add(card)

    def starting_stack(self, seat: int) -> int:
        return self.cap if self.stacks is None else self.stacks[seat - 1]

    def ante(self, seat: int) -> int:
        return 0 if self.antes is None else self.antes[seat - 1]

    @property
    def smallest_bet(self) -> int:
        """The least a bet or raise adds (an all-in for less aside)."""
        return self.big_blind if self.min_bet is None else self.min_bet

    @property
    def odd_chip_rule(self) -> str:
        """How split pots are paid: ``odd_chips``, else PokerKit's by its rules, else ours."""
        if self.odd_chips is not None:
            return self.odd_chips
        return "all-to-first" if self.rules == "pokerkit" else "one-at-a-time"

    @property
    def increment_floor(self) -> int:
        """The increment to beat when a street opens: the big blind, or 0 by PokerKit's rules."""
        return 0 if self.rules == "pokerkit" else self.big_blind
