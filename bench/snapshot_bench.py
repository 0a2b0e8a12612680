"""Engine snapshots against a full journal replay: the restart path of the ingest.

Run by hand: ``.venv/bin/python bench/snapshot_bench.py [--events N] [--tail N] [--repeat N]``.

One bot-played session of a large tournament (``ingest_bench.large_session``: 8 groups, 48
tables at 100,000 events) is applied through ``TournamentState.apply``; then, best of
``--repeat`` runs each:

- ``replay``: every event applied to a fresh state (events parsed beforehand; ``parse`` is
  the schema check of them all, what a journal replay adds);
- ``snapshot``: ``hub.engine.snapshot.snapshot`` of the final state, ``pack`` / ``unpack`` of it
  through ``hub.wire.codec`` (and its size), ``from_snapshot`` of the unpacked data;
- ``snapshot_plus_tail``: ``from_snapshot`` of the state ``--tail`` events before the end, then
  those events applied: the restart the ingest will do;
- ``sequencer``: a sequencer that saw every event with a journal position: its snapshot packed,
  unpacked and restored.

The restored states are checked equal to the replayed one (snapshot and standings).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest_bench import large_session  # a sibling script, not a package

from hub.engine.events import ConsoleEvent, parse_event
from hub.engine.sequencer import Sequencer
from hub.engine.snapshot import restore_state, snapshot
from hub.engine.tournament import TournamentState
from hub.wire import codec

T = TypeVar("T")
TARGET_SECONDS = 3.0  # restart from a snapshot plus the journal tail, at 100,000 events


def best(repeat: int, run: Callable[[], T]) -> tuple[T, float]:
    """The result of the last run and the fastest wall time of ``repeat`` runs."""
    times = []
    result: Any = None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - t0)
    return result, min(times)


def replay(session: Any, events: list[tuple[ConsoleEvent, float]]) -> TournamentState:
    state = TournamentState(session.config, session.decks)
    apply = state.apply
    for event, now in events:
        apply(event, now)
    return state


def run(
    *, events: int = 100_000, tail: int = 5_000, repeat: int = 3, seed: int = 1
) -> dict[str, Any]:
    """Every measurement, as plain data (seconds, bytes, counts)."""
    session = large_session(events, seed)
    parsed, t_parse = best(1, lambda: [(parse_event(e), float(e["ts"])) for e in session.events])
    state, t_replay = best(repeat, lambda: replay(session, parsed))
    hands = sum(len(t.hands) for t in state.tables.values())

    data, t_snapshot = best(repeat, lambda: snapshot(state))
    packed, t_pack = best(repeat, lambda: codec.pack(data))
    unpacked, t_unpack = best(repeat, lambda: codec.unpack(packed))
    restored, t_restore = best(
        repeat, lambda: restore_state(session.config, session.decks, unpacked)
    )
    if snapshot(restored) != data or restored.board.as_dict() != state.board.as_dict():
        raise AssertionError("the restored state differs from the replayed one")  # pragma: no cover

    tail = max(0, min(tail, len(parsed)))
    cut = len(parsed) - tail
    early = codec.pack(snapshot(replay(session, parsed[:cut])))

    def restart() -> TournamentState:
        s = restore_state(session.config, session.decks, codec.unpack(early))
        for event, now in parsed[cut:]:
            s.apply(event, now)
        return s

    restarted, t_restart = best(repeat, restart)
    if snapshot(restarted) != data:
        raise AssertionError("snapshot + tail differs from the whole replay")  # pragma: no cover

    sequencer = Sequencer()
    for i, (event, _) in enumerate(parsed):
        sequencer.record(event.console, event.seq, {"seq": event.seq, "ok": True})
        sequencer.set_position(event.console, event.seq, f"{1_763_884_800_000 + i}-0")
    seq_packed, t_seq_pack = best(repeat, lambda: codec.pack(sequencer.snapshot()))
    _, t_seq_restore = best(repeat, lambda: Sequencer.from_snapshot(codec.unpack(seq_packed)))

    return {
        "events": len(parsed),
        "tables": len(state.tables),
        "hands": hands,
        "repeat": repeat,
        "parse_seconds": round(t_parse, 4),
        "replay_seconds": round(t_replay, 4),
        "snapshot_seconds": round(t_snapshot, 4),
        "pack_seconds": round(t_pack, 4),
        "unpack_seconds": round(t_unpack, 4),
        "snapshot_bytes": len(packed),
        "from_snapshot_seconds": round(t_restore, 4),
        "tail_events": tail,
        "restart_seconds": round(t_restart, 4),  # unpack + from_snapshot + tail applied
        "sequencer_bytes": len(seq_packed),
        "sequencer_pack_seconds": round(t_seq_pack, 4),
        "sequencer_restore_seconds": round(t_seq_restore, 4),
        "target_seconds": TARGET_SECONDS,
    }


def report(r: dict[str, Any]) -> str:
    rows = [
        ("parse_event of every event", r["parse_seconds"], ""),
        ("replay: TournamentState.apply x all", r["replay_seconds"], ""),
        ("snapshot()", r["snapshot_seconds"], ""),
        ("codec.pack(snapshot)", r["pack_seconds"], f"{r['snapshot_bytes']:,} bytes"),
        ("codec.unpack(snapshot)", r["unpack_seconds"], ""),
        ("from_snapshot", r["from_snapshot_seconds"], ""),
        (
            f"unpack + from_snapshot + {r['tail_events']:,} tail",
            r["restart_seconds"],
            f"target {r['target_seconds']} s",
        ),
        ("sequencer pack", r["sequencer_pack_seconds"], f"{r['sequencer_bytes']:,} bytes"),
        ("sequencer unpack + from_snapshot", r["sequencer_restore_seconds"], ""),
    ]
    head = (
        f"{r['events']:,} events, {r['tables']} tables, {r['hands']:,} hands; best of {r['repeat']}"
    )
    lines = [head, f"{'step':<44} {'seconds':>8}"]
    lines += [f"{name:<44} {secs:>8.3f}  {note}".rstrip() for name, secs, note in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--tail", type=int, default=5_000, help="journal events after the snapshot")
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(report(run(events=args.events, tail=args.tail, repeat=args.repeat, seed=args.seed)))


if __name__ == "__main__":
    main()
