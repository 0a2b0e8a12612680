"""What the hub asks of a game, whatever the game: the `Game` protocol and its defaults.

Every place that once asked ``config.game == ...`` asks the tournament's game instead: the
tournament (its deck orders, deal, hand spec, new hand, replay, the events it refuses), the
views (fields a game adds to the live table, the traveller and its rows), the PHH export, the
config check (its [tournament] rules, its own section, its scoring), the deck tools (random and
rehearsal orders, a deck file's check), the simulator (events a game's bots enter) and the
CLI (its sub-commands, `Command`). This module, ``spec.py`` and ``records.py`` are what every
game shares, and import no game: hold'em's own answers (`PokerGame`, its pad and betting) are
``holdem/game.py``, which card games that bet as hold'em does build on (tests/test_layering.py
holds the shared layer to it). Views receive the engine's state objects untyped
(``Any``): the domain may not import the engine, and they read only a few documented
attributes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from hub.domain.console_event import SHARED_EVENTS, SHARED_HANDLERS, Apply, ConsoleEvent
from hub.domain.deck import (
    DeckOrder,
    deck_order_from_cards,
    random_deck_orders,
    seeded_deck_orders,
)
from hub.domain.games.records import ActionRecord, Legal, Pot
from hub.domain.games.spec import HandSpec
from hub.domain.pieces import CARDS, PieceSet

if TYPE_CHECKING:
    from hub.domain.config.model import TournamentConfig

Input = tuple[int, str, int | str | None]
Fields = dict[str, Any]
BotEvent = tuple[str, dict[str, Any]]  # an event type and its fields


class Hand(Protocol):
    """What the hub reads of a hand in play, whatever the game: the engine, the views, the
    scores and the corrections (hold'em's `holdem.hand.Hand` answers it, and so do mahjong's
    and RPS Poker's; a third party's game may answer it with a class of its own).

    ``street``: one of ``hub.domain.states.Street`` ("showdown" once nothing is left to enter
    but the winners, "complete" once settled); ``committed``/``street_bet``: chips per seat in
    the hand and on this street; ``result``: chips won or lost per seat once settled."""

    spec: HandSpec

    # Read-only to the hub: a hand changes only through its own methods.
    @property
    def street(self) -> str: ...
    @property
    def to_act(self) -> int | None: ...
    @property
    def committed(self) -> dict[int, int]: ...
    @property
    def street_bet(self) -> dict[int, int]: ...
    @property
    def folded(self) -> frozenset[int]: ...
    @property
    def all_in(self) -> frozenset[int]: ...
    @property
    def actions(self) -> list[ActionRecord]: ...
    @property
    def result(self) -> dict[int, int] | None: ...
    @property
    def pot(self) -> int: ...
    @property
    def high_bet(self) -> int: ...
    def board_visible(self) -> tuple[str, ...]: ...
    def legal(self, seat: int) -> Legal: ...
    def verify(self, seat: int, kind: str, amount: int | None = None) -> None: ...
    def act(self, seat: int, kind: str, amount: int | None = None) -> ActionRecord: ...
    def copy(self) -> Hand: ...
    def pots(self) -> list[Pot]: ...
    def computed_winners(self) -> frozenset[int] | None: ...
    def if_ended_now(self) -> dict[int, int] | None: ...
    def settle(self, winners: Iterable[int] | None = None) -> dict[int, int]: ...
    def awards(
        self, declared: Iterable[int] | None = None
    ) -> list[tuple[Pot, tuple[int, ...]]]: ...


@runtime_checkable
class DealtPieces(Protocol):
    """What every game's deal has, read by the engine and the views whatever the game (the
    deal payload, a seat's comparison): ``hole`` each seat's own pieces as dealt, ``board``
    the shared ones (piece texts: cards, tiles). Hold'em's `dealing.Dealt` (two hole cards, a
    five-card board) answers it, so does mahjong's `MahjongDeal` (13 tiles a seat, no board);
    what only a hold'em reads (two hole cards, flop/turn/river) it narrows to `Dealt` first
    (``holdem.game.holdem_cards``)."""

    @property
    def hole(self) -> Mapping[int, tuple[str, ...]]: ...
    @property
    def board(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class PadField:
    """One field of a pad entry: the console event's field ``name``, its ``kind`` (the widget
    the pad draws: ``seat``, ``seats``, ``amount``, ``card``, ``throws``, ``flag``,
    ``mcr_hand``...; a game's overlay module may bring its own, ``padFields``), its ``label``,
    whether it is ``optional``, ``either`` (the field it is the alternative of: exactly one of
    the two is given) and ``secret`` (the tablet masks what is entered: RPS Poker's throws)."""

    name: str
    kind: str
    label: str
    optional: bool = False
    either: str | None = None
    secret: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "label": self.label,
            "optional": self.optional,
            "either": self.either,
            "secret": self.secret,
        }


