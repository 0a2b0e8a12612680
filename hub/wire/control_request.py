"""A command or request on a tournament's control channel, and where its answer goes.

Edges send operator commands (journaled by the ingest) and snapshot requests (answered by the
feed's writer: the ingest inline, or the projector) on ``dup:{t}:control``; both writers read
them, so the request sits apart from either.
"""

from __future__ import annotations

from typing import Any

from hub.wire import codec
from hub.wire.channels import Channels

__all__ = ["ControlRequest"]


class ControlRequest:
    """A command or request on the control channel, and where its answer goes (its
    ``reply`` channel suffix and ``id``; none: nobody waits for an answer)."""

    __slots__ = ("command", "id", "reply")

    def __init__(self, command: dict[str, Any]) -> None:
        rid, reply = command.get("id"), command.get("reply")
        ok = isinstance(rid, str) and isinstance(reply, str) and 0 < len(reply) <= 64
        self.command = command
        self.id: str = rid if ok else ""  # type: ignore[assignment]
        self.reply: str = reply if ok else ""  # type: ignore[assignment]

    def answer(self, names: Channels, ack: dict[str, Any]) -> tuple[str, bytes] | None:
        """(channel, message) of the answer; None when nobody asked for one."""
        if not self.reply:
            return None
        return names.reply(self.reply), codec.pack({**ack, "id": self.id})

    @property
    def keys(self) -> list[Any] | None:
        """The topics a ``snapshots`` request names, as it names them (``audience|name``;
        None: it names none, so every one). The engine says which exist
        (``Engine.topics_named``)."""
        wanted = self.command.get("keys")
        return wanted if isinstance(wanted, list) else None
