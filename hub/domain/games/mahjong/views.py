"""The mahjong fields of the topic payloads (game "mcr"): winds, hands and results.

The payload builders of ``hub.engine.families`` call these (through the game, ``game.py``) for a
mahjong tournament, so every topic keeps its family, audiences and release rule
(docs/mahjong.md): the live table (commentator and operator) shows the four seats' winds,
13-tile hands and the hand's result; the traveller shows the seat's wind and every table's
result; nothing here is public before release because the builders that call it are not.
"""

from __future__ import annotations

from typing import Any

from hub.domain.games.mahjong.hand import MahjongDeal, MahjongHand
from hub.domain.games.mahjong.rules import MahjongRules, seat_winds, tile_label
from hub.domain.states import HandStatus

# ``state``, ``table`` and ``h`` are the engine's TournamentState, TableState and HandState
# (hub.engine.tournament), which the domain may not import: these read ``config``, ``dealt()``,
# a table's ``current``/``hands``/``last_finished`` and a hand state's ``hand``/``status``.


def deal_info(state: Any, deal_no: int) -> dict[str, Any]:
    """A deal's winds (seat -> wind as text keys), its East seat and prevalent wind."""
    rules = state.config.rules_of(MahjongRules)
    assert rules is not None
    east = state.config.buttons[deal_no]
    return {
        "prevalent": rules.prevalent[deal_no],
        "east": east,
        "winds": {str(seat): wind for seat, wind in seat_winds(east).items()},
    }


def hand_result(h: Any) -> dict[str, Any] | None:
    """A hand's result as entered (``kind`` draw, self_draw or discard; winner, fan,
    discarder; with the tiles its ``hand``, ``fans`` and the official's ``typed`` total) with
    its points per seat (none while disputed); None until it has one (or when void)."""
    if h is None or not isinstance(h.hand, MahjongHand) or h.hand.entered is None:
        return None
    if h.status not in (HandStatus.COMPLETE, HandStatus.DISPUTED):
        return None
    out = dict(h.hand.entered.as_dict())
    out["points"] = {str(seat): p for seat, p in (h.hand.result or {}).items()}
    return out


def showdown(h: Any) -> dict[str, Any] | None:
    """A finished mahjong hand's showdown package (issue #32's contract): ``winner``,
    ``self_draw``, ``discarder``, the winning ``hand`` (when its tiles were entered), its
    ``fans`` ({name, value, count}) and ``fan`` total; beside poker's empty ``pots`` and
    ``hands``, and ``mahjong`` (the result with its points per seat). A draw: no winner."""
    result = hand_result(h)
    if result is None or h.status != HandStatus.COMPLETE:
        return None
    entered = h.hand.entered
    package: dict[str, Any] = {
        "deal": h.deal,
        "pots": [],
        "hands": {},
        "runout": None,
        "mahjong": result,
        "winner": entered.winner,
        "self_draw": entered.self_draw,
        "discarder": entered.discarder,
        "fans": [f.as_dict() for f in entered.fans],
        "fan": entered.fan,
    }
    if entered.hand is not None:
        package["hand"] = entered.hand.as_record()
    return package


def dispute(h: Any) -> dict[str, Any] | None:
    """What the table's official and the TD read of a disputed mahjong hand: the typed total
    against the tiles' fans (None: not a mahjong dispute)."""
    if not isinstance(h.hand, MahjongHand) or h.hand.pending is None:
        return None
    held = h.hand.pending
    listed = ", ".join(f.words for f in held.fans)
    return {
        "reason": (
            f"the official typed {held.typed} fan but the tiles give {held.fan} ({listed}): "
            "the hand is held until an official confirms it (the tiles' total then scores) "
            "or the deal is reopened and the result entered again"
        ),
        "pot": None,  # a mahjong hand has no pot: its amount in dispute is the fan (``mahjong``)
        "declared": [held.winner],
        "computed": [held.winner],
        "mahjong": {
            "typed": held.typed,
            "fan": held.fan,
            "fans": [f.as_dict() for f in held.fans],
            "hand": held.hand.as_record() if held.hand is not None else None,
        },
    }


def table_fields(state: Any, table: Any) -> dict[str, Any]:
    """The live table's ``mahjong`` block: the hand in play, else the last finished one."""
    deal_no = table.current.deal if table.current is not None else table.last_finished
    if deal_no is None:
        return {"mahjong": None}
    h = table.hands.get(deal_no)
    dealt = state.dealt(deal_no)
    hands: dict[str, list[str]] = {}
    if isinstance(dealt, MahjongDeal):
        hands = {str(seat): list(tiles) for seat, tiles in dealt.hole.items()}
    return {
        "mahjong": {
            "deal": deal_no,
            "status": h.status if h is not None else "waiting",
            **deal_info(state, deal_no),
            "hands": hands,
            "labels": {tile: tile_label(tile) for tiles in hands.values() for tile in tiles},
            "result": hand_result(h),
        }
    }


def compare_fields(state: Any, deal_no: int, seat: int) -> dict[str, Any]:
    """The traveller's mahjong fields: the seat's wind on this deal and the deal's winds."""
    info = deal_info(state, deal_no)
    return {"mahjong": {**info, "wind": info["winds"][str(seat)]}}
