"""What the fan-out sends: one encoded message (``Outgoing``) and its websocket frame.

Each update is encoded once per wire format (``FORMATS``) and its frame built once
(``build_frame``: server frames are unmasked, so the bytes are the same for every client); the
fan-out, the feed stores and the sockets pass these objects around and never re-encode them.
"""

from __future__ import annotations

from typing import Any

from websockets.frames import Frame, Opcode

from hub.wire.codec import pack, to_json

__all__ = ["FORMATS", "Outgoing", "build_frame"]

FORMATS = ("json", "msgpack")

TEXT, BINARY = Opcode.TEXT, Opcode.BINARY


def build_frame(payload: bytes, text: bool) -> bytes:
    """One unfragmented, unmasked server frame (RFC 6455 §5.2), no extensions, serialized by
    websockets (the library that parses the client's side): the header rules stay theirs.
    Built once per update per format, so its few microseconds are not per client."""
    return Frame(TEXT if text else BINARY, payload).serialize(mask=False)


class Outgoing:
    """One encoded message; the websocket frame and the str form are built on first use.
    ``seq``: the topic seq of a snapshot or delta (-1: a message of no topic)."""

    __slots__ = ("_frame", "_text", "payload", "seq", "text")

    def __init__(self, payload: bytes, text: bool, seq: int = -1) -> None:
        self.payload = payload
        self.text = text
        self.seq = seq
        self._frame: bytes | None = None
        self._text: str | None = None

    @classmethod
    def encode(cls, message: dict[str, Any], fmt: str) -> Outgoing:
        if fmt == "msgpack":
            return cls(pack(message), False)
        return cls(to_json(message), True)

    @property
    def frame(self) -> bytes:
        if self._frame is None:
            self._frame = build_frame(self.payload, self.text)
        return self._frame

    @property
    def as_str(self) -> str:
        if self._text is None:
            self._text = self.payload.decode()
        return self._text
