"""The scoreboard: standings kept up to date one hand result at a time, in both views.

``full_recompute`` builds one from scratch by plain sums: the oracle of the incremental path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from hub.domain.scoring.format import VIEWS, View
from hub.domain.scoring.imps import deal_imps, team_deal_imps
from hub.domain.scoring.layout import ScoringLayout
from hub.domain.scoring.ranking import (
    exact_sum,
    halves,
    ifp_ranking,
    plain_ranking,
    rank_teams,
)
from hub.domain.scoring.rows import SeatRow, SeatStanding, TeamStanding

_NO_PENALTY = (0, Fraction(0))  # (one object: a row without a penalty compared by identity)

# What one seat ranking adds to its teams' sums: per table of its group (in the layout's
# order, each the place of one team: ``Scoreboard._slots``), (IFP points in halves, chips);
# and the sums, team -> [IFP points in halves, chips].
Parts = tuple[list[int], list[int]]
Sums = dict[str, list[int]]


class Scoreboard:
    """Incremental IFP scoring: feed it hand results, read standings in either view.

    ``rankings_computed`` counts seat rankings computed (not served from cache): a probe for
    tests and benchmarks that a change touches only its own group.
    """

    def __init__(self, layout: ScoringLayout) -> None:
        self.layout = layout
        self._seat_numbers = tuple(range(1, layout.seats + 1))
        # table -> its place among its group's tables (in the layout's order)
        self._slot_of = {t: tables.index(t) for tables in layout.groups.values() for t in tables}
        self._group_of = {t: g for g, tables in layout.groups.items() for t in tables}
        self._results: dict[tuple[int, int], dict[int, int]] = {}
        # view -> table -> seat -> total chips in that view.
        self._totals: dict[View, dict[int, dict[int, int]]] = {
            view: {t: dict.fromkeys(self._seat_numbers, 0) for t in self._group_of}
            for view in VIEWS
        }
        self._tables_counted: dict[tuple[str, int], int] = {}  # (group, deal) -> tables counted
        self._complete: dict[str, set[int]] = {g: set() for g in layout.groups}
        self._running_hands: dict[str, int] = dict.fromkeys(layout.groups, 0)
        self._seat_cache: dict[tuple[View, str, int], SeatStanding] = {}
        self._team_cache: dict[tuple[View, str], tuple[TeamStanding, ...]] = {}
        # What a dropped cache held: a ranking made again reuses the rows that did not move
        # (the same objects), so a reader compares rows by identity and reads only what moved.
        self._seat_was: dict[tuple[View, str, int], SeatStanding] = {}
        self._team_was: dict[tuple[View, str], tuple[TeamStanding, ...]] = {}
        # ifp-points without penalties (the usual case): each group's team sums, kept from
        # the seat rankings they were summed from (view, group) -> (those rankings, team ->
        # [points in halves, chips]); a ranking made again moves only its own rows' teams.
        self._team_sums: dict[tuple[View, str], tuple[list[SeatStanding], list[Parts], Sums]]
        self._team_sums = {}
        # What each seat ranking made by ``_rank_ifp`` adds to its teams' sums, table by table
        # (view, group, seat) -> (that ranking, its parts): read without a row's Fraction.
        self._ifp_parts: dict[tuple[View, str, int], tuple[SeatStanding, Parts]] = {}
        # (group, seat) -> the team holding that seat at each of the group's tables.
        self._teams_at: dict[tuple[str, int], tuple[str, ...]] = {}
        # group -> the stamp of its rankings' last move, the oldest first (``moved_since``).
        self._stamp = 0
        self._moved: dict[str, int] = {}
        # (table, seat) -> (chips, points) taken off by the tournament director, in both views.
        self._penalties: dict[tuple[int, int], tuple[int, Fraction]] = {}
        self.rankings_computed = 0
        self.scoring = layout.scoring
        # imp: view -> table -> seat -> total IMPs, and each counted deal's IMPs per table.
        self._imps: dict[View, dict[int, dict[int, int]]] = {
            view: {t: dict.fromkeys(self._seat_numbers, 0) for t in self._group_of}
            for view in VIEWS
        }
        self._deal_imps: dict[tuple[str, int], dict[int, dict[int, int]]] = {}
        # imp with teams = "totals": each complete deal's team IMPs, and their sums (both views
        # count only deals complete at every table: a team's total needs all its players).
        self._team_deal: dict[tuple[str, int], dict[str, int]] = {}
        self._team_imps: dict[str, int] = {}

    # -- writing -------------------------------------------------------------------------------

    def set_result(self, table: int, deal: int, result: Mapping[int, int] | None) -> None:
        """Count (or, with ``None``, stop counting) one hand: seat -> chip-score at ``table``.

        Replaces whatever was set for (table, deal) before. Seats left out score 0.
        """
        group = self._group_of.get(table)
        if group is None:
            raise ValueError(f"table {table} is in no group")
        new = None if result is None else self._normalise(result)
        key = (table, deal)
        old = self._results.get(key)
        if new == old:
            return
        self._apply("running", group, table, old, new)
        if new is None:
            del self._results[key]
        else:
            self._results[key] = new

        group_deal = (group, deal)
        if old is None or new is None:
            self._running_hands[group] += 1 if old is None else -1
            count = self._tables_counted.get(group_deal, 0) + (1 if old is None else -1)
            if count:
                self._tables_counted[group_deal] = count
            else:
                del self._tables_counted[group_deal]
        complete_before = deal in self._complete[group]
        complete_now = self._tables_counted.get(group_deal, 0) == len(self.layout.groups[group])
        if complete_before != complete_now:  # (its completed deals move, whatever its totals)
            self._moves(group)
        if complete_before and complete_now:
            self._apply("like_for_like", group, table, old, new)
        elif complete_now:  # the last table just counted it: the whole deal comes in
            self._complete[group].add(deal)
            for other in self.layout.groups[group]:
                self._apply("like_for_like", group, other, None, self._results[(other, deal)])
        elif complete_before:  # one table dropped out: the whole deal goes
            self._complete[group].discard(deal)
            for other in self.layout.groups[group]:
                gone = old if other == table else self._results[(other, deal)]
                self._apply("like_for_like", group, other, gone, None)
        if self.scoring.name == "imp":
            self._move_imps(group, deal, complete_before, complete_now)
            if self.scoring.teams == "totals":
                self._move_team_totals(group, deal, complete_now)

    def _move_team_totals(self, group: str, deal: int, complete: bool) -> None:
        """Recompute one deal's team IMPs (``teams = "totals"``) and move the team sums."""
        old = self._team_deal.pop((group, deal), {})
        new: dict[str, int] = {}
        if complete:
            tables = self.layout.groups[group]
            counted = {t: self._results[(t, deal)] for t in tables}
            new = team_deal_imps(counted, self.layout.holder, self.scoring)
            self._team_deal[(group, deal)] = new
        for team in old.keys() | new.keys():
            self._team_imps[team] = (
                self._team_imps.get(team, 0) + new.get(team, 0) - old.get(team, 0)
            )
        for view in VIEWS:
            self._drop_teams(view, group)
        self._moves(group)

    def team_deal_imps(self, group: str, deal: int) -> dict[str, int]:
        """A complete deal's IMPs per team under ``teams = "totals"`` (empty otherwise)."""
        return dict(self._team_deal.get((group, deal), {}))

    def _move_imps(self, group: str, deal: int, was_complete: bool, now_complete: bool) -> None:
        """Recompute one deal's IMPs at every table of its group (a result there moves them
        all) and move the totals: running by the change, like-for-like out and back in."""
        tables = self.layout.groups[group]
        old = self._deal_imps.pop((group, deal), {})
        counted = {t: self._results[(t, deal)] for t in tables if (t, deal) in self._results}
        new = deal_imps(counted, self.scoring)
        if new:
            self._deal_imps[(group, deal)] = new
        for table in tables:
            before, after = old.get(table), new.get(table)
            self._apply("running", group, table, before, after, self._imps)
            if was_complete:
                self._apply("like_for_like", group, table, before, None, self._imps)
            if now_complete:
                self._apply("like_for_like", group, table, None, after, self._imps)

    def add_penalty(self, table: int, seat: int, chips: int, points: int | Fraction) -> None:
        """Take ``chips`` off the player's chip-score total (their seat ranking moves by it)
        and ``points`` off their IFP points (so off their team's), in both views."""
        group = self._group_of.get(table)
        if group is None:
            raise ValueError(f"table {table} is in no group")
        if seat not in self._seat_numbers:
            raise ValueError(f"no seat {seat} (seats are 1..{self.layout.seats})")
        old_chips, old_points = self._penalties.get((table, seat), (0, Fraction(0)))
        self._penalties[(table, seat)] = (old_chips + chips, old_points + Fraction(points))
        for view in VIEWS:
            self._drop_seat(view, group, seat)
            self._drop_teams(view, group)
        self._moves(group)

    def penalties(self) -> dict[tuple[int, int], tuple[int, Fraction]]:
        return dict(self._penalties)

    def _normalise(self, result: Mapping[int, int]) -> dict[int, int]:
        for seat, chips in result.items():
            if seat not in self._seat_numbers:
                raise ValueError(f"no seat {seat} (seats are 1..{self.layout.seats})")
            if not isinstance(chips, int) or isinstance(chips, bool):
                raise ValueError(f"seat {seat} chip-score {chips!r} is not an integer")
        return {seat: result.get(seat, 0) for seat in self._seat_numbers}

    def _apply(
        self,
        view: View,
        group: str,
        table: int,
        old: Mapping[int, int] | None,
        new: Mapping[int, int] | None,
        source: dict[View, dict[int, dict[int, int]]] | None = None,
    ) -> None:
        """Move one table's totals (chip-scores, or ``source``: its IMPs) from ``old`` to
        ``new``; drop the caches that changed."""
        totals = (self._totals if source is None else source)[view][table]
        moved = False
        for seat in self._seat_numbers:
            delta = (new[seat] if new else 0) - (old[seat] if old else 0)
            if delta:
                totals[seat] += delta
                self._drop_seat(view, group, seat)
                moved = True
        if moved:
            self._drop_teams(view, group)
            self._moves(group)

    def _drop_seat(self, view: View, group: str, seat: int) -> None:
        key = (view, group, seat)
        held = self._seat_cache.pop(key, None)
        if held is not None:
            self._seat_was[key] = held

    def _drop_teams(self, view: View, group: str) -> None:
        held = self._team_cache.pop((view, group), None)
        if held is not None:
            self._team_was[(view, group)] = held

    def _moves(self, group: str) -> None:
        """Note that ``group``'s rankings or completed deals moved (``moved_since``)."""
        self._stamp += 1
        self._moved.pop(group, None)
        self._moved[group] = self._stamp

    def moved_since(self, stamp: int) -> tuple[list[str], int]:
        """The groups whose rankings or completed deals may have moved since ``stamp`` (0:
        since the board was made), newest first, and the stamp to ask with next time: a
        reader of the rankings reads the groups that moved, not every group."""
        moved = self._moved
        out: list[str] = []
        for group in reversed(moved):
            if moved[group] <= stamp:
                break
            out.append(group)
        return out, self._stamp

    # -- reading -------------------------------------------------------------------------------

    def result(self, table: int, deal: int) -> Mapping[int, int] | None:
        """The counted result of (table, deal), or ``None`` when it is not counted."""
        found = self._results.get((table, deal))
        return None if found is None else dict(found)

    def results(self) -> dict[tuple[int, int], dict[int, int]]:
        """Every counted result, (table, deal) -> seat -> chips (a copy)."""
        return {key: dict(value) for key, value in self._results.items()}

    def deal_points(self, table: int, deal: int) -> dict[int, int] | None:
        """What one counted hand scored, seat -> the format's figure for the deal: its IMPs
        (``imp``: the seat against the average of its group's tables that counted the deal, by
        the scale, what the seat rankings add up) or its chip-score (``chips``); ``None``
        under ``ifp-points`` (points rank a seat's total over a session: none per deal) or
        when the hand is not counted. Penalties are not in it (they stand apart)."""
        if self.scoring.name == "ifp-points":
            return None
        if self.scoring.name == "chips":
            counted = self._results.get((table, deal))
            return None if counted is None else dict(counted)
        group = self._group_of.get(table)
        found = self._deal_imps.get((group, deal), {}).get(table) if group else None
        return None if found is None else dict(found)

    def completed_deals(self, group: str) -> frozenset[int]:
        """Deals counted at every table of ``group``: what like-for-like covers."""
        return frozenset(self._complete[group])

    def deal_complete(self, group: str, deal: int) -> bool:
        return deal in self._complete[group]

    def tables_counted(self, group: str, deal: int) -> int:
        """How many of the group's tables count a result for the deal (the release table's
        progress: a lookup, where counting the hands walks every table of every deal)."""
        return self._tables_counted.get((group, deal), 0)

    def counted(self, view: View, group: str) -> int:
        """Hands counted in ``view`` for ``group`` (like-for-like: complete deals x tables)."""
        if view == "running":
            return self._running_hands[group]
        return len(self._complete[group]) * len(self.layout.groups[group])

    def seat_standing(self, view: View, group: str, seat: int) -> SeatStanding:
        """One seat position's ranking in one group, from cache unless a total changed."""
        key = (view, group, seat)
        cached = self._seat_cache.get(key)
        if cached is None:
            cached = self._rank_seat(view, group, seat)
            self._seat_cache[key] = cached
        return cached

    def group_standings(self, view: View, group: str) -> tuple[TeamStanding, ...]:
        """The teams of one group by rank, then team id."""
        key = (view, group)
        cached = self._team_cache.get(key)
        if cached is None:
            held = self._seat_cache.get
            seats = [
                held((view, group, seat)) or self.seat_standing(view, group, seat)
                for seat in self._seat_numbers
            ]
            was = self._team_was.pop(key, None)
            if self.scoring.name == "ifp-points" and not self._penalties:
                cached = self._rank_teams_ifp(key, seats, was)
            else:
                cached = self._rank_teams(group, seats, was)
            self._team_cache[key] = cached
        return cached

    def _rank_teams(
        self, group: str, seats: list[SeatStanding], was: tuple[TeamStanding, ...] | None
    ) -> tuple[TeamStanding, ...]:
        """A group's team ranking summed and ranked from its seat rankings (every format,
        penalties too): the rows that did not move are the same objects as in ``was``."""
        rows = [row for standing in seats for row in standing.rows]
        chips: dict[str, int] = {}
        for row in rows:
            chips[row.team] = chips.get(row.team, 0) + row.chips
        penalties: dict[str, tuple[int, Fraction]] = {}
        if self._penalties:
            for row in rows:
                if any(row.penalty):
                    c, p = penalties.get(row.team, (0, Fraction(0)))
                    penalties[row.team] = (c + row.penalty[0], p + row.penalty[1])
        points = _team_points(rows)
        if self.scoring.name == "imp" and self.scoring.teams == "totals":
            # the team's IMPs from its totals per deal, less its players' IMP penalties
            points = {
                team: Fraction(self._team_imps.get(team, 0)) - penalties.get(team, (0, 0))[1]
                for team in points
            }
        ranked = rank_teams(group, points, chips, self.scoring.name, penalties)
        if was is None:
            return ranked
        old = {row.team: row for row in was}
        ranked = tuple(
            held if (held := old.get(row.team)) is not None and _same_team(held, row) else row
            for row in ranked
        )
        if all(a is b for a, b in zip(ranked, was, strict=True)):
            return was
        return ranked

    def _rank_teams_ifp(
        self,
        key: tuple[View, str],
        seats: list[SeatStanding],
        was: tuple[TeamStanding, ...] | None,
    ) -> tuple[TeamStanding, ...]:
        """``_rank_teams`` under IFP points without penalties (on every result and every
        projected hand), incrementally: the team sums move by the rows of the seat rankings
        made again since the last ranking (a seat's old rows out, its new rows in), then the
        teams are ordered as ``rank_teams`` orders them (points, then chips, down; then team
        id up; equal points and chips share a rank); a row whose rank and totals stand is
        the same object as before."""
        view, group = key
        held = self._team_sums.get(key)
        if held is None:
            parts = [self._parts(view, group, now) for now in seats]
            sums: Sums = {}
            for now, part in zip(seats, parts, strict=True):
                _add_parts(sums, self._slots(group, now.seat), part)
            self._team_sums[key] = (seats, parts, sums)
        else:
            used, parts, sums = held
            for i, now in enumerate(seats):
                if now is not used[i]:
                    part = self._parts(view, group, now)
                    _move_sums(sums, self._slots(group, now.seat), parts[i], part)
                    used[i], parts[i] = now, part
        # (points, then chips, down; then team id up: ``rank_teams``'s order)
        order = sorted([(-h, -chips, team) for team, (h, chips) in sums.items()])
        old = {} if was is None else {row.team: row for row in was}
        rows: list[TeamStanding] = []
        rank = 0
        previous: tuple[int, int] | None = None
        fresh = False  # (a row made anew: the ranking is not ``was``)
        for i, (h, chips, team) in enumerate(order):
            if (h, chips) != previous:
                rank = i + 1
                previous = (h, chips)
            points = halves(-h)
            row = old.get(team)
            if row is None or not (
                row.rank == rank
                and row.chips == -chips
                and (row.points is points or row.points == points)
                and row.imps is None
                and (row.penalty is _NO_PENALTY or row.penalty == _NO_PENALTY)
            ):
                row = TeamStanding(group, team, rank, points, -chips, None, _NO_PENALTY)
                fresh = True
            rows.append(row)
        if not fresh and was is not None and all(a is b for a, b in zip(rows, was, strict=True)):
            return was
        return tuple(rows)

    def _parts(self, view: View, group: str, standing: SeatStanding) -> Parts:
        """What a seat ranking adds to its teams' sums: each row's team, IFP points in
        halves and chips (kept by ``_rank_ifp``, else read off its rows)."""
        held = self._ifp_parts.get((view, group, standing.seat))
        if held is not None and held[0] is standing:
            return held[1]
        by_table = {row.table: row for row in standing.rows}
        hs: list[int] = []
        chips: list[int] = []
        for table in self.layout.groups[group]:
            row = by_table[table]
            points = row.points
            assert points is not None  # (ifp-points)
            hs.append(points.numerator * (2 // points.denominator))
            chips.append(row.chips)
        return hs, chips

    def _slots(self, group: str, seat: int) -> tuple[str, ...]:
        """The team holding ``seat`` at each table of ``group``, in the layout's order: whose
        sums each place of a seat ranking's ``Parts`` moves."""
        found = self._teams_at.get((group, seat))
        if found is None:
            holder = self.layout.holder
            found = tuple(holder[(table, seat)] for table in self.layout.groups[group])
            self._teams_at[(group, seat)] = found
        return found

    def standings(self, view: View) -> list[TeamStanding]:
        """Every team, by group (layout order), then rank, then team id."""
        return [row for group in self.layout.groups for row in self.group_standings(view, group)]

    def seats(self, view: View) -> list[SeatStanding]:
        """Every seat ranking, by group (layout order), then seat."""
        return [
            self.seat_standing(view, group, seat)
            for group in self.layout.groups
            for seat in self._seat_numbers
        ]

    def view_as_dict(self, view: View) -> dict[str, Any]:
        """One view as JSON-ready data: ``{"teams": [...], "seats": [...]}``."""
        return {
            "teams": [row.as_dict() for row in self.standings(view)],
            "seats": [block.as_dict() for block in self.seats(view)],
        }

    def as_dict(self) -> dict[str, Any]:
        """Both views, as in the replay output: ``{"running": ..., "like_for_like": ...}``."""
        return {view: self.view_as_dict(view) for view in VIEWS}

    def _rank_seat(self, view: View, group: str, seat: int) -> SeatStanding:
        """One seat's ranking made again; the rows that did not move are the same objects as
        in the ranking it replaces (and if none moved, that ranking itself)."""
        self.rankings_computed += 1
        was = self._seat_was.pop((view, group, seat), None)
        tables = self.layout.groups[group]
        totals = self._totals[view]
        if not self._penalties and self.scoring.name == "ifp-points":
            return self._rank_ifp(view, group, seat, tables, totals, was)
        # Penalties: chips come off before the ranking; points after it under ifp-points (no
        # one else's points move), off the IMPs (what the seat ranks by) under imp.
        if self._penalties:
            penalty = {t: self._penalties.get((t, seat), _NO_PENALTY) for t in tables}
            chips = {table: totals[table][seat] - penalty[table][0] for table in tables}
        else:  # (the usual case: none)
            penalty = dict.fromkeys(tables, _NO_PENALTY)
            chips = {table: totals[table][seat] for table in tables}
        # (table, chips, points, rank, imps), best first
        ranked: list[tuple[int, int, Fraction | None, int, int | None]]
        if self.scoring.name == "ifp-points":
            off = {table: penalty[table][1] for table in tables}
            ranked = [
                (table, total, points - off[table] if off[table] else points, rank, None)
                for table, total, points, rank in ifp_ranking(chips)
            ]
        elif self.scoring.name == "imp":
            imps = {
                table: self._imps[view][table][seat] - int(penalty[table][1]) for table in tables
            }
            ranked = [
                (table, chips[table], None, rank, total)
                for table, total, rank in plain_ranking(imps)
            ]
        else:
            ranked = [
                (table, total, None, rank, None) for table, total, rank in plain_ranking(chips)
            ]
        holder, players = self.layout.holder, self.layout.players
        old = {} if was is None else {row.table: row for row in was.rows}
        rows: list[SeatRow] = []
        for table, total, points, rank, imp in ranked:
            pen = penalty[table]
            row = old.get(table)  # (the layout's player at the table: the same)
            if row is None or not (
                row.chips == total
                and row.rank == rank
                and (row.points is points or row.points == points)  # (points are shared)
                and row.imps == imp
                and (row.penalty is pen or row.penalty == pen)
            ):
                team, player = holder[(table, seat)], players[(table, seat)]
                row = SeatRow(table, team, player, total, points, rank, imps=imp, penalty=pen)
            rows.append(row)
        if was is not None and all(a is b for a, b in zip(rows, was.rows, strict=True)):
            return was
        return SeatStanding(group, seat, tuple(rows))

    def _rank_ifp(
        self,
        view: View,
        group: str,
        seat: int,
        tables: tuple[int, ...] | list[int],
        totals: dict[int, dict[int, int]],
        was: SeatStanding | None,
    ) -> SeatStanding:
        """``_rank_seat`` under IFP points without penalties (the usual case, on every
        result and every projected hand): ``ifp_ranking``'s order and shares walked once,
        each row kept when its chips, rank and points stand."""
        # (chips down, then table up; the chips negated: one sort of tuples, no key calls)
        order = sorted([(-totals[table][seat], table) for table in tables])
        n = len(order)
        old = {} if was is None else {row.table: row for row in was.rows}
        holder, players = self.layout.holder, self.layout.players
        rows: list[SeatRow] = []
        # each table's IFP points in halves and chips, by its place in the layout (``Parts``)
        slot_of = self._slot_of
        hs = [0] * n
        chips = [0] * n
        fresh = False  # (a row made anew: the ranking is not ``was``)
        start = 0
        while start < n:
            less = order[start][0]
            end = start + 1
            while end < n and order[end][0] == less:
                end += 1
            h = 2 * n + 1 - start - end  # places start+1..end share their points (in halves)
            points = halves(h)
            rank = start + 1
            total = -less
            for _, table in order[start:end]:
                row = old.get(table)
                if row is None or not (  # (its rank, chips and points stand; no IMPs, penalty)
                    row.rank == rank
                    and row.chips == total
                    and (row.points is points or row.points == points)
                    and row.imps is None
                    and (row.penalty is _NO_PENALTY or row.penalty == _NO_PENALTY)
                ):
                    row = _ifp_row(
                        table, holder[(table, seat)], players[(table, seat)], total, points, rank
                    )
                    fresh = True
                rows.append(row)
                slot = slot_of[table]
                hs[slot] = h
                chips[slot] = total
            start = end
        if (
            not fresh
            and was is not None
            and all(a is b for a, b in zip(rows, was.rows, strict=True))
        ):
            standing = was
        else:
            standing = SeatStanding(group, seat, tuple(rows))
        self._ifp_parts[(view, group, seat)] = (standing, (hs, chips))
        return standing


def _same_team(a: TeamStanding, b: TeamStanding) -> bool:
    """``a == b`` for two rows of one team (a dataclass's ``__eq__`` builds two tuples)."""
    return (
        a.rank == b.rank
        and a.chips == b.chips
        and (a.points is b.points or a.points == b.points)
        and a.imps == b.imps
        and (a.penalty is b.penalty or a.penalty == b.penalty)
        and a.group == b.group
    )


def _move_sums(sums: Sums, teams: tuple[str, ...], before: Parts, now: Parts) -> None:
    """Move the team sums (team -> ``[IFP points in halves, chips]``) from one seat
    ranking's ``before`` parts to its ``now`` parts, table by table (``teams``: who holds
    the seat at each): a table whose points and chips stand moves nothing; another moves
    its team by the difference."""
    hs_before, chips_before = before
    hs_now, chips_now = now
    for team, a, b, c, d in zip(teams, hs_before, hs_now, chips_before, chips_now, strict=True):
        if a != b or c != d:
            total = sums[team]  # (added when ``before`` came in)
            total[0] += b - a
            total[1] += d - c


def _add_parts(sums: Sums, teams: tuple[str, ...], parts: Parts) -> None:
    """Add a seat ranking's ``parts`` to its teams' sums."""
    for team, h, chips in zip(teams, *parts, strict=True):
        total = sums.setdefault(team, [0, 0])
        total[0] += h
        total[1] += chips


_new = object.__new__


def _ifp_row(
    table: int, team: str, player: str, chips: int, points: Fraction, rank: int
) -> SeatRow:
    """``SeatRow(table, team, player, chips, points, rank, imps=None, penalty=_NO_PENALTY)``,
    its fields set at once rather than by the frozen dataclass's ``__init__`` (a call of
    ``object.__setattr__`` per field): the IFP rankings make a few rows at every action
    the projection counts."""
    row: SeatRow = _new(SeatRow)
    row.__dict__.update(
        table=table,
        team=team,
        player=player,
        chips=chips,
        points=points,
        rank=rank,
        imps=None,
        penalty=_NO_PENALTY,
    )
    return row


def _team_points(rows: Iterable[SeatRow]) -> dict[str, Fraction]:
    """Each team's points (IFP points, or IMPs) summed over its players' ``rows``: in halves,
    as integers, when every value is a whole or a half (IFP points and their shares, a
    whole penalty: the usual case), else as ``exact_sum`` makes it."""
    summed: dict[str, int] = {}
    for row in rows:
        score = row.points
        if score is None:
            summed[row.team] = summed.get(row.team, 0) + 2 * (row.imps or 0)
            continue
        den = score.denominator
        if den > 2:  # (a penalty of a third of a point)
            scores: dict[str, list[Fraction]] = {}
            for r in rows:
                value = r.points if r.points is not None else Fraction(r.imps or 0)
                scores.setdefault(r.team, []).append(value)
            return {team: exact_sum(values) for team, values in scores.items()}
        summed[row.team] = summed.get(row.team, 0) + score.numerator * (2 // den)
    return {team: halves(h) for team, h in summed.items()}


def full_recompute(
    layout: ScoringLayout,
    results: Mapping[tuple[int, int], Mapping[int, int]],
    penalties: Iterable[tuple[int, int, int, int]] = (),
) -> Scoreboard:
    """A board built from scratch from (table, deal) -> result, by plain sums, and the
    penalties (table, seat, chips, points).

    The oracle for the incremental path (and a way to start from a journal in one go); the
    board it returns keeps working incrementally.
    """
    board = Scoreboard(layout)
    normalised = {key: board._normalise(result) for key, result in results.items()}
    for table, _deal in normalised:
        if table not in board._group_of:
            raise ValueError(f"table {table} is in no group")
    board._results = normalised
    for (table, deal), result in normalised.items():
        group = board._group_of[table]
        board._running_hands[group] += 1
        board._tables_counted[(group, deal)] = board._tables_counted.get((group, deal), 0) + 1
        for seat, chips in result.items():
            board._totals["running"][table][seat] += chips
    for (group, deal), count in board._tables_counted.items():
        complete = count == len(layout.groups[group])
        if complete:
            board._complete[group].add(deal)
            for table in layout.groups[group]:
                for seat, chips in normalised[(table, deal)].items():
                    board._totals["like_for_like"][table][seat] += chips
        if layout.scoring.name == "imp":
            counted = {
                t: normalised[(t, deal)] for t in layout.groups[group] if (t, deal) in normalised
            }
            imps = deal_imps(counted, layout.scoring)
            board._deal_imps[(group, deal)] = imps
            for view in ("running", "like_for_like") if complete else ("running",):
                for table, row in imps.items():
                    for seat, value in row.items():
                        board._imps[view][table][seat] += value
            if complete and layout.scoring.teams == "totals":
                board._move_team_totals(group, deal, True)
    for table, seat, chips, points in penalties:
        board.add_penalty(table, seat, chips, points)
    return board
