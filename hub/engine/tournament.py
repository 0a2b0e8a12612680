"""The tournament as a state machine over console events: tables, hands, corrections, disputes.

`TournamentState.apply(event, now)` either changes the state and returns the typed engine
events it caused (`hub.engine.changes`), or raises `Rejection` having changed nothing. Each
table's hands are kept as the list of console inputs that built them (``hub.engine.hands``),
so `undo` and `reopen` rebuild a hand by replaying its inputs (hands are short; a replay is
cheaper than any clever inverse and is obviously right). Scores follow every status change
through `Scoreboard.set_result`, which is incremental. The corrections (undo, void, reopen,
confirm, dealer errors) are ``hub.engine.corrections``'.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from hub.domain.advance import fill
from hub.domain.config import Team, TournamentConfig
from hub.domain.console_event import MAX_NAME, MAX_NOTE, Apply
from hub.domain.dealing import redeal
from hub.domain.deck import DeckOrder
from hub.domain.errors import Rejection
from hub.domain.event import Seating
from hub.domain.eventscore import EventScoreboard
from hub.domain.games.base import DealtPieces, Hand
from hub.domain.games.registry import EVENT_HANDLERS, game_of, on_events
from hub.domain.games.registry import refusal as registry_refusal
from hub.domain.games.spec import HandSpec
from hub.domain.scoring import Scoreboard, ScoringLayout
from hub.domain.states import Street
from hub.engine import corrections
from hub.engine.changes import (
    ActionApplied,
    EngineEvent,
    HandRewound,
    HandSettled,
    HandStarted,
    Notable,
    PenaltyApplied,
    StageFilled,
)
from hub.engine.events import DEALER_ERRORS, OPERATOR_CONSOLE, ConsoleEvent
from hub.engine.hands import (
    COMPLETE,
    DISPUTED,
    IN_PROGRESS,
    SHOWDOWN,
    STREETS,
    TERMINAL,
    VOID,
    HandState,
    Input,
    TableState,
    actions_of,
)
from hub.engine.roster import Roster

# The hand types and statuses are ``hub.engine.hands``'; named here too, where the state's
# readers (views, snapshots, replay) have always found them.
__all__ = [
    "COMPLETE",
    "DISPUTED",
    "IN_PROGRESS",
    "SHOWDOWN",
    "TERMINAL",
    "VOID",
    "HandState",
    "TableState",
    "TournamentState",
]

Handler = Callable[["TournamentState", TableState, ConsoleEvent, float], list[EngineEvent]]


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
        self._dealt: dict[int, DealtPieces] = {}
        self._specs: dict[int, HandSpec] = {}  # deal -> its spec without dealer errors
        self.corrections: list[dict[str, Any]] = []
        # Penalties from the tournament director, in order: {table, seat, chips, points,
        # reason, by, at}. The scoreboard holds their sums.
        self.penalties: list[dict[str, Any]] = []
        self.roster = Roster()  # the operator's corrections of names and colours
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
            held: tuple[Team, str] | None = self.config.seat_holder(table, seat)
        else:
            first = self.config.deal_orders[table][0]
            held = self.seating.holder(table, seat, first if deal is None else deal)
        if held is None:
            return None
        return held[0], self.roster.player(held[0].id, held[1])

    def fix_roster(self, record: Mapping[str, Any]) -> list[EngineEvent]:
        """Apply the operator's roster record (`Roster.check`): logged with the corrections."""
        event, entry = self.roster.apply(record)
        self.corrections.append(entry)
        del self.corrections[:-200]
        return [event]

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

    def _fill_stage(self, deal_no: int) -> StageFilled | None:
        """Fix the teams of the deal's stage from the standings of the stage before, if not
        yet (``stage_not_open`` while that stage is incomplete); returns the stage filled,
        with its tables and deals (what shows its teams)."""
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
        tables = tuple(t for g in stage.groups for t in self.config.groups[g].tables)
        return StageFilled(stage.id, tables, self.config.plan.deals_of_stage(stage.id))

    def dealt(self, deal_no: int) -> DealtPieces | None:
        """A deal's pieces (hold'em's hole cards and board, mahjong's hands), when deck orders
        are loaded (RPS Poker deals no cards: its deck order only gives the dealer's throws)."""
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
    def check_fresh(self, event: ConsoleEvent) -> None:
        """Refuse (`stale`) an entry made on an earlier state of its table than the one now:
        its `after` is the table's `moves` the console showed when it was tapped. Checked live
        only (`Engine.submit`): a journal replay applies what was accepted."""
        table = self.tables.get(event.table)
        if event.after is None or table is None or event.after == table.moves:
            return
        raise Rejection(
            "stale",
            f"this entry was made on an earlier screen of table {event.table} (move "
            f"{event.after}; the table is at move {table.moves}): another entry came first, "
            "so it was NOT entered: check the screen and enter it again",
        )

    def apply(self, event: ConsoleEvent, now: float) -> list[EngineEvent]:
        """Apply one schema-valid event: the engine events it caused, in order; raises
        `Rejection` and changes nothing if refused."""
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
        handler = HANDLERS.get(event.type)
        if handler is None:  # pragma: no cover - parse_event admits only known types
            raise Rejection("bad_schema", f"unknown event type {event.type!r}")
        if event.type not in self.game.handlers:  # another game's (a bet at a mahjong table)
            self.plays(event)
        events = handler(self, table, event, now)
        table.moves += 1
        if event.console != OPERATOR_CONSOLE:  # a ruling is not the table's console talking
            table.last_event_at = now
            table.last_seq = event.seq
            table.console = event.console
        self.events_applied += 1
        return events

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

    def _cards(self, deal_no: int, inputs: list[Input] | None) -> DealtPieces | None:
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

    def rebuild(self, state: HandState, inputs: list[Input]) -> None:
        spec, hand = self.replay_hand(state.deal, inputs)
        state.spec, state.hand, state.inputs = spec, hand, inputs

    def _on_start(self, table: TableState, event: ConsoleEvent, now: float) -> list[EngineEvent]:
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
        started: list[EngineEvent] = [HandStarted(table.table, event.deal)]
        return started if filled is None else [*started, filled]

    def current_hand(self, table: TableState, event: ConsoleEvent) -> HandState:
        current = table.current
        if current is None:
            raise Rejection("hand_not_started", f"no hand is in progress at table {table.table}")
        if event.deal is not None and event.deal != current.deal:
            raise Rejection(
                "wrong_deal",
                f"table {table.table} is playing deal {current.deal}, not deal {event.deal}",
            )
        return current

    def _on_action(self, table: TableState, event: ConsoleEvent, now: float) -> list[EngineEvent]:
        current = self.current_hand(table, event)
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
        index = len(current.hand.actions) - 1
        after = self.after_betting(table, current, now, notable)
        return [ActionApplied(table.table, current.deal, index), *after]

    def after_betting(
        self,
        table: TableState,
        current: HandState,
        now: float,
        notable: tuple[dict[str, Any], ...] = (),
    ) -> list[EngineEvent]:
        street = current.hand.street
        if street == Street.COMPLETE and not current.reopened:
            return self.finish(table, current, COMPLETE, now, notable)
        # A reopened hand whose corrected betting ended in a fold-out waits for the official's
        # `confirm` (it stays in play, street "complete"), as a reopened showdown waits for `win`.
        current.status = SHOWDOWN if street == Street.SHOWDOWN else IN_PROGRESS
        return [Notable(item) for item in notable]

    def finish(
        self,
        table: TableState,
        current: HandState,
        status: str,
        now: float,
        notable: tuple[dict[str, Any], ...] = (),
    ) -> list[EngineEvent]:
        current.status = status
        current.reopened = False
        current.finished_at = now
        if table.current is current:
            table.current = None
        self.board.set_result(table.table, current.deal, current.result)
        settled = HandSettled(table.table, current.deal, current.status)
        return [*(Notable(item) for item in notable), settled]

    def _on_win(self, table: TableState, event: ConsoleEvent, now: float) -> list[EngineEvent]:
        current = self.current_hand(table, event)
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
            return self.finish(table, current, COMPLETE, now)
        computed = tuple(sorted(computed_set))
        if set(declared) == computed_set:
            current.hand.settle(None)
            current.winners = computed
            current.settled_by = "cards"
            return self.finish(table, current, COMPLETE, now)
        current.declared = declared
        current.computed = computed
        return self.finish(table, current, DISPUTED, now)

    def _on_result(self, table: TableState, event: ConsoleEvent, now: float) -> list[EngineEvent]:
        """A mahjong hand's result (docs/mahjong.md): it completes the hand in play, or
        replaces the result of a reopened hand."""
        current = self.current_hand(table, event)
        if event.deal is None:  # the game reads the deal (mahjong: its prevalent wind)
            event = msgspec.structs.replace(event, deal=current.deal)
        # raises: fan below the minimum, the winner's own discard, an impossible hand...
        current.hand, current.inputs = self.game.result_hand(self.config, current.spec, event)
        if current.reopened:
            corrections.log_correction(self, table, current, "result", now, event)
        # A result the game holds for an official (mahjong: the typed fan is not the tiles')
        # waits at showdown: disputed, out of the scores until `confirm`, as poker's winners.
        if current.hand.street == Street.SHOWDOWN:
            current.declared = current.computed = None
            return self.finish(table, current, DISPUTED, now)
        return self.finish(table, current, COMPLETE, now)

    # ----------------------------------------------------------------- per-game input
    def plays(self, event: ConsoleEvent) -> None:
        """Refuse an event of another game's (a card error in RPS Poker, throws in hold'em, a
        bet in mahjong): `apply` asks before any handler, whatever the hand's state."""
        refusal = registry_refusal(self.game, event.type)
        if refusal is not None:
            raise Rejection("not_allowed", refusal)

    def _on_game_input(
        self, table: TableState, event: ConsoleEvent, now: float
    ) -> list[EngineEvent]:
        """An input of the game's own (RPS Poker's throws and reveal): the game checks it and
        makes it one of the hand's inputs (`Game.game_input`)."""
        current = self.current_hand(table, event)
        current.inputs.append(self.game.game_input(self.config, current.hand, current.deal, event))
        # (the hand moved without a counted result: its rows are rebuilt)
        return self.after_betting(table, current, now) or [HandRewound(table.table, current.deal)]

    # ----------------------------------------------------------------- penalties
    def _on_penalty(self, table: TableState, event: ConsoleEvent, now: float) -> list[EngineEvent]:
        """A tournament director's penalty on the player in (table, seat): chips off their
        chip-score total, points off their IFP points (and so their team's)."""
        assert event.seat is not None
        if event.console != OPERATOR_CONSOLE:
            raise Rejection("not_allowed", "penalties come from the operator desk")
        chips, points = event.amount or 0, event.points or 0
        if chips <= 0 and points <= 0:
            raise Rejection("bad_amount", "a penalty takes off chips or points (give one > 0)")
        board = self.board
        if isinstance(board, EventScoreboard) and board.session_playing(table.table) is None:
            # (it raised ValueError after the state had taken it: applied, never journaled)
            raise Rejection(
                "stage_not_open",
                f"table {table.table} plays a stage that has not started: a penalty counts in "
                "the session its table plays",
            )
        entry: dict[str, Any] = {
            "id": len(self.penalties) + 1,
            "table": table.table,
            "seat": event.seat,
            "chips": chips,
            "points": points,
            "reason": event.note,
            "by": event.by,
            "at": now,
        }
        if isinstance(board, EventScoreboard):  # the session it counts in (a withdrawal's too)
            entry["session"] = board.session_id_playing(table.table)
        self.penalties.append(entry)
        self.board.add_penalty(table.table, event.seat, chips, points)
        return [PenaltyApplied(table.table, event.seat, chips, points)]

    def check_withdraw(self, command: Mapping[str, Any], now: float) -> dict[str, Any]:
        """The journal record of the operator's withdrawal of a penalty (its number, ``id``
        in the desk's list), checked: `Rejection` for an unknown or withdrawn penalty, or
        without the official (``by``) and a ``reason``."""
        number = command.get("penalty")
        if isinstance(number, bool) or not isinstance(number, int):
            raise Rejection("bad_request", "withdraw needs 'penalty': the penalty's number")
        by, reason = command.get("by"), command.get("reason")
        if not (isinstance(by, str) and by.strip()) or not (
            isinstance(reason, str) and reason.strip()
        ):
            raise Rejection(
                "bad_request", "'withdraw' needs 'by' (the official who rules) and a 'reason'"
            )
        if len(by) > MAX_NAME or len(reason) > MAX_NOTE:
            raise Rejection(
                "bad_request", f"'by' is at most {MAX_NAME} characters, 'reason' {MAX_NOTE}"
            )
        if not 1 <= number <= len(self.penalties):
            raise Rejection("unknown_penalty", f"there is no penalty number {number}")
        if "withdrawn" in self.penalties[number - 1]:
            raise Rejection("not_allowed", f"penalty {number} is already withdrawn")
        return {
            "kind": "control",
            "op": "withdraw",
            "penalty": number,
            "by": by,
            "reason": reason,
            "at": now,
        }

    def withdraw_penalty(self, record: Mapping[str, Any]) -> list[EngineEvent]:
        """Apply a withdrawal (checked, or from the journal): the penalty stays listed, marked
        withdrawn (who, why, when); the board takes it back off the session it counted in; the
        corrections log says so. A journal's withdrawal of a penalty it does not hold moves
        nothing."""
        number = record.get("penalty")
        if not isinstance(number, int) or not 1 <= number <= len(self.penalties):
            return []
        entry = self.penalties[number - 1]
        if "withdrawn" in entry:
            return []
        entry["withdrawn"] = {"by": record.get("by"), "reason": record.get("reason")} | {
            "at": record.get("at")
        }
        table, seat = int(entry["table"]), int(entry["seat"])
        chips, points = int(entry["chips"]), int(entry["points"])
        self.board_of_penalty(entry).add_penalty(table, seat, -chips, -points)
        self.corrections.append(
            {"table": table, "seat": seat, "type": "withdraw", "penalty": number}
            | {"by": record.get("by"), "reason": record.get("reason"), "at": record.get("at")}
        )
        del self.corrections[:-200]
        return [PenaltyApplied(table, seat, -chips, -points)]

    def board_of_penalty(self, entry: Mapping[str, Any]) -> Scoreboard | EventScoreboard:
        """The board a penalty counts in: its session's of an event with sessions."""
        board = self.board
        if isinstance(board, EventScoreboard):
            session = board.boards.get(str(entry.get("session")))
            if session is not None:
                return session
        return board


_APPLY: dict[Apply, Handler] = {
    "action": TournamentState._on_action,
    "start": TournamentState._on_start,
    "win": TournamentState._on_win,
    "result": TournamentState._on_result,
    "game_input": TournamentState._on_game_input,
    "penalty": TournamentState._on_penalty,
    "confirm": corrections.on_confirm,
    "undo": corrections.on_undo,
    "void": corrections.on_void,
    "reopen": corrections.on_reopen,
    "exposed": corrections.on_exposed,
    "early": corrections.on_early,
}
"""The engine's handler of each way a game applies a console event (``Game.handlers``)."""
HANDLERS: dict[str, Handler] = {}
"""The handler of each console event type (every game's, from the registry)."""


def _build_handlers() -> None:
    HANDLERS.clear()
    HANDLERS.update((kind, _APPLY[how]) for kind, how in EVENT_HANDLERS.items())


on_events(_build_handlers)
