"""Console events (protocol v1): one msgspec schema, the only one.

A console event is a tagged union of frozen msgspec Structs on ``type``: `ConsoleEvent` is the
envelope every event carries (and the optional fields protocol v1 lets any event carry, so the
tournament reads ``event.seat`` of any event), the events every game plays are declared here
(start, undo, reopen, void, confirm, penalty), each game's own in its folder
(``hub/domain/games/*/events.py``), and a game names the ones it plays (``Game.events``, with
how the engine applies each: ``Game.handlers``). Decoding bytes (msgpack, JSON) and converting a
mapping go through the same Structs: the bounds are the fields' ``Annotated`` types, the checks
across fields each Struct's ``__post_init__``.

When msgspec refuses an event, `refusal` names the fault in the words a console has always
read (tests/data/console_events_golden.json): the first fault in protocol v1's order, each
field's value checked by msgspec against the field's own type and refused in the sentence
declared next to the field (`SENTENCES`), or, for a field a game brings, by the game's event
classes (``sentences``: RPS Poker's ``throws``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from itertools import pairwise
from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import Meta
from msgspec.structs import force_setattr

from hub.domain.errors import Rejection

VERSION: Literal[1] = 1
MAX_NAME = 64
MAX_NOTE = 500
MAX_INT = 2**53
# The console name of the operator desk: its events are the hub's own.
OPERATOR_CONSOLE = "operator"

# protocol v1's bounds; a float 1.0 has always been taken for version 1
Version = Literal[1] | Annotated[float, Meta(ge=1, le=1)]
Name = Annotated[str, Meta(min_length=1, max_length=MAX_NAME)]
Positive = Annotated[int, Meta(ge=1, lt=MAX_INT)]
Natural = Annotated[int, Meta(ge=0, lt=MAX_INT)]
SeatList = Annotated[
    tuple[Annotated[int, Meta(ge=1, lt=100)], ...], Meta(min_length=1, max_length=10)
]
Note = Annotated[str, Meta(max_length=MAX_NOTE)]
Card = Annotated[int, Meta(ge=1, le=2)]
ThrowText = Annotated[str, Meta(min_length=1, max_length=9)]
# seconds: an integer within ±(2^53 - 1) (made a float) or any finite float
Stamp = Annotated[int, Meta(gt=-MAX_INT, lt=MAX_INT)] | float
# A field's refusal, as a console reads it: (field name, the value refused) -> the sentence.
Sentence = Callable[[str, Any], str]
# How the engine applies an event (``hub.engine.tournament.HANDLERS``): a game names one per
# event type it plays (``Game.handlers``).
Apply = Literal[
    "action",  # a betting action of the hand in play
    "start",
    "win",  # the table's declared winners of a poker hand
    "result",  # a result the game works out from the event (`Game.result_hand`)
    "game_input",  # an input the game checks and keeps (`Game.game_input`)
    "penalty",
    "confirm",
    "undo",
    "void",
    "reopen",
    "exposed",
    "early",
]


class _Tagged(msgspec.StructMeta):
    """A console event class's ``type`` is its tag, declared once (``tag="bet"``): set here
    on the class as it is made (a plain class attribute, read on the hot path)."""

    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any], **kw: Any) -> Any:
        cls = super().__new__(mcls, name, bases, ns, **kw)
        tag = cls.__struct_config__.tag
        if isinstance(tag, str):
            cls.type = tag  # type: ignore[attr-defined]  # ConsoleEvent.type, a ClassVar
        return cls


class ConsoleEvent(
    msgspec.Struct,
    metaclass=_Tagged,
    frozen=True,
    kw_only=True,
    tag_field="type",
    forbid_unknown_fields=True,
):
    """One checked console event: a tagged union on ``type``, one Struct per event type;
    ``type`` is each class's tag (``class Bet(ConsoleEvent, tag="bet")``: ``Bet.type`` is
    "bet"). A type's required fields are its class's (``Bet.amount`` is an ``int``)."""

    type: ClassVar[str]
    # The refusals of the fields this type brings, by field, when no `SENTENCES` has them (a
    # game's event words its own: RPS Poker's ``throws``); gathered by `layout_of`.
    sentences: ClassVar[Mapping[str, Sentence]] = {}
    v: Version  # 1: the protocol version
    tournament: Name
    table: Positive
    console: Name
    seq: Positive
    ts: Stamp | None = None
    deal: Positive | None = None
    seat: Positive | None = None
    amount: Natural | None = None
    seats: SeatList | None = None
    note: Note | None = None
    card: Card | None = None  # exposed: the seat's first (1) or second (2) hole card
    points: Natural | None = None  # penalty: IFP points taken off
    by: Name | None = None  # the official who ordered an operator void or a penalty
    throws: ThrowText | None = None  # RPS Poker: "RPS", one letter per throw of the round
    # The table's `moves` (console:{t}) the entry was made on: refused `stale` when the table
    # moved since (a second tablet, a screen that changed under the tap). None: not checked.
    after: Natural | None = None

    def __post_init__(self) -> None:
        """The checks across a field's values that its type does not hold: a finite ``ts``
        (an integer one made a float), ``seats`` sorted, none twice; version 1 as an int."""
        ts, seats = self.ts, self.seats
        if ts is not None:
            if type(ts) is int:
                force_setattr(self, "ts", float(ts))
            elif ts - ts != 0.0:  # NaN, ±inf
                raise ValueError(f"field 'ts' must be a finite number, not {ts}")
        if seats is not None and any(a >= b for a, b in pairwise(seats)):
            if len(set(seats)) != len(seats):
                raise ValueError("field 'seats' names a seat twice")
            force_setattr(self, "seats", tuple(sorted(seats)))
        if type(self.v) is not int:
            force_setattr(self, "v", VERSION)

    @classmethod
    def problem(cls, raw: Mapping[str, Any]) -> str | None:
        """The fault across fields of a mapping of this type that no field's type holds
        (None: none); checked after ``ts``, ``seats``, ``note`` and ``card``."""
        return None

    def as_record(self) -> dict[str, Any]:
        """The event as a plain mapping with only the fields it carries (journal form)."""
        out: dict[str, Any] = {
            "v": VERSION,
            "tournament": self.tournament,
            "table": self.table,
            "console": self.console,
            "seq": self.seq,
            "type": self.type,
        }
        # Field by field, in the order of the fields (a loop of getattr costs twice).
        if self.ts is not None:
            out["ts"] = self.ts
        if self.deal is not None:
            out["deal"] = self.deal
        if self.seat is not None:
            out["seat"] = self.seat
        if self.amount is not None:
            out["amount"] = self.amount
        if self.seats is not None:
            out["seats"] = list(self.seats)
        if self.note is not None:
            out["note"] = self.note
        if self.card is not None:
            out["card"] = self.card
        if self.points is not None:
            out["points"] = self.points
        if self.by is not None:
            out["by"] = self.by
        if self.throws is not None:
            out["throws"] = self.throws
        if self.after is not None:
            out["after"] = self.after
        return out


# -------------------------------------------------------------------- every game's events
class Start(ConsoleEvent, tag="start", frozen=True, kw_only=True):
    deal: Positive


class Undo(ConsoleEvent, tag="undo", frozen=True, kw_only=True):
    """The last action of the hand in progress taken back."""


class Reopen(ConsoleEvent, tag="reopen", frozen=True, kw_only=True):
    deal: Positive


class Void(ConsoleEvent, tag="void", frozen=True, kw_only=True):
    """The hand voided (a misdeal, a foreign card): every chip returned."""


class Confirm(ConsoleEvent, tag="confirm", frozen=True, kw_only=True):
    deal: Positive


class Penalty(ConsoleEvent, tag="penalty", frozen=True, kw_only=True):
    seat: Positive
    note: Note
    by: Name


SHARED_EVENTS: tuple[type[ConsoleEvent], ...] = (Start, Undo, Reopen, Void, Confirm, Penalty)
SHARED_HANDLERS: dict[str, Apply] = {
    "start": "start",
    "undo": "undo",
    "reopen": "reopen",
    "void": "void",
    "confirm": "confirm",
    "penalty": "penalty",
}


# -------------------------------------------------------------------- refusals
def bad(message: str) -> Rejection:
    return Rejection("bad_schema", message)


def valid(value: Any, kind: Any) -> bool:
    """Does ``value`` convert to type ``kind`` (msgspec, strictly)?"""
    try:
        msgspec.convert({"value": value}, _holder(kind), strict=True)
    except msgspec.ValidationError:
        return False
    return True


@cache
def _holder(kind: Any) -> type[msgspec.Struct]:
    """A Struct of one field of type ``kind``: msgspec keeps a Struct's compiled checks (a
    bare type's it compiles again at every call)."""
    return msgspec.defstruct("Holder", [("value", kind)])


