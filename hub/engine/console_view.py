"""The console-scoped table state (topic ``console:{t}``, docs/protocol.md §3.4): what a
table's console needs to enter the next action, and nothing of the cards.

Who is to act, the street, the pot, each seat's stack and bet, the legal actions with their
amounts (``Hand.legal``: pot limit and the cap, in the console event's sense: a bet or raise
is the total the street bet reaches, a call the chips it adds), the hand's actions, whether a
misdeal may still be declared, a dispute in words, and how far each of the table's consoles'
seqs stand (a reloaded tablet learns where it is). No hole card, no board, no undealt card:
the console's official sees the cards on the table.
"""

from __future__ import annotations

from typing import Any

from hub.domain.games.base import Game
from hub.domain.games.records import Legal
from hub.domain.states import HandStatus
from hub.engine.events import OPERATOR_CONSOLE
from hub.engine.hands import MISDEAL_ACTIONS, HandState, TableState
from hub.engine.sequencer import Sequencer
from hub.engine.shown import roster
from hub.engine.tournament import TournamentState

__all__ = [
    "NO_LEGAL",
    "action_items",
    "console_payload",
    "legal_block",
    "moving_fields",
    "seat_fields",
    "seat_values",
    "status_of",
    "table_hand",
]

NO_LEGAL: dict[str, Any] = {"fold": False, "check": False, "call": None, "bet": None, "raise": None}
"""What the console may enter when nobody is to act."""


def status_of(h: HandState | None, current: HandState | None) -> str:
    """``none`` (no hand yet), ``in_progress``, ``reopened`` (in play again for a
    correction), ``complete``, ``disputed``, ``voided``."""
    if h is None:
        return "none"
    if h.status == HandStatus.VOID:
        return "voided"
    if h.status in (HandStatus.COMPLETE, HandStatus.DISPUTED):
        return str(h.status)
    return "reopened" if h is current and h.reopened else "in_progress"


def legal_block(h: HandState | None) -> dict[str, Any]:
    """What the seat to act may enter: ``fold``/``check`` (bool), ``call`` (the chips a call
    adds, or None), ``bet``/``raise`` (``{"min", "max"}`` totals of the street bet, or None:
    a bet when nobody has bet this street, else a raise)."""
    if h is None or h.status not in (HandStatus.IN_PROGRESS, HandStatus.SHOWDOWN):
        return dict(NO_LEGAL)
    hand = h.hand
    legal_of = getattr(hand, "legal", None)
    seat = getattr(hand, "to_act", None)
    if legal_of is None or seat is None:
        return dict(NO_LEGAL)
    return _legal(legal_of(seat), hand.high_bet > 0)


def _legal(legal: Legal, opened: bool) -> dict[str, Any]:
    """``legal_block`` of the seat to act's ``Legal`` (``opened``: someone bet this street)."""
    span = None
    if legal.min_to is not None and legal.max_to is not None:
        span = {"min": legal.min_to, "max": legal.max_to}
    return {
        "fold": legal.fold,
        "check": legal.check,
        "call": legal.call,
        "bet": None if opened else span,
        "raise": span if opened else None,
    }


def action_items(h: HandState, first: int = 0) -> list[dict[str, Any]]:
    """The hand's actions from ``first`` on (blinds first): a bet or raise's ``amount`` is the
    total reached, a call's or blind's the chips it added, a fold's or check's None."""
    out = []
    actions = getattr(h.hand, "actions", ())
    for i in range(first, len(actions)):
        a = actions[i]
        amount = a.to if a.kind in ("bet", "raise") else (a.added or None)
        out.append({"i": i, "seat": a.seat, "kind": a.kind, "amount": amount, "street": a.street})
    return out


SEAT_KEYS = ("stack", "bet", "folded", "all_in")
"""The keys of ``seat_values``: a seat's fields that move with every action."""


def seat_values(h: HandState | None, seats: list[int], cap: int) -> list[tuple[Any, ...]]:
    """Each of ``seats``' fields that move with every action, as values of ``SEAT_KEYS``
    (the mover compares them with each seat's row whole: most seats did not move)."""
    hand = h.hand if h is not None else None
    committed = getattr(hand, "committed", None)
    if h is None or committed is None:
        return [(cap, 0, False, False)] * len(seats)
    own = h.spec.cap
    street_bet, folded, all_in = h.hand.street_bet, h.hand.folded, h.hand.all_in
    return [
        (own - committed.get(seat, 0), street_bet.get(seat, 0), seat in folded, seat in all_in)
        for seat in seats
    ]


def seat_fields(h: HandState | None, seat: int, cap: int) -> dict[str, Any]:
    """A seat's fields that move with every action (``seat_values``)."""
    return dict(zip(SEAT_KEYS, seat_values(h, [seat], cap)[0], strict=True))


def _seats(state: TournamentState, table: TableState, h: HandState | None) -> list[dict[str, Any]]:
    rows = []
    for row in roster(state, table.table, h.deal if h else state.table_deal(table)):
        seat = row["seat"]
        rows.append(
            {
                "seat": seat,
                "team": row["team"],
                "player": row["player"],
                **seat_fields(h, seat, state.config.cap),
            }
        )
    return rows


