"""Topic payloads kept current by the engine's typed events, and what changed since last asked.

Each payload the feed has asked for is kept as a document that events edit in place, recording
each edit as a JSON Patch operation (``hub.wire.patch``). The families with a mover of their own
(``Feed.mover``: the live tables, the travellers, the projection, the standings and seats, the
consoles, the ticker, the operator's desk) are moved by it, row by row: an ``ActionApplied``
appends one row to its table and its travellers and sets the few fields it moved; a settled
hand sets the standings rows of its group that moved. The families with a model
(``Feed.model``: the suggestions) are moved by it and diffed. The topics left (on-air, clock)
are marked *stale*: rebuilt once at the next ``flush`` and diffed against what was published,
so a burst of events costs one rebuild per topic.

Invariant (tested after every event): a flushed document equals its builder's payload.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from typing import Any, get_args

from hub.engine.changes import ActionApplied, EngineEvent
from hub.engine.families import FEEDS, Model, Mover, Payloads, TopicKeys, feeds_of
from hub.engine.tournament import TournamentState
from hub.wire.patch import Recorder, TopicChange
from hub.wire.topics import TopicKey

__all__ = ["Projections", "TopicChange"]

_Route = tuple[frozenset[TopicKey], tuple[TopicKey, ...]]


def _flat(keys: Any) -> list[TopicKey]:
    """A family's topic keys as ``TopicKeys`` holds them (one, a list or a dict of them)."""
    if isinstance(keys, tuple):
        return [keys]
    items = keys.values() if isinstance(keys, dict) else keys
    return [key for item in items for key in _flat(item)]