@dataclass(frozen=True)
class PadEntry:
    """One entry a table console's pad offers for a game (``Game.pad``, issue #32): the console
    event ``type`` it sends, its button's ``label``, the ``fields`` the official fills in,
    ``fixed`` values it always sends, whether it is the seat to act's betting (``to_act``:
    drawn as one keypad from the console state's ``legal``) or a ``correction`` (the small
    row), and its ``key`` (its name on the page: the type, unless two entries share one).
    Which entries are legal now, and within what, is the game's ``pad_now``."""

    type: str
    label: str
    fields: tuple[PadField, ...] = ()
    to_act: bool = False
    correction: bool = False
    fixed: tuple[tuple[str, Any], ...] = ()
    name: str = ""

    @property
    def key(self) -> str:
        return self.name or self.type

    def as_dict(self) -> dict[str, Any]:
        """The declaration as the hub serves it once per game (``GET /api/topics`` ``pads``)."""
        return {
            "key": self.key,
            "type": self.type,
            "label": self.label,
            "fields": [f.as_dict() for f in self.fields],
            "to_act": self.to_act,
            "correction": self.correction,
            "fixed": dict(self.fixed),
        }


def pad_offer(key: str, prompt: str | None = None, **fields: dict[str, Any]) -> Fields:
    """An entry legal now (``Game.pad_now``): its ``key``, each field's constraints (``choices``:
    the values allowed; ``awaited``: the seats still to enter it; ``done``: those that have;
    ``count``: how many throws; ``min``/``max``/``value``: an amount) and a ``prompt``."""
    return {"key": key, "prompt": prompt, "fields": fields}


@dataclass(frozen=True)
class ReprSlot:
    """Where a game's own rules stood in the configuration's repr before they moved to its
    folder (``Game.repr_slots``; ``TournamentConfig.repr_slots``): the field it followed
    (``after``), its ``name``, its value in another game's tournament (``default``) and read
    from this game's rules (``read``). tests/config_corpus.py digests the repr of every file
    it makes: the hub's games keep those digests; a new game declares none."""

    name: str
    after: str
    default: Any
    read: Callable[[Any], Any]


class CommandError(Exception):
    """A game's sub-command cannot do its work: ``duplicast NAME: <message>``, exit status 1."""


@dataclass(frozen=True)
class Command:
    """A sub-command of ``duplicast`` a game brings (``Game.commands``; ``hub.cli.main`` adds
    each). ``run`` returns what to print, or raises `CommandError`. With ``config``, the
    command takes ``--config FILE`` (and the key file): ``run(config, decks)`` receives the
    loaded tournament and its deck orders (None: no [decks]); else ``run()``."""

    name: str
    help: str
    run: Callable[..., str]
    description: str | None = None
    config: bool = False


# ------------------------------------------------------------------ what a game declares
# Small capability protocols, each what one part of the hub asks of a game; `Game` composes
# them, and a caller types against the one it uses (the views against `Views`, the config check
# against `ConfigSection`...). `GameDefaults` answers what a game may lack.


class Decks(Protocol):
    """Its deck orders (the deck tools, the deck file's check, the tournament's deal)."""

    name: str  # [tournament] game
    pieces: PieceSet | None  # what a deck order is a permutation of (None: mahjong walls)
    order_words: str  # its own kind of order in words, where it has one ("a wall of 136 tiles")

    def check_order(self, deal_no: int, order: DeckOrder) -> None: ...
    def orders_problem(self, orders: Mapping[int, DeckOrder], deals: int) -> str | None: ...
    def random_orders(self, deals: int) -> dict[int, DeckOrder]: ...
    def seeded_orders(self, seed: int | str, deals: int) -> dict[int, DeckOrder]: ...
    def order_from_text(self, text: str, rehearsal: bool) -> DeckOrder | None: ...


