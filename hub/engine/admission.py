"""`Admission`: which console events reach the tournament state.

A console writes one table: the one the ``[consoles]`` allow-list gives it, or else the one it
first wrote (accepted). It writes it on that table's channel, in seq order (the `Sequencer`: a
duplicate is answered again, a gap refused). `admit` answers the decoded event, or why not;
`accepted` records what the state took, `refusal` answers what it did not, `replayed` reads a
journal record back. Pure: nothing here touches the state.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from hub.domain.config import TournamentConfig
from hub.domain.errors import Rejection
from hub.engine.events import MAX_INT, OPERATOR_CONSOLE, ConsoleEvent, parse_event
from hub.engine.outcome import Outcome
from hub.engine.refusals import REFUSED, refusal_answer, refused_record
from hub.engine.sequencer import Sequencer

__all__ = ["RECORD_META", "Admission", "Duplicate", "Refused"]

RECORD_META = ("kind", "at", "key")
"""A journal record's fields that are not the event's: its kind, when it was applied, and a
signed command's nonce (``key``: its idempotency key, ``hub.roles.signed``)."""


@dataclass(slots=True)
class Refused:
    """An event turned away: whose it says it is, why, and whether it used up its seq."""

    console: str | None
    seq: int | None
    rejection: Rejection
    table: int | None
    advance: bool  # the console's seq is used up (the refusal is journaled)
    log: bool = True  # listed on the operator desk (else only counted)
    raw: Any = None
    ack: dict[str, Any] = field(default_factory=dict)  # fields the answer adds


@dataclass(slots=True)
class Duplicate:
    """A seq the console sent before: answered again as it was."""

    console: str
    ack: dict[str, Any]


