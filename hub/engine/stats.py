"""Television statistics: each player's betting (VPIP, PFR, aggression, went to showdown, the
stack and pot in play) and each deal's duplicate comparison (per seat: how many tables folded,
called or raised preflop, who won the pot, the seat's field average, each player's swing
against it, the best result), for the ``stats`` and ``dealstats:{d}`` topics (docs/stats.md).

Two ways to the same numbers:

- ``stats_payload`` and ``dealstats_payload`` count from scratch over every hand the audience
  sees (the builders: the oracle);
- ``Tally`` moves with each engine event: a hand's event re-reads that one hand (its lines, a
  few integers per seat, replace the ones it added before), and a settled hand's deal, once
  every table has played it, has its players' swings made again (a deal's worth: its tables x
  seats); an action moves only its player's stack and its table's pot. Nothing
  tournament-sized is recounted. Swings are kept exactly (per number of tables n, the integer
  sum of n x result - the seat's total) so the running sums equal the recount to the digit.

What counts is what the scores count: a hand's betting once it is complete (a void hand is a
misdeal: no betting counted, a result of 0 for the field average, as the traveller counts it);
the public audience sees the tables of the groups that released the deal. Which games have
betting to count is the game's declaration (``Game.betting_stats``): mahjong has none, so its
players show hands and swings only.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import compress
from typing import Any

from hub.engine.changes import (
    ActionApplied,
    DealReleased,
    HandRewound,
    HandSettled,
    HandStarted,
    ReleasedResultCorrected,
    RosterChanged,
    StageFilled,
)
from hub.engine.hands import COMPLETE, TERMINAL, HandState
from hub.engine.tournament import TournamentState
from hub.wire.topics import AUDIENCES, LIVE, PUBLIC

__all__ = [
    "COUNTS",
    "PREFLOP",
    "HandFacts",
    "Moved",
    "Tally",
    "dealstats_payload",
    "hand_facts",
    "stats_payload",
    "swing_value",
]

# A player's counters, in this order (``Line``): hands counted, hands with a voluntary call,
# bet or raise preflop (VPIP), with a bet or raise preflop (PFR), bets and raises after the
# flop, calls after the flop (AF = aggressive / calls), hands that saw the flop, and of those
# the hands that went to showdown (WTSD = showdown / saw_flop).
COUNTS = ("hands", "vpip", "pfr", "aggressive", "calls", "saw_flop", "showdown")
Line = tuple[int, int, int, int, int, int, int]
ZERO: Line = (0, 0, 0, 0, 0, 0, 0)
# A seat's preflop, most aggressive first: raised (a bet or raise), called, folded, or
# checked (the big blind's option, or a walk: no voluntary chips and no fold).
PREFLOP = ("raise", "call", "fold", "check")
VERB = {"raise": "raised", "call": "called", "fold": "folded", "check": "checked"}

Released = Callable[[str, int], bool]  # (group, deal) -> the public sees it
Player = tuple[str, int]  # (team id, seat)
# A swing, exactly: by the number of tables n of the deals it sums, the sum of n * chips - the
# deal's total (the swing of one deal is that over n); its value, the sum over n in order.
Swing = dict[int, int]
_HAND = (HandStarted, HandRewound, HandSettled)
_NOBODY: tuple[tuple[Player | None, ...], list[int]] = ((), [])


@dataclass(frozen=True, slots=True)
class HandFacts:
    """What one counted hand adds to the statistics: per seat (index ``seat - 1``), its team,
    its line (None: a void hand: no betting counted; a game without betting counts the hand
    only), its preflop (None: a void hand or a game without betting), the result and whether
    it won chips from the pot."""

    teams: tuple[str | None, ...]
    lines: tuple[Line, ...] | None
    preflop: tuple[str, ...] | None
    result: tuple[int, ...]
    won: tuple[bool, ...]


def _line(h: HandState, seats: int) -> tuple[tuple[Line, ...], tuple[str, ...]]:
    """Every seat's betting line and preflop in a complete hand, from its action records."""
    vpip = [0] * seats
    pfr = [0] * seats
    called = [0] * seats
    folded_pre = [0] * seats
    aggressive = [0] * seats
    calls = [0] * seats
    for a in h.hand.actions:
        i = a.seat - 1
        kind = a.kind
        if a.street == "preflop":
            if kind == "call":
                vpip[i] = called[i] = 1
            elif kind == "bet" or kind == "raise":
                vpip[i] = pfr[i] = 1
            elif kind == "fold":
                folded_pre[i] = 1
        elif kind == "bet" or kind == "raise":
            aggressive[i] += 1
        elif kind == "call":
            calls[i] += 1
    flop = seats - sum(folded_pre) >= 2  # (two players left after the preflop betting)
    folded = h.hand.folded
    showdown = seats - len(folded) >= 2
    lines = []
    preflop = []
    for i in range(seats):
        saw = 1 if flop and not folded_pre[i] else 0
        shown = 1 if saw and showdown and (i + 1) not in folded else 0
        lines.append((1, vpip[i], pfr[i], aggressive[i], calls[i], saw, shown))
        if pfr[i]:
            preflop.append("raise")
        elif called[i]:
            preflop.append("call")
        elif folded_pre[i]:
            preflop.append("fold")
        else:
            preflop.append("check")
    return tuple(lines), tuple(preflop)


