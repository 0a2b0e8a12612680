"""The rules of ``[[stages]]`` and ``[[sessions]]``, and of a draw written out table by table.

Stages follow each other, the first lists its groups' teams and each later one is filled by its
advance rule; sessions cover the deals 1..tournament.deals in order, a stage's sessions together,
and substitutions name a player of the team at that session (docs/rules.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import UNSET

from hub.domain.config import shape
from hub.domain.config.model import Group, Team
from hub.domain.config.shape import Checker, check_name, name_key, show
from hub.domain.draw import Draw, DrawError, validate_draw
from hub.domain.event import Advance, DrawSpec, EventPlan, Session, Stage, Substitution


def event_plan(
    c: Checker,
    stages_value: Any,
    sessions_value: Any,
    groups: Mapping[str, Group],
    teams: Mapping[str, Team],
    deals: int,
) -> EventPlan:
    """``[[stages]]`` and ``[[sessions]]``: the event's stages and their sessions."""
    if sessions_value is UNSET:
        c.fail("sessions", "missing (an event with stages is played in sessions)")
    stages = _stages(c, stages_value, groups)
    entries: list[shape.Session] = c.convert(sessions_value, list[shape.Session], "sessions")
    if not entries:
        c.fail("sessions", "no sessions")
    sessions: list[Session] = []
    lineups = {tid: list(team.players) for tid, team in teams.items()}
    for i, e in enumerate(entries):
        sessions.append(
            _session(c, f"sessions[{i}]", e, (stages, sessions), groups, lineups, deals)
        )
    next_deal = sessions[-1].last + 1
    if next_deal != deals + 1:
        c.fail("sessions", f"deals {next_deal}..{deals} are in no session")
    for st in stages:
        if not any(x.stage == st.id for x in sessions):
            c.fail("stages", f"stage {st.id} has no session")
    return EventPlan(tuple(stages), tuple(sessions), explicit=True)


def _session(
    c: Checker,
    key: str,
    e: shape.Session,
    before: tuple[Sequence[Stage], Sequence[Session]],
    groups: Mapping[str, Group],
    lineups: dict[str, list[str]],
    deals: int,
) -> Session:
    """One session, given the stages and the sessions before it."""
    stages, sessions = before
    if any(x.id == e.id for x in sessions):
        c.fail(f"{key}.id", f"session {e.id} defined twice")
    stage = _stage_of(c, key, e, stages, sessions)
    first, last = e.deals
    if last < first:
        c.fail(f"{key}.deals[1]", f"must be at least {first}, got {last}")
    next_deal = sessions[-1].last + 1 if sessions else 1
    if first != next_deal:
        c.fail(f"{key}.deals", f"expected the session to start at deal {next_deal}")
    if last > deals:
        c.fail(f"{key}.deals", f"deal {last} is beyond tournament.deals ({deals})")
    first_of_stage = not any(x.stage == stage.id for x in sessions)
    spec = _session_draw(c, e.draw, f"{key}.draw", stage, groups)
    if first_of_stage and stage.advance is not None and (spec is None or not spec.method):
        c.fail(
            f"{key}.draw",
            f"stage {stage.id} is filled by its advance rule: its first session needs a "
            "generated draw (method and seed)",
        )
    subs = _substitutions(c, e.substitutions, f"{key}.substitutions", lineups)
    name = f"Session {e.id}" if e.name is UNSET else e.name
    return Session(e.id, name, stage.id, first, last, spec, subs)


def _stage_of(
    c: Checker, key: str, e: shape.Session, stages: Sequence[Stage], sessions: Sequence[Session]
) -> Stage:
    """The session's stage: named, or the only one; stages in order, their sessions together."""
    by_id = {st.id: st for st in stages}
    if e.stage is not UNSET:
        if e.stage not in by_id:
            c.fail(f"{key}.stage", f"stage {e.stage} is not defined in [[stages]]")
        stage = by_id[e.stage]
    elif len(stages) == 1:
        stage = stages[0]
    else:
        c.fail(f"{key}.stage", "missing (the event has several stages)")
    if sessions and stages.index(by_id[sessions[-1].stage]) > stages.index(stage):
        c.fail(f"{key}.stage", f"stage {stage.id} comes before {sessions[-1].stage}")
    if sessions and sessions[-1].stage != stage.id and any(x.stage == stage.id for x in sessions):
        c.fail(f"{key}.stage", f"the sessions of stage {stage.id} must follow each other")
    return stage


def _stages(c: Checker, value: Any, groups: Mapping[str, Group]) -> list[Stage]:
    if value is UNSET:
        for gid, group in groups.items():
            if not group.teams:
                c.fail("groups", f"group {gid} has no teams and no stage fills it")
        return [Stage("main", "Main", tuple(groups))]
    entries: list[shape.Stage] = c.convert(value, list[shape.Stage], "stages")
    if not entries:
        c.fail("stages", "no stages")
    stages: list[Stage] = []
    owner: dict[str, str] = {}
    for i, e in enumerate(entries):
        key = f"stages[{i}]"
        if any(st.id == e.id for st in stages):
            c.fail(f"{key}.id", f"stage {e.id} defined twice")
        if not e.groups:
            c.fail(f"{key}.groups", "no groups")
        for j, gid in enumerate(e.groups):
            _stage_group(c, f"{key}.groups[{j}]", gid, e.id, i == 0, groups, owner)
        advance = None
        if e.advance is not UNSET:
            if i == 0:
                c.fail(f"{key}.advance", "the first stage has no stage before it")
            advance = _advance(c, e.advance, f"{key}.advance", stages, groups, e.groups)
        elif i > 0:
            c.fail(f"{key}.advance", "missing (how are this stage's groups filled?)")
        stages.append(Stage(e.id, e.id if e.name is UNSET else e.name, tuple(e.groups), advance))
    for gid in groups:
        if gid not in owner:
            c.fail("stages", f"group {gid} is in no stage")
    return stages


