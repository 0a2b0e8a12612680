"""The shape of a whole event: stages of groups, each played as sessions of consecutive deals.

A one-session tournament file is an event of one stage ("main", every group) and one session
("1", deals 1..D) with the file's seat draw: everything below then reduces to what the hub did
before sessions existed. With ``[[stages]]`` and ``[[sessions]]`` in the file:

* deal numbers run through the whole event: each session owns a range ``first..last`` and each
  deal belongs to exactly one session, hence one stage, played by that stage's groups only;
* a session may bring its own seat draw (else it keeps the previous session's of its stage) and
  substitutions (a team's player replaced from that session on, recorded with the session);
* a later stage's groups may be *filled* by its ``advance`` rule from the standings of the
  stage before (``hub.domain.advance``); until then its teams are unknown.

``Seating`` answers who holds a seat for a given deal, once the stage's groups are known.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from hub.domain.draw import Draw, make_draw
from hub.domain.scoring import ScoringLayout

__all__ = ["Advance", "DrawSpec", "EventPlan", "Seating", "Session", "Stage", "Substitution"]


@dataclass(frozen=True)
class Advance:
    """How a stage's groups are filled from the stage before: the best ``top_per_group`` of each
    of its groups, then the best of the rest across groups (by points, then aggregate chips)
    until every seat of the stage is taken."""

    source: str  # the stage whose standings fill this one
    top_per_group: int = 0


@dataclass(frozen=True)
class Stage:
    id: str
    name: str
    groups: tuple[str, ...]
    advance: Advance | None = None  # None: the groups' teams are in the file


@dataclass(frozen=True)
class DrawSpec:
    """A session's seat draw: generated (method and seed) or written out (table, seat -> team)."""

    method: str | None = None
    seed: int | str | None = None
    tables: Mapping[tuple[int, int], str] | None = None


@dataclass(frozen=True)
class Substitution:
    team: str
    out: str
    into: str

    def as_dict(self) -> dict[str, str]:
        return {"team": self.team, "out": self.out, "in": self.into}


@dataclass(frozen=True)
class Session:
    id: str
    name: str
    stage: str
    first: int
    last: int
    draw: DrawSpec | None = None  # None: the previous session's draw of the stage
    substitutions: tuple[Substitution, ...] = ()

    @property
    def deals(self) -> range:
        return range(self.first, self.last + 1)


@dataclass(frozen=True)
class EventPlan:
    stages: tuple[Stage, ...]
    sessions: tuple[Session, ...]
    explicit: bool = False  # the file has [[stages]]/[[sessions]] (else the one-session default)
    _deal_session: dict[int, Session] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for session in self.sessions:
            for deal in session.deals:
                self._deal_session[deal] = session

    @cached_property
    def stage_by_id(self) -> dict[str, Stage]:
        return {s.id: s for s in self.stages}

    @cached_property
    def session_by_id(self) -> dict[str, Session]:
        return {s.id: s for s in self.sessions}

    @cached_property
    def stage_of_group(self) -> dict[str, Stage]:
        return {g: s for s in self.stages for g in s.groups}

    def session_of(self, deal: int) -> Session:
        return self._deal_session[deal]

    def stage_of(self, deal: int) -> Stage:
        return self.stage_by_id[self._deal_session[deal].stage]

    def sessions_of(self, stage: str) -> tuple[Session, ...]:
        return tuple(s for s in self.sessions if s.stage == stage)

    def deals_of_stage(self, stage: str) -> tuple[int, ...]:
        return tuple(d for s in self.sessions_of(stage) for d in s.deals)

    def deals_of_group(self, group: str) -> tuple[int, ...]:
        return self.deals_of_stage(self.stage_of_group[group].id)

    def plays(self, group: str, deal: int) -> bool:
        """Does ``group`` play ``deal``?"""
        return self.stage_of_group[group].id == self._deal_session[deal].stage

    def draw_session(self, session: str) -> Session:
        """The session whose draw applies in ``session``: itself, or the latest before it in
        its stage that has one (the stage's first session when none has)."""
        found = self.session_by_id[session]
        earlier = self.sessions_of(found.stage)
        index = earlier.index(found)
        for candidate in reversed(earlier[: index + 1]):
            if candidate.draw is not None:
                return candidate
        return earlier[0]

    def substitutions_until(self, session: str) -> tuple[Substitution, ...]:
        """Every substitution made up to and including ``session``, in order."""
        out: list[Substitution] = []
        for s in self.sessions:
            out.extend(s.substitutions)
            if s.id == session:
                break
        return tuple(out)

    def as_dict(self) -> dict[str, Any]:
        """The plan as shown in standings payloads."""
        return {
            "stages": [
                {
                    "id": st.id,
                    "name": st.name,
                    "groups": list(st.groups),
                    "sessions": [s.id for s in self.sessions_of(st.id)],
                    "advance": None
                    if st.advance is None
                    else {"from": st.advance.source, "top_per_group": st.advance.top_per_group},
                }
                for st in self.stages
            ],
            "sessions": [
                {
                    "id": s.id,
                    "name": s.name,
                    "stage": s.stage,
                    "deals": [s.first, s.last],
                    "substitutions": [sub.as_dict() for sub in s.substitutions],
                }
                for s in self.sessions
            ],
        }


