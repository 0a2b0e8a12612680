"""The ingest and its websocket clients in one process (role ``all``, the demo): the fan-out
reads the ingest's own feed store, and where the overlays and the sample tournament live."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

from hub.bus import Bus
from hub.domain.config import TournamentConfig
from hub.engine.core import Engine
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.metrics import Metrics
from hub.roles.console_relay import ConsoleRelay
from hub.roles.ingest import Ingest
from hub.serve.auth import Keyring
from hub.serve.fanout import Fanout
from hub.serve.feed import Frame, IngestFeed, TopicKey
from hub.serve.limits import Limits
from hub.wire.topics import TopicSpace

__all__ = [
    "OVERLAYS",
    "ROOT",
    "SAMPLE_CONFIG",
    "IngestSource",
    "load_tournament",
    "until_signalled",
    "weak_tokens_refused",
]


def _home() -> Path:
    """Where `overlays/` and `samples/` live: $DUPLICAST_HOME, else the source checkout (an
    editable install), else the working directory (a wheel install run from /app in Docker)."""
    if os.environ.get("DUPLICAST_HOME"):
        return Path(os.environ["DUPLICAST_HOME"])
    checkout = Path(__file__).resolve().parents[2]  # hub/roles/embedded.py -> the checkout
    return checkout if (checkout / "overlays").is_dir() else Path.cwd()


ROOT = _home()
OVERLAYS = ROOT / "overlays"
SAMPLE_CONFIG = ROOT / "samples" / "ifp6.toml"


class IngestSource:
    """FeedSource for a process that runs the ingest: its edge reads the ingest's own store."""

    def __init__(
        self,
        bus: Bus,
        engine: Engine,
        *,
        own_bus: bool = True,
        limits: Limits | None = None,
        keys: Keyring | None = None,
    ) -> None:
        self.bus = bus
        self.engine = engine
        self.tournament = engine.state.config.id
        self.store = IngestFeed(live=False)  # live while the ingest is ready (DESIGN §7)
        self.fanout = Fanout(self.store, limits)
        self.consoles = ConsoleRelay(bus, self.tournament)  # the web consoles' events, answers
        self.metrics = Metrics()
        self.keys = keys  # what signed commands and web console events are verified with
        self.lost = asyncio.Event()  # set when the ingest lost its lease to another one
        self.ingest = self._ingest(engine)
        self._own_bus = own_bus

    def _ingest(self, engine: Engine) -> Ingest:
        ingest = Ingest(
            self.bus,
            engine,
            store=self.store,
            on_frame=self._on_frame,
            metrics=self.metrics,
            on_lost=self.lost.set,
            on_ready=self.fanout.refresh,
        )
        if self.keys is not None:
            ingest.signed.keys = self.keys
        return ingest

    def _on_frame(self, key: TopicKey, frame: Frame) -> None:
        """A frame of the ingest's feed to its clients; none while the store is not live (a
        rebuild's frames may follow a snapshot the clients do not hold: they get a fresh one
        when it turns live, ``Fanout.refresh``)."""
        if self.store.live:
            self.fanout.publish(key, frame.outs)

    def verify_with(self, keys: Keyring) -> None:
        """The keys of the tokens this process's server takes (``create_app``), unless it was
        given some: what its ingest verifies signed commands and web console events with."""
        if self.keys is None:
            self.keys = keys
            self.ingest.signed.keys = keys

    def ready(self) -> bool:
        return self.ingest.ready

    def check_topic(self, role: str, topic: object, table: int | None = None) -> str | None:
        return self.engine.topics.check(role, topic, table)

    @property
    def topics(self) -> TopicSpace:
        """The tournament's topics and program outputs (``FeedService.topics``)."""
        return self.engine.topics

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        return await self.ingest.control_now(command)

    async def replace_engine(self, engine: Engine) -> None:
        """Start over with another engine (a new session), keeping clients and topic seqs."""
        await self.ingest.stop()
        self.engine = engine
        self.ingest = self._ingest(engine)
        await self.ingest.start()

    async def start(self) -> None:
        if self._own_bus:
            await self.bus.connect()
        await self.ingest.start()

    async def stop(self) -> None:
        await self.consoles.stop()
        await self.ingest.stop()
        if self._own_bus:
            await self.bus.close()


def load_tournament(config_path: Path) -> tuple[TournamentConfig, Any]:
    config = load_config(config_path)
    decks = load_decks(config, config_path.parent, dict(os.environ))
    return config, decks


async def until_signalled(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()


NEW_TOKEN_HINT = "make a token with: python3 -c 'import secrets; print(secrets.token_urlsafe(24))'"


def weak_tokens_refused(command: str, auth: Any) -> bool:
    """Say why and return True if a configured token is a default or weak one."""
    from hub.serve.auth import weak_tokens

    problems = weak_tokens(auth)
    for problem in problems:  # refuse before anything listens
        print(f"duplicast {command}: refusing to start: {problem}", file=sys.stderr)
    if problems:
        print(NEW_TOKEN_HINT, file=sys.stderr)
    return bool(problems)
