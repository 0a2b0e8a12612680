"""`ProgramFeed`: a secure-delay program output (issue #23, docs/protocol.md "The program feed");
`Program`: every output of a tournament, each its own delay (``[broadcast.outputs]``).

A second, delayed `Engine` is fed the same journal records as the real one, each once its
``at`` plus the delay has passed, so the commentators' content (hole cards, equity, actions
street by street, the split screens, the live table) replays at its original pace, ``delay``
seconds late. Its topics are served as the audience ``program``, each filtered through the
*real* engine's release state, the one source of what is public: a topic that would show
anything of a deal the real engine has not released shows the hold payload
(``{"held": true, "deal": d, "reason": "hand in progress"}``) until it is. The standings, the
seat rankings and the ticker are the delayed engine's public ones (released deals only, in the
delayed timeline); what is on air and the clock are the real engine's, now: the operator puts
program graphics on air as the others.

Pure and synchronous: the owner offers records (``offer``) and moves time (``advance``); the
real engine (``hub.engine.core``) does both, and its feed part's flush
(``hub.engine.projecting``) merges the outputs' ``changes()`` into its own.

A production may run several outputs (the stream 20 minutes behind, the venue's screens 5):
``Program`` holds one ``ProgramFeed`` per delay, each a delayed engine of its own serving the
audience of its output (``hub.wire.topics.program_outputs``: ``program`` for ``[broadcast]
delay``, ``program:NAME`` for another), each filtered through the one real release state.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, cast

from hub.engine.families.base import NOW, Family
from hub.wire.patch import TopicChange
from hub.wire.topics import LIVE, PROGRAM, PUBLIC, Topic, TopicKey, TopicSpace, program_outputs

__all__ = [
    "HOLD_REASON",
    "Program",
    "ProgramFeed",
    "hold_payload",
    "is_now",
    "source_of",
]

HOLD_REASON = "hand in progress"


def _declared(topic: Topic) -> Family:
    return cast(Family, topic.family)  # (a TopicSpace holds the families' declarations)


def source_of(topic: Topic | None) -> str | None:
    """The delayed engine's audience a program topic comes from (``Family.program``), or None:
    not a topic of the program feed, or one the real engine answers now."""
    if topic is None:
        return None
    source = _declared(topic).program
    return None if source == NOW else source


def is_now(topics: TopicSpace, name: str) -> bool:
    """Is ``name`` a program topic the real engine answers now (``Family.program`` NOW)?"""
    topic = topics.get(name)
    return topic is not None and _declared(topic).program == NOW


class DelayedFeed(Protocol):
    """The delayed engine's feed part (``hub.engine.projecting.Projecting``), as used here."""

    def flush(self) -> list[TopicChange]: ...
    def materialize(self, key: TopicKey) -> dict[str, Any] | None: ...


class Delayed(Protocol):
    """The delayed engine: an ``Engine`` (``hub.engine.core`` builds it), as used here."""

    @property
    def topics(self) -> TopicSpace: ...
    @property
    def projecting(self) -> DelayedFeed: ...
    def restore(self, record: Mapping[str, Any], position: str | None = None) -> Any: ...
    def tick(self, now: float) -> Any: ...
    def start_feed(self) -> None: ...
    def hold(self, keys: Iterable[TopicKey]) -> None: ...
    def on_demand(self, key: TopicKey) -> bool: ...
    def payload(self, key: TopicKey) -> dict[str, Any] | None: ...
    def snapshot(self) -> dict[str, Any]: ...
    def restore_snapshot(self, data: Mapping[str, Any]) -> None: ...


class Released(Protocol):
    """What the program reads of the real engine's release (``hub.engine.release.Release``)."""

    def deal_released(self, deal_no: int) -> bool: ...
    @property
    def released_count(self) -> int: ...


class Releases(Protocol):
    """What the program reads of the real engine: its release, read anew at each use (a
    restored snapshot replaces it)."""

    @property
    def release(self) -> Released: ...


def hold_payload(topic: Topic, deal: int) -> dict[str, Any]:
    """What a program topic shows while its moment belongs to a deal not yet released."""
    out: dict[str, Any] = {"held": True, "deal": deal, "reason": HOLD_REASON}
    for param, value in zip(topic.family.params, topic.args, strict=True):
        out[param] = value
    return out


def _deal_shown(topic: Topic, payload: Mapping[str, Any] | None) -> int | None:
    """The deal a payload of a held family shows: a deal's or traveller's own; a live table's
    hand in progress, else the hand it just finished (its idle state still tells of it)."""
    if "deal" in topic.family.params:
        return topic.arg("deal")
    if payload is None:
        return None
    deal = payload.get("deal")
    return payload.get("last_deal") if deal is None else deal


