"""Texas hold'em's declaration: `PokerGame`, the game every card game that bets as hold'em does
builds on (52 cards or piecepack tiles dealt from a deck order, hold'em betting, PHH, equity),
its pad (``BETTING_PAD``, ``CARD_ERRORS_PAD``, ``betting_offers``), its betting spec
(``betting_spec``), the deal narrowed to its cards (``holdem_cards``), and ``HOLDEM`` itself.
What every game shares (the `Game` and `Hand` protocols, the pad's types, the defaults) is
``hub.domain.games.base``; the hand's spec and records are ``games/spec.py``/``records.py``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hub.domain.console_event import Apply, ConsoleEvent
from hub.domain.dealing import Dealt, deal
from hub.domain.deck import DeckOrder
from hub.domain.games.base import (
    Command,
    DealtPieces,
    Fields,
    GameDefaults,
    Hand,
    Input,
    PadEntry,
    PadField,
    PieceDecks,
    pad_offer,
)
from hub.domain.games.holdem import events as holdem_events
from hub.domain.games.holdem import hand as holdem
from hub.domain.games.holdem import showdown
from hub.domain.games.records import Legal
from hub.domain.games.spec import HandSpec
from hub.domain.pieces import CARDS, PieceSet

if TYPE_CHECKING:
    from hub.domain.config.model import TournamentConfig

_SEAT = PadField("seat", "seat", "Seat")
# Hold'em's betting on the pad (every poker game's: hold'em, piecepack, RPS Poker).
BETTING_PAD = (
    PadEntry("fold", "Fold", (_SEAT,), to_act=True),
    PadEntry("check", "Check", (_SEAT,), to_act=True),
    PadEntry("call", "Call", (_SEAT, PadField("amount", "amount", "Chips")), to_act=True),
    PadEntry("bet", "Bet", (_SEAT, PadField("amount", "amount", "Bet")), to_act=True),
    PadEntry("raise", "Raise to", (_SEAT, PadField("amount", "amount", "Raise to")), to_act=True),
    PadEntry("win", "Winners", (PadField("seats", "seats", "Winners"),)),
)
# A dealer's errors with the cards (hold'em's and piecepack hold'em's, not RPS Poker's).
CARD_ERRORS_PAD = (
    PadEntry(
        "exposed",
        "Exposed card",
        (_SEAT, PadField("card", "card", "Card")),
        correction=True,
    ),
    PadEntry("early", "Board card early", correction=True),
)
WINNERS_PROMPT = "Betting is over: declare the winners."


def betting_offers(hand: Hand) -> list[Fields]:
    """The seat to act's betting legal now, and the winners once the betting is over (every
    poker game's; overlays/js/rules.js `pokerPad` works out the same offline)."""
    seat = hand.to_act
    if seat is not None:
        legal = hand.legal(seat)
        who = {"choices": [seat]}
        out = [
            pad_offer(k, seat=who) for k, ok in (("fold", legal.fold), ("check", legal.check)) if ok
        ]
        if legal.call:
            out.append(pad_offer("call", seat=who, amount={"value": legal.call}))
        if legal.min_to is not None and legal.max_to is not None:
            kind = "raise" if hand.high_bet > 0 else "bet"
            out.append(pad_offer(kind, seat=who, amount={"min": legal.min_to, "max": legal.max_to}))
        return out
    if hand.street == "showdown":
        live = sorted(s for s in hand.committed if s not in hand.folded)
        return [pad_offer("win", WINNERS_PROMPT, seats={"choices": live})]
    return []


def read_offers(offers: list[Fields]) -> tuple[Legal, bool]:
    """The ``Hand.legal`` that ``betting_offers`` made the seat to act's ``offers`` of, and
    whether the street was opened (a raise offered, not a bet), read back off them
    (``PokerGame.offered_legal``)."""
    fold = check = opened = False
    call = min_to = max_to = None
    for offer in offers:
        key = offer["key"]
        if key == "fold":
            fold = True
        elif key == "check":
            check = True
        elif key == "call":
            call = offer["fields"]["amount"]["value"]
        else:  # bet or raise
            amount = offer["fields"]["amount"]
            min_to, max_to, opened = amount["min"], amount["max"], key == "raise"
    return Legal(fold, check, call, min_to, max_to), opened


