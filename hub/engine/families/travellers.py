"""The travellers: ``deal`` (every table's row of a deal: ``deal:{d}``) and ``compare`` (a
seat's traveller of a deal, the split screen: ``compare:{d}:{s}``, one row per table). Each is
moved in place by a ``Mover`` of its own: an event notes the hands (or the deal) it moved; at
the flush each open document's rows of those tables are edited through its ``Recorder`` (one
action appends one row at ``/rows/{i}/actions/-``; a hand that starts, settles or is
corrected has its row re-read and patched field by field), so the deltas name the rows that
moved and nothing tournament-sized is rebuilt or diffed. A group's release inserts its rows
into the public's documents (``add`` at their place); a roster fix or a stage's fill sets
the names of each row. The builders stay the oracle (``deal_payload``,
``compare_payload``: tests/test_projections.py holds each document to them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from hub.domain.games.base import Views
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
from hub.engine.equities import hand_traveller_equity
from hub.engine.families.base import CADENCE, Feed, Reading, TopicKeys
from hub.engine.families.hands import CORRECTED, HAND_EVENTS
from hub.engine.showdown import showdown_payload
from hub.engine.shown import action_rows, team_info
from hub.engine.tournament import HandState, TournamentState
from hub.wire.patch import Recorder
from hub.wire.topics import AUDIENCES, LIVE, PUBLIC, TopicKey

__all__ = ["COMPARE", "DEAL", "Deals", "Travellers", "compare_payload", "deal_payload", "deal_row"]

# A traveller row's fields that name who holds the seat (``team_info``'s and the player).
NAMES = ("team", "name", "code", "colour", "player")


def deal_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    if isinstance(event, DealReleased):  # the live one lists the released groups
        return [k[PUBLIC]["deal"][event.deal], k[LIVE]["deal"][event.deal]]
    if isinstance(event, CORRECTED):
        return [k[PUBLIC]["deal"][event.deal]]
    return [k[LIVE]["deal"][event.deal]]


def compare_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    if isinstance(event, StageFilled):  # the live travellers of the stage's deals
        return [key for d in event.deals for key in k[LIVE]["compare"][d]]
    if isinstance(event, RosterChanged):  # every traveller, every audience
        return [key for a in AUDIENCES for d in k[a]["compare"].values() for key in d]
    audience = PUBLIC if isinstance(event, (DealReleased, *CORRECTED)) else LIVE
    return list(k[audience]["compare"][event.deal])


def _deal(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any] | None:
    engine = read.engine
    return deal_payload(
        engine.state, args[0], live=audience == LIVE, released=engine.release.released
    )


def _compare(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any] | None:
    engine = read.engine
    return compare_payload(
        engine.state, args[0], args[1], live=audience == LIVE, released=engine.release.released
    )


Released = Callable[[str, int], bool]  # (group, deal) -> the public sees it


def deal_payload(
    state: TournamentState, deal_no: int, *, live: bool, released: Released
) -> dict[str, Any] | None:
    config = state.config
    groups = [g for g in config.groups_playing(deal_no) if live or released(g.id, deal_no)]
    if not groups:
        return None
    tables = []
    for g in groups:
        for t in g.tables:
            h = state.hand(t, deal_no)
            tables.append({"table": t, "group": g.id, **deal_row(h)})
    return {
        "deal": deal_no,
        "button": config.buttons[deal_no],
        "released": sorted(g.id for g in config.groups_playing(deal_no) if released(g.id, deal_no)),
        **deal_cards(state, deal_no),
        "tables": tables,
        "game": config.game,
    }


def deal_row(h: HandState | None) -> dict[str, Any]:
    """What a deal's payload says of one table's hand."""
    return {
        "status": hand_status(h),
        "result": None if h is None or (r := h.result) is None else r_text(r),
        "pot": h.hand.pot if h else 0,
    }


def hand_status(hand: HandState | None) -> str:
    return "waiting" if hand is None else hand.status


def r_text(result: dict[int, int]) -> dict[str, int]:
    """A result with JSON keys (seat numbers as strings)."""
    return {str(seat): chips for seat, chips in result.items()}


def deal_cards(state: TournamentState, deal_no: int) -> dict[str, Any]:
    """A deal payload's cards: the deck order's, once a table has started the deal."""
    dealt = state.dealt(deal_no) if state.started(deal_no) else None
    return {
        "board": list(dealt.board) if dealt else [],
        "hole": {str(s): list(c) for s, c in dealt.hole.items()} if dealt else {},
    }


def compare_payload(
    state: TournamentState, deal_no: int, seat: int, *, live: bool, released: Released
) -> dict[str, Any] | None:
    config = state.config
    groups = [g for g in config.groups_playing(deal_no) if live or released(g.id, deal_no)]
    if not groups:
        return None
    info = team_info(config, state.roster)
    rows = [compare_row(state, deal_no, t, g.id, seat, info) for g in groups for t in g.tables]
    out: dict[str, Any] = {
        "deal": deal_no,
        "seat": seat,
        "button": config.buttons[deal_no],
        "hole": compare_hole(state, deal_no, seat),
        "rows": rows,
        "game": config.game,
    }
    out.update(compare_summary(rows))
    out["board"] = reference_board(state, deal_no, len(out["board"]))
    out.update(state.game.compare_fields(state, deal_no, seat))
    return out


def compare_row(
    state: TournamentState,
    deal_no: int,
    table: int,
    group: str,
    seat: int,
    info: dict[str, dict[str, str]],
) -> dict[str, Any]:
    """One table's row of the traveller: who holds the seat there and how they played it. Each
    action carries its street, so a client groups them street by street itself."""
    held = state.seat_holder(table, seat, deal_no)
    h = state.hand(table, deal_no)
    row: dict[str, Any] = {
        "table": table,
        "group": group,
        "team": held[0].id if held else None,
        **(info[held[0].id] if held else {}),
        "player": held[1] if held else None,
        "actions": action_rows(h) if h else [],
        "chips": None,
        "points": deal_points(state, table, deal_no, seat),
    }
    if h is None:
        row.update(status="waiting", pot=0, committed=0, folded=False, street=None, equity=None)
        row["showdown"] = None
        return row
    row.update(compare_fields(h, seat, state.game))
    row["showdown"] = showdown_payload(h, state.game)
    result = h.result
    if result is not None:
        row["chips"] = result.get(seat, 0)
    row.update(state.game.row_fields(h))  # mahjong: the hand's result
    return row


def compare_fields(h: HandState, seat: int, game: Views) -> dict[str, Any]:
    """A traveller row's fields that move with every action at its table."""
    hand = h.hand
    return {
        "status": h.status,
        "pot": hand.pot,
        "committed": hand.committed.get(seat, 0),
        "folded": seat in hand.folded,
        "street": hand.street,
        "board": list(hand.board_visible()),
        "equity": hand_traveller_equity(h, seat),
        **game.seat_fields(hand, seat),
        **game.hand_fields(hand),
    }