class ProgramFeed:
    """The delayed engine, the records it awaits, and which program topics hold which deal."""

    def __init__(
        self, delayed: Delayed, real: Releases, delay: float, audience: str = PROGRAM
    ) -> None:
        self.delayed = delayed
        self.real = real
        self.delay = delay
        self.audience = audience  # the output's: program, or program:NAME
        self.topics: TopicSpace = delayed.topics
        self.pending: deque[Mapping[str, Any]] = deque()  # records not yet due
        self.held: dict[str, int] = {}  # program topic -> the deal it holds, as last handed out
        self._releases = -1  # the real engine's release count last looked at

    # ----------------------------------------------------------------- time
    def offer(self, record: Mapping[str, Any]) -> None:
        """A journal record the real engine applied: due at ``record["at"] + delay``."""
        self.pending.append(record)

    def advance(self, now: float) -> None:
        """Apply every record due by ``now`` in journal order (a record waits for those before
        it), then the delayed engine's own tick (its releases, its clock) at ``now - delay``."""
        cutoff = now - self.delay
        pending, restore = self.pending, self.delayed.restore
        while pending and float(pending[0].get("at", 0.0)) <= cutoff:
            restore(pending.popleft())
        self.delayed.tick(cutoff)

    @property
    def behind(self) -> float:
        """The ``at`` of the oldest record not yet shown (inf: none waits)."""
        return float(self.pending[0].get("at", 0.0)) if self.pending else float("inf")

    # ----------------------------------------------------------------- the feed
    def start(self) -> None:
        self.delayed.start_feed()

    def changes(self) -> list[TopicChange]:
        """The program topics' changes since the last call: the delayed engine's, filtered,
        and the held topics whose deal the real engine released since (whole, as snapshots)."""
        out: list[TopicChange] = []
        for change in self.delayed.projecting.flush():
            audience, name = change.key
            topic = self.topics.get(name)
            if topic is None or source_of(topic) != audience:
                continue
            filtered = self._filtered(topic, change)
            if filtered is not None:
                out.append(filtered)
        if self.held and self.real.release.released_count != self._releases:
            self._releases = self.real.release.released_count
            for name, deal in list(self.held.items()):
                if not self.real.release.deal_released(deal):
                    continue
                payload = self.delayed.projecting.materialize(
                    (source_of(self.topics.get(name)) or LIVE, name)
                )
                if payload is not None:
                    del self.held[name]
                    out.append(TopicChange((self.audience, name), None, payload))
        return out

    def _filtered(self, topic: Topic, change: TopicChange) -> TopicChange | None:
        key = (self.audience, topic.name)
        if not _declared(topic).held:
            return TopicChange(key, change.patch, change.payload)
        deal = _deal_shown(topic, change.payload)
        if deal is not None and not self.real.release.deal_released(deal):
            if self.held.get(topic.name) == deal:
                return None  # still held: nothing a client sees moved
            self.held[topic.name] = deal
            return TopicChange(key, None, hold_payload(topic, deal))
        if self.held.pop(topic.name, None) is not None:  # the hold ends: the play, whole
            return TopicChange(key, None, change.payload)
        return TopicChange(key, change.patch, change.payload)

    def _source(self, key: TopicKey) -> TopicKey | None:
        """The delayed engine's topic a program topic comes from (None: not one)."""
        topic = self.topics.get(key[1])
        source = source_of(topic)
        return None if topic is None or source is None else (source, topic.name)

    def hold(self, keys: Iterable[TopicKey]) -> None:
        """``Engine.hold`` for this output's topics: their sources in the delayed engine."""
        self.delayed.hold(s for k in keys if k[0] == self.audience and (s := self._source(k)))

    def on_demand(self, key: TopicKey) -> bool:
        source = self._source(key)
        return source is not None and self.delayed.on_demand(source)

    def materialize(self, key: TopicKey) -> dict[str, Any] | None:
        """A program topic's payload now, its changes coming through ``changes()`` (None: not
        a program topic; the real engine answers ``onair`` and ``clock``)."""
        return self._read(key, self.delayed.projecting.materialize, note=True)

    def payload(self, key: TopicKey) -> dict[str, Any] | None:
        """A program topic's payload built from scratch (tests, the oracle)."""
        return self._read(key, self.delayed.payload, note=False)

    def _read(self, key: TopicKey, read: Any, *, note: bool) -> dict[str, Any] | None:
        topic = self.topics.get(key[1])
        source = source_of(topic)
        if topic is None or source is None:
            return None
        payload: dict[str, Any] | None = read((source, topic.name))
        if not _declared(topic).held or payload is None:
            return payload
        deal = _deal_shown(topic, payload)
        if deal is not None and not self.real.release.deal_released(deal):
            if note:
                self.held[topic.name] = deal
            return hold_payload(topic, deal)
        if note:
            self.held.pop(topic.name, None)
        return payload

    def topic_keys(self) -> list[TopicKey]:
        return [(self.audience, t.name) for t in self.topics if _declared(t).program is not None]

    def restore(self, engine: Mapping[str, Any], pending: list[Mapping[str, Any]]) -> None:
        """Take the delayed engine's snapshot and the records it awaits (``Program.snapshot``)."""
        self.delayed.restore_snapshot(engine)
        self.pending = deque(pending)


