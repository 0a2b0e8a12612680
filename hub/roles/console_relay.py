"""Web consoles through an edge: their events onto the bus, the hub's answers back to them.

A table's web console (role ``console``, docs/protocol.md §3) speaks to any edge over ``/ws``.
The edge publishes each signed event, as the page signed it, on its table's web channel
(msgpack ``{"console", "signed", "sig"}`` on ``dup:{t}:web:{table}``; the Redis consoles'
``console:{table}`` is theirs only, ``duplicast acl``); the ingest verifies it
(``hub.roles.signed``) and then treats it as a Redis console's event, so the journal, the acks
and the ``(console, seq)`` protocol are the same for both, and a Redis console and a web console
of one table can share a hand. While a console of a name has a socket here, the edge listens to its
ack channel (``dup:{t}:ack:{console}``) and its table's error channel (answers there that name
it) and hands every answer to each of its sockets as ``{"type": "ack", ...}``. One listener per
console name, however many sockets (a tablet reloaded, a second screen).

The failure this prevents: an event published before the edge listens for its answer would be
answered into the void; ``send`` waits for the console's listener first (the page's resend then
gets the same answer again: the hub answers a duplicate seq with its first answer).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from hub.bus.base import Subscription
from hub.bus.protocols import PubSub
from hub.tasks import cancel_and_wait
from hub.wire.channels import Channels
from hub.wire.codec import CodecError, pack, unpack_map

__all__ = ["SEND_TIMEOUT", "ConsoleRelay"]

log = logging.getLogger(__name__)

SEND_TIMEOUT = 3.0
"""Seconds a web console's event may take to reach the bus before the page is told
``unavailable`` (it keeps the event and sends it again)."""


def _retrieved(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved: a failure is reported by the next send, not at exit


class _Listener:
    """The answers to one console name, for its sockets on this edge."""

    def __init__(self, bus: PubSub, names: Channels, console: str, table: int) -> None:
        self.console = console
        self.table = table
        self.clients: set[Any] = set()
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.ready.add_done_callback(_retrieved)
        self._subs = [bus.subscribe(names.ack(console)), bus.subscribe(names.errors(table))]
        self.task = asyncio.get_running_loop().create_task(
            self._run(), name=f"console-answers-{console}"
        )

    async def _run(self) -> None:
        acks, errors = self._subs
        try:
            await acks.ready()
            await errors.ready()
            if not self.ready.done():
                self.ready.set_result(None)
            await asyncio.gather(self._read(acks, False), self._read(errors, True))
        except Exception as exc:  # (a refused SUBSCRIBE, a bus gone): the next send retries
            log.warning("the answers to console %s are not heard: %s", self.console, exc)
            if not self.ready.done():
                self.ready.set_exception(exc)
        finally:
            for sub in self._subs:
                with contextlib.suppress(Exception):
                    await sub.aclose()

    async def _read(self, sub: Subscription, named_only: bool) -> None:
        async for message in sub:
            answer = unpack_map(message.data)
            if answer is None:
                continue
            if named_only and answer.get("console") != self.console:
                continue  # an answer to another console of the table
            frame = {**answer, "type": "ack"}
            for client in list(self.clients):
                client.send(frame)


class ConsoleRelay:
    """The web consoles of one process (``EdgeSource.consoles``, ``IngestSource.consoles``)."""

    def __init__(self, bus: PubSub, tournament: str, *, timeout: float = SEND_TIMEOUT) -> None:
        self.bus = bus
        self.tournament = tournament
        self.names = Channels(tournament)
        self.timeout = timeout
        self._listeners: dict[str, _Listener] = {}

    async def epoch(self) -> str | None:
        """The hub's event epoch (``dup:{t}:epoch``): a web console's outbox is kept to it as
        a Redis console's is (``hub.client.outbox``), so entries made under a rehearsal's hub
        never reach the real event's. None when unknown (no hub started on this Redis yet, a
        bus that does not answer, an ACL without it): the page then checks nothing."""
        get = getattr(self.bus, "get", None)
        if get is None:
            return None
        try:
            value = await asyncio.wait_for(get(self.names.epoch), self.timeout)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("the event epoch is not readable for the web consoles: %s", exc)
            return None
        return None if not value else bytes(value).decode("utf-8", "replace")

    def listening(self) -> list[str]:
        """The console names whose answers this process listens to now."""
        return sorted(self._listeners)

    def attach(self, client: Any, console: str, table: int) -> None:
        """A socket of ``console`` (writing ``table``) joined: it gets that console's answers."""
        listener = self._listeners.get(console)
        if listener is None or listener.task.done():  # (one that failed: listen again)
            listener = self._listen(console, table, listener)
        listener.clients.add(client)

    def _listen(self, console: str, table: int, old: _Listener | None) -> _Listener:
        listener = self._listeners[console] = _Listener(self.bus, self.names, console, table)
        if old is not None:
            listener.clients |= old.clients
        return listener

    def detach(self, client: Any, console: str) -> None:
        """A socket left; the last one of a console stops its listener."""
        listener = self._listeners.get(console)
        if listener is None:
            return
        listener.clients.discard(client)
        if not listener.clients:
            del self._listeners[console]
            listener.task.cancel()

    async def send(self, console: str, table: int, event: dict[str, Any]) -> str | None:
        """Publish ``event`` (the signed envelope ``{"console", "signed", "sig"}``) on the
        table's web channel once ``console``'s answers are heard. None when published, else
        why not (the page keeps it and sends it again): no bus, no hub listening, too slow."""
        try:
            data = pack(event)
        except CodecError as exc:  # the caller checked the shape; a value msgpack cannot carry
            return f"the event cannot be sent: {exc}"
        listener = self._listeners.get(console)
        if listener is not None and listener.task.done():  # it failed: listen again first
            listener = self._listen(console, table, listener)
        try:
            if listener is not None:
                await asyncio.wait_for(asyncio.shield(listener.ready), self.timeout)
            receivers = await asyncio.wait_for(
                self.bus.publish(self.names.web(table), data), self.timeout
            )
        except TimeoutError:
            return f"the bus did not take the event within {self.timeout:g} s"
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return f"the bus is unavailable: {exc}"
        if receivers == 0:
            return f"no hub is listening for table {table} now: the event was not delivered"
        return None

    async def stop(self) -> None:
        listeners, self._listeners = list(self._listeners.values()), {}
        await cancel_and_wait([listener.task for listener in listeners])
