"""Offline replay: a tournament file and a JSON Lines event log in, standings JSON out.

No server, no bus: each line goes through the same `Engine.submit` the hub uses, so the replay is
the reference the live feeds are checked against. A real console log holds refused events (the
hub answered them and went on): the replay answers them the same way, reports each with its file,
line and code, and goes on; ``strict`` stops at the first instead. A line that is not a JSON
object is refused as ``bad_schema``, as the hub refuses a message it cannot decode.

A log exported from the journal (`duplicast export --events`) also holds the operator's
commands: events of the ``operator`` console (``confirm``, ``void``, ``penalty``) and
``{"op": ...}`` lines (``onair``, ``clock``, ``roster``, ``withdraw``) go through
`Engine.control`, as they did live.

An export also holds each refusal that used up a console's seq (a ``{"refused": ...}`` line):
the replay marks that seq answered, as the hub did, and goes on. Its first line
(``{"journal": ...}``) says the hub accepted every other line: a refusal of one of them is a
divergence (``Refusal.accepted_live``), the standings no longer those of the live event, and
the command exits non-zero.

The deck orders come from the tournament file, not from the log. Replayed against other deck
orders (another deck file, a changed ``rehearsal_seed``), the cards contradict the winners the
officials declared, and each such showdown becomes a dispute, out of the scores: the replay
counts them (``DeckCheck``) so the command can say so instead of printing wrong standings
silently."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hub.domain.config import TournamentConfig
from hub.domain.console_event import ConsoleEvent
from hub.domain.numbers import number_problem
from hub.engine.core import OPERATOR_CONSOLE, OPERATOR_EVENTS, Engine
from hub.engine.events import decode_event_json
from hub.engine.refusals import REFUSED
from hub.engine.tournament import DISPUTED
from hub.files.config import load_config
from hub.files.decks import load_decks


class ReplayError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Refusal:
    """One event the engine refused, where it stands in the log."""

    where: str  # file:line
    code: str
    message: str
    accepted_live: bool = False  # a journal's event, which the live hub accepted

    def __str__(self) -> str:
        live = " (the live hub accepted it)" if self.accepted_live else ""
        return f"{self.where}: {self.code}: {self.message}{live}"


@dataclass(slots=True)
class DeckCheck:
    """Showdowns whose cards were known, and those whose cards contradicted the winners
    declared in the log (each became a dispute)."""

    showdowns: int = 0
    contradicted: int = 0

    @property
    def mismatch(self) -> bool:
        """More than half the showdowns contradicted (at least two): no table of officials
        misreads that many hands; the deck orders are not those the log was played with."""
        return self.contradicted >= 2 and 2 * self.contradicted > self.showdowns

    def warning(self, source: str) -> str | None:
        if self.mismatch:
            return (
                f"warning: {source}: {self.contradicted} of {self.showdowns} showdowns contradict "
                "the winners declared in the log: the deck orders of the tournament file "
                "([decks]: its deck file and key, or rehearsal_seed) are not those this log was "
                "played with. Those hands are left disputed and out of the standings below."
            )
        if self.contradicted:
            return (
                f"note: {source}: {self.contradicted} of {self.showdowns} showdowns contradicted "
                "the declared winners (disputes, as in play)"
            )
        return None


def _event_time(ts: object) -> float:
    """The hub's clock for an event: its ``ts`` when a usable number, else 0. A NaN or an
    infinity (the event itself is refused as bad_schema) must not become the engine's time."""
    if isinstance(ts, bool) or not isinstance(ts, int | float) or number_problem(ts):
        return 0.0
    return float(ts)


@dataclass(frozen=True, slots=True)
class TypedEvent:
    """A console event of the log decoded straight into its class (`decode_event_json`): the
    engine takes it as checked, as the hub takes one decoded from msgpack."""

    line: int
    event: ConsoleEvent


LogEntry = dict[str, Any] | TypedEvent


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The log's lines with their numbers, blank lines and ``#`` comments left out."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror}") from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield number, line


