"""Per-console sequence numbers: what makes at-least-once delivery an exactly-once effect.

Every console numbers its events 1, 2, 3, ... A resent event (same seq) is answered again with
the original acknowledgement and never applied twice; an event beyond the next expected seq
means something was lost on the way, so the console is told where to resume. Rejected events
consume their seq too (the console moved on), which is why the sequencer state is persisted
beside the journal rather than derived from it alone.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

RECENT_ACKS = 256

Verdict = Literal["new", "duplicate", "gap"]


@dataclass(slots=True)
class _ConsoleSeq:
    last: int = 0
    acks: OrderedDict[int, dict[str, Any]] = field(default_factory=OrderedDict)


class Sequencer:
    """Tracks the last seq handled for each console and its recent acknowledgements."""

    def __init__(self) -> None:
        self._consoles: dict[str, _ConsoleSeq] = {}

    def check(self, console: str, seq: int) -> Verdict:
        last = self.last(console)
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
        entry = self._consoles.get(console)
        return entry.acks.get(seq) if entry else None

    def record(self, console: str, seq: int, ack: Mapping[str, Any]) -> None:
        """Mark `seq` handled (accepted or rejected) and remember its acknowledgement."""
        entry = self._consoles.setdefault(console, _ConsoleSeq())
        entry.last = max(entry.last, seq)
        entry.acks[seq] = dict(ack)
        while len(entry.acks) > RECENT_ACKS:
            entry.acks.popitem(last=False)

    def state(self) -> dict[str, int]:
        return {name: entry.last for name, entry in self._consoles.items()}

    def restore(self, last_seqs: Mapping[str, int]) -> None:
        """Raise each console's last seq to at least the persisted value (never lowers it)."""
        for name, last in last_seqs.items():
            entry = self._consoles.setdefault(name, _ConsoleSeq())
            entry.last = max(entry.last, int(last))
