"""The feed: every topic's updates as client frames, encoded once, with the seqs that order them.

The ingest turns each ``TopicChange`` of the engine into one ``Frame``: the client message
(``snapshot`` or ``delta`` with a JSON Patch) encoded once in JSON and once in msgpack. The same
bytes go to the ingest's own clients, onto the feed channel for the edges, and from an edge to
its clients: nobody decodes or re-encodes them on the way.

A store keeps, per topic, its seq and a short history of delta frames, which answers a client
that subscribes or resumes (``catch_up``): the deltas it missed, or a snapshot and the deltas
after it. ``IngestFeed`` owns the payloads and encodes a snapshot only when one is needed (a new
subscriber, a REST read, a persisted copy). ``EdgeFeed`` holds the bytes it received: a snapshot
frame from the snapshot hash and the delta frames after it.

Wire names (DESIGN §2), declared once in ``hub.wire.channels.Channels``:
- feed channel ``dup:{t}:feed``: one ``encode_feed`` message per update, none over
  ``FEED_MESSAGE_LIMIT`` bytes (``feed_messages``): a snapshot too big for it goes into the
  snapshot hash first and the channel carries a notice of it (the edges read it there); a
  delta too big for it goes in parts, which the edges put together in order (``FeedReader``);
- snapshot hash ``dup:{t}:topics``: field ``"{audience}|{topic}"`` → ``encode_snapshot``;
  written lazily: when an edge asks (at its start, to heal a gap, to refresh), and on stop;
- seq hash ``dup:{t}:topic-seqs``: field → the topic's seq, written every ``SNAPSHOT_EVERY``
  deltas of a topic (a few bytes, nothing encoded): a restarted ingest continues each topic
  ``SNAPSHOT_EVERY`` above it, with a snapshot, so a seq a client has seen is never reused.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
import orjson

from hub.wire.codec import CodecError, from_json, pack, pack_plain, to_json, unpack
from hub.wire.frames import Outgoing
from hub.wire.patch import TopicChange, clone, diff
from hub.wire.topics import TopicKey

__all__ = [
    "CATCH_UP_DELTAS",
    "FEED_MESSAGE_LIMIT",
    "HISTORY",
    "SNAPSHOT_EVERY",
    "FeedMessage",
    "FeedReader",
    "Frame",
    "IngestFeed",
    "PayloadFeed",
    "TopicKey",
    "decode_feed",
    "decode_snapshot",
    "encode_feed",
    "encode_snapshot",
    "feed_messages",
]

HISTORY = 256
"""Delta frames kept per topic for resuming clients; older resumes get a snapshot."""

CATCH_UP_DELTAS = 8
"""The most deltas a (re)subscribing client is sent for one topic (docs/protocol.md §2): a
client that missed more gets the topic's snapshot instead, and an edge whose stored snapshot
is more deltas behind makes a fresh one first (``EdgeFeed``). So a subscribe costs at most
``1 + CATCH_UP_DELTAS`` frames per topic, whatever the history (issue #30 item 1)."""

SNAPSHOT_EVERY = 64
"""A topic's seq is persisted at least every this many deltas, so a restarted ingest that
continues at (persisted seq + SNAPSHOT_EVERY) never reuses a seq a client has seen."""

FEED_MESSAGE_LIMIT = 64 * 1024
"""The most bytes one feed channel message carries. Redis queues every message for every
subscriber: at 720 tables a whole traveller or standings document (1-1.75 MB, in both formats)
went out as one message, and Redis's pub/sub output limit cut the edges' subscriptions."""

FORMATS = ("json", "msgpack")
WIRE = 2
_ENVELOPE = 256  # more than a feed message's envelope takes, its frame's bytes aside


def snapshot_field(key: TopicKey) -> str:
    return f"{key[0]}|{key[1]}"


# -- frames -----------------------------------------------------------------------------------


class Frame:
    """One update of one topic as its clients receive it, in every wire format."""

    __slots__ = ("full", "outs", "seq")

    def __init__(self, seq: int, full: bool, outs: dict[str, Outgoing]) -> None:
        self.seq = seq
        self.full = full
        self.outs = outs

    @classmethod
    def encode(cls, message: dict[str, Any]) -> Frame:
        return cls._of(message, message["seq"], message["type"] == "snapshot")

    @classmethod
    def _of(cls, message: dict[str, Any], seq: int, full: bool) -> Frame:
        text = Outgoing(_json(message), True, seq)
        binary = Outgoing(pack_plain(message), False, seq)
        return cls(seq, full, {"json": text, "msgpack": binary})

    @classmethod
    def snapshot(cls, topic: str, seq: int, payload: dict[str, Any]) -> Frame:
        return cls._of({"type": "snapshot", "topic": topic, "seq": seq, "data": payload}, seq, True)

    @classmethod
    def delta(cls, topic: str, seq: int, patch: list[dict[str, Any]]) -> Frame:
        """(Every flush's frames: one per topic changed, ~6 an event at 60 tables.)"""
        return cls._of({"type": "delta", "topic": topic, "seq": seq, "patch": patch}, seq, False)


class FeedMessage(msgspec.Struct, frozen=True):  # (made in C: one per frame)
    key: TopicKey
    frame: Frame
    # A notice: the snapshot at ``frame.seq`` (``frame.outs`` empty) is in the snapshot hash.
    stored: bool = False


def _json(message: dict[str, Any]) -> bytes:
    """The hot path's JSON: orjson (the same compact UTF-8 bytes, several times faster); the
    codec's encoder for anything orjson refuses (an integer beyond 64 bits)."""
    try:
        return orjson.dumps(message)
    except (TypeError, orjson.JSONEncodeError):
        return to_json(message)


def encode_feed(key: TopicKey, frame: Frame) -> bytes:
    """A feed channel message: the frame's bytes behind a small envelope."""
    outs = frame.outs
    return _envelope(key, frame, outs["json"].payload, outs["msgpack"].payload)


def _envelope(key: TopicKey, frame: Frame, j: bytes, m: bytes) -> bytes:
    return pack_plain(
        {"v": WIRE, "a": key[0], "t": key[1], "s": frame.seq, "f": frame.full, "j": j, "m": m}
    )


def feed_messages(
    key: TopicKey, frame: Frame, limit: int = FEED_MESSAGE_LIMIT
) -> tuple[list[bytes], bool]:
    """One frame as feed channel messages, none over ``limit`` bytes, and whether the snapshot
    hash must hold the frame before they go out: the frame whole when it fits; a snapshot that
    does not as a notice of it (``stored``: True, the edges read it from the hash); a delta
    that does not in parts of its message, in order (``FeedReader`` puts them together)."""
    outs = frame.outs
    j, m = outs["json"].payload, outs["msgpack"].payload
    if len(j) + len(m) + len(key[1]) + _ENVELOPE <= limit:
        return [_envelope(key, frame, j, m)], False
    if frame.full:
        notice = {"v": WIRE, "a": key[0], "t": key[1], "s": frame.seq, "f": True, "h": True}
        return [pack(notice)], True
    whole = encode_feed(key, frame)
    step = limit - len(key[1]) - _ENVELOPE
    count = -(-len(whole) // step)
    return [
        pack({"v": WIRE, "a": key[0], "t": key[1], "s": frame.seq, "i": i, "n": count, "b": b})
        for i, b in enumerate(whole[at : at + step] for at in range(0, len(whole), step))
    ], False


class FeedReader:
    """Reads the feed channel's messages in their order: a frame sent in parts comes out with
    its last part; a part missing (a subscription cut) drops the frame, and the next frame of
    its topic reveals the gap (healed as any other)."""

    def __init__(self) -> None:
        self._parts: dict[TopicKey, tuple[int, list[bytes]]] = {}

    def read(self, data: bytes) -> FeedMessage | None:
        """The message's frame (None: a part, the frame not complete yet). Raises
        ``CodecError``."""
        msg = unpack(data)
        if not isinstance(msg, dict) or msg.get("v") != WIRE:
            raise CodecError("not a feed message of this version")
        if "n" not in msg:
            return _decode(msg)
        a, t, s, i, n, b = (msg.get(f) for f in ("a", "t", "s", "i", "n", "b"))
        if not (
            isinstance(a, str)
            and isinstance(t, str)
            and type(s) is int
            and type(i) is int
            and type(n) is int
            and isinstance(b, bytes)
        ):
            raise CodecError("not a feed message part: wrong field types")
        key = (a, t)
        seq, parts = self._parts.get(key, (s, []))
        if i == 0:
            seq, parts = s, []
        if seq != s or i != len(parts):  # a part lost: the frame is
            self._parts.pop(key, None)
            return None
        parts.append(b)
        if len(parts) < n:
            self._parts[key] = (s, parts)
            return None
        self._parts.pop(key, None)
        return decode_feed(b"".join(parts))


def decode_feed(data: bytes) -> FeedMessage:
    """Reads the envelope only; the frame bytes stay as they are. Raises ``CodecError``."""
    msg = unpack(data)
    if not isinstance(msg, dict) or msg.get("v") != WIRE:
        raise CodecError("not a feed message of this version")
    return _decode(msg)


def _decode(msg: dict[str, Any]) -> FeedMessage:
    a, t, s, j, m = msg.get("a"), msg.get("t"), msg.get("s"), msg.get("j"), msg.get("m")
    if msg.get("h") and isinstance(a, str) and isinstance(t, str) and type(s) is int:
        return FeedMessage((a, t), Frame(s, True, {}), stored=True)
    if not (
        isinstance(a, str)
        and isinstance(t, str)
        and isinstance(s, int)
        and not isinstance(s, bool)
        and isinstance(j, bytes)
        and isinstance(m, bytes)
    ):
        raise CodecError("not a feed message: wrong field types")
    outs = {"json": Outgoing(j, True, s), "msgpack": Outgoing(m, False, s)}
    return FeedMessage((a, t), Frame(s, bool(msg.get("f")), outs))


def encode_snapshot(frame: Frame) -> bytes:
    return pack_plain(
        {
            "v": WIRE,
            "s": frame.seq,
            "j": frame.outs["json"].payload,
            "m": frame.outs["msgpack"].payload,
        }
    )


def decode_snapshot(data: bytes) -> Frame:
    msg = unpack(data)
    if not isinstance(msg, dict) or msg.get("v") != WIRE or not isinstance(msg.get("s"), int):
        raise CodecError("not a topic snapshot of this version")
    j, m = msg.get("j"), msg.get("m")
    if not (isinstance(j, bytes) and isinstance(m, bytes)):
        raise CodecError("not a topic snapshot: wrong field types")
    seq = msg["s"]
    return Frame(seq, True, {"json": Outgoing(j, True, seq), "msgpack": Outgoing(m, False, seq)})


def snapshot_payload(frame: Frame) -> dict[str, Any]:
    """The payload inside a snapshot frame (decoded: for REST and restarts, not the hot path)."""
    message = from_json(frame.outs["json"].payload)
    data = message.get("data") if isinstance(message, dict) else None
    if not isinstance(data, dict):
        raise CodecError("snapshot frame without a data map")
    return data


# -- stores -----------------------------------------------------------------------------------


# A delta above this many JSON bytes is compared with its document whole, and the shorter sent
# (the snapshot's encoding costs ~1 µs per 100 bytes: only for the rare large deltas).
WHOLE_ABOVE = 8192


def _shorter_whole(topic: str, delta: Frame, payload: dict[str, Any]) -> Frame | None:
    """The snapshot of ``topic`` at ``delta``'s seq when ``delta`` is over ``WHOLE_ABOVE`` JSON
    bytes and the document whole is shorter; else None."""
    size = len(delta.outs["json"].payload)
    if size <= WHOLE_ABOVE:
        return None
    whole = Frame.snapshot(topic, delta.seq, payload)
    return whole if len(whole.outs["json"].payload) < size else None


class _Log:
    __slots__ = ("base", "deltas", "payload", "seq", "unsaved")

    def __init__(self) -> None:
        self.seq = 0
        self.base: Frame | None = None  # a snapshot frame at base.seq <= seq
        self.deltas: deque[Frame] = deque(maxlen=HISTORY)  # contiguous, ending at seq
        self.payload: dict[str, Any] | None = None  # decoded current payload (if known)
        self.unsaved = 0  # deltas since this topic's seq was last persisted


class _Store:
    """What both sides share: seqs, delta history, and catching a client up.

    ``live``: the store stands for the writer's current state. While it does not (a standby
    writer, one rebuilding, one that lost its lease; an edge that has not read the writer's
    snapshots yet), a subscriber is sent nothing rather than an empty or older snapshot, and
    a REST read of a topic it holds nothing good for is ``available() == False`` (DESIGN §7)."""

    def __init__(self, *, live: bool = True) -> None:
        self._logs: dict[TopicKey, _Log] = {}
        self.live = live

    def keys(self) -> Iterable[TopicKey]:
        return self._logs.keys()

    def seq(self, key: TopicKey) -> int:
        log = self._logs.get(key)
        return 0 if log is None else log.seq

    def _base(self, key: TopicKey, log: _Log) -> Frame | None:
        return log.base

    def catch_up(self, key: TopicKey, fmt: str, resume: int | None) -> list[Outgoing]:
        """What a client subscribing (``resume``: the last seq it has) gets first: the deltas
        it missed (at most ``CATCH_UP_DELTAS``), or a snapshot and the deltas after it (as
        many at most)."""
        log = self._logs.get(key)
        if log is None or log.seq == 0:
            if not self.live:  # "no data yet" is the writer's to say: send nothing
                return []
            return [Frame.snapshot(key[1], 0, {}).outs[fmt]]
        if resume is not None and resume > log.seq and self._lagging(key):
            return []  # the client is ahead of this copy: an older snapshot would go back
        if resume is not None and 0 <= resume <= log.seq:
            missed = _since(log, resume)
            if missed is not None and len(missed) <= CATCH_UP_DELTAS:
                return [f.outs[fmt] for f in missed]
        base = self._base(key, log)
        if base is None:
            return []
        return [base.outs[fmt], *(f.outs[fmt] for f in log.deltas if f.seq > base.seq)]

    async def ensure(self, key: TopicKey) -> None:
        """Before a read of ``key`` (REST): have what the writer has of it, if this store is
        a copy that never saw it (an edge: it asks the writer). The writer's own store makes
        any topic when read."""
        return None

    def _lagging(self, key: TopicKey) -> bool:
        """A client resumes ahead of this store's seq of ``key``: True if this store is a
        copy that lags the writer (send nothing); False for the writer itself, whose seq is
        the truth (the client's state is from another history: send the snapshot)."""
        return False

    def available(self, key: TopicKey) -> bool:
        """Whether a REST read of ``key`` can be answered now: the store is live, or it holds
        a good state of that topic (its last one). False: answer 503, not 404 or empty."""
        if self.live:
            return True
        log = self._logs.get(key)
        return log is not None and log.seq > 0 and log.base is not None

    def snapshot(self, key: TopicKey) -> tuple[int, dict[str, Any]]:
        """``(seq, payload)`` for REST; ``(0, {})`` for a topic with no data yet."""
        log = self._logs.get(key)
        if log is None or log.seq == 0:
            return 0, {}
        payload = self._payload(key, log)
        return (0, {}) if payload is None else (log.seq, payload)

    def _payload(self, key: TopicKey, log: _Log) -> dict[str, Any] | None:
        return log.payload


def _since(log: _Log, seq: int) -> list[Frame] | None:
    if seq == log.seq:
        return []
    if not log.deltas or log.deltas[0].seq > seq + 1:
        return None
    return [f for f in log.deltas if f.seq > seq]


class IngestFeed(_Store):
    """The ingest's side: turns engine changes into frames; knows every payload.

    It keeps a reference to each payload the change carries, not a copy: the engine edits its
    documents only while it computes the next changes, and the ingest publishes those before
    anything reads the store again, so the document always stands at the store's seq."""

    def __init__(
        self,
        materialize: Callable[[TopicKey], dict[str, Any] | None] | None = None,
        *,
        live: bool = True,
    ) -> None:
        super().__init__(live=live)
        self.materialize = materialize  # builds a topic the engine has not projected yet
        # Topics made between publishes for a reader here (a REST read, a catch-up), new to
        # the feed: the next publish sends each whole (``take_made``), so the edges have it
        # too (a released deal's public topic read here first, then never changed, was
        # otherwise never sent: an edge's site lacked the deal).
        self._made: dict[TopicKey, None] = {}
        # The topics at least SNAPSHOT_EVERY deltas past their persisted seq (``unsaved``
        # reads these, not every topic's log: a publish scanned them all, a cost that grew
        # with the tournament; issue #31).
        self._due: dict[TopicKey, None] = {}

    def _known(self, key: TopicKey) -> _Log | None:
        """The topic's log, with its payload: built by the engine now if nobody had asked
        for it yet (at seq 1 for a topic never sent; at its seq for one known from before a
        restart). Nothing is sent now: a topic new to the feed goes out whole at the next
        publish (``take_made``); one known from before a restart is healed by whoever follows
        it at its next change (a gap, then the snapshot)."""
        log = self._logs.get(key)
        if (log is None or log.payload is None) and self.materialize is not None:
            payload = self.materialize(key)
            if payload is not None:
                if log is None:
                    log = self._logs[key] = _Log()
                    log.seq = 1
                    self._made[key] = None
                log.payload, log.base = payload, None
                log.deltas.clear()
                log.unsaved = SNAPSHOT_EVERY  # persist the seq it stands at
                self._due[key] = None
        return log

    @property
    def made(self) -> bool:
        """Whether topics were made for a reader since the last publish (``take_made``)."""
        return bool(self._made)

    def take_made(self, moved: Iterable[TopicKey]) -> list[tuple[TopicKey, Frame]]:
        """The topics made for a reader since the last publish and not ``moved`` by this one
        (those went out as its changes), each as a whole frame at its seq; forgotten here."""
        made, self._made = self._made, {}
        for key in moved:
            made.pop(key, None)
        out = []
        for key in made:
            log = self._logs.get(key)
            frame = None if log is None else self._base(key, log)
            if frame is not None:
                out.append((key, frame))
        return out

    def catch_up(self, key: TopicKey, fmt: str, resume: int | None) -> list[Outgoing]:
        if not self.live:  # the payloads are none yet, or not the journal's
            return []
        self._known(key)
        return super().catch_up(key, fmt, resume)

    def available(self, key: TopicKey) -> bool:
        return self.live

    def snapshot(self, key: TopicKey) -> tuple[int, dict[str, Any]]:
        if not self.live:
            return 0, {}
        self._known(key)
        return super().snapshot(key)

    def publish(self, change: TopicChange) -> Frame | None:
        """The frame of one engine change (None: nothing a client would see changed)."""
        key = change.key
        log = self._logs.get(key)
        if log is None:
            log = self._logs[key] = _Log()
        if change.patch is None:  # new to the feed, or not sent since a restart: whole
            log.seq += 1
            log.payload = change.payload
            log.base = Frame.snapshot(key[1], log.seq, log.payload)
            log.deltas.clear()
            log.unsaved = SNAPSHOT_EVERY  # a new topic's seq is persisted at once
            self._due[key] = None
            return log.base
        if not change.patch:
            return None
        log.seq += 1
        frame = Frame.delta(key[1], log.seq, change.patch)
        log.payload = change.payload  # already moved by the patch
        big = len(frame.outs["json"].payload) > WHOLE_ABOVE  # (rare: asked here, not called)
        whole = _shorter_whole(key[1], frame, change.payload) if big else None
        if whole is not None:
            # Most of the document moved (a release re-ranks every group): the document
            # whole is shorter than its patch, for every client and on the channel.
            frame = log.base = whole
            log.deltas.clear()
        else:
            log.deltas.append(frame)
            log.base = None  # the next snapshot is encoded when someone needs it
        log.unsaved += 1
        if log.unsaved == SNAPSHOT_EVERY:
            self._due[key] = None
        return frame

    def _base(self, key: TopicKey, log: _Log) -> Frame | None:
        if log.base is None or log.base.seq != log.seq:
            if log.payload is None:
                return None
            log.base = Frame.snapshot(key[1], log.seq, log.payload)
        return log.base

    def restart(self) -> None:
        """A new engine takes over: every payload held is the old engine's; forget them (the
        seqs stay, so they never go back)."""
        for log in self._logs.values():
            log.payload, log.base = None, None
            log.deltas.clear()

    def seed(self, key: TopicKey, seq: int, payload: dict[str, Any] | None = None) -> None:
        """A topic as persisted before a restart: later changes continue after ``seq`` (with
        a snapshot: its payload, if not given, comes with the engine's first change)."""
        if seq < 0:
            raise ValueError(f"seq must not be negative, not {seq}")
        log = self._logs.get(key)
        if log is None:
            log = self._logs[key] = _Log()
        log.seq, log.payload, log.base = seq, payload, None
        log.deltas.clear()
        log.unsaved = 0
        self._due.pop(key, None)

    def unsaved(self, *, at_least: int = 1) -> list[TopicKey]:
        """Topics whose persisted seq is ``at_least`` deltas behind (from SNAPSHOT_EVERY up,
        what every publish asks: read from the topics due, not from every topic's log)."""
        if at_least >= SNAPSHOT_EVERY:
            logs = self._logs
            return [k for k in self._due if (log := logs[k]).unsaved >= at_least and log.seq > 0]
        return [k for k, log in self._logs.items() if log.unsaved >= at_least and log.seq > 0]

    def seqs(self, keys: Iterable[TopicKey]) -> dict[str, bytes]:
        """The seqs of ``keys`` for the seq hash (a restart continues above them); marks them
        saved. Cheap: no payload is encoded."""
        out: dict[str, bytes] = {}
        for key in keys:
            log = self._logs.get(key)
            if log is not None and log.seq > 0:
                out[snapshot_field(key)] = str(log.seq).encode()
                log.unsaved = 0
                self._due.pop(key, None)
        return out

    def snapshots(self, keys: Iterable[TopicKey]) -> dict[str, bytes]:
        """Encoded snapshots of ``keys`` for the snapshot hash (what edges start and heal
        from), built if need be; write their ``seqs`` with them."""
        out: dict[str, bytes] = {}
        for key in keys:
            log = self._known(key)
            if log is None or log.seq == 0:
                continue
            base = self._base(key, log)
            if base is None:
                continue
            out[snapshot_field(key)] = encode_snapshot(base)
        return out


class PayloadFeed(IngestFeed):
    """An ``IngestFeed`` given whole payloads rather than the engine's changes: each is diffed
    against the last (for feeds without an engine: benchmarks, tests, tools)."""

    def __init__(self) -> None:
        super().__init__(None)
        self._last: dict[TopicKey, dict[str, Any]] = {}

    def put(self, key: TopicKey, payload: dict[str, Any]) -> Frame | None:
        old = self._last.get(key)
        new = clone(payload)
        self._last[key] = new
        return self.publish(TopicChange(key, None if old is None else diff(old, new), new))