class Admission:
    """The sequencer, the console allow-list and each console's table."""

    def __init__(self, config: TournamentConfig, tables: Collection[int]) -> None:
        self.config = config
        self.tables = tables
        self.sequencer = Sequencer()
        consoles = getattr(config, "consoles", None)
        self.consoles: dict[str, int] | None = dict(consoles) if consoles else None
        # Without an allow-list a console is bound to the table it first wrote (accepted).
        self.bound: dict[str, int] = {}
        self.restore_skipped = 0  # journal records skipped as already applied

    def admit(self, raw: Any, channel_table: int | None) -> ConsoleEvent | Refused | Duplicate:
        """The event to apply, or why not. ``channel_table``: the table whose channel carried
        it. Only the console of that table speaks there: an event naming any other console is
        refused on the channel's error channel without touching that console's seqs or
        answers (a console cannot stall, or read the answers of, another table)."""
        console, seq = address(raw)
        table = table_of(raw)
        if channel_table is not None and channel_table not in self.tables:
            return self.no_such_table(console, seq, channel_table)
        if console is not None and self.consoles is not None and console not in self.consoles:
            # Not one of ours: refused whatever its seq says (and no seq of it is tracked).
            listed = Rejection("unknown_console", f"console {console!r} is not in [consoles]")
            return Refused(console, seq, listed, table, advance=False)
        if channel_table is not None and console is not None and console != OPERATOR_CONSOLE:
            if self.consoles is not None:
                bound = self.consoles.get(console)
            else:
                bound = self.bound.get(console, table)
            if bound is not None and bound != channel_table:
                foreign = Rejection(
                    "wrong_channel",
                    f"console {console!r} does not write table {channel_table}: "
                    f"publish on its own table's channel",
                )
                return Refused(None, seq, foreign, channel_table, False, ack={"console": console})
        if console is not None and seq is not None and not 1 <= seq < MAX_INT:
            bad = Rejection("bad_schema", f"field 'seq' must be from 1 to 2^53 - 1, got {seq}")
            return Refused(console, seq, bad, table, advance=False)
        sequenced = console is not None and seq is not None and console != OPERATOR_CONSOLE
        if sequenced:
            assert console is not None and seq is not None
            verdict = self.sequencer.check(console, seq)
            if verdict == "duplicate":
                previous = self.sequencer.previous_ack(console, seq)
                again = dict(previous) if previous else {"seq": seq, "ok": True}
                again["duplicate"] = True
                return Duplicate(console, again)
            if verdict == "gap":
                expected = self.sequencer.expected(console)
                gap = Rejection("seq_gap", f"expected seq {expected}, got {seq}: resend")
                return Refused(
                    console, seq, gap, table, False, log=False, ack={"expected": expected}
                )
        try:
            event = parse_event(raw)
            self._check_envelope(event, channel_table)
        except Rejection as exc:
            # The console moved on past a refused event, so its seq is used up, unless the
            # console itself is not one of ours.
            advance = sequenced and exc.code != "unknown_console"
            return Refused(console, seq, exc, table, advance=advance, raw=raw)
        return event

    def no_such_table(self, console: str | None, seq: int | None, table: int) -> Refused:
        """A message on the channel of a table this tournament does not have: answered on that
        table's error channel (where a console of that table listens, whatever name it sends
        under), naming the console it names; no console's seqs or answers are touched and
        nothing is kept per table (a channel name is wire input)."""
        tables = sorted(self.tables)
        served = f"tables {tables[0]}-{tables[-1]}" if tables else "no tables"
        unknown = Rejection(
            "unknown_table",
            f"no table {table} in tournament {self.config.id!r} (this hub serves {served}): "
            "check the console's table",
        )
        named = {} if console is None else {"console": console}
        return Refused(None, seq, unknown, table, advance=False, log=False, ack=named)

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
        if event.table not in self.tables:
            raise Rejection("unknown_table", f"table {event.table} is not in this tournament")
        if not self._console_allowed(event):
            raise Rejection(
                "unknown_console", f"console {event.console!r} may not write table {event.table}"
            )

    def _console_allowed(self, event: ConsoleEvent) -> bool:
        if event.console == OPERATOR_CONSOLE:
            return False  # only the hub itself writes as the operator console
        if self.consoles is None:
            return True
        return self.consoles.get(event.console) == event.table

    def accepted(self, event: ConsoleEvent, position: str | None = None) -> dict[str, Any]:
        """The state took ``event``: its seq is answered, its console bound to its table
        (the operator's writes every table); the answer."""
        ack: dict[str, Any] = {"seq": event.seq, "ok": True}
        self.sequencer.record(event.console, event.seq, ack)
        if event.console != OPERATOR_CONSOLE:
            self.bound.setdefault(event.console, event.table)
        if position is not None:
            self.sequencer.set_position(event.console, event.seq, position)
        return ack

    def replayed(self, record: Mapping[str, Any]) -> ConsoleEvent | None:
        """A console record of the journal as the event to apply again; None when there is
        nothing to apply: a seq a refusal used up (its answer kept), or a (console, seq)
        applied already (counted in ``restore_skipped``)."""
        if record.get("kind") == REFUSED:
            console, seq = str(record["console"]), int(record["seq"])
            self.sequencer.record(console, seq, refusal_answer(record))
            return None
        event = parse_event({k: v for k, v in record.items() if k not in RECORD_META})
        if self.sequencer.check(event.console, event.seq) == "duplicate":
            self.restore_skipped += 1
            return None
        return event

    def refusal(self, refused: Refused, now: float) -> Outcome:
        """What the engine answers for a refusal (`refuse`); the desk lists or counts it."""
        ack, record, refusal = self.refuse(refused, now)
        console = refused.console
        return Outcome(
            ok=False,
            ack=ack,
            code=refused.rejection.code,
            message=refused.rejection.message,
            console=console,
            record=record,
            seq_advanced=record is not None,
            last_seq=self.sequencer.last(console) if console is not None else 0,
            refusal=refusal,
        )

    def refuse(
        self, refused: Refused, now: float
    ) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]:
        """The answer to a refusal; its journal record, when it used up the console's seq
        (a ``refused`` record, `refused_record`: the journal then accounts for every seq of
        every console, so a rebuild, and a replay of the export, treat it as this hub did);
        the refusal as the operator desk lists it, unless only counted."""
        console, seq, exc = refused.console, refused.seq, refused.rejection
        ack: dict[str, Any] = {"seq": seq, "ok": False, "code": exc.code, "error": exc.message}
        record = None
        if refused.advance and console is not None and seq is not None:
            self.sequencer.record(console, seq, ack)
            record = refused_record(console, seq, ack, refused.raw, refused.table, now)
        refusal = None
        if refused.log:
            refusal = {
                "table": refused.table,
                "console": console,
                "seq": seq,
                "code": exc.code,
                "message": exc.message,
                "at": now,
            }
        ack.update(refused.ack)
        return ack, record, refusal


def address(raw: Any) -> tuple[str | None, int | None]:
    """Best-effort console and seq of even a malformed event, to address its rejection."""
    if isinstance(raw, ConsoleEvent):  # decoded and checked already (``decode_event``)
        return raw.console, raw.seq
    if type(raw) is not dict and not isinstance(raw, Mapping):  # (an ABC check: slow)
        return None, None
    console = raw.get("console")
    seq = raw.get("seq")
    return (
        console if isinstance(console, str) and 0 < len(console) <= 64 else None,
        seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
    )


def table_of(raw: Any) -> int | None:
    """Best-effort table of even a malformed event."""
    if isinstance(raw, ConsoleEvent):
        return raw.table
    table = raw.get("table") if type(raw) is dict or isinstance(raw, Mapping) else None
    return table if isinstance(table, int) and not isinstance(table, bool) else None