def lineup(players: Sequence[str], substitutions: Sequence[Substitution], team: str) -> list[str]:
    """A team's players after ``substitutions`` (each replaces one name in place)."""
    names = list(players)
    for sub in substitutions:
        if sub.team == team and sub.out in names:
            names[names.index(sub.out)] = sub.into
    return names


class Seating:
    """Who holds each seat for each deal: the session's draw over the group's teams (from the
    file, or from the fill of the stage), with the session's lineups. Pure; caches per session.

    ``fills`` (stage -> group -> teams in seeding order) is set by the engine when a stage's
    groups are fixed; a filled group's generated draw is seeded by the session's seed, the
    session and the group, so it is the same at every read.
    """

    def __init__(self, config: Any) -> None:
        self.config = config
        self.plan: EventPlan = config.plan
        self.fills: dict[str, dict[str, tuple[str, ...]]] = {}
        self._draws: dict[str, Draw] = {}

    def teams_of(self, group: str) -> tuple[str, ...] | None:
        """The teams of a group, None while its stage is not filled."""
        stage = self.plan.stage_of_group[group]
        if stage.advance is None:
            return tuple(self.config.groups[group].teams)
        fill = self.fills.get(stage.id)
        return None if fill is None else fill[group]

    def filled(self, stage: str) -> bool:
        return self.plan.stage_by_id[stage].advance is None or stage in self.fills

    def set_fill(self, stage: str, fill: Mapping[str, Sequence[str]]) -> None:
        self.fills[stage] = {g: tuple(teams) for g, teams in fill.items()}
        for s in self.plan.sessions_of(stage):
            self._draws.pop(s.id, None)

    def draw(self, session: str) -> Draw | None:
        """(table, seat) -> team of every group of the session's stage; None until filled."""
        found = self._draws.get(session)
        if found is not None:
            return found
        source = self.plan.draw_session(session)
        stage = self.plan.stage_by_id[source.stage]
        if not self.filled(stage.id):
            return None
        spec = source.draw
        draw: Draw = {}
        if spec is None or spec.tables is not None:
            written = self.config.draw if spec is None else spec.tables
            assert written is not None
            draw.update({k: v for k, v in written.items() if self._in_stage(k[0], stage)})
        if spec is not None and spec.method is not None:
            assert spec.seed is not None
            rng = random.Random(spec.seed) if stage.advance is None else None
            for gid in stage.groups:
                teams = self.teams_of(gid)
                assert teams is not None
                group_rng = rng or random.Random(f"{spec.seed}/{source.id}/{gid}")
                tables = self.config.groups[gid].tables
                draw.update(make_draw(spec.method, teams, tables, self.config.seats, group_rng))
        self._draws[session] = draw
        return draw

    def _in_stage(self, table: int, stage: Stage) -> bool:
        return self.config.group_of(table).id in stage.groups

    def holder(self, table: int, seat: int, deal: int) -> tuple[Any, str] | None:
        """(team, player) in ``seat`` of ``table`` for ``deal``; None while not known."""
        session = self.plan.session_of(deal).id
        draw = self.draw(session)
        if draw is None or (table, seat) not in draw:
            return None
        team = self.config.teams[draw[(table, seat)]]
        group = self.config.group_of(table)
        names = lineup(team.players, self.plan.substitutions_until(session), team.id)
        return team, names[group.tables.index(table)]

    def layout_of(self, session: str) -> ScoringLayout | None:
        """The scoring layout of one session, None until its stage is filled."""
        if self.draw(session) is None:
            return None
        found = self.plan.session_by_id[session]
        stage = self.plan.stage_by_id[found.stage]
        holder: dict[tuple[int, int], str] = {}
        players: dict[tuple[int, int], str] = {}
        groups = {g: tuple(self.config.groups[g].tables) for g in stage.groups}
        for tables in groups.values():
            for table in tables:
                for seat in range(1, self.config.seats + 1):
                    held = self.holder(table, seat, found.first)
                    assert held is not None
                    holder[(table, seat)] = held[0].id
                    players[(table, seat)] = held[1]
        return ScoringLayout(groups=groups, seats=self.config.seats, holder=holder, players=players)
