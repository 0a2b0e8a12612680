"""What a hold'em game deals and how its hands compare: cards, or the 48 piecepack tiles.

The hub plays hold'em with more than one set of pieces (``[tournament] game``): the 52 playing
cards, or the 48 tiles of Dual Piecepacks Poker (``hub.domain.games.piecepack.tiles``).
Everything else, the betting, dealing positions, chip-scores, release and feeds, is the same,
so the engine asks the game's ``PieceSet`` for the few things that differ (never which game
it is): the full set (deck orders are permutations of it), how to read an order, who wins a
showdown, and whether ``hub.domain.equity`` (card tables) can compute its chances.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from hub.domain import cards, evaluation
from hub.domain.evaluation import PotLike
from hub.domain.games.piecepack import tiles as piecepack

WinnersByPot = Callable[
    [Sequence[PotLike], Mapping[int, tuple[str, str]], Sequence[str], int, int],
    list[tuple[int, ...]],
]


@dataclass(frozen=True)
class PieceSet:
    """One game's pieces and hand ranking.

    ``parse_order``: pieces from a list of texts or one string (a deck order, as people or
    files write it; cards as ``cards.parse_cards``).
    ``winners_by_pot(pots, hole, board, button, seats)``: each pot's best eligible hands in
    odd-chip order (as ``evaluation.winners_by_pot``). ``hand_name(hole, board)``: the best
    hand named for television ("Flush, king high"; the showdown package). ``equity``: False
    when the hub computes no chances for this game (payloads then carry ``equity: null``).
    """

    game: str
    pieces: tuple[str, ...]
    parse_order: Callable[[str | Iterable[str]], tuple[str, ...]]
    winners_by_pot: WinnersByPot
    equity: bool
    hand_name: Callable[[Sequence[str], Sequence[str]], str]

    def __reduce__(self) -> tuple[Callable[[str], PieceSet], tuple[str]]:
        """Unpickled as the very set of this process (code compares sets by identity: a hand
        written in a worker process is still of ``CARDS``)."""
        return (_registered, (self.game,))


def _parse_tile_order(text: str | Iterable[str]) -> tuple[str, ...]:
    """Tiles from a list of texts or one string: tiles apart (whitespace or commas) in any
    spelling ``piecepack.parse_tile`` reads (``"N♠"``), or codes run together (``"NbsAbs"``,
    cut every three characters)."""
    if not isinstance(text, str):
        return tuple(piecepack.parse_tile(piece) for piece in text)
    result: list[str] = []
    for piece in text.replace(",", " ").split():
        try:
            result.append(piecepack.parse_tile(piece))
        except ValueError:
            if len(piece) % 3:
                raise
            result.extend(piecepack.parse_tile(piece[i : i + 3]) for i in range(0, len(piece), 3))
    return tuple(result)


def _tile_winners(
    pots: Sequence[PotLike],
    hole: Mapping[int, tuple[str, str]],
    board: Sequence[str],
    button: int,
    seats: int,
) -> list[tuple[int, ...]]:
    """``evaluation.winners_by_pot`` for tiles: ``piecepack.best_of``, greater is stronger."""
    values = {s: piecepack.best_of((*hole[s], *board[:5])) for pot in pots for s in pot.eligible}
    return evaluation.best_by_pot(pots, values, button, seats, max)


CARDS = PieceSet(
    game="holdem",
    pieces=cards.FULL_DECK,
    parse_order=cards.parse_cards,
    winners_by_pot=evaluation.winners_by_pot,
    equity=True,
    hand_name=evaluation.hand_name,
)

TILES = PieceSet(
    game="piecepack-holdem",
    pieces=piecepack.TILES,
    parse_order=_parse_tile_order,
    winners_by_pot=_tile_winners,
    # hub.domain.equity ranks run-outs with phevaluator's card tables; no such tables exist
    # for tiles, and best_of in Python (21 fives per hand) is too slow for every run-out on the
    # ingest path. No chances rather than wrong ones: payloads carry equity null.
    equity=False,
    hand_name=lambda hole, board: piecepack.hand_name((*hole, *board[:5])),
)

PIECE_SETS: dict[str, PieceSet] = {s.game: s for s in (CARDS, TILES)}


def _registered(game: str) -> PieceSet:
    """The set named ``game`` in this process (what a pickled ``PieceSet`` unpickles to)."""
    return PIECE_SETS[game]


def piece_set_of(order: Sequence[str]) -> PieceSet:
    """The set a full deck order is a permutation of (``ValueError`` if none)."""
    for candidate in PIECE_SETS.values():
        if len(order) == len(candidate.pieces) and set(order) == set(candidate.pieces):
            return candidate
    raise ValueError("not a permutation of the 52 cards or of the 48 piecepack tiles")
