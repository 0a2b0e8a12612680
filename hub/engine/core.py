"""`Engine`: the one object the I/O layer talks to. Pure: time comes in as an argument.

`submit` takes one decoded console event and answers an `Outcome`: the acknowledgement to send,
the record to journal (accepted events only), and what to persist of a refusal. Every change of
state is announced as a typed event (`hub.engine.changes`) that moves the topic projections;
`changes()` hands the feed what moved since it last asked, as JSON Patch deltas. `restore`
replays a journal record with exactly the effect the original `submit` had, which is what makes
"rebuild from the journal" give the live state back; `snapshot`/`from_snapshot` make that
rebuild start from a recent state instead of the first record.

The ingest uses nothing else: not the sequencer, not the state, not the projections.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from hub.domain import equity
from hub.domain.clock import Clock
from hub.domain.config import TournamentConfig
from hub.domain.deck import DeckOrder
from hub.domain.errors import Rejection
from hub.domain.numbers import refuse_bad_numbers
from hub.engine import snapshot as snapshots
from hub.engine import views
from hub.engine.changes import (
    ActionApplied,
    ClockChanged,
    DealReleased,
    EngineEvent,
    HandRewound,
    HandSettled,
    HandStarted,
    LinkChanged,
    OnAirChanged,
    PenaltyApplied,
    Rejected,
    TickerItem,
)
from hub.engine.events import (
    ACTION_TYPES,
    MAX_INT,
    OPERATOR_CONSOLE,
    ConsoleEvent,
    parse_event,
)
from hub.engine.families import FEEDS, Payloads
from hub.engine.projections import Projections, TopicChange
from hub.engine.refusals import REFUSED, refusal_answer, refused_record
from hub.engine.sequencer import Sequencer
from hub.engine.ticker import Ticker
from hub.engine.tournament import Change, TournamentState
from hub.topicnames import LIVE, PUBLIC, TopicKey, TopicSpace, topic_name

__all__ = [
    "ONAIR_SLOTS",
    "OPERATOR_CONSOLE",
    "Engine",
    "Outcome",
    "TopicChange",
    "TopicKey",
    "default_onair",
]

SNAPSHOT_VERSION = 1
ONAIR_SLOTS = ("leaderboard", "seat", "table", "compare", "ticker")
# Operator commands that are console events of the reserved console "operator": command field
# -> event field. `void` and `penalty` need the official (`by`) and a `reason`.
OPERATOR_EVENTS: dict[str, dict[str, str]] = {
    "confirm": {"deal": "deal", "seats": "seats"},
    "void": {"deal": "deal", "reason": "note", "by": "by"},
    "penalty": {
        "seat": "seat",
        "chips": "amount",
        "points": "points",
        "reason": "note",
        "by": "by",
    },
}


@dataclass(slots=True)
class Outcome:
    ok: bool
    ack: dict[str, Any]
    code: str | None = None
    message: str | None = None
    duplicate: bool = False
    record: dict[str, Any] | None = None  # what to journal; None: nothing
    changed: set[TopicKey] = field(default_factory=set)
    console: str | None = None  # where the ack goes; None: the channel's error channel
    seq_advanced: bool = False  # a refusal used up the console's seq: persist it
    last_seq: int = 0  # the console's high-water mark after this event (to persist)
    refusal: dict[str, Any] | None = None  # a refusal as the operator desk lists it


def default_onair() -> dict[str, Any]:
    return {
        "slots": {
            "leaderboard": {"visible": True, "view": "like_for_like"},
            "seat": {"visible": False, "seat": 1},
            "table": {"visible": False, "table": 1},
            "compare": {"visible": False, "deal": 1, "seat": 1, "tables": []},
            "ticker": {"visible": True},
        }
    }


class Engine:
    def __init__(
        self,
        config: TournamentConfig,
        decks: Mapping[int, DeckOrder] | None = None,
        *,
        release_delay: float | None = None,
    ) -> None:
        self.config = config
        self.state = TournamentState(config, decks)
        self.topics = TopicSpace.of(config)
        self.sequencer = Sequencer()
        self.release_delay = config.release_delay if release_delay is None else release_delay
        self.public_board = self.state.new_board(self._public_teams)
        self._completed_at: dict[int, float] = {}  # deal -> when its last table completed it
        self._released: set[tuple[str, int]] = set()
        self._released_deals: set[int] = set()  # the deals of _released (asked per event)
        self._public_pending: list[Mapping[str, Any]] = []  # penalties the public board awaits
        self.links: dict[str, bool] = {}  # console -> its last ack reached a listener
        self.restore_skipped = 0
        self.onair: dict[str, Any] = default_onair()
        self.rejections: deque[dict[str, Any]] = deque(maxlen=100)
        self.reject_counts: dict[str, int] = {}
        self.ticker = Ticker()
        self.payloads = Payloads(self, FEEDS)  # each family's builder reads the engine
        self.projections = Projections(self.state, self.payloads)
        self._now = 0.0
        consoles = getattr(config, "consoles", None)
        self._consoles: dict[str, int] | None = dict(consoles) if consoles else None
        # Without an allow-list a console is bound to the table it first wrote (accepted).
        self._bound: dict[str, int] = {}
        spec = getattr(config, "clock", None)
        self.clock: Clock | None = Clock(spec) if spec is not None else None
        self._clock_at = 0.0  # when the clock last changed (what its topic is read at)
        # (status, level) last announced: a clock nobody started is announced by nothing
        self._clock_seen: tuple[str, int] | None = ("not_started", 0) if spec else None

    # ------------------------------------------------------------------ intake
    def submit(self, raw: Any, now: float, *, channel_table: int | None = None) -> Outcome:
        """Validate and apply one console event. Never raises for bad input.

        ``channel_table``: the table whose channel carried the event. Only the console of that
        table speaks there: an event naming any other console is refused on the channel's
        error channel without touching that console's seqs or answers (a console cannot stall,
        or read the answers of, another table)."""
        self._now = now
        console, seq = _address(raw)
        table = _table(raw)
        if channel_table is not None and channel_table not in self.state.tables:
            return self._no_such_table(console, seq, channel_table)
        if console is not None and self._consoles is not None and console not in self._consoles:
            # Not one of ours: refused whatever its seq says (and no seq of it is tracked).
            listed = Rejection("unknown_console", f"console {console!r} is not in [consoles]")
            return self._reject(console, seq, listed, table, advance=False)
        if channel_table is not None and console is not None and console != OPERATOR_CONSOLE:
            if self._consoles is not None:
                bound = self._consoles.get(console)
            else:
                bound = self._bound.get(console, table)
            if bound is not None and bound != channel_table:
                foreign = Rejection(
                    "wrong_channel",
                    f"console {console!r} does not write table {channel_table}: "
                    f"publish on its own table's channel",
                )
                out = self._reject(None, seq, foreign, channel_table, advance=False)
                out.ack["console"] = console
                return out
        if console is not None and seq is not None and not 1 <= seq < MAX_INT:
            bad = Rejection("bad_schema", f"field 'seq' must be from 1 to 2^53 - 1, got {seq}")
            return self._reject(console, seq, bad, table, advance=False)
        sequenced = console is not None and seq is not None and console != OPERATOR_CONSOLE
        if sequenced:
            assert console is not None and seq is not None
            verdict = self.sequencer.check(console, seq)
            if verdict == "duplicate":
                previous = self.sequencer.previous_ack(console, seq)
                again = dict(previous) if previous else {"seq": seq, "ok": True}
                again["duplicate"] = True
                return Outcome(ok=bool(again.get("ok")), ack=again, duplicate=True, console=console)
            if verdict == "gap":
                expected = self.sequencer.expected(console)
                gap = Rejection("seq_gap", f"expected seq {expected}, got {seq}: resend")
                out = self._reject(console, seq, gap, table, advance=False, log=False)
                out.ack["expected"] = expected
                return out
        try:
            event = parse_event(raw)
            self._check_envelope(event, channel_table)
        except Rejection as exc:
            # The console moved on past a refused event, so its seq is used up, unless the
            # console itself is not one of ours.
            advance = sequenced and exc.code != "unknown_console"
            return self._reject(console, seq, exc, table, advance=advance, raw=raw)
        try:
            if event.type == "start" and self._clock_forbids(now):
                raise Rejection(
                    "time_up",
                    "the session's time is up: no new deal starts (the operator may add time "
                    "to the clock)",
                )
            change = self.state.apply(event, now)
        except Rejection as exc:
            return self._reject(console, seq, exc, event.table, advance=True, raw=raw)
        accepted: dict[str, Any] = {"seq": event.seq, "ok": True}
        self.sequencer.record(event.console, event.seq, accepted)
        self._bound.setdefault(event.console, event.table)
        record = {"kind": "console", **event.as_record(), "at": now}
        return Outcome(
            ok=True,
            ack=accepted,
            record=record,
            changed=self._after(event, change, now),
            console=event.console,
            last_seq=self.sequencer.last(event.console),
        )

    def _no_such_table(self, console: str | None, seq: int | None, table: int) -> Outcome:
        """A message on the channel of a table this tournament does not have: answered on that
        table's error channel (where a console of that table listens, whatever name it sends
        under), naming the console it names; no console's seqs or answers are touched and
        nothing is kept per table (a channel name is wire input)."""
        tables = sorted(self.state.tables)
        served = f"tables {tables[0]}-{tables[-1]}" if tables else "no tables"
        unknown = Rejection(
            "unknown_table",
            f"no table {table} in tournament {self.config.id!r} (this hub serves {served}): "
            "check the console's table",
        )
        out = self._reject(None, seq, unknown, table, advance=False, log=False)
        if console is not None:
            out.ack["console"] = console
        return out

    def _clock_forbids(self, now: float) -> bool:
        clock = self.clock
        return clock is not None and clock.spec.on_time_up == "enforce" and clock.time_up(now)

    def _check_envelope(self, event: ConsoleEvent, channel_table: int | None) -> None:
        if event.tournament != self.config.id:
            raise Rejection(
                "unknown_tournament",
                f"this hub runs tournament {self.config.id!r}, not {event.tournament!r}",
            )
        if channel_table is not None and event.table != channel_table:
            raise Rejection(
                "wrong_channel",
                f"event for table {event.table} published on table {channel_table}'s channel",
            )
        if event.table not in self.state.tables:
            raise Rejection("unknown_table", f"table {event.table} is not in this tournament")
        if not self._console_allowed(event):
            raise Rejection(
                "unknown_console", f"console {event.console!r} may not write table {event.table}"
            )

    def _console_allowed(self, event: ConsoleEvent) -> bool:
        if event.console == OPERATOR_CONSOLE:
            return False  # only the hub itself writes as the operator console
        if self._consoles is None:
            return True
        return self._consoles.get(event.console) == event.table

    def _reject(
        self,
        console: str | None,
        seq: int | None,
        exc: Rejection,
        table: int | None,
        *,
        advance: bool,
        log: bool = True,
        raw: Any = None,
    ) -> Outcome:
        """A refusal. One that uses up the console's seq (``advance``) is journaled too, as a
        ``refused`` record (`refused_record`): the journal then accounts for every seq of every
        console, so a rebuild, and a replay of the export, treat it as this hub did."""
        ack: dict[str, Any] = {"seq": seq, "ok": False, "code": exc.code, "error": exc.message}
        record = None
        if advance and console is not None and seq is not None:
            self.sequencer.record(console, seq, ack)
            record = refused_record(console, seq, ack, raw, table, self._now)
        refusal = None
        changed: set[TopicKey] = set()
        if log:
            refusal = {
                "table": table,
                "console": console,
                "seq": seq,
                "code": exc.code,
                "message": exc.message,
                "at": self._now,
            }
            changed = self.note_refusal(refusal)
        else:
            self.reject_counts[exc.code] = self.reject_counts.get(exc.code, 0) + 1
        return Outcome(
            ok=False,
            ack=ack,
            code=exc.code,
            message=exc.message,
            console=console,
            changed=changed,
            record=record,
            seq_advanced=record is not None,
            last_seq=self.sequencer.last(console) if console is not None else 0,
            refusal=refusal,
        )

    def note_refusal(self, refusal: Mapping[str, Any]) -> set[TopicKey]:
        """A refused event as the operator desk lists it (``Outcome.refusal``): counted and
        listed. Refusals are not journaled; a read model that replays the journal in another
        process is told them this way."""
        code = str(refusal.get("code"))
        table = refusal.get("table")
        self.reject_counts[code] = self.reject_counts.get(code, 0) + 1
        self.rejections.append(dict(refusal))
        return set(self._emit(Rejected(table if isinstance(table, int) else None, code)))

    def journaled(self, outcome: Outcome, position: str) -> None:
        """The ingest appended ``outcome.record`` to the journal at ``position``: its ack (and
        any later re-ack of the same seq) carries it."""
        if not outcome.ok:  # a refusal journaled: its answer stays the refusal
            return
        outcome.ack["position"] = position
        record = outcome.record or {}
        console, seq = record.get("console"), record.get("seq")
        if isinstance(console, str) and isinstance(seq, int):
            self.sequencer.set_position(console, seq, position)

    def restore_answers(
        self,
        refusals: Mapping[tuple[str, int], Mapping[str, Any]],
        last_seqs: Mapping[str, int],
    ) -> None:
        """What the ingest persisted beside the journal on earlier runs: each refused event's
        answer, and each console's high-water mark (refusals use up seqs the journal lacks)."""
        self.sequencer.restore_rejected(refusals)
        self.sequencer.restore(last_seqs)

    def restore(self, record: Mapping[str, Any], position: str | None = None) -> set[TopicKey]:
        """Re-apply one journal record (same effect as when it was first accepted).

        A (console, seq) already applied is skipped and counted in ``restore_skipped``: a
        journal written twice by accident (two ingests before fencing, a restored backup
        appended again) still rebuilds the state it describes instead of refusing to start.
        """
        now = float(record.get("at", 0.0))
        self._now = now
        if record.get("kind") == "control":
            return self._apply_control(record, now)
        if record.get("kind") == REFUSED:  # the seq was used up by a refusal; nothing moved
            console, seq = str(record["console"]), int(record["seq"])
            self.sequencer.record(console, seq, refusal_answer(record))
            return set()
        fields = {k: v for k, v in record.items() if k not in ("kind", "at")}
        event = parse_event(fields)
        if self.sequencer.check(event.console, event.seq) == "duplicate":
            self.restore_skipped += 1
            return set()
        change = self.state.apply(event, now)
        self.sequencer.record(event.console, event.seq, {"seq": event.seq, "ok": True})
        if event.console != OPERATOR_CONSOLE:
            self._bound.setdefault(event.console, event.table)
        if position is not None:
            self.sequencer.set_position(event.console, event.seq, position)
        return self._after(event, change, now)

    def note_links(self, links: Mapping[str, bool]) -> set[TopicKey]:
        """Record whether each console's latest acknowledgement reached a listener."""
        keys: set[TopicKey] = set()
        for console, up in links.items():
            if self.links.get(console) != up:
                self.links[console] = up
                keys |= self._emit(LinkChanged(console, up))
        return keys

    # ----------------------------------------------------------------- control
    def control(self, command: Mapping[str, Any], now: float) -> Outcome:
        """An operator command (on-air change or dispute confirmation), validated."""
        self._now = now
        op = command.get("op")
        try:
            refuse_bad_numbers(command)  # NaN, infinities, huge ints: whatever the transport
            if op == "onair":
                slot, value = command.get("slot"), command.get("value")
                if slot not in ONAIR_SLOTS:
                    raise Rejection("bad_request", f"unknown on-air slot {slot!r}")
                if not isinstance(value, Mapping):
                    raise Rejection("bad_request", "on-air 'value' must be an object")
                record = {"kind": "control", "op": "onair", "slot": slot, "value": dict(value)}
                record["at"] = now
                changed = self._apply_control(record, now)
                return Outcome(ok=True, ack={"ok": True}, record=record, changed=changed)
            if op == "clock":
                if self.clock is None:
                    raise Rejection("not_allowed", "this tournament has no [clock] configured")
                checked = Clock.check(dict(command), len(self.clock.spec.levels))
                record = {"kind": "control", "op": "clock", **checked, "at": now}
                changed = self._apply_control(record, now)
                return Outcome(ok=True, ack={"ok": True}, record=record, changed=changed)
            if isinstance(op, str) and op in OPERATOR_EVENTS:
                seq = self.sequencer.expected(OPERATOR_CONSOLE)
                raw = {
                    "v": 1,
                    "tournament": self.config.id,
                    "table": command.get("table"),
                    "console": OPERATOR_CONSOLE,
                    "seq": seq,
                    "type": op,
                }
                for name, field_name in OPERATOR_EVENTS[op].items():
                    if command.get(name) not in (None, []):
                        raw[field_name] = command[name]
                if op in ("void", "penalty") and not (raw.get("note") and raw.get("by")):
                    raise Rejection(
                        "bad_request", f"'{op}' needs 'by' (the official) and a 'reason'"
                    )
                event = parse_event(raw)
                if event.table not in self.state.tables:
                    raise Rejection(
                        "unknown_table", f"table {event.table} is not in this tournament"
                    )
                change = self.state.apply(event, now)
                self.sequencer.record(OPERATOR_CONSOLE, seq, {"seq": seq, "ok": True})
                record = {"kind": "console", **event.as_record(), "at": now}
                return Outcome(
                    ok=True,
                    ack={"ok": True},
                    record=record,
                    changed=self._after(event, change, now),
                )
            raise Rejection("bad_request", f"unknown operator command {op!r}")
        except Rejection as exc:
            return Outcome(
                ok=False,
                ack={"ok": False, "code": exc.code, "error": exc.message},
                code=exc.code,
                message=exc.message,
            )

    def _apply_control(self, record: Mapping[str, Any], now: float) -> set[TopicKey]:
        if record.get("op") == "clock":
            if self.clock is None:  # a journal of another configuration: nothing to move
                return set()
            self.clock.apply(dict(record), now)
            return self._clock_changed(now, force=True)
        slot = str(record["slot"])
        merged = {**self.onair["slots"].get(slot, {}), **dict(record["value"])}
        self.onair = {"slots": {**self.onair["slots"], slot: merged}}
        return set(self._emit(OnAirChanged(slot)))

    # ----------------------------------------------------------------- release
    def released(self, group: str, deal_no: int) -> bool:
        return (group, deal_no) in self._released

    @property
    def released_count(self) -> int:
        """(group, deal) pairs released to the public so far: grows with each release."""
        return len(self._released)

    def deal_released(self, deal_no: int) -> bool:
        """Every group plays the same deck orders, so a deal is public for all or none."""
        return deal_no in self._released_deals

    def _clock_changed(self, now: float, *, force: bool = False) -> set[TopicKey]:
        """Announce the clock when an operator moved it, or when its level or status moved
        by itself (a level ended, the time ran out)."""
        if self.clock is None:
            return set()
        reading = self.clock.read(now)
        seen = (reading.status, reading.level)
        if not force and seen == self._clock_seen:
            return set()
        self._clock_seen = seen
        self._clock_at = now
        return set(self._emit(ClockChanged(reading.status, reading.level)))

    def tick(self, now: float) -> set[TopicKey]:
        """Release deals whose delay has passed, move the clock's level; returns the topics
        that changed."""
        changed: set[TopicKey] = self._clock_changed(now)
        for deal_no, at in list(self._completed_at.items()):
            if now >= at + self.release_delay:
                del self._completed_at[deal_no]
                changed |= self._release(deal_no)
        return changed

    def _release(self, deal_no: int) -> set[TopicKey]:
        for group in self.config.groups_playing(deal_no):
            self._released.add((group.id, deal_no))
            self._released_deals.add(deal_no)
            for t in group.tables:
                self.public_board.set_result(t, deal_no, self._result(t, deal_no))
        pending, self._public_pending = self._public_pending, []
        for penalty in pending:
            self._public_penalty(penalty)
        keys = set(self._emit(DealReleased(deal_no)))
        if self.ticker.release(deal_no):
            keys |= self._emit(TickerItem(PUBLIC, {}))
        return keys

    def _result(self, table: int, deal_no: int) -> dict[int, int] | None:
        h = self.state.hand(table, deal_no)
        return h.result if h else None

    # ----------------------------------------------------------------- changes
    def _emit(self, event: EngineEvent) -> AbstractSet[TopicKey]:
        """Announce a typed event: the projections move by it (routed by the families that
        declare its class, ``hub.engine.families``)."""
        return self.projections.on(event)

    def _after(self, event: ConsoleEvent, change: Change, now: float) -> set[TopicKey]:
        """Announce what one applied console event changed."""
        table, deal_no = change.table, change.deal
        keys: set[TopicKey] = set()
        if event.type == "penalty":
            assert event.seat is not None
            self._public_penalty(self.state.penalties[-1])
            return set(self._emit(PenaltyApplied(table, event.seat)))
        if deal_no is None:  # pragma: no cover - every other event names its deal
            return keys
        hand = self.state.hand(table, deal_no)
        if event.type == "start":
            keys |= self._emit(HandStarted(table, deal_no))
        elif event.type in ACTION_TYPES and hand is not None:
            keys |= self._emit(ActionApplied(table, deal_no, len(hand.hand.actions) - 1))
        elif event.type in ("undo", "reopen"):
            keys |= self._emit(HandRewound(table, deal_no))
        elif not change.scores:
            keys |= self.projections.on(HandRewound(table, deal_no))
        if not change.scores and self.deal_released(deal_no):
            # A correction of a released deal (reopened, its actions re-entered) shows to the
            # public as it happens.
            public = {
                (PUBLIC, topic_name("deal", deal_no)),
                *(
                    (PUBLIC, topic_name("compare", deal_no, s))
                    for s in range(1, self.config.seats + 1)
                ),
            }
            self.projections.touch(public)
            keys |= public
        if change.filled is not None:
            keys |= self._stage_filled(change.filled)
        for item in change.notable:
            keys |= self._add_ticker(item)
        if change.scores:
            status = views.hand_status(hand)
            keys |= self._emit(HandSettled(table, deal_no, status))
            for item in views.swing_items(self.state, table, deal_no):
                keys |= self._add_ticker(item)
            keys |= self._track_release(table, deal_no, now)
        return keys

    def _stage_filled(self, stage: str) -> set[TopicKey]:
        """A stage's teams were just fixed: what shows them (rosters of its tables, travellers
        of its deals, standings) is rebuilt."""
        plan = self.config.plan
        tables = [t for g in plan.stage_by_id[stage].groups for t in self.config.groups[g].tables]
        seats = range(1, self.config.seats + 1)
        keys: set[TopicKey] = set()
        for audience in (PUBLIC, LIVE):
            keys.add((audience, topic_name("standings")))
            keys.update((audience, topic_name("seat", s)) for s in seats)
            keys.update((audience, topic_name("table", t)) for t in tables)
        for deal_no in plan.deals_of_stage(stage):
            keys.update((LIVE, topic_name("compare", deal_no, s)) for s in seats)
        self.projections.touch(keys)
        return keys

    def _track_release(self, table: int, deal_no: int, now: float) -> set[TopicKey]:
        """Every group plays the same deck order of a deal, so the public sees a deal only
        once every table of every group has completed it (then the release delay)."""
        group = self.config.group_of(table).id
        if (group, deal_no) in self._released:
            # Already public: corrections show to the public as they happen.
            self.public_board.set_result(table, deal_no, self._result(table, deal_no))
            keys = self.projections.public_deal_keys(deal_no)
            self.projections.touch(keys)
            return keys
        board = self.state.board
        if all(board.deal_complete(g.id, deal_no) for g in self.config.groups_playing(deal_no)):
            self._completed_at.setdefault(deal_no, now)
            if self.release_delay <= 0:
                return self.tick(now)
        else:
            self._completed_at.pop(deal_no, None)
        return set()

    def _add_ticker(self, item: dict[str, Any]) -> set[TopicKey]:
        if "text" not in item:
            item = {**item, "text": _ticker_text(self.state, item)}
        deal_no = item.get("deal")
        public_now = isinstance(deal_no, int) and self.deal_released(deal_no)
        keys: set[TopicKey] = set()
        for audience in self.ticker.add(item, public_now=public_now):
            keys |= self._emit(TickerItem(audience, item))
        return keys

    # ----------------------------------------------------------------- snapshots
    def snapshot(self) -> dict[str, Any]:
        """Everything the journal built, as plain data (msgpack-friendly): the tournament
        state, the consoles' seqs and answers, releases, on-air slots and the tickers. With the
        journal position of the last record applied, a restart replays only what follows."""
        return {
            "version": SNAPSHOT_VERSION,
            "state": snapshots.snapshot(self.state),
            "sequencer": self.sequencer.snapshot(),
            "released": sorted([g, d] for g, d in self._released),
            "completed_at": [[d, at] for d, at in self._completed_at.items()],
            "onair": self.onair,
            "ticker": self.ticker.snapshot(),
            "bound": dict(self._bound),
            "now": self._now,
            "clock": None if self.clock is None else self.clock.snapshot(),
            "clock_at": self._clock_at,
        }

    def restore_snapshot(self, data: Mapping[str, Any]) -> None:
        """Take the state of ``snapshot()`` (an engine of the same config and deck orders that
        has applied nothing yet); `ValueError` if the snapshot does not fit."""
        if self.state.events_applied or self.projections.active:
            raise ValueError("an engine restores a snapshot before it applies anything")
        if not isinstance(data, Mapping) or data.get("version") != SNAPSHOT_VERSION:
            raise ValueError(f"engine snapshot version {data.get('version')!r} is not supported")
        try:
            state = snapshots.restore_state(self.config, self.state.decks, data["state"])
            sequencer = Sequencer.from_snapshot(data["sequencer"])
            released = {(str(g), int(d)) for g, d in data["released"]}
            completed_at = {int(d): float(at) for d, at in data["completed_at"]}
            onair = {"slots": dict(data["onair"]["slots"])}
            ticker = Ticker()
            ticker.restore(data["ticker"])
            bound = {str(c): int(t) for c, t in data["bound"].items()}
            now = float(data["now"])
            if self.clock is not None and data.get("clock") is not None:
                self.clock.restore(data["clock"])
                self._clock_at = float(data.get("clock_at", now))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"engine snapshot is malformed: {exc!r}") from exc
        self.state, self.sequencer, self.ticker = state, sequencer, ticker
        self.projections = Projections(self.state, self.payloads)
        self._released, self._completed_at = released, completed_at
        self._released_deals = {d for _, d in released}
        self.onair, self._bound, self._now = onair, bound, now
        self.public_board = self.state.new_board(self._public_teams)
        for (table, deal_no), result in self.state.board.results().items():
            if self.released(self.config.group_of(table).id, deal_no):
                self.public_board.set_result(table, deal_no, result)
        self._public_pending = []
        for p in self.state.penalties:
            self._public_penalty(p)

    def _public_penalty(self, penalty: Mapping[str, Any]) -> None:
        """A penalty on the public board; one given before its stage shows any session to the
        public (nothing released yet: the board has no session to put it in) waits for the
        first release (it raised ValueError after the state had taken it: the command was
        applied, never journaled)."""
        try:
            self.public_board.add_penalty(
                penalty["table"], penalty["seat"], penalty["chips"], penalty["points"]
            )
        except ValueError:
            self._public_pending.append(penalty)

    # ----------------------------------------------------------------- the feed
    def start_feed(self) -> None:
        """Start projecting topics (after the journal replay). Topics are built lazily: when
        ``materialize``d (someone subscribes, reads or asks for a snapshot) or when an event
        first touches them (``changes()`` then hands them out whole). With deck orders, what
        equity needs is made now rather than on the first hand's first action."""
        if self.state.decks and self.state.game.equity:
            equity.prepare(self.config.seats)
        self.projections.start()

    def materialize(self, key: TopicKey) -> dict[str, Any] | None:
        """A topic's current payload, projected from now on (None: no such topic for that
        audience, or not yet). Its changes come through ``changes()`` as patches."""
        return self.projections.materialize(key)

    def changes(self) -> list[TopicChange]:
        """What changed in the topic payloads since the last call (after ``start_feed``)."""
        return self.projections.flush()

    # ----------------------------------------------------------------- reading
    def topic_keys(self) -> Iterable[TopicKey]:
        """Every topic that exists now, per audience."""
        for topic in self.topics:
            fam = topic.family
            embargoed = fam.name in ("deal", "compare") and not self.deal_released(topic.args[0])
            for audience in fam.audiences:
                if audience == PUBLIC and embargoed:
                    continue
                yield (audience, topic.name)

    def payload(self, key: TopicKey) -> dict[str, Any] | None:
        """A topic's payload built from the state now (None: no such topic for that audience,
        or not yet): its family's builder (``hub.engine.families``)."""
        return self.payloads.build(key)

    def _public_teams(self, group: str | Mapping[str, Any]) -> bool:
        """May the public know the teams of a group (or of a stage's fill)? Those of a filled
        stage come from the stage before: only once all of its deals are public."""
        plan = self.config.plan
        if not isinstance(group, str):
            group = next(iter(group))
        stage = plan.stage_of_group[group]
        if stage.advance is None:
            return True
        return all(d in self._released_deals for d in plan.deals_of_stage(stage.advance.source))

    def release_state(self) -> list[dict[str, Any]]:
        out = []
        plan = self.config.plan
        for g in self.config.groups.values():
            for d in range(1, self.config.deals + 1):
                if not plan.plays(g.id, d):
                    continue
                done = sum(
                    1 for t in g.tables if (h := self.state.hand(t, d)) is not None and h.counts
                )
                out.append(
                    {
                        "group": g.id,
                        "deal": d,
                        "tables_complete": done,
                        "tables": len(g.tables),
                        "released": (g.id, d) in self._released,
                    }
                )
        return out

    def standings_json(self) -> dict[str, Any]:
        """The replay CLI's output: both views of the live scoreboard."""
        return self.payloads.standings(True)