class Program:
    """Every program output of a tournament: one ``ProgramFeed`` per audience, the default
    output's (``program``) first. Outputs of one delay share one (``program_outputs``)."""

    def __init__(self, feeds: list[ProgramFeed]) -> None:
        self.feeds: dict[str, ProgramFeed] = {f.audience: f for f in feeds}

    @classmethod
    def of(cls, config: Any, real: Releases, delayed: Any) -> Program | None:
        """The outputs of ``config`` (None: no ``[broadcast] delay``), each with a delayed
        engine ``delayed()`` makes."""
        delays = {audience: delay for audience, delay in program_outputs(config).values()}
        if not delays:
            return None
        return cls([ProgramFeed(delayed(), real, d, a) for a, d in delays.items()])

    @property
    def default(self) -> ProgramFeed:
        return self.feeds[PROGRAM]

    def feed(self, audience: str) -> ProgramFeed | None:
        return self.feeds.get(audience)

    # ----------------------------------------------------------------- time
    def offer(self, record: Mapping[str, Any]) -> None:
        for feed in self.feeds.values():
            feed.pending.append(record)

    def advance(self, now: float) -> None:
        for feed in self.feeds.values():
            feed.advance(now)

    # ----------------------------------------------------------------- the feed
    def start(self) -> None:
        for feed in self.feeds.values():
            feed.start()

    def changes(self, real: list[TopicChange], topics: TopicSpace) -> list[TopicChange]:
        """Every output's changes: the real engine's public ``onair`` and ``clock`` changes
        (``real``) under each output's audience, then its delayed engine's, filtered."""
        now = [c for c in real if c.key[0] == PUBLIC and is_now(topics, c.key[1])]
        out: list[TopicChange] = []
        for audience, feed in self.feeds.items():
            out.extend(TopicChange((audience, c.key[1]), c.patch, c.payload) for c in now)
            out.extend(feed.changes())
        return out

    def topic_keys(self) -> list[TopicKey]:
        return [key for feed in self.feeds.values() for key in feed.topic_keys()]

    def hold(self, keys: Iterable[TopicKey]) -> None:
        keys = list(keys)
        for feed in self.feeds.values():
            feed.hold(keys)

    def on_demand(self, key: TopicKey) -> bool:
        feed = self.feeds.get(key[0])
        return feed is not None and feed.on_demand(key)

    # ----------------------------------------------------------------- snapshots
    def snapshot(self) -> dict[str, Any]:
        """The default output's delayed engine and records as before outputs existed
        (``delay``, ``engine``, ``pending``), the others' under ``outputs``. Every output
        awaits a tail of the same records (each is offered every record and applies them in
        order), so they are written once: those of the output furthest behind, and each
        output's ``waiting``, how many of the last it still awaits."""
        longest = max(self.feeds.values(), key=lambda f: len(f.pending))
        default = self.default
        data: dict[str, Any] = {
            "delay": default.delay,
            "engine": default.delayed.snapshot(),
            "pending": [dict(r) for r in longest.pending],
            "waiting": len(default.pending),
        }
        others = {
            a: {"delay": f.delay, "engine": f.delayed.snapshot(), "waiting": len(f.pending)}
            for a, f in self.feeds.items()
            if f is not default
        }
        if others:
            data["outputs"] = others
        return data

    def restore_snapshot(self, saved: Mapping[str, Any] | None, real: Mapping[str, Any]) -> None:
        """Each output from its part of ``saved`` (``snapshot()``); an output the snapshot
        does not carry (written before it was configured, or without a program) starts from
        the real engine's snapshot ``real``, as a journal replay from there would."""
        records: list[Mapping[str, Any]] = [] if saved is None else list(saved["pending"])
        for audience, feed in self.feeds.items():
            mine = saved
            if saved is not None and audience != PROGRAM:
                mine = saved.get("outputs", {}).get(audience)
            if mine is None:
                feed.delayed.restore_snapshot(real)
                continue
            waiting = int(mine.get("waiting", len(records)))
            feed.restore(mine["engine"], records[len(records) - waiting :])
