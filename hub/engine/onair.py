"""The on-air slots as the operator moves them (docs/protocol.md 2.6).

`check_value`: a slot value from outside, its selection keys checked against the tournament (a
deal, seat or table that does not exist is refused with the engine's code and nothing changes);
keys it does not know pass as they always did. `Takes`: the value each on-air change replaced,
so the last change can be taken back (``undo_take``); a journal replay rebuilds it as it
rebuilds the slots. Pure.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from hub.domain.config import TournamentConfig
from hub.domain.errors import Rejection

__all__ = [
    "ONAIR_SLOTS",
    "SLOT_KEYS",
    "TAKES_KEPT",
    "Takes",
    "check_slot",
    "check_value",
    "default_onair",
    "describe",
    "take_value",
]

ONAIR_SLOTS = ("leaderboard", "seat", "table", "compare", "ticker")
# The selection keys of each slot (overlays/js/mixer.js has the same list): a Take sends every
# one (None: the overlay's URL decides), so what goes on air is exactly the preview, not the
# preview merged over the slot's old keys.
SLOT_KEYS: dict[str, tuple[str, ...]] = {
    "leaderboard": ("view", "group", "scope", "stage", "session"),
    "seat": ("seat", "view"),
    "table": ("table",),
    "compare": ("deal", "seat", "tables", "mode"),
    "ticker": (),
}
TAKES_KEPT = 50  # on-air changes that can be taken back, newest first
CHOICES: dict[str, tuple[str, ...]] = {
    "view": ("like_for_like", "running"),
    "mode": ("live", "sync"),
    "scope": ("stage", "session", "across", "overall"),
}


def default_onair() -> dict[str, Any]:
    return {
        "slots": {
            "leaderboard": {"visible": True, "view": "like_for_like"},
            "seat": {"visible": False, "seat": 1},
            "table": {"visible": False, "table": 1},
            "compare": {"visible": False, "deal": 1, "seat": 1, "tables": []},
            "ticker": {"visible": True},
        }
    }


def check_slot(slot: Any) -> str:
    if slot not in ONAIR_SLOTS:
        raise Rejection("bad_request", f"unknown on-air slot {slot!r}")
    return str(slot)


def _number(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Rejection("bad_request", f"on-air '{key}' must be a whole number, not {value!r}")
    return value


def all_tables(config: TournamentConfig) -> list[int]:
    return sorted(t for group in config.groups.values() for t in group.tables)


def check_value(config: TournamentConfig, value: Any) -> dict[str, Any]:
    """A slot value checked: `Rejection` naming the first key that does not fit. A key set to
    null unsets it (the overlay's URL decides)."""
    if not isinstance(value, Mapping):
        raise Rejection("bad_request", "on-air 'value' must be an object")
    for key in ("visible", "cut"):
        if key in value and not isinstance(value[key], bool):
            raise Rejection("bad_request", f"on-air '{key}' must be true or false")
    out = {k: v for k, v in value.items() if v is not None}
    if "deal" in out and not 1 <= _number(out["deal"], "deal") <= config.deals:
        raise Rejection(
            "unknown_deal", f"deal {out['deal']} does not exist (deals 1 to {config.deals})"
        )
    if "seat" in out and not 1 <= _number(out["seat"], "seat") <= config.seats:
        raise Rejection(
            "unknown_seat", f"seat {out['seat']} does not exist (seats 1 to {config.seats})"
        )
    tables = all_tables(config)
    wanted = [out["table"]] if "table" in out else []
    if "tables" in out:
        if not isinstance(out["tables"], list):
            raise Rejection("bad_request", "on-air 'tables' must be a list of table numbers")
        if len(set(map(repr, out["tables"]))) != len(out["tables"]):
            raise Rejection("bad_request", "on-air 'tables' names a table twice")
        wanted += out["tables"]
    for table in wanted:
        if _number(table, "table") not in tables:
            listed = ", ".join(map(str, tables))
            raise Rejection("unknown_table", f"table {table} does not exist (tables {listed})")
    for key, choices in CHOICES.items():
        if key in out and out[key] not in choices:
            raise Rejection(
                "bad_request", f"on-air '{key}' is one of {', '.join(choices)}, not {out[key]!r}"
            )
    if "group" in out and not (isinstance(out["group"], str) and out["group"] in config.groups):
        raise Rejection("bad_request", f"group {out['group']!r} does not exist")
    return dict(value)


class Takes:
    """The value each on-air change replaced, newest last (at most `TAKES_KEPT`)."""

    def __init__(self) -> None:
        self.kept: deque[tuple[str, dict[str, Any], float]] = deque(maxlen=TAKES_KEPT)

    def __len__(self) -> int:
        return len(self.kept)

    def push(self, slot: str, before: Mapping[str, Any], at: float) -> None:
        self.kept.append((slot, dict(before), at))

    def pop(self) -> tuple[str, dict[str, Any]] | None:
        """The slot and the value the latest change replaced (taken off the list)."""
        if not self.kept:
            return None
        slot, before, _ = self.kept.pop()
        return slot, before

    def payload(self) -> dict[str, Any] | None:
        """What ``undo_take`` would restore now: ``{"slot", "value", "at"}`` (``at``: when the
        change it takes back was made); None when there is nothing to take back."""
        if not self.kept:
            return None
        slot, before, at = self.kept[-1]
        return {"slot": slot, "value": dict(before), "at": at, "depth": len(self.kept)}

    def snapshot(self) -> list[list[Any]]:
        return [[slot, before, at] for slot, before, at in self.kept]

    def restore(self, data: Any) -> None:
        self.kept.clear()
        for slot, before, at in data or ():
            self.kept.append((str(slot), dict(before), float(at)))


def take_value(slot: str, value: Mapping[str, Any], cut: bool = False) -> dict[str, Any]:
    """The on-air value a Take (or a Cut) of ``value`` sends (as the mixer's ``takeValue``):
    every selection key of the slot (None where the preview has none), shown."""
    out: dict[str, Any] = dict.fromkeys(SLOT_KEYS.get(slot, ()))
    out.update((k, v) for k, v in value.items() if k not in ("visible", "cut"))
    out["visible"] = True
    if cut:
        out["cut"] = True
    return out


def describe(slot: str, value: Mapping[str, Any] | None) -> str:
    """A slot's selection in words, as the mixer writes it: "compare · deal 3 · seat 5 ·
    tables 1, 4 · live"."""
    v = value or {}
    parts = [slot]
    for key in ("table", "deal", "seat", "group", "scope", "stage", "session"):
        if v.get(key) not in (None, ""):
            parts.append(f"{key} {v[key]}")
    tables = v.get("tables")
    if isinstance(tables, list) and tables:
        parts.append("tables " + ", ".join(map(str, tables)))
    if v.get("view"):
        parts.append(str(v["view"]).replace("_", " "))
    if v.get("mode"):
        parts.append("deal-aligned replay" if v["mode"] == "sync" else "live")
    return " · ".join(parts)
