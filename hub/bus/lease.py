"""One holder of a lease (``Leases.claim``): how a single writer per tournament is kept.

The ingest (the journal's writer) and the projector (the feed's writer) each hold one: claim
it at start, or stand by (not ready) while another process holds it, polling every quarter of
its time to live and outliving any Redis outage; renew it every third of its time to live;
say when it was lost (another process claimed it: a long pause, a partition) so its owner
stops; release it on a clean stop within a bounded time, so a successor need not wait for it
to run out.

``fenced`` (the ingest): renewals carry the token, so a lease that merely ran out (a Redis
outage longer than its time to live) is taken back with the same token when no one claimed it
since, and lost otherwise; ``fence`` is then what every journal append is checked against.
Unfenced (the projector): a renewal that finds the lease free simply claims it again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Callable

from hub.bus.base import Fence
from hub.bus.protocols import Leases
from hub.tasks import bounded

__all__ = ["LeaseHolder", "new_owner"]


def new_owner() -> str:
    """A name for a lease holder no other process shares: host, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class LeaseHolder:
    """Claims, waits for, keeps and releases the lease ``key`` (module docstring). ``name``
    says whose lease it is in the logs ("ingest", "projector"), written to ``log``."""

    def __init__(
        self,
        leases: Leases,
        key: str,
        *,
        name: str,
        ttl: float,
        log: logging.Logger,
        fenced: bool = False,
    ) -> None:
        self.leases = leases
        self.key = key
        self.name = name
        self.ttl = ttl
        self.log = log
        self.fenced = fenced
        self.owner = new_owner()
        self.token = 0  # the fencing token of our claim (0: none)
        self.fence = Fence(key, self.owner)
        self.standby = False  # another process holds it; ``wait`` is waiting for it
        self.lost = False  # someone else claimed it since we held it

    def _hold(self, token: int) -> None:
        self.token = token
        self.fence = Fence(self.key, self.owner, token)
        self.standby = False

    async def claim(self) -> bool:
        """Try once (errors are raised: a start that cannot reach the bus fails); False: held
        by another, we are on standby now (``wait`` for it)."""
        self.lost = False
        token = await self.leases.claim(self.key, self.owner, self.ttl)
        if token:
            self._hold(token)
            return True
        self.standby = True
        return False

    async def wait(self) -> None:
        """Poll every ``ttl / 4`` until the lease is ours; bus errors only delay it."""
        while True:
            try:
                token = await self.leases.claim(self.key, self.owner, self.ttl)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: a standby keeps waiting, it does not die
                self.log.warning("standby could not reach the %s lease: %s", self.name, exc)
                token = 0
            if token:
                break
            await asyncio.sleep(self.ttl / 4)
        self._hold(token)
        self.log.warning("took over %s", self.key)

    async def keep(self, on_lost: Callable[[], None]) -> None:
        """Renew every ``ttl / 3`` until the lease is lost, then call ``on_lost`` (once).
        A renewal that fails (Redis away) is tried again: fenced appends tell meanwhile."""
        while not self.lost:
            await asyncio.sleep(self.ttl / 3)
            token = self.token if self.fenced else None
            try:  # renews it, or takes it back if it ran out meanwhile (with our token if fenced)
                held = await self.leases.claim(self.key, self.owner, self.ttl, token=token)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.log.warning("could not renew the %s lease: %s", self.name, exc)
                continue
            if held != self.token if self.fenced else not held:  # someone claimed it since
                if self.lose():
                    on_lost()
                return

    def lose(self) -> bool:
        """Take note that the lease is lost (a renewal found it, or a fenced append was
        refused); True the first time only, so its owner stops once."""
        if self.lost:
            return False
        self.lost = True
        return True

    async def release(self, timeout: float) -> None:
        """On a clean stop: give the lease up if we hold it, waiting at most ``timeout`` for
        the bus (else it simply runs out)."""
        if self.token and not self.lost and not self.standby:
            releasing = self.leases.release(self.key, self.owner)
            await bounded(releasing, timeout, f"releasing the {self.name} lease")
        self.standby = False
