"""A bound on incomplete HTTP requests: how long one may take, and how many may wait at once.

uvicorn arms no timer before a connection's first request, and cancels its keep-alive timer
on any byte received: a client that connects and sends half a request (or one byte a minute)
holds a socket and a file descriptor forever. 1,100 of them locked every new client out of an
edge (past the open-file limit the server cannot accept). Every ``/ws`` upgrade and REST call
goes through the HTTP protocol first, so this is where the bound belongs:

- *time*: a connection waiting for a request head (a new one, or a keep-alive one between
  requests) must complete it within ``timeout`` seconds of starting to wait, however slowly
  its bytes trickle in, or it is closed (as nginx's ``client_header_timeout``);
- *number*: at most ``limit`` connections wait at once; past it the one waiting longest is
  closed, so a flood of half-sent requests cannot keep out the clients that send whole ones.

A connection whose request head is complete (an upgrade handed to ``FeedSocket``, a REST
request being answered) is no longer waiting and never dropped for either.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - uvicorn[standard] installs httptools
    HttpToolsProtocol = None  # type: ignore[assignment,misc]

__all__ = ["REQUEST_TIMEOUT", "PendingRequests", "default_limit", "guarded_http"]

log = logging.getLogger(__name__)

REQUEST_TIMEOUT = 10.0
"""Seconds a connection has to send a complete request head (nginx's default is 60; a browser
or OBS sends its upgrade at once, so 10 s leaves ample margin on a congested venue network)."""

MAX_PENDING = 1024
"""At most this many incomplete requests wait at once (less under a low open-file limit)."""

WARN_EVERY = 60.0


def default_limit() -> int:
    """A quarter of this process's open-file limit, at most ``MAX_PENDING``: incomplete
    requests alone can never use up the descriptors complete ones need."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_PENDING
    return max(16, min(MAX_PENDING, soft // 4))


class PendingRequests:
    """The connections waiting for a complete request head, oldest first, each with the
    time it must be complete by. One timer for all of them (the oldest's deadline)."""

    def __init__(self, timeout: float = REQUEST_TIMEOUT, limit: int | None = None) -> None:
        self.timeout = timeout
        self.limit = default_limit() if limit is None else max(1, limit)
        self.timed_out = 0  # closed for taking longer than ``timeout``
        self.dropped = 0  # closed because ``limit`` others waited
        self._waiting: dict[Any, float] = {}  # protocol -> deadline, in insertion order
        self._timer: asyncio.TimerHandle | None = None
        self._warned = 0.0

    def __len__(self) -> int:
        return len(self._waiting)

    def wait(self, conn: Any) -> None:
        """``conn`` waits for a request head from now on."""
        self._waiting.pop(conn, None)
        self._waiting[conn] = time.monotonic() + self.timeout
        while len(self._waiting) > self.limit:
            oldest = next(iter(self._waiting))
            del self._waiting[oldest]
            if _close_unless_busy(oldest):
                self.dropped += 1
                self._warn()
        if self._timer is None:
            self._arm()

    def done(self, conn: Any) -> None:
        """``conn`` has a complete request head (or is gone)."""
        self._waiting.pop(conn, None)

    def _arm(self) -> None:
        if not self._waiting:
            self._timer = None
            return
        deadline = next(iter(self._waiting.values()))
        loop = asyncio.get_running_loop()
        self._timer = loop.call_at(
            loop.time() + max(0.0, deadline - time.monotonic()), self._expire
        )

    def _expire(self) -> None:
        now = time.monotonic()
        waiting = self._waiting
        while waiting:
            conn, deadline = next(iter(waiting.items()))
            if deadline > now:
                break
            del waiting[conn]
            if _close_unless_busy(conn):
                self.timed_out += 1
        self._arm()

    def _warn(self) -> None:
        now = time.monotonic()
        if now - self._warned >= WARN_EVERY:
            self._warned = now
            log.warning(
                "more than %d incomplete HTTP requests at once: closing the oldest "
                "(%d so far; a flood of half-sent requests?)",
                self.limit,
                self.dropped,
            )


def _close_unless_busy(conn: Any) -> bool:
    """Close a connection still waiting for its request; False if it is being answered."""
    cycle = getattr(conn, "cycle", None)
    if cycle is not None and not cycle.response_complete:
        return False
    transport = conn.transport
    if transport is None or transport.is_closing():
        return False
    transport.close()
    return True


class _Guarded:
    """What both uvicorn HTTP protocols get: each waiting period registered, each end of one
    removed. ``pending`` is set on the class ``guarded_http`` builds."""

    pending: PendingRequests

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self.pending.wait(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.pending.done(self)
        super().connection_lost(exc)  # type: ignore[misc]

    def on_headers_complete(self) -> None:  # httptools: the head is complete
        self.pending.done(self)
        super().on_headers_complete()  # type: ignore[misc]

    def handle_websocket_upgrade(self, *event: Any) -> None:
        self.pending.done(self)
        super().handle_websocket_upgrade(*event)  # type: ignore[misc]

    def on_response_complete(self) -> None:
        """Answered: a keep-alive connection now waits for its next request (uvicorn's own
        keep-alive timer is cancelled by its first byte, ours is not)."""
        super().on_response_complete()  # type: ignore[misc]
        transport = getattr(self, "transport", None)
        cycle = getattr(self, "cycle", None)
        busy = cycle is not None and not cycle.response_complete
        if transport is not None and not transport.is_closing() and not busy:
            self.pending.wait(self)


def guarded_http(pending: PendingRequests) -> type[asyncio.Protocol]:
    """The HTTP protocol class for uvicorn's ``http`` setting (httptools when installed, as
    uvicorn's ``auto``; else h11), bound to ``pending``."""
    base = HttpToolsProtocol if HttpToolsProtocol is not None else H11Protocol
    name = f"Guarded{base.__name__}"
    return type(name, (_Guarded, base), {"pending": pending})