def moving_fields(
    state: TournamentState, table: TableState, h: HandState | None, seqs: Sequencer
) -> dict[str, Any]:
    """The top-level fields that move with every action (``hub.engine.projections`` sets
    them in place; the rest only moves when a hand starts, settles or is corrected)."""
    current = table.current
    hand = h.hand if h is not None else None
    street = getattr(hand, "street", None)
    pad, betting = _pad_now(state, current)
    legal = dict(NO_LEGAL)
    if betting:  # (poker's ``Hand.legal`` read off its offers: not asked of the hand twice)
        offered = state.game.offered_legal(betting)
        legal = legal_block(current) if offered is None else _legal(*offered)
    return {
        "consoles": {name: {"last_seq": seqs.last(name)} for name in console_names(state, table)},
        "moves": table.moves,
        "status": status_of(h, current),
        "misdeal_window": (
            current is not None and not current.reopened and not current.acted(MISDEAL_ACTIONS)
        ),  # (``not misdeal_too_late(current, current)``, its reasons not worded)
        "street": street,
        "pot": getattr(hand, "pot", 0),
        # the seat to act and its betting, only while the game offers the betting (RPS Poker:
        # not while the round's throws are awaited)
        "to_act": getattr(hand, "to_act", None) if betting else None,
        "legal": legal,
        "winners_needed": any(o["key"] == "win" for o in pad),
        "pad": pad,
    }


def pad_now(state: TournamentState, current: HandState | None) -> tuple[list[dict[str, Any]], bool]:
    """``_pad_now``'s pad, and whether the seat to act's betting is offered."""
    pad, betting = _pad_now(state, current)
    return pad, bool(betting)


def _pad_now(
    state: TournamentState, current: HandState | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The game's pad entries legal now in the hand in play (``Game.pad_now``; none between
    hands: start, reopen and confirm are every game's and the page's own) but the seat to
    act's betting, and whether that betting is offered. The betting's offers (a ``to_act``
    entry's seat and amounts) are what ``to_act`` and ``legal`` already say: left out of
    ``pad``, so ``pad`` moves only when the pad shows something else (hold'em's is one from
    the hand's start until its betting is over; RPS Poker's moves with each throw). The
    declarations themselves are the game's, served once by ``GET /api/topics``, not here."""
    if current is None or current.status not in (HandStatus.IN_PROGRESS, HandStatus.SHOWDOWN):
        return [], []
    to_act = _betting_keys(state.game)
    pad: list[dict[str, Any]] = []
    betting: list[dict[str, Any]] = []
    for o in state.game.pad_now(current.hand):
        (betting if o["key"] in to_act else pad).append(o)
    return pad, betting


_BETTING: tuple[Any, frozenset[str]] = ((), frozenset())


def _betting_keys(game: Game) -> frozenset[str]:
    """The keys of a game's ``to_act`` pad entries (its declaration's; the last one's kept:
    asked after every action)."""
    global _BETTING
    pad, keys = _BETTING
    if game.pad is not pad:
        keys = frozenset(e.key for e in game.pad if e.to_act)
        _BETTING = (game.pad, keys)
    return keys


def _dispute(h: HandState | None, game: Game) -> dict[str, Any] | None:
    if h is None or h.status != HandStatus.DISPUTED:
        return None
    own = game.dispute(h)  # a game's own words (mahjong: the typed fan against the tiles')
    if own is not None:
        return dict(own)
    declared = list(h.declared or ())
    computed = list(h.computed or ())
    said = ", ".join(map(str, declared)) or "nobody"
    cards = ", ".join(map(str, computed)) or "nobody"
    return {
        "reason": (
            f"the console declared seat(s) {said} the winner but the cards give the pot to "
            f"seat(s) {cards}: the hand is held until an official confirms it"
        ),
        "declared": declared,
        "computed": computed,
    }


def console_names(state: TournamentState, table: TableState) -> list[str]:
    """The consoles of a table: those ``[consoles]`` gives it, else the last one that wrote
    it (none after an operator's correction, until a console writes again)."""
    consoles = state.config.consoles
    if consoles:
        return sorted(name for name, t in consoles.items() if t == table.table)
    last = table.console  # (the operator's console writes every table: not a table's)
    return [last] if last and last != OPERATOR_CONSOLE else []


def console_payload(state: TournamentState, table: TableState, seqs: Sequencer) -> dict[str, Any]:
    """The ``console:{t}`` payload (module docstring)."""
    h = table_hand(table)
    return {
        "table": table.table,
        "group": table.group,
        "game": state.config.game,
        "schedule": list(table.order),
        "deal": h.deal if h is not None else None,
        "next_deal": table.next_deal(),
        "button": h.spec.button if h is not None else None,
        "seats": _seats(state, table, h),
        "actions": action_items(h) if h is not None else [],
        "dispute": _dispute(h, state.game),
        "rules": betting_rules(state, table, h),
        **moving_fields(state, table, h, seqs),
    }


def betting_rules(
    state: TournamentState, table: TableState, h: HandState | None
) -> dict[str, Any] | None:
    """What the page's rules module (overlays/js/rules.js) needs to work out the next legal
    actions offline, as `Hand.legal` would: hold'em's betting (no cards), the button of the
    hand shown and of the next deal. None for other games (the page then takes one entry at a
    time offline)."""
    if not state.game.offline_rules:
        return None
    next_deal = table.next_deal()
    cfg = state.config
    return {
        "seats": cfg.seats,
        "small_blind": cfg.small_blind,
        "big_blind": cfg.big_blind,
        "cap": cfg.cap,
        "pot_limit": cfg.betting == "pot-limit",
        "next_button": None if next_deal is None else cfg.buttons[next_deal],
    }


def table_hand(table: TableState) -> HandState | None:
    """The hand a console sees: the one in play, else the last one started."""
    if table.current is not None:
        return table.current
    return table.hands[next(reversed(table.hands))] if table.hands else None
