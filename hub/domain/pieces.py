"""What a hold'em game deals and how its hands compare: cards, or a game's own pieces.

The hub plays hold'em with more than one set of pieces (``[tournament] game``): the 52 playing
cards (here), or a set a game declares in its folder, e.g. the 48 tiles of Dual Piecepacks
Poker (``hub.domain.games.piecepack.pieces``). Which sets exist is the games registry's to say:
it adds each game's ``pieces`` to `PIECE_SETS` (`register`) as it lists the game.
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
    A game that brings a set of its own declares it in its folder and names it as its
    ``pieces`` (the piecepack tiles: ``hub.domain.games.piecepack.pieces``); the registry makes
    it known.
    """

    game: str
    pieces: tuple[str, ...]
    parse_order: Callable[[str | Iterable[str]], tuple[str, ...]]
    winners_by_pot: WinnersByPot
    equity: bool
    hand_name: Callable[[Sequence[str], Sequence[str]], str]
    is_piece: Callable[[str], bool]  # one piece's code, canonical ("Ah"; a tile's "Nbs")
    described: str  # the full set in a sentence ("52 cards")

    def holds(self, order: Sequence[str]) -> bool:
        """Is ``order`` a full deck order of this set (each of its pieces once)?"""
        return len(order) == len(self.pieces) and set(order) == set(self.pieces)

    def __reduce__(self) -> tuple[Callable[[str], PieceSet], tuple[str]]:
        """Unpickled as the very set of this process (code compares sets by identity: a hand
        written in a worker process is still of ``CARDS``)."""
        return (_registered, (self.game,))


CARDS = PieceSet(
    game="holdem",
    pieces=cards.FULL_DECK,
    parse_order=cards.parse_cards,
    winners_by_pot=evaluation.winners_by_pot,
    equity=True,
    hand_name=evaluation.hand_name,
    is_piece=cards.is_card,
    described="52 cards",
)

PIECE_SETS: dict[str, PieceSet] = {CARDS.game: CARDS}
"""Every piece set this process knows, by the game that declares it: the cards, then each
listed game's own (``hub.domain.games.registry`` `register`s the 48 tiles of piecepack hold'em,
a third party's set)."""


def register(pieces: PieceSet) -> PieceSet:
    """Make a game's own piece set known (the games registry calls this for each game's
    ``pieces``): a pickled set unpickles to it, and a refusal of an order names it."""
    PIECE_SETS[pieces.game] = pieces
    return pieces


def _registered(game: str) -> PieceSet:
    """The set named ``game`` in this process (what a pickled ``PieceSet`` unpickles to)."""
    return PIECE_SETS[game]


def not_a_permutation(pieces: PieceSet) -> ValueError:
    """The refusal of an order meant to be of ``pieces`` that is not each of them once: it
    names every set known (a deck file's line may be of any game's), ``pieces`` among them."""
    known = [*PIECE_SETS.values()]
    known += [] if any(s is pieces for s in known) else [pieces]
    described = " or of the ".join(s.described for s in known)
    return ValueError(f"not a permutation of the {described}")