def integer(name: str, value: Any, low: int) -> str:
    """The refusal of an integer field's value (of low bound ``low``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"field '{name}' must be an integer, got {type(value).__name__}"
    if value < low:
        return f"field '{name}' must be at least {low}, got {value}"
    return f"field '{name}' is too large: at most {MAX_INT - 1} (2^53 - 1), got {value}"


def _name(name: str, value: Any) -> str:
    return f"field '{name}' must be a non-empty string of at most {MAX_NAME} characters"


def _stamp(name: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "field 'ts' must be a number"
    if isinstance(value, int):
        return "field 'ts' must be a number from -(2^53 - 1) to 2^53 - 1"
    return f"field 'ts' must be a finite number, not {value}"


def _seats(name: str, value: Any) -> str:
    if not isinstance(value, list | tuple) or not value or len(value) > 10:
        return "field 'seats' must be a list of 1 to 10 seat numbers"
    if not valid(value, SeatList):
        return "field 'seats' must hold seat numbers (positive integers)"
    return "field 'seats' names a seat twice"


def _card(name: str, value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and 2 < value < MAX_INT:
        return f"field 'card' must be 1 or 2 (the seat's first or second card), got {value}"
    return integer(name, value, 1)


# Each field's refusal, as a console reads it (its value fails the field's type); a game's own
# field's is its event classes' (`ConsoleEvent.sentences`, gathered by `layout_of`).
SENTENCES: dict[str, Sentence] = {
    "tournament": _name,
    "table": lambda name, value: integer(name, value, 1),
    "console": _name,
    "seq": lambda name, value: integer(name, value, 1),
    "ts": _stamp,
    "deal": lambda name, value: integer(name, value, 1),
    "seat": lambda name, value: integer(name, value, 1),
    "amount": lambda name, value: integer(name, value, 0),
    "seats": _seats,
    "note": lambda name, value: f"field 'note' must be a string of at most {MAX_NOTE} characters",
    "card": _card,
    "points": lambda name, value: integer(name, value, 0),
    "by": _name,
    "after": lambda name, value: integer(name, value, 0),
}
ENVELOPE = ("v", "tournament", "table", "console", "seq", "type")
# protocol v1 names these fields' faults first, then the type's own (`ConsoleEvent.problem`),
# then the others in their order.
_FIRST = ("ts", "seats", "note", "card")
_FIELDS = msgspec.structs.fields(ConsoleEvent)
_ORDER = (*_FIRST, *(f.name for f in _FIELDS if f.name not in (*_FIRST, "v")))
_AT = re.compile(r" - at `\$\.(\w+)")


class _Values(msgspec.Struct, kw_only=True):
    """Every field's value (none required here), checked by the field's own type."""

    def __post_init__(self) -> None:
        ConsoleEvent.__post_init__(self)  # type: ignore[arg-type]


_VALUES = msgspec.defstruct(
    "Values",
    [("v", int, VERSION), *((f.name, f.type, None) for f in _FIELDS if f.name != "v")],
    bases=(_Values,),
    kw_only=True,
)


def refusal(raw: Any, layout: Layout) -> Rejection:
    """Why protocol v1 refuses ``raw`` (an event msgspec would not take), as a console reads
    it: the first fault in the protocol's order. ``layout``: of every event type
    (`layout_of`)."""
    if type(raw) is not dict and not isinstance(raw, Mapping):
        return bad(f"an event must be a map, got {type(raw).__name__}")
    classes = layout.classes
    known = layout.known
    for key in raw:
        if key not in known:
            return bad(f"unknown field {str(key)[:40]!r}")
    for key in ENVELOPE:
        if key not in raw:
            return bad(f"missing field '{key}'")
    if raw["v"] != VERSION or isinstance(raw["v"], bool):
        return bad(f"unsupported protocol version {raw['v']!r} (this hub speaks v{VERSION})")
    kind = raw["type"]
    if not isinstance(kind, str) or kind not in classes:
        return bad(f"unknown event type {str(kind)[:40]!r}")
    cls = classes[kind]
    for name in layout.needs[kind]:
        if raw.get(name) is None:
            return bad(f"a '{kind}' event needs field '{name}'")
    fault = _value_fault(raw, layout.sentences)
    if fault is not None and fault[0] in _FIRST:
        return bad(fault[1])
    for name, owner in layout.others[kind]:
        if raw.get(name) is not None:
            return bad(f"field '{name}' belongs to a '{owner}' event")
    if (problem := cls.problem(raw)) is not None:
        return bad(problem)
    if fault is not None:
        return bad(fault[1])
    return bad(_own_fault(raw, cls))


def _own_fault(raw: Mapping[str, Any], cls: type[ConsoleEvent]) -> str:
    """msgspec's own words for a fault of a field only ``cls`` has (a game's own field whose
    type's refusal the game does not word itself, `ConsoleEvent.problem`)."""
    try:
        msgspec.convert({k: v for k, v in raw.items() if v is not None}, cls, strict=True)
    except (msgspec.ValidationError, ValueError) as exc:
        return f"a '{cls.type}' event is malformed: {exc}"
    return f"a '{cls.type}' event is malformed"  # pragma: no cover - msgspec refused it


