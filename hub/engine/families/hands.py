"""The ``table`` family (one table's live hand: ``table_payload``, its builder) and the hand
events the families that show hands share; the travellers, ``deal`` and ``compare``, are
``hub.engine.families.travellers``', the ``projection`` ``hub.engine.families.projection``'s.
``Tables`` moves the ``table`` family: an action appends its row to its table's live document
and sets the fields it moved; any other event rebuilds the one table's document it touched (a
table's worth, never the tournament's) and records what moved."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hub.domain.games.base import GameDefaults, Views
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
from hub.engine.equities import hand_equity, seat_equity
from hub.engine.families.base import Feed, Reading, TopicKeys
from hub.engine.showdown import showdown_payload
from hub.engine.shown import action_rows, roster
from hub.engine.tournament import HandState, TableState, TournamentState
from hub.wire.patch import Recorder
from hub.wire.topics import AUDIENCES, LIVE, PUBLIC, TopicKey

__all__ = ["CORRECTED", "HAND_EVENTS", "TABLE", "table_payload"]

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
    return table_payload(
        engine.state,
        table,
        live=audience == LIVE,
        released_deals=len(released),
        public_deal=public_deal,
        public_showdown=showdown,
    )


SEAT_KEYS = ("committed", "street_bet", "stack", "folded", "all_in", "to_act", "equity")
"""The keys of ``seat_values``, in the order ``seat_fields`` has them (before the game's)."""


def seat_values(
    current: HandState, seats: list[int], block: Mapping[str, Any] | None
) -> list[tuple[Any, ...]]:
    """Each of ``seats``' live fields of every game, as values of ``SEAT_KEYS`` (``block``:
    the hand's ``hand_equity``, asked once for all its seats): the table's mover compares
    them with each seat's row whole, and most seats did not move with an action."""
    hand = current.hand
    cap = current.spec.cap
    committed, street_bet = hand.committed, hand.street_bet
    folded, all_in, to_act = hand.folded, hand.all_in, hand.to_act
    out = []
    for seat in seats:
        chips = committed.get(seat, 0)
        out.append(
            (
                chips,
                street_bet.get(seat, 0),
                cap - chips,
                seat in folded,
                seat in all_in,
                to_act == seat,
                seat_equity(block, seat),
            )
        )
    return out


def seat_fields(current: HandState, seat: int, game: Views) -> dict[str, Any]:
    """A seat's live fields at a table's hand in progress (they move with every action;
    ``equity`` only when a card is dealt or someone folds): ``seat_values``, then the
    game's own (which may override them: RPS Poker's ``to_act``)."""
    values = seat_values(current, [seat], hand_equity(current))[0]
    out = dict(zip(SEAT_KEYS, values, strict=True))
    out.update(game.seat_fields(current.hand, seat))
    return out


HAND_KEYS = ("status", "reopened", "street", "pot", "to_act", "board", "equity")
"""The keys of ``hand_values``, in the order ``hand_fields`` has them (before the game's)."""


def hand_values(current: HandState, block: Mapping[str, Any] | None) -> tuple[Any, ...]:
    """A table's live fields of every game for its hand in progress, as values of
    ``HAND_KEYS`` (``block``: the hand's ``hand_equity``)."""
    hand = current.hand
    return (
        current.status,
        current.reopened,
        hand.street,
        hand.pot,
        hand.to_act,
        list(hand.board_visible()),
        block,
    )


def hand_fields(current: HandState, game: Views) -> dict[str, Any]:
    """A table's live fields of its hand in progress that move with every action:
    ``hand_values``, then the game's own (which may override them)."""
    out = dict(zip(HAND_KEYS, hand_values(current, hand_equity(current)), strict=True))
    out.update(game.hand_fields(current.hand))
    return out


def table_payload(
    state: TournamentState,
    table: TableState,
    *,
    live: bool,
    released_deals: int = 0,
    public_deal: int | None = None,
    public_showdown: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A table's live state. The public gets the roster, how many deals its group has
    released and the showdown of this table's latest released deal: nothing that moves with
    this table's own play (not even playing/idle or a completed count, whose timing would tell
    how long each hand took before release). With sessions, the public roster is that of the
    group's latest released deal (``public_deal``). Live, ``showdown`` is the last finished
    hand's while the table is idle (None once the next hand starts)."""
    if live:
        seats = roster(state, table.table, state.table_deal(table))
    elif public_deal is None:  # a stage whose teams are not public yet
        seats = [
            {"seat": s, "team": None, "player": None} for s in range(1, state.config.seats + 1)
        ]
    else:
        seats = roster(state, table.table, public_deal)
    out: dict[str, Any] = {
        "table": table.table,
        "group": table.group,
        "deals_total": len(table.order),
    }
    current = table.current
    if not live:
        out["seats"] = seats
        out["released"] = released_deals
        out["showdown"] = public_showdown
        return out
    out["game"] = state.config.game  # what the board and hole codes are: cards or tiles
    out["completed"] = table.completed
    out["last_deal"] = table.last_finished
    out.update(state.game.table_fields(state, table))  # mahjong: winds, hands, result
    if current is None:
        out.update(seats=seats, status="idle", deal=None, street=None, pot=0, to_act=None)
        out.update(board=[], last_action=None, actions=[], button=None, equity=None)
        last = out["last_deal"]
        out["showdown"] = showdown_payload(table.hands.get(last) if last else None, state.game)
        return out
    dealt = current.spec.cards
    for row in seats:
        row.update(seat_fields(current, row["seat"], state.game))
        if dealt is not None:
            row["hole"] = list(dealt.hole[row["seat"]])
    actions = action_rows(current)
    out.update(seats=seats, deal=current.deal, button=current.spec.button)
    out.update(hand_fields(current, state.game))
    out.update(last_action=actions[-1] if actions else None, actions=actions, showdown=None)
    return out


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
        rows = action_rows(h)
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
            rec.update((), hand_fields(h, game))
        else:
            rec.update_values((), HAND_KEYS, hand_values(h, block))
        if own_table:
            rec.update((), game.table_fields(state, table_state))
        seats = doc["seats"]
        if own_seat:
            rec.update_each(("seats",), [seat_fields(h, r["seat"], game) for r in seats])
        else:  # (the seats an action did not move are passed over whole)
            values = seat_values(h, [r["seat"] for r in seats], block)
            rec.update_rows(("seats",), SEAT_KEYS, values)
        return True


_OWN: dict[type, tuple[bool, bool, bool]] = {}


def own_fields(game: Any) -> tuple[bool, bool, bool]:
    """Whether ``game`` has fields of its own (``hand_fields``, ``table_fields``,
    ``seat_fields`` not ``GameDefaults``'s, which add none): a game without moves its table by
    ``hand_values`` and ``seat_values`` alone (and one that has may override them: RPS
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
