"""The portable websocket sink: a fan-out client written through the ASGI ``send`` (any ASGI
server; ``hub.serve.http``'s Starlette ``/ws``). ``serve`` uses ``hub.serve.feedsocket`` instead,
which
takes whole frames synchronously; this one awaits each message."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from hub.wire.frames import Outgoing

__all__ = ["AsgiSink"]


class AsgiSink:
    """Portable fallback through the ASGI ``send`` (any server); one await per frame."""

    raw = False

    def __init__(self, websocket: Any, close_timeout: float = 5.0) -> None:
        self._ws = websocket
        self._close_timeout = close_timeout
        self._open = True
        self._closing: asyncio.Task[None] | None = None

    def is_open(self) -> bool:
        return self._open

    def buffered(self) -> int:
        return 0

    def write(self, data: bytes) -> None:
        raise TypeError("AsgiSink takes messages through send()")

    def writer(self) -> None:
        return None

    async def send(self, out: Outgoing) -> None:
        if not self._open:
            return
        try:
            if out.text:
                await self._ws.send({"type": "websocket.send", "text": out.as_str})
            else:
                await self._ws.send({"type": "websocket.send", "bytes": out.payload})
        except Exception:
            self._open = False

    def close(self, code: int, reason: str) -> None:
        if not self._open:
            return
        self._open = False
        self._closing = asyncio.get_running_loop().create_task(self._close(code, reason))

    async def _close(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self._ws.send({"type": "websocket.close", "code": code, "reason": reason}),
                self._close_timeout,
            )
