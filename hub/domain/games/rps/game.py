"""RPS Poker's plug-in: hold'em betting in RPS order, throws instead of cards.

A deck order deals no cards: it gives the dealer's throws (``rules.dealer_sequence``). The
players' ``throws`` and the dealer's ``reveal`` are its events; card errors are not; PHH holds
cards, not throws; views add throws, scores and odds (``views``); its bots throw (``bots``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hub.domain.console_event import SHARED_EVENTS, SHARED_HANDLERS, Apply, ConsoleEvent
from hub.domain.deck import DeckOrder
from hub.domain.errors import Rejection
from hub.domain.games import base
from hub.domain.games.base import (
    BotEvent,
    Command,
    CommandError,
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
from hub.domain.games.holdem import showdown
from hub.domain.games.holdem.events import BETTING, BETTING_HANDLERS
from hub.domain.games.holdem.game import BETTING_PAD, betting_offers, betting_spec
from hub.domain.games.rps import views
from hub.domain.games.rps.bots import next_throw, playoff_winners
from hub.domain.games.rps.events import Reveal, Throws
from hub.domain.games.rps.rules import (
    ROUND_THROWS,
    ROUNDS,
    RpsHand,
    RpsRules,
    dealer_sequence,
    dealer_slips,
    replay,
)
from hub.domain.games.spec import HandSpec
from hub.domain.pieces import CARDS, PieceSet
from hub.domain.states import HandStatus

if TYPE_CHECKING:
    from hub.domain.config.model import TournamentConfig

CARD_ERRORS = frozenset({"exposed", "early"})


def _rules(config: TournamentConfig) -> RpsRules:
    """The tournament's RPS rules (the defaults when it has none: not an RPS tournament)."""
    return config.rules_of(RpsRules) or RpsRules()


def _dealer(config: TournamentConfig, order: DeckOrder | None) -> dict[str, Any]:
    """A hand's dealer: his mode, and his throws when they are the deal's."""
    mode = _rules(config).dealer
    sequence = None
    if mode == "sequence" and order is not None:
        sequence = dealer_sequence(order)
    return {"mode": mode, "sequence": sequence}


def _slips(config: TournamentConfig, decks: Mapping[int, DeckOrder] | None) -> str:
    """The dealer's throws of every deal, to print for the officials."""
    rules = config.rules_of(RpsRules)  # None: not an RPS Poker tournament
    if rules is None or rules.dealer != "sequence" or not decks:
        raise CommandError(
            'needs game = "rps-poker", [rps] dealer = "sequence" and deck orders ([decks])'
        )
    return dealer_slips(decks, config.buttons)


SLIPS = Command(
    "rps-slips",
    help="RPS Poker: the dealer's throws of every deal, round by round (the slips to print)",
    run=_slips,
    config=True,
)


