"""An operator command as the ingest applies it, from the request a client signed.

The websocket ops and the REST routes shape a command before relaying it
(``hub.serve.service``, ``hub.serve.http``); the ingest shapes it again, here, from the
signed text alone (``hub.roles.signed``): an edge relays a signed command, it never gets to
say what the command is.
"""

from __future__ import annotations

from typing import Any

from hub.serve.rulings import RULINGS, ruling_command

__all__ = ["COMMAND_OPS", "DESK_FIELDS", "IDEMPOTENCY", "kept", "operator_command"]

# What makes a desk command safe to repeat (docs/companion.md): its request id (an
# ``Idempotency-Key``) and the desk version it was made against (``If-Match``).
IDEMPOTENCY = ("request", "expect")

# The operator desk's commands of the cue list, the on-air undo and the hub's preview (a control
# surface's preview and take), with the fields passed on.
DESK_FIELDS: dict[str, tuple[str, ...]] = {
    "cue": ("action", "slot", "value", "label", "cue", "to", *IDEMPOTENCY),
    "undo_take": ("cut", *IDEMPOTENCY),
    "preview": ("action", "slot", "value", "cue", *IDEMPOTENCY),
    "take": ("cut", *IDEMPOTENCY),
}

COMMAND_OPS = ("onair", "clock", *DESK_FIELDS, *RULINGS)


def kept(request: dict[str, Any], names: tuple[str, ...] = IDEMPOTENCY) -> dict[str, Any]:
    """The fields of ``names`` the request gives."""
    return {k: request[k] for k in names if k in request}


def operator_command(request: Any) -> tuple[dict[str, Any] | None, str]:
    """``(command, "")`` for a request of any operator op, or ``(None, why)``."""
    if not isinstance(request, dict) or not isinstance(request.get("op"), str):
        return None, "a command is an object with an 'op'"
    op = request["op"]
    if op == "onair":
        if not isinstance(request.get("slot"), str) or "value" not in request:
            return None, "onair needs a 'slot' and a 'value'"
        command = {"op": "onair", "slot": request["slot"], "value": request["value"]}
        return command | kept(request), ""
    if op == "clock":
        command = {"op": "clock", "action": request.get("action")}
        return command | kept(request, ("seconds", "level", *IDEMPOTENCY)), ""
    if op in DESK_FIELDS:
        return {"op": op, **{k: request[k] for k in DESK_FIELDS[op] if k in request}}, ""
    if op in RULINGS:
        return ruling_command(op, request)
    return None, f"unknown command {op!r}"