def deal_points(state: TournamentState, table: int, deal_no: int, seat: int) -> int | None:
    """A traveller row's ``points``: what the seat scored on the deal in the tournament's
    format, as the scoreboard counts it (``Scoreboard.deal_points``: IMPs, or chips; None
    under IFP points, scored per session, or while the hand is not counted)."""
    scored = state.board.deal_points(table, deal_no)
    return None if scored is None else scored.get(seat)


def reference_board(state: TournamentState, deal_no: int, length: int) -> list[str]:
    """The deck order's board as far as the furthest table has dealt it (a table's own board,
    after a dealer error, is in its row)."""
    dealt = state.dealt(deal_no)
    return list(dealt.board[:length]) if dealt else []


def compare_hole(state: TournamentState, deal_no: int, seat: int) -> list[str]:
    """The seat's hole cards, once a table has started the deal (else nothing)."""
    dealt = state.dealt(deal_no) if state.started(deal_no) else None
    return list(dealt.hole[seat]) if dealt else []


def compare_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The traveller's fields that depend on every row: the board furthest dealt, the average
    chip-score of the finished rows (and each finished row's swing against it)."""
    best_board: list[str] = []
    finished = [row["chips"] for row in rows if row["chips"] is not None]
    for row in rows:
        board = row.get("board")
        if board is not None and len(board) > len(best_board):
            best_board = board
    average = sum(finished) / len(finished) if finished else None
    for row in rows:
        if row["chips"] is not None and average is not None:
            row["swing"] = round(row["chips"] - average, 2)
    return {"board": list(best_board), "average": None if average is None else round(average, 2)}


class _Rows:
    """What the two travellers' movers share: the open documents, by key; what each event
    noted until the flush (hands whose actions to append, from which; hands whose rows to
    re-read; deals released or corrected; names to set); and where a table's row is."""

    family = ""
    rows = ""  # the member holding the rows ("tables", "rows")

    def __init__(self, read: Reading) -> None:
        self.read = read
        self.keys = read.keys()
        self.docs: dict[TopicKey, Recorder] = {}
        self._args: dict[TopicKey, tuple[str, tuple[int, ...]]] = {}
        for audience, by in self.keys.items():
            for deal, found in by[self.family].items():
                if isinstance(found, list):  # by seat
                    for seat, key in enumerate(found, 1):
                        self._args[key] = (audience, (deal, seat))
                else:
                    self._args[found] = (audience, (deal,))
        config = read.engine.state.config
        # The live documents hold every playing group's rows: a stage's, so rows are per stage.
        self._row = {
            t: i
            for stage in config.plan.stages
            for i, t in enumerate(t for g in stage.groups for t in config.groups[g].tables)
        }
        self._acted: dict[tuple[int, int], int] = {}  # hand -> its first action not shown
        self._rehand: dict[tuple[int, int], None] = {}  # hands whose rows to re-read
        self._public: dict[tuple[int, int | None], None] = {}  # (deal, table or None: all)
        self._names: dict[TopicKey, None] = {}  # documents whose names to set
        self._touched: dict[TopicKey, None] = {}
        self._live_keys = {
            deal: dict.fromkeys(found if isinstance(found, list) else [found])
            for deal, found in self.keys[LIVE][self.family].items()
        }
        self._hand = (0, 0)  # the hand of the last hand event: a released deal's correction's

    def _live(self, deal: int) -> list[TopicKey]:
        return list(self._live_keys[deal])

    def _of(self, deal: int) -> list[tuple[TopicKey, Recorder]]:
        """The open documents of a deal not live (the public's, the program's)."""
        out = []
        for audience, by in self.keys.items():
            if audience == LIVE:
                continue
            found = by[self.family][deal]
            for key in found if isinstance(found, list) else [found]:
                rec = self.docs.get(key)
                if rec is not None:
                    out.append((key, rec))
        return out

    def on(self, event: Any) -> None:
        cls = type(event)
        touched = self._touched
        if cls is ActionApplied:
            self._acted.setdefault((event.table, event.deal), event.index)
            self._hand = (event.table, event.deal)
        elif cls in (HandStarted, HandRewound, HandSettled):
            self._rehand[(event.table, event.deal)] = None
            self._hand = (event.table, event.deal)
        elif cls is ReleasedDealCorrected:  # (it follows the hand event that moved the deal)
            hand = self._hand
            self._public[(event.deal, hand[0] if hand[1] == event.deal else None)] = None
        elif cls is DealReleased:
            self._public[(event.deal, None)] = None
        elif cls is ReleasedResultCorrected:
            self._public[(event.deal, event.table)] = None
        elif cls is StageFilled or cls is RosterChanged:
            keys = self._keys_of(event)
            self._names.update(dict.fromkeys(keys))
            touched.update(dict.fromkeys(keys))
            return
        if cls is ActionApplied:  # (the hot path: its deal's live documents)
            touched.update(self._live_keys[event.deal])
        else:
            touched.update(dict.fromkeys(self._keys_of(event)))

    def _keys_of(self, event: Any) -> list[TopicKey]:
        raise NotImplementedError

    def open(self, key: TopicKey) -> Recorder | None:
        found = self._args.get(key)
        if found is None:
            return None
        audience, args = found
        build = _compare if self.family == "compare" else _deal
        payload = build(self.read, args, audience)
        if payload is None:  # (a public deal not released yet)
            return None
        rec = self.docs[key] = Recorder(payload)
        return rec

    def flush(self) -> Iterable[TopicKey]:
        acted, self._acted = self._acted, {}
        rehand, self._rehand = self._rehand, {}
        public, self._public = self._public, {}
        names, self._names = self._names, {}
        touched, self._touched = self._touched, {}
        for table, deal in rehand:
            for key in self._live(deal):
                rec = self.docs.get(key)
                if rec is not None:
                    self._reread(rec, key, table, self._row[table])
        for (table, deal), first in acted.items():
            if (table, deal) in rehand:
                continue
            opened = [(key, rec) for key in self._live(deal) if (rec := self.docs.get(key))]
            if opened:
                self._acts(opened, table, deal, first)
        for deal, only in public:
            for key, rec in self._of(deal):
                self._release(rec, key, only)
        for key in names:
            rec = self.docs.get(key)
            if rec is not None:
                self._rename(rec, key)
        return touched

    # -- where a document moves (each family's own)
    def _acts(
        self, opened: list[tuple[TopicKey, Recorder]], table: int, deal: int, first: int
    ) -> None:
        """A hand's actions from ``first`` on, into each open live document of its deal."""
        for key, rec in opened:
            self._act(rec, key, table, first)

    def _act(self, rec: Recorder, key: TopicKey, table: int, first: int) -> None:
        raise NotImplementedError

    def _reread(self, rec: Recorder, key: TopicKey, table: int, i: int) -> None:
        raise NotImplementedError

    def _rename(self, rec: Recorder, key: TopicKey) -> None:
        return None

    def _new_row(self, key: TopicKey, table: int, group: str) -> dict[str, Any]:
        raise NotImplementedError

    def _summarise(self, rec: Recorder, key: TopicKey) -> None:
        return None

    def _release(self, rec: Recorder, key: TopicKey, only: int | None) -> None:
        """A document not live, after a release or a correction of its deal: the rows of
        the groups released since it was made inserted at their place (``add``); the row of
        the table corrected (``only``: the hand event before the correction's), or every row
        of the deal, re-read."""
        state = self.read.engine.state
        deal = self._args[key][1][0]
        released = self.read.engine.release.released
        rows = rec.doc[self.rows]
        j = 0
        for g in state.config.groups_playing(deal):
            if not released(g.id, deal):
                continue
            for t in g.tables:
                if j < len(rows) and rows[j]["table"] == t:
                    if only is None or only == t:
                        self._reread(rec, key, t, j)
                else:
                    rec.insert((self.rows, j), self._new_row(key, t, g.id))
                j += 1
        self._summarise(rec, key)


class Deals(_Rows):
    """The ``deal`` family's ``Mover``: a table's row (status, pot, result) set field by field
    when its hand moves, the deal's cards when one starts; ``released`` and the public's rows
    when a group's deal is released."""

    family = "deal"
    rows = "tables"

    def _keys_of(self, event: Any) -> list[TopicKey]:
        return deal_keys(self.keys, event)

    def _act(self, rec: Recorder, key: TopicKey, table: int, first: int) -> None:
        h = self.read.engine.state.hand(table, self._args[key][1][0])
        rec.update(("tables", self._row[table]), deal_row(h))

    def _reread(self, rec: Recorder, key: TopicKey, table: int, i: int) -> None:
        state = self.read.engine.state
        deal = self._args[key][1][0]
        rec.update(("tables", i), deal_row(state.hand(table, deal)))
        rec.update((), deal_cards(state, deal))

    def _new_row(self, key: TopicKey, table: int, group: str) -> dict[str, Any]:
        deal = self._args[key][1][0]
        h = self.read.engine.state.hand(table, deal)
        return {"table": table, "group": group, **deal_row(h)}

    def _summarise(self, rec: Recorder, key: TopicKey) -> None:
        self._released(rec, key)

    def _released(self, rec: Recorder, key: TopicKey) -> None:
        engine = self.read.engine
        deal = self._args[key][1][0]
        groups = engine.state.config.groups_playing(deal)
        rec.set(("released",), sorted(g.id for g in groups if engine.release.released(g.id, deal)))

    def flush(self) -> Iterable[TopicKey]:
        released = [deal for deal, only in self._public if only is None]
        touched = super().flush()
        for deal in released:  # the live one lists the released groups
            for key in self._live(deal):
                rec = self.docs.get(key)
                if rec is not None:
                    self._released(rec, key)
        return touched


class Travellers(_Rows):
    """The ``compare`` family's ``Mover``: one action appends its row to that table's row of
    each traveller of the deal and sets the fields it moved; a hand that starts, settles or is
    corrected has its row re-read (field by field) and, when its chips or board moved, the
    fields that depend on every row (the average, each row's swing, the reference board)."""

    family = "compare"
    rows = "rows"

    def _keys_of(self, event: Any) -> list[TopicKey]:
        return compare_keys(self.keys, event)

    def _acts(
        self, opened: list[tuple[TopicKey, Recorder]], table: int, deal: int, first: int
    ) -> None:
        """One hand's actions into every open traveller of its deal (a seat's each): what
        does not depend on the seat (the new action rows, status, pot, street, board, the
        game's hand fields) is read once for all of them; each seat's row gets its own
        committed, folded, equity and the game's seat fields. The row equals
        ``compare_fields``'s (tests/test_projections.py holds the documents to the
        builders after every event)."""
        state = self.read.engine.state
        h = state.hand(table, deal)
        i = self._row[table]
        if h is None or first >= len(h.hand.actions):
            for key, rec in opened:
                self._reread(rec, key, table, i)
            return
        hand, game = h.hand, state.game
        added = action_rows(h)[first:]
        status, pot, street = h.status, hand.pot, hand.street
        board = tuple(hand.board_visible())
        shown = len(board)
        hand_fields = game.hand_fields(hand)
        committed, folded = hand.committed, hand.folded
        reference: list[str] | None = None
        for key, rec in opened:
            if len(rec.doc["rows"][i]["actions"]) != first:
                self._reread(rec, key, table, i)  # not where the row's actions continue
                continue
            seat = self._args[key][1][1]
            rec.extend(("rows", i, "actions"), added)
            rec.update(
                ("rows", i),
                {
                    "status": status,
                    "pot": pot,
                    "committed": committed.get(seat, 0),
                    "folded": seat in folded,
                    "street": street,
                    "board": list(board),
                    "equity": hand_traveller_equity(h, seat),
                    **game.seat_fields(hand, seat),
                    **hand_fields,
                },
            )
            if shown > len(rec.doc["board"]):
                if reference is None:
                    reference = reference_board(state, deal, shown)
                rec.set(("board",), list(reference))

    def _new_row(self, key: TopicKey, table: int, group: str) -> dict[str, Any]:
        state = self.read.engine.state
        deal, seat = self._args[key][1]
        info = team_info(state.config, state.roster)
        return compare_row(state, deal, table, group, seat, info)

    def _reread(self, rec: Recorder, key: TopicKey, table: int, i: int) -> None:
        state = self.read.engine.state
        deal, seat = self._args[key][1]
        group = state.config.group_of(table).id
        row = self._new_row(key, table, group)
        old = rec.doc["rows"][i]
        # (a dealer error changes a table's board without changing its length)
        same_sum = old["chips"] == row["chips"] and (old.get("board") or []) == (
            row.get("board") or []
        )
        _patch_row(rec, i, row)
        if not same_sum:  # else the average, the board and every row's swing stand
            self._summarise(rec, key)
        self._points(rec, key, table, group)
        rec.set(("hole",), compare_hole(state, deal, seat))

    def _summarise(self, rec: Recorder, key: TopicKey) -> None:
        """The fields that depend on every row, as ``compare_summary`` makes them."""
        state = self.read.engine.state
        deal, seat = self._args[key][1]
        rows = rec.doc["rows"]
        finished = [r["chips"] for r in rows if r["chips"] is not None]
        average = sum(finished) / len(finished) if finished else None
        furthest = max((len(b) for r in rows if (b := r.get("board")) is not None), default=0)
        # Every row is looked at (a traveller has a row per table), but only the swings that
        # moved are set: the loop's cost is a lookup a row, its operations the delta's.
        for j, r in enumerate(rows):
            chips = r["chips"]
            if chips is None or average is None:
                if "swing" in r:
                    rec.remove(("rows", j, "swing"))
            else:
                swing = round(chips - average, 2)
                if r.get("swing") != swing:
                    rec.set(("rows", j, "swing"), swing)
        rec.set(("board",), reference_board(state, deal, furthest))
        rec.set(("average",), None if average is None else round(average, 2))
        rec.set(("hole",), compare_hole(state, deal, seat))
        rec.update((), state.game.compare_fields(state, deal, seat))

    def _points(self, rec: Recorder, key: TopicKey, table: int, group: str) -> None:
        """The ``points`` of the other rows of ``table``'s group, as ``deal_points``
        reads them: a hand counted, corrected or taken back moves the IMPs of every table of
        its group on the deal (each against their average). A row's hand need not have moved
        its chips for the board to (a reopened hand still counts until it settles again), so
        this is not left to ``_summarise``; only the points that moved are set."""
        state = self.read.engine.state
        if state.board.scoring.name == "ifp-points":  # (none per deal: every row's null)
            return
        deal, seat = self._args[key][1]
        for j, r in enumerate(rec.doc["rows"]):
            if r["group"] != group or r["table"] == table:
                continue
            points = deal_points(state, r["table"], deal, seat)
            if r.get("points") != points:
                rec.set(("rows", j, "points"), points)

    def _rename(self, rec: Recorder, key: TopicKey) -> None:
        """A roster fix or a stage's fill: who holds the seat at each table, as named now."""
        state = self.read.engine.state
        deal, seat = self._args[key][1]
        info = team_info(state.config, state.roster)
        for i, row in enumerate(rec.doc["rows"]):
            held = state.seat_holder(row["table"], seat, deal)
            names = {
                "team": held[0].id if held else None,
                **(info[held[0].id] if held else {}),
                "player": held[1] if held else None,
            }
            for name in NAMES:
                if name not in names:
                    rec.remove(("rows", i, name))
            rec.update(("rows", i), names)


def _patch_row(rec: Recorder, i: int, row: dict[str, Any]) -> None:
    """Make traveller row ``i`` the re-read ``row`` field by field (its swing, a summary
    field, aside): the actions that continue it appended, the fields that moved set."""
    old = rec.doc["rows"][i]
    for name in [n for n in old if n not in row and n != "swing"]:
        rec.remove(("rows", i, name))
    actions, before = row["actions"], old["actions"]
    n = len(before)
    if len(actions) >= n and before == actions[:n]:  # (shared rows: compared by identity)
        rec.extend(("rows", i, "actions"), actions[n:])
        row = {k: v for k, v in row.items() if k != "actions"}
    rec.update(("rows", i), row)


DEAL = Feed(
    "deal",
    (*HAND_EVENTS, DealReleased, *CORRECTED),
    deal_keys,
    _deal,
    mover=Deals,
    params=("deal",),
    route="/api/deals/{deal:int}",
    delta="replace of the fields of the table row that moved (/tables/{i}/status, pot,"
    " result); a group's release adds its rows at /tables/{i}",
    program=LIVE,
    held=True,
    embargo=True,
    cadence=CADENCE,
)
COMPARE = Feed(
    "compare",
    (*HAND_EVENTS, DealReleased, *CORRECTED, StageFilled, RosterChanged),
    compare_keys,
    _compare,
    mover=Travellers,
    lazy=(LIVE,),  # (the public's: read by the results site, moved by releases only)
    params=("deal", "seat"),
    route="/api/compare/{deal:int}/{seat:int}",
    delta="one action adds one row at /rows/{i}/actions/- and replaces what it moved (the"
    " row's equity only when a card is dealt or someone folds); a group's release adds its"
    " rows at /rows/{i}",
    program=LIVE,
    held=True,
    embargo=True,
)
