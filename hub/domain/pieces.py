"""What a hold'em game deals and how its hands compare: cards, or the 48 piecepack tiles.

The hub plays hold'em with more than one set of pieces (``[tournament] game``): the 52 playing
cards, or the 48 tiles of Dual Piecepacks Poker (``hub.domain.piecepack``). Everything else,
the betting, dealing positions, chip-scores, release and feeds, is the same, so the engine asks
the game's ``PieceSet`` for the few things that differ, never ``if game == ...``: the full set
(deck orders are permutations of it), how to read a piece, who wins a showdown, the name of a
hand for overlays, and whether ``hub.domain.equity`` (card tables) can compute its chances.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from hub.domain import cards, evaluation, piecepack
from hub.domain.evaluation import PotLike

WinnersByPot = Callable[
    [Sequence[PotLike], Mapping[int, tuple[str, str]], Sequence[str], int, int],
    list[tuple[int, ...]],
]


@dataclass(frozen=True)
class PieceSet:
    """One game's pieces and hand ranking.

    ``winners_by_pot(pots, hole, board, button, seats)``: each pot's best eligible hands in
    odd-chip order (as ``evaluation.winners_by_pot``). ``equity``: False when the hub computes
    no chances for this game (payloads then carry ``equity: null``).
    """

    game: str
    pieces: tuple[str, ...]
    is_piece: Callable[[str], bool]
    parse_piece: Callable[[str], str]
    winners_by_pot: WinnersByPot
    hand_name: Callable[[Iterable[str], Iterable[str]], str]
    equity: bool

    @property
    def width(self) -> int:
        """Characters per piece code (2 for cards, 3 for tiles)."""
        return len(self.pieces[0])

    @property
    def max_seats(self) -> int:
        """Most seats one deck order can deal: two hole pieces each, 3 burns, 5 board."""
        return (len(self.pieces) - 8) // 2

    def parse_order(self, text: str | Iterable[str]) -> tuple[str, ...]:
        """Pieces from a list of texts or one string: pieces apart (whitespace or commas) in
        any spelling ``parse_piece`` reads, or codes run together (``"NbsAbs"``, cut every
        ``width`` characters; cards as ``cards.parse_cards``, which also reads ``10h``)."""
        if self is CARDS:
            return cards.parse_cards(text)
        if not isinstance(text, str):
            return tuple(self.parse_piece(piece) for piece in text)
        result: list[str] = []
        for piece in text.replace(",", " ").split():
            try:
                result.append(self.parse_piece(piece))
            except ValueError:
                if len(piece) % self.width:
                    raise
                run = range(0, len(piece), self.width)
                result.extend(self.parse_piece(piece[i : i + self.width]) for i in run)
        return tuple(result)


def _tile_winners(
    pots: Sequence[PotLike],
    hole: Mapping[int, tuple[str, str]],
    board: Sequence[str],
    button: int,
    seats: int,
) -> list[tuple[int, ...]]:
    """``evaluation.winners_by_pot`` for tiles: ``piecepack.best_of``, greater is stronger."""
    order = [(button + i) % seats + 1 for i in range(seats)]
    values = {s: piecepack.best_of((*hole[s], *board[:5])) for pot in pots for s in pot.eligible}
    result: list[tuple[int, ...]] = []
    for pot in pots:
        best = max(values[s] for s in pot.eligible)
        result.append(tuple(s for s in order if s in pot.eligible and values[s] == best))
    return result


def _tile_hand_name(hole: Iterable[str], board: Iterable[str]) -> str:
    """The category of the best five so far, e.g. ``"Group-flush three-of-a-kind"``; before
    five tiles are known, the pair pattern of those there are."""
    tiles = [*hole, *board]
    if len(tiles) >= 5:
        return piecepack.best_of(tiles).category.name
    ranks = [t[0] for t in tiles]
    return "one-pair" if len(set(ranks)) < len(ranks) else "no-pairs"


CARDS = PieceSet(
    game="holdem",
    pieces=cards.FULL_DECK,
    is_piece=cards.is_card,
    parse_piece=cards.parse_card,
    winners_by_pot=evaluation.winners_by_pot,
    hand_name=evaluation.hand_name,
    equity=True,
)

TILES = PieceSet(
    game="piecepack-holdem",
    pieces=piecepack.TILES,
    is_piece=piecepack.is_tile,
    parse_piece=piecepack.parse_tile,
    winners_by_pot=_tile_winners,
    hand_name=_tile_hand_name,
    # hub.domain.equity ranks run-outs with phevaluator's card tables; no such tables exist
    # for tiles, and best_of in Python (21 fives per hand) is too slow for every run-out on the
    # ingest path. No chances rather than wrong ones: payloads carry equity null.
    equity=False,
)

PIECE_SETS: dict[str, PieceSet] = {s.game: s for s in (CARDS, TILES)}


def piece_set(game: str) -> PieceSet:
    """The pieces of ``[tournament] game`` (``config.GAMES``)."""
    try:
        return PIECE_SETS[game]
    except KeyError:
        raise ValueError(f"no pieces for game {game!r}") from None


def piece_set_of(order: Sequence[str]) -> PieceSet:
    """The set a full deck order is a permutation of (``ValueError`` if none)."""
    for candidate in PIECE_SETS.values():
        if len(order) == len(candidate.pieces) and set(order) == set(candidate.pieces):
            return candidate
    raise ValueError("not a permutation of the 52 cards or of the 48 piecepack tiles")
