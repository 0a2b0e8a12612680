"""Hold'em's console events (and every card game's that bets as hold'em does): the betting
actions, the declared winners of a hand, and the dealer errors a table reports
(``hub.domain.dealing.redeal`` says which card replaced which)."""

from __future__ import annotations

from hub.domain.console_event import (
    SHARED_EVENTS,
    SHARED_HANDLERS,
    Apply,
    Card,
    ConsoleEvent,
    Natural,
    Positive,
    SeatList,
)


class Fold(ConsoleEvent, tag="fold", frozen=True, kw_only=True):
    seat: Positive


class Check(ConsoleEvent, tag="check", frozen=True, kw_only=True):
    seat: Positive


class Call(ConsoleEvent, tag="call", frozen=True, kw_only=True):
    seat: Positive


class Bet(ConsoleEvent, tag="bet", frozen=True, kw_only=True):
    seat: Positive
    amount: Natural


class Raise(ConsoleEvent, tag="raise", frozen=True, kw_only=True):
    seat: Positive
    amount: Natural


class Win(ConsoleEvent, tag="win", frozen=True, kw_only=True):
    seats: SeatList


class Exposed(ConsoleEvent, tag="exposed", frozen=True, kw_only=True):
    seat: Positive
    card: Card


class Early(ConsoleEvent, tag="early", frozen=True, kw_only=True):
    """A board card turned too early (rules.md "Dealer errors")."""


BETTING: tuple[type[ConsoleEvent], ...] = (Fold, Check, Call, Bet, Raise, Win)
BETTING_HANDLERS: dict[str, Apply] = {
    **dict.fromkeys(("fold", "check", "call", "bet", "raise"), "action"),
    "win": "win",
}
CARD_ERRORS: tuple[type[ConsoleEvent], ...] = (Exposed, Early)
# What hold'em plays, and each card game that bets and deals as it does (piecepack).
EVENTS: tuple[type[ConsoleEvent], ...] = (*SHARED_EVENTS, *BETTING, *CARD_ERRORS)
HANDLERS: dict[str, Apply] = {
    **SHARED_HANDLERS,
    **BETTING_HANDLERS,
    "exposed": "exposed",
    "early": "early",
}
