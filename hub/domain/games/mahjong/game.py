"""MCR mahjong's plug-in: walls instead of decks, a result instead of betting, points.

The hand is ``hand.MahjongHand`` (the hub's `Hand` protocol holding the entered result, so the
scoring and the feed treat it like any hand); the official enters each hand's ``result``;
PHH cannot hold it; views add winds, hands and results (``views``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from hub.domain.console_event import SHARED_EVENTS, SHARED_HANDLERS, Apply, ConsoleEvent
from hub.domain.deck import DeckOrder
from hub.domain.games import base
from hub.domain.games.base import (
    BotEvent,
    DealtPieces,
    Fields,
    GameDefaults,
    Hand,
    Input,
    PadEntry,
    PadField,
    pad_offer,
)
from hub.domain.games.mahjong import views
from hub.domain.games.mahjong.events import Result
from hub.domain.games.mahjong.hand import (
    MahjongDeal,
    MahjongHand,
    counted,
    mahjong_deal,
    mahjong_spec,
    no_betting,
    result_input,
)
from hub.domain.games.mahjong.rules import (
    FULL_SET,
    MahjongResult,
    MahjongRules,
    Wall,
    check_result,
    random_result,
    random_walls,
    result_fields,
    seat_winds,
    seeded_walls,
    wall_from_tiles,
)
from hub.domain.games.spec import HandSpec
from hub.domain.pieces import PieceSet

if TYPE_CHECKING:
    from hub.domain.config.model import TournamentConfig


# The poker events a console may still send at a mahjong table (protocol v1's types), which
# mahjong refuses in its own words: its hand has no betting, its tiles no card errors.
BETTING = frozenset({"fold", "check", "call", "bet", "raise", "win"})
CARD_ERRORS = frozenset({"exposed", "early"})


def _rules(config: TournamentConfig) -> MahjongRules:
    rules = config.rules_of(MahjongRules)
    assert rules is not None  # the config check gives an "mcr" tournament its rules
    return rules


class MahjongGame(GameDefaults):
    offline_rules = (
        False  # not hold'em's betting: the console page takes one entry at a time offline
    )
    phh = False  # PHH is a poker format: a mahjong hand has no history
    points_unit = " points"  # a mahjong hand scores points
    order_words = f"a wall of {len(FULL_SET)} tiles"  # (a deck file's line: order_from_text)
    pad: tuple[PadEntry, ...] = (
        PadEntry(
            "result",
            "Win",
            (
                PadField("seat", "seat", "Winner"),
                PadField("discarder", "seat", "Discarder", either="self_draw"),
                PadField("self_draw", "flag", "Self-drawn", either="discarder"),
                # the tiles in the tile picker (overlays/js/games/mcr.js `padFields`): the hub
                # computes the fan from them; a typed fan beside them that differs is a dispute
                PadField("hand", "mcr_hand", "Hand", optional=True),
                PadField("fan", "amount", "Fan", optional=True),
            ),
            name="result",
        ),
        PadEntry("result", "Drawn hand", fixed=(("draw", True),), name="result-draw"),
    )
    section: str | None = "mahjong"
    overlay: str | None = "mcr.js"  # draws its own live table and split screen
    section_hint = 'a [mahjong] section needs game = "mcr" in [tournament]'
    # Its rules (``TournamentConfig.game_rules``) stood as ``mahjong`` after ``game``.
    repr_slots: tuple[base.ReprSlot, ...] = (
        base.ReprSlot("mahjong", after="game", default=None, read=lambda rules: rules),
    )
    foreign = "'{type}' is a mahjong event: this tournament plays poker"  # its result, elsewhere
    # the events every game plays (start, undo, void...) and a hand's result; a poker event is
    # another game's, refused in mahjong's words (`refusal`)
    events: tuple[type[ConsoleEvent], ...] = (*SHARED_EVENTS, Result)
    handlers: Mapping[str, Apply] = {**SHARED_HANDLERS, "result": "result"}

    def __init__(self) -> None:
        self.name = "mcr"
        self.pieces: PieceSet | None = (
            None  # walls: 136 tiles, each kind four times (``rules.Wall``)
        )
        self.equity = False

    def refusal(self, event_type: str) -> str | None:
        """A poker event in mahjong's words: a betting action or declared winners ("mahjong
        has no betting: send a 'result', not 'bet'"), a card error."""
        if event_type in BETTING:
            return no_betting(event_type)
        if event_type in CARD_ERRORS:
            return f"'{event_type}' is a card error: mahjong has none"
        return None

    def check_order(self, deal_no: int, order: DeckOrder) -> None:
        if not isinstance(order, Wall):
            raise ValueError(f"deal {deal_no}: not a mahjong wall (game {self.name!r})")

    def orders_problem(self, orders: Mapping[int, DeckOrder], deals: int) -> str | None:
        if not all(isinstance(order, Wall) for order in orders.values()):
            return "holds card decks, not mahjong walls (game is 'mcr')"
        return None

    def random_orders(self, deals: int) -> dict[int, DeckOrder]:
        return random_walls(deals)

    def seeded_orders(self, seed: int | str, deals: int) -> dict[int, DeckOrder]:
        return seeded_walls(seed, deals)

    def order_from_text(self, text: str, rehearsal: bool) -> DeckOrder | None:
        """A wall's 136 tiles, two characters each."""
        return wall_from_tiles(text, rehearsal) if len(text) == 2 * len(FULL_SET) else None

    def dealt(self, config: TournamentConfig, order: DeckOrder, deal_no: int) -> MahjongDeal:
        assert isinstance(order, Wall)  # load_decks gives walls to a mahjong tournament
        prevalent = _rules(config).prevalent[deal_no]
        return mahjong_deal(order, config.buttons[deal_no], prevalent)

    def spec(
        self, config: TournamentConfig, deal_no: int, cards: Callable[[], DealtPieces | None]
    ) -> HandSpec:
        return mahjong_spec(config.buttons[deal_no])

    def new_hand(self, config: TournamentConfig, spec: HandSpec, order: DeckOrder | None) -> Hand:
        return MahjongHand.replay_inputs(spec, _rules(config).rule, [])

    def replay(
        self,
        config: TournamentConfig,
        spec: HandSpec,
        inputs: list[Input],
        actions: list[Input],
        order: DeckOrder | None,
    ) -> Hand:
        return MahjongHand.replay_inputs(spec, _rules(config).rule, inputs)

    def pad_now(self, hand: Hand) -> list[Fields]:
        """A hand in play waits for its result: a win (any seat; the discarder another) or a
        draw; a reopened one (its result set) for the result that replaces it."""
        seats = sorted(hand.committed)
        return [
            pad_offer(
                "result",
                "Enter the hand's result.",
                seat={"choices": seats},
                discarder={"choices": seats},
            ),
            pad_offer("result-draw"),
        ]

    def result_hand(
        self, config: TournamentConfig, spec: HandSpec, event: Any
    ) -> tuple[Hand, list[Input]]:
        """The hand with the entered ``result`` event's result, and its inputs; raises
        `Rejection` (fan below the minimum, the winner's own discard; with the tiles: an
        impossible hand, not a winning hand, under the minimum). With tiles the fan is
        computed (the deal's winds: ``event.deal``, which the engine fills in); a typed
        ``fan`` that differs holds the hand for an official (`MahjongHand.pending`)."""
        rules = _rules(config)
        result = MahjongResult(None)
        if not event.draw and event.hand is None:
            result = MahjongResult(event.seat, event.fan, event.discarder)
        elif not event.draw:
            check_result(MahjongResult(event.seat, rules.rule.min_fan, event.discarder), rules.rule)
            winds = seat_winds(spec.button)[event.seat] + rules.prevalent[event.deal]
            result = counted(event.seat, event.discarder, event.hand, winds, event.fan, rules.rule)
        trial = MahjongHand.replay_inputs(spec, rules.rule, [])
        trial.set_result(result)
        return trial, [result_input(result)]

    def table_fields(self, state: Any, table: Any) -> Fields:
        return views.table_fields(state, table)

    def row_fields(self, h: Any) -> Fields:
        return {"result": views.hand_result(h)}

    def compare_fields(self, state: Any, deal_no: int, seat: int) -> Fields:
        return views.compare_fields(state, deal_no, seat)

    def showdown(self, h: Any) -> Fields | None:
        return views.showdown(h)

    def dispute(self, h: Any) -> Fields | None:
        return views.dispute(h)

    def bot_events(
        self,
        config: TournamentConfig,
        current: Any,
        rng: random.Random,
        corrections: bool,
        done: set[str],
    ) -> list[BotEvent] | None:
        """The official enters the hand's result; once, a misdeal voids a hand (the wrong wall
        was restored), and once a mistyped result is reopened and entered again."""
        rule = _rules(config).rule
        if corrections and "void" not in done and rng.random() < 0.03:
            done.add("void")
            return [("void", {})]
        out: list[BotEvent] = [("result", result_fields(random_result(rng, rule)))]
        if corrections and "dispute" not in done and rng.random() < 0.1:
            done.add("dispute")
            again = random_result(rng, rule)
            out += [("reopen", {"deal": current.deal}), ("result", result_fields(again))]
        return out

    def check_config(self, c: Any, t: Any, data: Mapping[str, Any], early: bool) -> None:
        if early and t.seats != 4:
            c.fail("tournament.seats", f"MCR mahjong is played by 4 seats, got {t.seats}")

    def tournament_shape(self) -> type:
        from hub.domain.games.mahjong.config import MahjongTournament

        return MahjongTournament  # no blinds: they may be left out

    def scoring_and_rules(self, c: Any, root: Any, deals: int, event: Any) -> Any:
        from hub.domain.games.mahjong import config

        return config.scoring_and_rules(c, root, deals, event)


MAHJONG: base.Game = MahjongGame()
