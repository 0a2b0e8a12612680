"""The families that show hands: ``table`` (one table's live hand) and ``projection`` (the
standings as if every hand in play ended now); the travellers, ``deal`` and ``compare``, are
``hub.engine.families.travellers``'. ``Tables`` moves the ``table`` family: an action appends its
row to its table's live document and sets the fields it moved; any other event rebuilds the one
table's document it touched (a table's worth, never the tournament's) and records what moved."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hub.domain.games.base import GameDefaults
from hub.domain.states import Role
from hub.engine import projection_view, views
from hub.engine.changes import (
    ActionApplied,
    DealReleased,
    HandRewound,
    HandSettled,
    HandStarted,
    ReleasedDealCorrected,
    ReleasedResultCorrected,
    RosterChanged,
    StageFilled,
)
from hub.engine.equities import hand_equity
from hub.engine.families.base import CADENCE, Feed, Reading, TopicKeys
from hub.engine.showdown import showdown_payload
from hub.wire.patch import Recorder
from hub.wire.topics import AUDIENCES, LIVE, PUBLIC, TopicKey

__all__ = ["HAND_EVENTS", "PROJECTION", "TABLE"]

HAND_EVENTS = (HandStarted, ActionApplied, HandRewound, HandSettled)
# A released deal corrected: the public's deal and travellers are rebuilt.
CORRECTED = (ReleasedDealCorrected, ReleasedResultCorrected)


def table_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    # the public table shows the latest released deal's showdown (also once corrected)
    if isinstance(event, (DealReleased, *CORRECTED)):
        return list(k[PUBLIC]["table"].values())
    if isinstance(event, StageFilled):  # the rosters of the stage's tables
        return [k[a]["table"][t] for a in AUDIENCES for t in event.tables]
    if isinstance(event, RosterChanged):  # names and colours: every table, every audience
        return [key for a in AUDIENCES for key in k[a]["table"].values()]
    return [k[LIVE]["table"][event.table]]


def projection_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    return [k[LIVE]["projection"]]


def _table(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    engine = read.engine
    table = engine.state.tables[args[0]]
    released = engine.release.released_deals(table.group)
    public_deal = max(released, default=None)
    showdown = None
    if public_deal is not None and audience != LIVE:
        showdown = showdown_payload(engine.state.hand(table.table, public_deal), engine.state.game)
    if public_deal is None and engine.release.public_teams(table.group):
        public_deal = table.order[0]
    return views.table_payload(
        engine.state,
        table,
        live=audience == LIVE,
        released_deals=len(released),
        public_deal=public_deal,
        public_showdown=showdown,
    )


class Tables:
    """The ``table`` family's ``Mover``: the tables an event touched, per audience, and the
    deal whose actions alone moved each (then appended; None: rebuilt), until the flush."""

    def __init__(self, read: Reading) -> None:
        self.read = read
        self.keys = read.keys()
        self.docs: dict[TopicKey, Recorder] = {}
        self._live = self.keys.k[LIVE]["table"]
        self._of = {  # key -> (audience, table), of the audiences the projections keep
            key: (a, t) for a in (LIVE, PUBLIC) for t, key in self.keys.k[a]["table"].items()
        }
        self._noted: dict[TopicKey, int | None] = {}

    def on(self, event: Any) -> None:
        noted = self._noted
        if type(event) is ActionApplied:
            key = self._live[event.table]
            if noted.setdefault(key, event.deal) != event.deal:
                noted[key] = None  # (two hands' actions: rebuilt)
            return
        for key in table_keys(self.keys, event):
            noted[key] = None

    def open(self, key: TopicKey) -> Recorder | None:
        found = self._of.get(key)
        if found is None:
            return None
        rec = self.docs[key] = Recorder(_table(self.read, (found[1],), found[0]))
        return rec

    def flush(self) -> Iterable[TopicKey]:
        noted, self._noted = self._noted, {}
        for key, deal in noted.items():
            rec = self.docs.get(key)
            if rec is None:
                continue
            audience, table = self._of[key]
            if deal is None or not self._append(rec, table, deal):
                rec.replace_with(_table(self.read, (table,), audience))
        return noted

    def _append(self, rec: Recorder, table: int, deal: int) -> bool:
        """A hand's new actions on its table's live document: one row appended each, the
        fields they moved set (False: not where the document's actions continue; rebuild)."""
        state = self.read.engine.state
        table_state = state.tables[table]
        h = table_state.current
        doc = rec.doc
        if h is None or h.deal != deal or doc.get("deal") != deal:
            return False
        rows = views.action_rows(h)
        first = len(doc["actions"])
        if len(rows) < first or (first and rows[first - 1] != doc["actions"][-1]):
            return False
        if len(rows) == first:
            return True
        rec.extend(("actions",), rows[first:])
        rec.set(("last_action",), rows[-1])
        game = state.game
        own_hand, own_table, own_seat = own_fields(game)
        block = hand_equity(h)  # (every seat's equity is of this one block)
        if own_hand:
            rec.update((), views.hand_fields(h, game))
        else:
            rec.update_values((), views.HAND_KEYS, views.hand_values(h, block))
        if own_table:
            rec.update((), game.table_fields(state, table_state))
        seats = doc["seats"]
        if own_seat:
            rec.update_each(("seats",), [views.seat_fields(h, r["seat"], game) for r in seats])
        else:  # (the seats an action did not move are passed over whole)
            values = views.seat_values(h, [r["seat"] for r in seats], block)
            rec.update_rows(("seats",), views.SEAT_KEYS, values)
        return True


_OWN: dict[type, tuple[bool, bool, bool]] = {}


def own_fields(game: Any) -> tuple[bool, bool, bool]:
    """Whether ``game`` has fields of its own (``hand_fields``, ``table_fields``,
    ``seat_fields`` not ``GameDefaults``'s, which add none): a game without moves its table by
    ``views.hand_values`` and ``seat_values`` alone (and one that has may override them: RPS
    Poker's ``to_act``; its rows are then made whole, as the builder makes them)."""
    kind = type(game)
    found = _OWN.get(kind)
    if found is None:
        hand, table, seat = (
            getattr(kind, name, None) is not getattr(GameDefaults, name)
            for name in ("hand_fields", "table_fields", "seat_fields")
        )
        found = _OWN[kind] = (hand, table, seat)
    return found


def _projection(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    engine = read.engine
    board = engine.projecting.projections.board or projection_view.projected_board(engine.state)
    return projection_view.projection_payload(engine.state, board)


TABLE = Feed(
    "table",
    (*HAND_EVENTS, DealReleased, *CORRECTED, StageFilled, RosterChanged),
    table_keys,
    _table,
    params=("table",),
    route="/api/tables/{table:int}",
    delta="live: one action adds one row at /actions/- and replaces the seat fields it moved"
    " (equity only when a card is dealt or someone folds)",
    program=LIVE,
    held=True,
    mover=Tables,
)
PROJECTION = Feed(
    "projection",
    (*HAND_EVENTS, RosterChanged),
    projection_keys,
    _projection,
    audiences=(LIVE,),
    role=Role.COMMENTATOR,
    route="/api/projection",
    delta="replace of the hands and rows that moved",
    mover=projection_view.Projection,
    cadence=CADENCE,
)
