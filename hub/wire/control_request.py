"""A command or request on a tournament's control channel, and where its answer goes.

Edges send operator commands (journaled by the ingest) and snapshot requests (answered by the
feed's writer: the ingest inline, or the projector) on ``dup:{t}:control``; both writers read
them, so the request sits apart from either.
"""

from __future__ import annotations

from typing import Any

from hub.engine.core import Engine
from hub.wire import codec
from hub.wire.channels import Channels
from hub.wire.topics import PROGRAM, TopicKey, kind

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

    def topics(self, engine: Engine) -> list[TopicKey]:
        """The topics a ``snapshots`` request names that exist (every one when it names
        none), only this tournament's."""
        wanted = self.command.get("keys")
        if not isinstance(wanted, list):
            return list(engine.topic_keys())
        out = []
        for field in wanted[:10_000]:
            if isinstance(field, str):
                audience, _, name = field.partition("|")
                topic = engine.topics.get(name)
                if topic is not None and _has(engine, audience, topic.family.audiences):
                    out.append((audience, name))
        return out


def _has(engine: Engine, audience: str, audiences: tuple[str, ...]) -> bool:
    """Is ``audience`` one of ``audiences`` in this tournament (a program output it has)?"""
    if kind(audience) not in audiences:
        return False
    if audience == PROGRAM or kind(audience) != PROGRAM:
        return True
    return engine.program is not None and engine.program.feed(audience) is not None
