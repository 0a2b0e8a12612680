"""Dual Piecepacks Poker (seed 004): the 48 tiles, the 17 hand categories and their order.

A second tile set for the hub's hold'em: 6 ranks (N, A, 2, 3, 4, 5) in 8 suits, the suits in
2 groups (black, white) of 4 links (spades, hearts, diamonds, clubs). A hand is a flush of the
finest kind its five tiles share (suit, else link, else group, else none) combined with its
pair pattern; the seed ranks the 17 combinations that can occur by rarity, so no-pairs beat
one-pair. Pure and small on purpose: a game module deals, evaluates and draws with it.

Tiles are three-character codes, rank then group then link: ``"Nbs"`` is the null of black
spades, ``"5wh"`` the five of white hearts. Hands compare by ``HandValue`` (greater is
stronger, so ``max`` picks the winner); ties inside a category go by ranks only, high order
2 < 3 < 4 < 5 < A < N (the seed: in hold'em nulls and aces always play high).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

Tile = str

RANKS = "NA2345"  # the seed's names, in its low order
HIGH_ORDER = "2345AN"  # tie-breaks: later is higher
GROUPS = "bw"  # black (♠ ♥ ♦ ♣) and white (♤ ♡ ♢ ♧), the seed's two french-suited packs
LINKS = "shdc"  # spades, hearts, diamonds, clubs: one suit of each group per link
SUITS: tuple[str, ...] = tuple(g + link for g in GROUPS for link in LINKS)

TILES: tuple[Tile, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)

GROUP_NAMES = {"b": "black", "w": "white"}
LINK_NAMES = {"s": "spades", "h": "hearts", "d": "diamonds", "c": "clubs"}
RANK_NAMES = {"N": "null", "A": "ace", "2": "two", "3": "three", "4": "four", "5": "five"}
_SYMBOLS = {
    "bs": "♠",
    "bh": "♥",
    "bd": "♦",
    "bc": "♣",
    "ws": "♤",
    "wh": "♡",
    "wd": "♢",
    "wc": "♧",
}
_SUIT_OF_SYMBOL = {symbol: suit for suit, symbol in _SYMBOLS.items()}
_HIGH = {rank: i for i, rank in enumerate(HIGH_ORDER)}

# Flush kinds, finest first, and pair patterns (tile counts per rank, largest first).
SUIT_FLUSH, LINK_FLUSH, GROUP_FLUSH, NO_FLUSH = "SF", "LF", "GF", "NF"
PATTERNS = {
    "5K": (5,),
    "4K": (4, 1),
    "FH": (3, 2),
    "3K": (3, 1, 1),
    "2P": (2, 2, 1),
    "1P": (2, 1, 1, 1),
    "0P": (1, 1, 1, 1, 1),
}
_FLUSH_NAMES = {"SF": "Suit-flush", "LF": "Link-flush", "GF": "Group-flush", "NF": "No-flush"}
_PATTERN_NAMES = {
    "5K": "five-of-a-kind",
    "4K": "four-of-a-kind",
    "FH": "full-house",
    "3K": "three-of-a-kind",
    "2P": "two-pairs",
    "1P": "one-pair",
    "0P": "no-pairs",
}


@dataclass(frozen=True)
class Category:
    """One of the 17 hand categories; ``abbreviation`` is the seed's, e.g. ``"GF 4K"``."""

    abbreviation: str

    @property
    def flush(self) -> str:
        """``"SF"``, ``"LF"``, ``"GF"`` or ``"NF"``."""
        return self.abbreviation[:2]

    @property
    def pattern(self) -> str:
        """``"0P"``, ``"1P"``, ``"2P"``, ``"3K"``, ``"FH"``, ``"4K"`` or ``"5K"``."""
        return self.abbreviation[3:]

    @property
    def name(self) -> str:
        """For people: ``"Group-flush four-of-a-kind"``."""
        return f"{_FLUSH_NAMES[self.flush]} {_PATTERN_NAMES[self.pattern]}"

    @property
    def strength(self) -> int:
        """Position from the bottom: 16 for ``SF 0P`` down to 0 for ``NF 1P``."""
        return _STRENGTH[self]


