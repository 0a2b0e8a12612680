"""`Projecting`: the feed's part of an engine, the room of the walk's stop 7 (docs/internals.md,
"The walk of one console event").

The engine decides and records (``Engine.submit``, ``control``, ``restore``, ``tick``) and hands
the typed events each change caused to this part (``hand``): nothing of the projections runs
while the engine decides. The ingest's answer stage hands it, through the feed writer, whether
each answered console listened (``links``: the ops topic's ``connected``; known only once the
answers went out, neither decided nor journaled, they are the feed's). The feed writer
(``hub.roles.publisher``) then takes the ``flush``: what was handed is noted into the
projections in the order it was handed, the documents move (``Projections.flush``) and the
program outputs' changes follow. A read of the projections (``materialize``) notes what was
handed first too. So every flush and every read sees what it saw when each event was noted as
the engine announced it: the same documents, the same deltas in the same order, the same seqs,
whatever the engine decided meanwhile (``tests/test_walk.py``, the projections' properties).

While the projections are not started (a journal's replay; an ingest whose feed a projector
in another process writes; an engine read only through its builders) nothing would take the
handed events: they are noted at once, as they come. Builders and the state are read as tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Protocol

from hub.engine.changes import EngineEvent
from hub.engine.desk import Desk
from hub.engine.families import Payloads
from hub.engine.program import Program, is_now
from hub.engine.projections import Projections, TopicChange
from hub.engine.tournament import TournamentState
from hub.wire.topics import PROGRAM, PUBLIC, TopicKey, TopicSpace, kind

__all__ = ["Projected", "Projecting"]


class Projected(Protocol):
    """The engine, as its feed's part reads it (``hub.engine.core.Engine``)."""

    @property
    def state(self) -> TournamentState: ...
    @property
    def payloads(self) -> Payloads: ...
    @property
    def desk(self) -> Desk: ...
    @property
    def program(self) -> Program | None: ...
    @property
    def topics(self) -> TopicSpace: ...


class Projecting:
    """What the engine handed since the last flush, in order (see the module docstring): its
    typed events, and each batch's links (a dict: console -> whether it listened)."""

    __slots__ = ("engine", "handed", "projections")

    def __init__(self, engine: Projected) -> None:
        self.engine = engine  # (read as a tool: its state, payloads, desk, program)
        self.handed: list[EngineEvent | dict[str, bool]] = []
        # The topic projections, this part's own: moved by what was handed, at the flush.
        self.projections = Projections(engine.state, engine.payloads)

    def restart(self) -> None:
        """Projections of the engine's state as it stands (a restored snapshot), not started."""
        self.handed.clear()
        self.projections = Projections(self.engine.state, self.engine.payloads)

    # ------------------------------------------------------------------ its state
    @property
    def active(self) -> bool:
        """Are the projections started (``start``; not in a journal's replay)?"""
        return self.projections.active

    @property
    def deferred(self) -> frozenset[str]:
        """The families kept at a cadence the last ``flush`` left for later."""
        return self.projections.deferred

    @property
    def waiting(self) -> frozenset[str]:
        """Of ``deferred``, those with moves waiting (what a later publish has to move)."""
        return self.projections.waiting

    def on_demand(self, key: TopicKey) -> bool:
        """Is ``key`` a topic made on demand (``Family.lazy``) that nobody asked for yet?"""
        return self.projections.on_demand(key)

    def hold(self, keys: Iterable[TopicKey]) -> None:
        """Someone holds these topics (a writer restarting): those made on demand and not
        made yet come whole with the next ``flush`` (``Projections.hold``)."""
        self.projections.hold(keys)

    # ------------------------------------------------------------------ handed in
    def hand(self, events: Iterable[EngineEvent]) -> set[TopicKey]:
        """The events one change caused, handed on by the engine, in order. The topics they
        touch when they are noted at once (the projections not started); once they are, none:
        the flush says what moved (working out the topics per event would cost the decide
        stop ~0.5 % more instructions an event, for nothing the feed uses)."""
        if not self.projections.active:
            return self._note(events)
        self.engine.payloads.forget()  # (the payloads built from the old state)
        self.handed.extend(events)
        return set()

    def links(self, links: Mapping[str, bool]) -> None:
        """Whether each answered console listened (a batch's answers), for the ops topic."""
        if not links:
            return
        if not self.projections.active:
            self._note(self.engine.desk.note_links(links))
            return
        self.handed.append(dict(links))

    def _note(self, events: Iterable[EngineEvent]) -> set[TopicKey]:
        """Note events into the projections now: each moves them (``Projections.on``)."""
        on = self.projections.on
        keys: set[TopicKey] = set()
        for event in events:
            keys |= on(event)
        return keys

    def _take(self) -> None:
        """Note what was handed, in the order it was handed (a batch's links: the desk's
        ``LinkChanged`` for each console whose link changed)."""
        if not self.handed:
            return
        handed, self.handed = self.handed, []
        on = self.projections.on
        note_links = self.engine.desk.note_links
        for item in handed:
            if isinstance(item, dict):
                for event in note_links(item):
                    on(event)
            else:
                on(item)

    # ------------------------------------------------------------------ the feed
    def start(self) -> None:
        """The projections start (over): what was handed is in the documents they start from.
        Links handed meanwhile are kept on the desk (what its documents read)."""
        for item in self.handed:
            if isinstance(item, dict):
                self.engine.desk.note_links(item)
        self.handed = []
        self.projections.start()

    def flush(self, later: AbstractSet[str] = frozenset()) -> list[TopicChange]:
        """What changed in the topic payloads since the last flush, once what was handed is
        noted; with program outputs, theirs too (what is on air and the clock: the public's).
        ``later``: families kept at a cadence whose actions may wait (``Projections.flush``)."""
        self._take()
        engine = self.engine
        changes = self.projections.flush(later)
        if engine.program is None:
            return changes
        return [*changes, *engine.program.changes(changes, engine.topics)]

    def materialize(self, key: TopicKey) -> dict[str, Any] | None:
        """A topic's current payload, projected from now on (None: no such topic for that
        audience, or not yet), once what was handed is noted. Its changes come through
        ``flush`` as patches."""
        self._take()
        engine = self.engine
        if kind(key[0]) == PROGRAM:
            feed = None if engine.program is None else engine.program.feed(key[0])
            if feed is None or is_now(engine.topics, key[1]):
                return None if feed is None else self.projections.materialize((PUBLIC, key[1]))
            return feed.materialize(key)
        return self.projections.materialize(key)
