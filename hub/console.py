"""The console client: publish events, keep each in an outbox until the hub acknowledges it.

Protocol (docs/protocol.md §1): events go to ``dup:{tournament}:console:{table}`` as msgpack,
acks come back on ``dup:{tournament}:ack:{console}``. Pub/sub may lose messages, so:
- an event unacknowledged ``ack_timeout`` seconds after it was sent is sent again; the n-th
  resend of an event waits an extra full-jitter backoff
  ``uniform(0, min(max_backoff, ack_timeout * 2**n))`` so a hub recovering from an outage is not
  hit by every console at the same instant;
- ``ack_timeout`` adapts to the hub, as TCP's retransmission timer does (RFC 6298): never below
  ``timeout``, otherwise the smoothed ack delay plus four times its deviation, measured on
  events acknowledged at their first send (Karn), or on resends the hub reports as duplicates
  (the first copy had arrived: the timer was too short). A resend on timeout doubles the timer
  until the next clean sample (Karn's backoff), so the next event can measure the real delay.
  A busy hub, whose acks come later than ``timeout``, is then not flooded with copies of events
  it already holds;
- a ``seq_gap`` answer (the hub missed an earlier event) resends everything from ``expected``
  in order, at most once per ack timeout for the same ``expected`` (a pipelined burst answers
  many gaps at once; resending the burst for each would be quadratic);
- a rejection removes the event from the outbox and is reported, never retried;
- the console also listens on its table's error channel: an answer there naming this console
  (``wrong_channel``, ``unknown_table``: the console writes a table the hub does not give it)
  is a final refusal, as on the ack channel;
- with ``no_hub_timeout`` the console gives up (``ConsoleFailure``, one line) when an event has
  waited that long with nothing heard from any hub (``hub.hubwatch``), or at once when Redis
  refuses its publishes (an ACL user of another table): resending cannot help either;
- with ``outbox=FILE`` the outbox is also kept on disk (``hub.outbox``, SQLite): a console
  restarted after a crash resends what was never answered, in order, with its original seqs,
  and numbers new events after the highest seq it used.
The hub applies ``(console, seq)`` at most once and in seq order, so resends are always safe:
the client only has to make sure every event eventually gets through.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import NoPermissionError

from hub.bus.base import Subscription
from hub.bus.protocols import PubSubHashes
from hub.channels import Channels
from hub.codec import CodecError, from_json, pack, unpack
from hub.hubwatch import ConsoleFailure, Silence, no_hub_message, where
from hub.outbox import Outbox
from hub.tasks import cancel_and_wait

__all__ = [
    "Ack",
    "ConsoleClient",
    "ConsoleStats",
    "ReplayReport",
    "ack_channel",
    "console_channel",
    "describe_rejection",
    "load_events",
    "replay_log",
]

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
WARN_AFTER_SENDS = 3
MAX_ACK_TIMEOUT = 5.0  # seconds; the adaptive timer never waits longer than this


def console_channel(tournament: str, table: int) -> str:
    return Channels(tournament).console(table)


def ack_channel(tournament: str, console: str) -> str:
    return Channels(tournament).ack(console)


@dataclass(frozen=True, slots=True)
class Ack:
    """The hub's answer to one event."""

    seq: int
    ok: bool
    code: str | None = None
    error: str | None = None
    position: str | None = None
    duplicate: bool = False
    expected: int | None = None
    final: bool = False  # made by this console: no resend can change it

    @classmethod
    def from_wire(cls, data: Any, *, final: bool = False) -> Ack:
        """Validate a decoded ack map; ``ValueError`` if it is not one."""
        if not isinstance(data, Mapping):
            raise ValueError(f"ack is not a map: {data!r}")
        seq, ok, expected = data.get("seq"), data.get("ok"), data.get("expected")
        if type(seq) is not int or type(ok) is not bool:
            raise ValueError(f"ack needs an int seq and a bool ok: {data!r}")
        if expected is not None and type(expected) is not int:
            raise ValueError(f"ack expected must be an int: {data!r}")
        return cls(
            seq=seq,
            ok=ok,
            code=_optional_str(data.get("code")),
            error=_optional_str(data.get("error")),
            position=_optional_str(data.get("position")),
            duplicate=data.get("duplicate") is True,
            expected=expected,
            final=final,
        )


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def describe_rejection(table: int, ack: Ack) -> str:
    """One line an official can act on: ``table 3 seq 17 REJECTED out_of_turn: seat 4 is ...``."""
    return f"table {table} seq {ack.seq} REJECTED {ack.code}: {ack.error}"


