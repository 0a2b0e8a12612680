"""What the playouts have on air: the graphics CasparCG, SPX or an OGraf renderer played.

A Duplicast template run by a playout reports each ``play()`` and ``stop()`` to the hub
(``POST /api/playout`` with the playout key, docs/overlays.md), so the operator panel shows
what the playout has on air and is never a second, wrong truth. A report is checked here
(`check_report`: a closed set of tools, pages and parameters, small values), journaled as a
control record like the desk's other changes, and applied by `PlayoutBoard.apply`. A report
changes no slot: it says what another controller did. Pure: time comes in the record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hub.domain.errors import Rejection
from hub.engine.onair import SLOT_KEYS

__all__ = ["PAGES", "PARAMS", "STATES", "TOOLS", "PlayoutBoard", "check_report", "label"]

TOOLS = {"casparcg": "CasparCG", "spx": "SPX", "ograf": "OGraf"}
"""The tools a template reports from (its ``playout=``), and their names as the panel writes."""
PAGES = ("leaderboard", "seat", "table", "compare", "ticker", "clock")
"""The overlay pages that are templates (overlays/templates/)."""
STATES = ("play", "stop")
PARAMS = ("deal", "seat", "table", "tables", "group", "scope", "stage", "session", "view")
"""The selection a report may carry (the page's URL parameters, those of its slot:
``hub.engine.onair.SLOT_KEYS``); anything else is dropped."""
_NUMBERS = ("deal", "seat", "table", "session")
MAX_SHOWN = 32
"""Graphics kept on air at once (one per tool and page); a report beyond is refused."""
_TEXT_MAX = 32


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 10_000


def _param(name: str, value: Any) -> Any:
    """A parameter as kept: a number, a list of numbers (``tables``) or a short text; the
    page's URL gives them as text, so digits are read as a number."""
    if name == "tables":
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list) or len(items) > 16:
            raise Rejection("bad_request", "playout 'tables' is a list of up to 16 tables")
        return [_param("table", item) for item in items]
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 5:
        value = int(value.strip())
    if name in _NUMBERS:
        if not _whole(value):
            raise Rejection("bad_request", f"playout '{name}' is a whole number from 1")
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not 1 <= len(value) <= _TEXT_MAX:
        raise Rejection("bad_request", f"playout '{name}' is a text of 1 to {_TEXT_MAX} characters")
    return value


def check_report(command: Mapping[str, Any], now: float) -> dict[str, Any]:
    """The control record of a playout's report ``{"op": "playout", "tool", "page", "state",
    "params"}``, checked; `Rejection` naming the field otherwise."""
    tool, page, state = command.get("tool"), command.get("page"), command.get("state")
    if tool not in TOOLS:
        raise Rejection("bad_request", f"playout 'tool' is one of {', '.join(TOOLS)}")
    if page not in PAGES:
        raise Rejection("bad_request", f"playout 'page' is one of {', '.join(PAGES)}")
    if state not in STATES:
        raise Rejection("bad_request", "playout 'state' is 'play' or 'stop'")
    raw = command.get("params", {})
    if not isinstance(raw, Mapping):
        raise Rejection("bad_request", "playout 'params' is an object")
    used = SLOT_KEYS.get(page, ())  # what the page's selection is (a table has no view)
    params = {k: _param(k, raw[k]) for k in PARAMS if k in used and raw.get(k) not in (None, "")}
    record = {"kind": "control", "op": "playout", "tool": tool, "page": page, "state": state}
    return record | {"params": params, "at": now}


def label(page: str, params: Mapping[str, Any], released: Callable[[int], bool]) -> str:
    """A graphic in words ("compare · deal 3 · seat 5"); a deal not released is not named
    ("compare · deal not released"), as everywhere a control surface reads."""
    deal = params.get("deal")
    if isinstance(deal, int) and not released(deal):
        return f"{page} · deal not released"
    parts = [page]
    for key in ("table", "deal", "seat", "group", "scope", "stage", "session"):
        if key in params:
            parts.append(f"{key} {params[key]}")
    if params.get("tables"):
        parts.append("tables " + ", ".join(map(str, params["tables"])))
    if params.get("view"):
        parts.append(str(params["view"]).replace("_", " "))
    return " · ".join(parts)


class PlayoutBoard:
    """The graphics each playout has on air, by (tool, page), in the order they were played."""

    def __init__(self) -> None:
        self.shown: dict[tuple[str, str], dict[str, Any]] = {}

    def check(self, record: Mapping[str, Any]) -> None:
        """`Rejection` for a play that would keep more than ``MAX_SHOWN`` graphics."""
        key = (record["tool"], record["page"])
        if record["state"] == "play" and key not in self.shown and len(self.shown) >= MAX_SHOWN:
            raise Rejection("too_large", f"at most {MAX_SHOWN} playout graphics are kept on air")

    def apply(self, record: Mapping[str, Any]) -> bool:
        """Apply a report (checked, or from the journal); whether anything moved."""
        key = (str(record["tool"]), str(record["page"]))
        if record["state"] == "stop":
            return self.shown.pop(key, None) is not None
        before = self.shown.get(key)
        params = dict(record.get("params") or {})
        if before is not None and before["params"] == params:
            return False  # played again (a playout's retry, a next()): on air since before
        self.shown[key] = {"tool": key[0], "page": key[1], "params": params, "since": record["at"]}
        return True

    def payload(self, released: Callable[[int], bool]) -> list[dict[str, Any]]:
        """``[{tool, name, page, label, since}]``, oldest first (``name``: the tool's own)."""
        return [
            {
                "tool": g["tool"],
                "name": TOOLS.get(g["tool"], g["tool"]),
                "page": g["page"],
                "label": label(g["page"], g["params"], released),
                "since": g["since"],
            }
            for g in self.shown.values()
        ]

    def snapshot(self) -> list[dict[str, Any]]:
        return [dict(g, params=dict(g["params"])) for g in self.shown.values()]

    def restore(self, data: Any) -> None:
        self.shown = {}
        for g in data or ():
            self.shown[(str(g["tool"]), str(g["page"]))] = dict(g, params=dict(g["params"]))
