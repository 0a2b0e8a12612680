"""What a topic is on the wire: what a topic family tells a client, and the topics a tournament has.

A family says what a client may know of a kind of topic: its name pattern, which audiences have
it, who may subscribe, its REST route and what its delta carries. Each family is declared once,
with its builder, on the engine's floor (``hub.engine.families``); this module is what is
generic about them and takes the declarations as data. The websocket subscription check, the
REST routes, the hub's list of topics and the documentation all read the declarations, and
nothing re-parses a topic name the hub built:
names from outside (a client's subscription, a REST path) are looked up in ``TopicSpace``, which
holds exactly the topics of this tournament, so a name outside it is refused without the hub
keeping anything of it.

Audience ``live`` serves commentators and operators, ``public`` everyone else; ``program``
(the secure-delay program feed, ``hub.engine.program``) any connection that asks for it. A
tournament with more program outputs (``[broadcast.outputs]``) has an audience per delay:
``program`` for the default output's, ``program:NAME`` for another's (``program_outputs``);
``kind`` says which of the three an audience is.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hub.domain.config.broadcast import DEFAULT_OUTPUT, OUTPUT_NAME
from hub.domain.states import AUDIENCES as AUDIENCES  # re-exported: projections, ticker
from hub.domain.states import ROLES, Audience, Role

__all__ = [
    "ANY",
    "LIVE",
    "OWN",
    "PROGRAM",
    "PUBLIC",
    "ROLES",
    "Families",
    "Family",
    "Topic",
    "TopicKey",
    "TopicSpace",
    "key_for",
    "kind",
    "output_audience",
    "parse_topic",
    "program_outputs",
    "refusal",
]

PUBLIC = Audience.PUBLIC
LIVE = Audience.LIVE
PROGRAM = Audience.PROGRAM

TopicKey = tuple[str, str]
"""``(audience, topic name)``: how the feed and the fan-out key a topic."""


def kind(audience: str) -> str:
    """``public``, ``live`` or ``program`` (any program output's audience)."""
    return PROGRAM if audience.partition(":")[0] == PROGRAM else audience


def output_audience(name: str) -> str:
    """The audience an output would have on its own: ``program``, else ``program:NAME``."""
    return PROGRAM if name == DEFAULT_OUTPUT else f"{PROGRAM}:{name}"


def program_outputs(config: Any) -> dict[str, tuple[str, float]]:
    """Every program output of a tournament (duck-typed: ``program_delay``, ``program_outputs``):
    name -> (its audience, its delay in seconds); the default output first, as ``program``.
    Outputs of one delay show the same thing at the same time, so they share the audience of
    the first of them (one delayed engine, one frame each update, whatever their number)."""
    default = getattr(config, "program_delay", None)
    if default is None:
        return {}
    out = {DEFAULT_OUTPUT: (output_audience(DEFAULT_OUTPUT), float(default))}
    first = {float(default): output_audience(DEFAULT_OUTPUT)}
    for name, delay in (getattr(config, "program_outputs", None) or {}).items():
        out[name] = (first.setdefault(float(delay), output_audience(name)), float(delay))
    return out


class Family:
    """What the wire knows of one kind of topic: the facts its declaration gives (the
    declarations are the engine's, ``hub.engine.families``: a family is declared once, with
    its builder) and what follows from them. The functions here take the declarations as data
    (``families``: name -> declaration)."""

    __slots__ = ()

    name: str
    params: tuple[str, ...]  # integer parameters, in name order: compare:{deal}:{seat}
    audiences: tuple[str, ...]  # which audiences have it
    role: str  # the least role that may subscribe
    route: str | None  # REST path (Starlette syntax), None: websocket only
    delta: str  # what a delta of it carries
    console: str | None  # what a table's console reads of it: ANY, OWN (its table's), None
    cadence: float  # least seconds between two of its deltas while actions alone move it

    def name_of(self, *args: int) -> str:
        if len(args) != len(self.params):
            raise ValueError(f"{self.name} takes {len(self.params)} parameters, not {len(args)}")
        return ":".join((self.name, *map(str, args)))

    @property
    def pattern(self) -> str:
        return ":".join((self.name, *(f"{{{p}}}" for p in self.params)))

    def allows(self, role: str) -> bool:
        return ROLES.index(role) >= ROLES.index(self.role)

    def facts(self) -> dict[str, Any]:
        """What a client may know of the family (the hub's list of topics, ``/api/topics``)."""
        return {
            "name": self.name,
            "pattern": self.pattern,
            "params": list(self.params),
            "audiences": list(self.audiences),
            "role": self.role,
            "console": self.console,
            "route": self.route,
            "delta": self.delta,
            "cadence": self.cadence,
        }


ANY = "any"  # Family.console: every console reads it
OWN = "own"  # Family.console: a console reads its own table's (the family's one parameter)

Families = Mapping[str, Family]


@dataclass(frozen=True, slots=True)
class Topic:
    """One topic of this tournament: its family, parameters and name, made once."""

    family: Family
    args: tuple[int, ...]
    name: str

    def arg(self, param: str) -> int:
        return self.args[self.family.params.index(param)]


class TopicSpace:
    """Every topic a tournament has, by name: the only way a name from outside becomes a topic.

    Built from the families' declarations and the tournament's shape (tables, seats, deals),
    so its size is fixed by the configuration and no client input can grow it."""

    def __init__(
        self, families: Families, *, tables: Any, seats: int, deals: int, outputs: Any = None
    ) -> None:
        # output name -> its audience (``program_outputs``); None: any name, as its own
        self.outputs: dict[str, str] | None = outputs
        self.families = families
        values = {
            "seat": range(1, seats + 1),
            "table": tuple(tables),
            "deal": range(1, deals + 1),
        }
        self._topics: dict[str, Topic] = {}
        for fam in families.values():
            for args in itertools.product(*(values[p] for p in fam.params)):
                name = fam.name_of(*args)
                self._topics[name] = Topic(fam, args, name)

    @classmethod
    def of(cls, families: Families, config: Any) -> TopicSpace:
        """From a ``TournamentConfig`` (duck-typed: ``tables``, ``seats``, ``deals``, and the
        program outputs)."""
        outputs = {name: a for name, (a, _) in program_outputs(config).items()}
        return cls(
            families, tables=config.tables, seats=config.seats, deals=config.deals, outputs=outputs
        )

    def get(self, name: object) -> Topic | None:
        return self._topics.get(name) if isinstance(name, str) else None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._topics

    def __iter__(self) -> Iterator[Topic]:
        return iter(self._topics.values())

    def __len__(self) -> int:
        return len(self._topics)

    def output(self, name: str | None) -> str | None:
        """The audience of the program output ``name`` (None: the default one), or None when
        the tournament has no such output. The default is always known (a hub without
        ``[broadcast] delay`` serves no program topics, as before outputs existed)."""
        if name is None or name == DEFAULT_OUTPUT:
            return PROGRAM
        if self.outputs is None:
            return output_audience(name) if OUTPUT_NAME.fullmatch(name) else None
        return self.outputs.get(name)

    def check(self, role: str, name: object, table: int | None = None) -> str | None:
        """Why ``role`` may not subscribe to ``name`` (``unknown_topic`` / ``forbidden``), or
        None when it may (``table``: a console's own table)."""
        return refusal(role, self.get(name), table)


def refusal(role: str, topic: Topic | None, table: int | None = None) -> str | None:
    """The one subscription check, whoever found the topic (``TopicSpace.check`` for a running
    tournament, ``hub.serve.auth.check_topic`` for a name of any tournament): ``unknown_topic``,
    ``forbidden``, or None when ``role`` may subscribe. A console (``table``: the one it
    writes) reads the families it may read (``Family.console``: every topic of one, or its own
    table's)."""
    if topic is None:
        return "unknown_topic"
    if role == Role.CONSOLE:
        reads = topic.family.console
        if reads == ANY:
            return None
        own = reads == OWN and table is not None and topic.args == (table,)
        return None if own else "forbidden"
    if not topic.family.allows(role):
        return "forbidden"
    return None


def key_for(audience: str, topic: str, families: Families) -> TopicKey:
    """Where a client of ``audience`` reads ``topic``: in its own audience, unless the topic's
    family has only another (a console, public otherwise, reads ``console:{t}`` of ``live``).
    Who may read it at all is ``refusal``'s call, made first."""
    fam = families.get(topic.partition(":")[0])
    if fam is None or kind(audience) in fam.audiences:
        return (audience, topic)
    return (fam.audiences[0], topic)


def parse_topic(name: object, families: Families) -> Topic | None:
    """The topic ``name`` would be in *some* tournament (a family and whole-number parameters
    below a million), or None; a process that knows its tournament uses ``TopicSpace``."""
    if not isinstance(name, str) or len(name) > 40:
        return None
    family_name, *args = name.split(":")
    fam = families.get(family_name)
    if fam is None or len(args) != len(fam.params):
        return None
    if not all(a.isdigit() and a == str(int(a)) and len(a) < 7 for a in args):
        return None
    return Topic(fam, tuple(map(int, args)), name)