class RpsGame(PieceDecks, GameDefaults):
    offline_rules = (
        False  # gambit betting after throws: the console page takes one entry at a time offline
    )
    phh = False  # PHH holds cards, not throws: nothing to write
    betting_stats = True  # hold'em's betting rounds: VPIP, PFR, aggression count (docs/stats.md)
    pad: tuple[PadEntry, ...] = (
        PadEntry(
            "throws",
            "Throws",
            (PadField("seat", "seat", "Seat"), PadField("throws", "throws", "Throws", secret=True)),
        ),
        PadEntry("reveal", "Dealer's throws", (PadField("throws", "throws", "Dealer's throws"),)),
        *BETTING_PAD,
    )
    section: str | None = "rps"
    overlay: str | None = "rps-poker.js"  # seats throw against a dealer
    section_hint = 'an [rps] section needs game = "rps-poker"'
    title = "RPS Poker"
    # Its dealer (``RpsRules``) stood as ``rps_dealer`` after ``betting``.
    repr_slots: tuple[base.ReprSlot, ...] = (
        base.ReprSlot("rps_dealer", after="betting", default="sequence", read=lambda r: r.dealer),
    )
    # hold'em's betting, and the throws the game checks and keeps (no card errors)
    events: tuple[type[ConsoleEvent], ...] = (*SHARED_EVENTS, *BETTING, Throws, Reveal)
    handlers: Mapping[str, Apply] = {
        **SHARED_HANDLERS,
        **BETTING_HANDLERS,
        "throws": "game_input",
        "reveal": "game_input",
    }

    def __init__(self) -> None:
        self.name = "rps-poker"
        self.pieces: PieceSet | None = CARDS  # a deck order: the dealer's throws (rules)
        self.equity = False  # no cards dealt: its odds are ``odds``' (``views``)
        self.commands = (SLIPS,)

    def dealt(self, config: TournamentConfig, order: DeckOrder, deal_no: int) -> DealtPieces | None:
        return None  # no cards: the deck order gives the dealer's throws

    def spec(
        self, config: TournamentConfig, deal_no: int, cards: Callable[[], DealtPieces | None]
    ) -> HandSpec:
        betting = betting_spec(config, deal_no)
        return replace(betting, order="rps", limit=config.betting == "limit")

    def new_hand(self, config: TournamentConfig, spec: HandSpec, order: DeckOrder | None) -> Hand:
        return RpsHand(spec, **_dealer(config, order))

    def replay(
        self,
        config: TournamentConfig,
        spec: HandSpec,
        inputs: list[Input],
        actions: list[Input],
        order: DeckOrder | None,
    ) -> Hand:
        return replay(spec, inputs, **_dealer(config, order))

    def refusal(self, event_type: str) -> str | None:
        """A card error in its own words (hold'em's events, which RPS Poker otherwise plays)."""
        if event_type in CARD_ERRORS:
            return f"'{event_type}' is a card error: {self.title} has none"
        return None

    def pad_now(self, hand: Hand) -> list[Fields]:
        """What the hand needs next: the round's throws (the seats still to throw), then the
        dealer's (``chosen``), then the round's betting; the winners once all nine are in."""
        assert isinstance(hand, RpsHand)
        r = hand.round_index()
        if r is None:
            return []
        if r < len(ROUNDS) and not hand.is_revealed(r):
            name, count = ROUNDS[r], ROUND_THROWS[r]
            missing = hand.missing(r)
            players = hand.players_in()
            each = f"{count} throw{'s' * (count > 1)}"
            out = [
                pad_offer(
                    "throws",
                    f"The {name}: seat{'s' * (len(missing) > 1)} "
                    f"{', '.join(map(str, missing))} to throw ({each} each)."
                    if missing
                    else f"The {name}: every player has thrown (a seat may still change them).",
                    seat={"choices": players, "awaited": missing},
                    throws={"count": count, "done": [s for s in players if s not in missing]},
                )
            ]
            if not missing:  # (``chosen``: a sequence is turned over once every player threw)
                out.append(
                    pad_offer(
                        "reveal",
                        f"Every player has thrown: the dealer turns over his {name} ({each}).",
                        throws={"count": count},
                    )
                )
            return out
        if hand.street == "showdown" and not hand.throws_complete():
            return []  # (the rounds left are thrown above, before any winner)
        return betting_offers(hand)

    def game_input(self, config: TournamentConfig, hand: Hand, deal_no: int, event: Any) -> Input:
        """A player's ``throws`` for the round (secret until the showdown), or the dealer's
        ``reveal`` of his (dealer = "chosen"); raises `Rejection` as the hand refuses them."""
        assert isinstance(hand, RpsHand) and event.throws is not None
        if event.type == "throws":
            assert event.seat is not None
            return (event.seat, "throws", hand.throw(event.seat, event.throws))
        dealer = config.buttons[deal_no]
        if event.seat is not None and event.seat != dealer:
            raise Rejection("not_allowed", f"seat {event.seat} is not the dealer (seat {dealer})")
        return (dealer, "reveal", hand.reveal(event.throws))

    def seat_fields(self, hand: Hand, seat: int) -> Fields:
        return views.seat_fields(hand, seat)

    def showdown(self, h: Any) -> Fields | None:
        """A settled hand's showdown package: hold'em's, each seat named by its throws."""
        return showdown.poker_showdown(h, self.seat_name)

    def seat_name(self, hand: Hand, seat: int) -> str | None:
        """A seat's throws against the dealer's (``RpsHand.seat_name``)."""
        return hand.seat_name(seat) if isinstance(hand, RpsHand) else None

    def hand_fields(self, hand: Hand) -> Fields:
        return views.hand_fields(hand)

    def bot_events(
        self,
        config: TournamentConfig,
        current: Any,
        rng: random.Random,
        corrections: bool,
        done: set[str],
    ) -> list[BotEvent] | None:
        """The round's throws come before its betting; a showdown is an RPS play-off."""
        hand = current.hand
        assert isinstance(hand, RpsHand)
        owed = next_throw(hand, rng)
        if owed is not None:
            return [owed]
        if current.status == HandStatus.SHOWDOWN:
            declared = playoff_winners(hand, rng)
            if declared is None:  # the dealer's throws unknown: a plausible winner
                declared = sorted({min(p.eligible) for p in hand.pots() if p.eligible})
            return [("win", {"seats": declared})]
        return None  # the round's betting: hold'em's bots

    def check_config(self, c: Any, t: Any, data: Mapping[str, Any], early: bool) -> None:
        if not early and t.seats < 3:
            c.fail("tournament.seats", "RPS Poker needs at least 3 seats (2 blinds, dealer)")

    def betting_allowed(self, betting: str) -> bool:
        return betting == "limit"  # the seed offers it (docs/rps-poker.md)

    def section_config(self, c: Any, data: Mapping[str, Any]) -> dict[str, Any]:
        from hub.domain.games.rps import config

        return config.section_config(c, data)


RPS: base.Game = RpsGame()
