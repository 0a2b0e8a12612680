"""A websocket feed client for tests: keeps every topic's state and checks seqs as they arrive."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from hub.wire.patch import apply_patch, clone
from hub.wire.signing import session_proof, signed_command

PLAIN = ("subscribe", "unsubscribe", "ping", "event")  # sent as they are; the rest signed


class FeedClient:
    """Shows the hub its token's session proof and signs every command, as the pages do
    (overlays/js/sign.js)."""

    def __init__(self, ws_url: str, token: str | None = None) -> None:
        self.token = token
        self.url = ws_url + (f"?token={session_proof(token)}" if token else "")
        self.ws: ClientConnection | None = None
        self.states: dict[str, dict[str, Any]] = {}
        self.seqs: dict[str, int] = {}
        self.log: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self.gaps: list[tuple[str, int, int]] = []
        self.hello: dict[str, Any] | None = None
        self._task: asyncio.Task[None] | None = None
        self.changed = asyncio.Event()

    async def __aenter__(self) -> FeedClient:
        self.ws = await connect(self.url, max_size=None, compression=None)
        self.hello = json.loads(await self.ws.recv())
        self._task = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self.ws:
            await self.ws.close()

    async def subscribe(self, topics: list[str], resume: dict[str, int] | None = None) -> None:
        assert self.ws is not None
        request: dict[str, Any] = {"op": "subscribe", "topics": topics}
        if resume:
            request["resume"] = resume
        await self.ws.send(json.dumps(request))

    async def send(self, message: dict[str, Any]) -> None:
        assert self.ws is not None
        if self.token and message.get("op") not in PLAIN and "signed" not in message:
            message = signed_command(self.token, message)
        await self.ws.send(json.dumps(message))

    async def _read(self) -> None:
        assert self.ws is not None
        async for raw in self.ws:
            message = json.loads(raw)
            self.log.append(message)
            kind = message.get("type")
            topic = message.get("topic")
            if kind == "snapshot":
                self.states[topic] = clone(message["data"])  # the log keeps the message
                self.seqs[topic] = message["seq"]
            elif kind == "delta":
                last = self.seqs.get(topic)
                if last is None or message["seq"] != last + 1:
                    self.gaps.append((topic, -1 if last is None else last, message["seq"]))
                state = self.states.setdefault(topic, {})
                self.states[topic] = apply_patch(state, clone(message["patch"]), in_place=True)
                self.seqs[topic] = message["seq"]
            elif kind == "error":
                self.errors.append(message)
            self.changed.set()

    async def wait_for(self, predicate: Any, timeout: float = 10.0) -> None:
        """Wait until `predicate(self)` holds (checked after every message)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not predicate(self):
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise TimeoutError("feed condition not reached")
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(remaining, 0.2))
