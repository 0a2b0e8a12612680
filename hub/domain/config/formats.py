"""The rules of ``[scoring]`` and ``[mahjong]``: which format each game and event may use.

Hold'em games score in IFP points by default, or IMPs (in a unit, on a scale file) or chips;
MCR mahjong in IMPs of MCR points against the average of the tables (docs/mahjong.md). An event
of several sessions or stages is scored in IFP points, and mahjong is played in one session.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from hub.domain.config import shape
from hub.domain.config.shape import Checker
from hub.domain.event import EventPlan
from hub.domain.imp import ImpScale, ScaleError, parse_scale
from hub.domain.mahjong import MCR_SCALE, MahjongRules, PaymentRule, default_prevalent
from hub.domain.scoring import DEFAULT_SCORING, ScoringFormat


def scoring_and_rules(
    c: Checker, root: shape.Root, game: str, big_blind: int, deals: int, event: EventPlan | None
) -> tuple[ScoringFormat, MahjongRules | None]:
    """The scoring format, and the mahjong rules of an MCR tournament."""
    scoring = DEFAULT_SCORING
    if root.scoring is not UNSET and game != "mcr":
        scoring = _scoring(c, root.scoring, big_blind)
    mahjong = None
    if game == "mcr":
        if event is not None:
            c.fail("sessions", "a mahjong event of several sessions or stages is not supported yet")
        mahjong = _mahjong(c, {} if root.mahjong is UNSET else root.mahjong, deals)
        scoring = _mcr_scoring(c, {} if root.scoring is UNSET else root.scoring)
    if event is not None and scoring.name != "ifp-points":
        c.fail(
            "scoring.format",
            f"{scoring.name!r} scoring with [[stages]]/[[sessions]] is not supported yet: "
            "an event of several sessions or stages is scored in IFP points",
        )
    return scoring, mahjong


def _scoring(c: Checker, value: Any, big_blind: int) -> ScoringFormat:
    d: shape.Scoring = c.convert(value, shape.Scoring, "scoring")
    if d.format != "imp":
        for key in ("unit", "scale"):
            if getattr(d, key) is not UNSET:
                c.fail(f"scoring.{key}", f"only format 'imp' takes a {key}")
        return ScoringFormat(name=d.format)
    if d.unit is UNSET or d.unit == "chips":
        unit, unit_name = 1, "chips"
    elif d.unit == "big_blinds":
        unit, unit_name = big_blind, "big blinds"
    else:
        unit, unit_name = int(d.unit), f"{d.unit} chips"
    if d.scale is UNSET:
        return ScoringFormat(name="imp", unit=unit, unit_name=unit_name)
    scale = _scale(c, d.scale)
    return ScoringFormat(name="imp", unit=unit, unit_name=unit_name, scale=scale)


def _scale(c: Checker, path: str) -> ImpScale:
    """The IMP scale file ``path`` names (read through the checker's ``read``)."""
    if c.read is None:
        c.fail("scoring.scale", "a scale file is read only when the tournament file is")
    try:
        return parse_scale(c.read(path), path)
    except OSError as exc:
        c.fail("scoring.scale", f"cannot read {path} ({exc.strerror or exc})")
    except UnicodeDecodeError:
        c.fail("scoring.scale", f"{path} is not UTF-8 text")
    except ScaleError as exc:
        c.fail("scoring.scale", f"{path}: {exc}")


def _mahjong(c: Checker, value: Any, deals: int) -> MahjongRules:
    m: shape.Mahjong = c.convert(value, shape.Mahjong, "mahjong")
    prevalent = default_prevalent(deals)
    if m.prevalent is not UNSET:
        if len(m.prevalent) != deals:
            c.fail(
                "mahjong.prevalent",
                f"expected one prevalent wind per deal ({deals}), got {len(m.prevalent)}",
            )
        winds: list[str] = c.convert(m.prevalent, list[shape.Wind], "mahjong.prevalent")
        prevalent = {deal: str(wind) for deal, wind in enumerate(winds, start=1)}
    return MahjongRules(PaymentRule(base=m.base, min_fan=m.min_fan), prevalent)


def _mcr_scoring(c: Checker, value: Any) -> ScoringFormat:
    """Scoring of a mahjong tournament: IMPs in MCR points by default, each against the
    average of all the tables (the seed's rule), teams by their total per hand."""
    d: shape.MahjongScoring = c.convert(value, shape.MahjongScoring, "scoring")
    if d.format != "imp":
        return ScoringFormat(name=d.format, unit_name="points")
    scale = MCR_SCALE if d.scale is UNSET else _scale(c, d.scale)
    return ScoringFormat(
        name="imp", unit=1, unit_name="points", scale=scale, average=d.average, teams=d.teams
    )
