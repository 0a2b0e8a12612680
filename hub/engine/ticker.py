"""The ticker: short news lines (all-ins, voids, big swings: ``swing_items``), one list per
audience.

Each audience has its own items and its own ids: the public's ids count only what the public
has seen, so a gap in them never hints at a hidden all-in, and items the public may not see yet
never push its released items out of its list. An item about a deal reaches the public when the
deal is released, in the order the items happened.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from hub.engine.tournament import TERMINAL, TournamentState
from hub.wire.topics import AUDIENCES, LIVE, PUBLIC

__all__ = ["TICKER_ITEMS", "Ticker", "swing_items"]

TICKER_ITEMS = 30


class Ticker:
    def __init__(self, size: int = TICKER_ITEMS) -> None:
        self.items: dict[str, deque[dict[str, Any]]] = {a: deque(maxlen=size) for a in AUDIENCES}
        self._ids: dict[str, int] = dict.fromkeys(AUDIENCES, 0)
        self._held: dict[int, list[dict[str, Any]]] = {}  # deal -> items not yet public

    def add(self, item: dict[str, Any], *, public_now: bool) -> list[str]:
        """Add an item; returns the audiences whose ticker changed."""
        self._push(LIVE, item)
        deal = item.get("deal")
        if item.get("table") is None or not isinstance(deal, int):
            return [LIVE]  # nothing ties it to a deal: never public
        if public_now:
            self._push(PUBLIC, item)
            return [LIVE, PUBLIC]
        self._held.setdefault(deal, []).append(item)
        return [LIVE]

    def release(self, deal: int) -> bool:
        """The deal went public: its held items join the public ticker, oldest first."""
        held = self._held.pop(deal, [])
        for item in held:
            self._push(PUBLIC, item)
        return bool(held)

    def _push(self, audience: str, item: dict[str, Any]) -> None:
        self._ids[audience] += 1
        self.items[audience].appendleft({"id": self._ids[audience], **item})

    def payload(self, audience: str) -> dict[str, Any]:
        return {"items": [dict(item) for item in self.items[audience]]}

    def snapshot(self) -> dict[str, Any]:
        return {
            "items": {a: list(q) for a, q in self.items.items()},
            "ids": dict(self._ids),
            "held": [[deal, items] for deal, items in self._held.items()],
        }

    def restore(self, data: dict[str, Any]) -> None:
        for audience in AUDIENCES:
            self.items[audience].clear()
            self.items[audience].extend(data["items"][audience])
            self._ids[audience] = int(data["ids"][audience])
        self._held = {int(deal): list(items) for deal, items in data["held"]}


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
