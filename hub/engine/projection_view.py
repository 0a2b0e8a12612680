"""The projection: the standings as if every hand in play ended now (its scoreboard and payload).
Split from ``hub.engine.views``."""

from __future__ import annotations

import weakref
from typing import Any

from hub.domain.eventscore import EventScoreboard
from hub.domain.scoring import Scoreboard
from hub.engine.tournament import TournamentState
from hub.engine.views import named_seats, team_info

__all__ = ["if_ended_now", "projected_board", "projected_result", "projection_payload"]

_ENDED: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], dict[int, int] | None]] = (
    weakref.WeakKeyDictionary()
)


def if_ended_now(hand: Any) -> dict[int, int] | None:
    """``hand.if_ended_now()`` (the hand played out by the cards: a copy of it settled), made
    once per state of the hand: the projection's board and its payload both ask at every
    flush, for every table, most of which did not move. Never edit the result."""
    state = (len(hand.actions), hand.street, hand.result is None, hand.spec)
    memo = _ENDED.get(hand)
    if memo is not None and memo[0][:3] == state[:3] and memo[0][3] is state[3]:
        return memo[1]
    projected: dict[int, int] | None = hand.if_ended_now()
    _ENDED[hand] = (state, projected)
    return projected


def projected_result(state: TournamentState, table: int, deal_no: int) -> dict[int, int] | None:
    """What the projection counts for one hand: the hand in progress as if it ended now (no
    more betting, the known board dealt out, pots by the cards), else its counted result."""
    h = state.hand(table, deal_no)
    if h is None:
        return None
    if h is state.tables[table].current:
        projected = if_ended_now(h.hand)
        if projected is not None:
            return projected
    return h.result


def projected_board(state: TournamentState) -> Scoreboard | EventScoreboard:
    """The scoreboard of the projection, from scratch (the engine then moves it hand by hand)."""
    board = state.new_board()
    for table in state.tables.values():
        for deal_no in table.hands:
            result = projected_result(state, table.table, deal_no)
            if result is not None:
                board.set_result(table.table, deal_no, result)
    return board


def projection_payload(
    state: TournamentState, board: Scoreboard | EventScoreboard
) -> dict[str, Any]:
    """Standings "if every hand in progress ended now", from the projected ``board``. Only
    possible when deck orders are loaded."""
    hands = []
    for table in state.tables.values():
        current = table.current
        if current is None:
            continue
        projected = if_ended_now(current.hand)
        if projected is None:
            continue
        hands.append(
            {
                "table": table.table,
                "deal": current.deal,
                "street": current.hand.street,
                "pot": current.hand.pot,
                "result": {str(s): v for s, v in projected.items()},
            }
        )
    info = team_info(state.config, state.roster)
    running = board.view_as_dict("running")
    return {
        "hands": hands,
        "scoring": board.scoring.describe(),
        "teams": [{**row, **info[row["team"]]} for row in running["teams"]],
        "seats": named_seats(running["seats"], state.roster),
    }