class Dealing(Protocol):
    """Its hands: a deal's cards and spec, a new hand, a hand replayed from its inputs, and
    the inputs of its own (an entered result, RPS Poker's throws) applied (the tournament)."""

    def dealt(
        self, config: TournamentConfig, order: DeckOrder, deal_no: int
    ) -> DealtPieces | None: ...
    def spec(
        self, config: TournamentConfig, deal_no: int, cards: Callable[[], DealtPieces | None]
    ) -> HandSpec: ...
    def new_hand(
        self, config: TournamentConfig, spec: HandSpec, order: DeckOrder | None
    ) -> Hand: ...
    def replay(
        self,
        config: TournamentConfig,
        spec: HandSpec,
        inputs: list[Input],
        actions: list[Input],
        order: DeckOrder | None,
    ) -> Hand: ...
    def result_hand(
        self, config: TournamentConfig, spec: HandSpec, event: Any
    ) -> tuple[Hand, list[Input]]: ...
    def game_input(
        self, config: TournamentConfig, hand: Hand, deal_no: int, event: Any
    ) -> Input: ...


class Rules(Protocol):
    """The console events it plays (Structs, tag = the wire `type`; any other is refused) and
    how the engine applies each (`hub.engine.tournament.HANDLERS`); how it refuses another
    game's (``registry.refusal``: its own words, else the declaring game's ``foreign``)."""

    events: tuple[type[ConsoleEvent], ...]
    handlers: Mapping[str, Apply]
    title: str  # its name in a sentence ("RPS Poker"; "": its ``name``)
    foreign: str  # how a game that does not play one of its events refuses it ({type}, {title})

    def refusal(self, event_type: str) -> str | None: ...


class Views(Protocol):
    """What its views add to the live table, the traveller and its rows."""

    equity: bool  # does the hub compute chances from the cards (``hub.domain.equity``)?
    # Has it poker betting to count (VPIP, PFR, aggression, showdowns: ``hub.engine.stats``)?
    # Without, its statistics are the duplicate ones (field average, swing, best) only.
    betting_stats: bool
    points_unit: str  # the ticker's unit of a result (" points"; "" for chips)

    def table_fields(self, state: Any, table: Any) -> Fields: ...
    def seat_fields(self, hand: Hand, seat: int) -> Fields: ...
    def hand_fields(self, hand: Hand) -> Fields: ...
    def row_fields(self, h: Any) -> Fields: ...
    def compare_fields(self, state: Any, deal_no: int, seat: int) -> Fields: ...


class Overlays(Protocol):
    """How the overlays draw it (``registry.overlays``)."""

    # Its overlays' game module, a path under overlays/js/games/ (None: drawn as hold'em is);
    # the hub serves the list (``GET /api/topics``) and the pages import each. A game of
    # another package serves its own: ``overlay_dir``, a directory the hub serves at
    # /overlays/js/games/<name>/ (its ``overlay``: "<name>/<module>.js").
    overlay: str | None
    overlay_dir: str | None


class Showdown(Protocol):
    """A settled hand as television shows it, and as a PHH file keeps it."""

    phh: bool  # can a hand be written as PHH (docs/phh.md)?

    def showdown(self, h: Any) -> Fields | None: ...
    def dispute(self, h: Any) -> Fields | None: ...


class Bots(Protocol):
    """The events its simulated officials enter (``hub.engine.simulate``)."""

    def bot_events(
        self,
        config: TournamentConfig,
        current: Any,
        rng: random.Random,
        corrections: bool,
        done: set[str],
    ) -> list[BotEvent] | None: ...


class ConfigSection(Protocol):
    """Its part of the tournament file: its [tournament] rules and shape, its own section
    ([mahjong], [rps]) read into its rules (``TournamentConfig.game_rules``), its scoring."""

    section: str | None  # its own config section ([mahjong], [rps])
    section_hint: str  # the refusal of that section in another game's file
    repr_slots: tuple[ReprSlot, ...]  # where its rules stood in the config's repr

    def check_config(self, c: Any, t: Any, data: Mapping[str, Any], early: bool) -> None: ...
    def section_config(self, c: Any, data: Mapping[str, Any]) -> dict[str, Any]: ...
    def betting_allowed(self, betting: str) -> bool: ...
    def tournament_shape(self) -> type: ...
    def scoring_and_rules(self, c: Any, root: Any, deals: int, event: Any) -> Any: ...