def _stage_group(
    c: Checker,
    key: str,
    gid: str,
    stage: str,
    first: bool,
    groups: Mapping[str, Group],
    owner: dict[str, str],
) -> None:
    if gid not in groups:
        c.fail(key, f"group {gid} is not defined in [[groups]]")
    if gid in owner:
        c.fail(key, f"group {gid} is already in stage {owner[gid]}")
    owner[gid] = stage
    if bool(groups[gid].teams) != first:
        c.fail(
            key,
            f"group {gid}: the first stage's groups list their teams, a later "
            "stage's groups are filled by its advance rule (no teams)",
        )


def _advance(
    c: Checker,
    a: shape.Advance,
    key: str,
    earlier: Sequence[Stage],
    groups: Mapping[str, Group],
    targets: Sequence[str],
) -> Advance:
    source = earlier[-1].id
    if a.from_ is not UNSET:
        source = a.from_
        if source not in [st.id for st in earlier]:
            c.fail(f"{key}.from", f"stage {source} is not an earlier stage")
    top = a.top_per_group
    src = next(st for st in earlier if st.id == source)
    available = sum(len(groups[g].tables) for g in src.groups)
    needed = sum(len(groups[g].tables) for g in targets)
    if needed > available:
        c.fail(key, f"{needed} teams advance but stage {source} has only {available}")
    if top * len(src.groups) > needed:
        c.fail(
            f"{key}.top_per_group",
            f"top {top} of {len(src.groups)} groups is more than the {needed} places",
        )
    return Advance(source, top)


def _session_draw(
    c: Checker, d: shape.Draw | Any, key: str, stage: Stage, groups: Mapping[str, Group]
) -> DrawSpec | None:
    if d is UNSET:
        return None
    if d.tables is not UNSET:
        if d.method is not UNSET or d.seed is not UNSET:
            c.fail(key, "give either method and seed, or tables, not both")
        if stage.advance is not None:
            c.fail(f"{key}.tables", "the teams of a filled stage are not known in advance")
        part = {g: groups[g] for g in stage.groups}
        seats = len(next(iter(groups.values())).tables)
        return DrawSpec(tables=written_draw(c, d.tables, part, seats, key))
    if d.method not in ("random", "cyclic"):
        method = None if d.method is UNSET else d.method
        c.fail(f"{key}.method", f"expected 'random' or 'cyclic', got {show(method)}")
    if d.seed is UNSET:
        c.fail(f"{key}.seed", "missing (a generated draw must be the same at every read)")
    return DrawSpec(method=d.method, seed=d.seed)


def _substitutions(
    c: Checker, entries: Sequence[shape.Substitution], key: str, lineups: dict[str, list[str]]
) -> tuple[Substitution, ...]:
    subs: list[Substitution] = []
    for i, e in enumerate(entries):
        k = f"{key}[{i}]"
        if e.team not in lineups:
            c.fail(f"{k}.team", f"team {e.team} is not defined in [[teams]]")
        if e.out not in lineups[e.team]:
            c.fail(f"{k}.out", f"{e.out} does not play for {e.team} at this session")
        check_name(c, f"{k}.in", e.in_)
        if name_key(e.in_) in map(name_key, lineups[e.team]):
            c.fail(f"{k}.in", f"{e.in_} already plays for {e.team}")
        lineups[e.team][lineups[e.team].index(e.out)] = e.in_
        subs.append(Substitution(e.team, e.out, e.in_))
    return tuple(subs)


def written_draw(
    c: Checker,
    tables: Mapping[str, Any],
    groups: Mapping[str, Group],
    seats: int,
    where: str = "draw",
) -> Draw:
    """A draw written out: ``"<table>" = [team in seat 1, seat 2, ...]``, checked per group."""
    group_of = {t: g for g in groups.values() for t in g.tables}
    draw: Draw = {}
    for name, row in tables.items():
        key = f"{where}.tables.{name}"
        table = table_number(name)
        if table is None:
            c.fail(key, "a table number is expected as key")
        if table not in group_of:
            c.fail(key, f"table {table} is not in any group")
        teams: list[Any] = c.convert(row, list[Any], key)
        if len(teams) != seats:
            c.fail(key, f"expected a team for each of the {seats} seats, got {len(teams)}")
        names: list[str] = c.convert(teams, list[shape.Text], key)
        draw.update(((table, seat), team) for seat, team in enumerate(names, start=1))
    for group in groups.values():
        part = {k: v for k, v in draw.items() if k[0] in group.tables}
        try:
            validate_draw(part, group.teams, group.tables, seats)
        except DrawError as exc:
            c.fail(f"{where}.tables", f"group {group.id}: {exc}")
    return draw


def table_number(name: str) -> int | None:
    """The table a key names (``"12"`` -> 12), or None."""
    return int(name) if re.fullmatch(r"[1-9][0-9]*", name) else None
