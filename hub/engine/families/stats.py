"""The statistics families: ``stats`` (every player's betting, stack and swing) and
``dealstats:{d}`` (a deal's per-seat comparison: preflop counts, winners, field average,
swings, the best result), for the commentators live and the public over released deals only,
and on the program feed (the delayed engine's: ``stats`` its public one, ``dealstats`` its live
one held until the deal's release; docs/stats.md). Both are moved by one ``Stats`` mover over
one ``hub.engine.stats.Tally``: an event notes the hand or table it moved; at the flush the
tally re-reads those hands and the open documents are edited where they moved (a player's row
field by field, an action's stack and its table's pot only; a deal's seat blocks that moved).
The live ``dealstats`` documents are made when first asked for (a desk follows a deal), the
others when first touched. The builders count from scratch (``stats_payload``,
``dealstats_payload``): the oracle the projections are held to after every event
(tests/test_stats.py, tests/test_projections.py)."""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from hub.engine.changes import DealReleased, RosterChanged, StageFilled
from hub.engine.families.base import CADENCE, Feed, Reading, TopicKeys
from hub.engine.families.hands import CORRECTED, HAND_EVENTS
from hub.engine.stats import Tally, dealstats_payload, stats_payload
from hub.wire.patch import Recorder
from hub.wire.topics import AUDIENCES, LIVE, PUBLIC, TopicKey

__all__ = ["DEALSTATS", "STATS", "Stats"]

PUBLIC_EVENTS = (DealReleased, *CORRECTED)
NAMES = (RosterChanged, StageFilled)


def stats_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    if isinstance(event, NAMES):  # names and teams: both audiences
        return [k[a]["stats"] for a in AUDIENCES]
    if isinstance(event, PUBLIC_EVENTS):
        return [k[PUBLIC]["stats"]]
    return [k[LIVE]["stats"]]


def dealstats_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    if isinstance(event, RosterChanged):
        return [key for a in AUDIENCES for key in k[a]["dealstats"].values()]
    if isinstance(event, StageFilled):  # the live statistics of the stage's deals
        return [k[LIVE]["dealstats"][d] for d in event.deals]
    if isinstance(event, PUBLIC_EVENTS):
        return [k[PUBLIC]["dealstats"][event.deal]]
    return [k[LIVE]["dealstats"][event.deal]]


