"""One block of the standings payload, as ``/api/standings?stage=…&group=…`` serves it.

The leaderboard overlay makes the same choice in the browser (``overlays/js/leaderboard.js``)
from the same payload, so REST and the graphic always agree. Scopes:

* ``stage`` (the default for an event with stages): the stage's standings per group, added up
  over its sessions; ``stage`` names it (default: the current stage);
* ``session``: one session's standings and seat rankings (default: the current session);
* ``across``: the stage's teams ranked together across its groups;
* ``overall``: every team, by the furthest stage reached, then by rank across groups there.

``group`` keeps only that group's rows. A one-session tournament has only ``group``.
"""

from __future__ import annotations

from typing import Any

SCOPES = ("stage", "session", "across", "overall")
VIEWS = ("like_for_like", "running")

__all__ = ["SCOPES", "select_standings"]


def select_standings(
    payload: dict[str, Any],
    *,
    scope: str | None = None,
    stage: str | None = None,
    session: str | None = None,
    group: str | None = None,
) -> dict[str, Any] | str:
    """The chosen block of a standings payload, or why there is none (a sentence)."""
    event = payload.get("event")
    if scope is not None and scope not in SCOPES:
        return f"unknown scope {scope!r} (expected one of {', '.join(SCOPES)})"
    head: dict[str, Any] = {k: payload[k] for k in ("tournament", "name", "deals") if k in payload}
    if event is None:
        if scope is not None or stage is not None or session is not None:
            return "this tournament is one session of one stage: only group selects"
        out = {**head, "scope": "stage"}
        for view in VIEWS:
            if view in payload:
                out[view] = _filtered(payload[view], group)
        return out
    stages = {s["id"]: s for s in event["stages"]}
    sessions = {s["id"]: s for s in event["sessions"]}
    if scope is None:
        scope = "session" if session is not None else "stage"
    if session is not None and session not in sessions:
        return f"no session {session!r} (sessions: {', '.join(sessions)})"
    if stage is not None and stage not in stages:
        return f"no stage {stage!r} (stages: {', '.join(stages)})"
    if scope == "session":
        session = session or event["current"]["session"]
        stage = sessions[session]["stage"]
    else:
        stage = stage or event["current"]["stage"]
    if group is not None and scope != "overall" and group not in stages[stage]["groups"]:
        return f"no group {group!r} in stage {stage}"
    out = {**head, "scope": scope}
    if scope == "session":
        out["session"] = session
    if scope != "overall":
        out["stage"] = stage
    for view in VIEWS:
        block = payload.get(view)
        if block is None:
            continue
        if scope == "session":
            chosen = block["sessions"][session]
        elif scope == "stage":
            chosen = {"teams": block["stages"][stage]["teams"]}
        elif scope == "across":
            chosen = {"teams": block["stages"][stage]["across"]}
        else:
            chosen = {"teams": block["overall"]}
        out[view] = _filtered(chosen, group)
    return out


def _filtered(block: dict[str, Any], group: str | None) -> dict[str, Any]:
    out = {"teams": block["teams"]}
    if "seats" in block:
        out["seats"] = block["seats"]
    if group is None:
        return out
    return {k: [r for r in rows if r.get("group") == group] for k, rows in out.items()}