class Projections:
    def __init__(self, state: TournamentState, payloads: Payloads) -> None:
        self.state = state
        self.payloads = payloads
        payloads.forget()
        self.active = False  # off while the journal replays: nothing is projected then
        self.docs: dict[TopicKey, Recorder] = {}
        self._stale: dict[TopicKey, None] = {}
        self._moved: dict[TopicKey, Recorder] = {}  # (each with its document's recorder)
        # The topics to make when an event first touches them (those of families with a
        # model not materialized yet, and the topics made on demand that someone asked for
        # while they had no data), and those of them an event touched: made at the next flush
        # and handed out whole, as any topic new to the feed (after a writer's restart the
        # edges hold the old ones: issue #31).
        self._unmade: set[TopicKey] = set()
        self._fresh: dict[TopicKey, None] = {}
        config = state.config
        self.keys = TopicKeys(config, FEEDS)
        self._k = self.keys.k
        # Event class -> the families that declare it (the routing table).
        self._routes = {cls: feeds_of(cls) for cls in get_args(EngineEvent)}
        # Class -> (each declaring family's keys, whether it moves the event in place).
        # (A family with a mover moves every event it declares: nothing of it is rebuilt.)
        self._plans = {
            c: [(f.keys, c in f.moves or f.mover is not None) for f in fs]
            for c, fs in self._routes.items()
        }
        # The models of the families that keep one (``Feed.model``), once materialized; the
        # families with a model that each event class touches; the topics of those families.
        self.models: dict[str, Model] = {}
        # The movers of the families that keep one (``Feed.mover``), made at ``start``; the
        # families with a mover that each event class touches.
        self.movers: dict[str, Mover] = {}
        payloads.moved_by(self.movers)  # (a builder reads its family's: ``Reading.mover``)
        # The families whose frames go out after every other of a flush (``Family.last``).
        self._last = {f.name for f in FEEDS.values() if f.last and f.mover is not None}
        # Made at ``start`` with the movers (each flush and event walks them): each mover
        # with whether it is of a family that goes last, in ``movers`` order; per event
        # class, the ``on`` of each mover of the families that declare it, in their order.
        self._flushing: list[tuple[str, Mover, bool]] = []
        self._telling: dict[type, tuple[Callable[[Any], None], ...]] = {}
        self._cadences()
        self._moving = {
            cls: tuple(f.name for f in feeds if f.mover is not None)
            for cls, feeds in self._routes.items()
        }
        self._modelled = {
            cls: tuple(f.name for f in feeds if f.model is not None)
            for cls, feeds in self._routes.items()
        }
        self._mover_keys = {
            key
            for f in FEEDS.values()
            if f.mover is not None
            for a in f.audiences
            if a in self._k  # (the programme's are the public's)
            for key in _flat(self._k[a][f.name])
        }
        # The topics made on demand (``Family.lazy``): never because an event touched them.
        self._lazy_keys = {
            key
            for f in FEEDS.values()
            for a in f.lazy
            if a in self._k
            for key in _flat(self._k[a][f.name])
        }
        self._model_keys = {
            key
            for f in FEEDS.values()
            if f.model is not None
            for a in f.audiences
            if a in self._k  # (the programme's are the public's)
            for key, _ in self._family_keys(a, f.name)
        }
        self._eager_keys = self._model_keys - self._lazy_keys
        # (class, *its routed_by fields) -> (every topic it touches, those to rebuild).
        self._route_fields = {c: getattr(c, "routed_by", None) for c in self._routes}
        self._route_cache: dict[tuple[Any, ...], _Route] = {}
        self._action_routes: dict[tuple[int, int], _Route] = {}  # (table, deal): the hot path

    def _cadences(self) -> None:
        """What the families kept at a cadence (``Family.cadence``) need: per event class
        other than an action, those it moves (such an event has them moved at the next
        flush, ``_pressed``, whatever the flush was asked to leave for later); what the last
        flush left for later, and of those the ones with moves waiting; per family with a
        mover, the families sharing it (the statistics' two: left for later together or not
        at all; made at ``start``)."""
        self._pressing = {
            cls: tuple(f.name for f in feeds if f.cadence and cls is not ActionApplied)
            for cls, feeds in self._routes.items()
        }
        self._pressed: set[str] = set()
        self.deferred: frozenset[str] = frozenset()
        # Of those left for later, the ones an action told since their last flush: what a
        # later publish has to move (the rest of ``deferred`` has nothing waiting). Only an
        # action's moves wait (any other event presses what it moves): an action since the
        # last flush (``_acted``) told the families at a cadence it declares (``_acting``).
        self.waiting: frozenset[str] = frozenset()
        self._told: set[str] = set()
        self._acted = False
        self._acting = frozenset(
            f.name for f in self._routes.get(ActionApplied, ()) if f.mover is not None and f.cadence
        )
        self._sharing: dict[str, frozenset[str]] = {}

    # ----------------------------------------------------------------- keys
    def key(self, audience: str, name: str, arg: Any = None) -> Any:
        found = self._k[audience][name]
        return found if arg is None else found[arg]

    def _family_keys(self, audience: str, name: str) -> list[tuple[TopicKey, tuple[int, ...]]]:
        """A family's topics for an audience, with their parameters (one, or a list by seat)."""
        found = self._k[audience][name]
        if isinstance(found, list):
            return [(key, (seat,)) for seat, key in enumerate(found, 1)]
        return [(found, ())]

    def hand_keys(self, table: int, deal: int) -> AbstractSet[TopicKey]:
        """The live topics a hand's actions touch."""
        return self._routed(ActionApplied(table, deal, 0))[0]

    def route(self, event: EngineEvent) -> _Route:
        """The topics ``event`` touches, by the families that declare its class, and those of
        them to rebuild (the families that do not move it in place)."""
        touched: list[TopicKey] = []
        stale: list[TopicKey] = []
        for keys_of, moved in self._plans[type(event)]:
            keys = keys_of(self.keys, event)
            if not isinstance(keys, list):  # (any iterable: read once)
                keys = list(keys)
            touched += keys
            if not moved:
                stale += keys
        return frozenset(touched), tuple(dict.fromkeys(stale))

    def _routed(self, event: EngineEvent) -> _Route:
        """``route``, made once per class and the fields it depends on (``routed_by``)."""
        cls = type(event)
        by = self._route_fields.get(cls)
        if by is None:  # a class that does not say what its route depends on
            return self.route(event)
        at = (cls, *[getattr(event, name) for name in by])
        found = self._route_cache.get(at)
        if found is None:
            found = self._route_cache[at] = self.route(event)
        return found

    # ----------------------------------------------------------------- events
    def on(self, event: EngineEvent) -> AbstractSet[TopicKey]:
        """Move the projections by one event; returns the topics it touched. Which topics:
        the families that declare the event's class say (``hub.engine.families``); those
        that move it in place are edited at the next flush, the others rebuilt then (the
        payloads made from the old state are dropped, ``touch``). A family's model, once made,
        notes the event."""
        if self.models or self.movers:
            self._tell(event)
        if isinstance(event, ActionApplied):  # the hot path: most events are one action
            hand = (event.table, event.deal)
            route = self._action_routes.get(hand)
            if route is None:
                route = self._action_routes[hand] = self._routed(event)
            self.payloads.forget()  # (``touch``, inlined: the hot path)
            self._acted = True  # (the families at a cadence it told: ``waiting``)
            if self.active:  # shown at the next flush, however many
                for key in route[1]:
                    self._stale[key] = None
                if self._unmade:
                    self._fresh.update(dict.fromkeys(route[0] & self._unmade))
            return route[0]
        keys, stale = self._routed(event)
        if self.active and (pressing := self._pressing[type(event)]):
            self._pressed.update(pressing)
        self.touch(stale)
        if self._unmade and self.active:
            self._fresh.update(dict.fromkeys(keys & self._unmade))
        return keys

    def _tell(self, event: EngineEvent) -> None:
        """The models of the families that declare the event's class note it."""
        cls = type(event)
        if self.models:
            for name in self._modelled[cls]:
                model = self.models.get(name)
                if model is not None:
                    model.on(event)
        for on in self._telling[cls]:
            on(event)

    def touch(self, keys: Iterable[TopicKey]) -> None:
        """These topics may have changed in ways only a rebuild tells: rebuild at flush."""
        self.payloads.forget()
        if self.active:
            for key in keys:
                self._stale[key] = None

    # ----------------------------------------------------------------- flushing
    def start(self) -> None:
        """Begin projecting (after the journal replay), from nothing: a topic is built when
        someone asks for it (``materialize``) or when an event first touches it (then handed
        out whole, as a topic new to the feed); also when projecting already (the feed starts
        over)."""
        self.active = True
        self.docs.clear()
        self._stale.clear()
        self._moved.clear()
        self._pressed.clear()
        self.deferred = self.waiting = frozenset()
        self._told.clear()
        self._acted = False
        self._unmade = set(self._eager_keys)
        self._fresh.clear()
        self.models.clear()
        self.movers = {
            f.name: f.mover(self.payloads) for f in FEEDS.values() if f.mover is not None
        }
        self.payloads.moved_by(self.movers)
        self._flushing = [(name, mover, name in self._last) for name, mover in self.movers.items()]
        self._sharing = {
            name: frozenset(n for n, m in self.movers.items() if m is mover)
            for name, mover in self.movers.items()
        }
        self._telling = {
            cls: tuple(self.movers[name].on for name in names)
            for cls, names in self._moving.items()
        }

    def on_demand(self, key: TopicKey) -> bool:
        """Is ``key`` a topic made on demand (``Family.lazy``) that nobody asked for yet?"""
        return key in self._lazy_keys and key not in self.docs

    def hold(self, keys: Iterable[TopicKey]) -> None:
        """Someone holds these topics (a writer restarting: those its predecessor made): the
        ones made on demand and not made yet are made at the next flush and handed out whole
        (the edges' copies are the old writer's, and no event would make them)."""
        if self.active:
            for key in keys:
                if self.on_demand(key):
                    self._fresh[key] = None

    def materialize(self, key: TopicKey) -> dict[str, Any] | None:
        """A topic's document, built now if need be, and moved by events from now on (None:
        no such topic for that audience, or not yet: one made on demand is then made when an
        event first touches it, and handed out whole)."""
        rec = self.docs.get(key)
        if rec is not None:
            return rec.doc
        if not self.active:
            return None
        feed = self.payloads.feed_of(key)
        if feed is not None and feed.mover is not None:  # the family's mover keeps it
            opened = self.movers[feed.name].open(key)
            if opened is not None:
                self.docs[key] = opened
                self._unmade.discard(key)
            elif key in self._lazy_keys:
                self._unmade.add(key)
            return None if opened is None else opened.doc
        if feed is not None and feed.model is not None:  # the family's model keeps it
            model = self.models.get(feed.name)
            if model is None:
                model = self.models[feed.name] = feed.model(self.payloads.engine)
            topic = self.payloads.engine.topics.get(key[1])
            new: dict[str, Any] | None = model.payload(key[0], *(topic.args if topic else ()))
        else:
            new = self.payloads.build(key)
        if new is not None:
            self.docs[key] = Recorder(new)
            self._unmade.discard(key)
        elif key in self._lazy_keys:
            self._unmade.add(key)
        return new

    def flush(self, later: AbstractSet[str] = frozenset()) -> list[TopicChange]:
        """Every topic that changed since the last flush, with its patch (or whole payload);
        but the families named in ``later`` (of those kept at a cadence, ``Family.cadence``)
        that only actions moved since their last flush are left as they are: what moved them
        is kept for a later flush (``deferred`` says which were left)."""
        out: list[TopicChange] = []
        if later:
            later = later - self._pressed if self._pressed else later
            sharing = self._sharing
            later = frozenset(n for n in later if sharing.get(n, later) <= later)
        self._pressed.clear()
        self.deferred = frozenset(later)
        if self._acted:
            self._acted = False
            self._told |= self._acting
        told = self._told
        if told:
            told &= later
            if told != self.waiting:  # (most flushes at 60 tables: the same ones wait)
                self.waiting = frozenset(told)
        elif self.waiting:
            self.waiting = frozenset()
        stale, self._stale = self._stale, {}
        docs, moved = self.docs, self._moved
        for key in stale:
            if key in self._model_keys and key not in docs:
                continue  # nobody asked for it: nothing of it is built
            if key in self._mover_keys:
                continue  # its mover keeps it (it noted the event)
            new = self.payloads.build(key)
            if new is None:
                continue
            rec = docs.get(key)
            if rec is None:
                docs[key] = Recorder(new)
                out.append(TopicChange(key, None, new))
            else:
                rec.replace_with(new)
                moved[key] = rec
        for name, model in self.models.items():
            for audience in model.flush():
                for key, args in self._family_keys(audience, name):
                    rec = docs.get(key)
                    if rec is not None:
                        rec.replace_with(model.payload(audience, *args))
                        moved[key] = rec
        lazy, unmade = self._lazy_keys, self._unmade
        # A family that tells of the others (``Family.last``) goes out after all of them.
        last: list[TopicChange] = []
        for name, mover, tail in self._flushing:
            if name in later:
                continue
            for key in mover.flush():
                rec = docs.get(key)
                if rec is not None:
                    if not tail:
                        moved[key] = rec
                    elif rec.ops:
                        last.append(TopicChange(key, rec.ops, rec.doc))
                        rec.ops = []
                    continue
                if key in lazy and key not in unmade:
                    continue  # made on demand: nobody asked for it
                rec = mover.open(key)  # first touched: handed out whole
                if rec is not None:
                    docs[key] = rec
                    unmade.discard(key)
                    (last if tail else out).append(TopicChange(key, None, rec.doc))
        fresh, self._fresh = self._fresh, {}
        for key in fresh:
            if key not in docs and (new := self.materialize(key)) is not None:
                out.append(TopicChange(key, None, new))
        self._moved = {}
        for key, rec in moved.items():
            if rec.ops:
                out.append(TopicChange(key, rec.ops, rec.doc))
                rec.ops = []
        out += last
        return out
