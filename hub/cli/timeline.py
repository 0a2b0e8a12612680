"""The edit's raw material: per deal, each table's take of it, timed on the hub's clock.

An event log (a journal export: ``ts`` is the hub's receive time ``at``) is replayed through
the engine as `duplicast replay` does; a `WatchedEngine` looks at the hand each accepted event
touched and notes when it reached the flop, the turn, the river, an all-in, the showdown, a
void or a dispute. A take runs from the table's ``start`` of the deal to the moment the hand
last ended its play there (the last action, the ``win``, a ``void`` of the hand in play)
before the table started its next deal: what the table camera shows of it. A ruling on a hand
whose play had ended (a dispute confirmed, a result corrected, a void, even minutes later)
changes the take's result, not its end; a hand reopened and played on ends with that play.
An ``undo`` takes back the markers of what it undid.

Pure: no file, no clock; `hub.cli.edit` makes OpenTimelineIO timelines of these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hub.cli.replay import LogEntry, Refusal, replay
from hub.domain.config import TournamentConfig
from hub.domain.deck import DeckOrder
from hub.domain.states import Street
from hub.engine.core import Engine, Outcome
from hub.engine.tournament import COMPLETE, DISPUTED, TERMINAL, VOID, HandState

ORDER = (Street.PREFLOP, Street.FLOP, Street.TURN, Street.RIVER, Street.SHOWDOWN, Street.COMPLETE)
MARKED = {Street.FLOP: "Flop", Street.TURN: "Turn", Street.RIVER: "River"}


@dataclass(frozen=True, slots=True)
class Marker:
    """A moment of a take: ``kind`` is flop, turn, river, all-in, showdown, void or dispute."""

    at: float
    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class Take:
    """One table's play of one deal."""

    table: int
    group: str
    deal: int
    start: float
    end: float
    status: str  # complete, void, disputed; or in_progress, showdown (unfinished)
    name: str  # what an editor reads: deal, table, result
    seats: tuple[str, ...]  # per seat 1..n: "ARG L. Gómez"
    winners: tuple[str, ...]  # team codes of the pot winners
    markers: tuple[Marker, ...]


@dataclass(frozen=True, slots=True)
class DealCut:
    """A deal at every table that played it; ``complete``: finished at every table."""

    deal: int
    takes: tuple[Take, ...]
    complete: bool


@dataclass(slots=True)
class _Seen:
    """What the watch last saw of one hand, and the markers so far."""

    street: int = 0
    all_in: frozenset[int] = frozenset()
    status: str = ""
    ended: float | None = None
    closed: bool = False  # the table started its next deal: the camera's take is over
    markers: list[Marker] = field(default_factory=list)


class WatchedEngine(Engine):
    """The engine, noting after each accepted event what changed in the hand it touched."""

    def __init__(self, config: TournamentConfig, decks: Mapping[int, DeckOrder] | None) -> None:
        super().__init__(config, decks, release_delay=0.0)
        self.seen: dict[tuple[int, int], _Seen] = {}
        self._playing: dict[int, tuple[int, int]] = {}  # table -> its latest deal started

    def submit(self, raw: Any, now: float, *, channel_table: int | None = None) -> Outcome:
        before = self._current(raw)
        outcome = super().submit(raw, now, channel_table=channel_table)
        self._after_outcome(outcome, before, now)
        return outcome

    def control(self, command: Mapping[str, Any], now: float) -> Outcome:
        before = self._current(command)
        outcome = super().control(command, now)
        self._after_outcome(outcome, before, now)
        return outcome

    def _current(self, raw: Any) -> HandState | None:
        table_no = raw.get("table") if isinstance(raw, Mapping) else getattr(raw, "table", None)
        table = self.state.tables.get(table_no) if isinstance(table_no, int) else None
        return table.current if table is not None else None

    def _after_outcome(self, outcome: Outcome, before: HandState | None, now: float) -> None:
        record = outcome.record
        if not outcome.ok or outcome.duplicate or not record or record.get("kind") != "console":
            return
        table, deal = record.get("table"), record.get("deal")
        if record.get("type") == "start" and isinstance(table, int) and isinstance(deal, int):
            previous = self._playing.get(table)
            if previous is not None:
                self.seen.setdefault(previous, _Seen()).closed = True
            self._playing[table] = (table, deal)
        if isinstance(deal, int):
            hand = self.state.hand(table, deal)  # type: ignore[arg-type]
        else:
            hand = self.state.tables[table].current or before  # type: ignore[index]
        if hand is not None:
            self._look(hand, now, record)

    def _look(self, hand: HandState, now: float, record: Mapping[str, Any]) -> None:
        seen = self.seen.setdefault((hand.table, hand.deal), _Seen())
        self._all_in(hand, seen, now)  # before the showdown the call all-in brings
        street = getattr(hand.hand, "street", Street.PREFLOP)
        index = ORDER.index(street) if street in ORDER else 0
        if index < seen.street:  # an undo or a reopen: the streets it undid were not played
            undone = {s.value for s in ORDER[index + 1 :]}
            seen.markers = [m for m in seen.markers if m.kind not in undone]
        if index > seen.street and street in MARKED:  # a betting street dealt
            seen.markers.append(Marker(now, street.value, MARKED[street]))
        if index > seen.street and street == Street.SHOWDOWN:  # a fold-out has none
            seen.markers.append(Marker(now, "showdown", "Showdown"))
        seen.street = index
        if hand.status != seen.status:
            self._status(hand, seen, now, record)

    def _all_in(self, hand: HandState, seen: _Seen, now: float) -> None:
        committed: Mapping[int, int] = getattr(hand.hand, "committed", {})
        all_in = frozenset(s for s, chips in committed.items() if chips >= hand.spec.cap)
        for seat in sorted(all_in - seen.all_in):
            who = _team(self, hand, seat)
            seen.markers.append(Marker(now, "all-in", f"All-in: seat {seat} {who}".rstrip()))
        gone = {f"All-in: seat {s} {_team(self, hand, s)}".rstrip() for s in seen.all_in - all_in}
        seen.markers = [m for m in seen.markers if m.name not in gone]
        seen.all_in = all_in

    def _status(self, hand: HandState, seen: _Seen, now: float, record: Mapping[str, Any]) -> None:
        played = seen.status not in TERMINAL  # the hand was in play (or reopened) until now
        seen.status = hand.status
        if hand.status in TERMINAL and not seen.closed and (played or seen.ended is None):
            seen.ended = now  # a later ruling (a confirmation, a void) ends no play
        if hand.status == VOID:
            note = record.get("note")
            seen.markers.append(Marker(now, "void", f"Void: {note}" if note else "Void"))
        elif hand.status == DISPUTED:
            declared = _teams(self, hand, hand.declared or ())
            seen.markers.append(Marker(now, "dispute", f"Dispute: declared {declared}"))