class Console(Protocol):
    """What a table console and the ``duplicast`` command offer for it."""

    offline_rules: bool  # is its betting the console page's rules module's (overlays/js/rules.js)?
    pad: tuple[PadEntry, ...]  # its own entries on a table console's pad (start, undo... aside)
    commands: tuple[Command, ...]  # its sub-commands of ``duplicast`` (none: ())

    def pad_now(self, hand: Hand) -> list[Fields]: ...
    def offered_legal(self, offers: list[Fields]) -> tuple[Legal, bool] | None: ...


class Game(
    Decks, Dealing, Rules, Views, Overlays, Showdown, Bots, ConfigSection, Console, Protocol
):
    """One game the hub scores (``registry.games``): every capability above; hold'em's
    `PokerGame` (``holdem/game.py``) is the default answer, `GameDefaults` what a game may lack."""


CAPABILITIES: tuple[type, ...] = (
    Decks,
    Dealing,
    Rules,
    Views,
    Overlays,
    Showdown,
    Bots,
    ConfigSection,
    Console,
)
"""The protocols `Game` composes (tests/test_games.py: every game answers each)."""


class GameDefaults:
    """What a game that has no such thing answers: no section, no sub-commands, no fields of
    its own in the views, no own inputs or results, no bots, the [tournament] shape and the
    [scoring] table as they are. A game (`PokerGame`, a third party's) inherits these and
    writes the rest of `Game`: its name and pieces, its deck orders, its deal and its hands."""

    phh = False  # a game's hands are PHH only if it says so (hold'em's are)
    order_words = ""  # a deck order is a permutation of its pieces (``pieces.described``)
    equity = False
    betting_stats = False  # no betting to count unless it says so (poker games do)
    offline_rules = False  # the console page takes one entry at a time offline
    points_unit = ""
    section: str | None = None
    section_hint = ""
    events: tuple[type[ConsoleEvent], ...] = SHARED_EVENTS
    handlers: Mapping[str, Apply] = SHARED_HANDLERS
    commands: tuple[Command, ...] = ()
    pad: tuple[PadEntry, ...] = ()
    overlay: str | None = None
    overlay_dir: str | None = None
    repr_slots: tuple[ReprSlot, ...] = ()  # where its rules stood in the config's repr

    # Its name in a sentence ("RPS Poker"; "": its ``name``), and how a game that does not
    # play one of its events refuses it (``registry.refusal``; {type}: the event's type).
    title = ""
    foreign = "'{type}' belongs to {title}, not this game"

    def refusal(self, event_type: str) -> str | None:
        """Its own words for refusing an event of another game's (RPS Poker's for a card
        error); None: the words of the game that declares the event (``registry.refusal``)."""
        return None

    def order_from_text(self, text: str, rehearsal: bool) -> DeckOrder | None:
        """A deck order of this game's own kind from its codes run together (a deck file's
        text); None: not one (an order of cards: ``registry.order_from_text`` reads those)."""
        return None

    def pad_now(self, hand: Hand) -> list[Fields]:
        """The pad's entries legal now in the hand in play or reopened (``pad_offer``s; the
        console state asks only then): by default every entry of ``pad``, within nothing."""
        return [pad_offer(entry.key) for entry in getattr(self, "pad", ())]

    def offered_legal(self, offers: list[Fields]) -> tuple[Legal, bool] | None:
        """The ``Hand.legal`` the seat to act's ``offers`` (the ``to_act`` entries of
        ``pad_now``) were made of, and whether the street was opened (a raise offered, not a
        bet), read back off them so the console state does not ask the hand twice; None: not
        known from them (the console state asks the hand). Poker's are (``PokerGame``)."""
        return None

    def table_fields(self, state: Any, table: Any) -> Fields:
        return {}

    def seat_fields(self, hand: Any, seat: int) -> Fields:
        return {}

    def hand_fields(self, hand: Any) -> Fields:
        return {}

    def row_fields(self, h: Any) -> Fields:
        return {}

    def compare_fields(self, state: Any, deal_no: int, seat: int) -> Fields:
        return {}

    def showdown(self, h: Any) -> Fields | None:
        """A settled hand's showdown package (None: none)."""
        return None

    def dispute(self, h: Any) -> Fields | None:
        """A disputed hand as its game words it (``reason``, ``declared``, ``computed`` and
        fields of its own) for the table's console and the TD's desk; None: poker's words
        (the declared winners against the cards')."""
        return None

    def result_hand(
        self, config: TournamentConfig, spec: HandSpec, event: Any
    ) -> tuple[Hand, list[Input]]:
        """A hand ended by an entered ``result`` (mahjong's; ``refusal`` refuses it here)."""
        raise AssertionError(f"game {getattr(self, 'name', '?')!r} has no results to enter")

    def game_input(self, config: TournamentConfig, hand: Hand, deal_no: int, event: Any) -> Input:
        """An input event of the game's own (RPS Poker's throws and reveal), applied to
        ``hand``: the input to keep (``refusal`` refuses such events here)."""
        raise AssertionError(f"game {getattr(self, 'name', '?')!r} has no {event.type!r} input")

    def bot_events(
        self,
        config: TournamentConfig,
        current: Any,
        rng: random.Random,
        corrections: bool,
        done: set[str],
    ) -> list[BotEvent] | None:
        """The events this game's bots enter for the hand in play ``current`` (None: hold'em's
        bots act); ``done``: the once-per-session corrections made ("void", "dispute")."""
        return None

    # ------------------------------------------------------------ configuration
    def check_config(self, c: Any, t: Any, data: Mapping[str, Any], early: bool) -> None:
        """This game's [tournament] rules: ``early`` before the blinds are checked, else after
        the betting (the order in which a file's first fault is reported)."""

    def betting_allowed(self, betting: str) -> bool:
        """A betting structure this game allows beyond pot-limit and no-limit."""
        return False

    def section_config(self, c: Any, data: Mapping[str, Any]) -> dict[str, Any]:
        """The configuration's fields this game reads from its own section (``section``):
        ``TournamentConfig`` keywords, its rules as ``game_rules`` (``{}``: none)."""
        return {}

    def tournament_shape(self) -> type:
        from hub.domain.config import shape

        return shape.Tournament

    def scoring_and_rules(self, c: Any, root: Any, deals: int, event: Any) -> Any:
        """(scoring, rules) when this game scores in its own way; None: the [scoring] table."""
        return None