def hand_facts(
    state: TournamentState,
    h: HandState | None,
    seated: tuple[Player | None, ...] | None = None,
) -> HandFacts | None:
    """What a hand adds now (None: nothing: not started, or in play); ``seated``: who sits in
    each seat of the hand, if known (the ``Tally`` keeps it per hand)."""
    if h is None or not h.counts:
        return None
    seats = state.config.seats
    if seated is None:
        teams = []
        for s in range(1, seats + 1):
            held = state.seat_holder(h.table, s, h.deal)
            teams.append(held[0].id if held else None)
    else:
        teams = [p[0] if p is not None else None for p in seated]
    result = h.result or {}
    chips = tuple(result.get(s, 0) for s in range(1, seats + 1))
    lines = preflop = None
    won = (False,) * seats
    if h.status == COMPLETE:
        committed = h.hand.committed
        won = tuple(chips[s - 1] + committed.get(s, 0) > 0 for s in range(1, seats + 1))
        if state.game.betting_stats:
            lines, preflop = _line(h, seats)
        else:
            lines = ((1, 0, 0, 0, 0, 0, 0),) * seats
    return HandFacts(tuple(teams), lines, preflop, chips, won)


# ------------------------------------------------------------------ shared by both ways


def _players(state: TournamentState) -> list[Player]:
    """Every player: each team's seats, in the file's team order."""
    seats = range(1, state.config.seats + 1)
    return [(team, s) for team in state.config.teams for s in seats]


def _names(state: TournamentState) -> dict[Player, str]:
    """The name shown for each (team, seat): its player at the table where the team sits in
    that seat (the table's first deal's seating, with the roster's fixes)."""
    names: dict[Player, str] = {}
    for t in state.config.tables:
        for s in range(1, state.config.seats + 1):
            held = state.seat_holder(t, s, None)
            if held is not None:
                names.setdefault((held[0].id, s), held[1])
    return names


# The figures rounded are kept (a float's ``round`` to a digit costs ~3,000 instructions: an
# eighth of the statistics' instructions; a stack or a percentage takes few values, and again
# and again).
@functools.lru_cache(maxsize=1 << 16)
def _pct(n: int, of: int) -> float | None:
    return round(100 * n / of, 1) if of else None


@functools.lru_cache(maxsize=1 << 16)
def _bb(chips: int | float | None, bb: int) -> float | None:
    return None if chips is None else round(chips / bb, 1)


