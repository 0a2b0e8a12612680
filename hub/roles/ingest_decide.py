"""The ingest's decide step: one message decoded and applied to the engine in memory, no I/O.

A console event goes to ``Engine.submit`` with the table its channel names (a web console's,
on a web channel, once its signature is verified: ``hub.roles.signed``); an operator command
on the control channel to ``Engine.control`` once its signature is (its answer goes to the
edge that asked, ``ControlRequest``); an edge's snapshot request to the feed publisher, when
this process publishes the feed. What cannot be decoded names no console: it is answered on
its table's error channel (``undecodable``), cheaply while the table floods.

``Decider.take`` is the decide stage of the ingest's pipeline: the ingest holds the engine
(``Applying``) and hands it a batch; it decides every message in order, in memory, and hands
the decided ``Batch`` on to the journal stage (``hub.roles.ingest_journal.Journaling``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from hub.bus.base import Message
from hub.engine.core import Engine, Outcome
from hub.engine.events import decode_event
from hub.metrics import Metrics
from hub.roles.ingest_answers import Batch, Waiting
from hub.roles.ingest_journal import Applying
from hub.roles.intake import ERROR_LOGS, FairIntake, PerSecond
from hub.roles.notes import refusal_note
from hub.roles.signed import SignedIntake
from hub.wire import codec
from hub.wire.channels import Channels
from hub.wire.control_request import ControlRequest

__all__ = ["Decider", "read_event"]

log = logging.getLogger("duplicast.ingest")

NAME_CACHE = 4096  # channel names remembered (per console, per console channel)

Answer = Callable[[str, bytes, str | None], None]
"""Where an answer goes (channel, data, the console it answers: None for an error channel):
``BatchAnswers.add`` of the batch being decided."""


def read_event(data: bytes) -> Any:
    """One console event from its bytes, bounded as ``codec.unpack_event`` bounds it. A map of
    at most 15 entries (every common event) is first decoded straight into its checked
    ``ConsoleEvent`` (``hub.engine.events.decode_event``, msgspec); anything it is not sure of
    is unpacked to a map as before, for ``parse_event`` to accept alike or refuse word for
    word."""
    small = type(data) is bytes and len(data) <= codec.MAX_EVENT_BYTES
    if small and data and 0x80 <= data[0] <= 0x8F:
        event = decode_event(data)  # a fixmap: at most 15 entries, so within MAX_EVENT_ITEMS
        if event is not None:
            return event
    return codec.unpack_event(data)


class Decider:
    """Decides each message of a batch (module docstring); counts the undecodable ones until
    the batch's metrics take them (``refused``)."""

    def __init__(
        self,
        names: Channels,
        engine: Engine,
        *,
        on_snapshots: Callable[[dict[str, Any]], None] | None,
        signed: SignedIntake | None = None,
        metrics: Metrics | None = None,
        applying: Applying | None = None,
        then: Callable[[Batch], Awaitable[None]] | None = None,
        noting: bool = False,
    ) -> None:
        self.names = names
        self.signed = signed or SignedIntake()
        self.engine = engine
        self.metrics = metrics or Metrics()
        self.applying = applying or Applying()  # held by the ingest when a batch comes
        self.then = then  # the journal stage
        self.noting = noting  # a projector elsewhere publishes the feed: note the refusals
        self.on_snapshots = on_snapshots  # None: a projector elsewhere answers them
        self.intake: FairIntake | None = None  # the consoles' subscriptions, once running
        self.refused: dict[str, int] = {}  # undecodable messages of this batch, by code
        self._control = names.control
        self._web = names.web_prefix
        self._tables: dict[str, int | None] = {}  # console channel -> its table (table_of)
        self._error_logs = PerSecond(ERROR_LOGS)  # per table

    async def take(
        self, messages: Sequence[Message], now: float, source: Waiting | None = None
    ) -> None:
        """The decide stage: the engine is held (``Applying.hold``) when the batch comes; it
        stays held until the journal stage has appended what was decided."""
        try:
            self.applying.unjournaled = True  # until the journal stage's append returns
            batch = self.decide_batch(messages, now, source)
            assert self.then is not None, "a decider that takes batches hands them on"
        except BaseException:
            self.applying.release()
            raise
        await self.then(batch)

    def decide_batch(
        self, messages: Sequence[Message], now: float, source: Waiting | None
    ) -> Batch:
        """Decide each message in order, in memory: a bug in one does not lose the rest."""
        batch = Batch(messages, source)
        decided, accepted, notes = batch.decided, batch.accepted, batch.notes
        decide, answer = self.decide, batch.out.add
        noting = self.noting
        for message in messages:
            channel = message.channel
            try:
                outcome, raw = decide(channel, message.data, now, answer)
            except Exception:
                log.exception("ingest failed on a message from %s", channel)
                self.metrics.reject("internal_error")
                continue
            if outcome is not None:
                decided.append((outcome, raw, channel))
                if outcome.record is not None:
                    accepted.append(outcome)
                if outcome.refusal is not None and noting:
                    notes.append(refusal_note(outcome.refusal))
        return batch

    def decide(
        self, channel: str, data: bytes, now: float, answer: Answer
    ) -> tuple[Outcome | None, Any]:
        """Decode and apply one message in memory (no I/O). Undecodable console messages are
        answered on the table's error channel (nothing in them says which console sent them)."""
        if channel == self._control:
            return self._command(data, now)
        table = self._tables.get(channel, -1)
        if table == -1:  # first message on this channel
            if len(self._tables) >= NAME_CACHE:  # names from the wire: keep it bounded
                self._tables.clear()
            table = self._tables[channel] = self.names.table_of(channel)
        if channel.startswith(self._web):  # a web console's, through an edge: signed
            raw, refusal = self.signed.event(data, table)
            if refusal is not None:
                self.refuse(table, refusal, answer)
                return None, None
            return self.engine.submit(raw, now, channel_table=table), raw
        try:  # bounded: one over MAX_EVENT_BYTES is refused on its length, never decoded
            raw = read_event(data)
        except codec.CodecError as exc:
            self.undecodable(channel, table, exc, answer)
            return None, None
        return self.engine.submit(raw, now, channel_table=table), raw

    def refuse(self, table: int | None, refusal: dict[str, Any], answer: Answer) -> None:
        """A web console message refused before it was read as an event (its signature): on
        the table's error channel, naming no console and no seq (it may be a forgery: the
        console it names must not take it for an answer to its own event). Counted."""
        code = str(refusal["code"])
        self.refused[code] = self.refused.get(code, 0) + 1
        if self._error_logs.allow(table):
            log.warning("refused on web channel of table %s: %s", table, refusal["error"])
        answer(self.names.errors(table), codec.pack({"seq": None, **refusal}), None)

    def _command(self, data: bytes, now: float) -> tuple[Outcome | None, Any]:
        """A message on the control channel: an operator command, or a snapshot request."""
        try:
            command = codec.unpack(data)
        except codec.CodecError:
            return None, None
        if not isinstance(command, dict):
            return None, None
        if command.get("op") == "snapshots":  # an edge needs current snapshots
            if self.on_snapshots is not None:  # (else the projector answers it)
                self.on_snapshots(command)
            return None, None
        request = ControlRequest(command)
        return self.control(command, now), request

    def control(self, command: dict[str, Any], now: float, *, trusted: bool = False) -> Outcome:
        """An operator command, once its signature and nonce are checked (``trusted``: an
        unsigned one from the ingest's own process); an accepted one journals its nonce."""
        shaped, nonce, answer = self.signed.command(command, trusted=trusted)
        if shaped is None:
            assert answer is not None
            return Outcome(ok=bool(answer.get("ok")), ack=answer, code=answer.get("code"))
        outcome = self.engine.control(shaped, now)
        if nonce is not None:
            if outcome.record is not None:
                outcome.record["key"] = nonce
            self.signed.answered(nonce, outcome.ack)
        return outcome

    def undecodable(
        self, channel: str, table: int | None, exc: codec.CodecError, answer: Answer
    ) -> None:
        """Refuse a message nothing in which names a console (``too_large``, ``bad_schema``)
        on the table's error channel. Counted per batch; logged at most ``ERROR_LOGS`` times a
        second per table, and while the table floods (``FairIntake.flooding``) answered that
        often too: a flood of garbage then costs a length check or a failed decode per
        message (its answers carry no seq: nothing could be matched to them anyway)."""
        code = "too_large" if isinstance(exc, codec.TooLarge) else "bad_schema"
        self.refused[code] = self.refused.get(code, 0) + 1
        if not self._error_logs.allow(table):
            if self.intake is not None and channel in self.intake.flooding:
                return
        else:
            log.warning("undecodable event on %s: %s", channel, exc)
        error = str(exc) if code == "too_large" else f"not msgpack: {exc}"
        refusal = {"seq": None, "ok": False, "code": code, "error": error}
        answer(self.names.errors(table), codec.pack(refusal), None)
