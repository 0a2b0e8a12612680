"""The results site's **running** view (docs/site.md, "The running view"): the ranking as it
ran, deal by deal, made from the public data of the released deals only.

The hub's own *running* standings (over every hand completed so far) include deals some table
has not played yet: the public never sees them (the embargo). What a spectator can have is the
ranking after each released deal, in deal order: each team's and each player's score and rank
as the like-for-like standings would have stood with the deals up to that one, and how the
rank moved. It is made from the public ``compare:{d}:{s}`` rows (who held the seat at each
table, the chips, and the deal's ``points``: the seat's IMPs, or chips) and ranked by the
scoring's own functions (``hub.domain.scoring.ranking``), so the last step of a session is its
like-for-like standings, to the point and the rank (``tests/test_site_running.py``):

- ``ifp-points``: after each deal every seat position is ranked again by its chips so far
  (``ifp_ranking``: N..1 points, ties shared), a team's points the sum of its seats';
- ``imp``: a seat's IMPs so far (the deals' ``points`` added up), a team's the sum of its
  players'; but a team scored on its totals (``teams = "totals"``) has no IMPs per deal in the
  public feed: its running view adds up the teams' results (chips, or the game's unit: the
  standings' tie-break), and ``notes`` says so;
- ``chips``: chips so far.

An event of sessions (``[[stages]]``) ranks each session on its own (its seat draw, its
deals): one block per session. Penalties stand apart (the standings take them off; no deal
carries them), so with a penalty the last step differs from the standings by it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from hub.domain.scoring.format import json_number
from hub.domain.scoring.ranking import exact_sum, ifp_ranking, plain_ranking, rank_teams

__all__ = ["RUNNING_CSV_HEADER", "running_csv_rows", "running_view"]

Compare = Callable[[int, int], dict[str, Any] | None]
"""A released deal's public comparison of one seat: ``(deal, seat) -> compare payload``."""

TOTALS_NOTE = (
    "The teams' IMPs are scored on each deal's team totals, which the public results do not "
    "carry deal by deal: the teams' running view adds up their results instead (the "
    "standings' second figure); the players' is by IMPs."
)
PENALTY_NOTE = (
    "Penalties are taken off the standings, not off a deal: a penalised team or player's "
    "last figure here is before its penalty."
)


def _number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(slots=True)
class _Group:
    """One group's running totals within a block: per (table, seat) the chips and the
    format's figure so far, who holds the seat, and each entrant's steps."""

    group: str
    chips: dict[tuple[int, int], int] = field(default_factory=dict)
    points: dict[tuple[int, int], int] = field(default_factory=dict)
    holder: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    deals: list[int] = field(default_factory=list)
    teams: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    players: dict[tuple[int, int], list[dict[str, Any]]] = field(default_factory=dict)


def _step(
    deal: int, score: Any, chips: int, rank: int, before: list[dict[str, Any]]
) -> dict[str, Any]:
    move = None if not before else before[-1]["rank"] - rank
    return {"deal": deal, "score": score, "chips": chips, "rank": rank, "move": move}


def _after(g: _Group, deal: int, fmt: str, team_by: str) -> None:
    """Rank every seat position and every team of ``g`` on its totals after ``deal``."""
    g.deals.append(deal)
    seats = sorted({s for _t, s in g.chips})
    team_points: dict[str, list[Fraction]] = {}
    team_chips: dict[str, int] = {}
    for seat in seats:
        tables = {t: c for (t, s), c in g.chips.items() if s == seat}
        ranked: Iterable[tuple[int, Any, int]]
        if fmt == "ifp-points":
            ranked = [(t, p, rank) for t, _c, p, rank in ifp_ranking(tables)]
        elif fmt == "imp":
            imps = {t: g.points[(t, seat)] for t in tables}
            ranked = [(t, Fraction(total), rank) for t, total, rank in plain_ranking(imps)]
        else:
            ranked = [(t, Fraction(total), rank) for t, total, rank in plain_ranking(tables)]
        for table, points, rank in ranked:
            key = (table, seat)
            team = str(g.holder[key]["team"])
            team_points.setdefault(team, []).append(points)
            team_chips[team] = team_chips.get(team, 0) + tables[table]
            steps = g.players.setdefault(key, [])
            steps.append(_step(deal, json_number(points), tables[table], rank, steps))
    if team_by == "chips":
        rows = rank_teams(g.group, {}, team_chips, "chips")
    else:
        totals = {team: exact_sum(p) for team, p in team_points.items()}
        rows = rank_teams(g.group, totals, team_chips, fmt)  # type: ignore[arg-type]
    for row in rows:
        score: Any = row.chips
        if team_by != "chips":
            score = json_number(row.points) if row.points is not None else row.imps
        steps = g.teams.setdefault(row.team, [])
        steps.append(_step(deal, score, row.chips, row.rank, steps))


def _blocks(standings: dict[str, Any]) -> list[tuple[str | None, str | None, int, int]]:
    """``(session id, name, first deal, last deal)``: one per session of an event of stages,
    else one block of every deal."""
    plan = standings.get("event") or {}
    sessions = plan.get("sessions") or []
    if sessions:
        return [(str(s["id"]), s.get("name"), *s["deals"]) for s in sessions]
    return [(None, None, 1, int(standings.get("deals", {}).get("total", 0)))]


