"""Replaying a JSON Lines event log through console clients: each console's events in order,
the consoles concurrently, every ack awaited (`duplicast console replay|send|simulate`, the
benchmarks and the end-to-end tests all send this way).

Each console is a ``hub.client.console.ConsoleClient``: its outbox, resends and adaptive timeout
apply
to a replayed log as to a console at a venue.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hub.bus.protocols import PubSubHashes
from hub.client.acks import ConsoleStats
from hub.client.console import ConsoleClient
from hub.wire.codec import CodecError, from_json

__all__ = ["EventLogError", "ReplayReport", "load_events", "replay_log"]


@dataclass(slots=True)
class ReplayReport:
    """Counts over every console: ``duplicates`` were accepted (and are in ``accepted``) but
    had already been applied from an earlier transmission whose ack was lost."""

    events: int = 0
    consoles: int = 0
    accepted: int = 0
    rejected: int = 0
    duplicates: int = 0
    resent: int = 0
    restored: int = 0  # unacknowledged events found in the consoles' outboxes and resent
    skipped: int = 0  # events of the log those outboxes show as sent before (not sent again)
    already: int = 0  # seqs the hub held already at their first send: nothing applied
    seconds: float = 0.0
    rejections: list[str] = field(default_factory=list)


class EventLogError(ValueError):
    """An event log that cannot be replayed as it stands (not JSON Lines, an event without its
    table or console): one line naming the line, for the command to print."""


def load_events(
    source: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """Events from a JSON Lines file (blank lines skipped) or from an iterable of maps. An
    export's header and refused lines (`duplicast export --events`) are not events a console
    sends: skipped (the consoles number what they send anew)."""
    if isinstance(source, str | os.PathLike):
        events = []
        with open(source, "rb") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    event = from_json(line)
                except CodecError as exc:
                    raise EventLogError(f"{os.fspath(source)}:{number}: {exc}") from None
                if not isinstance(event, dict):
                    raise EventLogError(f"{os.fspath(source)}:{number}: an event must be an object")
                if isinstance(event.get("journal"), dict) or isinstance(event.get("refused"), dict):
                    continue
                events.append(event)
        return events
    return [dict(event) for event in source]


async def replay_log(
    bus: PubSubHashes,
    tournament: str,
    path_or_events: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    *,
    pace: float = 0,
    on_reject: Callable[[str], object] = print,
    timeout: float = 1.0,
    max_backoff: float = 5.0,
    rng: random.Random | None = None,
    outbox: str | None = None,
    resume: bool = True,
    on_answer: Callable[[int], object] | None = None,
    no_hub_timeout: float | None = None,
) -> ReplayReport:
    """Send a log's events, each console's in order, consoles concurrently; wait for all acks.

    Each console's events are renumbered consecutively from the seq of its first event (1 if
    absent), which is what a hub replaying the log from scratch expects. ``pace`` is the pause
    between two events of one console (0: pipelined, as fast as the hub acknowledges).
    ``outbox`` is a path template (``{tournament}`` and ``{console}`` filled in) for each
    console's outbox on disk: a replay restarted after a crash resends what was unanswered and
    carries on after the last event sent, instead of sending the log again (``resume=False``:
    every event is sent, numbered after the last seq the outbox used). ``on_answer(n)`` is
    called as ``n`` more events of the log are done (answered, or found sent before).
    ``no_hub_timeout``: give up (``ConsoleFailure``) when a console hears nothing from any hub
    that long while an event waits (see ``ConsoleClient``).
    """
    events = load_events(path_or_events)
    groups = _by_console(events)
    report = ReplayReport(events=len(events), consoles=len(groups))
    fleet = _Fleet(
        bus,
        tournament,
        report,
        on_reject,
        on_answer,
        pace=pace,
        resume=resume,
        outbox=outbox,
        timeout=timeout,
        max_backoff=max_backoff,
        rng=rng,
        no_hub_timeout=no_hub_timeout,
    )
    started = time.perf_counter()
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(fleet.play(c, t, items)) for c, (t, items) in groups.items()]
    except ExceptionGroup as failed:  # one line for the whole replay: the first console's
        raise failed.exceptions[0] from None
    for task in tasks:
        stats = task.result()
        report.accepted += stats.accepted
        report.rejected += stats.rejected
        report.duplicates += stats.duplicates
        report.already += stats.already
        report.resent += stats.resent
    report.rejected += fleet.unsent
    report.seconds = time.perf_counter() - started
    return report


def _by_console(events: list[dict[str, Any]]) -> dict[str, tuple[int, list[dict[str, Any]]]]:
    """Each console's table and events, in log order; `EventLogError` for an event without an
    int table and a str console, or a console seen at two tables."""
    groups: dict[str, tuple[int, list[dict[str, Any]]]] = {}
    for index, event in enumerate(events):
        table, console = event.get("table"), event.get("console")
        if type(table) is not int or not isinstance(console, str):
            raise EventLogError(f"event {index + 1} needs an int table and a str console")
        known = groups.setdefault(console, (table, []))
        if known[0] != table:
            raise EventLogError(f"console {console!r} appears at tables {known[0]} and {table}")
        known[1].append(event)
    return groups


def _first_seq(items: list[dict[str, Any]]) -> int:
    """Where a console's renumbering starts: the seq of its first event (1 if absent)."""
    first = items[0].get("seq")
    return first if type(first) is int and first >= 1 else 1


