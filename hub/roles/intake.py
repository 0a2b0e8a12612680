"""The ingest's intake: one subscription per table, read into fair batches.

One console flooding its own channel (issue #20: 300-KB maps, or a million tiny bad events, at
full rate) must not stall the other tables. So isolation is at every level:

- Redis: each table's console channel is its own subscription, on its own connection, with
  its own output buffer, read at most at ``TABLE_RATE``. A flood queues behind itself only,
  in Redis; past Redis's ``client-output-buffer-limit pubsub`` Redis cuts that one
  connection, which resubscribes at once (``RedisSubscription``) while the other tables'
  connections carry on. So a flood costs the ingest a bounded share of its CPU.
- The hub: each subscription buffers at most ``TABLE_BUFFER`` messages and ``TABLE_BYTES``
  bytes; past either, new messages of that table are dropped and counted (a console resends
  what was not acknowledged, so a dropped message is delayed, never lost).
- The batch: ``take`` builds each batch round-robin over the tables with messages waiting,
  at most a fair share of the batch from each, so a table with one event waits for at most
  one share of the flooding table's messages; the batch is then applied in arrival order.
  Refused messages count toward their table's share like any other, and their answers go
  out in the same batch as the others' acks.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Sequence

from hub.bus.base import BufferedSubscription, Message, ReadRate, Subscription

__all__ = ["ERROR_LOGS", "MIN_SHARE", "TABLE_BUFFER", "TABLE_BYTES", "FairIntake", "PerSecond"]

log = logging.getLogger("duplicast.ingest")

TABLE_BUFFER = 4096
"""Messages held per table while the ingest works (a table's consoles have at most a window of
events in flight each; more is a flood)."""
TABLE_BYTES = 4 * 1024 * 1024
"""Bytes held per table: 4,000 legitimate events, or a dozen 300-KB floods."""
TABLE_RATE = ReadRate(messages=4000, bytes=4 * 1024 * 1024, burst=1.0)
"""How fast one table's channel is read at most: 4,000 legitimate events a second, far above
what a table's consoles send (or resend after an outage: a window each). A flood past it stays
in Redis, which cuts that one connection at its pubsub output-buffer limit (it resubscribes at
once): a flood costs the ingest's CPU this much at most, whatever its rate."""
MIN_SHARE = 16
"""Fewest messages a busy table may put in one batch, however many tables are busy."""
DROP_LOG_EVERY = 5.0  # seconds between two warnings about one table's drops
ERROR_LOGS = 20
"""Undecodable messages logged per table per second; also answered per second per table while
the table floods (more waiting than a batch took: ``FairIntake.flooding``), else every one."""
KEYS = 4096  # tables a ``PerSecond`` remembers at once


def _arrival(message: Message) -> float:
    return message.arrived


