"""What a topic family's declaration is, and what its builders may read.

A ``Family`` is the one declaration of a kind of topic: its wire facts (name, parameters,
audiences, least role, REST route, what a delta carries: ``hub.wire.topics.Family``), its
audience and programme policy (on the program feed, from which of the delayed engine's
audiences or live; held until its deal's release; the public's topics embargoed until then),
the engine events (``hub.engine.changes``) that touch it, which of its topics a given event
touches, which of those events the projections apply in place (rather than rebuild), the
builder of its payload and its model. Builders read the engine only through ``EngineView``
(read-only), so the payload code lives with its family and nothing in the engine dispatches
on family names. ``TopicKeys``, the program feed, the embargo, the REST routes, the
subscription checks and the hub's list of topics read the declarations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any, Protocol

from hub.domain.config import TournamentConfig
from hub.engine.admission import Admission
from hub.engine.desk import Desk
from hub.engine.release import Release
from hub.engine.tournament import TournamentState
from hub.wire import topics as wire
from hub.wire.patch import Recorder
from hub.wire.topics import AUDIENCES, LIVE, PROGRAM, PUBLIC, ROLES, TopicKey, TopicSpace

__all__ = [
    "CADENCE",
    "EVERY",
    "NOW",
    "Command",
    "EngineView",
    "Family",
    "Feed",
    "Model",
    "Mover",
    "Reading",
    "TopicKeys",
]

EVERY = (PUBLIC, LIVE, PROGRAM)  # the program's are the delayed engine's, filtered
NOW = "now"  # Family.program: the real engine's public topic, not delayed


class EngineView(Protocol):
    """The engine as payload builders read it (the names ``Engine`` has; read-only): its
    parts are read as parts (``engine.desk.onair``, ``engine.release.public_board``)."""

    @property
    def state(self) -> TournamentState: ...  # its config too
    @property
    def topics(self) -> TopicSpace: ...
    @property
    def desk(self) -> Desk: ...  # on air, cues, takes, clock, ticker, refusals, links, now
    @property
    def release(self) -> Release: ...  # what is released; the public board
    @property
    def admission(self) -> Admission: ...  # the sequencer


class Reading(Protocol):
    """What a builder is handed: the engine, the standings made once per change, and its
    family's mover while projecting."""

    @property
    def engine(self) -> EngineView: ...

    def standings(self, live: bool) -> dict[str, Any]: ...

    def mover(self, family: str) -> Mover | None:
        """The family's mover (``Family.mover``) while the projections keep one (None: not
        projecting, as in a journal's replay): a builder may read what its own mover keeps
        (the projection's scoreboard) rather than make it again."""
        ...

    def keys(self) -> TopicKeys:
        """Every topic key of the tournament (made once, from the declarations)."""
        ...


class TopicKeys(dict[str, dict[str, Any]]):
    """Every topic key of a tournament, made once from the declarations: ``k[audience][family]``
    is the key of a family without parameters, else one level per parameter, in name order: a
    list by seat (seat ``s`` at ``s - 1``), a dict by table or deal (compare: a dict by deal of
    lists by seat)."""

    def __init__(self, config: TournamentConfig, families: Mapping[str, Family]) -> None:
        values = {
            "seat": range(1, config.seats + 1),
            "table": tuple(config.tables),
            "deal": range(1, config.deals + 1),
        }
        super().__init__((a, {}) for a in AUDIENCES)
        self.k: dict[str, dict[str, Any]] = self  # (a plain dict: ``k[a]`` costs no frame)

        def level(a: str, fam: Family, params: tuple[str, ...], args: tuple[int, ...]) -> Any:
            if not params:
                return (a, fam.name_of(*args))
            head, rest = params[0], params[1:]
            if head == "seat":
                return [level(a, fam, rest, (*args, v)) for v in values[head]]
            return {v: level(a, fam, rest, (*args, v)) for v in values[head]}

        for a in AUDIENCES:
            for fam in families.values():
                self[a][fam.name] = level(a, fam, fam.params, ())


Keys = Callable[[TopicKeys, Any], Iterable[TopicKey]]
Builder = Callable[[Reading, tuple[int, ...], str], "dict[str, Any] | None"]


class Model(Protocol):
    """A family's documents kept by a model of its own, moved incrementally (``Feed.model``):
    made when one of its topics is first materialized, never before. A model shares what did
    not move with the documents it made before (the diff passes it by identity) and never
    edits what it handed out."""

    def on(self, event: Any) -> None:
        """An event the family declares: note what it moved (the work waits for ``flush``)."""

    def flush(self) -> Iterable[str]:
        """Move by what was noted; the audiences whose payload may have changed."""

    def payload(self, audience: str, *args: int) -> dict[str, Any]:
        """An audience's payload now (``args``: the topic's, as ``seat:{s}``'s seat), equal
        to the family's builder's (a new document)."""


class Mover(Protocol):
    """A family's documents moved in place by a model of its own (``Feed.mover``): each
    event notes what it moved; at the flush the model edits the rows it touched through each
    open document's ``Recorder``, so the deltas name the rows that changed, and nothing of the
    family is rebuilt whole or diffed. Made when the projections start; a topic is opened
    (built by the family's builder, then moved) when first asked for or first touched."""

    def on(self, event: Any) -> None:
        """An event the family declares: note what it moved (the work waits for ``flush``)."""

    def open(self, key: TopicKey) -> Recorder | None:
        """A topic's document, built now and moved from now on (None: no such topic yet)."""

    def flush(self) -> Iterable[TopicKey]:
        """Move the open documents by what was noted (their recorders hold the operations);
        the topics touched since the last flush, open or not."""


