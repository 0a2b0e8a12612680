"""High card, a toy game a third party could ship: the hub learns of it from an entry point of
the group ``duplicast.games`` (``hub.domain.games.registry``) and from nothing else.

Each seat antes (``[highcard] ante``, 1 by default) and is dealt one card: the first of its
hold'em hole cards from the deal's deck order. Left of the button first, each seat acts once:
``stay`` (its own event, ``events.py``) to stay in, ``fold`` to give up its ante. The highest
card left (by rank; equal ranks share) takes the pot; the official's ``win`` names the
winners, checked against the cards. A lone seat left takes the pot at once.

The game is written against the hub's small protocols only: `GameDefaults` (what it lacks:
fields of its own in the views, bots, sub-commands...) and the `Hand` protocol, not hold'em's
game or hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

import msgspec

from hub.domain.dealing import Dealt, deal
from hub.domain.deck import DeckOrder, random_deck_orders, seeded_deck_orders
from hub.domain.errors import Rejection
from hub.domain.games.base import DealtPieces, GameDefaults, Hand, Input
from hub.domain.games.holdem.game import holdem_cards
from hub.domain.games.records import NOTHING, ActionRecord, Legal, Pot
from hub.domain.games.spec import HandSpec
from hub.domain.pieces import CARDS
from tests.toygame import events as toy_events

RANKS = "23456789TJQKA"
KINDS = (toy_events.STAY, "fold")


class HighCardRules(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[highcard]``: the ante every seat puts in."""

    ante: Annotated[int, msgspec.Meta(ge=1)] = 1


class HighCardHand:
    """One hand of high card at one table (the hub's `Hand` protocol)."""

    def __init__(self, spec: HandSpec, ante: int) -> None:
        self.spec = spec
        n = spec.seats
        self.street = "preflop"
        self.committed = {s: ante for s in range(1, n + 1)}
        self.street_bet = {s: 0 for s in range(1, n + 1)}
        self.folded: frozenset[int] = frozenset()
        self.all_in: frozenset[int] = frozenset()
        self.actions = [ActionRecord(s, "ante", ante, 0, "preflop") for s in range(1, n + 1)]
        self.result: dict[int, int] | None = None
        self.order = [(spec.button + i) % n + 1 for i in range(n)]  # the button acts last
        self.to_act: int | None = self.order[0]

    @property
    def pot(self) -> int:
        return sum(self.committed.values())

    @property
    def high_bet(self) -> int:
        return 0

    def card(self, seat: int) -> str:
        assert self.spec.cards is not None
        return str(self.spec.cards.hole[seat][0])

    def board_visible(self) -> tuple[str, ...]:
        return ()

    def legal(self, seat: int) -> Legal:
        return Legal(True, True, None, None, None) if seat == self.to_act else NOTHING

    def verify(self, seat: int, kind: str, amount: int | None = None) -> None:
        if self.street != "preflop":
            raise Rejection("hand_over", f"the hand is at {self.street}: no more actions")
        if kind not in KINDS:
            raise Rejection("not_allowed", f"high card has no {kind!r}: {KINDS[0]} or fold")
        if seat != self.to_act:
            raise Rejection("out_of_turn", f"seat {self.to_act} is to act, not seat {seat}")

    def act(self, seat: int, kind: str, amount: int | None = None) -> ActionRecord:
        self.verify(seat, kind, amount)
        if kind == "fold":
            self.folded = self.folded | {seat}
        record = ActionRecord(seat, kind, 0, 0, "preflop")
        self.actions.append(record)
        live = self._live()
        later = self.order[self.order.index(seat) + 1 :]
        self.to_act = next(iter(later), None)
        if len(live) == 1:
            self.settle(live)
        elif self.to_act is None:
            self.street = "showdown"
        return record

    def copy(self) -> HighCardHand:
        clone = object.__new__(HighCardHand)
        clone.__dict__.update(self.__dict__)
        clone.committed = dict(self.committed)
        clone.actions = list(self.actions)
        clone.result = None if self.result is None else dict(self.result)
        return clone

    def _live(self) -> list[int]:
        return [s for s in self.order if s not in self.folded]

    def pots(self) -> list[Pot]:
        return [Pot(self.pot, frozenset(self._live()))]

    def computed_winners(self) -> frozenset[int] | None:
        live = self._live()
        best = max(RANKS.index(self.card(s)[0]) for s in live)
        return frozenset(s for s in live if RANKS.index(self.card(s)[0]) == best)

    def if_ended_now(self) -> dict[int, int] | None:
        return dict(self.result) if self.result is not None else self.copy().settle(None)

    def awards(self, declared: Iterable[int] | None = None) -> list[tuple[Pot, tuple[int, ...]]]:
        winners = self.computed_winners() if declared is None else frozenset(declared)
        assert winners is not None
        bad = sorted(winners - set(self._live()))
        if bad:
            raise Rejection("bad_winner", f"seat {bad[0]} is not in the hand")
        return [(self.pots()[0], tuple(s for s in self.order if s in winners))]

    def settle(self, winners: Iterable[int] | None = None) -> dict[int, int]:
        [(pot, paid)] = self.awards(winners)
        share, odd = divmod(pot.amount, len(paid))
        won = {s: share + (1 if i < odd else 0) for i, s in enumerate(paid)}
        self.result = {s: won.get(s, 0) - self.committed[s] for s in self.committed}
        self.street, self.to_act = "complete", None
        return dict(self.result)