class PieceDecks:
    """Deck orders that are permutations of a game's piece set (``pieces``: cards, tiles)."""

    name: str
    pieces: PieceSet | None

    def check_order(self, deal_no: int, order: DeckOrder) -> None:
        """Refuse (``ValueError``) a deck order that is not of this game's pieces."""
        assert self.pieces is not None
        if not self.pieces.holds(order.cards):
            raise ValueError(f"deal {deal_no}: not a deck order of game {self.name!r}")

    def orders_problem(self, orders: Mapping[int, DeckOrder], deals: int) -> str | None:
        """What is wrong with a deck file's orders for this game (None: nothing)."""
        other = next((o for o in orders.values() if o.described != DeckOrder.described), None)
        if other is not None:  # another game's kind of order (mahjong's walls)
            return f"holds {other.described}, not {DeckOrder.described}"
        wanted = self.pieces
        assert wanted is not None
        for deal_no in range(1, deals + 1):
            if not wanted.holds(orders[deal_no].cards):
                return (
                    f"deal {deal_no} is not an order of the {len(wanted.pieces)} pieces "
                    f"of game {self.name!r} (a deck file made for another game?)"
                )
        return None

    def order_from_text(self, text: str, rehearsal: bool) -> DeckOrder | None:
        """An order of its own piece set when the text opens with one of its pieces (a tile's
        ``Nbs``, never a card); None for a game of cards, the registry's default."""
        pieces = self.pieces
        if pieces is None or pieces is CARDS:
            return None
        head = "".join(text.split())[: len(pieces.pieces[0])]
        return deck_order_from_cards(text, rehearsal, pieces) if pieces.is_piece(head) else None

    def random_orders(self, deals: int) -> dict[int, DeckOrder]:
        assert self.pieces is not None
        return random_deck_orders(deals, pieces=self.pieces)

    def seeded_orders(self, seed: int | str, deals: int) -> dict[int, DeckOrder]:
        assert self.pieces is not None
        return seeded_deck_orders(seed, deals, self.pieces)
