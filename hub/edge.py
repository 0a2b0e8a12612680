"""An edge process: holds websocket clients, follows the ingest through the bus (DESIGN §2).

It subscribes to the feed channel once, seeds its topic store from the snapshot hash, applies
every update and fans it out. An update that skips a seq (pub/sub is lossy) makes it reload
that topic's snapshot from the hash and send clients a fresh snapshot: clients never see a gap.
Operator commands are forwarded to the ingest on the control channel.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from hub.auth import Auth
from hub.bus import Bus, open_bus
from hub.bus.base import Subscription
from hub.codec import CodecError, pack
from hub.fanout import Fanout, Limits
from hub.feed import (
    TopicStore,
    Update,
    control_channel,
    decode_update,
    feed_channel,
    load_snapshots,
)
from hub.metrics import Metrics
from hub.server import create_app, serve
from hub.tasks import cancel_and_wait

__all__ = ["EdgeSource", "run_edge"]

log = logging.getLogger(__name__)


class EdgeSource:
    """A ``FeedSource`` fed by the bus instead of an engine."""

    def __init__(
        self,
        bus: Bus,
        tournament: str,
        *,
        limits: Limits | None = None,
        heal_attempts: int = 5,
        heal_delay: float = 0.05,
    ) -> None:
        self.bus = bus
        self.tournament = tournament
        self.store = TopicStore()
        self.fanout = Fanout(self.store, limits)
        self.gaps = 0  # updates that revealed a gap
        self.malformed = 0  # feed messages that were not updates
        self._heal_attempts = heal_attempts
        self._heal_delay = heal_delay
        self._subscription: Subscription | None = None
        self._task: asyncio.Task[None] | None = None

    def ready(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Subscribe first, then read the snapshots: an update published in between is
        either in the snapshot already (ignored by seq) or arrives after it."""
        self._subscription = self.bus.subscribe(feed_channel(self.tournament))
        await self._subscription.ready()
        for key, (seq, payload) in (await load_snapshots(self.bus, self.tournament)).items():
            self.store.seed(key, seq, payload)
        self._task = asyncio.get_running_loop().create_task(self._consume())

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait([self._task])
        if self._subscription is not None:
            await self._subscription.aclose()

    async def _consume(self) -> None:
        assert self._subscription is not None
        async for message in self._subscription:
            try:
                update = decode_update(message.data)
            except CodecError as exc:
                self.malformed += 1
                log.warning("ignoring a malformed feed message: %s", exc)
                continue
            try:
                await self.receive(update)
            except Exception:
                log.exception("failed to apply feed update %s seq %d", update.key, update.seq)

    async def receive(self, update: Update) -> None:
        """Apply one update from the feed and fan it out (or heal the gap it reveals)."""
        current = self.store.seq(update.key)
        if update.seq <= current:
            return  # already in the snapshot we started from
        if self.store.apply(update):
            self.fanout.publish_update(update)
            return
        self.gaps += 1
        await self._heal(update)

    async def _heal(self, update: Update) -> None:
        """Reload the topic from the snapshot hash (retrying briefly while the hash lags the
        feed), send it to clients as a snapshot, then apply ``update`` if it follows."""
        key = update.key
        found = None
        for attempt in range(self._heal_attempts):
            found = (await load_snapshots(self.bus, self.tournament)).get(key)
            if found is not None and found[0] >= update.seq - 1:
                break
            if attempt + 1 < self._heal_attempts:
                await asyncio.sleep(self._heal_delay)
        if found is not None and found[0] > self.store.seq(key):
            self.fanout.publish_update(self.store.seed(key, *found))
        if update.seq == self.store.seq(key) + 1 and self.store.apply(update):
            self.fanout.publish_update(update)
        elif update.seq > self.store.seq(key):
            log.warning(
                "topic %s: snapshot hash at seq %d lags update %d",
                key,
                self.store.seq(key),
                update.seq,
            )

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        """Forward to the ingest, which executes operator commands."""
        try:
            await self.bus.publish(control_channel(self.tournament), pack(command))
        except Exception as exc:
            return {"ok": False, "code": "unavailable", "error": f"bus unavailable: {exc}"}
        return {"ok": True, "queued": True}


async def run_edge(
    bus: Bus | str | None,
    tournament: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    overlays_dir: str | Path | None = None,
    auth: Auth | None = None,
    metrics: Metrics | None = None,
) -> None:
    """Run an edge until the server stops (SIGINT/SIGTERM or cancellation)."""
    owned = not isinstance(bus, Bus)
    the_bus = open_bus(bus) if not isinstance(bus, Bus) else bus
    if owned:
        await the_bus.connect()
    try:
        source = EdgeSource(the_bus, tournament)
        app = create_app(source, overlays_dir=overlays_dir, auth=auth, metrics=metrics)
        running = await serve(app, host, port)
        log.info("edge for %s listening on %s", tournament, running.url)
        try:
            await running.task
        finally:
            await running.stop()
    finally:
        if owned:
            await the_bus.close()
