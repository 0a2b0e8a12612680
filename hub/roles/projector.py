"""The read model in a process of its own: the journal replayed as it grows, the feed out.

With ``duplicast serve --role ingest --feed separate`` the ingest only decides, journals and
answers (its core is the write path's alone), and a projector (``--role projector``) follows
the journal with a blocking read, applies each record to its own engine with ``Engine.restore``
(the same effect the record had in the ingest: what makes a rebuild right makes this right),
and publishes the topic changes with the same ``FeedPublisher`` the ingest uses inline. What
the journal does not hold comes on ``dup:{t}:notes``: the refusals the operator desk lists and
the consoles' links. Deals are released by the projector's own clock, as the ingest's were.

A burst is applied record by record but published at most every ``FEED_INTERVAL``, and every
``CATCH_UP_INTERVAL`` while full pages of the journal wait (a burst, a restart): topics that
many records touched are diffed and sent once (catching up on 60,000 records: 9.0-9.4k ->
9.6-10.4k records/s, bench/ingest_load.py --feed paused, same run). One projector per
tournament publishes (a lease, ``dup:{t}:projector``); a second one waits, not ready, and
takes over when the lease is free.
Feed seqs continue across restarts and takeovers as they do across ingest restarts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from hub.bus.base import Bus
from hub.bus.lease import LeaseHolder
from hub.engine.core import Engine
from hub.roles.engine_store import UnusableSnapshot, restore_snapshot
from hub.roles.publisher import FeedPublisher
from hub.serve.feed import Frame, IngestFeed, TopicKey
from hub.tasks import bounded, cancel_and_wait
from hub.wire import codec
from hub.wire.channels import Channels

__all__ = ["Projector"]

log = logging.getLogger("duplicast.projector")

PAGE = 2000  # journal records read at once
FEED_INTERVAL = 0.02  # under a burst, the feed goes out at most this often
CATCH_UP_INTERVAL = 0.1  # and while catching up (full pages waiting): the feed at 10 Hz
LEASE_TTL = 5.0
STOP_STEP = 1.0


class Projector:
    """Follows the journal and the notes into ``engine``; publishes its feed."""

    def __init__(
        self,
        bus: Bus,
        engine: Engine,
        *,
        store: IngestFeed | None = None,
        on_frame: Callable[[TopicKey, Frame], None] | None = None,
        clock: Callable[[], float] = time.time,
        tick_interval: float = 0.25,
        lease_ttl: float = LEASE_TTL,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        self.bus = bus
        self.engine = engine
        self.names = Channels(engine.state.config.id)
        self.feed = FeedPublisher(bus, engine, store=store, on_frame=on_frame)
        self.clock = clock
        self.tick_interval = tick_interval
        self.lease = LeaseHolder(
            bus, self.names.projector_lease, name="projector", ttl=lease_ttl, log=log
        )
        self.on_lost = on_lost
        self.position = "0-0"  # the last journal record applied
        self.notes_position = "0-0"
        self.applied = 0  # journal records applied since start (the rebuild's included)
        self.ready = False
        self._tasks: list[asyncio.Task[None]] = []
        self._subs: list[Any] = []
        self._stopping = False

    @property
    def store(self) -> IngestFeed:
        return self.feed.store

    @property
    def standby(self) -> bool:
        """Another projector holds the lease: this one waits for it, not ready."""
        return self.lease.standby

    @property
    def lost(self) -> bool:
        """Another projector claimed the lease since this one held it: it stopped."""
        return self.lease.lost

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Take the lease and start; if another projector holds it, wait in the background."""
        self._stopping = False
        if await self.lease.claim():
            await self._run()
            return
        log.warning("standby: another projector holds %s", self.names.projector_lease)
        self._tasks.append(asyncio.create_task(self._wait_for_lease(), name="projector-standby"))

    async def _wait_for_lease(self) -> None:
        await self.lease.wait()
        await self._run()

    async def _run(self) -> None:
        await self.rebuild()
        sub = self.bus.subscribe(self.names.control)
        await sub.ready()
        self._subs.append(sub)
        for name, loop in (
            ("control", self._requests(sub)),
            ("journal", self._follow_journal()),
            ("notes", self._follow_notes()),
            ("release", self._ticker()),
            ("lease", self.lease.keep(self._lease_lost)),
        ):
            self._tasks.append(asyncio.create_task(loop, name=f"projector-{name}"))
        self.ready = True
        self.feed.serve()
        log.info("projector ready for %s at %s", self.engine.state.config.id, self.position)

    async def stop(self) -> None:
        was_ready, self.ready = self.ready, False
        self._stopping = True
        self.feed.withdraw()
        await cancel_and_wait(self._tasks, grace=STOP_STEP / 4, attempts=4)
        self._tasks.clear()
        subs, self._subs = self._subs, []
        if was_ready and not self.lost:
            await bounded(self.feed.save(), STOP_STEP, "saving the topic snapshots")
        if subs:
            closing = asyncio.gather(*(sub.aclose() for sub in subs), return_exceptions=True)
            await bounded(closing, STOP_STEP, "closing the projector's subscriptions")
        await self.lease.release(STOP_STEP)

    def _lease_lost(self) -> None:
        """Another projector took the lease (we were away too long): it publishes now."""
        log.critical("lost the projector lease %s; stopping", self.names.projector_lease)
        self.ready = False
        self._stopping = True
        self.feed.withdraw()
        if self.on_lost is not None:
            self.on_lost()

    async def rebuild(self) -> None:
        """The engine from its latest snapshot (written by the ingest) and the journal after
        it, the notes so far, then the feed from where it stood."""
        started = time.perf_counter()
        try:
            found = await restore_snapshot(self.bus, self.names, self.engine)
        except UnusableSnapshot as exc:
            log.warning("not using the engine snapshot (%s): replaying the journal", exc)
            self.position = "0-0"
        else:
            self.position = self.position if found is None else found
        while page := await self.bus.read(self.names.journal, self.position, PAGE):
            self._apply(page)
        while notes := await self.bus.read(self.names.notes, self.notes_position, PAGE):
            self._note(notes)
        self.engine.tick(self.clock())
        await self.feed.resume()
        self.engine.start_feed()
        await self.feed.publish()
        log.info(
            "projector rebuilt in %.2f s (%d journal records)",
            time.perf_counter() - started,
            self.applied,
        )

    # ------------------------------------------------------------------ loops
    def _apply(self, page: list[tuple[str, bytes]]) -> None:
        engine = self.engine
        for entry_id, data in page:
            try:
                engine.restore(codec.unpack(data), position=entry_id)
            except Exception:  # the ingest applied it: a record we cannot is a bug, not a stop
                log.exception("projector could not apply journal record %s", entry_id)
            self.position = entry_id
            self.applied += 1

    def _note(self, page: list[tuple[str, bytes]]) -> None:
        for entry_id, data in page:
            self.notes_position = entry_id
            try:
                note = codec.unpack(data)
            except codec.CodecError:
                note = None
            if not isinstance(note, dict):  # only the ingest writes notes: a bug, not a stop
                log.warning("projector skipped a malformed note %s", entry_id)
                continue
            refusal, links = note.get("refusal"), note.get("links")
            if isinstance(refusal, dict):
                self.engine.note_refusal(refusal)
            if isinstance(links, dict):
                self.engine.projecting.links({str(c): bool(up) for c, up in links.items()})

    async def _tail(self, stream: str, after: str) -> list[tuple[str, bytes]]:
        """The next entries of ``stream``; none while Redis is away beyond the bus's own
        retries (said once a second at most): the loops that follow the streams outlive any
        outage and go on from where they were."""
        try:
            return await self.bus.tail(stream, after, PAGE, wait=1.0)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("projector cannot read %s (%s); retrying", stream, exc)
            await asyncio.sleep(1.0)
            return []

    async def _follow_journal(self) -> None:
        published = time.monotonic()
        while not self._stopping:
            page = await self._tail(self.names.journal, self.position)
            if not page:
                continue
            self._apply(page)  # (no await while the engine changes: the feed sees it whole)
            # More waiting (a full page): publish at most every CATCH_UP_INTERVAL meanwhile.
            interval = CATCH_UP_INTERVAL if len(page) == PAGE else FEED_INTERVAL
            if time.monotonic() - published >= interval:
                await self._publish()
                published = time.monotonic()

    async def _follow_notes(self) -> None:
        while not self._stopping:
            page = await self._tail(self.names.notes, self.notes_position)
            if page:
                self._note(page)
                await self._publish()

    async def _ticker(self) -> None:
        while not self._stopping:
            await asyncio.sleep(self.tick_interval)
            self.engine.tick(self.clock())
            await self._publish()

    async def _requests(self, sub: Any) -> None:
        """Edges' snapshot requests (every other control command is the ingest's)."""
        async for message in sub:
            try:
                command = codec.unpack(message.data)
            except codec.CodecError:
                continue
            if isinstance(command, dict) and command.get("op") == "snapshots":
                self.feed.request(command)
                await self._publish()

    async def _publish(self) -> None:
        """The feed of what the journal and the notes moved, at the families' cadences (as the
        ingest's own feed: ``FeedPublisher.publish``'s ``paced``)."""
        try:
            await self.feed.publish(paced=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a long Redis outage: the loops carry on
            log.warning("feed publish failed (%s); continuing", exc)