# The seed's ranking of hands, best first (its table "Ranking of hands", rarest first).
CATEGORIES: tuple[Category, ...] = tuple(
    Category(abbreviation)
    for abbreviation in (
        "SF 0P",
        "GF 4K",
        "NF 5K",
        "LF 2P",
        "LF 0P",
        "GF FH",
        "LF 1P",
        "GF 3K",
        "GF 0P",
        "NF 4K",
        "GF 2P",
        "NF FH",
        "GF 1P",
        "NF 0P",
        "NF 3K",
        "NF 2P",
        "NF 1P",
    )
)
_BY_KIND = {(c.flush, PATTERNS[c.pattern]): c for c in CATEGORIES}
_STRENGTH = {c: len(CATEGORIES) - 1 - i for i, c in enumerate(CATEGORIES)}


@dataclass(frozen=True, order=True)
class HandValue:
    """A five-tile hand's worth: compares by category, then by ``ranks``; suits never count.

    ``ranks`` lists the distinct ranks, most tiles first and higher first among equals (full
    house: the three, then the two; two pairs: high pair, low pair, kicker; no-pairs: high to
    low). Equal values split a pot.
    """

    key: tuple[int, ...] = field(repr=False)
    category: Category = field(compare=False)
    ranks: tuple[str, ...] = field(compare=False)
    tiles: tuple[Tile, ...] = field(compare=False)


def parse_tile(text: str) -> Tile:
    """Read a tile: the code in any case (``"nBS"``), or a rank and a suit symbol in either
    order (``"N♠"``, or ``"♡5"`` as the seed writes them).

    >>> parse_tile("n♡")
    'Nwh'
    >>> parse_tile("♧A")
    'Awc'
    """
    raw = text.strip()
    if len(raw) == 2 and raw[0] in _SUIT_OF_SYMBOL:
        raw = raw[1] + raw[0]
    if len(raw) == 2 and raw[1] in _SUIT_OF_SYMBOL:
        raw = raw[0] + _SUIT_OF_SYMBOL[raw[1]]
    tile = raw[:1].upper() + raw[1:].lower()
    if not is_tile(tile):
        raise ValueError(
            f"not a piecepack tile: {text!r} (expected rank {'/'.join(RANKS)}, group b/w, "
            "link s/h/d/c, like 'Nbs' or '5wh')"
        )
    return tile


def parse_tiles(text: str) -> tuple[Tile, ...]:
    """Several tiles separated by spaces or commas: ``"Nbs, 5wh"`` or ``"♠2 ♠3 ♠4"``.

    >>> parse_tiles("(♧A, ♣N)")
    ('Awc', 'Nbc')
    """
    return tuple(parse_tile(piece) for piece in text.strip("()").replace(",", " ").split())


def is_tile(text: str) -> bool:
    """True for a tile in canonical form (``"Nbs"``; ``"nbs"`` is not canonical)."""
    return len(text) == 3 and text[0] in RANKS and text[1] in GROUPS and text[2] in LINKS


def rank_of(tile: Tile) -> str:
    """``"N"``, ``"A"``, ``"2"`` ... ``"5"``."""
    return tile[0]


def suit_of(tile: Tile) -> str:
    """Group and link: ``"bs"`` (black spades) ... ``"wc"`` (white clubs)."""
    return tile[1:]


def group_of(tile: Tile) -> str:
    """``"b"`` or ``"w"``."""
    return tile[1]


def link_of(tile: Tile) -> str:
    """``"s"``, ``"h"``, ``"d"`` or ``"c"``."""
    return tile[2]


def format_tile(tile: Tile) -> str:
    """A tile for people, as the seed writes it (rank then suit symbol): ``"Nbs"`` -> ``"N♠"``."""
    return tile[0] + _SYMBOLS[tile[1:]]


def format_tiles(tiles: Iterable[Tile]) -> str:
    """Several tiles for people, separated by spaces."""
    return " ".join(format_tile(tile) for tile in tiles)


def flush_kind(suits: Iterable[str]) -> str:
    """The finest flush the suits (``"bs"``, ``"wh"`` ...) of a hand share: SF, LF, GF or NF."""
    present = set(suits)
    if len(present) == 1:
        return SUIT_FLUSH
    if len({suit[1] for suit in present}) == 1:
        return LINK_FLUSH
    if len({suit[0] for suit in present}) == 1:
        return GROUP_FLUSH
    return NO_FLUSH


