"""The shape of each section of the tournament file, checked by msgspec and worded our way.

Each ``[section]`` is a `msgspec.Struct` below: types, required keys, unknown keys, minimums,
patterns and choices are declared, and ``msgspec.convert`` (strict: no ``true`` for an integer,
no ``"3"`` for a number) checks them. Its error names the failed check and the path (``Expected
`int` >= 1 - at `$[0].tables[2]```); `Checker.convert` turns that into the message users have
always had, at the line of the key: ``groups[0].tables[2]: must be at least 1, got 0``. What
spans several fields (the draw, the schedule, the stages...) is checked in ``rules``.

A table with several faults reports the first msgspec meets (file order within a table).
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from collections.abc import Mapping
from datetime import date, datetime, time
from typing import Annotated, Any, Literal, NoReturn

import msgspec
import msgspec.inspect as mi
from msgspec import UNSET, Meta, Struct, UnsetType, field

from hub.domain.config.keylines import KeyLines, key_path
from hub.domain.config.model import COLOUR_PATTERN, ID_PATTERN, UNSHOWN, ConfigError, ReadFile
from hub.domain.scoring import FORMATS

Text = Annotated[str, Meta(pattern=r"\S")]  # a string with more than blanks
Identifier = Annotated[str, Meta(pattern=ID_PATTERN)]
Seed = int | str


@functools.cache
def at_least(minimum: int) -> Any:
    """An integer >= ``minimum`` (one type object per minimum: msgspec reads it once)."""
    return Annotated[int, Meta(ge=minimum)]


class Shape(Struct, forbid_unknown_fields=True, kw_only=True):
    """A table of the file: only the keys declared, each of its type."""


class Root(Shape):
    tournament: Any
    teams: Any
    groups: Any
    draw: Any
    schedule: Any = UNSET
    decks: Any = UNSET
    consoles: Any = UNSET
    clock: Any = UNSET
    scoring: Any = UNSET
    stages: Any = UNSET
    sessions: Any = UNSET
    broadcast: Any = UNSET
    # and each game's own section ([mahjong], [rps]): ``rules.root_shape`` adds them


@functools.cache
def root_shape(sections: tuple[str, ...]) -> type[Root]:
    """`Root` with the games' own sections (``Game.section``), each checked by its game."""
    fields = [(name, Any, UNSET) for name in sections]
    return msgspec.defstruct("Root", fields, bases=(Root,))  # type: ignore[return-value]


class Tournament(Shape):
    id: Identifier
    name: Text
    seats: at_least(2)  # type: ignore[valid-type]
    deals: at_least(1)  # type: ignore[valid-type]
    small_blind: at_least(1)  # type: ignore[valid-type]
    big_blind: at_least(1)  # type: ignore[valid-type]
    cap_bb: at_least(2) = 100  # type: ignore[valid-type]
    betting: Any = "pot-limit"  # "limit" too for RPS Poker: a rule (rules.tournament)
    release_delay: Annotated[float, Meta(ge=0)] = 0.0
    game: Any = "holdem"  # checked first: it decides the shape (rules.game)


class Team(Shape):
    id: Identifier
    name: Text
    colour: Annotated[str, Meta(pattern=COLOUR_PATTERN)]
    players: list[Text]
    code: Text | UnsetType = UNSET


class Group(Shape):
    id: Identifier
    tables: list[at_least(1)]  # type: ignore[valid-type]
    teams: list[Text] | UnsetType = UNSET  # a later stage's group: filled by its stage


class Advance(Shape):
    from_: Text | UnsetType = field(default=UNSET, name="from")
    top_per_group: at_least(0) = 0  # type: ignore[valid-type]


class Stage(Shape):
    id: Identifier
    groups: list[Text]
    name: Text | UnsetType = UNSET
    advance: Advance | UnsetType = UNSET


class Draw(Shape):
    """``[draw]`` or a session's ``draw``: generated (method, seed) or written (tables)."""

    method: Any = UNSET
    seed: Seed | UnsetType = UNSET
    tables: dict[str, Any] | UnsetType = UNSET


class Substitution(Shape):
    team: Text
    out: Text
    in_: Text = field(name="in")


