"""The engine's snapshot: the tournament state's (``hub.engine.snapshot``) with what the
engine's parts built beside it. Layout, version 1, keys in this order::

    {"version": 1, "state": the state snapshot, "sequencer": the consoles' seqs and answers,
     "released": [[group, deal], ...], "completed_at": [[deal, at], ...],   # Release
     "onair": {"slots": ...}, "ticker": ...,                                # Desk
     "bound": {console: table}, "now": float,                               # Admission, engine
     "clock": ... or None, "clock_at": float,                               # Desk
     "takes": [[slot, before, at], ...], "cues": {"next_id", "cues"}}       # Desk (optional)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hub.engine import snapshot as snapshots
from hub.engine.admission import Admission
from hub.engine.desk import Desk
from hub.engine.release import Release
from hub.engine.sequencer import Sequencer
from hub.engine.ticker import Ticker
from hub.engine.tournament import TournamentState

__all__ = ["VERSION", "Restored", "read", "write"]

VERSION = 1


def write(
    state: TournamentState, admission: Admission, release: Release, desk: Desk, now: float
) -> dict[str, Any]:
    """Everything the journal built, as plain data (msgpack-friendly)."""
    shown = desk.snapshot()
    return {
        "version": VERSION,
        "state": snapshots.snapshot(state),
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


def read(old: TournamentState, release: Release, desk: Desk, data: Any) -> Restored:
    """The parts of a ``write`` snapshot, over an engine of the same config and deck orders
    (``old``: its state, which has applied nothing); `ValueError` if the snapshot does not fit.
    """
    if not isinstance(data, Mapping) or data.get("version") != VERSION:
        raise ValueError(f"engine snapshot version {data.get('version')!r} is not supported")
    try:
        state = snapshots.restore_state(old.config, old.decks, data["state"])
        sequencer = Sequencer.from_snapshot(data["sequencer"])
        restored = Release.restored(state, release.delay, data)
        onair, ticker = Desk.read_snapshot(data)
        bound = {str(c): int(t) for c, t in data["bound"].items()}
        now = float(data["now"])
        desk.restore_in_place(data, now)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"engine snapshot is malformed: {exc!r}") from exc
    return Restored(state, sequencer, restored, onair, ticker, bound, now)
