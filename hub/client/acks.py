"""The hub's answers to a console's events, as the console reads them (docs/protocol.md §1):
one `Ack` per answer, checked as it comes off the wire, the line an official reads for a
refusal, and the console's counts of them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Ack", "ConsoleStats", "describe_rejection"]


@dataclass(frozen=True, slots=True)
class Ack:
    """The hub's answer to one event."""

    seq: int
    ok: bool
    code: str | None = None
    error: str | None = None
    position: str | None = None
    duplicate: bool = False
    expected: int | None = None
    final: bool = False  # made by this console: no resend can change it

    @classmethod
    def from_wire(cls, data: Any, *, final: bool = False) -> Ack:
        """Validate a decoded ack map; ``ValueError`` if it is not one."""
        if not isinstance(data, Mapping):
            raise ValueError(f"ack is not a map: {data!r}")
        seq, ok, expected = data.get("seq"), data.get("ok"), data.get("expected")
        if type(seq) is not int or type(ok) is not bool:
            raise ValueError(f"ack needs an int seq and a bool ok: {data!r}")
        if expected is not None and type(expected) is not int:
            raise ValueError(f"ack expected must be an int: {data!r}")
        return cls(
            seq=seq,
            ok=ok,
            code=_optional_str(data.get("code")),
            error=_optional_str(data.get("error")),
            position=_optional_str(data.get("position")),
            duplicate=data.get("duplicate") is True,
            expected=expected,
            final=final,
        )


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def describe_rejection(table: int, ack: Ack) -> str:
    """One line an official can act on: ``table 3 seq 17 REJECTED out_of_turn: seat 4 is ...``."""
    return f"table {table} seq {ack.seq} REJECTED {ack.code}: {ack.error}"


@dataclass(slots=True)
class ConsoleStats:
    accepted: int = 0
    rejected: int = 0
    duplicates: int = 0  # accepted, but an earlier transmission had already been applied
    already: int = 0  # answered "duplicate" at the first send: the hub held that seq already,
    #                   from another event or an earlier run; nothing was applied now
    resent: int = 0
    stale_acks: int = 0  # acks for events no longer in the outbox (answers to resends)
