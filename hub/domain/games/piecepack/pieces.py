"""The 48 tiles of Dual Piecepacks Poker as the hub's hold'em deals them: a `PieceSet`
(``hub.domain.pieces``) of the tile codes of ``tiles``, how an order is read, who wins a
showdown, each hand named for television. The game's declaration (``game.py``) names it as
its ``pieces``, which is how the hub knows it (``hub.domain.games.registry``): a deck file's
order that opens with a tile is read as tiles (``PieceDecks.order_from_text``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from hub.domain import evaluation
from hub.domain.evaluation import PotLike
from hub.domain.games.piecepack import tiles as piecepack
from hub.domain.pieces import PieceSet


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
    is_piece=piecepack.is_tile,
    described="48 piecepack tiles",
)