@dataclass(slots=True)
class _Fleet:
    """One replay's consoles: what each is given, and the report they all count into."""

    bus: PubSubHashes
    tournament: str
    report: ReplayReport
    on_reject: Callable[[str], object]
    on_answer: Callable[[int], object] | None
    pace: float
    resume: bool
    outbox: str | None  # path template: {tournament} and {console} filled in
    timeout: float
    max_backoff: float
    rng: random.Random | None
    no_hub_timeout: float | None
    unsent: int = 0  # events that could not be encoded (refused here, never sent)

    def reject(self, line: str) -> None:
        self.report.rejections.append(line)
        self.on_reject(line)

    async def play(self, console: str, table: int, items: list[dict[str, Any]]) -> ConsoleStats:
        """Send one console's events in order (after those its outbox shows as sent before,
        with ``resume``) and wait for every ack."""
        first = _first_seq(items)
        client = ConsoleClient(
            self.bus,
            self.tournament,
            table,
            console,
            first_seq=first,
            timeout=self.timeout,
            max_backoff=self.max_backoff,
            rng=self.rng,
            on_reject=self.reject,
            outbox=None
            if self.outbox is None
            else self.outbox.format(tournament=self.tournament, console=console),
            no_hub_timeout=self.no_hub_timeout,
        )
        async with client:
            done = max(0, client.next_seq - first) if self.resume else 0
            self.report.restored += client.restored
            self.report.skipped += min(done, len(items))
            if self.on_answer is not None and done:
                self.on_answer(min(done, len(items)))
            for event in items[done:]:
                sent = await self._submit(client, table, event)
                if sent and self.pace > 0:
                    await asyncio.sleep(self.pace)
            await client.drain()
        return client.stats

    async def _submit(self, client: ConsoleClient, table: int, event: dict[str, Any]) -> bool:
        """Send one event without waiting for its ack; False if it could not be encoded."""
        on_answer = self.on_answer
        try:
            answer = await client.submit(event)
        except CodecError as exc:  # an integer msgpack cannot carry (>= 2^64): the hub
            # would refuse it as bad_schema; it cannot even be sent. No seq used.
            self.unsent += 1
            self.reject(f"table {table} event NOT SENT bad_schema: {exc}")
            if on_answer is not None:
                on_answer(1)
            return False
        if on_answer is not None:
            answer.add_done_callback(lambda _: on_answer(1))
        return True