@dataclass(slots=True)
class ConsoleStats:
    accepted: int = 0
    rejected: int = 0
    duplicates: int = 0  # accepted, but an earlier transmission had already been applied
    already: int = 0  # answered "duplicate" at the first send: the hub held that seq already,
    #                   from another event or an earlier run; nothing was applied now
    resent: int = 0
    stale_acks: int = 0  # acks for events no longer in the outbox (answers to resends)


@dataclass(slots=True)
class _Pending:
    seq: int
    data: bytes
    future: asyncio.Future[Ack]
    due: float
    sends: int = 0
    first_sent: float = 0.0


class ConsoleClient:
    """One console (one ``console`` id, one table). Use ``async with`` or start()/close()."""

    def __init__(
        self,
        bus: PubSubHashes,
        tournament: str,
        table: int,
        console: str,
        *,
        first_seq: int = 1,
        timeout: float = 1.0,
        max_backoff: float = 5.0,
        rng: random.Random | None = None,
        window: int = 1000,
        clock: Callable[[], float] = time.time,
        on_reject: Callable[[str], object] | None = None,
        outbox: str | os.PathLike[str] | None = None,
        no_hub_timeout: float | None = None,
    ) -> None:
        if timeout <= 0 or max_backoff < 0 or window < 1 or first_seq < 1:
            raise ValueError("timeout > 0, max_backoff >= 0, window >= 1, first_seq >= 1")
        self.bus = bus
        self.tournament = tournament
        self.table = table
        self.console = console
        self.timeout = timeout
        self.max_backoff = max_backoff
        self.window = window
        self.stats = ConsoleStats()
        self.rejections: list[Ack] = []
        self._next_seq = first_seq
        self._rng = rng or random.Random()
        self._clock = clock
        self._on_reject = on_reject
        self._channel = console_channel(tournament, table)
        self._outbox: dict[int, _Pending] = {}  # insertion order is seq order
        self._changed = asyncio.Condition()
        self._wakeup = asyncio.Event()
        self._send_lock = asyncio.Lock()
        self._gap_resends: dict[int, float] = {}
        self._srtt: float | None = None  # smoothed ack delay (seconds)
        self._rttvar = 0.0
        self._backed_off: float | None = None  # doubled timer after a timeout, until a sample
        self._wake_at: float | None = None  # when the resend loop will look next (None: idle)
        self._subscription: Subscription | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.outbox_path = outbox
        self._store: Outbox | None = None
        self._unbound = False  # the outbox waits for a hub's epoch (none had started)
        self.restored = 0  # unacknowledged events found on disk at start (resent)
        self.no_hub_timeout = no_hub_timeout
        self._silence = Silence(no_hub_timeout, 0.0)
        self._errors: Subscription | None = None
        self.failure: ConsoleFailure | None = None  # set when it gave up (see hub.hubwatch)

    @property
    def next_seq(self) -> int:
        return self._next_seq

    @property
    def pending(self) -> list[int]:
        """Seqs sent but not yet acknowledged, in order."""
        return list(self._outbox)

    async def start(self) -> None:
        """Listen for acks (registered before anything is sent, so none is missed)."""
        if self._subscription is not None:
            return
        if self.outbox_path is not None and self._store is None:
            epoch = await self._epoch()
            self._unbound = epoch == ""  # no hub yet: bound to the first that answers
            store = Outbox(self.outbox_path, self.tournament, self.table, self.console, epoch)
            if store.set_aside is not None:
                log.warning(
                    "console %s: %s is the outbox of another hub (a rehearsal?), not of this "
                    "one (epoch %s): set aside as %s, nothing of it sent; numbering from 1",
                    self.console,
                    self.outbox_path,
                    epoch,
                    store.set_aside,
                )
            self._store = store
        await self._check_table_served()
        self._subscription = self.bus.subscribe(ack_channel(self.tournament, self.console))
        self._errors = self.bus.subscribe(Channels(self.tournament).errors(self.table))
        try:
            await self._subscription.ready()
            await self._errors.ready()
        except NoPermissionError as exc:  # its ACL user is another table's
            raise ConsoleFailure(
                f"Redis refused console {self.console!r} listening for table {self.table}'s "
                f"answers ({exc}): its user may hear only its own table's"
            ) from None
        self._silence = Silence(self.no_hub_timeout, asyncio.get_running_loop().time())
        if self._store is not None:
            await self._restore(self._store)
        self._tasks = [
            asyncio.create_task(self._receive(), name=f"console-acks:{self.console}"),
            asyncio.create_task(self._receive_errors(), name=f"console-errors:{self.console}"),
            asyncio.create_task(self._resend_loop(), name=f"console-resend:{self.console}"),
        ]

    async def _check_table_served(self) -> None:
        """``ConsoleFailure`` at once when a hub serves this tournament here but not this table
        (the ingest listens only on its tables' channels: nothing would ever answer). No hub
        yet, or a user that may not read the list (an older ACL file): the silence decides."""
        try:
            found = await self.bus.get(Channels(self.tournament).tables)
        except (NoPermissionError, PermissionError):  # an older `duplicast acl` file
            return
        if found is None:
            return
        served = [int(t) for t in found.decode("ascii", "replace").split(",") if t.isdigit()]
        if self.table not in served:
            raise ConsoleFailure(
                f"the hub at {where(self.bus)} serves tournament {self.tournament!r} without a "
                f"table {self.table} (its tables: {', '.join(map(str, served)) or 'none'}): "
                f"check the console's --table"
            )

    async def _epoch(self, quiet: bool = False) -> str | None:
        """The hub's event epoch (``dup:{t}:epoch``); "" while no hub ever started there; None
        when this console may not read it (an ACL file written before the epoch existed: the
        console still works, its outbox unchecked, and says so)."""
        try:
            found = await self.bus.get(Channels(self.tournament).epoch)
        except Exception as exc:  # NOPERM from an older `duplicast acl` file
            log.warning(
                "console %s: cannot read the event epoch (%s): the outbox is not checked "
                "against this hub; write the ACL file again with `duplicast acl`",
                self.console,
                exc,
            )
            return None
        if found is None:
            if not quiet:
                log.warning(
                    "console %s: no hub has started on this Redis yet (no event epoch)",
                    self.console,
                )
            return ""
        return found.decode("utf-8", "replace")

    async def close(self) -> None:
        """Stop listening and resending; unacknowledged sends are cancelled (an outbox on disk
        keeps them for the next start)."""
        await cancel_and_wait(self._tasks)
        self._tasks = []
        for sub in (self._subscription, self._errors):
            if sub is not None:
                await sub.aclose()
        self._subscription = self._errors = None
        for pending in self._outbox.values():
            pending.future.cancel()
        if self._store is not None:
            self._store.close()
            self._store = None

    async def _restore(self, store: Outbox) -> None:
        """Resend, in seq order and with their original bytes, the events a previous run of
        this console left unanswered; continue numbering after the highest seq it used."""
        self._next_seq = max(self._next_seq, store.next_seq())
        loop = asyncio.get_running_loop()
        restored = []
        for seq, data in store.pending():
            pending = _Pending(seq, data, loop.create_future(), due=loop.time())
            pending.first_sent = loop.time()
            pending.sends = 1  # sent before the crash: what follows are resends (Karn)
            self._outbox[seq] = pending
            restored.append(pending)
        self.restored = len(restored)
        if restored:
            log.warning(
                "console %s: resending %d unacknowledged event(s) from %s (seqs %d..%d)",
                self.console,
                len(restored),
                store.path,
                restored[0].seq,
                restored[-1].seq,
            )
        async with self._send_lock:
            for pending in restored:
                await self._transmit(pending)

    async def __aenter__(self) -> ConsoleClient:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def send(self, fields: Mapping[str, Any]) -> Ack:
        """Send one event and wait for its ack (accepted, duplicate or rejected);
        ``ConsoleFailure`` if the console gave up."""
        try:
            return await await_ack(await self.submit(fields))
        except asyncio.CancelledError:
            if self.failure is not None:
                raise self.failure from None
            raise

    async def submit(self, fields: Mapping[str, Any]) -> asyncio.Future[Ack]:
        """Send one event without waiting for its ack (pipelining); ``drain()`` waits for all.

        ``v``, ``tournament``, ``table``, ``console`` and ``seq`` are the client's; ``ts`` is
        filled in when absent. Waits while ``window`` events are unacknowledged.
        """
        if self._subscription is None:
            raise RuntimeError("ConsoleClient.start() first")
        if self.failure is not None:
            raise self.failure
        async with self._changed:
            await self._changed.wait_for(lambda: len(self._outbox) < self.window)
        seq = self._next_seq
        event = dict(fields)
        event.update(
            v=PROTOCOL_VERSION,
            tournament=self.tournament,
            table=self.table,
            console=self.console,
            seq=seq,
        )
        event.setdefault("ts", self._clock())
        data = pack(event)  # CodecError here consumes no seq
        if self._store is not None:  # on disk before it is ever sent (an OSError: no seq used)
            self._store.add(seq, data)
        self._next_seq += 1
        loop = asyncio.get_running_loop()
        now = loop.time()
        pending = _Pending(seq, data, loop.create_future(), due=now + self.ack_timeout)
        pending.first_sent = now
        self._outbox[seq] = pending
        if self._wake_at is None or pending.due < self._wake_at:
            self._wakeup.set()
        async with self._send_lock:
            await self._transmit(pending)
        return pending.future

    async def drain(self, timeout: float | None = None) -> None:
        """Wait until every event sent so far is acknowledged (``TimeoutError`` after timeout)."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: not self._outbox or self.failure is not None)
        if self.failure is not None:
            raise self.failure

    @property
    def ack_timeout(self) -> float:
        """Seconds to wait for an ack before sending again: ``timeout`` until the hub's ack
        delay is known, then the smoothed delay plus four deviations (at least ``timeout``)."""
        return min(MAX_ACK_TIMEOUT, max(self._measured_timeout(), self._backed_off or 0.0))

    def _measured_timeout(self) -> float:
        measured = self.timeout if self._srtt is None else self._srtt + 4 * self._rttvar
        return min(MAX_ACK_TIMEOUT, max(self.timeout, measured))

    def observe_ack_delay(self, seconds: float) -> None:
        """One ack delay sample (RFC 6298 smoothing: gains 1/8 and 1/4)."""
        self._backed_off = None
        if self._srtt is None:
            self._srtt, self._rttvar = seconds, seconds / 2
        else:
            self._rttvar = 0.75 * self._rttvar + 0.25 * abs(self._srtt - seconds)
            self._srtt = 0.875 * self._srtt + 0.125 * seconds

    def resend_delay(self, sends: int) -> float:
        """Seconds to wait for an ack after an event's ``sends``-th transmission."""
        if sends <= 1:
            return self.ack_timeout
        base = self._measured_timeout()  # resends back off through the jitter bound instead
        bound = min(self.max_backoff, base * 2 ** min(sends - 1, 30))
        return base + self._rng.uniform(0.0, bound)

    async def _transmit(self, pending: _Pending) -> None:
        pending.sends += 1
        if pending.sends > 1:
            self.stats.resent += 1
            if pending.sends == WARN_AFTER_SENDS:
                log.warning(
                    "no ack from the hub for table %s seq %s after %d sends; still trying",
                    self.table,
                    pending.seq,
                    pending.sends,
                )
        pending.due = asyncio.get_running_loop().time() + self.resend_delay(pending.sends)
        try:
            await self.bus.publish(self._channel, pending.data)
        except asyncio.CancelledError:
            raise
        except NoPermissionError as exc:  # its ACL user writes another table: no retry helps
            await self._give_up(
                f"Redis refused console {self.console!r} publishing to {self._channel} ({exc}): "
                "its user may publish only to its own table's channel"
            )
        except Exception as exc:  # the outbox keeps it; the next resend tries again
            log.warning("could not publish table %s seq %s: %s", self.table, pending.seq, exc)

    async def _resend_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            due = [p for p in self._outbox.values() if p.due <= now]
            if due:
                # Karn: until a clean sample, new events wait twice as long per timeout round.
                self._backed_off = min(MAX_ACK_TIMEOUT, 2 * self.ack_timeout)
                async with self._send_lock:
                    for pending in due:
                        if pending.seq in self._outbox:
                            await self._transmit(pending)
            oldest = next(iter(self._outbox.values()), None)
            give_up = self._silence.deadline(None if oldest is None else oldest.first_sent)
            if give_up is not None and loop.time() >= give_up:
                assert self.no_hub_timeout is not None
                message = no_hub_message(self.tournament, self.table, self.bus, self.no_hub_timeout)
                await self._give_up(message)
                return
            dues = [p.due for p in self._outbox.values()] + ([give_up] if give_up else [])
            self._wake_at = min(dues, default=None)
            self._wakeup.clear()
            wait = None if self._wake_at is None else max(0.0, self._wake_at - loop.time())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wakeup.wait(), wait)

    async def _receive(self) -> None:
        assert self._subscription is not None
        async for message in self._subscription:
            try:
                ack = Ack.from_wire(unpack(message.data))
            except (CodecError, ValueError) as exc:
                log.warning("ignoring malformed ack on %s: %s", message.channel, exc)
                continue
            if self._unbound:
                await self._bind()
            await self._handle(ack)

    async def _bind(self) -> None:
        """The outbox was opened before any hub had started here (no epoch): a hub answers
        now, so the outbox becomes that hub's. Left unbound, it would pass for the outbox of
        any hub of a Redis with no epoch yet, a rehearsal's for the event's (issue #20.13)."""
        epoch = await self._epoch(quiet=True)
        if epoch and self._store is not None:
            self._store.bind(epoch)
            self._unbound = False

    async def _receive_errors(self) -> None:
        """Answers on the table's error channel that name this console: final refusals."""
        assert self._errors is not None
        async for message in self._errors:
            try:
                data = unpack(message.data)
                if not isinstance(data, Mapping) or data.get("console") != self.console:
                    continue  # another console's, or a message that named none
                ack = Ack.from_wire(data, final=True)
            except (CodecError, ValueError) as exc:
                log.warning("ignoring malformed answer on %s: %s", message.channel, exc)
                continue
            await self._handle(ack)

    async def _give_up(self, message: str) -> None:
        """Stop: every waiting event fails with ``ConsoleFailure`` (an outbox on disk keeps
        them for the next run)."""
        if self.failure is not None:
            return
        self.failure = ConsoleFailure(message)
        log.debug("console %s: %s", self.console, message)  # the caller reports it
        for pending in self._outbox.values():
            pending.future.cancel()
        self._outbox.clear()
        async with self._changed:
            self._changed.notify_all()

    async def _handle(self, ack: Ack) -> None:
        self._silence.hear(asyncio.get_running_loop().time())
        if not ack.ok and ack.code == "seq_gap" and not ack.final:
            await self._resend_from(ack.expected if ack.expected is not None else ack.seq)
            return
        pending = self._outbox.pop(ack.seq, None)
        if pending is None:
            self.stats.stale_acks += 1
            return
        if self._store is not None:
            self._store.remove(ack.seq)
        if pending.sends == 1 or ack.duplicate:
            # Unambiguous, or the first copy had arrived: the delay since the first send is real.
            self.observe_ack_delay(asyncio.get_running_loop().time() - pending.first_sent)
        if ack.ok and ack.duplicate and pending.sends == 1:
            self.stats.already += 1
            if self._on_reject is not None:
                self._on_reject(
                    f"table {self.table} seq {ack.seq}: the hub already holds this seq (from "
                    "another event or an earlier run): nothing applied; use the next free seq"
                )
        elif ack.ok:
            self.stats.accepted += 1
            self.stats.duplicates += ack.duplicate
        else:
            self.stats.rejected += 1
            self.rejections.append(ack)
            if self._on_reject is not None:
                self._on_reject(describe_rejection(self.table, ack))
        if not pending.future.done():
            pending.future.set_result(ack)
        async with self._changed:
            self._changed.notify_all()

    async def _resend_from(self, expected: int) -> None:
        now = asyncio.get_running_loop().time()
        last = self._gap_resends.get(expected)
        if last is not None and now - last < self.ack_timeout:
            return  # an echo of the burst we already resent
        todo = [p for seq, p in self._outbox.items() if seq >= expected]
        if not todo:
            return
        if todo[0].seq != expected:
            # The hub waits for a seq this console never had (or no longer holds): resending
            # cannot help. Every event still waiting gets that answer, once, as a refusal.
            message = (
                f"the hub expects table {self.table}'s console to send seq {expected} next, "
                f"which this console does not hold (it starts at {todo[0].seq}): send from "
                f"seq {expected}"
            )
            log.error("%s", message)
            for pending in todo:
                gap = {"seq": pending.seq, "ok": False, "code": "seq_gap", "error": message}
                await self._handle(Ack.from_wire({**gap, "expected": expected}, final=True))
            return
        window = self.ack_timeout
        self._gap_resends = {e: t for e, t in self._gap_resends.items() if now - t < window}
        self._gap_resends[expected] = now
        async with self._send_lock:
            for pending in todo:
                if pending.seq in self._outbox:
                    await self._transmit(pending)


