"""The ``console`` family: one table's console-scoped state (``console:{t}``, live only;
``hub.engine.console_view``). Every hand event of the table moves it, and so does a refusal
there (a refused event uses up its console's seq: ``last_seq`` moves), a penalty, a
stage's fill and a roster correction (the names). An action is moved in place (its item
appended, the fields it moved set: ``Projections._show_console``); the rest is rebuilt at
the flush and diffed."""

from __future__ import annotations

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


CONSOLE = Feed(
    "console",
    (*HAND_EVENTS, Rejected, PenaltyApplied, StageFilled, RosterChanged),
    console_keys,
    _console,
    moves=(ActionApplied,),  # hub.engine.projections._show_console
    params=("table",),
    audiences=(LIVE,),
    role=Role.COMMENTATOR,  # and the console of that table (``console``)
    delta="replace of the fields that moved; one action adds one row at /actions/-",
    console=OWN,
)
