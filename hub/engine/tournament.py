"""The tournament as a state machine over console events: tables, hands, corrections, disputes.

`TournamentState.apply(event, now)` either changes the state and says what changed, or raises
`Rejection` having changed nothing. Each table's hands are kept as the list of console inputs
that built them, so `undo` and `reopen` rebuild a hand by replaying its inputs (hands are short;
a replay is cheaper than any clever inverse and is obviously right). Scores follow every status
change through `Scoreboard.set_result`, which is incremental.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hub.domain.advance import fill
from hub.domain.config import Team, TournamentConfig
from hub.domain.dealing import STREET_CARDS, Dealt, card_position, redeal
from hub.domain.deck import DeckOrder
from hub.domain.errors import Rejection
from hub.domain.event import Seating
from hub.domain.eventscore import EventScoreboard
from hub.domain.games.holdem.hand import Hand
from hub.domain.games.holdem.spec import HandSpec
from hub.domain.games.registry import game_of
from hub.domain.games.rps.rules import RpsHand
from hub.domain.scoring import Scoreboard, ScoringLayout
from hub.domain.states import HandStatus, Street
from hub.engine.events import ACTION_TYPES, DEALER_ERRORS, OPERATOR_CONSOLE, ConsoleEvent

# One input of a hand: a betting action (seat, kind, amount), or a dealer error: (seat,
# "exposed", which card) or (0, "early", index of the street in STREET_CARDS).
# RPS Poker adds (seat, "throws", "RPS") and (dealer, "reveal", "RRP").
Input = tuple[int, str, int | str | None]
STREETS = tuple(name for name, _ in STREET_CARDS)
# A misdeal may be declared only before this many players have acted after the blinds.
MISDEAL_ACTIONS = 2


def actions_of(inputs: list[Input]) -> list[Input]:
    """The betting actions among a hand's inputs (what `Hand.replay` takes)."""
    return [i for i in inputs if i[1] in ACTION_TYPES]


# Hand statuses as shown on consoles, overlays and the comparison.
IN_PROGRESS = HandStatus.IN_PROGRESS
SHOWDOWN = HandStatus.SHOWDOWN
COMPLETE = HandStatus.COMPLETE
VOID = HandStatus.VOID
DISPUTED = HandStatus.DISPUTED
TERMINAL = frozenset({COMPLETE, VOID, DISPUTED})


@dataclass(slots=True)
class HandState:
    """One deal at one table: its inputs, the rebuilt engine and where it stands."""

    table: int
    deal: int
    spec: HandSpec
    hand: Hand
    inputs: list[Input] = field(default_factory=list)
    status: str = IN_PROGRESS
    winners: tuple[int, ...] | None = None  # declared (or confirmed) at showdown
    declared: tuple[int, ...] | None = None  # kept while disputed
    computed: tuple[int, ...] | None = None
    # How `hand` was settled at showdown: "cards" (settle(None)), "declared" (settle(winners)),
    # None when `settle` was not called on it (in play, disputed, a fold-out). A snapshot needs
    # it: the winners alone cannot tell a confirmation by the cards from one naming the seats.
    settled_by: str | None = None
    reopened: bool = False
    started_at: float = 0.0
    finished_at: float | None = None

    @property
    def counts(self) -> bool:
        """The hand counts (complete or void): ``result`` is not None, without building it."""
        return self.status == COMPLETE or self.status == VOID

    @property
    def result(self) -> dict[int, int] | None:
        """Chip-score per seat when the hand counts (complete or void), else None."""
        if self.status == VOID:
            return dict.fromkeys(range(1, self.spec.seats + 1), 0)
        if self.status == COMPLETE:
            return dict(self.hand.result or {})
        return None

    @property
    def actions_taken(self) -> int:
        """Voluntary actions so far (the blinds and dealer errors are not actions)."""
        return sum(1 for i in self.inputs if i[1] in ACTION_TYPES)