class Session(Shape):
    id: Identifier
    deals: tuple[at_least(1), int]  # type: ignore[valid-type]
    name: Text | UnsetType = UNSET
    stage: Text | UnsetType = UNSET
    draw: Draw | UnsetType = UNSET
    substitutions: list[Substitution] = []


class Schedule(Shape):
    method: Any = UNSET
    seed: Seed | UnsetType = UNSET
    tables: dict[str, Any] | UnsetType = UNSET
    buttons: list[int] | UnsetType = UNSET


class Decks(Shape):
    file: Text | UnsetType = UNSET
    rehearsal_seed: Seed | UnsetType = UNSET


class Level(Shape):
    minutes: Annotated[float, Meta(gt=0)]
    break_: bool = field(default=False, name="break")
    name: Text | UnsetType = UNSET


class Clock(Shape):
    levels: list[Level]
    on_time_up: Literal["flag", "enforce"] = "flag"


Format = Literal["ifp-points", "imp", "chips"]
assert FORMATS == ("ifp-points", "imp", "chips"), "Format must list hub.domain.scoring.FORMATS"


class Scoring(Shape):
    format: Format = "ifp-points"
    unit: Literal["chips", "big_blinds"] | at_least(1) | UnsetType = UNSET  # type: ignore[valid-type]
    scale: Text | UnsetType = UNSET


class Broadcast(Shape):
    """``[broadcast]``: the cameras of the edit (hub.domain.timecode), the program outputs'
    delays."""

    fps: float = 25.0  # one of FRAME_RATES (rules)
    delay: float | str | UnsetType = UNSET  # the program feed's: seconds, or "20m", "1h30m"
    outputs: dict[str, Any] | UnsetType = UNSET  # more program outputs: name -> their delay
    sync: Annotated[datetime, Meta(tz=True)] | UnsetType = UNSET
    cameras: dict[str, Any] | UnsetType = UNSET


# Keys whose every fault has its own wording (``[]`` stands for any index); a game's section
# brings its own (``Checker.convert``'s ``wording``).
WORDING = {
    "tournament.release_delay": "expected seconds >= 0, got {got}",
    "teams[].colour": "expected a colour like #75AADB, got {got}",
    "clock.on_time_up": "expected 'flag' or 'enforce', got {got}",
    "clock.levels[].minutes": "expected minutes > 0, got {got}",
    "clock.levels[].break": "expected true or false, got {got}",
    "scoring.format": "expected one of 'ifp-points', 'imp', 'chips', got {got}",
    "scoring.unit": "expected 'chips', 'big_blinds' or a number of chips >= 1, got {got}",
    "scoring.average": "expected 'all' or 'others', got {got}",
    "scoring.teams": "expected 'totals' or 'players', got {got}",
    "broadcast.fps": "expected frames per second 23.976, 24, 25, 29.97, 30, 50, 59.94 or 60, "
    "got {got}",
    "broadcast.sync": "expected a date and time with its UTC offset, like "
    "2026-11-25T20:00:00+01:00, got {got}",
}
_EXPECTED = {
    "object": "a table",
    "array": "an array",
    "int": "an integer",
    "str": "a string",
    "int | str": "an integer or a string",
    "float": "a number",
    "bool": "true or false",
}
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_MINIMUM = re.compile(r"^Expected `int` >= (-?\d+)")
_FIELD = re.compile(r"^Object (missing required|contains unknown) field `([^`]+)`")


def show(value: Any) -> str:
    """A value as an error quotes it (cut at 40 characters; a TOML date or time as written)."""
    text = value.isoformat() if isinstance(value, date | time) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_name(c: Checker, key: str, name: str) -> None:
    """A name is shown as written, on air and in every export: no control or bidi character
    (as an operator's roster change), no blank at either end (which no one sees on air, but
    makes "Ana" and "Ana " two players)."""
    bad = UNSHOWN.search(name)
    if bad is not None:
        c.fail(
            key,
            f"{show(name)} holds the character U+{ord(bad.group()):04X} (a control or bidi "
            "character): plain text only",
        )
    if name != name.strip():
        c.fail(key, f"{show(name)} has blanks at its start or end: write {show(name.strip())}")


