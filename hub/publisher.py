"""The feed's writer: an engine's topic changes out as frames, encoded once, in seq order.

Whoever holds the projecting engine owns one: the ingest itself (role ``all``, ``ingest``
with ``--feed inline``), or a projector that replays the journal in its own process
(``hub.projector``). It publishes every change as a frame on the feed channel, keeps each
topic's seq persisted at most ``SNAPSHOT_EVERY`` deltas behind (what a restart continues
above), and writes snapshots only when someone needs them: edges that start or heal ask on
the control channel (``{"op": "snapshots"}``), and a clean stop saves them all.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from hub import codec
from hub.bus.base import Bus
from hub.channels import Channels
from hub.engine.core import Engine
from hub.feed import SNAPSHOT_EVERY, Frame, IngestFeed, TopicKey, encode_feed

__all__ = ["ControlRequest", "FeedPublisher"]


class ControlRequest:
    """A command or request on the control channel, and where its answer goes (its
    ``reply`` channel suffix and ``id``; none: nobody waits for an answer)."""

    __slots__ = ("command", "id", "reply")

    def __init__(self, command: dict[str, Any]) -> None:
        rid, reply = command.get("id"), command.get("reply")
        ok = isinstance(rid, str) and isinstance(reply, str) and 0 < len(reply) <= 64
        self.command = command
        self.id: str = rid if ok else ""  # type: ignore[assignment]
        self.reply: str = reply if ok else ""  # type: ignore[assignment]

    def answer(self, names: Channels, ack: dict[str, Any]) -> tuple[str, bytes] | None:
        """(channel, message) of the answer; None when nobody asked for one."""
        if not self.reply:
            return None
        return names.reply(self.reply), codec.pack({**ack, "id": self.id})

    def topics(self, engine: Engine) -> list[TopicKey]:
        """The topics a ``snapshots`` request names that exist (every one when it names
        none), only this tournament's."""
        wanted = self.command.get("keys")
        if not isinstance(wanted, list):
            return list(engine.topic_keys())
        out = []
        for field in wanted[:10_000]:
            if isinstance(field, str):
                audience, _, name = field.partition("|")
                topic = engine.topics.get(name)
                if topic is not None and audience in topic.family.audiences:
                    out.append((audience, name))
        return out


class FeedPublisher:
    """Frames out of one engine's changes (see the module docstring)."""

    def __init__(
        self,
        bus: Bus,
        engine: Engine,
        *,
        store: IngestFeed | None = None,
        on_frame: Callable[[TopicKey, Frame], None] | None = None,
    ) -> None:
        self.bus = bus
        self.names = Channels(engine.config.id)
        self.store = store or IngestFeed()
        self.on_frame = on_frame
        self._lock = asyncio.Lock()  # feed messages go out in seq order
        self._requests: list[ControlRequest] = []
        self.use(engine)

    def use(self, engine: Engine) -> None:
        """Publish this engine's changes from now on (a rebuilt or new engine)."""
        self.engine = engine
        self.store.materialize = engine.materialize

    def request(self, command: dict[str, Any]) -> None:
        """An edge asked for snapshots: answered with the next ``publish``."""
        self._requests.append(ControlRequest(command))

    async def resume(self) -> None:
        """After a rebuild: the seqs continue above what was persisted. A crashed writer may
        have published up to SNAPSHOT_EVERY - 1 deltas past a topic's persisted seq: continue
        after all of them, with a snapshot. Until ``serve``, the store serves no client: its
        payloads are not the journal's yet."""
        self.store.live = False
        self.store.restart()
        for field, value in (await self.bus.hgetall(self.names.topic_seqs)).items():
            audience, _, topic = field.partition("|")
            if value.isdigit() and topic:
                self.store.seed((audience, topic), int(value) + SNAPSHOT_EVERY)

    def serve(self) -> None:
        """The writer is ready: its store stands for the journal; clients may be served."""
        self.store.live = True

    def withdraw(self) -> None:
        """The writer stops or lost its lease: its store no longer stands for the journal."""
        self.store.live = False

    @contextlib.asynccontextmanager
    async def _nothing(self) -> AsyncIterator[None]:
        yield

    async def publish(self, engine_lock: asyncio.Lock | None = None) -> None:
        """Turn what changed in the engine into frames (encoded once), persist the seqs and
        snapshots that are due, answer snapshot requests, and publish the frames in seq order.
        ``engine_lock``: held while the changes are taken (never a state half applied)."""
        async with self._lock:
            async with engine_lock or self._nothing():
                changes = self.engine.changes()
            frames: list[tuple[str, bytes]] = []
            for change in changes:
                frame = self.store.publish(change)
                if frame is None:
                    continue
                frames.append((self.names.feed, encode_feed(change.key, frame)))
                if self.on_frame is not None:
                    self.on_frame(change.key, frame)
            # Before the frames: a topic is never SNAPSHOT_EVERY deltas ahead of its persisted
            # seq (what a restart continues from).
            due = self.store.unsaved(at_least=SNAPSHOT_EVERY)
            requests, self._requests = self._requests, []
            asked = [key for request in requests for key in request.topics(self.engine)]
            if asked:  # edges start and heal from these
                await self.bus.hset_many(self.names.topics, self.store.snapshots(asked))
                due.extend(asked)
            if due:
                await self.bus.hset_many(self.names.topic_seqs, self.store.seqs(due))
            answers = [a for r in requests if (a := r.answer(self.names, {"ok": True})) is not None]
            if answers:
                await self.bus.publish_many(answers)
            if frames:
                await self.bus.publish_many(frames)

    async def save(self) -> None:
        """On a clean stop: every topic's seq, then its snapshot (what edges that start while
        no writer runs serve)."""
        async with self._lock:
            keys = list(self.store.keys())
            await self.bus.hset_many(self.names.topic_seqs, self.store.seqs(keys))
            await self.bus.hset_many(self.names.topics, self.store.snapshots(keys))