@functools.lru_cache(maxsize=1 << 16)
def _af(aggressive: int, calls: int) -> float | None:
    return round(aggressive / calls, 2) if calls else None


def _live_at(
    state: TournamentState, table: int
) -> tuple[dict[Player, int], tuple[int, int] | None]:
    """The stack of each player at a table's hand in betting play, and its (deal, pot)."""
    current = state.tables[table].current
    if current is None or current.status in TERMINAL:
        return {}, None
    hand = current.hand
    committed = hand.committed
    cap = hand.spec.cap
    out = {}
    for s in range(1, state.config.seats + 1):
        held = state.seat_holder(table, s, current.deal)
        if held is not None:
            out[(held[0].id, s)] = cap - committed.get(s, 0)
    return out, (current.deal, hand.pot)


def _pot_row(bb: int, table: int, pot: tuple[int, int] | None) -> dict[str, Any]:
    deal, chips = pot if pot is not None else (None, None)
    return {"table": table, "deal": deal, "pot": chips, "pot_bb": _bb(chips, bb)}


class _Rows:
    """Makes the payloads' rows from counts (both ways share it, so they agree by design on
    the wording and differ only in how the counts were reached)."""

    def __init__(self, state: TournamentState) -> None:
        self.state = state
        self.renamed()

    def renamed(self) -> None:
        state = self.state
        self.info = state.roster.info(state.config)
        self.names = _names(state)
        self.poker = bool(state.game.betting_stats)
        self.bb = max(state.config.big_blind, 1)
        self._statics: dict[tuple[int, int], tuple[HandFacts, list[dict[str, Any]]]] = {}

    def player(
        self,
        p: Player,
        counts: Line,
        swing: Swing,
        stack: int | None,
    ) -> dict[str, Any]:
        team, seat = p
        info = self.info.get(team, {})
        return {
            "id": f"{info.get('code', team)}-{seat}",
            "team": info.get("code", team),
            "colour": info.get("colour"),
            "seat": seat,
            "name": self.names.get(p, ""),
            **self.counted(counts, swing, stack),
        }

    def counted(self, counts: Line, swing: Swing, stack: int | None) -> dict[str, Any]:
        """A player's row but its names: what its counts, swing and stack move (the
        ``Tally``'s edit of a row when a hand counts; the names move only with the roster)."""
        hands, vpip, pfr, aggressive, calls, saw, shown = counts
        poker = self.poker
        return {
            "hands": hands,
            "vpip": _pct(vpip, hands) if poker else None,
            "pfr": _pct(pfr, hands) if poker else None,
            "af": _af(aggressive, calls) if poker else None,
            "wtsd": _pct(shown, saw) if poker else None,
            "stack": stack,
            "stack_bb": _bb(stack, self.bb),
            "swing": swing_value(swing),
            # (a Line is as long as COUNTS; ``strict``'s keyword parsing cost more than the zip)
            "counts": dict(zip(COUNTS, counts)),  # noqa: B905
        }

    def _static(self, deal: int, t: int, f: HandFacts) -> list[dict[str, Any]]:
        """A counted hand's rows, seat by seat, but their swing (made once per hand's facts:
        a deal's next hand moves its swings only)."""
        found = self._statics.get((deal, t))
        if found is not None and found[0] is f:
            return found[1]
        info, bb, state = self.info, self.bb, self.state
        rows = []
        for i, team in enumerate(f.teams):
            held = state.seat_holder(t, i + 1, deal)
            chips = f.result[i]
            shown = info.get(team) if team is not None else None
            rows.append(
                {
                    "table": t,
                    "id": f"{shown['code']}-{i + 1}" if shown else None,
                    "name": held[1] if held else None,
                    "team": shown["code"] if shown else None,
                    "colour": shown["colour"] if shown else None,
                    "chips": chips,
                    "bb": _bb(chips, bb),
                }
            )
        self._statics[(deal, t)] = (f, rows)
        return rows

    def deal(self, deal: int, hands: list[tuple[int, HandFacts]]) -> dict[str, Any]:
        """A deal's statistics from the counted hands an audience sees, in traveller order."""
        state = self.state
        info = self.info
        seats_out = []
        summary = []
        bb = self.bb
        n = len(hands)
        seats = state.config.seats
        tables = [t for t, _ in hands]
        facts = [f for _, f in hands]
        statics = [self._static(deal, t, f) for t, f in hands]
        # The hands' columns, seat by seat (a followed deal's every hand remakes them all:
        # the sums, counts and maxima of a column run in C, not a loop a seat a hand).
        nothing: list[tuple[Any, ...]] = [()] * seats
        results = list(zip(*(f.result for f in facts), strict=True)) if facts else nothing
        won_at = list(zip(*(f.won for f in facts), strict=True)) if facts else nothing
        played = [f.preflop for f in facts if f.preflop is not None]
        preflops = list(zip(*played, strict=True)) if played else nothing
        for s in range(1, seats + 1):
            i = s - 1
            chips_at = results[i]
            column = preflops[i]
            preflop = {k: column.count(k) for k in PREFLOP}
            won = list(compress(tables, won_at[i]))
            best: tuple[int, int] | None = None
            best_team = None
            if n:
                j = chips_at.index(max(chips_at))  # (ties: the first)
                best, best_team = (tables[j], chips_at[j]), facts[j].teams[i]
            average = sum(chips_at) / n if n else None
            rows: list[dict[str, Any]] = []
            if average is not None:
                # (a result's swing once: a seat's results repeat, its rounding costs)
                swings: dict[int, float] = {}
                for static, chips in zip(statics, chips_at, strict=True):
                    swing = swings.get(chips)
                    if swing is None:
                        swing = swings[chips] = round(chips - average, 2)
                    row = static[i].copy()  # (a copy and one key: cheaper than a merge)
                    row["swing"] = swing
                    rows.append(row)
            seats_out.append(
                {
                    "seat": s,
                    "tables": n,
                    "preflop": preflop,
                    "won": won,
                    "field_avg": None if average is None else round(average, 2),
                    "best": None if best is None else {"table": best[0], "chips": best[1]},
                    "rows": rows,
                }
            )
            if self.poker and n >= 2:
                counted = sum(preflop.values())
                top = max(PREFLOP, key=lambda k: preflop[k])  # (ties: the first, most aggressive)
                if preflop[top]:
                    summary.append(
                        f"{preflop[top]} of {counted} tables {VERB[top]} seat {s} preflop"
                    )
            if n >= 2 and best is not None and average is not None:
                who = info[best_team]["name"] if best_team in info else f"T{best[0]}"
                summary.append(
                    f"best at seat {s}: {who} {_signed(best[1])} "
                    f"({_signed_bb(best[1] - average, bb)} BB against the field)"
                )
        out: dict[str, Any] = {"deal": deal, "poker": self.poker, "seats": seats_out}
        out["summary"] = summary
        return out