def name_key(name: str) -> str:
    """Two names that read the same: equal after NFC (an accent typed as one character or as a
    letter and a combining mark) and with runs of blanks as one space."""
    return " ".join(unicodedata.normalize("NFC", name).split())


def join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


class Checker:
    """Raises the `ConfigError` of one file, at the line of the key (found only on failure);
    collects the warnings of the file, worded and placed the same way."""

    def __init__(self, source: str, text: str | None = None, read: ReadFile | None = None) -> None:
        self.source = source
        self.source_text = text
        self.read = read
        self.warnings: list[str] = []

    def fail(self, key: str, problem: str) -> NoReturn:
        raise ConfigError(self.source, key, problem, self._line(key))

    def warn(self, key: str, problem: str) -> None:
        """Note a problem that does not stop the file from loading, worded as an error is."""
        self.warnings.append(str(ConfigError(self.source, key, problem, self._line(key))))

    def _line(self, key: str) -> int | None:
        text = self.source_text
        return KeyLines(text).find(key_path(key)) if text is not None else None

    def convert(
        self, value: Any, shape: Any, key: str, wording: Mapping[str, str] | None = None
    ) -> Any:
        """``value`` (the parsed TOML at ``key``) checked and converted to ``shape`` (a type:
        the caller names what it gets); ``wording``: more keys worded their own way."""
        try:
            return msgspec.convert(value, shape, strict=True)
        except msgspec.ValidationError as exc:
            self.fail(*_explain(str(exc), value, shape, key, wording or {}))


def _explain(
    message: str, value: Any, shape: Any, key: str, extra: Mapping[str, str]
) -> tuple[str, str]:
    """msgspec's ``message`` about ``value`` (at ``key``) as (the faulty key, our problem)."""
    text, _, path = message.partition(" - at `$")
    steps: list[str | int] = [
        int(index) if index else name for name, index in _STEP.findall(path.rstrip("`"))
    ]
    faulty = _field(text)
    if faulty is not None:
        kind, name = faulty
        where = _key(key, [*steps, name])
        if kind == "missing required":
            return where, "missing"
        allowed = [f.encode_name for f in _struct_at(mi.type_info(shape), steps).fields]
        close = difflib.get_close_matches(name, allowed, n=1)
        return where, "unknown key" + (f" (did you mean {close[0]!r}?)" if close else "")
    got = _value_at(value, steps)
    where = _key(key, steps)
    general = re.sub(r"\[\d+\]", "[]", where)
    wording = extra.get(general, WORDING.get(general))
    return where, _problem(text, got) if wording is None else wording.format(got=show(got))


def _field(text: str) -> tuple[str, str] | None:
    match = _FIELD.match(text)
    return (match[1], match[2]) if match else None


def _problem(text: str, got: Any) -> str:
    if text.startswith("Expected `array` of length 2"):
        return "expected [first, last]"  # a session's deals (the one pair of the file)
    minimum = _MINIMUM.match(text)
    if minimum:
        return f"must be at least {minimum[1]}, got {got}"
    if text.startswith("Expected `str` matching regex"):
        if not got.strip():
            return "must not be empty"
        return f"expected letters, digits, '-', '_' or '.', got {show(got)}"
    expected = text.removeprefix("Expected `").partition("`")[0]
    return f"expected {_EXPECTED.get(expected, expected)}, got {show(got)}"


def _key(key: str, steps: list[str | int]) -> str:
    """``key`` and the steps below it: ``teams``, ``[0, "id"]`` -> ``teams[0].id``."""
    for step in steps:
        key = f"{key}[{step}]" if isinstance(step, int) else join(key, step)
    return key


def _value_at(value: Any, steps: list[str | int]) -> Any:
    for step in steps:
        value = value[step]
    return value


def _struct_at(info: Any, steps: list[str | int]) -> Any:
    """The struct type (msgspec.inspect) at ``steps`` below ``info``."""
    for step in [*steps, None]:
        if isinstance(info, mi.UnionType):
            info = next(t for t in info.types if isinstance(t, mi.StructType))
        if step is None:
            return info
        if isinstance(info, mi.StructType):
            info = next(f.type for f in info.fields if f.encode_name == step)
        else:
            info = info.item_type if hasattr(info, "item_type") else info.item_types[step]
    return info
