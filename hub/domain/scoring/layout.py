"""What scoring needs of a tournament (groups, seats, who holds each seat), and nothing more."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hub.domain.scoring.format import DEFAULT_SCORING, ScoringFormat


@dataclass(frozen=True)
class ScoringLayout:
    """What scoring needs of a tournament: groups, seat count, who holds each seat.

    Kept apart from ``config.TournamentConfig`` so that scoring depends on nothing but this.
    Seats are numbered ``1..seats``; every (table, seat) of every group must be held.
    """

    groups: Mapping[str, tuple[int, ...]]
    seats: int
    holder: Mapping[tuple[int, int], str]
    players: Mapping[tuple[int, int], str]
    scoring: ScoringFormat = DEFAULT_SCORING

    def __post_init__(self) -> None:
        if self.seats < 1:
            raise ValueError(f"seats must be at least 1, not {self.seats}")
        seen: dict[int, str] = {}
        for group, tables in self.groups.items():
            if not tables:
                raise ValueError(f"group {group!r} has no tables")
            for table in tables:
                if table in seen:
                    raise ValueError(f"table {table} is in groups {seen[table]!r} and {group!r}")
                seen[table] = group
                for seat in range(1, self.seats + 1):
                    if (table, seat) not in self.holder or (table, seat) not in self.players:
                        raise ValueError(f"table {table} seat {seat} has no holder")

    @classmethod
    def from_config(cls, config: Any) -> ScoringLayout:
        """Read a tournament config by duck typing (no import of ``config.py``).

        Expects ``config.groups`` (a mapping of group id to an object with ``.tables``, or a
        sequence of such objects with ``.id``), ``config.seats`` and
        ``config.seat_holder(table, seat) -> (team, player)`` where ``team.id`` is the team id
        and ``player`` a name (or an object with ``.name``); ``config.scoring`` (a
        ``ScoringFormat``) when it has one.
        """
        groups_in = config.groups
        pairs: Iterable[tuple[Any, Any]]
        if isinstance(groups_in, Mapping):
            pairs = groups_in.items()
        else:
            pairs = ((group.id, group) for group in groups_in)
        groups = {str(gid): tuple(int(t) for t in group.tables) for gid, group in pairs}
        seats = int(config.seats)
        holder: dict[tuple[int, int], str] = {}
        players: dict[tuple[int, int], str] = {}
        for tables in groups.values():
            for table in tables:
                for seat in range(1, seats + 1):
                    team, player = config.seat_holder(table, seat)
                    holder[(table, seat)] = str(team.id)
                    players[(table, seat)] = (
                        player if isinstance(player, str) else str(getattr(player, "name", player))
                    )
        scoring = getattr(config, "scoring", None) or DEFAULT_SCORING
        return cls(groups=groups, seats=seats, holder=holder, players=players, scoring=scoring)
