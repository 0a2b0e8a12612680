"""The console client: publish events, keep each in an outbox until the hub acknowledges it.

Protocol (docs/protocol.md §1): events go to ``dup:{tournament}:console:{table}`` as msgpack,
acks come back on ``dup:{tournament}:ack:{console}``. Pub/sub may lose messages, so:
- an event unacknowledged ``ack_timeout`` seconds after it was sent is sent again; the n-th
  resend of an event waits an extra full-jitter backoff
  ``uniform(0, min(max_backoff, ack_timeout * 2**n))`` so a hub recovering from an outage is not
  hit by every console at the same instant;
- ``ack_timeout`` adapts to the hub as TCP's retransmission timer does (``hub.client.acktimer``),
  measured on events acknowledged at their first send (Karn), or on resends the hub reports as
  duplicates (the first copy had arrived: the timer was too short);
- a ``seq_gap`` answer (the hub missed an earlier event) resends everything from ``expected``
  in order, at most once per ack timeout for the same ``expected`` (a pipelined burst answers
  many gaps at once; resending the burst for each would be quadratic);
- a rejection removes the event from the outbox and is reported, never retried;
- the console also listens on its table's error channel: an answer there naming this console
  (``wrong_channel``, ``unknown_table``: the console writes a table the hub does not give it)
  is a final refusal, as on the ack channel;
- with ``no_hub_timeout`` the console gives up (``ConsoleFailure``, one line) when an event has
  waited that long with nothing heard from any hub (``hub.client.hubwatch``), or at once when Redis
  refuses its publishes (an ACL user of another table): resending cannot help either;
- with ``outbox=FILE`` the outbox is also kept on disk (``hub.client.outbox``, SQLite): a console
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from redis.exceptions import NoPermissionError

from hub.bus.base import Subscription
from hub.bus.protocols import PubSubHashes
from hub.client.acks import Ack, ConsoleStats, describe_rejection
from hub.client.acktimer import AckTimer
from hub.client.hubwatch import ConsoleFailure, Silence, no_hub_message, where
from hub.client.outbox import Outbox
from hub.tasks import cancel_and_wait
from hub.wire.channels import Channels
from hub.wire.codec import CodecError, pack, unpack

__all__ = ["ConsoleClient", "ack_channel", "console_channel"]

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
WARN_AFTER_SENDS = 3


def console_channel(tournament: str, table: int) -> str:
    return Channels(tournament).console(table)


def ack_channel(tournament: str, console: str) -> str:
    return Channels(tournament).ack(console)


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
        self.timer = AckTimer(timeout, max_backoff, rng or random.Random())
        self._clock = clock
        self._on_reject = on_reject
        self._channel = console_channel(tournament, table)
        self._outbox: dict[int, _Pending] = {}  # insertion order is seq order
        self._changed = asyncio.Condition()
        self._wakeup = asyncio.Event()
        self._send_lock = asyncio.Lock()
        self._gap_resends: dict[int, float] = {}
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
        self.failure: ConsoleFailure | None = None  # set when it gave up (see hub.client.hubwatch)

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
        """Seconds to wait for an ack before sending again (``hub.client.acktimer``)."""
        return self.timer.ack_timeout

    def observe_ack_delay(self, seconds: float) -> None:
        """One ack delay sample for the adaptive timer."""
        self.timer.observe(seconds)

    def resend_delay(self, sends: int) -> float:
        """Seconds to wait for an ack after an event's ``sends``-th transmission."""
        return self.timer.resend_delay(sends)

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
                self.timer.back_off()  # Karn: new events wait longer until a clean sample
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
