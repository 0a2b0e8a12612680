"""Standings of a whole event: one ``Scoreboard`` per session, added up per stage and overall.

Seat positions are contested within a session (its seat draw, its deals), so each session has
its own scoreboard, in both views. A stage's standings add up its sessions: per team, the sum
of its IFP points and of its chip-scores over the sessions, ranked by the same rules (points,
then chips, then a shared rank). Across groups, the teams of a stage are ranked together by the
same rules. *Overall* lists the teams by the furthest stage they reached, then by their rank
across groups in that stage (the finalists first, then those out after the stage before...).

``EventScoreboard`` keeps the ``Scoreboard`` reading interface (``set_result``, ``standings``,
``seats``, ``completed_deals``, ...) so that the engine feeds it the same way; ``standings`` and
``seats`` answer for the *current* session (the latest with a counted hand) and its stage.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from hub.domain.event import EventPlan
from hub.domain.scoring import (
    DEFAULT_SCORING,
    VIEWS,
    Scoreboard,
    ScoringFormat,
    ScoringLayout,
    SeatStanding,
    TeamStanding,
    View,
    json_number,
    rank_teams,
)

__all__ = ["EventScoreboard", "rank_across"]


def rank_across(rows: list[TeamStanding]) -> list[dict[str, Any]]:
    """Teams of several groups ranked together: points, then chips, then shared rank."""
    order = sorted(rows, key=lambda r: (-(r.points or 0), -r.chips, r.team))
    out: list[dict[str, Any]] = []
    for i, row in enumerate(order):
        if out and (order[i - 1].points, order[i - 1].chips) == (row.points, row.chips):
            rank = out[-1]["rank"]
        else:
            rank = i + 1
        out.append(
            {
                "group": row.group,
                "team": row.team,
                "rank": rank,
                "points": json_number(row.points or Fraction(0)),
                "chips": row.chips,
            }
        )
    return out


class EventScoreboard:
    """Per-session scoreboards of an event, made when a session's seating is known."""

    def __init__(
        self,
        plan: EventPlan,
        layout_of: Callable[[str], ScoringLayout | None],
        teams_of: Callable[[str], tuple[str, ...] | None],
    ) -> None:
        self.plan = plan
        self._layout_of = layout_of
        self._teams_of = teams_of
        self.boards: dict[str, Scoreboard] = {}
        self._order: dict[tuple[int, int], None] = {}

    def board(self, session: str) -> Scoreboard | None:
        found = self.boards.get(session)
        if found is None:
            layout = self._layout_of(session)
            if layout is None:
                return None
            found = self.boards[session] = Scoreboard(layout)
        return found

    # -- writing -------------------------------------------------------------------------------

    def set_result(self, table: int, deal: int, result: Mapping[int, int] | None) -> None:
        session = self.plan.session_of(deal).id
        board = self.board(session)
        if board is None:
            if result is None:
                return
            raise ValueError(f"deal {deal}: session {session} has no seating yet")
        board.set_result(table, deal, result)
        key = (table, deal)
        if result is None:
            self._order.pop(key, None)
        else:
            self._order.setdefault(key, None)

    # -- the Scoreboard interface --------------------------------------------------------------

    def result(self, table: int, deal: int) -> Mapping[int, int] | None:
        board = self.boards.get(self.plan.session_of(deal).id)
        return None if board is None else board.result(table, deal)

    def results(self) -> dict[tuple[int, int], dict[int, int]]:
        out = {}
        for table, deal in self._order:
            found = self.result(table, deal)
            if found is not None:
                out[(table, deal)] = dict(found)
        return out

    def _group_boards(self, group: str) -> list[Scoreboard]:
        stage = self.plan.stage_of_group[group].id
        return [b for s in self.plan.sessions_of(stage) if (b := self.boards.get(s.id))]

    def deal_points(self, table: int, deal: int) -> dict[int, int] | None:
        """``Scoreboard.deal_points``: ``None`` (an event is scored in IFP points: per
        session, none per deal)."""
        board = self.boards.get(self.plan.session_of(deal).id)
        return None if board is None else board.deal_points(table, deal)

    def completed_deals(self, group: str) -> frozenset[int]:
        done: set[int] = set()
        for board in self._group_boards(group):
            done |= board.completed_deals(group)
        return frozenset(done)

    def deal_complete(self, group: str, deal: int) -> bool:
        if not self.plan.plays(group, deal):
            return False
        board = self.boards.get(self.plan.session_of(deal).id)
        return board is not None and board.deal_complete(group, deal)

    def tables_counted(self, group: str, deal: int) -> int:
        board = self.boards.get(self.plan.session_of(deal).id)
        return 0 if board is None else board.tables_counted(group, deal)

    def counted(self, view: View, group: str) -> int:
        return sum(b.counted(view, group) for b in self._group_boards(group))

    def stage_complete(self, stage: str) -> bool:
        """Every deal of the stage counted at every table of every group of it."""
        groups = self.plan.stage_by_id[stage].groups
        return all(
            self.deal_complete(g, d) for g in groups for d in self.plan.deals_of_stage(stage)
        )

    @property
    def scoring(self) -> ScoringFormat:
        """Events with stages and sessions are scored in IFP points (the configuration refuses
        another format with them, for now)."""
        return DEFAULT_SCORING

    def session_playing(self, table: int) -> Scoreboard | None:
        """The board of the session the table is playing: the latest of its stage with a
        scoreboard (None before its stage has started)."""
        for session in reversed(self.plan.sessions):
            board = self.boards.get(session.id)
            if board is not None and any(table in t for t in board.layout.groups.values()):
                return board
        return None

    def session_id_playing(self, table: int) -> str | None:
        """The id of the session `session_playing` answers (None before its stage started)."""
        board = self.session_playing(table)
        return next((sid for sid, b in self.boards.items() if b is board), None)

    def add_penalty(self, table: int, seat: int, chips: int, points: int) -> None:
        """A penalty counts in the session the table is playing; the stage's totals add it up
        with the rest of that session."""
        board = self.session_playing(table)
        if board is None:
            raise ValueError(f"table {table}: no session of its stage has started")
        board.add_penalty(table, seat, chips, points)

    def current_session(self) -> str:
        """The latest session with a counted hand (the first session before any)."""
        for session in reversed(self.plan.sessions):
            board = self.boards.get(session.id)
            if board is not None and any(board.counted("running", g) for g in board.layout.groups):
                return session.id
        return self.plan.sessions[0].id

    def current_stage(self) -> str:
        return self.plan.session_by_id[self.current_session()].stage

    def standings(self, view: View) -> list[TeamStanding]:
        """The current stage's standings, added up over its sessions."""
        return self.stage_standings(view, self.current_stage())

    def seats(self, view: View) -> list[SeatStanding]:
        """The seat rankings of the current session."""
        board = self.boards.get(self.current_session())
        return [] if board is None else board.seats(view)

    def view_as_dict(self, view: View) -> dict[str, Any]:
        return {
            "teams": [row.as_dict() for row in self.standings(view)],
            "seats": [block.as_dict() for block in self.seats(view)],
        }

    def as_dict(self) -> dict[str, Any]:
        return {view: self.view_as_dict(view) for view in VIEWS}

    # -- sessions, stages, overall -------------------------------------------------------------

    def session_standings(self, view: View, session: str) -> list[TeamStanding]:
        board = self.boards.get(session)
        if board is not None:
            return board.standings(view)
        stage = self.plan.stage_by_id[self.plan.session_by_id[session].stage]
        return self._zero(stage.groups)

    def _zero(self, groups: tuple[str, ...]) -> list[TeamStanding]:
        out: list[TeamStanding] = []
        for group in groups:
            teams = self._teams_of(group)
            if teams:
                zero = dict.fromkeys(teams, Fraction(0))
                out.extend(rank_teams(group, zero, dict.fromkeys(teams, 0)))
        return out

    def stage_standings(self, view: View, stage: str) -> list[TeamStanding]:
        """Each group of the stage: points and chips summed over its sessions, ranked."""
        groups = self.plan.stage_by_id[stage].groups
        points: dict[str, dict[str, Fraction]] = {}
        chips: dict[str, dict[str, int]] = {}
        for group in groups:
            teams = self._teams_of(group) or ()
            points[group] = dict.fromkeys(teams, Fraction(0))
            chips[group] = dict.fromkeys(teams, 0)
        for session in self.plan.sessions_of(stage):
            board = self.boards.get(session.id)
            if board is None:
                continue
            for row in board.standings(view):
                points[row.group][row.team] += row.points or Fraction(0)
                chips[row.group][row.team] += row.chips
        return [row for g in groups if points[g] for row in rank_teams(g, points[g], chips[g])]

    def stage_across(self, view: View, stage: str) -> list[dict[str, Any]]:
        return rank_across(self.stage_standings(view, stage))

    def overall(self, view: View) -> list[dict[str, Any]]:
        """Teams by the furthest stage reached, then by rank across groups in it."""
        out: list[dict[str, Any]] = []
        placed: set[str] = set()
        for stage in reversed(self.plan.stages):
            rows = [r for r in self.stage_standings(view, stage.id) if r.team not in placed]
            offset = len(out)
            for row in rank_across(rows):
                out.append({**row, "rank": row["rank"] + offset, "stage": stage.id})
                placed.add(row["team"])
        return out

    def event_as_dict(self, view: View) -> dict[str, Any]:
        """Per session, per stage (per group and across groups) and overall, in one view."""
        return {
            "sessions": {
                s.id: {
                    "teams": [r.as_dict() for r in self.session_standings(view, s.id)],
                    "seats": [b.as_dict() for b in (self._seats_of(view, s.id))],
                }
                for s in self.plan.sessions
            },
            "stages": {
                st.id: {
                    "teams": [r.as_dict() for r in self.stage_standings(view, st.id)],
                    "across": self.stage_across(view, st.id),
                }
                for st in self.plan.stages
            },
            "overall": self.overall(view),
        }

    def _seats_of(self, view: View, session: str) -> list[SeatStanding]:
        board = self.boards.get(session)
        return [] if board is None else board.seats(view)