def betting_spec(config: TournamentConfig, deal_no: int) -> HandSpec:
    """A deal's hold'em betting (seats, button, blinds, cap, pot-limit or no-limit)."""
    return HandSpec(
        seats=config.seats,
        button=config.buttons[deal_no],
        small_blind=config.small_blind,
        big_blind=config.big_blind,
        cap=config.cap,
        pot_limit=config.betting == "pot-limit",
    )


def holdem_cards(dealt: DealtPieces | None) -> Dealt | None:
    """A deal narrowed to hold'em's cards (two hole cards a seat, flop, turn and river), for
    what only a hold'em reads (its spec's ``cards``: showdown, equity, PHH); ``TypeError`` for
    another game's pieces."""
    if dealt is None or isinstance(dealt, Dealt):
        return dealt
    raise TypeError(f"hold'em's cards expected, not a {type(dealt).__name__}")


class PokerGame(PieceDecks, GameDefaults):
    """Hold'em's answers: cards dealt from a deck order, hold'em betting, PHH, equity."""

    phh = True
    betting_stats = True  # hold'em betting: VPIP, PFR, aggression, showdowns (docs/stats.md)
    offline_rules = True  # hold'em betting: the console page works out the next actions offline
    pad: tuple[PadEntry, ...] = BETTING_PAD + CARD_ERRORS_PAD
    events: tuple[type[ConsoleEvent], ...] = holdem_events.EVENTS
    handlers: Mapping[str, Apply] = holdem_events.HANDLERS

    def __init__(
        self,
        name: str,
        pieces: PieceSet,
        commands: tuple[Command, ...] = (),
        overlay: str | None = None,
    ) -> None:
        self.name = name
        self.overlay = overlay
        self.pieces: PieceSet | None = pieces  # what its deck orders are permutations of
        self.equity = pieces.equity
        self.commands = commands

    def dealt(self, config: TournamentConfig, order: DeckOrder, deal_no: int) -> Dealt:
        return deal(order, config.buttons[deal_no], config.seats)

    # ------------------------------------------------------------ hands
    def spec(
        self, config: TournamentConfig, deal_no: int, cards: Callable[[], DealtPieces | None]
    ) -> HandSpec:
        assert self.pieces is not None
        dealt = holdem_cards(cards())
        return replace(betting_spec(config, deal_no), cards=dealt, pieces=self.pieces)

    def new_hand(self, config: TournamentConfig, spec: HandSpec, order: DeckOrder | None) -> Hand:
        return holdem.Hand(spec)

    def replay(
        self,
        config: TournamentConfig,
        spec: HandSpec,
        inputs: list[Input],
        actions: list[Input],
        order: DeckOrder | None,
    ) -> Hand:
        """Rebuild a hand from its inputs (``actions``: its betting actions among them)."""
        return holdem.Hand.replay(spec, actions)  # type: ignore[arg-type]

    def pad_now(self, hand: Hand) -> list[Fields]:
        """The betting legal now (or the winners), and the dealer's card errors until the
        hand is settled."""
        if hand.street == "complete":
            return []
        seats = {"choices": sorted(hand.committed)}
        errors = [pad_offer("exposed", seat=seats, card={"choices": [1, 2]}), pad_offer("early")]
        return [*betting_offers(hand), *errors]

    def offered_legal(self, offers: list[Fields]) -> tuple[Legal, bool] | None:
        """Poker's betting read back off its offers (``read_offers``); None when a game built
        on this one draws a pad of its own (its offers are not known to be
        ``betting_offers``')."""
        if type(self).pad_now is not PokerGame.pad_now:
            return None
        return read_offers(offers)

    # ------------------------------------------------------------ views
    def showdown(self, h: Any) -> Fields | None:
        """A settled hand's showdown package (``holdem.showdown``; None while in play)."""
        return showdown.poker_showdown(h, self.seat_name)

    def seat_name(self, hand: holdem.Hand, seat: int) -> str | None:
        """The hand a seat showed, named for television (None: not known)."""
        return showdown.card_name(hand, seat)


HOLDEM = PokerGame("holdem", CARDS, overlay="holdem.js")