def _signed(n: int) -> str:
    """+1,800 or \u22121,800 with a true minus sign, as on air (0 unsigned)."""
    return f"{n:+,}".replace("-", "\u2212") if n else "0"


def _signed_bb(x: float, bb: int) -> str:
    return f"{x / bb:+.1f}".replace("-", "\u2212")


def swing_value(swing: Swing) -> float:
    """A player's swing in chips, to the hundredth (the same sum whichever way it was kept)."""
    if len(swing) == 1:  # (every deal of as many tables: the sum of one, without its sort)
        ((n, part),) = swing.items()
        return round(part / n, 2) + 0.0
    return round(sum(part / n for n, part in sorted(swing.items())), 2) + 0.0


def _tables_of(state: TournamentState, deal: int, released: Released | None) -> list[int]:
    """The tables of a deal an audience sees (``released``: the public's rule), in order."""
    return [
        t
        for g in state.config.groups_playing(deal)
        if released is None or released(g.id, deal)
        for t in g.tables
    ]


def _swings(hands: Iterable[tuple[int, HandFacts]], seats: int) -> dict[Player, int]:
    """Each player's swing on a deal, times the number of tables n that counted it: n times
    the result minus the seat's total there (an integer; the deal's n is ``len(hands)``)."""
    counted = [f for _, f in hands]
    out: dict[Player, int] = {}
    if not counted:
        return out
    n = len(counted)
    for i in range(seats):
        total = sum(f.result[i] for f in counted)
        for f in counted:
            team = f.teams[i]
            if team is not None:
                p = (team, i + 1)
                out[p] = out.get(p, 0) + n * f.result[i] - total
    return out


