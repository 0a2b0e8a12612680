"""The ``ops`` family's payload (the operator's desk, declared in ``hub.engine.families.desk``:
refusals, releases, links, hands in play; ``ops_payload``) and its model: ``Ops`` moves the
desk in place. A hand's events move that table's row, and a hand that starts, settles or is
corrected also the disputes, the latest corrections and its (group, deal)'s row of the release
table (how many of the group's tables completed the deal: a lookup, where the whole table has a
row for each group and deal); the desk's rarer events (a refusal, a link, a penalty, a release,
a take, the cue list, a roster fix) rebuild it and record what moved."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hub.domain.states import HandStatus
from hub.engine.changes import ActionApplied, HandRewound, HandSettled, HandStarted
from hub.engine.families.base import Reading
from hub.engine.hands import HandState, TableState
from hub.engine.shown import roster
from hub.engine.tournament import TournamentState
from hub.wire.patch import Recorder
from hub.wire.topics import LIVE, TopicKey

__all__ = ["Ops", "dispute_row", "ops_payload", "ops_row"]

Builder = Callable[[Reading, tuple[int, ...], str], dict[str, Any]]
_HANDS = (HandStarted, HandRewound, HandSettled)


class Ops:
    """The ``ops`` topic's ``Mover``: the tables whose hands moved, whether a hand started,
    settled or was corrected, and whether anything else came, until the flush."""

    def __init__(self, read: Reading, build: Builder) -> None:
        self.read = read
        self.build = build
        self.key: TopicKey = read.keys().k[LIVE]["ops"]
        self.rec: Recorder | None = None
        state = read.engine.state
        self._row = {t: i for i, t in enumerate(state.tables)}  # table -> its row
        self._noted = False
        self._tables: dict[int, None] = {}  # tables whose row may have moved
        self._hands: dict[tuple[int, int], None] = {}  # hands started, settled or corrected
        self._release: dict[tuple[str, int], int] = {}  # (group, deal) -> its release row
        self._all = False  # anything else: rebuilt
        self._disputed: dict[int, list[HandState]] = {}  # table -> its disputed hands
        self._refused: Counter[Any] = Counter()  # table -> refusals listed

    def on(self, event: Any) -> None:
        self._noted = True
        cls = type(event)
        if cls is ActionApplied:
            self._tables[event.table] = None
        elif cls in _HANDS:
            self._tables[event.table] = None
            self._hands[(event.table, event.deal)] = None
        else:
            self._all = True

    def open(self, key: TopicKey) -> Recorder | None:
        if key != self.key:
            return None
        self.rec = Recorder(self.build(self.read, (), LIVE))
        self._count()
        return self.rec

    def _count(self) -> None:
        """The disputes and refusals by table, and where each release row is, from scratch."""
        engine = self.read.engine
        assert self.rec is not None
        self._release = {
            (row["group"], row["deal"]): i for i, row in enumerate(self.rec.doc["release"])
        }
        self._disputed = {}
        for h in engine.state.disputes():
            self._disputed.setdefault(h.table, []).append(h)
        self._refused = Counter(r.get("table") for r in engine.desk.rejections)

    def flush(self) -> Iterable[TopicKey]:
        if not self._noted:
            return ()
        tables, self._tables = self._tables, {}
        hands, every = self._hands, self._all
        self._noted = self._all = False
        self._hands = {}
        rec = self.rec
        if rec is None:
            return (self.key,)
        if every:
            rec.replace_with(self.build(self.read, (), LIVE))
            self._count()
            return (self.key,)
        engine = self.read.engine
        state = engine.state
        rec.set(("at",), engine.desk.now)
        if hands:
            for table in tables:
                self._dispute(state.tables[table])
            disputes = [
                dispute_row(state, h)
                for t in sorted(self._disputed, key=self._row.__getitem__)
                for h in self._disputed[t]
            ]
            rec.replace_at(("disputes",), disputes)
            rec.replace_at(("corrections",), state.corrections[-50:])
            board, config = state.board, state.config
            for table, deal in hands:  # (a release, a correction's: rebuilt, ``_all``)
                group = config.group_of(table).id
                i = self._release.get((group, deal))
                if i is not None:
                    counted = board.tables_counted(group, deal)
                    rec.update(("release", i), {"tables_complete": counted})
        links = engine.desk.links
        for table in tables:
            row = ops_row(
                state.tables[table],
                self._disputed.get(table, []),
                links,
                self._refused[table],
            )
            rec.update(("tables", self._row[table]), row)
        return (self.key,)

    def _dispute(self, table: TableState) -> None:
        """Read one table's disputed hands again."""
        waiting = [h for h in table.hands.values() if h.status == HandStatus.DISPUTED]
        if waiting:
            self._disputed[table.table] = waiting
        else:
            self._disputed.pop(table.table, None)


def ops_payload(
    state: TournamentState,
    rejections: Iterable[dict[str, Any]],
    release: list[dict[str, Any]],
    now: float,
    links: Mapping[str, bool] | None = None,
) -> dict[str, Any]:
    """The operator's desk. ``links``: console -> whether its last acknowledgement reached a
    listener (the console is connected); a table's ``connected`` is None until a console wrote."""
    links = links or {}
    disputed = state.disputes()
    rejections = list(rejections)
    tables = []
    for table in state.tables.values():
        waiting = [h for h in disputed if h.table == table.table]
        refused = sum(1 for r in rejections if r.get("table") == table.table)
        tables.append(ops_row(table, waiting, links, refused))
    return {
        "at": now,
        "game": state.config.game,  # the desk's words (a penalty's chips: MCR's hand points)
        "tables": tables,
        "rejections": rejections[-50:],
        "disputes": [dispute_row(state, h) for h in disputed],
        "corrections": state.corrections[-50:],
        "penalties": [{"id": n, **p} for n, p in enumerate(state.penalties, 1)][-50:],
        "release": release,
    }


def ops_row(
    table: TableState, waiting: list[HandState], links: Mapping[str, bool], refused: int
) -> dict[str, Any]:
    """A table's row of the operator's desk (``waiting``: its disputed hands; ``refused``:
    how many of the refusals listed name it)."""
    current = table.current
    if current is not None:
        deal_no, status = current.deal, current.status
    elif waiting:
        deal_no, status = waiting[0].deal, waiting[0].status
    else:
        deal_no, status = None, "idle"
    return {
        "table": table.table,
        "group": table.group,
        "console": table.console,
        "connected": links.get(table.console) if table.console else None,
        "last_event_at": table.last_event_at,
        "last_seq": table.last_seq,
        "deal": deal_no,
        "last_deal": table.last_finished,  # what an idle live table still shows
        "status": status,
        "completed": table.completed,
        "rejections": refused,
    }


def dispute_row(state: TournamentState, h: HandState) -> dict[str, Any]:
    """A disputed hand on the operator's desk (with the game's own words, if it has them:
    mahjong's ``reason`` and typed fan against the tiles')."""
    own = state.game.dispute(h) or {}
    return {
        "table": h.table,
        "deal": h.deal,
        "status": h.status,
        "pot": h.hand.pot,
        "declared": list(h.declared or ()),
        "computed": list(h.computed or ()),
        "players": [
            {k: row[k] for k in ("seat", "team", "code", "player")}
            for row in roster(state, h.table, h.deal)
            if row["seat"] not in h.hand.folded
        ],
        **own,
    }
