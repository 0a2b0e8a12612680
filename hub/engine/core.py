"""`Engine`: the one object the I/O layer talks to. Pure: time comes in as an argument.

`submit` takes one decoded console event and answers an `Outcome`: the acknowledgement to send,
the record to journal (accepted events only), and what to persist of a refusal. Every change of
state is announced as a typed event (`hub.engine.changes`), handed on to the feed's part
(`projecting`, `hub.engine.projecting`), which its callers use as a part: the topic projections
move by those events when the feed takes its flush (`engine.projecting.flush()`), as JSON Patch
deltas; a topic is read there (`engine.projecting.materialize`), and each answered console's
link is handed there (`engine.projecting.links`). `restore` replays a journal record with
exactly the effect the original `submit` had, which is what makes "rebuild from the journal"
give the live state back; `snapshot`/`from_snapshot` make that rebuild start from a recent state
instead of the first record.

The engine composes small parts: `Admission` (sequencer, console allow-list, channel binding,
the answers), the `TournamentState` (which answers the events each console event caused),
`Release` (when the public sees a deal; the public board) and the `Desk` (on-air slots, clock,
ticker, refusals, console links); `hub.engine.reactions` says what the parts add to the state's
events. The ingest uses nothing else but the feed's part's ``links``: not the sequencer, not
the state, not the projections.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hub.domain import equity
from hub.domain.config import TournamentConfig
from hub.domain.deck import DeckOrder
from hub.domain.errors import Rejection
from hub.domain.numbers import refuse_bad_numbers
from hub.engine import reactions
from hub.engine import snapshot as snapshots
from hub.engine.admission import Admission, Duplicate, Refused
from hub.engine.bounds import check_command
from hub.engine.changes import EngineEvent, Rejected
from hub.engine.desk import ONAIR_SLOTS, OPERATOR_EVENTS, Desk, default_onair
from hub.engine.events import OPERATOR_CONSOLE
from hub.engine.families import FEEDS, Payloads
from hub.engine.outcome import Outcome
from hub.engine.program import Program, is_now
from hub.engine.projecting import Projecting
from hub.engine.projections import TopicChange
from hub.engine.refusals import REFUSED
from hub.engine.release import Release
from hub.engine.tournament import TournamentState
from hub.wire.topics import PROGRAM, PUBLIC, TopicKey, TopicSpace, kind

__all__ = [
    "ONAIR_SLOTS",
    "OPERATOR_CONSOLE",
    "OPERATOR_EVENTS",
    "Engine",
    "Outcome",
    "TopicChange",
    "TopicKey",
    "default_onair",
]


class Engine:
    def __init__(
        self,
        config: TournamentConfig,
        decks: Mapping[int, DeckOrder] | None = None,
        *,
        release_delay: float | None = None,
        program: bool = True,
    ) -> None:
        self.state = TournamentState(config, decks)
        self.topics = TopicSpace.of(FEEDS, config)
        self.admission = Admission(config, self.state.tables.keys())
        delay = config.release_delay if release_delay is None else release_delay
        self.release = Release(self.state, delay)
        self.desk = Desk(config)
        self.payloads = Payloads(self, FEEDS)  # each family's builder reads the engine
        # The feed's part: the typed events each change causes are handed to it; it notes them
        # into the projections when the feed takes its flush (``hub.engine.projecting``).
        self.projecting = Projecting(self)
        # The secure-delay program outputs ([broadcast] delay, [broadcast.outputs]): each a
        # delayed engine of its own.
        self.program: Program | None = None
        if program:
            self.program = Program.of(
                config, self, lambda: Engine(config, decks, release_delay=delay, program=False)
            )

    # ------------------------------------------------------------------ intake
    def submit(self, raw: Any, now: float, *, channel_table: int | None = None) -> Outcome:
        """Validate and apply one console event. Never raises for bad input.

        ``channel_table``: the table whose channel carried the event (`Admission.admit`)."""
        self.desk.now = now
        admitted = self.admission.admit(raw, channel_table)
        if isinstance(admitted, Duplicate):
            ack = admitted.ack
            console = admitted.console
            return Outcome(ok=bool(ack.get("ok")), ack=ack, duplicate=True, console=console)
        if isinstance(admitted, Refused):
            return self._reject(admitted)
        event = admitted
        try:
            self.desk.check_start(event, now)
            self.state.check_fresh(event)
            events = self.state.apply(event, now)
        except Rejection as exc:
            return self._reject(Refused(event.console, event.seq, exc, event.table, True, raw=raw))
        accepted = self.admission.accepted(event)
        record = {"kind": "console", **event.as_record(), "at": now}
        self._offer(record)
        return Outcome(
            ok=True,
            ack=accepted,
            record=record,
            changed=self._after(events, now),
            console=event.console,
            last_seq=self.admission.sequencer.last(event.console),
            positions=self.admission.sequencer.positions(event.console),
        )

    def _reject(self, refused: Refused) -> Outcome:
        """A refusal (`Admission.refusal`), listed on the operator desk or only counted."""
        outcome = self.admission.refusal(refused, self.desk.now)
        if outcome.record is not None:  # a refusal that used up its seq is journaled too
            self._offer(outcome.record)
        if outcome.refusal is not None:
            outcome.changed = self.note_refusal(outcome.refusal)
        else:
            self.desk.count_refusal(refused.rejection.code)
        return outcome

    def note_refusal(self, refusal: Mapping[str, Any]) -> set[TopicKey]:
        """A refused event as the operator desk lists it (``Outcome.refusal``): counted and
        listed. Refusals are not journaled; a read model that replays the journal in another
        process is told them this way."""
        return self._announce(self.desk.note_refusal(refusal))

    def restore_answers(
        self,
        refusals: Mapping[tuple[str, int], Mapping[str, Any]],
        last_seqs: Mapping[str, int],
    ) -> None:
        """What the ingest persisted beside the journal on earlier runs: each refused event's
        answer, and each console's high-water mark (refusals use up seqs the journal lacks)."""
        self.admission.sequencer.restore_rejected(refusals)
        self.admission.sequencer.restore(last_seqs)

    def restore(self, record: Mapping[str, Any], position: str | None = None) -> set[TopicKey]:
        """Re-apply one journal record (same effect as when it was first accepted).

        A (console, seq) already applied is skipped and counted in ``restore_skipped``: a
        journal written twice by accident (two ingests before fencing, a restored backup
        appended again) still rebuilds the state it describes instead of refusing to start.
        """
        now = float(record.get("at", 0.0))
        self.desk.now = now
        self._offer(record)  # every record, as journaled: the delayed engine decides as this one
        if record.get("kind") == "control":
            return self._announce(self._apply_control(record, now))
        event = self.admission.replayed(record)
        if event is None:  # a seq a refusal used up, or a record applied already
            if record.get("kind") != REFUSED:
                return set()
            # the seq moved: a projector following the journal shows it (console:{t})
            table = record.get("table")
            seq_used = Rejected(table if isinstance(table, int) else None, str(record.get("code")))
            return self._announce([seq_used])
        events = self.state.apply(event, now)
        self.admission.accepted(event, position)
        return self._after(events, now)

    # ----------------------------------------------------------------- control
    def control(self, command: Mapping[str, Any], now: float) -> Outcome:
        """An operator command (on-air change, undo of the last one, cue list, clock, roster,
        withdrawal of a penalty, dispute confirmation, void, penalty), validated: a control
        record (on-air, undo_take, cue, clock: the desk's; roster, withdraw: the state's), or a
        console event of the operator."""
        self.desk.now = now
        try:
            refuse_bad_numbers(command)  # NaN, infinities, huge ints: whatever the transport
            check_command(command)  # bytes, texts, lists; no control or bidi characters
            request = self.desk.request_of(command)  # a control surface's idempotency key
            if self.desk.seen(request):  # a retried button press: answered, nothing applied
                return Outcome(ok=True, ack={"ok": True, "repeated": True})
            record: dict[str, Any] | None
            if command.get("op") == "roster":
                state = self.state
                record = state.roster.check(command, state.config, state.seat_holder, now)
            elif command.get("op") == "withdraw":
                record = self.state.check_withdraw(command, now)
            else:
                record = self.desk.command(command, now)
            if record is not None:
                if request is not None:
                    record["request"] = request
                self._offer(record)
                changed = self._announce(self._apply_control(record, now))
                return Outcome(ok=True, ack={"ok": True}, record=record, changed=changed)
            seq = self.admission.sequencer.expected(OPERATOR_CONSOLE)
            event = self.desk.operator_event(command, seq, self.state.config.id, self.state.tables)
            events = self.state.apply(event, now)
        except Rejection as exc:
            return Outcome.refused_command(exc)
        self.admission.accepted(event)
        self.desk.remember(request)  # (a ruling's request id: until the process restarts)
        record = {"kind": "console", **event.as_record(), "at": now}
        self._offer(record)
        changed = self._after(events, now)
        positions = self.admission.sequencer.positions(event.console)
        ack = {"ok": True}
        return Outcome(ok=True, ack=ack, record=record, changed=changed, positions=positions)

    def _apply_control(self, record: Mapping[str, Any], now: float) -> list[EngineEvent]:
        """A control record (checked, or from the journal): the roster's, else the desk's."""
        if record.get("op") in ("roster", "withdraw"):
            self.desk.remember(record.get("request"))
        if record.get("op") == "roster":
            return self.state.fix_roster(record)
        if record.get("op") == "withdraw":
            events = self.state.withdraw_penalty(record)
            if events:  # the public board anew: the penalty may still wait for a release
                self.release.rebuild_board()
            return events
        return list(self.desk.apply_control(record, now))

    # ----------------------------------------------------------------- time
    def tick(self, now: float) -> set[TopicKey]:
        """Release deals whose delay has passed, move the clock's level; returns the topics
        that changed; the program feed's records due by ``now``."""
        if self.program is not None:
            self.program.advance(now)
        return self._announce(reactions.tick(now, self.release, self.desk))

    def _offer(self, record: Mapping[str, Any]) -> None:
        """A record applied (and journaled, or replayed): the program feed shows it later."""
        if self.program is not None:
            self.program.offer(record)

    # ----------------------------------------------------------------- changes
    def _announce(self, events: Iterable[EngineEvent]) -> set[TopicKey]:
        """Announce typed events: handed on to the feed's part, in order (the projections move
        by them when it takes its flush, routed by the families that declare each class,
        ``hub.engine.families``); the topics they touch while the feed is not started (once
        it is, its flush says: ``Projecting.hand``)."""
        return self.projecting.hand(self.release.counted(events))

    def _after(self, events: list[EngineEvent], now: float) -> set[TopicKey]:
        """Announce the events one applied console event caused, in order, with what the
        parts add to them (`hub.engine.reactions`: ticker lines, the release's)."""
        return self._announce(reactions.after(events, now, self.state, self.release, self.desk))

    # ----------------------------------------------------------------- snapshots
    def snapshot(self) -> dict[str, Any]:
        """Everything the journal built, as plain data (`hub.engine.snapshot`). With
        the journal position of the last record applied, a restart replays only what follows."""
        parts = (self.state, self.admission, self.release, self.desk)
        data = snapshots.write_engine(*parts, self.desk.now)
        if self.program is not None:
            data["program"] = self.program.snapshot()
        return data

    def restore_snapshot(self, data: Mapping[str, Any]) -> None:
        """Take the state of ``snapshot()`` (an engine of the same config and deck orders that
        has applied nothing yet); `ValueError` if the snapshot does not fit."""
        if self.state.events_applied or self.projecting.active:
            raise ValueError("an engine restores a snapshot before it applies anything")
        got = snapshots.read_engine(self.state, self.release, self.desk, data)
        self.state, self.release, self.desk.now = got.state, got.release, got.now
        self.admission.sequencer, self.admission.bound = got.sequencer, got.bound
        self.desk.take(got.onair, got.ticker)
        self.payloads.forget()
        self.projecting.restart()
        if self.program is not None:  # an output written without: it starts from here
            self.program.restore_snapshot(data.get("program"), data)

    # ----------------------------------------------------------------- the feed
    def start_feed(self) -> None:
        """Start projecting topics (after the journal replay). Topics are built lazily: when
        ``materialize``d (someone subscribes, reads or asks for a snapshot:
        ``Projecting.materialize``) or when an event first touches them (the part's ``flush``
        then hands them out whole), those made on demand (``Family.lazy``) only when
        ``materialize``d or ``hold``. With deck orders, what equity needs is made now rather
        than on the first hand's first action."""
        if self.state.decks and self.state.game.equity:
            equity.prepare(self.state.config.seats)
        self.projecting.start()
        if self.program is not None:
            self.program.start()

    def hold(self, keys: Iterable[TopicKey]) -> None:
        """Someone holds these topics (a writer restarting: those its predecessor made): the
        ones made on demand and not made yet come whole with the part's next ``flush``."""
        keys = list(keys)
        self.projecting.hold(k for k in keys if kind(k[0]) != PROGRAM)
        if self.program is not None:
            self.program.hold(k for k in keys if kind(k[0]) == PROGRAM)

    def on_demand(self, key: TopicKey) -> bool:
        """Is ``key`` a topic made on demand (``Family.lazy``) that nobody asked for yet?"""
        if kind(key[0]) == PROGRAM:
            return self.program is not None and self.program.on_demand(key)
        return self.projecting.on_demand(key)

    # ----------------------------------------------------------------- reading
    def topic_keys(self) -> Iterable[TopicKey]:
        """Every topic that exists now, per audience."""
        if self.program is None:
            return self.payloads.topic_keys()
        return [*self.payloads.topic_keys(), *self.program.topic_keys()]

    def topics_named(self, wanted: list[Any] | None) -> list[TopicKey]:
        """The topics a ``snapshots`` request names (``audience|name``) that exist, only this
        tournament's (when it names none, None: every one but those made on demand that nobody
        asked for, which a request must name)."""
        if wanted is None:
            return [key for key in self.topic_keys() if not self.on_demand(key)]
        out = []
        for field in wanted[:10_000]:
            if isinstance(field, str):
                audience, _, name = field.partition("|")
                topic = self.topics.get(name)
                if topic is not None and self._has(audience, topic.family.audiences):
                    out.append((audience, name))
        return out

    def _has(self, audience: str, audiences: tuple[str, ...]) -> bool:
        """Is ``audience`` one of ``audiences`` in this tournament (a program output it has)?"""
        if kind(audience) not in audiences:
            return False
        if audience == PROGRAM or kind(audience) != PROGRAM:
            return True
        return self.program is not None and self.program.feed(audience) is not None

    def payload(self, key: TopicKey) -> dict[str, Any] | None:
        """A topic's payload built from the state now (None: no such topic for that audience,
        or not yet): its family's builder (``hub.engine.families``)."""
        if kind(key[0]) == PROGRAM:
            feed = None if self.program is None else self.program.feed(key[0])
            if feed is None or is_now(self.topics, key[1]):
                return None if feed is None else self.payloads.build((PUBLIC, key[1]))
            return feed.payload(key)
        return self.payloads.build(key)

    def standings_json(self) -> dict[str, Any]:
        """The replay CLI's output: both views of the live scoreboard."""
        return self.payloads.standings(True)