# ------------------------------------------------------------------ from scratch (the oracle)


def _audience_hands(
    state: TournamentState, deal: int, audience: str, released: Released
) -> list[tuple[int, HandFacts]]:
    out = []
    for t in _tables_of(state, deal, released if audience == PUBLIC else None):
        f = hand_facts(state, state.hand(t, deal))
        if f is not None:
            out.append((t, f))
    return out


def stats_payload(state: TournamentState, released: Released, audience: str) -> dict[str, Any]:
    """The ``stats`` payload counted from scratch over every hand the audience sees."""
    rows = _Rows(state)
    seats = state.config.seats
    counts: dict[Player, list[int]] = {}
    swing: dict[Player, Swing] = {}
    deals = []
    for d in range(1, state.config.deals + 1):
        hands = _audience_hands(state, d, audience, released)
        if hands:
            deals.append(d)
        for _, f in hands:
            if f.lines is None:
                continue  # (a void hand: no betting counted)
            for i, team in enumerate(f.teams):
                if team is not None:
                    c = counts.setdefault((team, i + 1), [0] * len(COUNTS))
                    for k, v in enumerate(f.lines[i]):
                        c[k] += v
        if len(hands) < len(_tables_of(state, d, None)):
            continue  # (a swing counts once every table has played the deal)
        for p, x in _swings(hands, seats).items():
            parts = swing.setdefault(p, {})
            parts[len(hands)] = parts.get(len(hands), 0) + x
    live: dict[Player, int] = {}
    pots = []
    if audience == LIVE and rows.poker:
        for t in state.config.tables:
            stacks, pot = _live_at(state, t)
            for p, stack in stacks.items():
                live.setdefault(p, stack)
            pots.append(_pot_row(rows.bb, t, pot))
    return {
        "poker": rows.poker,
        "deals": deals,
        "tables": pots,
        "players": [
            rows.player(p, _as_line(counts.get(p)), swing.get(p, {}), live.get(p))
            for p in _players(state)
        ],
    }


def _as_line(c: list[int] | None) -> Line:
    return ZERO if c is None else (c[0], c[1], c[2], c[3], c[4], c[5], c[6])


def dealstats_payload(
    state: TournamentState, deal: int, released: Released, audience: str
) -> dict[str, Any] | None:
    """The ``dealstats:{deal}`` payload from scratch (None: the public's, before any group
    released the deal)."""
    if audience == PUBLIC and not any(
        released(g.id, deal) for g in state.config.groups_playing(deal)
    ):
        return None
    return _Rows(state).deal(deal, _audience_hands(state, deal, audience, released))


# ------------------------------------------------------------------ incremental (the model)


@dataclass(slots=True)
class Moved:
    """What a ``Tally.sync`` moved, per audience: the players whose counts moved
    (``players``), whose swing moved (``swung``), whose stack or pot moved (``live``), the
    deals whose statistics moved, whether the list of counted deals moved; ``renamed``: every
    row's names."""

    players: dict[str, set[Player]]
    swung: dict[str, set[Player]]
    live: set[Player]
    pots: set[int]
    deals: dict[str, set[int]]
    listed: dict[str, bool]
    renamed: bool = False


