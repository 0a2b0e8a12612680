"""The officials' commands as a client sends them (`confirm`, `void`, `penalty`, `withdraw`,
`roster`), shaped once for every transport: the websocket op (``hub.serve.service``) and the
REST routes ``POST /api/confirm|void|penalty|withdraw|roster`` (``hub.serve.http``) answer the
same bodies with the same codes. Only the shape is checked here (what a command must carry to
reach the ingest); the engine checks the rest (``hub.engine.desk``), whatever the transport.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["RULINGS", "ruling_command"]

# Each ruling's fields, as the command carries them to the ingest.
RULINGS: dict[str, tuple[str, ...]] = {
    "confirm": ("table", "deal", "seats", "by", "reason"),
    "void": ("table", "deal", "by", "reason"),
    "penalty": ("table", "seat", "chips", "points", "by", "reason"),
    "withdraw": ("penalty", "by", "reason"),  # a penalty taken back: its number (`id`)
    "roster": ("team", "table", "seat", "player", "name", "team_name", "colour", "by", "reason"),
}


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def ruling_command(op: str, request: Any) -> tuple[dict[str, Any] | None, str]:
    """``(command, "")``, or ``(None, why)`` for a request that cannot be one (``bad_request``)."""
    if not isinstance(request, Mapping):
        return None, f"{op} takes a JSON object"
    if op == "roster":
        if not isinstance(request.get("team"), str):
            return None, "roster needs a 'team' (its id)"
    elif op == "withdraw":
        if not _int(request.get("penalty")):
            return None, "withdraw needs an int 'penalty' (the penalty's number)"
    elif not _int(request.get("table")):
        return None, f"{op} needs an int 'table'"
    if op == "confirm":
        seats = request.get("seats")
        if not _int(request.get("deal")) or not (
            seats is None or (isinstance(seats, list) and all(_int(s) for s in seats))
        ):
            return None, "confirm needs int 'table', 'deal' and optional 'seats'"
    by = request.get("by")
    if not isinstance(by, str) or not by.strip():
        return None, f"{op} needs 'by': the name of the official who rules"
    command = {"op": op, **{k: request[k] for k in RULINGS[op] if request.get(k) is not None}}
    if command.get("seats") == []:
        del command["seats"]
    return command, ""
