"""Topic store: the current payload of every topic, its seq, and a short history of deltas.

The ingest ``put``s whole payloads; the store turns each change into a top-level delta with the
next seq. Edges ``apply`` the deltas they receive on the feed channel and notice gaps. Either
side can answer a resuming client from ``since`` (missed deltas) or ``snapshot``.

Wire names shared by ingest and edges (DESIGN §2):
- feed channel ``dup:{tournament}:feed``: one ``encode_update`` message per update;
- snapshot hash ``dup:{tournament}:topics``: field ``"{audience}|{topic}"`` →
  ``pack({"seq", "data"})``, so an edge can start (or heal a gap) without the ingest.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hub.bus import Bus
from hub.codec import CodecError, pack, unpack

__all__ = [
    "HISTORY",
    "TopicKey",
    "TopicStore",
    "Update",
    "control_channel",
    "decode_snapshot",
    "decode_update",
    "encode_snapshot",
    "encode_update",
    "feed_channel",
    "load_snapshots",
    "snapshot_field",
    "snapshots_key",
]

TopicKey = tuple[str, str]
"""``(audience, topic)``: audience is ``"public"`` or ``"live"``."""

HISTORY = 256
"""Deltas kept per topic for resuming clients; older resumes get a snapshot."""

_MISSING = object()


@dataclass(frozen=True, slots=True)
class Update:
    """One change of one topic. ``full``: ``data`` is the whole payload (a snapshot)."""

    audience: str
    topic: str
    seq: int
    data: dict[str, Any]
    removed: tuple[str, ...] = ()
    full: bool = False

    @property
    def key(self) -> TopicKey:
        return (self.audience, self.topic)


class _Topic:
    __slots__ = ("history", "payload", "seq")

    def __init__(self, history: int) -> None:
        self.seq = 0
        self.payload: dict[str, Any] = {}
        self.history: deque[Update] = deque(maxlen=history)


class TopicStore:
    """Per-topic state; synchronous so that reading a snapshot and subscribing never race."""

    def __init__(self, history: int = HISTORY) -> None:
        self._history = history
        self._topics: dict[TopicKey, _Topic] = {}

    def _topic(self, key: TopicKey) -> _Topic:
        topic = self._topics.get(key)
        if topic is None:
            topic = self._topics[key] = _Topic(self._history)
        return topic

    def keys(self) -> Iterable[TopicKey]:
        return self._topics.keys()

    def seq(self, key: TopicKey) -> int:
        topic = self._topics.get(key)
        return 0 if topic is None else topic.seq

    def snapshot(self, key: TopicKey) -> tuple[int, dict[str, Any]]:
        """``(seq, payload)``; ``(0, {})`` for a topic that has no payload yet."""
        topic = self._topics.get(key)
        if topic is None:
            return 0, {}
        return topic.seq, dict(topic.payload)

    def put(self, key: TopicKey, payload: Mapping[str, Any]) -> Update | None:
        """Record the topic's new payload; the delta to publish, or None if nothing changed."""
        topic = self._topic(key)
        new = dict(payload)
        if topic.seq == 0:
            update = Update(key[0], key[1], 1, new, (), True)
        else:
            old = topic.payload
            data = {k: v for k, v in new.items() if old.get(k, _MISSING) != v}
            removed = tuple(k for k in old if k not in new)
            if not data and not removed:
                return None
            update = Update(key[0], key[1], topic.seq + 1, data, removed, False)
        topic.seq = update.seq
        topic.payload = new
        topic.history.append(update)
        return update

    def seed(self, key: TopicKey, seq: int, payload: Mapping[str, Any]) -> Update:
        """Set a topic's state outright (restart, edge start, gap repair); returns it as a
        full update so edges can send it to clients as a snapshot. Later ``put``s continue
        from ``seq``, so clients never see seqs go back after an ingest restart."""
        if seq < 0:
            raise ValueError(f"seq must not be negative, not {seq}")
        topic = self._topic(key)
        update = Update(key[0], key[1], seq, dict(payload), (), True)
        topic.seq = seq
        topic.payload = dict(payload)
        topic.history.clear()
        topic.history.append(update)
        return update

    def apply(self, update: Update) -> bool:
        """Apply an update from the feed channel. False: it reveals a gap and nothing changed
        (reload the topic's snapshot). Updates at or below the current seq are ignored."""
        topic = self._topic(update.key)
        if update.full:
            if update.seq >= topic.seq:
                self.seed(update.key, update.seq, update.data)
            return True
        if update.seq <= topic.seq:
            return True
        if update.seq != topic.seq + 1:
            return False
        payload = dict(topic.payload)
        payload.update(update.data)
        for name in update.removed:
            payload.pop(name, None)
        topic.seq = update.seq
        topic.payload = payload
        topic.history.append(update)
        return True

    def since(self, key: TopicKey, seq: int) -> list[Update] | None:
        """Updates after ``seq``; None when the history no longer covers it (send a snapshot)."""
        topic = self._topics.get(key)
        current = 0 if topic is None else topic.seq
        if seq == current:
            return []
        if topic is None or seq > current or seq < 0:
            return None
        history = topic.history
        if not history or history[0].seq > seq + 1:
            return None
        return [u for u in history if u.seq > seq]


