"""Topic payloads for the two audiences, and the rule that keeps deals secret until released.

*live* (commentators, operators) sees everything as it happens, hole cards included. *public*
sees a deal only once every table of its group has completed it (plus the release delay): until
then public payloads hold nothing of it: no cards, actions, chip-scores, comparison rows, nor
standings that count it. Payloads are plain JSON-friendly dicts; the feed layer diffs them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hub.domain.config import TournamentConfig
from hub.domain.scoring import Scoreboard, full_recompute
from hub.engine.tournament import TERMINAL, HandState, TableState, TournamentState

PUBLIC = "public"
LIVE = "live"
AUDIENCES = (PUBLIC, LIVE)
STREETS = ("preflop", "flop", "turn", "river")

Released = Callable[[str, int], bool]


def team_info(config: TournamentConfig) -> dict[str, dict[str, str]]:
    return {
        t.id: {"name": t.name, "code": t.code, "colour": t.colour} for t in config.teams.values()
    }


def standings_payload(
    config: TournamentConfig,
    board: Scoreboard,
    *,
    live: bool,
    complete: dict[str, list[int]],
) -> dict[str, Any]:
    info = team_info(config)
    scores = board.as_dict()
    views = ("like_for_like", "running") if live else ("like_for_like",)
    out: dict[str, Any] = {
        "tournament": config.id,
        "name": config.name,
        "tables": list(config.tables),
        "deals": {"total": config.deals, "complete": complete},
    }
    for view in views:
        block = scores[view]
        out[view] = {
            "teams": [{**row, **info[row["team"]]} for row in block["teams"]],
            "seats": block["seats"],
        }
    return out


def seat_payload(standings: dict[str, Any], seat: int) -> dict[str, Any]:
    out: dict[str, Any] = {"seat": seat}
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


def roster(config: TournamentConfig, table: int) -> list[dict[str, Any]]:
    info = team_info(config)
    seats = []
    for s in range(1, config.seats + 1):
        team, player = config.seat_holder(table, s)
        seats.append({"seat": s, "team": team.id, **info[team.id], "player": player})
    return seats


def action_rows(hand: HandState) -> list[dict[str, Any]]:
    return [
        {"i": i, "seat": a.seat, "kind": a.kind, "to": a.to, "added": a.added, "street": a.street}
        for i, a in enumerate(hand.hand.actions)
    ]


def street_rows(actions: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The same action rows grouped street by street (only streets that saw an action)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in actions:
        grouped.setdefault(row["street"], []).append(row)
    return grouped


def table_payload(
    state: TournamentState, table: TableState, *, live: bool, released_deals: int = 0
) -> dict[str, Any]:
    """A table's live state. The public gets the roster and how many deals its group has
    released: nothing that moves with this table's own play (not even playing/idle or a
    completed count, whose timing would tell how long each hand took before release)."""
    config = state.config
    seats = roster(config, table.table)
    out: dict[str, Any] = {
        "table": table.table,
        "group": table.group,
        "deals_total": len(table.order),
    }
    current = table.current
    if not live:
        out["seats"] = seats
        out["released"] = released_deals
        return out
    out["completed"] = table.completed
    if current is None:
        out.update(seats=seats, status="idle", deal=None, street=None, pot=0, to_act=None)
        out.update(board=[], last_action=None, actions=[], button=None)
        return out
    hand = current.hand
    dealt = current.spec.cards
    for row in seats:
        s = row["seat"]
        row.update(
            committed=hand.committed.get(s, 0),
            street_bet=hand.street_bet.get(s, 0),
            stack=current.spec.cap - hand.committed.get(s, 0),
            folded=s in hand.folded,
            all_in=s in hand.all_in,
            to_act=hand.to_act == s,
        )
        if dealt is not None:
            row["hole"] = list(dealt.hole[s])
    actions = action_rows(current)
    out.update(
        seats=seats,
        status=current.status,
        reopened=current.reopened,
        deal=current.deal,
        street=hand.street,
        button=current.spec.button,
        pot=hand.pot,
        to_act=hand.to_act,
        board=list(hand.board_visible()),
        last_action=actions[-1] if actions else None,
        actions=actions,
    )
    return out


def r_text(result: dict[int, int]) -> dict[str, int]:
    """A result with JSON keys (seat numbers as strings)."""
    return {str(seat): chips for seat, chips in result.items()}


def hand_status(hand: HandState | None) -> str:
    return "waiting" if hand is None else hand.status


def deal_payload(
    state: TournamentState, deal_no: int, *, live: bool, released: Released
) -> dict[str, Any] | None:
    config = state.config
    groups = [g for g in config.groups.values() if live or released(g.id, deal_no)]
    if not groups:
        return None
    dealt = state.dealt(deal_no)
    tables = []
    for g in groups:
        for t in g.tables:
            h = state.hand(t, deal_no)
            tables.append(
                {
                    "table": t,
                    "group": g.id,
                    "status": hand_status(h),
                    "result": None if h is None or (r := h.result) is None else r_text(r),
                    "pot": h.hand.pot if h else 0,
                }
            )
    return {
        "deal": deal_no,
        "button": config.buttons[deal_no],
        "released": sorted(g.id for g in config.groups.values() if released(g.id, deal_no)),
        "board": list(dealt.board) if dealt else [],
        "hole": {str(s): list(c) for s, c in dealt.hole.items()} if dealt else {},
        "tables": tables,
    }


def compare_payload(
    state: TournamentState, deal_no: int, seat: int, *, live: bool, released: Released
) -> dict[str, Any] | None:
    config = state.config
    groups = [g for g in config.groups.values() if live or released(g.id, deal_no)]
    if not groups:
        return None
    dealt = state.dealt(deal_no)
    info = team_info(config)
    rows = []
    best_board: list[str] = []
    finished: list[int] = []
    for g in groups:
        for t in g.tables:
            team, player = config.seat_holder(t, seat)
            h = state.hand(t, deal_no)
            actions = action_rows(h) if h else []
            row: dict[str, Any] = {
                "table": t,
                "group": g.id,
                "team": team.id,
                **info[team.id],
                "player": player,
                "status": hand_status(h),
                "actions": actions,
                "streets": street_rows(actions),
                "pot": h.hand.pot if h else 0,
                "committed": h.hand.committed.get(seat, 0) if h else 0,
                "folded": bool(h and seat in h.hand.folded),
                "street": h.hand.street if h else None,
                "chips": None,
            }
            if h is not None:
                board = list(h.hand.board_visible())
                row["board"] = board
                if len(board) > len(best_board):
                    best_board = board
                result = h.result
                if result is not None:
                    row["chips"] = result.get(seat, 0)
                    finished.append(result.get(seat, 0))
            rows.append(row)
    average = sum(finished) / len(finished) if finished else None
    for row in rows:
        if row["chips"] is not None and average is not None:
            row["swing"] = round(row["chips"] - average, 2)
    return {
        "deal": deal_no,
        "seat": seat,
        "button": config.buttons[deal_no],
        "hole": list(dealt.hole[seat]) if dealt else [],
        "board": best_board,
        "average": None if average is None else round(average, 2),
        "rows": rows,
    }


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
    tables = []
    for table in state.tables.values():
        current = table.current
        waiting = [h for h in disputed if h.table == table.table]
        if current is not None:
            deal_no, status = current.deal, current.status
        elif waiting:
            deal_no, status = waiting[0].deal, waiting[0].status
        else:
            deal_no, status = None, "idle"
        tables.append(
            {
                "table": table.table,
                "group": table.group,
                "console": table.console,
                "connected": links.get(table.console) if table.console else None,
                "last_event_at": table.last_event_at,
                "last_seq": table.last_seq,
                "deal": deal_no,
                "status": status,
                "completed": table.completed,
                "rejections": sum(1 for r in rejections if r.get("table") == table.table),
            }
        )
    disputes = [
        {
            "table": h.table,
            "deal": h.deal,
            "status": h.status,
            "pot": h.hand.pot,
            "declared": list(h.declared or ()),
            "computed": list(h.computed or ()),
            "players": [
                {k: row[k] for k in ("seat", "team", "code", "player")}
                for row in roster(state.config, h.table)
                if row["seat"] not in h.hand.folded
            ],
        }
        for h in disputed
    ]
    return {
        "at": now,
        "tables": tables,
        "rejections": list(rejections)[-50:],
        "disputes": disputes,
        "corrections": state.corrections[-50:],
        "release": release,
    }


def swing_items(state: TournamentState, table: int, deal_no: int) -> list[dict[str, Any]]:
    """Ticker items for a finished hand: each seat's largest swing against the seat average."""
    config = state.config
    group = config.group_of(table)
    hand = state.hand(table, deal_no)
    if hand is None or hand.status not in TERMINAL or hand.result is None:
        return []
    items = []
    for seat, chips in hand.result.items():
        others = [
            r.get(seat, 0)
            for t in group.tables
            if (h := state.hand(t, deal_no)) is not None and (r := h.result) is not None
        ]
        if len(others) < 2:
            continue
        average = sum(others) / len(others)
        swing = chips - average
        if abs(swing) >= 20 * config.big_blind:
            team, player = config.seat_holder(table, seat)
            items.append(
                {
                    "kind": "swing",
                    "table": table,
                    "deal": deal_no,
                    "seat": seat,
                    "chips": chips,
                    "swing": round(swing, 2),
                    "text": f"{player} ({team.code}) {chips:+,} on deal {deal_no}, "
                    f"{swing:+,.0f} against seat {seat}'s average",
                }
            )
    return items


def projection_payload(state: TournamentState) -> dict[str, Any]:
    """Standings "if every hand in progress ended now": no more betting, the known board
    dealt out, pots awarded by the cards. Only possible when deck orders are loaded."""
    results = state.board.results()
    hands = []
    for table in state.tables.values():
        current = table.current
        if current is None:
            continue
        projected = current.hand.if_ended_now()
        if projected is None:
            continue
        results[(table.table, current.deal)] = projected
        hands.append(
            {
                "table": table.table,
                "deal": current.deal,
                "street": current.hand.street,
                "pot": current.hand.pot,
                "result": {str(s): v for s, v in projected.items()},
            }
        )
    projected_board = full_recompute(state.layout, results)
    info = team_info(state.config)
    running = projected_board.view_as_dict("running")
    return {
        "hands": hands,
        "teams": [{**row, **info[row["team"]]} for row in running["teams"]],
        "seats": running["seats"],
    }
