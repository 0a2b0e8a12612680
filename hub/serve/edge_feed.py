"""An edge's copy of the writer's feed store: the frames it received, as bytes.

``EdgeFeed`` holds, per topic, a snapshot frame (from the snapshot hash, or a full frame of the
feed) and the delta frames after it; it decodes a payload only for a REST read, or to make a
fresh snapshot for a subscriber when the deltas after its stored one are more than
``CATCH_UP_DELTAS`` (a subscribe costs a bounded number of frames per topic, however busy the
topic: issue #30 item 1). The writer's side and what both share are in ``hub.serve.feed``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from hub.engine.families import made_on_demand
from hub.serve.feed import (
    CATCH_UP_DELTAS,
    Frame,
    _Log,
    _Store,
    decode_snapshot,
    snapshot_payload,
)
from hub.wire.codec import CodecError, from_json
from hub.wire.frames import Outgoing
from hub.wire.patch import PatchError, apply_patch
from hub.wire.topics import TopicKey

__all__ = ["EdgeFeed", "load_snapshots"]


class EdgeFeed(_Store):
    """An edge's side: frames as received, forwarded as bytes; payloads decoded only for REST.

    A copy of the writer's store: it may lag it (pub/sub delivery, a writer taking over), so a
    client that resumes ahead of it is sent nothing, and ``on_behind`` (the edge) is told to
    fetch that topic's snapshot from the writer. A topic it never saw of a family the writer
    makes only when asked (``Family.lazy``: the live travellers) is not "no data yet": a
    subscriber to it is sent nothing (never an empty snapshot it may not be), a REST read is
    unavailable, and ``on_unknown`` (the edge) asks the writer for it; once the writer said it
    has no data of it (``empty``), the empty snapshot at seq 0 is the answer. A frame taken
    from the feed is handed on to ``on_taken`` (the edge's fan-out)."""

    EMPTY_KEPT = 4096
    """The most topics kept as known to have no data (an edge given no tournament's topics
    may be asked for any name): past it, a subscriber to one more asks the writer again."""

    def __init__(
        self,
        *,
        live: bool = True,
        on_behind: Callable[[TopicKey], None] | None = None,
        on_taken: Callable[[TopicKey, Mapping[str, Outgoing]], None] | None = None,
        on_unknown: Callable[[TopicKey], Awaitable[None] | None] | None = None,
    ) -> None:
        super().__init__(live=live)
        self.on_behind = on_behind
        self.on_taken = on_taken
        self.on_unknown = on_unknown
        self.compactions = 0  # fresh snapshots made here for subscribers
        self._empty: set[TopicKey] = set()  # topics the writer has no data of

    def unknown(self, key: TopicKey) -> bool:
        """Is ``key`` a topic made on demand that this copy holds nothing of, not even the
        writer's word that it has no data (with an ``on_unknown`` to ask it)?"""
        log = self._logs.get(key)
        return (
            (log is None or log.seq == 0)
            and self.on_unknown is not None
            and key not in self._empty
            and made_on_demand(key)
        )

    def empty(self, key: TopicKey) -> bool:
        """The writer answered that it has no data of ``key``: True if this copy held nothing
        of it (its subscribers are due the empty snapshot at seq 0, as the writer's store
        answers)."""
        if not self.unknown(key):
            return False
        if len(self._empty) < self.EMPTY_KEPT:
            self._empty.add(key)
        return True

    def catch_up(self, key: TopicKey, fmt: str, resume: int | None) -> list[Outgoing]:
        if self.unknown(key) and self.on_unknown is not None:
            self.on_unknown(key)  # (the writer's answer goes to the subscribers)
            return []
        return super().catch_up(key, fmt, resume)

    def available(self, key: TopicKey) -> bool:
        """``_Store.available``, but a topic never seen that the edge asks the writer for is
        not answered yet (503), neither with an empty state nor as missing."""
        return not self.unknown(key) and super().available(key)

    async def ensure(self, key: TopicKey) -> None:
        if self.unknown(key) and self.on_unknown is not None:
            asked = self.on_unknown(key)
            if asked is not None:
                await asked

    def _base(self, key: TopicKey, log: _Log) -> Frame | None:
        """The snapshot a subscriber starts from: the stored one, or, when more than
        ``CATCH_UP_DELTAS`` deltas follow it, a fresh one at the topic's seq (its payload is
        the stored snapshot's with those deltas applied, as a REST read makes it; the next
        subscribers share it). One that cannot be made (the deltas after the stored snapshot
        are no longer all held, a patch that does not fit) leaves the stored one and has the
        writer's snapshot fetched."""
        base = log.base
        if base is None or log.seq - base.seq <= CATCH_UP_DELTAS:
            return base
        payload = self._payload(key, log)
        if payload is None:
            self._lagging(key)
            return base
        log.base = Frame.snapshot(key[1], log.seq, payload)
        self.compactions += 1
        self._trim(log)
        return log.base

    def _lagging(self, key: TopicKey) -> bool:
        if self.on_behind is not None:
            self.on_behind(key)
        return True

    def apply(self, key: TopicKey, frame: Frame) -> bool | None:
        """A frame from the feed channel: True, taken (and handed on to ``on_taken``, the
        clients'); False, it reveals a gap (nothing changed; reload the topic's snapshot);
        None, at or below the current seq (already in the snapshot the edge started from:
        ignored)."""
        log = self._logs.get(key)
        if log is None:
            log = self._logs[key] = _Log()
        if frame.seq <= log.seq:
            return None
        if frame.full:
            self._seed(key, log, frame)
        elif frame.seq != log.seq + 1 or log.base is None:
            return False
        else:
            log.seq = frame.seq
            log.deltas.append(frame)
            log.payload = None
            self._trim(log)
        if self.on_taken is not None:
            self.on_taken(key, frame.outs)
        return True

    def seed(self, key: TopicKey, frame: Frame) -> bool:
        """A snapshot from the hash. Newer than what the edge has: taken, and True (clients
        are sent it). Not newer, but newer than the snapshot the edge's deltas start from:
        the edge starts its deltas from it instead (``rebase``), and False (clients have all
        it holds). The hash usually answers a refresh at the seq the edge already reached,
        or a little behind it: a topic whose base never moved would ask again at every
        frame."""
        log = self._logs.get(key)
        if log is None:
            log = self._logs[key] = _Log()
        if frame.seq > log.seq or (frame.seq == log.seq and log.base is None):
            self._seed(key, log, frame)
            return True
        self.rebase(log, frame)
        return False

    @staticmethod
    def rebase(log: _Log, frame: Frame) -> None:
        """Start ``log``'s deltas from the snapshot ``frame`` (at or below its seq) when
        that is newer than its base and the deltas after it are all held."""
        base = log.base
        if base is None or frame.seq <= base.seq or frame.seq > log.seq:
            return
        deltas = log.deltas
        if deltas and deltas[0].seq > frame.seq + 1:  # the deltas just after it are gone
            return
        while deltas and deltas[0].seq <= frame.seq:
            deltas.popleft()
        log.base = frame

    @staticmethod
    def _trim(log: _Log) -> None:
        """Drop the deltas no client can be sent any more: those at or below the snapshot
        that are not among the last ``CATCH_UP_DELTAS`` (a resume is sent at most that many
        deltas; one that missed more gets the snapshot and the deltas after it). Kept: every
        delta after the snapshot (a fresh snapshot, a REST read and ``rebase`` are made from
        them) and the last few. Once a subscriber's fresh snapshot moved the base to the
        head, the ``HISTORY`` deltas before it were held for nothing: up to 256 a topic
        where 8 serve (issue #31, an edge's memory after a played session)."""
        base = log.base
        if base is None:
            return
        floor = min(base.seq, log.seq - CATCH_UP_DELTAS)
        deltas = log.deltas
        while deltas and deltas[0].seq <= floor:
            deltas.popleft()

    def _seed(self, key: TopicKey, log: _Log, frame: Frame) -> None:
        self._empty.discard(key)
        log.seq = frame.seq
        log.base = frame
        log.deltas.clear()
        log.payload = None

    def behind(self, key: TopicKey) -> int:
        """Deltas held after the snapshot (a new snapshot is worth asking for when many)."""
        log = self._logs.get(key)
        return 0 if log is None or log.base is None else log.seq - log.base.seq

    def drop(self, key: TopicKey) -> None:
        self._logs.pop(key, None)

    def _payload(self, key: TopicKey, log: _Log) -> dict[str, Any] | None:
        if log.payload is None and log.base is not None:
            base = log.base
            tail = [frame for frame in log.deltas if frame.seq > base.seq]
            if len(tail) != log.seq - base.seq:  # deltas after the snapshot are gone
                return None
            try:
                payload: Any = snapshot_payload(base)
                for frame in tail:
                    message = from_json(frame.outs["json"].payload)
                    payload = apply_patch(payload, message["patch"], in_place=True)
            except (CodecError, PatchError, KeyError, TypeError, IndexError, ValueError):
                return None
            if not isinstance(payload, dict):
                return None
            log.payload = payload
        return log.payload


def load_snapshots(raw: Mapping[str, bytes]) -> dict[TopicKey, Frame]:
    """The snapshot hash's entries; malformed ones are skipped."""
    out: dict[TopicKey, Frame] = {}
    for field, value in raw.items():
        audience, sep, topic = field.partition("|")
        if not (sep and audience and topic):
            continue
        try:
            out[(audience, topic)] = decode_snapshot(value)
        except CodecError:
            continue
    return out