def _address(raw: Any) -> tuple[str | None, int | None]:
    """Best-effort console and seq of even a malformed event, to address its rejection."""
    if not isinstance(raw, Mapping):
        if isinstance(raw, ConsoleEvent):  # decoded and checked already (``decode_event``)
            return raw.console, raw.seq
        return None, None
    console = raw.get("console")
    seq = raw.get("seq")
    return (
        console if isinstance(console, str) and 0 < len(console) <= 64 else None,
        seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
    )


def _table(raw: Any) -> int | None:
    if isinstance(raw, ConsoleEvent):
        return raw.table
    table = raw.get("table") if isinstance(raw, Mapping) else None
    return table if isinstance(table, int) and not isinstance(table, bool) else None


def _ticker_text(state: TournamentState, item: Mapping[str, Any]) -> str:
    table, deal_no, seat = item.get("table"), item.get("deal"), item.get("seat")
    if item["kind"] == "void":
        return f"Deal {deal_no} voided at table {table}"
    held = None
    if item["kind"] == "all_in" and table is not None and seat is not None:
        held = state.seat_holder(int(table), int(seat), None if deal_no is None else int(deal_no))
    if held is not None:
        team, player = held
        return f"{player} ({team.code}) all in on deal {deal_no} at table {table}"
    return str(item.get("kind"))
