"""`Desk`: what the operator desk moves and watches besides the tables.

The on-air slots (with the takes that can be taken back, `hub.engine.onair`, and the cue list,
`hub.engine.cues`), the session clock (and when its topic was last read), the ticker's text, the
refusal log and counts, and whether each console's acknowledgements reach a listener. Its
methods answer the engine events they cause (`hub.engine.changes`); the engine announces them.
An operator command is checked here (`command`, `operator_event`); the engine applies it. Pure:
time comes in as an argument.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from hub.domain.clock import Clock
from hub.domain.config import TournamentConfig
from hub.domain.errors import Rejection
from hub.engine.bounds import check_slot_size
from hub.engine.changes import (
    ClockChanged,
    CuesChanged,
    LinkChanged,
    OnAirChanged,
    PlayoutChanged,
    PreviewChanged,
    Rejected,
    TickerItem,
)
from hub.engine.cues import CueList
from hub.engine.events import OPERATOR_CONSOLE, ConsoleEvent, parse_event
from hub.engine.onair import (
    ONAIR_SLOTS,
    Takes,
    check_slot,
    check_value,
    default_onair,
    take_value,
)
from hub.engine.playout import PlayoutBoard, check_report
from hub.engine.ticker import Ticker
from hub.engine.tournament import TournamentState

__all__ = ["DESK_OPS", "ONAIR_SLOTS", "OPERATOR_EVENTS", "REQUESTS_KEPT", "Desk", "default_onair"]

# The desk's own commands (journaled as control records); ``expect`` is checked for these.
DESK_OPS = ("onair", "undo_take", "cue", "preview", "take", "clock")
REQUESTS_KEPT = 256
"""Request ids (``request``: a control surface's ``Idempotency-Key``) remembered, newest last:
a command that repeats one of them is answered again and changes nothing."""
REQUEST_MAX = 64  # characters of a request id
PREVIEW_ACTIONS = ("set", "cue", "next", "previous", "clear")

# Operator commands that are console events of the reserved console "operator": command field
# -> event field. `void` and `penalty` need the official (`by`) and a `reason`; `confirm` needs
# `by` (its `reason` is optional). A console's own `confirm` names no official.
OPERATOR_EVENTS: dict[str, dict[str, str]] = {
    "confirm": {"deal": "deal", "seats": "seats", "reason": "note", "by": "by"},
    "void": {"deal": "deal", "reason": "note", "by": "by"},
    "penalty": {
        "seat": "seat",
        "chips": "amount",
        "points": "points",
        "reason": "note",
        "by": "by",
    },
}


# The numbers of an operator event's command, and the least each may be.
_COUNTS = {"deal": 1, "seat": 1, "chips": 0, "points": 0}


def _whole(value: object, low: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


class Desk:
    """The operator desk's state: on-air slots, clock, ticker, refusals, console links."""

    def __init__(self, config: TournamentConfig) -> None:
        self.config = config
        self.onair: dict[str, Any] = default_onair()
        self.takes = Takes()  # what each on-air change replaced (undo_take)
        self.cues = CueList()
        spec = getattr(config, "clock", None)
        self.clock: Clock | None = Clock(spec) if spec is not None else None
        self.clock_at = 0.0  # when the clock last changed (what its topic is read at)
        self.now = 0.0  # the time of the last event the engine applied
        # (status, level) last announced: a clock nobody started is announced by nothing
        self._clock_seen: tuple[str, int] | None = ("not_started", 0) if spec else None
        self.ticker = Ticker()
        self.rejections: deque[dict[str, Any]] = deque(maxlen=100)
        self.reject_counts: dict[str, int] = {}
        self.links: dict[str, bool] = {}  # console -> its last ack reached a listener
        # The hub's preview (every operator panel's and control surface's: one): what a
        # ``take`` puts on air, ``{"slot", "value", "cue"}`` (``cue``: the cue it came from).
        self.preview: dict[str, Any] | None = None
        self.version = 0  # desk commands applied: what ``expect`` (If-Match) names
        self.requests: OrderedDict[str, None] = OrderedDict()  # request ids, newest last
        # What the playouts (CasparCG, SPX, OGraf) report on air (hub.engine.playout)
        self.playout = PlayoutBoard()

    # ----------------------------------------------------------------- idempotency
    @staticmethod
    def request_of(command: Mapping[str, Any]) -> str | None:
        """A command's request id (``request``), checked; None without one."""
        request = command.get("request")
        if request is None:
            return None
        if not isinstance(request, str) or not 1 <= len(request) <= REQUEST_MAX:
            raise Rejection("bad_request", f"'request' is a text of 1 to {REQUEST_MAX} characters")
        return request

    def seen(self, request: str | None) -> bool:
        """Was a command with this request id applied already (among the latest kept)?"""
        return request is not None and request in self.requests

    def remember(self, request: Any) -> None:
        if not isinstance(request, str):
            return
        self.requests[request] = None
        self.requests.move_to_end(request)
        while len(self.requests) > REQUESTS_KEPT:
            self.requests.popitem(last=False)

    def _check_expect(self, command: Mapping[str, Any]) -> None:
        """``expect``: the desk version the command was made against (a control surface's
        ``If-Match``); `Rejection` ``stale`` when the desk moved since."""
        expect = command.get("expect")
        if expect is None:
            return
        if isinstance(expect, bool) or not isinstance(expect, int):
            why = f"'expect' is a desk version (a whole number), not {expect!r}"
            raise Rejection("bad_request", why)
        if expect != self.version:
            raise Rejection(
                "stale",
                f"the desk is at version {self.version}, not {expect}: it moved since "
                "(read the state again)",
            )

    # ----------------------------------------------------------------- commands
    def command(self, command: Mapping[str, Any], now: float) -> dict[str, Any] | None:
        """The journal record of an on-air, cue or clock command, checked (`Rejection` if
        not); None for a command that is a console event of the operator (`operator_event`)."""
        op = command.get("op")
        if op in DESK_OPS:
            self._check_expect(command)
        if op == "preview":
            preview = self._preview(command)
            return {"kind": "control", "op": "preview", "preview": preview, "at": now}
        if op == "take":
            if self.preview is None:
                why = "nothing in preview: load a cue or preview a slot first"
                raise Rejection("not_allowed", why)
            cut = command.get("cut", False)
            if not isinstance(cut, bool):
                raise Rejection("bad_request", "take 'cut' must be true or false")
            slot = self.preview["slot"]
            value = take_value(slot, self.preview["value"], cut)
            check_slot_size(slot, {k: v for k, v in value.items() if v is not None})
            return {"kind": "control", "op": "onair", "slot": slot, "value": value, "at": now}
        if op == "onair":
            slot = check_slot(command.get("slot"))
            value = check_value(self.config, command.get("value"))
            merged = {**self.onair["slots"].get(slot, {}), **value}
            check_slot_size(slot, {k: v for k, v in merged.items() if v is not None})
            return {"kind": "control", "op": "onair", "slot": slot, "value": value, "at": now}
        if op == "undo_take":
            if not self.takes:
                raise Rejection("not_allowed", "nothing to undo: no on-air change to take back")
            cut = command.get("cut", False)
            if not isinstance(cut, bool):
                raise Rejection("bad_request", "undo_take 'cut' must be true or false")
            record = {"kind": "control", "op": "undo_take", "at": now}
            return record | {"cut": True} if cut else record
        if op == "cue":
            return {"kind": "control", **self.cues.check(command, self.config), "at": now}
        if op == "clock":
            if self.clock is None:
                raise Rejection("not_allowed", "this tournament has no [clock] configured")
            checked = Clock.check(dict(command), len(self.clock.spec.levels))
            return {"kind": "control", "op": "clock", **checked, "at": now}
        if op == "playout":  # a playout's report: no slot moves, the desk's version neither
            record = check_report(command, now)
            self.playout.check(record)
            return record
        if isinstance(op, str) and op in OPERATOR_EVENTS:
            return None
        raise Rejection("bad_request", f"unknown operator command {op!r}")

    def _preview(self, command: Mapping[str, Any]) -> dict[str, Any] | None:
        """The preview a ``preview`` command makes (None: cleared), checked: ``set`` a slot's
        selection, ``cue`` a cue by id, ``next`` or ``previous`` cue (from the preview's cue;
        from none, the first; the ends stay put), ``clear``."""
        action = command.get("action", "set")
        if action not in PREVIEW_ACTIONS:
            choices = ", ".join(PREVIEW_ACTIONS)
            raise Rejection("bad_request", f"unknown preview action {action!r} ({choices})")
        if action == "clear":
            return None
        if action == "set":
            slot = check_slot(command.get("slot"))
            value = check_value(self.config, command.get("value", {}))
            kept = {k: v for k, v in value.items() if k not in ("visible", "cut") and v is not None}
            return {"slot": slot, "value": kept, "cue": None}
        cues = self.cues.cues
        if not cues:
            raise Rejection("not_allowed", "the cue list is empty: add a cue first")
        if action == "cue":
            wanted = command.get("cue")
            found = [c for c in cues if c["id"] == wanted and not isinstance(wanted, bool)]
            if not found:
                raise Rejection("bad_request", f"there is no cue {wanted!r} in the cue list")
            cue = found[0]
        else:
            ids = [c["id"] for c in cues]
            current = None if self.preview is None else self.preview.get("cue")
            if current not in ids:
                cue = cues[0]
            else:
                step = 1 if action == "next" else -1
                cue = cues[max(0, min(len(cues) - 1, ids.index(current) + step))]
        return {"slot": cue["slot"], "value": dict(cue["value"]), "cue": cue["id"]}

    def cue_at(self, step: int) -> dict[str, Any] | None:
        """The cue ``step`` places from the preview's (0: its own; from none, ``next`` is
        the first), None past an end or without cues."""
        cues = self.cues.cues
        ids = [c["id"] for c in cues]
        current = None if self.preview is None else self.preview.get("cue")
        i = (0 if step == 1 else None) if current not in ids else ids.index(current) + step
        return cues[i] if i is not None and 0 <= i < len(cues) else None

    @staticmethod
    def operator_event(
        command: Mapping[str, Any], seq: int, tournament: str, tables: Collection[int]
    ) -> ConsoleEvent:
        """An operator command (confirm, void, penalty) as the console event of the reserved
        console "operator" with its next ``seq``; `Rejection` if it is incomplete or names a
        table not in ``tables``."""
        op = str(command.get("op"))
        raw = {
            "v": 1,
            "tournament": tournament,
            "table": command.get("table"),
            "console": OPERATOR_CONSOLE,
            "seq": seq,
            "type": op,
        }
        for name, field_name in OPERATOR_EVENTS[op].items():
            value = command.get(name)
            if name in _COUNTS and value is not None and not _whole(value, _COUNTS[name]):
                # (named as the command and the TD's form name it: `chips`, not `amount`)
                low = _COUNTS[name]
                raise Rejection("bad_request", f"'{name}' must be a whole number, {low} or more")
            if value not in (None, []):
                raw[field_name] = value
        by, needs_reason = raw.get("by"), op in ("void", "penalty")
        if not (isinstance(by, str) and by.strip()) or (needs_reason and not raw.get("note")):
            also = " and a 'reason'" if needs_reason else ""
            raise Rejection("bad_request", f"'{op}' needs 'by' (the official who rules){also}")
        event = parse_event(raw)
        if event.table not in tables:
            raise Rejection("unknown_table", f"table {event.table} is not in this tournament")
        return event

    def apply_control(
        self, record: Mapping[str, Any], now: float
    ) -> Sequence[OnAirChanged | ClockChanged | CuesChanged | PreviewChanged | PlayoutChanged]:
        """Apply an on-air, undo_take, cue, preview or clock record (checked, or from the
        journal): the desk's version moves, its request id is remembered. A playout's report
        moves what the playouts show, not the version (a control surface's If-Match holds)."""
        if record.get("op") == "playout":
            return [PlayoutChanged()] if self.playout.apply(record) else []
        self.version += 1
        self.remember(record.get("request"))
        op = record.get("op")
        if op == "preview":
            preview = record.get("preview")
            self.preview = None if preview is None else {**preview, "value": dict(preview["value"])}
            return [PreviewChanged()]
        if op == "clock":
            if self.clock is None:  # a journal of another configuration: nothing to move
                return []
            self.clock.apply(dict(record), now)
            return self.clock_changed(now, force=True)
        if op == "cue":
            return [CuesChanged()] if self.cues.apply(record) else []
        if op == "undo_take":
            taken = self.takes.pop()
            if taken is None:
                return []
            slot, before = taken
            value = {k: v for k, v in before.items() if k != "cut"}
            if record.get("cut") is True:
                value["cut"] = True
            self.onair = {"slots": {**self.onair["slots"], slot: value}}
            return [OnAirChanged(slot)]
        slot = str(record["slot"])
        before = self.onair["slots"].get(slot, {})
        change = dict(record["value"])
        merged = {**before, **change}
        if change.get("cut") is not True:  # a cut is the change that carries it, no other
            merged.pop("cut", None)
        self.onair = {"slots": {**self.onair["slots"], slot: merged}}
        if _shown(merged) != _shown(before):  # a Take of what is on air already: no new undo
            self.takes.push(slot, before, now)
        return [OnAirChanged(slot)]

    # ----------------------------------------------------------------- clock
    def clock_changed(self, now: float, *, force: bool = False) -> list[ClockChanged]:
        """Announce the clock when an operator moved it, or when its level or status moved
        by itself (a level ended, the time ran out)."""
        if self.clock is None:
            return []
        reading = self.clock.read(now)
        seen = (reading.status, reading.level)
        if not force and seen == self._clock_seen:
            return []
        self._clock_seen = seen
        self.clock_at = now
        return [ClockChanged(reading.status, reading.level)]

    def check_start(self, event: ConsoleEvent, now: float) -> None:
        """`Rejection` for a start once the session's time is up and the clock enforces it."""
        if event.type != "start":
            return
        clock = self.clock
        if clock is not None and clock.spec.on_time_up == "enforce" and clock.time_up(now):
            raise Rejection(
                "time_up",
                "the session's time is up: no new deal starts (the operator may add time "
                "to the clock)",
            )

    # ----------------------------------------------------------------- watching
    def note_refusal(self, refusal: Mapping[str, Any]) -> list[Rejected]:
        """A refused event as the operator desk lists it: counted and listed."""
        code = str(refusal.get("code"))
        table = refusal.get("table")
        self.count_refusal(code)
        self.rejections.append(dict(refusal))
        return [Rejected(table if isinstance(table, int) else None, code)]

    def count_refusal(self, code: str) -> None:
        self.reject_counts[code] = self.reject_counts.get(code, 0) + 1

    def note_links(self, links: Mapping[str, bool]) -> list[LinkChanged]:
        """Record whether each console's latest acknowledgement reached a listener."""
        changed = []
        for console, up in links.items():
            if self.links.get(console) != up:
                self.links[console] = up
                changed.append(LinkChanged(console, up))
        return changed

    def add_ticker(
        self, item: dict[str, Any], state: TournamentState, released: Callable[[int], bool]
    ) -> list[TickerItem]:
        """A notable moment on the ticker, worded; the public's ticker shows it once its deal
        is public (``released``)."""
        if "text" not in item:
            item = {**item, "text": ticker_text(state, item)}
        deal_no = item.get("deal")
        public_now = isinstance(deal_no, int) and released(deal_no)
        return [TickerItem(a, item) for a in self.ticker.add(item, public_now=public_now)]

    # ----------------------------------------------------------------- snapshots
    def snapshot(self) -> dict[str, Any]:
        """The engine snapshot's ``onair``, ``ticker``, ``clock``, ``clock_at``, ``takes``,
        ``cues`` and the control surfaces' ``preview``, ``desk_version`` and ``requests``."""
        return {
            "onair": self.onair,
            "ticker": self.ticker.snapshot(),
            "clock": None if self.clock is None else self.clock.snapshot(),
            "clock_at": self.clock_at,
            "takes": self.takes.snapshot(),
            "cues": self.cues.snapshot(),
            "preview": self.preview,
            "desk_version": self.version,
            "requests": list(self.requests),
            "playout": self.playout.snapshot(),
        }

    @staticmethod
    def read_snapshot(data: Mapping[str, Any]) -> tuple[dict[str, Any], Ticker]:
        """An engine snapshot's on-air slots and ticker (`take` them once all is read)."""
        onair = {"slots": dict(data["onair"]["slots"])}
        ticker = Ticker()
        ticker.restore(data["ticker"])
        return onair, ticker

    def restore_in_place(self, data: Mapping[str, Any], now: float) -> None:
        """An engine snapshot's clock, takes and cue list (read last: restored in place; a
        snapshot written before takes and cues existed has none)."""
        if self.clock is not None and data.get("clock") is not None:
            self.clock.restore(data["clock"])
            self.clock_at = float(data.get("clock_at", now))
        self.takes.restore(data.get("takes"))
        self.cues.restore(data.get("cues"))
        preview = data.get("preview")
        self.preview = None if preview is None else dict(preview)
        self.version = int(data.get("desk_version", 0))
        self.requests = OrderedDict.fromkeys(str(r) for r in data.get("requests", ()))
        self.playout.restore(data.get("playout"))

    def take(self, onair: dict[str, Any], ticker: Ticker) -> None:
        self.onair, self.ticker = onair, ticker


def _shown(value: Mapping[str, Any]) -> dict[str, Any]:
    """A slot value without how it changed (``cut``)."""
    return {k: v for k, v in value.items() if k != "cut"}


def ticker_text(state: TournamentState, item: Mapping[str, Any]) -> str:
    table, deal_no, seat = item.get("table"), item.get("deal"), item.get("seat")
    if item["kind"] == "void":
        return f"Deal {deal_no} voided at table {table}"
    held = None
    if item["kind"] == "all_in" and table is not None and seat is not None:
        held = state.seat_holder(int(table), int(seat), None if deal_no is None else int(deal_no))
    if held is not None:
        team, player = held
        return f"{player} ({team.code}) all in on deal {deal_no} at table {table}"
    return str(item.get("kind"))