Select = Callable[..., "dict[str, Any] | str"]  # (payload, **query) -> its part, or why not
Shape = Callable[[Any], "tuple[dict[str, Any] | None, str]"]  # (a control action's: a dict)


@dataclass(frozen=True, slots=True)
class Command:
    """An operator command a family's REST route takes by POST: its word (a control action's
    last segment of ``{route}/{action}``; the op a refusal names) and its shape: the request's
    body (a JSON object; none: ``{}``) as the engine's command, or None and why not."""

    name: str
    shape: Shape


@dataclass(frozen=True, slots=True)
class Family(wire.Family):
    """One topic family, declared once (``hub.engine.families.FAMILIES`` lists them)."""

    name: str
    events: tuple[type, ...]  # the engine events that touch it
    keys: Keys  # (keys, event) -> the topics of this family the event touches
    build: Builder  # (reading, parameters, audience) -> its payload now (None: not yet)
    moves: tuple[type, ...] = ()  # events the projections apply in place (else: rebuilt)
    # A family whose documents a model keeps: the model is made when one of them is first
    # materialized (or touched, unless its audience is ``lazy``), and moves them.
    model: Callable[[EngineView], Model] | None = None
    # A family whose documents a model moves in place, row by row (``Mover``): every event
    # the family declares is the mover's to apply.
    mover: Callable[[Reading], Mover] | None = None
    # The audiences whose topics are made on demand: only when someone asks for one (a
    # subscriber, a REST read, an edge's ``snapshots`` request naming it; a writer restarting
    # remakes those its predecessor had made), then moved by events; an event never makes
    # one (suggestions: its ranking costs every hand; the live travellers and deal
    # statistics: commentators follow one seat's of a deal, an action moves six). The other
    # audiences' topics are made when an event first touches them and handed out whole
    # (after a writer's restart, the edges' copies are replaced so).
    lazy: tuple[str, ...] = ()
    _: KW_ONLY
    # -- its wire facts (``hub.wire.topics.Family``)
    params: tuple[str, ...] = ()
    audiences: tuple[str, ...] = EVERY
    role: str = ROLES[0]
    route: str | None = None
    delta: str = ""
    console: str | None = None  # what a table's console reads of it (wire.ANY, wire.OWN)
    # -- the program feed (``hub.engine.program``): None, not on it; else the delayed engine's
    # audience its topics come from, or NOW (the real engine's public topic, not delayed)
    program: str | None = None
    held: bool = False  # a program topic showing a deal not yet released holds until it is
    embargo: bool = False  # the public's topic of a deal exists once the deal is released
    # -- REST: the query parameters that pick a part of its payload, and how (an error
    # text: nothing there); the operator command its route takes by POST
    query: tuple[str, ...] = ()
    select: Select | None = None
    command: Command | None = None
    # -- REST, for control surfaces: the commands its route takes by POST at
    # ``{route}/{action}`` (each its ``Command``: ``hub.serve.http`` adds the idempotency
    # fields), and what a read adds at the time it is read (``(payload, now) -> payload``: a
    # running clock's time left)
    actions: tuple[Command, ...] = ()
    at_read: Callable[[dict[str, Any], float], dict[str, Any]] | None = None
    # -- the feed: its frames go out after every other topic's of the same flush (a family
    # that tells its followers to read the others: the site's ``released``; one with a mover)
    last: bool = False
    # -- the feed: the least seconds between two of its flushes while a hand's actions alone
    # move it (``CADENCE``: an aggregate over every table that every action moves, which no
    # one reads 60 times a second); any other event it declares moves it at the next publish,
    # and what actions moved meanwhile goes out within the cadence (``FeedPublisher``).
    # 0: moved at every publish. Only the ingest's paced publishes keep it; a flush with no
    # ``later`` (``engine.projecting.flush()``) moves everything.
    cadence: float = 0.0

    def __post_init__(self) -> None:
        if (PROGRAM in self.audiences) != (self.program is not None):
            raise ValueError(f"{self.name}: on the program feed iff it has a program source")
        if self.held and self.program is None:
            raise ValueError(f"{self.name}: held off a program feed it is not on")
        if self.embargo and "deal" not in self.params:
            raise ValueError(f"{self.name}: an embargo needs a deal parameter")
        if self.last and self.mover is None:
            raise ValueError(f"{self.name}: only a family with a mover goes out last")
        if self.cadence and self.mover is None:
            raise ValueError(f"{self.name}: only a family with a mover keeps a cadence")


Feed = Family  # (the name the family modules used for it)

CADENCE = 0.5
"""``Family.cadence`` of the aggregates every action moves (the commentators' projection, the
statistics, the operator's desk, a deal's tables): twice a second. At 60 tables one action
every ~16 ms moved each of them anew, and a move costs by the groups it re-ranks, not by the
events it covers: at 60 events a second the ingest's instructions an event were 0.929 of
moving at every action with 0.25 s, 0.861 with 0.5 s, 0.834 with 1 s (``bench/ingest_instr.py
--paced``, issue #31); the operator's desk kept at it too: -3.6 % (its table row's last event
and seq, a frame an action); a deal's tables (their pots) -2.7 % more."""