async def await_ack(future: asyncio.Future[Ack]) -> Ack:
    """Wait for an ack without cancelling the shared future if the waiter is cancelled."""
    return await asyncio.shield(future)


# --- replaying a JSON Lines log ------------------------------------------------------------


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
    groups: dict[str, tuple[int, list[dict[str, Any]]]] = {}
    for index, event in enumerate(events):
        table, console = event.get("table"), event.get("console")
        if type(table) is not int or not isinstance(console, str):
            raise EventLogError(f"event {index + 1} needs an int table and a str console")
        known = groups.setdefault(console, (table, []))
        if known[0] != table:
            raise EventLogError(f"console {console!r} appears at tables {known[0]} and {table}")
        known[1].append(event)

    report = ReplayReport(events=len(events), consoles=len(groups))
    unsent: list[str] = []  # consoles of events that could not be encoded (refused here)

    def reject(line: str) -> None:
        report.rejections.append(line)
        on_reject(line)

    async def play(console: str, table: int, items: list[dict[str, Any]]) -> ConsoleStats:
        client = ConsoleClient(
            bus,
            tournament,
            table,
            console,
            first_seq=client_first(items),
            timeout=timeout,
            max_backoff=max_backoff,
            rng=rng,
            on_reject=reject,
            outbox=None
            if outbox is None
            else outbox.format(tournament=tournament, console=console),
            no_hub_timeout=no_hub_timeout,
        )
        async with client:
            done = max(0, client.next_seq - client_first(items)) if resume else 0
            report.restored += client.restored
            report.skipped += min(done, len(items))
            if on_answer is not None and done:
                on_answer(min(done, len(items)))
            for event in items[done:]:
                try:
                    answer = await client.submit(event)
                except CodecError as exc:  # an integer msgpack cannot carry (>= 2^64): the
                    # hub would refuse it as bad_schema; it cannot even be sent. No seq used.
                    unsent.append(console)
                    reject(f"table {table} event NOT SENT bad_schema: {exc}")
                    if on_answer is not None:
                        on_answer(1)
                    continue
                if on_answer is not None:
                    answer.add_done_callback(lambda _: on_answer(1))
                if pace > 0:
                    await asyncio.sleep(pace)
            await client.drain()
        return client.stats

    def client_first(items: list[dict[str, Any]]) -> int:
        first = items[0].get("seq")
        return first if type(first) is int and first >= 1 else 1

    started = time.perf_counter()
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(play(c, t, items)) for c, (t, items) in groups.items()]
    except ExceptionGroup as failed:  # one line for the whole replay: the first console's
        raise failed.exceptions[0] from None
    for task in tasks:
        stats = task.result()
        report.accepted += stats.accepted
        report.rejected += stats.rejected
        report.duplicates += stats.duplicates
        report.already += stats.already
        report.resent += stats.resent
    report.rejected += len(unsent)
    report.seconds = time.perf_counter() - started
    return report