# -- wire formats -----------------------------------------------------------------------------


def feed_channel(tournament: str) -> str:
    return f"dup:{tournament}:feed"


def control_channel(tournament: str) -> str:
    return f"dup:{tournament}:control"


def snapshots_key(tournament: str) -> str:
    return f"dup:{tournament}:topics"


def snapshot_field(key: TopicKey) -> str:
    return f"{key[0]}|{key[1]}"


def encode_update(update: Update) -> bytes:
    return pack(
        {
            "audience": update.audience,
            "topic": update.topic,
            "seq": update.seq,
            "data": update.data,
            "removed": list(update.removed),
            "full": update.full,
        }
    )


def decode_update(data: bytes) -> Update:
    """Raises ``CodecError`` for anything that is not an encoded update."""
    msg = unpack(data)
    try:
        audience, topic, seq = msg["audience"], msg["topic"], msg["seq"]
        payload, removed, full = msg["data"], msg.get("removed", []), msg.get("full", False)
    except (TypeError, KeyError) as exc:
        raise CodecError(f"not a feed update: {exc}") from exc
    if not (
        isinstance(audience, str)
        and isinstance(topic, str)
        and isinstance(seq, int)
        and isinstance(payload, dict)
        and isinstance(removed, list)
        and all(isinstance(name, str) for name in removed)
    ):
        raise CodecError("not a feed update: wrong field types")
    return Update(audience, topic, seq, payload, tuple(removed), bool(full))


def encode_snapshot(seq: int, payload: Mapping[str, Any]) -> bytes:
    return pack({"seq": seq, "data": dict(payload)})


def decode_snapshot(data: bytes) -> tuple[int, dict[str, Any]]:
    msg = unpack(data)
    if not (isinstance(msg, dict) and isinstance(msg.get("seq"), int)):
        raise CodecError("not a topic snapshot")
    payload = msg.get("data")
    if not isinstance(payload, dict):
        raise CodecError("not a topic snapshot: data is not a map")
    return msg["seq"], payload


def _parse_field(field: str) -> TopicKey | None:
    audience, sep, topic = field.partition("|")
    return (audience, topic) if sep and audience and topic else None


async def load_snapshots(bus: Bus, tournament: str) -> dict[TopicKey, tuple[int, dict[str, Any]]]:
    """Every topic snapshot the ingest persisted; malformed entries are skipped."""
    raw = await bus.hgetall(snapshots_key(tournament))
    result: dict[TopicKey, tuple[int, dict[str, Any]]] = {}
    for field, value in raw.items():
        key = _parse_field(field)
        if key is None:
            continue
        try:
            result[key] = decode_snapshot(value)
        except CodecError:
            continue
    return result
