"""What a topic is on the wire: every topic family declared once, and the topics a tournament has.

A family says what a client may know of a kind of topic: its name pattern, which audiences have
it, who may subscribe, its REST route and what its delta carries. Which engine events change it
and how its payload is built is the engine's side (``hub.engine.families``), keyed by the same
names. The websocket subscription check, the REST routes, the engine's read side and the
documentation all read this one table, and nothing re-parses a topic name the hub built:
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
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hub.domain.config.broadcast import DEFAULT_OUTPUT, OUTPUT_NAME
from hub.domain.states import AUDIENCES as AUDIENCES  # re-exported: projections, ticker
from hub.domain.states import ROLES, Audience, Role

__all__ = [
    "CONSOLE_PUBLIC",
    "FAMILIES",
    "LIVE",
    "PROGRAM",
    "PUBLIC",
    "ROLES",
    "Family",
    "Topic",
    "TopicKey",
    "TopicSpace",
    "family",
    "key_for",
    "kind",
    "output_audience",
    "parse_topic",
    "program_outputs",
    "refusal",
    "topic_name",
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


@dataclass(frozen=True, slots=True)
class Family:
    """One kind of topic, declared once."""

    name: str
    params: tuple[str, ...]  # integer parameters, in name order: compare:{deal}:{seat}
    audiences: tuple[str, ...]  # which audiences have it
    role: str  # the least role that may subscribe
    route: str | None  # REST path (Starlette syntax), None: websocket only
    delta: str  # what a delta of it carries

    def name_of(self, *args: int) -> str:
        if len(args) != len(self.params):
            raise ValueError(f"{self.name} takes {len(self.params)} parameters, not {len(args)}")
        return ":".join((self.name, *map(str, args)))

    @property
    def pattern(self) -> str:
        return ":".join((self.name, *(f"{{{p}}}" for p in self.params)))

    def allows(self, role: str) -> bool:
        return ROLES.index(role) >= ROLES.index(self.role)


EVERY = (PUBLIC, LIVE, PROGRAM)  # the program's are the delayed engine's, filtered

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "standings",
            (),
            EVERY,
            Role.PUBLIC,
            "/api/standings",
            "replace of the rows whose rank, points or chips moved",
        ),
        Family(
            "seat",
            ("seat",),
            EVERY,
            Role.PUBLIC,
            "/api/seats/{seat:int}",
            "replace of the rows that moved",
        ),
        Family(
            "table",
            ("table",),
            EVERY,
            Role.PUBLIC,
            "/api/tables/{table:int}",
            "live: one action adds one row at /actions/- and replaces the seat fields it moved"
            " (equity only when a card is dealt or someone folds)",
        ),
        Family(
            "deal",
            ("deal",),
            EVERY,
            Role.PUBLIC,
            "/api/deals/{deal:int}",
            "replace of the table row that moved (status, pot, result)",
        ),
        Family(
            "compare",
            ("deal", "seat"),
            EVERY,
            Role.PUBLIC,
            "/api/compare/{deal:int}/{seat:int}",
            "one action adds one row at /rows/{i}/actions/- and replaces what it moved (the"
            " row's equity only when a card is dealt or someone folds)",
        ),
        Family(
            "onair",
            (),
            EVERY,
            Role.PUBLIC,
            "/api/onair",
            "replace of the slot that changed",
        ),
        Family(
            "ticker",
            (),
            EVERY,
            Role.PUBLIC,
            "/api/ticker",
            "new items at the front; the oldest leave at the end",
        ),
        Family(
            "clock",
            (),
            EVERY,
            Role.PUBLIC,
            "/api/clock",
            "replace of the fields that moved (status, level, time left as of as_of)",
        ),
        Family(
            "projection",
            (),
            (LIVE,),
            Role.COMMENTATOR,
            "/api/projection",
            "replace of the hands and rows that moved",
        ),
        Family(
            "suggestions",
            (),
            (PUBLIC, LIVE),  # not on the program feed
            Role.PUBLIC,
            "/api/suggestions",
            "replace of the entries that moved (the public's: released deals only)",
        ),
        Family(
            "ops",
            (),
            (LIVE,),
            Role.OPERATOR,
            "/api/ops",
            "replace of the fields that moved",
        ),
        Family(
            "console",
            ("table",),
            (LIVE,),
            Role.COMMENTATOR,  # and the console of that table (``refusal``)
            None,
            "replace of the fields that moved; one action adds one row at /actions/-",
        ),
    )
}

CONSOLE_PUBLIC = ("standings", "seat", "onair", "ticker", "clock")
"""The public families a table's console may read besides its own ``console:{table}``: none
that shows hands (``table``, ``deal``, ``compare``: a console has its own table's state)."""


def family(name: str) -> Family:
    return FAMILIES[name]


def topic_name(family_name: str, *args: int) -> str:
    """Build a topic name (the one place names are put together)."""
    return FAMILIES[family_name].name_of(*args)


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

    Built from the tournament's shape (tables, seats, deals), so its size is fixed by the
    configuration and no client input can grow it."""

    def __init__(self, *, tables: Any, seats: int, deals: int, outputs: Any = None) -> None:
        # output name -> its audience (``program_outputs``); None: any name, as its own
        self.outputs: dict[str, str] | None = outputs
        values = {
            "seat": range(1, seats + 1),
            "table": tuple(tables),
            "deal": range(1, deals + 1),
        }
        self._topics: dict[str, Topic] = {}
        for fam in FAMILIES.values():
            for args in itertools.product(*(values[p] for p in fam.params)):
                name = fam.name_of(*args)
                self._topics[name] = Topic(fam, args, name)

    @classmethod
    def of(cls, config: Any) -> TopicSpace:
        """From a ``TournamentConfig`` (duck-typed: ``tables``, ``seats``, ``deals``, and the
        program outputs)."""
        outputs = {name: a for name, (a, _) in program_outputs(config).items()}
        return cls(tables=config.tables, seats=config.seats, deals=config.deals, outputs=outputs)

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
    writes) reads its own table's ``console:{table}`` and the families of ``CONSOLE_PUBLIC``."""
    if topic is None:
        return "unknown_topic"
    if role == Role.CONSOLE:
        if topic.family.name in CONSOLE_PUBLIC:
            return None
        own = topic.family.name == "console" and table is not None and topic.args == (table,)
        return None if own else "forbidden"
    if not topic.family.allows(role):
        return "forbidden"
    return None


def key_for(audience: str, topic: str) -> TopicKey:
    """Where a client of ``audience`` reads ``topic``: in its own audience, unless the topic's
    family has only another (a console, public otherwise, reads ``console:{t}`` of ``live``).
    Who may read it at all is ``refusal``'s call, made first."""
    fam = FAMILIES.get(topic.partition(":")[0])
    if fam is None or kind(audience) in fam.audiences:
        return (audience, topic)
    return (fam.audiences[0], topic)


def parse_topic(name: object) -> Topic | None:
    """The topic ``name`` would be in *some* tournament (a family and whole-number parameters
    below a million), or None; a process that knows its tournament uses ``TopicSpace``."""
    if not isinstance(name, str) or len(name) > 40:
        return None
    family_name, *args = name.split(":")
    fam = FAMILIES.get(family_name)
    if fam is None or len(args) != len(fam.params):
        return None
    if not all(a.isdigit() and a == str(int(a)) and len(a) < 7 for a in args):
        return None
    return Topic(fam, tuple(map(int, args)), name)
