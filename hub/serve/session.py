"""One client's conversation on ``/ws``, sans I/O: whatever carries it (``hub.serve.feedsocket``'s
raw sockets, the ASGI ``/ws`` of ``hub.serve.http``) hands it each whole message and it answers
through the client's queue, in order (docs/protocol.md §2)."""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any, Protocol

from hub.serve.feedclient import Client

__all__ = ["MAX_BACKLOG", "MAX_MALFORMED", "Service", "Session", "error"]

log = logging.getLogger(__name__)

MAX_MALFORMED = 10
"""Malformed client messages tolerated on one connection before it is closed (1008)."""

MAX_BACKLOG = 64
"""Messages a client may send while one of its operator commands is still being answered."""


def error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message, **extra}


class Service(Protocol):
    """What a session asks of the service it belongs to (``hub.serve.service.FeedService``)."""

    def parse(self, data: bytes | str, text: bool) -> tuple[dict[str, Any] | None, Any]: ...

    def is_command(self, request: dict[str, Any]) -> bool: ...

    def handle(self, client: Client, request: dict[str, Any]) -> dict[str, Any] | None: ...

    async def command(self, client: Client, request: dict[str, Any]) -> dict[str, Any] | None: ...

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None: ...


class Session:
    """One client's conversation, sans I/O, whatever carries it (``FeedSocket`` here, the ASGI
    ``/ws`` of ``hub.serve.http``): each message is parsed and acted on in order; an operator
    command runs as a task and what the client sends meanwhile waits in a bounded backlog (so
    a reply never overtakes an earlier one); malformed messages are counted and too many close
    the connection."""

    __slots__ = ("_backlog", "_malformed", "client", "service")

    def __init__(self, service: Service, client: Client) -> None:
        self.service = service
        self.client = client
        self._malformed = 0
        self._backlog: list[tuple[bytes | str, bool]] | None = None  # while a command is answered

    def receive(self, data: bytes | str, text: bool) -> None:
        """One whole message from the client (``text``: a text frame)."""
        client = self.client
        if client.closed:
            return
        if self._backlog is not None:
            if len(self._backlog) >= MAX_BACKLOG:
                client.close(1008, "too many messages while a command is answered")
            else:
                self._backlog.append((data, text))
            return
        self._act(client, data, text)

    def _act(self, client: Client, data: bytes | str, text: bool) -> None:
        service = self.service
        request, problem = service.parse(data, text)
        if request is not None:
            if service.is_command(request):
                self._backlog = []
                service.spawn(self._command(client, request))
                return
            problem = service.handle(client, request)
        if problem is not None:
            self._answer(client, problem)

    def _answer(self, client: Client, problem: dict[str, Any]) -> None:
        client.send(problem)
        if problem["code"] == "bad_request":
            self._malformed += 1
            if self._malformed > MAX_MALFORMED:
                client.close(1008, "too many malformed messages")

    async def _command(self, client: Client, request: dict[str, Any]) -> None:
        """An operator command; messages that came meanwhile are acted on after it, in order."""
        try:
            problem = await self.service.command(client, request)
        except Exception:
            log.exception("operator command %s failed", request.get("op"))
            problem = error("internal_error", "the command failed", op=request.get("op"))
        if problem is not None and not client.closed:
            self._answer(client, problem)
        backlog, self._backlog = self._backlog or [], None
        for i, (data, text) in enumerate(backlog):
            if client.closed:
                return
            self._act(client, data, text)
            if self._backlog is not None:  # another command: the rest waits for it
                self._backlog.extend(backlog[i + 1 :])
                return
