"""Per-console sequence numbers: what makes at-least-once delivery an exactly-once effect.

Every console numbers its events 1, 2, 3, ... A resent event (same seq) is answered again with
the original answer and never applied twice; an event beyond the next expected seq means
something was lost on the way, so the console is told where to resume. Rejected events consume
their seq too (the console moved on), which is why the sequencer's high-water marks and the
rejections' answers are persisted beside the journal rather than derived from it alone: after a
restart, a resent rejected event must still be told it was rejected, and why.

Answers are kept for every seq, not a recent window: an accepted event costs one journal
position string, and rejections are rare. A resend of any old seq gets its true answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["new", "duplicate", "gap"]
SNAPSHOT_VERSION = 1


@dataclass(slots=True)
class _ConsoleSeq:
    last: int = 0
    rejected: dict[int, dict[str, Any]] = field(default_factory=dict)
    positions: dict[int, str] = field(default_factory=dict)


class Sequencer:
    """Tracks the last seq handled for each console and the answer given to each seq."""

    def __init__(self) -> None:
        self._consoles: dict[str, _ConsoleSeq] = {}

    def check(self, console: str, seq: int) -> Verdict:
        entry = self._consoles.get(console)
        last = entry.last if entry else 0
        if seq <= last:
            return "duplicate"
        if seq > last + 1:
            return "gap"
        return "new"

    def last(self, console: str) -> int:
        entry = self._consoles.get(console)
        return entry.last if entry else 0

    def expected(self, console: str) -> int:
        return self.last(console) + 1

    def previous_ack(self, console: str, seq: int) -> dict[str, Any] | None:
        """The answer ``seq`` got: its rejection, or acceptance with its journal position."""
        entry = self._consoles.get(console)
        if entry is None or seq > entry.last:
            return None
        if seq in entry.rejected:
            return dict(entry.rejected[seq])
        ack: dict[str, Any] = {"seq": seq, "ok": True}
        if seq in entry.positions:
            ack["position"] = entry.positions[seq]
        return ack

    def record(self, console: str, seq: int, ack: Mapping[str, Any]) -> None:
        """Mark ``seq`` handled (accepted or rejected); a rejection's answer is kept."""
        entry = self._consoles.get(console)
        if entry is None:  # (not setdefault: that would build an entry per call)
            entry = self._consoles[console] = _ConsoleSeq()
        if seq > entry.last:
            entry.last = seq
        if not ack.get("ok"):
            entry.rejected[seq] = dict(ack)

    def set_position(self, console: str, seq: int, position: str) -> None:
        """The journal position of an accepted ``seq`` (repeated in its re-acks)."""
        self.positions(console)[seq] = position

    def positions(self, console: str) -> dict[int, str]:
        """The journal positions of ``console``'s accepted seqs, seq -> position: where the
        ingest's journal stage writes one once it is appended (``Outcome.positions``)."""
        entry = self._consoles.get(console)
        if entry is None:
            entry = self._consoles[console] = _ConsoleSeq()
        return entry.positions

    def state(self) -> dict[str, int]:
        return {name: entry.last for name, entry in self._consoles.items()}

    def restore(self, last_seqs: Mapping[str, int]) -> None:
        """Raise each console's last seq to at least the persisted value (never lowers it)."""
        for name, last in last_seqs.items():
            entry = self._consoles.setdefault(name, _ConsoleSeq())
            entry.last = max(entry.last, int(last))

    def restore_rejected(self, answers: Mapping[tuple[str, int], Mapping[str, Any]]) -> None:
        """Persisted rejections, (console, seq) -> answer: resends are told again."""
        for (name, seq), ack in answers.items():
            self.record(name, seq, {**ack, "ok": False})

    # ----------------------------------------------------------------- snapshots
    def snapshot(self) -> dict[str, Any]:
        """Every console's last seq, kept rejections and positions, as plain data::

            {"version": 1, "consoles": {console: {"last": int,
                                                  "rejected": {seq: ack, ...},
                                                  "positions": {seq: position, ...}}}}

        Seqs are int map keys (msgpack with ``strict_map_key=False``, as ``hub.wire.codec`` reads).
        """
        return {
            "version": SNAPSHOT_VERSION,
            "consoles": {
                name: {
                    "last": entry.last,
                    "rejected": {seq: dict(ack) for seq, ack in entry.rejected.items()},
                    "positions": dict(entry.positions),
                }
                for name, entry in self._consoles.items()
            },
        }

    @classmethod
    def from_snapshot(cls, data: Mapping[str, Any]) -> Sequencer:
        """The sequencer `snapshot()` was taken of; `ValueError` for an unknown version."""
        version = data.get("version") if isinstance(data, Mapping) else None
        if version != SNAPSHOT_VERSION:
            raise ValueError(
                f"sequencer snapshot version {version!r} is not supported"
                f" (this hub reads version {SNAPSHOT_VERSION})"
            )
        sequencer = cls()
        for name, entry in data["consoles"].items():
            sequencer._consoles[str(name)] = _ConsoleSeq(
                last=int(entry["last"]),
                rejected={int(seq): dict(ack) for seq, ack in entry["rejected"].items()},
                positions={int(seq): str(pos) for seq, pos in entry["positions"].items()},
            )
        return sequencer