class Tally:
    """Both audiences' statistics, moved by engine events (the module's docstring).

    ``on`` notes what an event moved (a hand, a table's hand in play, a deal released, the
    names); ``sync`` re-reads the hands noted and moves the counts by their difference, makes
    again the swings of their deals, and says what moved (``Moved``); ``stats`` and
    ``dealstats`` are the payloads now, equal to ``stats_payload`` and ``dealstats_payload``
    (tested after every event)."""

    def __init__(self, state: TournamentState, released: Released) -> None:
        self.state = state
        self.released = released
        config = state.config
        self.seats = config.seats
        self.rows = _Rows(state)
        self.players = _players(state)
        self.index = {p: i for i, p in enumerate(self.players)}
        self.counts: dict[str, dict[Player, Line]] = {a: {} for a in AUDIENCES}
        self.swing: dict[str, dict[Player, Swing]] = {a: {} for a in AUDIENCES}
        # The hands each audience's counts hold, by deal then table; each deal's swings.
        self.hands: dict[str, dict[int, dict[int, HandFacts]]] = {a: {} for a in AUDIENCES}
        # Each deal's swings (times its n) and its n, per audience.
        self.deal_swing: dict[str, dict[int, tuple[int, dict[Player, int]]]] = {
            a: {} for a in AUDIENCES
        }
        self.live: dict[Player, int] = {}
        # table -> who sits in each seat of its hand in play, and their stacks
        self.live_at: dict[int, tuple[tuple[Player | None, ...], list[int]]] = {}
        self.holding: dict[Player, dict[int, int]] = {}  # player -> table -> its stack there
        self.pots: dict[int, tuple[int, int] | None] = {}  # table -> (deal, pot) in play
        self._seated: dict[tuple[int, int], tuple[Player | None, ...]] = {}  # a hand's players
        self.rank = {t: i for i, t in enumerate(config.tables)}
        self._order = {
            d: _tables_of(state, d, None) for d in range(1, config.deals + 1)
        }  # a deal's tables, in traveller order
        self._group = {t: config.group_of(t).id for t in config.tables}
        self._noted: dict[tuple[int, int], None] = {}
        self._tables: dict[int, None] = {}
        self._renamed = False
        # Made from what the state holds now (a feed started after a journal's replay).
        for d, tables in self._order.items():
            for t in tables:
                if state.hand(t, d) is not None:
                    self._noted[(t, d)] = None
        self._tables.update(dict.fromkeys(config.tables))
        self.sync()

    # -- events
    def on(self, event: Any) -> None:
        """Note what an engine event moved (idempotent: the work waits for ``sync``)."""
        cls = type(event)
        if cls is ActionApplied:  # (the hot path: the table's stacks and pot)
            self._tables[event.table] = None
        elif cls in _HAND:
            self._noted[(event.table, event.deal)] = None
            self._tables[event.table] = None
        elif cls is DealReleased:
            self._noted.update(dict.fromkeys((t, event.deal) for t in self._order[event.deal]))
        elif cls is ReleasedResultCorrected:
            self._noted[(event.table, event.deal)] = None
        elif cls is RosterChanged or cls is StageFilled:
            self._renamed = True

    def quiet(self) -> bool:
        """Nothing noted since the last ``sync`` (which would then move nothing)."""
        return not (self._noted or self._tables or self._renamed)

    def sync(self) -> Moved:
        """Move by what was noted; what moved."""
        moved = Moved(
            {a: set() for a in AUDIENCES},
            {a: set() for a in AUDIENCES},
            set(),
            set(),
            {a: set() for a in AUDIENCES},
            dict.fromkeys(AUDIENCES, False),
        )
        if self._renamed:
            self._renamed = False
            self.rows.renamed()
            self._seated.clear()
            moved.renamed = True
            for a in AUDIENCES:
                moved.players[a].update(self.players)
                moved.deals[a].update(self.hands[a])
        noted, self._noted = self._noted, {}
        state = self.state
        for t, d in noted:
            h = state.hand(t, d)
            f = hand_facts(state, h, self._seating(t, d) if h is not None and h.counts else None)
            public = f is not None and self.released(self._group[t], d)
            for a in AUDIENCES:
                want = f if a == LIVE or public else None
                held = self.hands[a].get(d)
                old = held.get(t) if held is not None else None
                if old == want:
                    continue
                self._count(a, old, -1, moved)
                self._count(a, want, 1, moved)
                if want is None:
                    assert held is not None
                    del held[t]
                    if not held:
                        del self.hands[a][d]
                        moved.listed[a] = True
                else:
                    if held is None:
                        held = self.hands[a][d] = {}
                        moved.listed[a] = True
                    held[t] = want
                moved.deals[a].add(d)
        for a in AUDIENCES:
            for d in moved.deals[a]:
                self._swing(a, d, moved)
        tables, self._tables = self._tables, {}
        if self.rows.poker:
            for t in tables:
                self._live(t, moved)
        return moved

    def _count(self, a: str, f: HandFacts | None, sign: int, moved: Moved) -> None:
        if f is None or f.lines is None:
            return
        counts = self.counts[a]
        for i, team in enumerate(f.teams):
            if team is None:
                continue
            p = (team, i + 1)
            old = counts.get(p, ZERO)
            line = f.lines[i]
            counts[p] = tuple(map(operator.add if sign > 0 else operator.sub, old, line))
            moved.players[a].add(p)

    def _swing(self, a: str, d: int, moved: Moved) -> None:
        """A deal's swings, once every table has played it (then its field average is
        final but for corrections: a player's swing moves once a deal, not at every hand)."""
        hands = self.hands_of(a, d)
        n, new = len(hands), {}
        if n < len(self._order[d]):  # (not counted yet: not worth the sums)
            n = 0
        else:
            new = _swings(hands, self.seats)
        was, old = self.deal_swing[a].get(d, (0, {}))
        total = self.swing[a]
        swung = moved.swung[a]
        for p in new.keys() | old.keys():
            before, after = old.get(p, 0), new.get(p, 0)
            if was == n and before == after:
                continue
            held = total.get(p)
            if held is None:
                held = total[p] = {}
            if was and before:
                held[was] -= before
                if not held[was]:
                    del held[was]
            if n and after:
                held[n] = held.get(n, 0) + after
            swung.add(p)
        if new:
            self.deal_swing[a][d] = (n, new)
        else:
            self.deal_swing[a].pop(d, None)

    def _live(self, t: int, moved: Moved) -> None:
        """A table's players' stacks and pot, re-read. (A player in play at two tables at
        once, a team's seat in two stages that overlap, shows the first table's, as the
        recount does.) Kept seat by seat: an action moves a seat's stack or two, so only a
        seat whose stack moved touches its player's (the players' keys are tuples, hashed
        again at every lookup: six players' three lookups each, at every flush a table
        moved, were most of this re-read's cost)."""
        seated, stacks, pot = self._live_at(t)
        if self.pots.get(t) != pot:
            self.pots[t] = pot
            moved.pots.add(t)
        was_seated, was = self.live_at.get(t, _NOBODY)
        if seated is was_seated:  # (the same hand's seating: compare seat by seat)
            if stacks == was:
                return
            holding = self.holding
            for i, v in enumerate(stacks):
                if v != was[i] and (p := seated[i]) is not None:
                    holding[p][t] = v
                    self._show(p, moved)
            self.live_at[t] = (seated, stacks)
            return
        holding = self.holding
        new = {p: v for p, v in zip(seated, stacks, strict=True) if p is not None}
        for p in was_seated:
            if p is not None and p not in new:
                del holding[p][t]
                self._show(p, moved)
        for p, v in new.items():
            at = holding.get(p)
            if at is None:
                at = holding[p] = {}
            if at.get(t) != v:
                at[t] = v
                self._show(p, moved)
        self.live_at[t] = (seated, stacks)

    def _live_at(
        self, t: int
    ) -> tuple[tuple[Player | None, ...], list[int], tuple[int, int] | None]:
        """``_live_at``, seat by seat: who sits in each seat (kept per hand: the same tuple
        while the hand plays), their stacks, and the (deal, pot); no one outside a hand in
        betting play."""
        current = self.state.tables[t].current
        if current is None or current.status in TERMINAL:
            return (), [], None
        seated = self._seating(t, current.deal)
        hand = current.hand
        committed, cap = hand.committed, hand.spec.cap
        stacks = [cap - committed.get(s, 0) for s in range(1, self.seats + 1)]
        return seated, stacks, (current.deal, hand.pot)

    def _seating(self, t: int, d: int) -> tuple[Player | None, ...]:
        """Who sits in each seat of a table's hand of a deal (kept until the names move)."""
        seated = self._seated.get((t, d))
        if seated is None:
            holders = [self.state.seat_holder(t, s, d) for s in range(1, self.seats + 1)]
            seated = self._seated[(t, d)] = tuple(
                (h[0].id, s) if h is not None else None for s, h in enumerate(holders, 1)
            )
        return seated

    def _show(self, p: Player, moved: Moved) -> None:
        at = self.holding[p]
        if len(at) == 1:  # (in play at one table: the rule below, without its call)
            v: int | None = next(iter(at.values()))
        else:
            v = at[min(at, key=self.rank.__getitem__)] if at else None
        if v is None:
            if self.live.pop(p, None) is not None:
                moved.live.add(p)
        elif self.live.get(p) != v:
            self.live[p] = v
            moved.live.add(p)

    # -- payloads
    def hands_of(self, a: str, d: int) -> list[tuple[int, HandFacts]]:
        held = self.hands[a].get(d)
        if not held:
            return []
        return [(t, held[t]) for t in self._order[d] if t in held]

    def deals(self, a: str) -> list[int]:
        return sorted(self.hands[a])

    def row(self, a: str, p: Player) -> dict[str, Any]:
        live = self.live.get(p) if a == LIVE else None
        return self.rows.player(p, self.counts[a].get(p, ZERO), self.swing[a].get(p, {}), live)

    def counted(self, a: str, p: Player) -> dict[str, Any]:
        """``row`` but the names (unmoved but by the roster: ``Moved.renamed``)."""
        live = self.live.get(p) if a == LIVE else None
        return self.rows.counted(self.counts[a].get(p, ZERO), self.swing[a].get(p, {}), live)

    def swing_of(self, a: str, p: Player) -> float:
        return swing_value(self.swing[a].get(p, {}))

    def live_fields(self, p: Player) -> dict[str, Any]:
        """A player's stack fields (the live audience's: an action's move)."""
        stack = self.live.get(p)
        return {"stack": stack, "stack_bb": _bb(stack, self.rows.bb)}

    def pot_row(self, t: int) -> dict[str, Any]:
        return _pot_row(self.rows.bb, t, self.pots.get(t))

    def stats(self, a: str) -> dict[str, Any]:
        live = a == LIVE and self.rows.poker
        return {
            "poker": self.rows.poker,
            "deals": self.deals(a),
            "tables": [self.pot_row(t) for t in self.state.config.tables] if live else [],
            "players": [self.row(a, p) for p in self.players],
        }

    def dealstats(self, a: str, d: int) -> dict[str, Any] | None:
        if a == PUBLIC and not any(
            self.released(g.id, d) for g in self.state.config.groups_playing(d)
        ):
            return None
        return self.rows.deal(d, self.hands_of(a, d))
