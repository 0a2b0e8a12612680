"""The rules of ``[scoring]``: which format each game and event may use (a game that scores in
its own way reads its scoring with its own section: ``Game.scoring_and_rules``).

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
from hub.domain.games.base import ConfigSection
from hub.domain.imp import ImpScale, ScaleError, parse_scale
from hub.domain.scoring import DEFAULT_SCORING, ScoringFormat


def scoring_and_rules(
    c: Checker,
    root: shape.Root,
    game: ConfigSection,
    big_blind: int,
    deals: int,
    event: EventPlan | None,
) -> tuple[ScoringFormat, Any]:
    """The scoring format, and the game's own rules when it reads them with its scoring
    (``Game.scoring_and_rules``: MCR's, ``games/mahjong/config.py``; else None)."""
    own = game.scoring_and_rules(c, root, deals, event)
    if own is not None:
        scoring, rules = own
    else:
        scoring, rules = DEFAULT_SCORING, None
        if root.scoring is not UNSET:
            scoring = _scoring(c, root.scoring, big_blind)
    if event is not None and scoring.name != "ifp-points":
        c.fail(
            "scoring.format",
            f"{scoring.name!r} scoring with [[stages]]/[[sessions]] is not supported yet: "
            "an event of several sessions or stages is scored in IFP points",
        )
    return scoring, rules


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
    scale = scale_file(c, d.scale)
    return ScoringFormat(name="imp", unit=unit, unit_name=unit_name, scale=scale)


def scale_file(c: Checker, path: str) -> ImpScale:
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