class FairIntake:
    """Waits on several subscriptions at once and hands out fair batches of their messages."""

    def __init__(self, subs: Sequence[Subscription], *, batch: int) -> None:
        self.subs: list[BufferedSubscription] = []
        for sub in subs:
            if not isinstance(sub, BufferedSubscription):
                raise TypeError(f"a fair intake needs buffered subscriptions, not {sub!r}")
            self.subs.append(sub)
        self.batch = batch
        self._ready = asyncio.Event()
        # The subscriptions that said something (a message, their end) since a round last
        # found them empty: a round, ``pending`` and ``take`` look at these only, never at
        # every table's (at 60 tables that scan cost ~60 µs an event, at 120 ~120; measured).
        # Every one at first: what was buffered or ended before us is seen by the first round.
        self._woken: set[int] = set(range(len(self.subs)))
        self._ended: set[int] = set()  # subscriptions that ended
        self._unreported: set[int] = set()  # drops not logged yet (``DROP_LOG_EVERY``)
        for i, sub in enumerate(self.subs):
            sub.notify(functools.partial(self._wake, i))
        self._turn = 0  # which busy table goes first in the next round
        self.flooding: set[str] = set()  # channels of the last batch that flood
        self._reported = [0] * len(self.subs)  # drops already logged, per subscription
        self._logged = [0.0] * len(self.subs)  # when, per subscription (monotonic)

    def _wake(self, i: int) -> None:
        self._woken.add(i)
        self._ready.set()

    @property
    def pending(self) -> int:
        """Messages received and not yet taken, all tables."""
        subs = self.subs
        return sum(subs[i].pending for i in self._woken)

    @property
    def dropped(self) -> int:
        """Messages dropped because their table's buffer was full, all tables."""
        return sum(sub.dropped for sub in self.subs)

    @property
    def resubscribed(self) -> int:
        """Times a subscription was cut (by Redis, or a lost connection) and subscribed again."""
        return sum(getattr(sub, "reconnects", 0) for sub in self.subs)

    async def take(self) -> list[Message]:
        """The next fair batch, waiting for one; ``[]`` once every subscription has ended."""
        while True:
            self._ready.clear()
            batch = self._round()
            if batch:
                return batch
            if len(self._ended) == len(self.subs):
                return []
            await self._ready.wait()

    def _round(self) -> list[Message]:
        """Up to ``batch`` messages: round-robin over the busy tables, starting one further
        each time, an equal share (never under ``MIN_SHARE``) from each; what the tables with
        less waiting left unused is shared again among the others (a full batch whenever
        enough waits: batching is what makes the ingest fast)."""
        subs, woken = self.subs, self._woken
        busy = sorted(i for i in woken if subs[i].pending)
        if len(busy) < len(woken):  # woken with nothing waiting: drained (by the last round:
            # forgotten here, so a round is what sees an ended one's end and error), or ended
            for i in [i for i in woken if not subs[i].pending]:
                woken.discard(i)
                if subs[i].closed:
                    self._ended.add(i)
                subs[i].take_nowait()  # an error that ended a subscription is raised here
        if not busy:
            return []
        start = self._turn % len(busy)
        self._turn += 1
        order = [self.subs[i] for i in busy[start:] + busy[:start]]
        # a flood: read at its rate limit, or more waiting than a batch takes (below)
        self.flooding = {sub.pattern for sub in order if sub.throttled}
        batch: list[Message] = []
        while order and len(batch) < self.batch:  # a share each; what is left, shared again
            share = max(MIN_SHARE, (self.batch - len(batch)) // len(order))
            for sub in order:
                batch.extend(sub.take_nowait(min(share, self.batch - len(batch))))
                if len(batch) >= self.batch:
                    break
            order = [sub for sub in order if sub.pending]
        self.flooding.update(sub.pattern for sub in order)
        self._report_drops(busy)
        # Fair in what it takes, in arrival order within: events of different tables keep the
        # order they reached the ingest in (a final's first deal after the groups' last one),
        # as one subscription for all tables kept it. Stable: a table's own order stands.
        batch.sort(key=_arrival)
        return batch

    def _report_drops(self, busy: list[int]) -> None:
        """A warning per flooding table at most every ``DROP_LOG_EVERY`` seconds (a table
        drops only while its buffer is full: it is busy; a drop not logged yet is kept)."""
        now = time.monotonic()
        unreported = self._unreported
        for i in (*busy, *unreported) if unreported else busy:
            sub = self.subs[i]
            new = sub.dropped - self._reported[i]
            if not new:
                unreported.discard(i)
            elif now - self._logged[i] < DROP_LOG_EVERY:
                unreported.add(i)
            else:
                unreported.discard(i)
                self._reported[i] = sub.dropped
                self._logged[i] = now
                log.warning(
                    "%s: %d message(s) dropped, its queue full (%d messages, %d bytes): a "
                    "console floods it; its consoles resend what was not acknowledged",
                    sub.pattern,
                    new,
                    sub.pending,
                    sub.pending_bytes,
                )


class PerSecond:
    """At most ``limit`` per key per one-second window (a fixed window: cheap, and exact
    enough to keep a flood from costing more than a sample of answers)."""

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self._clock = clock
        self._windows: dict[object, list[float]] = {}  # key -> [window start, used]

    def allow(self, key: object) -> bool:
        now = self._clock()
        window = self._windows.get(key)
        if window is None or now - window[0] >= 1.0:
            if len(self._windows) >= KEYS:
                self._windows.clear()
            window = self._windows[key] = [now, 0]
        if window[1] >= self.limit:
            return False
        window[1] += 1
        return True