class HighCard(GameDefaults):
    """The game's declaration: its name, pieces, section, deal and hands."""

    name = "highcard"
    pieces = CARDS
    overlay = "highcard/highcard.js"  # its overlay module, served from this package:
    overlay_dir = str(Path(__file__).resolve().parent / "overlay")
    section = "highcard"
    section_hint = 'a [highcard] section needs game = "highcard" in [tournament]'
    events = toy_events.EVENTS  # its console events and how the engine applies each (#31 item 3)
    handlers = toy_events.HANDLERS

    def check_order(self, deal_no: int, order: DeckOrder) -> None:
        if not CARDS.holds(order.cards):
            raise ValueError(f"deal {deal_no}: not a deck of 52 cards")

    def orders_problem(self, orders: Mapping[int, DeckOrder], deals: int) -> str | None:
        ok = all(CARDS.holds(orders[d].cards) for d in range(1, deals + 1))
        return None if ok else "holds something other than decks of 52 cards"

    def random_orders(self, deals: int) -> dict[int, DeckOrder]:
        return random_deck_orders(deals, pieces=CARDS)

    def seeded_orders(self, seed: int | str, deals: int) -> dict[int, DeckOrder]:
        return seeded_deck_orders(seed, deals, CARDS)

    def dealt(self, config: Any, order: DeckOrder, deal_no: int) -> Dealt:
        return deal(order, config.buttons[deal_no], config.seats)

    def spec(self, config: Any, deal_no: int, cards: Callable[[], DealtPieces | None]) -> HandSpec:
        return HandSpec(
            seats=config.seats,
            button=config.buttons[deal_no],
            small_blind=config.small_blind,
            big_blind=config.big_blind,
            cap=config.cap,
            cards=holdem_cards(cards()),  # hold'em's deal: its first hole card is a seat's
        )

    def new_hand(self, config: Any, spec: HandSpec, order: DeckOrder | None) -> Hand:
        rules = config.rules_of(HighCardRules) or HighCardRules()  # its [highcard] section
        return HighCardHand(spec, rules.ante)

    def replay(
        self,
        config: Any,
        spec: HandSpec,
        inputs: list[Input],
        actions: list[Input],
        order: DeckOrder | None,
    ) -> Hand:
        hand = self.new_hand(config, spec, order)
        for seat, kind, amount in actions:
            hand.act(seat, kind, None if amount is None else int(amount))
        return hand

    def refusal(self, event_type: str) -> str | None:
        return f"'{event_type}' is not played in high card"

    def section_config(self, c: Any, data: Mapping[str, Any]) -> dict[str, Any]:
        rules: HighCardRules = c.convert(data.get("highcard", {}), HighCardRules, "highcard")
        return {"game_rules": rules}


HIGHCARD = HighCard()
