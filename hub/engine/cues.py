"""`CueList`: the operator's prepared graphics (docs/protocol.md 2.6, "Cue list").

Each cue is a slot and the selection it would put on air (``value``, checked as an on-air value
is), with an optional ``label`` and an ``id`` the hub gives it (1, 2, ...; never reused), so two
operator browsers name the same cue (a command names it as ``cue``: ``id`` is the control
channel's request id). The list is moved only by journaled ``cue`` commands
(add, move, remove), so it survives a restart and a replay of the journal rebuilds it. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hub.domain.config import TournamentConfig
from hub.domain.errors import Rejection
from hub.engine.onair import check_slot, check_value

__all__ = ["CUES_MAX", "LABEL_MAX", "CueList"]

CUES_MAX = 100
LABEL_MAX = 64
# Keys a cue does not keep: the Take decides what shows and how (visible, cut).
NOT_CUED = ("visible", "cut")


class CueList:
    def __init__(self) -> None:
        self.cues: list[dict[str, Any]] = []
        self.next_id = 1

    def _index(self, cue_id: Any) -> int:
        for i, cue in enumerate(self.cues):
            if cue["id"] == cue_id and not isinstance(cue_id, bool):
                return i
        raise Rejection("bad_request", f"there is no cue {cue_id!r} in the cue list")

    def check(self, command: Mapping[str, Any], config: TournamentConfig) -> dict[str, Any]:
        """The journal record of a ``cue`` command (without ``kind`` and ``at``), checked:
        `Rejection` with the reason, and nothing changes."""
        action = command.get("action")
        if action == "add":
            if len(self.cues) >= CUES_MAX:
                raise Rejection("bad_request", f"the cue list is full ({CUES_MAX} cues)")
            slot = check_slot(command.get("slot"))
            value = check_value(config, command.get("value"))
            label = command.get("label")
            if label is not None and not (isinstance(label, str) and len(label) <= LABEL_MAX):
                raise Rejection("bad_request", f"a cue's 'label' is text of {LABEL_MAX} at most")
            kept = {k: v for k, v in value.items() if k not in NOT_CUED}
            record = {"op": "cue", "action": "add", "slot": slot, "value": kept}
            return record | ({"label": label} if label else {})
        if action == "remove":
            self._index(command.get("cue"))
            return {"op": "cue", "action": "remove", "cue": command["cue"]}
        if action == "move":
            self._index(command.get("cue"))
            to = command.get("to")
            if isinstance(to, bool) or not isinstance(to, int) or not 0 <= to < len(self.cues):
                last = len(self.cues) - 1
                raise Rejection("bad_request", f"a cue moves to a place 0 to {last}, not {to!r}")
            return {"op": "cue", "action": "move", "cue": command["cue"], "to": to}
        raise Rejection("bad_request", f"unknown cue action {action!r} (add, move or remove)")

    def apply(self, record: Mapping[str, Any]) -> bool:
        """Apply a checked record (or one from the journal); whether the list moved."""
        action = record.get("action")
        if action == "add":
            cue = {"id": self.next_id, "slot": record["slot"], "value": dict(record["value"])}
            if record.get("label"):
                cue["label"] = record["label"]
            self.cues.append(cue)
            self.next_id += 1
            return True
        try:
            i = self._index(record.get("cue"))
        except Rejection:  # a journal of another run: nothing to move
            return False
        cue = self.cues.pop(i)
        if action == "move":
            self.cues.insert(min(int(record["to"]), len(self.cues)), cue)
        return True

    def payload(self) -> list[dict[str, Any]]:
        return [{**cue, "value": dict(cue["value"])} for cue in self.cues]

    def snapshot(self) -> dict[str, Any]:
        return {"next_id": self.next_id, "cues": self.payload()}

    def restore(self, data: Any) -> None:
        data = data or {}
        self.cues = [dict(c) for c in data.get("cues", ())]
        self.next_id = int(data.get("next_id", 1))