def _entry(number: int, line: str) -> dict[str, Any]:
    """One line as a map, with its number (``_line``), or its fault (``_bad``)."""
    try:
        event = json.loads(line)
    except json.JSONDecodeError as exc:
        return {"_line": number, "_bad": f"not JSON: {exc.msg}"}
    if not isinstance(event, dict):
        return {"_line": number, "_bad": "an event must be a JSON object"}
    event["_line"] = number
    return event


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every line of a log as a map (``_line``: its number; ``_bad``: why it is no event)."""
    return [_entry(number, line) for number, line in _lines(path)]


def read_log(path: Path) -> list[LogEntry]:
    """As `read_events`, but a console event msgspec is sure of comes decoded into its class
    (5x faster than ``json.loads`` and `parse_event`, which it matches exactly:
    tests/test_console_events_golden.py); the rest (the operator's commands, an export's header
    and refused lines, anything malformed) as maps, which `replay` reads as before."""
    entries: list[LogEntry] = []
    for number, line in _lines(path):
        event = decode_event_json(line)
        if event is not None and event.console != OPERATOR_CONSOLE:
            entries.append(TypedEvent(number, event))
        else:
            entries.append(_entry(number, line))
    return entries


# The official of an operator `confirm` journaled before the hub required one (`by`).
UNRECORDED = "(not recorded)"


def _operator_command(event: dict[str, Any]) -> dict[str, Any] | None:
    """The operator command a log line stands for, if it is one."""
    if "op" in event:
        return {k: v for k, v in event.items() if k != "ts"}
    kind = event.get("type")
    if event.get("console") == OPERATOR_CONSOLE and isinstance(kind, str):
        fields = OPERATOR_EVENTS.get(kind)
        if fields is None:
            return None
        command: dict[str, Any] = {"op": kind, "table": event.get("table")}
        for name, field in fields.items():  # command field <- event field
            if event.get(field) not in (None, []):
                command[name] = event[field]
        if kind == "confirm" and "by" not in command:  # journaled before a confirm named one
            command["by"] = UNRECORDED
        return command
    return None


def replay(
    config: TournamentConfig,
    events: Sequence[LogEntry],
    engine: Engine,
    source: str,
    *,
    check: DeckCheck | None = None,
    on_event: Callable[[int], object] | None = None,
    strict: bool = False,
    on_refusal: Callable[[Refusal], None] | None = None,
) -> list[Refusal]:
    """Submit each event as the hub would; the refusals, in log order (each also handed to
    ``on_refusal`` as it happens). ``strict``: `ReplayError` at the first refusal. A resent
    event (a seq already answered) is skipped as the hub skips it."""
    check = DeckCheck() if check is None else check
    refusals: list[Refusal] = []
    journal = False  # a journal export: every line not marked refused was accepted live
    for entry in events:
        if on_event is not None:
            on_event(1)
        if isinstance(entry, TypedEvent):
            line: object = entry.line
            outcome = _apply(engine, entry.event, check)
        else:
            line = entry.pop("_line", "?")
            bad = entry.pop("_bad", None)
            if bad is None and isinstance(entry.get("journal"), dict):
                journal = True
                continue
            if bad is None and isinstance(entry.get("refused"), dict):
                if _refused(engine, entry):
                    continue
                bad = "a 'refused' line needs its console and seq"
            if bad is not None:
                outcome = None
                refusal = Refusal(f"{source}:{line}", "bad_schema", bad, journal)
            else:
                outcome = _apply(engine, entry, check)
        if outcome is not None:
            if outcome.duplicate or outcome.ok:
                continue
            refusal = Refusal(f"{source}:{line}", str(outcome.code), str(outcome.message), journal)
        if strict:
            raise ReplayError(str(refusal))
        refusals.append(refusal)
        if on_refusal is not None:
            on_refusal(refusal)
    engine.tick(float("inf"))
    return refusals


def _apply(engine: Engine, event: dict[str, Any] | ConsoleEvent, check: DeckCheck) -> Any:
    """The engine's outcome for one event (an operator's command through `Engine.control`);
    a showdown it settles is counted in ``check``."""
    if isinstance(event, dict):
        now = _event_time(event.get("ts"))
        command = _operator_command(event)
        if command is not None:
            return engine.control(command, now)
        showdown = _showdown(engine, event.get("type"), event.get("table"))
    else:
        now = _event_time(event.ts)
        showdown = _showdown(engine, event.type, event.table)
    outcome = engine.submit(event, now)
    if showdown is not None and outcome.ok and not outcome.duplicate:
        check.showdowns += 1
        check.contradicted += showdown.status == DISPUTED
    return outcome


def _refused(engine: Engine, line: dict[str, Any]) -> bool:
    """A refusal the hub journaled: its seq is marked answered, as the hub did (the refused
    event changed nothing). False if the line does not say which console and seq."""
    refused = line["refused"]
    console, seq = refused.get("console"), refused.get("seq")
    if not isinstance(console, str) or isinstance(seq, bool) or not isinstance(seq, int):
        return False
    engine.restore({**refused, "kind": REFUSED, "at": _event_time(line.get("ts"))})
    return True


def _showdown(engine: Engine, kind: object, table_no: object) -> Any:
    """The hand a `win` event settles, when its cards are known (else None)."""
    if kind != "win":
        return None
    table = engine.state.tables.get(table_no)  # type: ignore[call-overload]
    current = table.current if table is not None else None
    if current is None or current.hand.computed_winners() is None:
        return None
    return current


def replay_files(
    config_path: Path,
    events_path: Path,
    env: dict[str, str],
    *,
    check: DeckCheck | None = None,
    on_start: Callable[[int], Callable[[int], object] | None] | None = None,
    strict: bool = False,
    on_refusal: Callable[[Refusal], None] | None = None,
) -> dict[str, Any]:
    """Standings of a log file; ``on_start(number of events)`` may return a per-event
    callback (a progress line)."""
    config = load_config(config_path)
    decks = load_decks(config, config_path.parent, env)
    engine = Engine(config, decks)
    events = read_log(events_path)
    on_event = on_start(len(events)) if on_start is not None else None
    replay(
        config,
        events,
        engine,
        str(events_path),
        check=check,
        on_event=on_event,
        strict=strict,
        on_refusal=on_refusal,
    )
    return engine.standings_json()
