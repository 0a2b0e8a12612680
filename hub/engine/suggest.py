"""Suggested split-screens: the deal x seat comparisons worth airing, ranked.

One entry per (deal, seat): the seat's traveller (``compare:{deal}:{seat}``) over the tables
that play the deal. Its score, in whole big blinds (points for a game that scores points):

- spread: the highest counted chip-score of the seat at those tables minus the lowest (two
  counted hands at least);
- swing: the largest distance of one table's chip-score from the seat's average there (the
  traveller's ``swing``), whose team the reason names;
- twice the cap for each table where the seat is all-in in a hand still in play (the largest
  spread a seat can show: a live all-in comes first);
- the cap for each table whose hand is disputed with the seat in the contested pot (among the
  declared or the computed winners; any seat still in the hand when neither is known).

``score = floor(spread + swing) + 2 cap * all-ins + cap * disputes`` (cap in big blinds too);
an entry scoring 0 is not listed. The order is by score, then deal, then seat (stable for
equal scores). The public list holds released deals only, the live one any deal.

``Ranking`` keeps every entry and both orders, and moves only the entries of a deal whose hand
moved (one hand's event changes its deal's entries, every seat's, and nothing else);
``suggestions_payload`` computes the list from scratch, the oracle of that incremental path.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from hub.engine.changes import ActionApplied
from hub.engine.hands import DISPUTED, TERMINAL, HandState
from hub.engine.tournament import TournamentState
from hub.wire.topics import AUDIENCES, LIVE, PUBLIC

__all__ = ["TOP", "Entry", "Ranking", "deal_entries", "suggestions_payload"]

TOP = 8  # entries a list shows
SHOWN_TABLES = 6  # the split screen shows at most this many tables

Released = Callable[[int], bool]
Key = tuple[int, int, int]  # (-score, deal, seat): the order of a list


@dataclass(frozen=True, slots=True)
class Entry:
    deal: int
    seat: int
    score: int
    tables: tuple[int, ...]
    reasons: tuple[str, ...]

    @property
    def key(self) -> Key:
        return (-self.score, self.deal, self.seat)

    def payload(self) -> dict[str, Any]:
        return {
            "deal": self.deal,
            "seat": self.seat,
            "tables": list(self.tables),
            "score": self.score,
            "reasons": list(self.reasons),
        }


def _signed(n: int) -> str:
    """+1,800 or -1,800 with a true minus sign (U+2212), as on air."""
    return f"{n:+,}".replace("-", "\u2212")


def _at(tables: list[int]) -> str:
    return ", ".join(f"T{t}" for t in tables)


def _contested(h: HandState, seat: int) -> bool:
    """Is the seat in the disputed pot of ``h``?"""
    named = set(h.declared or ()) | set(h.computed or ())
    if named:
        return seat in named
    return seat in h.hand.committed and seat not in h.hand.folded


def deal_entries(state: TournamentState, deal: int) -> list[Entry]:
    """Every seat's entry of one deal now (scoring 0 or more), in seat order."""
    config = state.config
    rows: list[tuple[int, HandState]] = []
    for group in config.groups_playing(deal):
        for t in group.tables:
            h = state.hand(t, deal)
            if h is not None:
                rows.append((t, h))
    seats = range(1, config.seats + 1)
    if not rows:
        return [Entry(deal, s, 0, (), ()) for s in seats]
    unit = state.game.points_unit.strip()
    per = 1 if unit else max(config.big_blind, 1)  # chips count in big blinds
    unit = unit or "chips"
    results = [(t, h.result) for t, h in rows if h.counts]
    scale = _Scale(per, unit, config.cap // per)
    return [_entry(state, deal, seat, rows, results, scale) for seat in seats]


@dataclass(frozen=True, slots=True)
class _Scale:
    per: int  # chips in a point of score (the big blind; 1 for a game that scores points)
    unit: str  # what a chip-score counts ("chips", "points")
    cap: int  # the cap in points of score: a dispute's weight, an all-in's twice it


def _entry(
    state: TournamentState,
    deal: int,
    seat: int,
    rows: list[tuple[int, HandState]],
    results: list[tuple[int, dict[int, int] | None]],
    scale: _Scale,
) -> Entry:
    all_in = [t for t, h in rows if h.status not in TERMINAL and seat in h.hand.all_in]
    disputed = [t for t, h in rows if h.status == DISPUTED and _contested(h, seat)]
    reasons: list[str] = []
    if all_in:
        reasons.append(f"all-in at {_at(all_in)}")
    if disputed:
        reasons.append(f"disputed at {_at(disputed)}")
    picked = [*all_in, *disputed]
    score = scale.cap * (2 * len(all_in) + len(disputed))
    per = scale.per
    chips = [(t, (r or {}).get(seat, 0)) for t, r in results]
    if len(chips) >= 2:
        n = len(chips)
        total = sum(c for _, c in chips)
        low = min(chips, key=lambda tc: tc[1])
        high = max(chips, key=lambda tc: tc[1])
        spread = high[1] - low[1]
        # The largest |c - average|, exactly: (n*c - total) / n (first table on a tie).
        far_t, far_c = max(chips, key=lambda tc: abs(n * tc[1] - total))
        far = abs(n * far_c - total)
        score += (n * spread + far) // (n * per)
        if spread:
            reasons.append(f"spread {spread:,} {scale.unit}")
            picked += [high[0], low[0]]
        if far:
            held = state.seat_holder(far_t, seat, deal)
            # (the team's name as shown: the operator's roster fixes)
            who = state.roster.info(state.config)[held[0].id]["name"] if held else f"T{far_t}"
            swing = round((n * far_c - total) / n)
            reasons.append(f"{who} {_signed(swing)} vs seat average")
            picked.append(far_t)
    if score <= 0:
        return Entry(deal, seat, 0, (), ())
    return Entry(deal, seat, score, _tables(picked, [t for t, _ in rows]), tuple(reasons))


def _tables(picked: list[int], played: list[int]) -> tuple[int, ...]:
    """The tables to put side by side: those the reasons name first, then the others that have
    played or are playing the deal, at most ``SHOWN_TABLES``, in traveller order."""
    chosen = list(dict.fromkeys(picked))[:SHOWN_TABLES]
    for t in played:
        if len(chosen) >= SHOWN_TABLES:
            break
        if t not in chosen:
            chosen.append(t)
    order = {t: i for i, t in enumerate(played)}
    return tuple(sorted(chosen, key=order.__getitem__))


def _payload(entries: Iterable[Entry], top: int) -> dict[str, Any]:
    ranked = sorted((e for e in entries if e.score > 0), key=lambda e: e.key)
    return {"suggestions": [e.payload() for e in ranked[:top]]}


def suggestions_payload(
    state: TournamentState, released: Released, audience: str, top: int = TOP
) -> dict[str, Any]:
    """The list from scratch: every deal's entries (the public's: released deals only)."""
    deals = range(1, state.config.deals + 1)
    public = audience == PUBLIC
    return _payload(
        (e for d in deals if not public or released(d) for e in deal_entries(state, d)), top
    )


class Ranking:
    """Every (deal, seat) entry and both audiences' orders, moved deal by deal.

    ``on`` notes the deals an engine event moved (a hand's, a release's); ``flush`` recomputes
    the entries of those deals only and says which audiences' lists may have moved;
    ``payload`` is an audience's list, equal to ``suggestions_payload`` (tested)."""

    def __init__(self, state: TournamentState, released: Released, top: int = TOP) -> None:
        self.state = state
        self.released = released
        self.top = top
        self.entries: dict[tuple[int, int], Entry] = {}
        self.order: dict[str, list[Key]] = {a: [] for a in AUDIENCES}
        self.public: set[int] = set()
        self._moved: dict[int, None] = {}
        # Who was all-in in each hand at its last event: an action that changes nobody's
        # all-in moves no entry (statuses and results move only by the other hand events).
        self._all_in: dict[tuple[int, int], frozenset[int]] = {}
        for deal in range(1, state.config.deals + 1):
            if released(deal):
                self.public.add(deal)
            self._set(deal)

    def on(self, event: Any) -> None:
        """A hand of ``event.deal`` moved, or the deal was released (``DealReleased``) or
        corrected: its entries are recomputed at the next ``flush``; an action only when it
        changed who is all-in; a roster corrected (no deal: the reasons name teams), every
        deal's."""
        deal = getattr(event, "deal", None)
        if deal is None:
            self._moved.update(dict.fromkeys(range(1, self.state.config.deals + 1)))
            return
        table = getattr(event, "table", None)
        if table is not None:
            h = self.state.hand(table, event.deal)
            all_in = h.hand.all_in if h is not None else frozenset()
            at = (table, event.deal)
            if isinstance(event, ActionApplied) and self._all_in.get(at) == all_in:
                return
            self._all_in[at] = all_in
        self._moved[event.deal] = None

    def flush(self) -> tuple[str, ...]:
        """Recompute the deals noted since the last flush; the audiences whose list may have
        moved."""
        moved, self._moved = self._moved, {}
        if not moved:
            return ()
        public = False
        for deal in moved:
            if deal not in self.public and self.released(deal):
                self.public.add(deal)
                self._enter(PUBLIC, [e for e in self._of(deal) if e.score > 0])
            public |= deal in self.public
            self._set(deal)
        return AUDIENCES if public else (LIVE,)

    def _of(self, deal: int) -> list[Entry]:
        return [self.entries[(deal, s)] for s in range(1, self.state.config.seats + 1)]

    def _set(self, deal: int) -> None:
        audiences = AUDIENCES if deal in self.public else (LIVE,)
        for new in deal_entries(self.state, deal):
            old = self.entries.get((new.deal, new.seat))
            if old == new:
                continue
            self.entries[(new.deal, new.seat)] = new
            for a in audiences:
                order = self.order[a]
                if old is not None and old.score > 0:
                    del order[bisect_left(order, old.key)]
                if new.score > 0:
                    insort(order, new.key)

    def _enter(self, audience: str, entries: list[Entry]) -> None:
        for e in entries:
            insort(self.order[audience], e.key)

    def payload(self, audience: str, *args: int) -> dict[str, Any]:
        """An audience's list now (a new document each time; its topic takes no ``args``)."""
        keys = self.order[audience][: self.top]
        return {"suggestions": [self.entries[(deal, seat)].payload() for _, deal, seat in keys]}
