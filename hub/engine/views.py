"""Topic payloads for the two audiences, and the rule that keeps deals secret until released.

*live* (commentators, operators) sees everything as it happens, hole cards included. *public*
sees a deal only once every table of its group has completed it (plus the release delay): until
then public payloads hold nothing of it: no cards, actions, chip-scores, comparison rows, nor
standings that count it. Payloads are plain JSON-friendly dicts; the feed layer diffs them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from typing import Any

from hub.domain.config import TournamentConfig
from hub.domain.eventscore import EventScoreboard
from hub.domain.games.base import Views
from hub.domain.scoring import VIEWS, Scoreboard
from hub.domain.states import BETTING_STREETS, Audience
from hub.engine.equities import hand_equity, hand_traveller_equity, seat_equity
from hub.engine.roster import Roster
from hub.engine.showdown import showdown_payload
from hub.engine.tournament import TERMINAL, HandState, TableState, TournamentState

PUBLIC = Audience.PUBLIC
LIVE = Audience.LIVE
STREETS = BETTING_STREETS

Released = Callable[[str, int], bool]


def team_info(config: TournamentConfig, roster: Roster | None = None) -> dict[str, dict[str, str]]:
    """Each team's name, code and colour as shown (with the operator's ``roster`` fixes)."""
    if roster is not None:
        return roster.info(config)
    return {
        t.id: {"name": t.name, "code": t.code, "colour": t.colour} for t in config.teams.values()
    }


def named_seats(blocks: list[dict[str, Any]], roster: Roster | None) -> list[dict[str, Any]]:
    """Seat-ranking blocks with each player's name as shown (the roster's fixes): the boards
    keep the names of the file."""
    if roster is None or not roster.players:
        return blocks
    return [
        {
            **block,
            "rows": [
                {**row, "player": roster.player(row["team"], row["player"])}
                for row in block["rows"]
            ],
        }
        for block in blocks
    ]


def standings_payload(
    config: TournamentConfig,
    board: Scoreboard | EventScoreboard,
    *,
    live: bool,
    complete: dict[str, list[int]],
    fills: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None,
    roster: Roster | None = None,
) -> dict[str, Any]:
    info = team_info(config, roster)
    scores = board.as_dict()
    views = ("like_for_like", "running") if live else ("like_for_like",)
    out: dict[str, Any] = {
        "tournament": config.id,
        "name": config.name,
        "tables": list(config.tables),
        "deals": {"total": config.deals, "complete": complete},
        "scoring": board.scoring.describe(),
        "game": config.game,
    }
    for view in views:
        block = scores[view]
        out[view] = {
            "teams": [{**row, **info[row["team"]]} for row in block["teams"]],
            "seats": named_seats(block["seats"], roster),
        }
    if isinstance(board, EventScoreboard):
        out["event"] = event_block(config, board, fills or {})
        for view in VIEWS:
            if view in out:
                blocks = board.event_as_dict(view)
                _with_info(blocks, info)
                for block in blocks["sessions"].values():
                    block["seats"] = named_seats(block.get("seats", []), roster)
                out[view].update(blocks)
    return out


def _with_info(blocks: dict[str, Any], info: dict[str, dict[str, str]]) -> None:
    """Team names and colours on every team row of the event's blocks."""
    rows = [r for b in blocks["sessions"].values() for r in b["teams"]]
    rows += [r for b in blocks["stages"].values() for r in (*b["teams"], *b["across"])]
    rows += blocks["overall"]
    for row in rows:
        row.update(info[row["team"]])


def event_block(
    config: TournamentConfig,
    board: EventScoreboard,
    fills: Mapping[str, Mapping[str, tuple[str, ...]]],
) -> dict[str, Any]:
    """The event's stages and sessions, which are current, and the teams of filled stages."""
    session = board.current_session()
    return {
        **config.plan.as_dict(),
        "current": {"session": session, "stage": config.plan.session_by_id[session].stage},
        "fills": {st: {g: list(t) for g, t in groups.items()} for st, groups in fills.items()},
    }


def seat_payload(standings: dict[str, Any], seat: int) -> dict[str, Any]:
    out: dict[str, Any] = {"seat": seat, "scoring": standings["scoring"]}
    for view in ("like_for_like", "running"):
        if view in standings:
            rows = [
                {**row, "group": block["group"]}
                for block in standings[view]["seats"]
                if block["seat"] == seat
                for row in block["rows"]
            ]
            out[view] = {"rows": rows}
    return out


