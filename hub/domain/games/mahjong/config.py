"""MCR mahjong's part of the tournament file: ``[mahjong]`` and its ``[scoring]`` (IMPs of MCR
points by default). Called through the game (``game.py``) by ``hub.domain.config.formats``;
every message is the one the config's golden corpus records."""

from __future__ import annotations

from typing import Any, Literal

from msgspec import UNSET, UnsetType

from hub.domain.config import shape
from hub.domain.config.formats import scale_file
from hub.domain.config.shape import Checker, Format, Shape, Text, Tournament, at_least
from hub.domain.event import EventPlan
from hub.domain.games.mahjong.rules import MCR_SCALE, MahjongRules, PaymentRule, default_prevalent
from hub.domain.scoring import ScoringFormat

Wind = Literal["E", "S", "W", "N"]
WORDING = {"mahjong.prevalent[]": "expected E, S, W or N, got {got}"}


class MahjongTournament(Tournament):
    """MCR mahjong has no blinds: they may be left out."""

    small_blind: at_least(1) = 1  # type: ignore[valid-type]
    big_blind: at_least(1) = 1  # type: ignore[valid-type]


class Mahjong(Shape):
    """``[mahjong]``: the payments and each deal's prevalent wind."""

    base: at_least(0) = 8  # type: ignore[valid-type]
    min_fan: at_least(1) = 8  # type: ignore[valid-type]
    prevalent: list[Any] | UnsetType = UNSET  # its length is checked before its winds


class MahjongScoring(Shape):
    format: Format = "imp"
    scale: Text | UnsetType = UNSET
    average: Literal["all", "others"] = "all"
    teams: Literal["totals", "players"] = "totals"


def scoring_and_rules(
    c: Checker, root: shape.Root, deals: int, event: EventPlan | None
) -> tuple[ScoringFormat, MahjongRules]:
    """The scoring and the mahjong rules of an MCR tournament (played in one session)."""
    if event is not None:
        c.fail("sessions", "a mahjong event of several sessions or stages is not supported yet")
    section = root.mahjong  # type: ignore[attr-defined]  # the game's section (shape.root_shape)
    mahjong = _mahjong(c, {} if section is UNSET else section, deals)
    return mahjong_scoring(c, {} if root.scoring is UNSET else root.scoring), mahjong


def _mahjong(c: Checker, value: Any, deals: int) -> MahjongRules:
    m: Mahjong = c.convert(value, Mahjong, "mahjong")
    prevalent = default_prevalent(deals)
    if m.prevalent is not UNSET:
        if len(m.prevalent) != deals:
            c.fail(
                "mahjong.prevalent",
                f"expected one prevalent wind per deal ({deals}), got {len(m.prevalent)}",
            )
        winds: list[str] = c.convert(m.prevalent, list[Wind], "mahjong.prevalent", WORDING)
        prevalent = {deal: str(wind) for deal, wind in enumerate(winds, start=1)}
    return MahjongRules(PaymentRule(base=m.base, min_fan=m.min_fan), prevalent)


def mahjong_scoring(c: Checker, value: Any) -> ScoringFormat:
    """Scoring of a mahjong tournament: IMPs in MCR points by default, each against the
    average of all the tables (the seed's rule), teams by their total per hand."""
    d: MahjongScoring = c.convert(value, MahjongScoring, "scoring")
    if d.format != "imp":
        return ScoringFormat(name=d.format, unit_name="points")
    scale = MCR_SCALE if d.scale is UNSET else scale_file(c, d.scale)
    return ScoringFormat(
        name="imp", unit=1, unit_name="points", scale=scale, average=d.average, teams=d.teams
    )