def classify(rank_counts: Iterable[int], suits: Iterable[str]) -> Category:
    """The category of five tiles from their count per rank and the suits they show.

    Both ``evaluate5`` and ``category_counts`` decide here, so the counts are the evaluator's.
    """
    pattern = tuple(sorted((n for n in rank_counts if n), reverse=True))
    kind = (flush_kind(suits), pattern)
    if kind not in _BY_KIND:  # e.g. a suit-flush pair: only a repeated tile makes one
        raise ValueError(f"no category for {kind} (five distinct tiles never make it)")
    return _BY_KIND[kind]


def evaluate5(tiles: Sequence[Tile]) -> HandValue:
    """The value of exactly five distinct tiles."""
    hand = tuple(tiles)
    if len(hand) != 5 or len(set(hand)) != 5 or not all(is_tile(t) for t in hand):
        raise ValueError(f"expected five distinct piecepack tiles, got {list(hand)}")
    return _value(hand)


def best_of(tiles: Iterable[Tile]) -> HandValue:
    """The best five of five to seven tiles (hold'em: two hole tiles and the board).

    >>> best_of(parse_tiles("Nbs Nwh 2bd 3wc 4bh 5ws Abc")).ranks  # no-pairs beat the pair
    ('N', 'A', '5', '4', '3')
    """
    pool = tuple(tiles)
    if not 5 <= len(pool) <= 7 or len(set(pool)) != len(pool) or not all(map(is_tile, pool)):
        raise ValueError(f"expected five to seven distinct piecepack tiles, got {list(pool)}")
    return _value(max(combinations(pool, 5), key=_key))


def hand_name(tiles: Iterable[Tile]) -> str:
    """The best five of five to seven tiles, named for television: the category, then its
    top rank ("Group-flush full-house, fives"; "No-flush no-pairs, null high").

    >>> hand_name(parse_tiles("Nbs Nwh 2bd 3wc 4bh 5ws Abc"))
    'No-flush no-pairs, null high'
    """
    value = best_of(tiles)
    top = RANK_NAMES[value.ranks[0]]
    return (
        f"{value.category.name}, {top + ' high' if value.category.pattern == '0P' else top + 's'}"
    )


def _key(hand: tuple[Tile, ...]) -> tuple[int, ...]:
    """``HandValue.key`` alone: what ``best_of`` compares 21 times."""
    counts = Counter(t[0] for t in hand)
    category = classify(counts.values(), (t[1:] for t in hand))
    ranks = sorted(counts, key=lambda r: (counts[r], _HIGH[r]), reverse=True)
    return (category.strength, *(_HIGH[r] for r in ranks))


def _value(hand: tuple[Tile, ...]) -> HandValue:
    key = _key(hand)
    return HandValue(key, CATEGORIES[-1 - key[0]], tuple(HIGH_ORDER[i] for i in key[1:]), hand)


def category_counts(tiles: Sequence[Tile] = TILES) -> dict[Category, int]:
    """How many five-tile hands of ``tiles`` fall in each category, best category first.

    Every one of the C(n, 5) hands is enumerated; each is summarised by its signature (tiles per
    rank and per suit, as base-8 digits of one integer, since a hand's category depends on
    nothing else), so ``classify`` runs once per signature instead of once per hand:
    C(48, 5) = 1,712,304 hands in about 2 s of CPU.
    """
    if len(set(tiles)) != len(tiles) or not all(map(is_tile, tiles)):
        raise ValueError(f"expected distinct piecepack tiles, got {list(tiles)}")
    digit = {rank: 8**i for i, rank in enumerate(RANKS)}
    digit.update({suit: 8 ** (len(RANKS) + i) for i, suit in enumerate(SUITS)})
    weights = [digit[rank_of(t)] + digit[suit_of(t)] for t in tiles]
    tally = Counter(map(sum, combinations(weights, 5)))
    counts = dict.fromkeys(CATEGORIES, 0)
    for signature, hands in tally.items():
        digits = [signature // 8**i % 8 for i in range(len(RANKS) + len(SUITS))]
        shown = [suit for suit, n in zip(SUITS, digits[len(RANKS) :], strict=True) if n]
        counts[classify(digits[: len(RANKS)], shown)] += hands
    return counts
