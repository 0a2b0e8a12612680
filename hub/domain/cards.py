"""Cards as canonical two-character strings: rank then suit, e.g. ``"Ah"``, ``"Td"``, ``"2c"``.

Plain strings keep cards cheap to hash, compare, journal and send to clients; this module is the
one place that knows how to read looser spellings (``"ah"``, ``"10h"``, ``"A♥"``) and how to
print them prettily for overlays and the command line.
"""

from __future__ import annotations

from collections.abc import Iterable

Card = str

RANKS = "23456789TJQKA"
SUITS = "cdhs"

FULL_DECK: tuple[Card, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)

_SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
_SYMBOL_SUITS = {symbol: suit for suit, symbol in _SUIT_SYMBOLS.items()}
_SYMBOL_SUITS.update({"♧": "c", "♢": "d", "♡": "h", "♤": "s"})


def parse_card(text: str) -> Card:
    """Read one card in any common spelling and return its canonical form.

    >>> parse_card(" ah ")
    'Ah'
    >>> parse_card("10h")
    'Th'
    >>> parse_card("Q♠")
    'Qs'
    """
    raw = text.strip()
    if len(raw) == 3 and raw[:2] == "10":
        raw = "T" + raw[2]
    if len(raw) != 2:
        raise ValueError(f"not a card: {text!r} (expected rank and suit, like 'Ah' or 'Td')")
    rank = raw[0].upper()
    suit = _SYMBOL_SUITS.get(raw[1], raw[1].lower())
    if rank not in RANKS:
        raise ValueError(f"not a card: {text!r} (rank {raw[0]!r} is not one of {RANKS})")
    if suit not in SUITS:
        raise ValueError(f"not a card: {text!r} (suit {raw[1]!r} is not one of {SUITS})")
    return rank + suit


def parse_cards(cards: str | Iterable[str]) -> tuple[Card, ...]:
    """Read several cards: a list of card texts, or one string such as ``"AhKd"`` or ``"Ah Kd"``.

    A string is split on whitespace and commas; each piece may hold several cards run together.

    >>> parse_cards("AhKd 10c")
    ('Ah', 'Kd', 'Tc')
    """
    if isinstance(cards, str):
        pieces = cards.replace(",", " ").split()
        result: list[Card] = []
        for piece in pieces:
            result.extend(_split_run(piece))
        return tuple(result)
    return tuple(parse_card(card) for card in cards)


def _split_run(piece: str) -> list[Card]:
    """Split ``"AhKd10c"`` into cards; "10" is the only three-character spelling."""
    cards: list[Card] = []
    i = 0
    while i < len(piece):
        width = 3 if piece.startswith("10", i) else 2
        cards.append(parse_card(piece[i : i + width]))
        i += width
    return cards


def is_card(text: str) -> bool:
    """True for a card in canonical form (no parsing: ``"ah"`` is not canonical)."""
    return len(text) == 2 and text[0] in RANKS and text[1] in SUITS


def rank_of(card: Card) -> str:
    """The rank character, one of ``RANKS``."""
    return card[0]


def suit_of(card: Card) -> str:
    """The suit character, one of ``SUITS``."""
    return card[1]


def format_card(card: Card) -> str:
    """A card for people: ``"Ah"`` becomes ``"A♥"``, ``"Td"`` becomes ``"10♦"``."""
    rank = "10" if card[0] == "T" else card[0]
    return rank + _SUIT_SYMBOLS[card[1]]


def format_cards(cards: Iterable[Card]) -> str:
    """Several cards for people, separated by spaces."""
    return " ".join(format_card(card) for card in cards)
