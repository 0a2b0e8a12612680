"""The families of the broadcast desk: ``onair`` (what the graphics show), ``ticker`` (news
lines), ``clock`` (the session clock) and ``ops`` (the operator's view: refusals, releases,
links, hands in play, the cue list, the hub's preview and the on-air change an undo would take
back).
``Tickers`` moves each audience's ticker in place: its new items inserted at the front, the
oldest popped at the end."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hub.domain.clock import Clock
from hub.domain.config import TournamentConfig
from hub.domain.states import Role
from hub.engine.changes import (
    ClockChanged,
    CuesChanged,
    DealReleased,
    LinkChanged,
    OnAirChanged,
    PenaltyApplied,
    PlayoutChanged,
    PreviewChanged,
    Rejected,
    ReleasedResultCorrected,
    RosterChanged,
    TickerItem,
)
from hub.engine.families.base import (
    CADENCE,
    NOW,
    Command,
    EngineView,
    Feed,
    Reading,
    TopicKeys,
)
from hub.engine.families.hands import HAND_EVENTS
from hub.engine.families.ops import Ops, ops_payload
from hub.wire.patch import Recorder
from hub.wire.topics import ANY, AUDIENCES, LIVE, PUBLIC, TopicKey, program_outputs

__all__ = ["CLOCK", "ONAIR", "OPS", "TICKER"]


def onair_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    if isinstance(event, DealReleased):  # the public compare slot may show it now
        return [k[PUBLIC]["onair"]]
    return [k[a]["onair"] for a in AUDIENCES]


def ticker_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    if isinstance(event, DealReleased):  # the deal's held-back items reach the public
        return [k[PUBLIC]["ticker"]]
    if isinstance(event, ReleasedResultCorrected):  # its swing lines are public at once
        return [k[PUBLIC]["ticker"]]
    return [k[event.audience]["ticker"]]


def clock_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    return [k[a]["clock"] for a in AUDIENCES]


def ops_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    return [k[LIVE]["ops"]]


def compare_slot_public(engine: EngineView, slot: Mapping[str, Any]) -> bool:
    """May the public see the on-air compare slot (its deal is released)?"""
    deal_no = slot.get("deal")
    if isinstance(deal_no, bool) or not isinstance(deal_no, int):
        return False
    return engine.release.deal_released(deal_no)


def _onair(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    engine = read.engine
    slots = {k: dict(v) for k, v in engine.desk.onair["slots"].items()}
    if audience != LIVE and not compare_slot_public(engine, slots["compare"]):
        slots["compare"] = {"visible": False}  # not even the deal number leaks
    return {"slots": slots}


def _ticker(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    return read.engine.desk.ticker.payload(audience)


class Tickers:
    """The ``ticker`` family's ``Mover``: the audiences whose ticker an event touched, until
    the flush; then each open one's new items (ids above its first) go in at the front and
    those the ticker no longer holds leave at the end."""

    def __init__(self, read: Reading) -> None:
        self.read = read
        self.keys = read.keys()
        self.docs: dict[TopicKey, Recorder] = {}
        self._of = {self.keys.k[a]["ticker"]: a for a in (LIVE, PUBLIC)}  # key -> audience
        self._noted: dict[TopicKey, None] = {}

    def on(self, event: Any) -> None:
        self._noted.update(dict.fromkeys(ticker_keys(self.keys, event)))

    def open(self, key: TopicKey) -> Recorder | None:
        audience = self._of.get(key)
        if audience is None:
            return None
        rec = self.docs[key] = Recorder(_ticker(self.read, (), audience))
        return rec

    def flush(self) -> Iterable[TopicKey]:
        noted, self._noted = self._noted, {}
        for key in noted:
            rec = self.docs.get(key)
            if rec is not None:
                self._move(rec, self._of[key])
        return noted

    def _move(self, rec: Recorder, audience: str) -> None:
        items = self.read.engine.desk.ticker.items[audience]  # newest first
        shown = rec.doc["items"]
        top = shown[0]["id"] if shown else 0
        new = 0
        while new < len(items) and items[new]["id"] > top:
            new += 1
        for _ in range(len(shown) + new - len(items)):  # the oldest leave (from the end)
            rec.pop(("items", len(shown) - 1))
        for i in range(new):
            rec.insert(("items", i), dict(items[i]))
        if [item["id"] for item in shown] != [item["id"] for item in items]:
            rec.replace_with(_ticker(self.read, (), audience))  # (a restored ticker)


def clock_payload(config: TournamentConfig, clock: Clock | None, at: float) -> dict[str, Any]:
    """The session clock as read at ``at`` (when it last changed). While it runs, what is left
    at any later moment is ``level_left - (now - as_of)`` (wall-clock seconds), so the payload
    changes only when the operator moves the clock or a level ends; overlays count down
    themselves."""
    if clock is None:
        return {"configured": False}
    spec = clock.spec
    reading = clock.read(at)
    names = spec.names()
    i = reading.level
    following = i + 1 if i + 1 < len(spec.levels) else None
    return {
        "configured": True,
        "status": reading.status,
        "level": i + 1,
        "levels": len(spec.levels),
        "name": names[i],
        "break": spec.levels[i].is_break,
        "small_blind": config.small_blind,
        "big_blind": config.big_blind,
        "level_left": round(reading.level_left, 3),
        "session_left": round(reading.session_left, 3),
        "as_of": at,
        "next": None
        if following is None
        else {
            "name": names[following],
            "minutes": round(spec.levels[following].seconds / 60, 2),
            "break": spec.levels[following].is_break,
        },
        "on_time_up": spec.on_time_up,
        "schedule": [
            {"name": n, "minutes": round(lv.seconds / 60, 2), "break": lv.is_break}
            for n, lv in zip(names, spec.levels, strict=True)
        ],
    }


def _clock(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    engine = read.engine
    clock = engine.desk.clock
    at = engine.desk.clock_at if clock is None else clock.as_of(engine.desk.clock_at)
    return clock_payload(engine.state.config, clock, at)


def _ops(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    engine = read.engine
    payload = ops_payload(
        engine.state,
        list(engine.desk.rejections),
        engine.release.release_state(),
        engine.desk.now,
        engine.desk.links,
    )
    # The cue list, and what undo_take would restore (the on-air change it takes back); the
    # program outputs (name -> delay, none without [broadcast] delay): the panel's on-air
    # monitor shows what the programme sources show, its warnings name them.
    outputs = {name: delay for name, (_, delay) in program_outputs(engine.state.config).items()}
    return payload | {
        "cues": engine.desk.cues.payload(),
        "undo_take": engine.desk.takes.payload(),
        # the hub's preview, what a take puts on air ({slot, value, cue}, null: none): the one
        # every operator panel and control surface shows (docs/overlays.md "Operator panel")
        "preview": _preview(engine.desk.preview),
        "program": outputs,
        # what the playouts report on air (CasparCG, SPX, OGraf: hub.engine.playout)
        "playout": engine.desk.playout.payload(engine.release.deal_released),
    }


def _preview(preview: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if preview is None else {**preview, "value": dict(preview["value"])}


def _onair_body(body: Any) -> tuple[dict[str, Any] | None, str]:
    if isinstance(body, dict) and isinstance(body.get("slot"), str) and "value" in body:
        return {"op": "onair", "slot": body["slot"], "value": body["value"]}, ""
    return None, "needs 'slot' and 'value'"


ONAIR = Feed(
    "onair",
    (OnAirChanged, DealReleased),
    onair_keys,
    _onair,
    route="/api/onair",
    delta="replace of the slot that changed",
    console=ANY,
    program=NOW,
    command=Command("onair", _onair_body),  # POST /api/onair: what goes on air
)
TICKER = Feed(
    "ticker",
    (TickerItem, DealReleased, ReleasedResultCorrected),
    ticker_keys,
    _ticker,
    route="/api/ticker",
    delta="new items at the front; the oldest leave at the end",
    console=ANY,
    program=PUBLIC,
    mover=Tickers,
)
CLOCK = Feed(
    "clock",
    (ClockChanged,),
    clock_keys,
    _clock,
    route="/api/clock",
    delta="replace of the fields that moved (status, level, time left as of as_of)",
    console=ANY,
    program=NOW,
)
OPS = Feed(
    "ops",
    (
        *HAND_EVENTS,
        PenaltyApplied,
        Rejected,
        LinkChanged,
        DealReleased,
        OnAirChanged,
        CuesChanged,
        PreviewChanged,
        RosterChanged,
        PlayoutChanged,
    ),
    ops_keys,
    _ops,
    audiences=(LIVE,),
    role=Role.OPERATOR,
    route="/api/ops",
    delta="replace of the fields that moved",
    mover=lambda read: Ops(read, _ops),
    cadence=CADENCE,
)