class Layout(msgspec.Struct, frozen=True):
    """What `refusal` reads of the event types, worked out once (`layout_of`)."""

    classes: dict[str, type[ConsoleEvent]]  # every event type by its tag
    known: frozenset[Any]  # every field of every type, and ``type``
    needs: dict[str, tuple[str, ...]]  # by type: the fields it needs beyond the envelope
    others: dict[str, tuple[tuple[str, str], ...]]  # by type: other types' fields, their type
    sentences: dict[str, Sentence]  # every field's refusal: `SENTENCES` and the types' own


def layout_of(classes: Mapping[str, type[ConsoleEvent]]) -> Layout:
    """The layout of the event types ``classes`` (by their tag)."""
    fields = {kind: msgspec.structs.fields(cls) for kind, cls in classes.items()}
    owners = {f.name: kind for kind, own in fields.items() for f in own}
    sentences = dict(SENTENCES)
    for kind, cls in classes.items():
        for name, sentence in cls.sentences.items():
            if sentences.setdefault(name, sentence) is not sentence:
                raise ValueError(f"'{kind}' words field '{name}' again: another type words it")
    return Layout(
        classes=dict(classes),
        known=frozenset(owners) | {"type"},
        needs={
            kind: tuple(f.name for f in own if f.required and f.name not in ENVELOPE)
            for kind, own in fields.items()
        },
        others={
            kind: tuple((n, o) for n, o in owners.items() if n not in {f.name for f in own})
            for kind, own in fields.items()
        },
        sentences=sentences,
    )


def _value_fault(
    raw: Mapping[str, Any], sentences: Mapping[str, Sentence]
) -> tuple[str, str] | None:
    """The first field (in protocol v1's order) whose value its type refuses, and the
    refusal in ``sentences`` (None: none; msgspec's words for a field none words). msgspec
    checks the values in the order they are given, so they are given in that order."""
    ordered = {name: raw[name] for name in _ORDER if name in raw}
    try:
        msgspec.convert(ordered, _VALUES, strict=True)
    except msgspec.ValidationError as exc:
        at = _AT.search(str(exc))
        if at is None:  # __post_init__'s: a ts or seats fault, in its own words
            return ("ts" if "'ts'" in str(exc) else "seats"), str(exc)
        name = at[1]
        if name not in sentences:
            return name, f"field '{name}' is malformed: {exc}"
        return name, sentences[name](name, raw[name])
    return None
