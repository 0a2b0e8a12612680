"""Engine snapshots: what the journal built, as plain data, and back, so a restart replays only
the journal written after the last snapshot instead of all of it. Two layers, one concept: the
tournament state's snapshot (`snapshot`, `restore_state`), and the engine's (`write_engine`,
`read_engine`), which holds the state's with what the engine's other parts built beside it.

The state's data holds only what console events created (each hand's inputs, status and declared
winners, each table's position, the corrections); everything derived is rebuilt on restore:
each `Hand` by `Hand.replay(spec, inputs)` plus the settlement it received, the `Scoreboard` by
`set_result` of every counted hand, in the order the original counted them. It is plain
msgpack-friendly data: str-keyed maps, lists, ints, floats, str, bool and None (no tuples, so a
snapshot equals its own msgpack round trip; no pickle). The state's layout, version 1::

    {"version": 1, "tournament": config id, "decks": deck commitment (sha256 hex) or None,
     "events_applied": int,
     "corrections": [{"table", "deal", "type", "at", ...}, ...],  # the last 200, oldest first
     "penalties": [{"id", "table", "seat", "chips", "points", "reason", "by", "at",
                    "session"?, "withdrawn"?: {"by", "reason", "at"}}, ...],  # all
     "roster": {"players": [[team, name in the file, name shown], ...], "teams": {team:
                {"name"?, "colour"?}}},  # the operator's corrections (absent: none)
     "counted": [[table, deal], ...],     # hands the scoreboard counts, in its order
     "tables": [{"table": int, "current": deal or None, "last_event_at": float or None,
                 "last_seq": int, "console": str or None, "moves": int (absent: 0),
                 "hands": [                 # in the table's order (the order they were started)
                     {"deal": int,
                      "inputs": [[seat, kind, amount or None], ...],  # with dealer errors
                      "status": "in_progress" | "showdown" | "complete" | "void" | "disputed",
                      "winners": [seat, ...] or None, "declared": ... or None,
                      "computed": ... or None,
                      "settled": "cards" | "declared" | None,   # HandState.settled_by
                      "reopened": bool, "started_at": float, "finished_at": float or None},
                     ...]},
                ...],
     "fills": {stage: {group: [team, ...]}}}   # events with stages only: the filled stages

Restoring takes the same config and deck orders the snapshot was taken with (the deck
commitment is checked) and refuses anything else, or an unknown version, with `ValueError`.

The engine's snapshot (`write_engine`), its own layout, version 1, keys in this order::

    {"version": 1, "state": the state snapshot, "sequencer": the consoles' seqs and answers,
     "released": [[group, deal], ...], "completed_at": [[deal, at], ...],   # Release
     "public_version": int (absent: 0),                                     # Release
     "onair": {"slots": ...}, "ticker": ...,                                # Desk
     "bound": {console: table}, "now": float,                               # Admission, engine
     "clock": ... or None, "clock_at": float,                               # Desk
     "takes": [[slot, before, at], ...], "cues": {"next_id", "cues"},       # Desk (optional)
     "preview", "desk_version", "requests",
     "playout": [{"tool", "page", "params", "since"}, ...]}                 # Desk (optional)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hub.domain.config import TournamentConfig
from hub.domain.deck import DeckOrder, commitment
from hub.domain.errors import Rejection
from hub.domain.states import Street
from hub.engine.admission import Admission
from hub.engine.desk import Desk
from hub.engine.release import Release
from hub.engine.sequencer import Sequencer
from hub.engine.ticker import Ticker
from hub.engine.tournament import (
    COMPLETE,
    DISPUTED,
    IN_PROGRESS,
    SHOWDOWN,
    TERMINAL,
    VOID,
    HandState,
    TournamentState,
)

VERSION = 1
STATUSES = frozenset({IN_PROGRESS, SHOWDOWN, COMPLETE, VOID, DISPUTED})
SETTLEMENTS = (None, "cards", "declared")


def decks_fingerprint(decks: Mapping[int, DeckOrder] | None) -> str | None:
    return None if not decks else commitment(decks)


def _seats(value: tuple[int, ...] | None) -> list[int] | None:
    return None if value is None else list(value)


def _hand_data(h: HandState) -> dict[str, Any]:
    return {
        "deal": h.deal,
        "inputs": [[seat, kind, amount] for seat, kind, amount in h.inputs],
        "status": h.status,
        "winners": _seats(h.winners),
        "declared": _seats(h.declared),
        "computed": _seats(h.computed),
        "settled": h.settled_by,
        "reopened": h.reopened,
        "started_at": h.started_at,
        "finished_at": h.finished_at,
    }


def snapshot(state: TournamentState) -> dict[str, Any]:
    """The state as plain data (see the module docstring); shares nothing with the state."""
    data = _snapshot(state)
    if state.config.phased:  # the teams each filled stage got (stage -> group -> teams)
        data["fills"] = {
            stage: {g: list(teams) for g, teams in groups.items()}
            for stage, groups in state.seating.fills.items()
        }
    return data


def _snapshot(state: TournamentState) -> dict[str, Any]:
    return {
        "version": VERSION,
        "tournament": state.config.id,
        "decks": decks_fingerprint(state.decks),
        "events_applied": state.events_applied,
        "corrections": [dict(c) for c in state.corrections],
        "penalties": [dict(p) for p in state.penalties],
        "roster": state.roster.snapshot(),
        "counted": [[table, deal] for table, deal in state.board.results()],
        "tables": [
            {
                "table": t.table,
                "current": None if t.current is None else t.current.deal,
                "last_event_at": t.last_event_at,
                "last_seq": t.last_seq,
                "console": t.console,
                "moves": t.moves,
                "hands": [_hand_data(h) for h in t.hands.values()],
            }
            for t in state.tables.values()
        ],
    }


def _tuple(value: Any) -> tuple[int, ...] | None:
    return None if value is None else tuple(int(s) for s in value)


def _restore_hand(state: TournamentState, table: int, data: Mapping[str, Any]) -> HandState:
    deal_no = int(data["deal"])
    where = f"snapshot: table {table} deal {deal_no}"
    if not 1 <= deal_no <= state.config.deals:
        raise ValueError(f"{where}: no such deal (1..{state.config.deals})")
    status, settled = data["status"], data["settled"]
    if status not in STATUSES:
        raise ValueError(f"{where}: unknown status {status!r}")
    if settled not in SETTLEMENTS:
        raise ValueError(f"{where}: unknown settlement {settled!r}")
    inputs = [(int(seat), str(kind), amount) for seat, kind, amount in data["inputs"]]
    winners = _tuple(data["winners"])
    try:
        spec, hand = state.replay_hand(deal_no, inputs)
        # The settlement `_on_win` / `_on_confirm` gave it; a fold-out settled itself, and a
        # disputed (or voided-while-disputed) hand keeps the unsettled copy at showdown.
        if settled == "cards":
            hand.settle(None)
        elif settled == "declared":
            hand.settle(winners)
    except Rejection as exc:
        raise ValueError(f"{where}: inputs do not replay: {exc.code}: {exc.message}") from exc
    if status == COMPLETE and hand.street != Street.COMPLETE:
        raise ValueError(f"{where}: complete but the hand stops at {hand.street}")
    if status in (SHOWDOWN, DISPUTED) and hand.street != Street.SHOWDOWN:
        raise ValueError(f"{where}: {status} but the hand is at {hand.street}")
    finished_at = data["finished_at"]
    return HandState(
        table,
        deal_no,
        spec,
        hand,
        inputs=inputs,
        status=status,
        winners=winners,
        declared=_tuple(data["declared"]),
        computed=_tuple(data["computed"]),
        settled_by=settled,
        reopened=bool(data["reopened"]),
        started_at=data["started_at"],
        finished_at=finished_at,
    )


def restore_into(state: TournamentState, data: Mapping[str, Any]) -> None:
    """Fill a fresh `TournamentState` (no event applied yet) from `snapshot` data, so that it
    equals the state the snapshot was taken of; `ValueError` for anything else."""
    version = data.get("version") if isinstance(data, Mapping) else None
    if version != VERSION:
        raise ValueError(
            f"snapshot version {version!r} is not supported (this hub reads version {VERSION})"
        )
    if state.events_applied or any(t.hands for t in state.tables.values()):
        raise ValueError("a snapshot restores into a fresh state only")
    if data["tournament"] != state.config.id:
        raise ValueError(
            f"snapshot of tournament {data['tournament']!r}, not of {state.config.id!r}"
        )
    if data["decks"] != decks_fingerprint(state.decks):
        raise ValueError("snapshot taken with other deck orders than the ones given")
    seen: set[int] = set()
    for entry in data["tables"]:
        number = int(entry["table"])
        table = state.tables.get(number)
        if table is None or number in seen:
            raise ValueError(f"snapshot: table {number} is not a table of this tournament")
        seen.add(number)
        for hand_data in entry["hands"]:
            hand = _restore_hand(state, number, hand_data)
            if hand.deal in table.hands:
                raise ValueError(f"snapshot: table {number} has deal {hand.deal} twice")
            table.hands[hand.deal] = hand
        current = entry["current"]
        if current is not None:
            found = table.hands.get(int(current))
            if found is None:
                raise ValueError(f"snapshot: table {number} current deal {current} not played")
            table.current = found
        for played in table.hands.values():  # exactly the current hand is in play
            if (played.status not in TERMINAL) != (played is table.current):
                raise ValueError(
                    f"snapshot: table {number} deal {played.deal} is {played.status}"
                    f" but {'not ' if played is not table.current else ''}the current hand"
                )
        table.last_event_at = entry["last_event_at"]
        table.last_seq = int(entry["last_seq"])
        table.console = entry["console"]
        table.moves = int(entry.get("moves", 0))
    if seen != set(state.tables):
        raise ValueError(f"snapshot: tables {sorted(set(state.tables) - seen)} are missing")
    for stage, groups in (data.get("fills") or {}).items():
        filled = state.config.plan.stage_by_id.get(stage)
        if filled is None or filled.advance is None or set(groups) != set(filled.groups):
            raise ValueError(f"snapshot: stage {stage!r} is not a filled stage of this event")
        state.seating.set_fill(stage, {g: [str(t) for t in teams] for g, teams in groups.items()})
    # The board counts exactly the complete and void hands; re-fed in its own order.
    counted: set[tuple[int, int]] = set()
    for number, deal_no in data["counted"]:
        h = state.tables[number].hands.get(deal_no) if number in state.tables else None
        if h is None or h.result is None or (number, deal_no) in counted:
            raise ValueError(f"snapshot: table {number} deal {deal_no} is not a counted hand")
        state.board.set_result(number, deal_no, h.result)
        counted.add((number, deal_no))
    finished = sum(
        1 for t in state.tables.values() for h in t.hands.values() if h.result is not None
    )
    if len(counted) != finished:
        raise ValueError(f"snapshot: {finished} hands count, but {len(counted)} are listed")
    state.corrections = [dict(c) for c in data["corrections"]]
    state.penalties = [dict(p) for p in data.get("penalties", ())]
    state.roster.restore(data.get("roster"))
    for p in state.penalties:
        if "withdrawn" not in p:
            board = state.board_of_penalty(p)
            board.add_penalty(int(p["table"]), int(p["seat"]), int(p["chips"]), int(p["points"]))
    state.events_applied = int(data["events_applied"])


def restore_state(
    config: TournamentConfig, decks: Mapping[int, DeckOrder] | None, data: Mapping[str, Any]
) -> TournamentState:
    """The state ``snapshot`` was taken of, with the same config and deck orders; then apply
    the journal written after it. `ValueError` for an unknown version or a snapshot of another
    tournament, other decks, or anything that does not replay."""
    state = TournamentState(config, decks)
    restore_into(state, data)
    return state


# ------------------------------------------------------------------ the engine's
ENGINE_VERSION = 1


def write_engine(
    state: TournamentState, admission: Admission, release: Release, desk: Desk, now: float
) -> dict[str, Any]:
    """Everything the journal built, as plain data (msgpack-friendly)."""
    shown = desk.snapshot()
    return {
        "version": ENGINE_VERSION,
        "state": snapshot(state),
        "sequencer": admission.sequencer.snapshot(),
        **release.snapshot(),
        "onair": shown["onair"],
        "ticker": shown["ticker"],
        "bound": dict(admission.bound),
        "now": now,
        "clock": shown["clock"],
        "clock_at": shown["clock_at"],
        "takes": shown["takes"],
        "cues": shown["cues"],
        "preview": shown["preview"],
        "desk_version": shown["desk_version"],
        "requests": shown["requests"],
        "playout": shown["playout"],
    }


@dataclass(slots=True)
class Restored:
    """What a snapshot gives back (the desk's clock, takes and cues are restored in place)."""

    state: TournamentState
    sequencer: Sequencer
    release: Release
    onair: dict[str, Any]
    ticker: Ticker
    bound: dict[str, int]
    now: float


def read_engine(old: TournamentState, release: Release, desk: Desk, data: Any) -> Restored:
    """The parts of a ``write_engine`` snapshot, over an engine of the same config and deck orders
    (``old``: its state, which has applied nothing); `ValueError` if the snapshot does not fit.
    """
    if not isinstance(data, Mapping) or data.get("version") != ENGINE_VERSION:
        raise ValueError(f"engine snapshot version {data.get('version')!r} is not supported")
    try:
        state = restore_state(old.config, old.decks, data["state"])
        sequencer = Sequencer.from_snapshot(data["sequencer"])
        restored = Release.restored(state, release.delay, data)
        onair, ticker = Desk.read_snapshot(data)
        bound = {str(c): int(t) for c, t in data["bound"].items()}
        now = float(data["now"])
        desk.restore_in_place(data, now)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"engine snapshot is malformed: {exc!r}") from exc
    return Restored(state, sequencer, restored, onair, ticker, bound, now)
