"""Deck orders: the secret at the heart of duplicate poker.

The same deck order is dealt at every table of a group, so the orders must come from a
cryptographically secure generator (``secrets``), stay encrypted at rest (see ``hub.files.decks``)
and be committed to publicly before play with a SHA-256 hash anyone can recompute afterwards.
Seeded orders exist only for rehearsals and tests, and say so (``rehearsal=True``).
An order is a permutation of a game's piece set (``hub.domain.pieces``): the 52 cards, or a set
a game declares in its folder (the 48 piecepack tiles). Every function here, and `DeckOrder`
itself, is told the set (``pieces``, cards by default): the game's, or the one a deck file's
line opens with (``hub.domain.games.registry.order_from_text`` asks the games); none of them
guesses it from the order.
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import InitVar, dataclass
from typing import ClassVar

from hub.domain.cards import FULL_DECK, Card, is_card
from hub.domain.pieces import CARDS, PieceSet, not_a_permutation

COMMITMENT_HEADER = "duplicast-decks-v1"


@dataclass(frozen=True)
class DeckOrder:
    """A full deck, top card first (index 0 is dealt first): 52 cards, or 48 tiles.

    ``pieces``: the set it is an order of (checked here, not kept: cards by default).
    """

    described: ClassVar[str] = "card decks"  # orders of this kind, in a sentence
    cards: tuple[Card, ...]
    rehearsal: bool = False
    pieces: InitVar[PieceSet] = CARDS

    def __post_init__(self, pieces: PieceSet) -> None:
        if pieces is not CARDS:  # a game's own pieces (48 tiles): each of them once
            if not pieces.holds(self.cards):
                raise not_a_permutation(pieces)
            return
        if len(self.cards) != len(FULL_DECK):
            raise ValueError(f"a deck order has 52 cards, got {len(self.cards)}")
        bad = [card for card in self.cards if not is_card(card)]
        if bad:
            raise ValueError(f"not a canonical card in deck order: {bad[0]!r}")
        seen: set[str] = set()
        for card in self.cards:
            if card in seen:
                raise ValueError(f"card {card} twice in deck order")
            seen.add(card)

    def __repr__(self) -> str:
        # Never print a real deck order by accident (logs, tracebacks).
        if self.rehearsal:
            return f"DeckOrder({' '.join(self.cards)}, rehearsal=True)"
        return "DeckOrder(<secret>)"


def random_deck_order(rng: random.Random | None = None, pieces: PieceSet = CARDS) -> DeckOrder:
    """A shuffled deck; by default from the operating system's CSPRNG (``secrets``).

    A caller-supplied generator that is not a ``random.SystemRandom`` (e.g. a seeded
    ``random.Random``) is reproducible, so its orders are marked ``rehearsal=True``.
    """
    generator = rng if rng is not None else secrets.SystemRandom()
    cards = list(pieces.pieces)
    generator.shuffle(cards)
    return DeckOrder(tuple(cards), not isinstance(generator, random.SystemRandom), pieces)


def random_deck_orders(
    deals: int, rng: random.Random | None = None, pieces: PieceSet = CARDS
) -> dict[int, DeckOrder]:
    """One CSPRNG deck order per deal, numbered ``1..deals``.

    As with ``random_deck_order``, a non-CSPRNG ``rng`` yields ``rehearsal=True`` orders.
    """
    generator = rng if rng is not None else secrets.SystemRandom()
    return {deal: random_deck_order(generator, pieces) for deal in range(1, deals + 1)}


def seeded_deck_order(seed: int | str, pieces: PieceSet = CARDS) -> DeckOrder:
    """A reproducible deck order for rehearsals and tests; marked ``rehearsal=True``."""
    cards = list(pieces.pieces)
    random.Random(f"duplicast-rehearsal:{seed}").shuffle(cards)
    return DeckOrder(tuple(cards), True, pieces)


def seeded_deck_orders(
    seed: int | str, deals: int, pieces: PieceSet = CARDS
) -> dict[int, DeckOrder]:
    """Rehearsal deck orders for deals ``1..deals``.

    Deal ``d`` gets ``seeded_deck_order(f"{seed}:{d}")``.
    """
    return {deal: seeded_deck_order(f"{seed}:{deal}", pieces) for deal in range(1, deals + 1)}


def deck_order_from_cards(
    cards: str | Iterable[str], rehearsal: bool = False, pieces: PieceSet = CARDS
) -> DeckOrder:
    """A deck order from card texts in any spelling ``parse_card`` accepts (or one string);
    a game's own pieces with ``pieces`` (its ``Game.pieces``: the piecepack tiles)."""
    return DeckOrder(pieces.parse_order(cards), rehearsal, pieces)


def commitment_text(orders: Mapping[int, DeckOrder]) -> str:
    """The canonical text that ``commitment`` hashes (see there)."""
    lines = [COMMITMENT_HEADER]
    lines.extend(f"{deal}:{''.join(orders[deal].cards)}" for deal in sorted(orders))
    return "\n".join(lines) + "\n"


def commitment(orders: Mapping[int, DeckOrder]) -> str:
    """SHA-256 (lowercase hex) of the deck orders, to publish before play.

    Canonical form, UTF-8 encoded, every line ending in ``\\n``: first the line
    ``duplicast-decks-v1``, then one line per deal in ascending deal number,
    ``<deal>:<the 52 cards concatenated, top card first>`` with cards in canonical form
    (rank ``23456789TJQKA`` then suit ``cdhs``), e.g. ``1:AhKd2c...``; for piecepack hold'em
    the 48 tile codes concatenated (rank ``NA2345``, group ``bw``, link ``shdc``), e.g.
    ``1:Nbs5whAwc...``. After the session anyone
    holding the revealed orders can check with::

        printf 'duplicast-decks-v1\\n1:AhKd...\\n2:...\\n' | sha256sum

    Each order carries about 225 bits of entropy, so no salt is needed to keep the hash from
    being inverted.
    """
    return hashlib.sha256(commitment_text(orders).encode("utf-8")).hexdigest()
