"""The ``control`` family: the desk as a control surface reads it (a Stream Deck through
Bitfocus Companion, docs/companion.md): one small flat object, every value a scalar, so
Companion's generic HTTP module and its ``jsonpath`` read it with paths like ``$.compare``.

What it says of the air is the programme's: each slot's tally is the slot as the programme
sources show it (the public ``onair``, which the program feed serves as it is: a split screen
of a deal not released shows nothing there). Nothing in it names a deal that is not released:
a preview or a cue of one reads "compare · deal not released". The family is the operator's
(``GET /api/control`` with the operator token, or the read-only tally key,
``DUPLICAST_TALLY_TOKEN``); its route's ``actions`` are the control surface's commands
(``POST /api/control/{action}``, ``hub.serve.http``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hub.domain.states import Role
from hub.engine.changes import (
    ClockChanged,
    CuesChanged,
    DealReleased,
    OnAirChanged,
    PlayoutChanged,
    PreviewChanged,
)
from hub.engine.families.base import Command, EngineView, Feed, Reading, Shape, TopicKeys
from hub.engine.families.desk import clock_payload, compare_slot_public
from hub.engine.onair import ONAIR_SLOTS, describe
from hub.wire.topics import LIVE, TopicKey, program_outputs

__all__ = ["ACTIONS", "CONTROL", "at_read", "control_payload"]


def _slot_body(visible: bool) -> Shape:
    def shape(body: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
        if not isinstance(body.get("slot"), str):
            return None, f"{'show' if visible else 'hide'} needs a 'slot'"
        return {"op": "onair", "slot": body["slot"], "value": {"visible": visible}}, ""

    return shape


def _preview_body(body: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    if not isinstance(body.get("slot"), str):
        return None, "preview needs a 'slot' and its selection ('value', an object)"
    value = body.get("value", {})
    return {"op": "preview", "action": "set", "slot": body["slot"], "value": value}, ""


def _cue_body(body: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    if "cue" not in body:
        return None, "cue needs 'cue': the id of a cue of the cue list"
    return {"op": "preview", "action": "cue", "cue": body["cue"]}, ""


def _clock_body(body: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    return {"op": "clock", **{k: body[k] for k in ("action", "seconds", "level") if k in body}}, ""


def _fixed(command: dict[str, Any], *passed: str) -> Shape:
    def shape(body: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
        return {**command, **{k: body[k] for k in passed if k in body}}, ""

    return shape


ACTIONS = (
    Command("preview", _preview_body),
    Command("cue", _cue_body),
    Command("next", _fixed({"op": "preview", "action": "next"})),
    Command("previous", _fixed({"op": "preview", "action": "previous"})),
    Command("clear", _fixed({"op": "preview", "action": "clear"})),
    Command("take", _fixed({"op": "take"})),
    Command("cut", _fixed({"op": "take", "cut": True})),
    Command("show", _slot_body(True)),
    Command("hide", _slot_body(False)),
    Command("undo", _fixed({"op": "undo_take"}, "cut")),
    Command("clock", _clock_body),
)
"""``POST /api/control/{action}``: the control surface's commands (docs/companion.md), each
the engine's command from the body (the ops ``preview``, ``take``, ``onair``, ``undo_take``,
``clock``) or why not; ``hub.serve.http`` adds ``request`` and ``expect``
(``hub.serve.commands.IDEMPOTENCY``), from the body or the ``Idempotency-Key`` and
``If-Match`` headers."""


def control_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    return [k[LIVE]["control"]]


def _words(engine: EngineView, slot: str, value: Mapping[str, Any] | None) -> tuple[str, bool]:
    """A selection in words, and whether it names a deal not released (then the words do not
    name it: a control surface never reads an unreleased deal)."""
    deal = (value or {}).get("deal")
    public = engine.release.deal_released
    if isinstance(deal, int) and not isinstance(deal, bool) and not public(deal):
        return f"{slot} · deal not released", True
    return describe(slot, value), False


def _cue(engine: EngineView, cue: Mapping[str, Any] | None, name: str) -> dict[str, Any]:
    if cue is None:
        return {name: 0, f"{name}_text": ""}
    words, _ = _words(engine, str(cue["slot"]), cue["value"])
    label = cue.get("label")
    return {name: cue["id"], f"{name}_text": f"{label} · {words}" if label else words}


def control_payload(engine: EngineView) -> dict[str, Any]:
    """The flat state (docs/companion.md lists every field)."""
    desk = engine.desk
    config = engine.state.config
    out: dict[str, Any] = {
        "version": desk.version,
        "feed": "program" if program_outputs(config) else "public",
    }
    slots = desk.onair["slots"]
    shown = []
    for slot in ONAIR_SLOTS:
        value = dict(slots.get(slot, {}))
        if slot == "compare" and not compare_slot_public(engine, value):
            value = {"visible": False}  # as the programme sources see it
        visible = value.get("visible") is True
        if visible:
            shown.append(slot)
        out[slot] = visible
        out[f"{slot}_text"] = _words(engine, slot, value)[0]
    out["onair"] = ", ".join(shown)
    preview = desk.preview
    if preview is None:
        out |= {"preview": "", "preview_text": "", "preview_cue": 0, "preview_unreleased": False}
    else:
        words, held = _words(engine, preview["slot"], preview["value"])
        out |= {
            "preview": preview["slot"],
            "preview_text": words,
            "preview_cue": preview.get("cue") or 0,
            "preview_unreleased": held,
        }
    cues = desk.cues.cues
    ids = [c["id"] for c in cues]
    current = None if preview is None else preview.get("cue")
    out["cues"] = len(cues)
    out["cue_index"] = ids.index(current) + 1 if current in ids else 0
    out |= _cue(engine, desk.cue_at(1), "next_cue")
    out |= _cue(engine, desk.cue_at(-1), "previous_cue")
    out["undo"] = len(desk.takes) > 0
    # What the playouts report on air (hub.engine.playout): "compare · deal 3 in CasparCG"
    played = desk.playout.payload(engine.release.deal_released)
    out["playout"] = len(played)
    out["playout_text"] = ", ".join(f"{g['label']} in {g['name']}" for g in played)
    clock = desk.clock
    at = desk.clock_at if clock is None else clock.as_of(desk.clock_at)
    reading = clock_payload(config, clock, at)
    if not reading["configured"]:
        out |= {"clock": "none", "clock_level": 0, "clock_name": "", "clock_left": 0}
        out |= {"clock_as_of": 0, "clock_text": ""}
        return out
    out |= {
        "clock": reading["status"],
        "clock_level": reading["level"],
        "clock_name": reading["name"],
        "clock_left": reading["level_left"],
        "clock_as_of": reading["as_of"],
        "clock_text": _mmss(reading["level_left"]),
    }
    return out


def _mmss(seconds: float) -> str:
    whole = max(0, int(seconds + 0.999))  # (a countdown shows 0:01 until it is over)
    return f"{whole // 60}:{whole % 60:02d}"


def at_read(payload: dict[str, Any], now: float) -> dict[str, Any]:
    """The state as read at ``now`` (a REST read, a command's answer): a running clock's time
    left counted down from when it last changed."""
    if payload.get("clock") != "running":
        return payload
    left = max(0.0, float(payload["clock_left"]) - (now - float(payload["clock_as_of"])))
    return {**payload, "clock_left": round(left, 3), "clock_text": _mmss(left)}


def _control(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    return control_payload(read.engine)


CONTROL = Feed(
    "control",
    (OnAirChanged, DealReleased, CuesChanged, PreviewChanged, ClockChanged, PlayoutChanged),
    control_keys,
    _control,
    audiences=(LIVE,),
    role=Role.OPERATOR,
    route="/api/control",
    delta="replace of the fields that moved",
    actions=ACTIONS,
    at_read=at_read,
)