def running_view(
    standings: dict[str, Any], released: list[int], seats: int, compare: Compare
) -> dict[str, Any]:
    """``running.json``: per block (session) and group, each team's and each player's steps
    (``deal``, ``score``: points, IMPs or chips so far, ``chips`` so far, ``rank``, ``move``:
    places gained since the step before, None on the first), the released deals in deal
    order. Teams and players are listed by their last rank."""
    scoring = standings.get("scoring") or {"format": "ifp-points", "column": "points"}
    fmt = scoring.get("format", "ifp-points")
    column = scoring.get("column", "points")
    totals = fmt == "imp" and scoring.get("teams") == "totals"
    team_by = "chips" if totals else column
    names: dict[str, dict[str, Any]] = {}
    out_blocks = []
    for session, name, lo, hi in _blocks(standings):
        groups: dict[str, _Group] = {}
        deals = [d for d in sorted(released) if lo <= d <= hi]
        for d in deals:
            moved: dict[str, _Group] = {}
            for s in range(1, seats + 1):
                got = compare(d, s)
                for row in (got or {}).get("rows", []):
                    g = groups.setdefault(str(row.get("group")), _Group(str(row.get("group"))))
                    key = (int(row["table"]), s)
                    g.holder[key] = row
                    g.chips[key] = g.chips.get(key, 0) + _number(row.get("chips"))
                    g.points[key] = g.points.get(key, 0) + _number(row.get("points"))
                    names.setdefault(str(row.get("team")), row)
                    moved[g.group] = g
            for g in moved.values():
                _after(g, d, fmt, team_by)
        out_blocks.append(
            {
                "session": session,
                "name": name,
                "deals": deals,
                "groups": [_group_out(g, names) for _k, g in sorted(groups.items())],
            }
        )
    notes = [TOTALS_NOTE] if totals else []
    if _penalised(standings):
        notes.append(PENALTY_NOTE)
    return {
        "scoring": scoring,
        "by": {"teams": team_by, "players": column},
        "deals": int(standings.get("deals", {}).get("total", 0)),
        "released": sorted(released),
        "blocks": out_blocks,
        "notes": notes,
    }


def _penalised(standings: dict[str, Any]) -> bool:
    """Does a row of the like-for-like standings (a session's too) carry a penalty?"""
    view = standings.get("like_for_like") or {}
    for block in [view, *(view.get("sessions") or {}).values()]:
        rows = [*block.get("teams", []), *(r for b in block.get("seats", []) for r in b["rows"])]
        if any("penalty" in row for row in rows):
            return True
    return False


def _last_rank(item: tuple[Any, list[dict[str, Any]]]) -> tuple[int, str]:
    return (item[1][-1]["rank"], str(item[0]))


def _group_out(g: _Group, names: dict[str, dict[str, Any]]) -> dict[str, Any]:
    teams = []
    for team, steps in sorted(g.teams.items(), key=_last_rank):
        info = names.get(team, {})
        code = str(info.get("code") or team)
        teams.append(
            {
                "team": team,
                "code": code,
                "name": info.get("name", code),
                "colour": info.get("colour"),
                "steps": steps,
            }
        )
    seats: dict[int, list[dict[str, Any]]] = {}
    for (table, seat), steps in sorted(g.players.items(), key=_last_rank):
        row = g.holder[(table, seat)]
        code = str(row.get("code") or row.get("team"))
        seats.setdefault(seat, []).append(
            {
                "table": table,
                "team": row.get("team"),
                "code": code,
                "player": row.get("player"),
                "id": f"{code}-{seat}",
                "steps": steps,
            }
        )
    return {
        "group": g.group,
        "deals": g.deals,
        "teams": teams,
        "seats": [{"seat": s, "players": seats[s]} for s in sorted(seats)],
    }


RUNNING_CSV_HEADER = [
    "session",
    "group",
    "kind",
    "seat",
    "table",
    "team",
    "name",
    "deal",
    "by",
    "score",
    "chips",
    "rank",
    "move",
]


def running_csv_rows(view: dict[str, Any]) -> list[list[Any]]:
    """A line per team (then per player) and released deal of ``running_view``'s answer."""
    by = view["by"]
    rows: list[list[Any]] = []
    for block in view["blocks"]:
        for g in block["groups"]:
            for t in g["teams"]:
                for s in t["steps"]:
                    head = [block["session"], g["group"], "team", None, None, t["code"]]
                    rows.append([*head, t["name"], *_cells(s, by["teams"])])
            for seat in g["seats"]:
                for p in seat["players"]:
                    for s in p["steps"]:
                        head = [block["session"], g["group"], "player", seat["seat"], p["table"]]
                        rows.append([*head, p["code"], p["player"], *_cells(s, by["players"])])
    return rows


def _cells(step: dict[str, Any], by: str) -> list[Any]:
    return [step["deal"], by, step["score"], step["chips"], step["rank"], step["move"]]