def roster(state: TournamentState, table: int, deal: int | None = None) -> list[dict[str, Any]]:
    """Who sits where at ``table`` for ``deal`` (its session's draw and lineups; the seats
    are empty while the deal's stage has no teams yet)."""
    config = state.config
    info = team_info(config, state.roster)
    seats: list[dict[str, Any]] = []
    for s in range(1, config.seats + 1):
        held = state.seat_holder(table, s, deal)
        if held is None:
            seats.append({"seat": s, "team": None, "player": None})
            continue
        team, player = held
        seats.append({"seat": s, "team": team.id, **info[team.id], "player": player})
    return seats


def action_row(i: int, action: Any) -> dict[str, Any]:
    """One action as shown everywhere (rows are final once made: deltas share them)."""
    return {
        "i": i,
        "seat": action.seat,
        "kind": action.kind,
        "to": action.to,
        "added": action.added,
        "street": action.street,
    }


_ROWS: weakref.WeakKeyDictionary[Any, list[dict[str, Any]]] = weakref.WeakKeyDictionary()


def action_rows(hand: HandState) -> list[dict[str, Any]]:
    """The hand's action rows. A hand's actions only grow until a correction replaces the
    hand's engine, so the rows are made once per engine and shared by every payload that
    shows them (the live table, each traveller): equal rows are the same objects."""
    engine = hand.hand
    rows = _ROWS.get(engine)
    if rows is None:
        rows = _ROWS[engine] = []
    actions = engine.actions
    for i in range(len(rows), len(actions)):
        rows.append(action_row(i, actions[i]))
    return rows[: len(actions)]


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


def r_text(result: dict[int, int]) -> dict[str, int]:
    """A result with JSON keys (seat numbers as strings)."""
    return {str(seat): chips for seat, chips in result.items()}


def hand_status(hand: HandState | None) -> str:
    return "waiting" if hand is None else hand.status


def deal_row(h: HandState | None) -> dict[str, Any]:
    """What a deal's payload says of one table's hand."""
    return {
        "status": hand_status(h),
        "result": None if h is None or (r := h.result) is None else r_text(r),
        "pot": h.hand.pot if h else 0,
    }


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


def deal_cards(state: TournamentState, deal_no: int) -> dict[str, Any]:
    """A deal payload's cards: the deck order's, once a table has started the deal."""
    dealt = state.dealt(deal_no) if state.started(deal_no) else None
    return {
        "board": list(dealt.board) if dealt else [],
        "hole": {str(s): list(c) for s, c in dealt.hole.items()} if dealt else {},
    }


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


def deal_points(state: TournamentState, table: int, deal_no: int, seat: int) -> int | None:
    """A traveller row's ``points``: what the seat scored on the deal in the tournament's
    format, as the scoreboard counts it (``Scoreboard.deal_points``: IMPs, or chips; None
    under IFP points, scored per session, or while the hand is not counted)."""
    scored = state.board.deal_points(table, deal_no)
    return None if scored is None else scored.get(seat)


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


def swing_items(state: TournamentState, table: int, deal_no: int) -> list[dict[str, Any]]:
    """Ticker items for a finished hand: each seat's largest swing against the seat average."""
    config = state.config
    group = config.group_of(table)
    hand = state.hand(table, deal_no)
    if hand is None or hand.status not in TERMINAL or hand.result is None:
        return []
    items = []
    unit = state.game.points_unit  # a mahjong hand scores points
    results = [
        r for t in group.tables if (h := state.hand(t, deal_no)) is not None and (r := h.result)
    ]
    for seat, chips in hand.result.items():
        others = [r.get(seat, 0) for r in results]
        if len(others) < 2:
            continue
        average = sum(others) / len(others)
        swing = chips - average
        held = state.seat_holder(table, seat, deal_no)
        if abs(swing) >= 20 * config.big_blind and held is not None:
            team, player = held
            items.append(
                {
                    "kind": "swing",
                    "table": table,
                    "deal": deal_no,
                    "seat": seat,
                    "chips": chips,
                    "swing": round(swing, 2),
                    "text": f"{player} ({team.code}) {_signed(chips)}{unit} on deal {deal_no}, "
                    f"{_signed(swing)} against seat {seat}'s average",
                }
            )
    return items


def _signed(n: float) -> str:
    """+1,200 or minus 7,134: a ticker figure with a true minus sign (U+2212), as on air."""
    return f"{n:+,.0f}".replace("-", "\u2212")
