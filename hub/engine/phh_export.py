"""Every finished hand of the tournament as PHH: what ``duplicast export --phh`` and
``/api/export/phh`` write (docs/phh.md).

``collect`` runs where the engine lives and only copies what a hand needs (cheap, so it can run
on the ingest's event loop); ``render`` does the writing (PokerKit plays each hand), which the
server runs off the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hub.domain.games.spec import HandSpec
from hub.domain.phh import write_phh
from hub.domain.pieces import CARDS
from hub.engine.tournament import COMPLETE, TournamentState


@dataclass(frozen=True)
class ExportedHand:
    """One completed hand, copied out of the tournament state."""

    table: int
    deal: int
    group: str
    spec: HandSpec
    inputs: tuple[tuple[int, str, int | None], ...]
    result: dict[int, int]
    players: tuple[str, ...]
    teams: tuple[str, ...]

    @property
    def name(self) -> str:
        """File name: ``table-03-deal-07.phh``."""
        return f"table-{self.table:02d}-deal-{self.deal:02d}.phh"


@dataclass(frozen=True)
class Rendered:
    hands: list[tuple[ExportedHand, str]]  # each hand and its PHH text
    skipped: list[tuple[ExportedHand, str]]  # each hand PHH cannot hold, and why


def collect(
    state: TournamentState, released: Callable[[str, int], bool] | None = None
) -> list[ExportedHand]:
    """Every complete hand at every table (void and disputed hands have no play to write),
    table by table in the order played; ``released(group, deal)``: only the deals it allows."""
    config = state.config
    out: list[ExportedHand] = []
    if not state.game.phh:  # PHH is a poker format of cards: not mahjong's, not throws
        return out
    for number in sorted(state.tables):
        table = state.tables[number]
        for deal in table.order:
            h = table.hands.get(deal)
            if h is None or h.status != COMPLETE or h.hand.result is None:
                continue
            if released is not None and not released(table.group, deal):
                continue
            # The deal's own seating: a later stage's tables hold the teams its fill placed
            # there, not a draw (the tournament file draws only the first stage).
            seats = range(1, config.seats + 1)
            holders = [x for s in seats if (x := state.seat_holder(number, s, deal)) is not None]
            if len(holders) != config.seats:  # pragma: no cover - a played deal is seated
                continue
            out.append(
                ExportedHand(
                    table=number,
                    deal=deal,
                    group=table.group,
                    spec=h.spec,
                    inputs=tuple(h.inputs),  # type: ignore[arg-type]  # hold'em: no throws
                    result=dict(h.hand.result),
                    players=tuple(player for _, player in holders),
                    teams=tuple(team.id for team, _ in holders),
                )
            )
    return out


def render(hands: Iterable[ExportedHand], event: str | None = None) -> Rendered:
    """Each hand as PHH text; a hand settled at a showdown whose cards the hub never knew
    (no deck orders loaded), or played with piecepack tiles, cannot be written and is returned
    with the reason."""
    written: list[tuple[ExportedHand, str]] = []
    skipped: list[tuple[ExportedHand, str]] = []
    for h in hands:
        if h.spec.pieces is not CARDS:  # PHH and PokerKit know only the 52 cards
            skipped.append((h, f"PHH has no notation for the pieces of {h.spec.pieces.game}"))
            continue
        extra: dict[str, object] = {"table": h.table, "hand": h.deal}
        if event:
            extra["event"] = event
        extra["_group"] = h.group
        extra["_teams"] = [h.teams[s - 1] for s in _player_order(h.spec)]
        try:
            text = write_phh(
                h.spec,
                h.inputs,
                h.result,
                players=h.players,
                seats=range(1, h.spec.seats + 1),
                extra=extra,
            )
        except ValueError as exc:
            skipped.append((h, str(exc)))
            continue
        written.append((h, text))
    return Rendered(written, skipped)


def bundle(rendered: Rendered) -> str:
    """The hands as one ``.phhs`` file: each hand a TOML table ``[1]``, ``[2]``, ..."""
    return "\n".join(f"[{i}]\n{text}" for i, (_, text) in enumerate(rendered.hands, 1))


def _player_order(spec: HandSpec) -> list[int]:
    from hub.domain.phh import player_seat

    return [player_seat(i, spec.button, spec.seats) for i in range(spec.seats)]
