"""The ``console`` family: one table's console-scoped state (``console:{t}``, live only;
``hub.engine.console_view``). Every hand event of the table moves it, and so does a refusal
there (a refused event uses up its console's seq: ``last_seq`` moves), a penalty, a
stage's fill and a roster correction (the names). ``Consoles`` moves each table's document
in place: an action appends its item and sets the fields it moved; any other event rebuilds
that one table's document (a table's worth, never the tournament's) and records what moved."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hub.domain.states import Role
from hub.engine import console_view
from hub.engine.changes import (
    ActionApplied,
    PenaltyApplied,
    Rejected,
    RosterChanged,
    StageFilled,
)
from hub.engine.families.base import Feed, Reading, TopicKeys
from hub.engine.families.hands import HAND_EVENTS
from hub.wire.patch import Recorder
from hub.wire.topics import LIVE, OWN, TopicKey

__all__ = ["CONSOLE"]


def console_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    by_table = k[LIVE]["console"]
    if isinstance(event, StageFilled):
        return [by_table[t] for t in event.tables]
    if isinstance(event, RosterChanged):  # names: every table
        return list(by_table.values())
    found = by_table.get(event.table)
    if found is None:  # a refusal naming no table of ours: its console's seq may have moved
        return list(by_table.values())
    return [found]


def _console(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    engine = read.engine
    table = engine.state.tables[args[0]]
    return console_view.console_payload(engine.state, table, engine.admission.sequencer)


class Consoles:
    """The ``Mover`` of every table's console state: the tables an event touched, and whether
    only actions moved each (then appended), until the flush."""

    def __init__(self, read: Reading) -> None:
        self.read = read
        self.keys = read.keys()
        self.docs: dict[TopicKey, Recorder] = {}
        self._table = {key: t for t, key in self.keys[LIVE]["console"].items()}
        self._noted: dict[TopicKey, bool] = {}  # key -> whether only actions moved it

    def on(self, event: Any) -> None:
        noted = self._noted
        if type(event) is ActionApplied:
            key = self.keys.k[LIVE]["console"][event.table]
            noted.setdefault(key, True)
            return
        for key in console_keys(self.keys, event):
            noted[key] = False

    def open(self, key: TopicKey) -> Recorder | None:
        table = self._table.get(key)
        if table is None:
            return None
        rec = self.docs[key] = Recorder(_console(self.read, (table,), LIVE))
        return rec

    def flush(self) -> Iterable[TopicKey]:
        noted, self._noted = self._noted, {}
        for key, actions in noted.items():
            rec = self.docs.get(key)
            if rec is not None and not (actions and self._append(rec, self._table[key])):
                rec.replace_with(_console(self.read, (self._table[key],), LIVE))
        return noted

    def _append(self, rec: Recorder, table: int) -> bool:
        """A hand's new actions on its table's document: one item appended each, the fields
        they moved set (False: not where the document's actions continue; rebuild it)."""
        engine = self.read.engine
        state = engine.state
        table_state = state.tables[table]
        h = console_view.table_hand(table_state)
        first = len(rec.doc["actions"])
        if h is None or rec.doc["deal"] != h.deal or len(getattr(h.hand, "actions", ())) < first:
            return False
        rec.extend(("actions",), console_view.action_items(h, first))
        rec.update(
            (), console_view.moving_fields(state, table_state, h, engine.admission.sequencer)
        )
        cap = state.config.cap
        seats = rec.doc["seats"]
        values = console_view.seat_values(h, [r["seat"] for r in seats], cap)
        rec.update_rows(("seats",), console_view.SEAT_KEYS, values)  # (most did not move)
        return True


CONSOLE = Feed(
    "console",
    (*HAND_EVENTS, Rejected, PenaltyApplied, StageFilled, RosterChanged),
    console_keys,
    _console,
    params=("table",),
    audiences=(LIVE,),
    role=Role.COMMENTATOR,  # and the console of that table (``console``)
    delta="replace of the fields that moved; one action adds one row at /actions/-",
    console=OWN,
    mover=Consoles,
    lazy=(LIVE,),  # held by a table's web console (pads on Redis read their acks): on demand
)