@dataclass(slots=True)
class TableState:
    table: int
    group: str
    order: tuple[int, ...]
    hands: dict[int, HandState] = field(default_factory=dict)
    current: HandState | None = None
    last_event_at: float | None = None
    last_seq: int = 0
    console: str | None = None

    def next_deal(self) -> int | None:
        for d in self.order:
            if d not in self.hands:
                return d
        return None

    @property
    def last_finished(self) -> int | None:
        """The deal of this table's most recently finished hand (None before the first)."""
        done = [h for h in self.hands.values() if h.finished_at is not None]
        if not done:
            return None
        return max(done, key=lambda h: (h.finished_at or 0.0, self.order.index(h.deal))).deal

    @property
    def completed(self) -> int:
        return sum(1 for h in self.hands.values() if h.status in (COMPLETE, VOID))


@dataclass(frozen=True, slots=True)
class Change:
    """What one applied event touched, so views rebuild only what may differ."""

    table: int
    deal: int | None
    scores: bool = False  # a counted result appeared, changed or left
    notable: tuple[dict[str, Any], ...] = ()
    filled: str | None = None  # this event fixed the teams of this stage's groups


class TournamentState:
    """Every table of the tournament, fed by validated console events."""

    def __init__(self, config: TournamentConfig, decks: Mapping[int, DeckOrder] | None) -> None:
        self.config = config
        self.game = game_of(config.game)
        self.decks = dict(decks) if decks else None
        for d, order in (self.decks or {}).items():
            self.game.check_order(d, order)
        self.seating = Seating(config)
        if config.phased:
            first = self.seating.layout_of(config.plan.sessions[0].id)
            assert first is not None  # the first stage's teams are in the file
            self.layout = first
        else:
            self.layout = ScoringLayout.from_config(config)
        self.board: Scoreboard | EventScoreboard = self.new_board()
        self.tables: dict[int, TableState] = {}
        for group in config.groups.values():
            for t in group.tables:
                self.tables[t] = TableState(t, group.id, tuple(config.deal_orders[t]))
        self._dealt: dict[int, Dealt] = {}
        self._specs: dict[int, HandSpec] = {}  # deal -> its spec without dealer errors
        self.corrections: list[dict[str, Any]] = []
        # Penalties from the tournament director, in order: {table, seat, chips, points,
        # reason, by, at}. The scoreboard holds their sums.
        self.penalties: list[dict[str, Any]] = []
        self.events_applied = 0

    # ----------------------------------------------------------------- queries
    def new_board(self, shown: Callable[[str], bool] | None = None) -> Scoreboard | EventScoreboard:
        """An empty scoreboard of this tournament (one per session when it has sessions).
        ``shown(group)``: may the board list the group's teams before they score (the public
        board: not those of a stage filled from deals not yet released)."""
        if not self.config.phased:
            return Scoreboard(self.layout)
        seating = self.seating

        def teams_of(group: str) -> tuple[str, ...] | None:
            return seating.teams_of(group) if shown is None or shown(group) else None

        return EventScoreboard(self.config.plan, seating.layout_of, teams_of)

    def seat_holder(self, table: int, seat: int, deal: int | None) -> tuple[Team, str] | None:
        """Team and player in a seat for a deal (the session's draw and lineups); None while
        the deal's stage has no teams yet."""
        if not self.config.phased:
            return self.config.seat_holder(table, seat)
        if deal is None:
            deal = self.config.deal_orders[table][0]
        return self.seating.holder(table, seat, deal)

    def table_deal(self, table: TableState) -> int:
        """The deal whose seating a table shows: its hand in play, else the last it started,
        else the first of its order."""
        if table.current is not None:
            return table.current.deal
        if table.hands:
            return next(reversed(table.hands))
        return table.order[0]

    def stage_open(self, deal_no: int) -> bool:
        """May a table start ``deal_no``: its stage's teams are known, or can be now."""
        if not self.config.phased:
            return True
        stage = self.config.plan.stage_of(deal_no)
        if self.seating.filled(stage.id):
            return True
        assert stage.advance is not None and isinstance(self.board, EventScoreboard)
        return self.board.stage_complete(stage.advance.source)

    def _fill_stage(self, deal_no: int) -> str | None:
        """Fix the teams of the deal's stage from the standings of the stage before, if not
        yet (``stage_not_open`` while that stage is incomplete); returns the stage filled."""
        if not self.config.phased:
            return None
        stage = self.config.plan.stage_of(deal_no)
        if self.seating.filled(stage.id):
            return None
        advance = stage.advance
        assert advance is not None and isinstance(self.board, EventScoreboard)
        if not self.board.stage_complete(advance.source):
            raise Rejection(
                "stage_not_open",
                f"deal {deal_no} belongs to stage {stage.id}, which opens once every deal of "
                f"stage {advance.source} is counted at every table",
            )
        standings: dict[str, list[Any]] = {}
        for row in self.board.stage_standings("like_for_like", advance.source):
            standings.setdefault(row.group, []).append(row)
        self.seating.set_fill(
            stage.id, fill(standings, advance.top_per_group, stage.groups, self.config.seats)
        )
        return stage.id

    def dealt(self, deal_no: int) -> Dealt | None:
        """Hole cards and board of a deal, when deck orders are loaded (RPS Poker deals no
        cards: its deck order only gives the dealer's throws)."""
        if self.decks is None or deal_no not in self.decks:
            return None
        if deal_no not in self._dealt:
            dealt = self.game.dealt(self.config, self.decks[deal_no], deal_no)
            if dealt is None:
                return None
            self._dealt[deal_no] = dealt
        return self._dealt[deal_no]

    def hand(self, table: int, deal_no: int) -> HandState | None:
        return self.tables[table].hands.get(deal_no)

    def started(self, deal_no: int) -> bool:
        """Has any table started this deal? Until one has, its cards exist only in the ingest."""
        return any(deal_no in t.hands for t in self.tables.values())

    def disputes(self) -> list[HandState]:
        return [h for t in self.tables.values() for h in t.hands.values() if h.status == DISPUTED]

    # ----------------------------------------------------------------- commands
    def apply(self, event: ConsoleEvent, now: float) -> Change:
        """Apply one schema-valid event; raises `Rejection` and changes nothing if refused."""
        table = self.tables.get(event.table)
        if table is None:
            raise Rejection("unknown_table", f"table {event.table} is not in this tournament")
        if event.seat is not None and not 1 <= event.seat <= self.config.seats:
            raise Rejection(
                "unknown_seat", f"seat {event.seat} does not exist (1..{self.config.seats})"
            )
        if event.deal is not None and not 1 <= event.deal <= self.config.deals:
            raise Rejection(
                "unknown_deal", f"deal {event.deal} is not in this session (1..{self.config.deals})"
            )
        if event.type in ACTION_TYPES:
            change = self._on_action(table, event, now)
        else:
            handler = getattr(self, f"_on_{event.type}", None)
            if handler is None:  # pragma: no cover - parse_event admits only known types
                raise Rejection("bad_schema", f"unknown event type {event.type!r}")
            change = handler(table, event, now)
        table.last_event_at = now
        table.last_seq = event.seq
        table.console = event.console
        self.events_applied += 1
        return change

    def _spec(self, deal_no: int, inputs: list[Input] | None = None) -> HandSpec:
        """The hand's spec; with ``inputs``, its cards as the dealer errors among them left
        them (`hub.domain.dealing.redeal`). Without dealer errors a deal's spec is the same at
        every table and every rebuild: it is made once (specs are frozen)."""
        if inputs and any(i[1] in DEALER_ERRORS for i in inputs):
            return self._make_spec(deal_no, inputs)
        spec = self._specs.get(deal_no)
        if spec is None:
            spec = self._specs[deal_no] = self._make_spec(deal_no, None)
        return spec

    def _make_spec(self, deal_no: int, inputs: list[Input] | None) -> HandSpec:
        """The game's spec (its betting, its cards as ``_cards`` deals them)."""
        return self.game.spec(self.config, deal_no, lambda: self._cards(deal_no, inputs))

    def _cards(self, deal_no: int, inputs: list[Input] | None) -> Dealt | None:
        """A deal's cards, as the dealer errors among ``inputs`` left them."""
        cfg = self.config
        cards = self.dealt(deal_no)
        errors = [i for i in inputs or () if i[1] in DEALER_ERRORS]
        if errors and cards is not None and self.decks is not None:
            exposed = next(((s, int(w or 0)) for s, k, w in errors if k == "exposed"), None)
            early = frozenset(STREETS[int(w or 0)] for _, k, w in errors if k == "early")
            try:
                cards = redeal(
                    self.decks[deal_no],
                    cfg.buttons[deal_no],
                    cfg.seats,
                    exposed=exposed,
                    early=early,
                )
            except ValueError as exc:
                raise Rejection("not_allowed", str(exc)) from exc
        return cards

    def replay_hand(self, deal_no: int, inputs: list[Input]) -> tuple[HandSpec, Hand]:
        """Rebuild a hand from its inputs: the spec its dealer errors give, then its actions."""
        spec = self._spec(deal_no, inputs)
        order = self._order(deal_no)
        return spec, self.game.replay(self.config, spec, inputs, actions_of(inputs), order)

    def _order(self, deal_no: int) -> DeckOrder | None:
        return self.decks.get(deal_no) if self.decks is not None else None

    def _new_hand(self, deal_no: int, spec: HandSpec) -> Hand:
        """A deal's hand before its first input: the game's own machine (hold'em by default)."""
        return self.game.new_hand(self.config, spec, self._order(deal_no))

    def _rebuild(self, state: HandState, inputs: list[Input]) -> None:
        spec, hand = self.replay_hand(state.deal, inputs)
        state.spec, state.hand, state.inputs = spec, hand, inputs

    def _on_start(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        assert event.deal is not None
        if table.current is not None:
            raise Rejection(
                "hand_in_progress",
                f"deal {table.current.deal} is still in progress at table {table.table}",
            )
        if event.deal in table.hands:
            raise Rejection(
                "wrong_deal", f"deal {event.deal} was already played at table {table.table}"
            )
        if event.deal not in table.order:
            raise Rejection(
                "wrong_deal", f"deal {event.deal} is not one of table {table.table}'s deals"
            )
        expected = table.next_deal()
        if event.deal != expected:
            raise Rejection(
                "wrong_deal", f"table {table.table} plays deal {expected} next, not {event.deal}"
            )
        filled = self._fill_stage(event.deal)
        spec = self._spec(event.deal)
        state = HandState(
            table.table, event.deal, spec, self._new_hand(event.deal, spec), started_at=now
        )
        table.hands[event.deal] = state
        table.current = state
        return Change(table.table, event.deal, filled=filled)

    def _current(self, table: TableState, event: ConsoleEvent) -> HandState:
        current = table.current
        if current is None:
            raise Rejection("hand_not_started", f"no hand is in progress at table {table.table}")
        if event.deal is not None and event.deal != current.deal:
            raise Rejection(
                "wrong_deal",
                f"table {table.table} is playing deal {current.deal}, not deal {event.deal}",
            )
        return current

    def _on_action(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        current = self._current(table, event)
        assert event.seat is not None
        record = current.hand.act(event.seat, event.type, event.amount)
        current.inputs.append((event.seat, event.type, event.amount))
        notable: tuple[dict[str, Any], ...] = ()
        if current.hand.committed.get(event.seat, 0) >= current.spec.cap and record.added > 0:
            notable = (
                {
                    "kind": "all_in",
                    "table": table.table,
                    "deal": current.deal,
                    "seat": event.seat,
                    "chips": current.spec.cap,
                },
            )
        return self._after_betting(table, current, now, notable)

    def _after_betting(
        self,
        table: TableState,
        current: HandState,
        now: float,
        notable: tuple[dict[str, Any], ...] = (),
    ) -> Change:
        street = current.hand.street
        if street == Street.COMPLETE and not current.reopened:
            return self._finish(table, current, COMPLETE, now, notable)
        # A reopened hand whose corrected betting ended in a fold-out waits for the official's
        # `confirm` (it stays in play, street "complete"), as a reopened showdown waits for `win`.
        current.status = SHOWDOWN if street == Street.SHOWDOWN else IN_PROGRESS
        return Change(table.table, current.deal, notable=notable)

    def _finish(
        self,
        table: TableState,
        current: HandState,
        status: str,
        now: float,
        notable: tuple[dict[str, Any], ...] = (),
    ) -> Change:
        current.status = status
        current.reopened = False
        current.finished_at = now
        if table.current is current:
            table.current = None
        self.board.set_result(table.table, current.deal, current.result)
        return Change(table.table, current.deal, scores=True, notable=notable)

    def _on_win(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        current = self._current(table, event)
        assert event.seats is not None
        if current.status != SHOWDOWN and current.hand.street == Street.COMPLETE:
            raise Rejection(
                "not_allowed",
                f"the corrected deal {current.deal} at table {table.table} ended in a fold-out: "
                "close it with confirm",
            )
        if current.status != SHOWDOWN:
            to_act = current.hand.to_act
            who = f": seat {to_act} is to act" if to_act is not None else ""
            raise Rejection("not_allowed", f"betting is not over at table {table.table}{who}")
        for s in event.seats:
            if not 1 <= s <= self.config.seats:
                raise Rejection("unknown_seat", f"seat {s} does not exist")
        declared = tuple(event.seats)
        trial = current.hand.copy()
        trial.settle(declared)  # raises bad_winner for an impossible declaration
        computed_set = current.hand.computed_winners()
        if computed_set is None:
            current.hand = trial
            current.winners = declared
            current.settled_by = "declared"
            return self._finish(table, current, COMPLETE, now)
        computed = tuple(sorted(computed_set))
        if set(declared) == computed_set:
            current.hand.settle(None)
            current.winners = computed
            current.settled_by = "cards"
            return self._finish(table, current, COMPLETE, now)
        current.declared = declared
        current.computed = computed
        return self._finish(table, current, DISPUTED, now)

    def _on_result(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        """A mahjong hand's result (docs/mahjong.md): it completes the hand in play, or
        replaces the result of a reopened hand."""
        self._plays(event)
        current = self._current(table, event)
        # raises: fan below the minimum, the winner's own discard
        current.hand, current.inputs = self.game.result_hand(self.config, current.spec, event)
        if current.reopened:
            self._log(table, current, "result", now)
        return self._finish(table, current, COMPLETE, now)

    def _on_confirm(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        assert event.deal is not None
        target = table.hands.get(event.deal)
        if target is None:
            raise Rejection(
                "wrong_deal", f"deal {event.deal} has not been played at table {table.table}"
            )
        if target.status == DISPUTED:
            trial = target.hand.copy()
            winners = event.seats
            trial.settle(winners)
            target.hand = trial
            target.winners = tuple(winners) if winners else target.computed
            target.settled_by = "declared" if winners else "cards"
            target.declared = None
            self._log(table, target, "confirm", now)
            return self._finish(table, target, COMPLETE, now)
        if target.reopened and target is table.current:
            if target.hand.street == Street.COMPLETE:
                self._log(table, target, "confirm", now)
                return self._finish(table, target, COMPLETE, now)
            raise Rejection(
                "not_allowed",
                f"deal {event.deal} at table {table.table} is not finished: "
                + ("declare the winners" if target.status == SHOWDOWN else "betting is open"),
            )
        raise Rejection(
            "not_disputed",
            f"deal {event.deal} at table {table.table} is neither disputed nor reopened",
        )

    def _on_undo(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        if event.deal is not None:
            ended = event.deal if event.deal in table.hands else None
        else:
            ended = table.last_finished
        if table.current is None and ended is not None:
            # undo only reaches into the hand in progress; a finished hand is reopened first.
            raise Rejection(
                "hand_not_started",
                f"no hand is in progress at table {table.table}: deal {ended} has ended; "
                f"send 'reopen' for deal {ended} first, then 'undo'",
            )
        current = self._current(table, event)
        if not current.inputs:
            # Undoing the start itself: the deal goes back to not played.
            del table.hands[current.deal]
            table.current = None
            self._log(table, current, "undo", now)
            if current.reopened:  # e.g. start, void, reopen, undo: no inputs to take back
                self.board.set_result(table.table, current.deal, None)
            return Change(table.table, current.deal)
        self._rebuild(current, current.inputs[:-1])
        current.winners = None
        current.settled_by = None
        self._log(table, current, "undo", now)
        return self._after_betting(table, current, now)

    def _on_void(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        """A misdeal (the console's, before two players acted after the blinds), or the
        operator's void of any hand of the table, with the official and a reason."""
        operator = event.console == OPERATOR_CONSOLE
        if operator and (not event.note or not event.by):
            raise Rejection("bad_request", "an operator void needs 'by' and a reason")
        if event.deal is None or (table.current and table.current.deal == event.deal):
            target = self._current(table, event)
        else:
            found = table.hands.get(event.deal)
            if found is None:
                raise Rejection(
                    "wrong_deal",
                    f"deal {event.deal} has not been played at table {table.table}",
                )
            target = found
        if target.status == VOID:
            raise Rejection("not_allowed", f"deal {target.deal} is already void")
        if not operator:
            why = self._misdeal_too_late(target, table.current)
            if why:
                raise Rejection(
                    "not_allowed",
                    f"deal {target.deal} at table {table.table} {why} (only the operator "
                    "can void it, with a reason)",
                )
        self._log(table, target, "void", now, event)
        return self._finish(
            table,
            target,
            VOID,
            now,
            ({"kind": "void", "table": table.table, "deal": target.deal, "seat": None},),
        )

    @staticmethod
    def _misdeal_too_late(target: HandState, current: HandState | None) -> str:
        """Why a console may no longer void ``target`` as a misdeal ("" when it may). Each
        reason says what is true of this hand: a hand that one fold ended heads-up is
        finished, not one "two players have acted" in."""
        if target is not current:
            return "is finished: a console voids only the hand in progress"
        if target.reopened:
            return "is a reopened hand: a console voids only a hand in its first play"
        if target.actions_taken >= MISDEAL_ACTIONS:
            return (
                f"has {target.actions_taken} actions after the blinds: too late for a "
                "misdeal once two players have acted, the hand is played out"
            )
        return ""

    def _on_reopen(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        assert event.deal is not None
        if table.current is not None:
            raise Rejection(
                "hand_in_progress",
                f"deal {table.current.deal} is in progress at table {table.table}; "
                "finish or void it first",
            )
        target = table.hands.get(event.deal)
        if target is None or target.status not in TERMINAL:
            raise Rejection(
                "wrong_deal", f"deal {event.deal} is not a finished hand of table {table.table}"
            )
        self._rebuild(target, target.inputs)
        target.reopened = True
        target.winners = target.declared = target.computed = target.settled_by = None
        target.finished_at = None
        target.status = SHOWDOWN if target.hand.street == Street.SHOWDOWN else IN_PROGRESS
        table.current = target
        self.board.set_result(table.table, target.deal, None)
        self._log(table, target, "reopen", now)
        return Change(table.table, target.deal, scores=True)

    def _log(
        self,
        table: TableState,
        hand: HandState,
        kind: str,
        now: float,
        event: ConsoleEvent | None = None,
    ) -> None:
        entry: dict[str, Any] = {"table": table.table, "deal": hand.deal, "type": kind, "at": now}
        if event is not None and event.console == OPERATOR_CONSOLE:
            entry["by"], entry["reason"] = event.by, event.note
        elif event is not None and kind in DEALER_ERRORS:
            entry["seat"] = event.seat
        self.corrections.append(entry)
        del self.corrections[:-200]

    # ----------------------------------------------------------------- dealer errors
    def _dealer_error(self, table: TableState, event: ConsoleEvent, entry: Input) -> HandState:
        current = self._current(table, event)
        if current.status != IN_PROGRESS or current.hand.street == Street.COMPLETE:
            raise Rejection("hand_over", f"betting is over at table {table.table}")
        trial = [*current.inputs, entry]
        spec, hand = self.replay_hand(current.deal, trial)
        current.spec, current.hand, current.inputs = spec, hand, trial
        return current

    def _on_exposed(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        """A hole card exposed by the dealer: replaced by the top card of the stub."""
        assert event.seat is not None and event.card is not None
        self._plays(event)
        current = self._current(table, event)
        if current.actions_taken:
            raise Rejection(
                "not_allowed",
                "an exposed hole card is replaced before the first action: undo back to it",
            )
        if any(k == "exposed" for _, k, _ in current.inputs):
            raise Rejection(
                "not_allowed", "more than one hole card exposed is a misdeal: void the hand"
            )
        position = card_position(current.spec.button, self.config.seats, event.seat, event.card)
        if position < 2:
            raise Rejection(
                "not_allowed",
                f"card {position + 1} of the deal exposed is a misdeal: void the hand",
            )
        state = self._dealer_error(table, event, (event.seat, "exposed", event.card))
        self._log(table, state, "exposed", now, event)
        return Change(table.table, state.deal)

    def _on_early(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        """The next board card(s) turned before the betting round closed."""
        self._plays(event)
        current = self._current(table, event)
        street = current.hand.street
        index = {"preflop": 0, "flop": 1, "turn": 2}.get(street)
        if index is None:
            raise Rejection("not_allowed", f"no board card comes after the {street}")
        if (0, "early", index) in current.inputs:
            raise Rejection("not_allowed", f"the {STREETS[index]} was already dealt early")
        state = self._dealer_error(table, event, (0, "early", index))
        self._log(table, state, "early", now, event)
        return Change(table.table, state.deal)

    # ----------------------------------------------------------------- RPS Poker
    def _plays(self, event: ConsoleEvent) -> None:
        """Refuse an event of another game's (a card error in RPS Poker, throws in hold'em)."""
        refusal = self.game.refusal(event.type)
        if refusal is not None:
            raise Rejection("not_allowed", refusal)

    def _on_throws(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        """A player's throws for the round (RPS Poker), secret until the showdown."""
        assert event.seat is not None and event.throws is not None
        return self._throw_input(table, event, now, (event.seat, "throws", event.throws))

    def _on_reveal(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        """The dealer turns over the round's throws (RPS Poker, dealer = "chosen")."""
        assert event.throws is not None
        # With no hand in progress there is no dealer to name: _throw_input refuses it.
        dealer = self.config.buttons[table.current.deal] if table.current else 0
        if dealer and event.seat is not None and event.seat != dealer:
            raise Rejection("not_allowed", f"seat {event.seat} is not the dealer (seat {dealer})")
        return self._throw_input(table, event, now, (dealer, "reveal", event.throws))

    def _throw_input(
        self, table: TableState, event: ConsoleEvent, now: float, entry: Input
    ) -> Change:
        self._plays(event)
        current = self._current(table, event)
        hand = current.hand
        assert isinstance(hand, RpsHand)
        seat, kind, text = entry
        value = hand.throw(seat, text) if kind == "throws" else hand.reveal(text)
        current.inputs.append((seat, kind, value))
        return self._after_betting(table, current, now)

    # ----------------------------------------------------------------- penalties
    def _on_penalty(self, table: TableState, event: ConsoleEvent, now: float) -> Change:
        """A tournament director's penalty on the player in (table, seat): chips off their
        chip-score total, points off their IFP points (and so their team's)."""
        assert event.seat is not None
        if event.console != OPERATOR_CONSOLE:
            raise Rejection("not_allowed", "penalties come from the operator desk")
        chips, points = event.amount or 0, event.points or 0
        if chips <= 0 and points <= 0:
            raise Rejection("bad_amount", "a penalty takes off chips or points (give one > 0)")
        entry = {
            "table": table.table,
            "seat": event.seat,
            "chips": chips,
            "points": points,
            "reason": event.note,
            "by": event.by,
            "at": now,
        }
        self.penalties.append(entry)
        self.board.add_penalty(table.table, event.seat, chips, points)
        return Change(table.table, None, scores=True)