def _stats(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    engine = read.engine
    return stats_payload(engine.state, engine.release.released, audience)


def _dealstats(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any] | None:
    engine = read.engine
    return dealstats_payload(engine.state, args[0], engine.release.released, audience)


class Stats:
    """Both families' ``Mover`` (one object: the projections hand it each event once per
    family that declares it, and noting is idempotent; the second flush finds nothing)."""

    def __init__(self, read: Reading) -> None:
        engine = read.engine
        self.tally = Tally(engine.state, engine.release.released)
        keys = read.keys()
        self._stats = {a: keys[a]["stats"] for a in AUDIENCES}
        self._deals = {a: keys[a]["dealstats"] for a in AUDIENCES}
        self._args: dict[TopicKey, tuple[str, int | None]] = {}
        for a in AUDIENCES:
            self._args[self._stats[a]] = (a, None)
            for d, key in self._deals[a].items():
                self._args[key] = (a, d)
        self.docs: dict[TopicKey, Recorder] = {}
        self._touched: dict[TopicKey, None] = {}
        self._last: Any = None

    def on(self, event: Any) -> None:
        if event is self._last:  # (the same event, told for the other family)
            return
        self._last = event
        self.tally.on(event)

    def open(self, key: TopicKey) -> Recorder | None:
        found = self._args.get(key)
        if found is None:
            return None
        self._move()  # (what was noted first: the document is made from the tally now)
        audience, deal = found
        tally = self.tally
        payload = tally.stats(audience) if deal is None else tally.dealstats(audience, deal)
        if payload is None:  # (a public deal not released yet)
            return None
        rec = self.docs[key] = Recorder(payload)
        return rec

    def _move(self) -> None:
        tally = self.tally
        if tally.quiet():  # (the second family's flush: the first moved both)
            return
        moved = tally.sync()
        touched = self._touched
        docs = self.docs
        index = tally.index
        for a in AUDIENCES:
            key = self._stats[a]
            players, swung = moved.players[a], moved.swung[a]
            live = moved.live if a == LIVE else ()
            pots = moved.pots if a == LIVE and tally.rows.poker else ()
            if players or swung or live or pots or moved.listed[a]:
                touched[key] = None
                rec = docs.get(key)
                if rec is not None:
                    # its counts: the row, field by field (but the names, unless renamed)
                    remade = tally.row if moved.renamed else tally.counted
                    for p in players:
                        rec.update(("players", index[p]), remade(a, p))
                    for p in swung:  # a deal's field average moved: its players' swings
                        if p not in players:
                            rec.set(("players", index[p], "swing"), tally.swing_of(a, p))
                    for p in live:  # an action: its player's stack
                        if p not in players:
                            rec.update(("players", index[p]), tally.live_fields(p))
                    for t in pots:  # and its table's pot
                        rec.update(("tables", tally.rank[t]), tally.pot_row(t))
                    if moved.listed[a]:
                        rec.set(("deals",), tally.deals(a))
            deal_keys = self._deals[a]
            for d in moved.deals[a]:
                key = deal_keys[d]
                rec = docs.get(key)
                if rec is None:
                    # A live deal's document is made when someone asks for it (a desk follows
                    # one deal; every hand of every table would remake every deal's); the
                    # public's, once released (rarely moved), is made and handed out whole.
                    if a == PUBLIC:
                        touched[key] = None
                    continue
                touched[key] = None
                if (new := tally.dealstats(a, d)) is not None:
                    # (seat by seat: a block that did not move records nothing)
                    for i, block in enumerate(new["seats"]):
                        rec.set(("seats", i), block)
                    rec.set(("summary",), new["summary"])
                    rec.set(("poker",), new["poker"])

    def flush(self) -> Iterable[TopicKey]:
        self._move()
        touched, self._touched = self._touched, {}
        return touched


# One mover for both families: ``STATS``' factory makes it (the projections make the movers in
# ``FAMILIES`` order, ``stats`` first), ``DEALSTATS``' takes the one made for the same reader.
_MADE: weakref.WeakKeyDictionary[Any, Stats] = weakref.WeakKeyDictionary()


def _mover(read: Reading) -> Stats:
    made = _MADE[read] = Stats(read)
    return made


def _same_mover(read: Reading) -> Stats:
    made = _MADE.pop(read, None)
    return made if made is not None else Stats(read)


EVENTS = (*HAND_EVENTS, *PUBLIC_EVENTS, *NAMES)
STATS = Feed(
    "stats",
    EVENTS,
    stats_keys,
    _stats,
    mover=_mover,
    # On the program feed as the other aggregates (standings, seat, ticker): the delayed
    # engine's public statistics, released deals only in the delayed timeline. Never ahead of
    # the programme's pictures (the public's now would count a released deal's hands that some
    # tables have yet to show on air); holding it per deal would hold it all the time.
    program=PUBLIC,
    route="/api/stats",
    delta="replace of the fields of the player rows that moved (/players/{i}/vpip, swing...;"
    " an action: its table's players' stack and pot)",
    cadence=CADENCE,  # (one mover for both families: the same cadence)
)
DEALSTATS = Feed(
    "dealstats",
    EVENTS,
    dealstats_keys,
    _dealstats,
    mover=_same_mover,
    lazy=(LIVE,),
    params=("deal",),
    # As its peers deal:{d} and compare:{d}:{s}: the delayed live statistics of the deal, held
    # until the real engine releases it, then moved hand by hand with the delayed pictures.
    program=LIVE,
    held=True,
    route="/api/dealstats/{deal:int}",
    delta="replace of what a settled hand moved (its seat's preflop counts, winners, field"
    " average, rows' swings, best)",
    cadence=CADENCE,
    embargo=True,
)