def _team(engine: Engine, hand: HandState, seat: int) -> str:
    holder = engine.state.seat_holder(hand.table, seat, hand.deal)
    return holder[0].code if holder is not None else ""


def _teams(engine: Engine, hand: HandState, seats: Sequence[int]) -> str:
    return ", ".join(_team(engine, hand, s) or f"seat {s}" for s in seats) or "nobody"


def _winners(engine: Engine, hand: HandState) -> tuple[str, ...]:
    if hand.status != COMPLETE:
        return ()
    result = hand.result or {}
    return tuple(_team(engine, hand, s) or f"seat {s}" for s in sorted(result) if result[s] > 0)


def _result(hand: HandState, winners: tuple[str, ...]) -> str:
    if hand.status == COMPLETE:
        won = max((hand.result or {}).values(), default=0)
        if not winners:
            return "no winner"
        verb = "wins" if len(winners) == 1 else "split"
        return f"{' '.join(winners)} {verb} {won:,}"
    return {str(VOID): "void", str(DISPUTED): "disputed"}.get(str(hand.status), "unfinished")


def take_of(engine: WatchedEngine, hand: HandState, group: str) -> Take:
    """One table's take of a deal, from what the watch saw."""
    seen = engine.seen.get((hand.table, hand.deal), _Seen())
    last = engine.state.tables[hand.table].last_event_at or hand.started_at
    end = seen.ended if seen.ended is not None else (hand.finished_at or last)
    seats = []
    for seat in range(1, hand.spec.seats + 1):
        holder = engine.state.seat_holder(hand.table, seat, hand.deal)
        seats.append(f"{holder[0].code} {holder[1]}" if holder is not None else f"seat {seat}")
    winners = _winners(engine, hand)
    name = f"Deal {hand.deal} · Table {hand.table} · {_result(hand, winners)}"
    markers = tuple(m for m in seen.markers if hand.started_at <= m.at <= end)
    return Take(
        hand.table, group, hand.deal, hand.started_at, max(end, hand.started_at),
        str(hand.status), name, tuple(seats), winners, markers,
    )  # fmt: skip


def deal_cuts(engine: WatchedEngine, *, unfinished: bool = False) -> list[DealCut]:
    """Every deal finished at every table that plays it (``unfinished``: also the deals
    started somewhere and not yet finished everywhere, with what was played)."""
    config = engine.state.config
    cuts = []
    for deal in range(1, config.deals + 1):
        takes, complete = [], True
        for group in config.groups_playing(deal):
            for table in group.tables:
                hand = engine.state.hand(table, deal)
                if hand is None or hand.status not in TERMINAL:
                    complete = False
                if hand is not None:
                    takes.append(take_of(engine, hand, group.id))
        if takes and (complete or unfinished):
            cuts.append(DealCut(deal, tuple(sorted(takes, key=lambda t: t.table)), complete))
    return cuts


def watch_log(
    config: TournamentConfig,
    entries: Sequence[LogEntry],
    decks: Mapping[int, DeckOrder] | None,
    source: str,
) -> tuple[WatchedEngine, list[Refusal]]:
    """The log replayed through a `WatchedEngine`; the refusals, as `replay` gives them."""
    engine = WatchedEngine(config, decks)
    return engine, replay(config, entries, engine, source)
