"""Running hubs for end-to-end tests: the sample tournament under a unique id, on a real bus."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from hub.bus.base import Bus
from hub.domain.config import TournamentConfig
from hub.engine.core import Engine
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.roles.edge import EdgeSource
from hub.roles.embedded import OVERLAYS, IngestSource
from hub.serve.auth import Auth
from hub.serve.http import RunningServer, create_app, serve

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
SESSION = ROOT / "samples" / "ifp6-session.jsonl"
COMMENTATOR = "test-commentator-token"
OPERATOR = "test-operator-token"


def duplicast(
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: Path = ROOT,
    base: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """The ``duplicast`` command run as a user runs it (``python -m hub``), output captured;
    its environment is ``base`` (this process's by default) with ``env`` on top."""
    return subprocess.run(
        [sys.executable, "-m", "hub", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**(os.environ if base is None else base), **(env or {})},
        timeout=120,
    )


def unique_tournament(prefix: str = "e2e") -> tuple[TournamentConfig, Any]:
    config = load_config(SAMPLE)
    decks = load_decks(config, SAMPLE.parent, dict(os.environ))
    return dataclasses.replace(config, id=f"{prefix}-{uuid.uuid4().hex[:8]}"), decks


def session_events(tournament: str, path: Path = SESSION) -> list[dict[str, Any]]:
    events = []
    for line in path.read_text().splitlines():
        if line.strip():
            events.append({**json.loads(line), "tournament": tournament})
    return events


def offline(config: TournamentConfig, decks: Any, events: list[dict[str, Any]]) -> Engine:
    engine = Engine(config, decks)
    for event in events:
        out = engine.submit(event, float(event.get("ts", 0.0)))
        assert out.ok, out.ack
    engine.tick(float("inf"))
    return engine


def auth() -> Auth:
    return Auth(commentator_token=COMMENTATOR, operator_token=OPERATOR)


def proofs_of(tokens: Auth) -> Auth:
    """What an edge is given instead of ``tokens`` (``duplicast proofs``): their proofs."""
    from hub.wire.signing import session_proof

    def proof(value: str | None) -> str | None:
        return None if value is None else session_proof(value)

    seats = tuple(dataclasses.replace(s, token=session_proof(s.token)) for s in tokens.consoles)
    return Auth(proof(tokens.commentator_token), proof(tokens.operator_token), seats)


@contextlib.asynccontextmanager
async def ingest_hub(
    bus: Bus, config: TournamentConfig, decks: Any, tokens: Auth | None = None
) -> AsyncIterator[tuple[IngestSource, RunningServer]]:
    """Ingest + edge in one process (role all) on `bus`, served on a free loopback port
    (``tokens``: the tokens it takes, else ``auth()``)."""
    given = auth() if tokens is None else tokens
    source = IngestSource(bus, Engine(config, decks), own_bus=False, keys=given.keyring())
    app = create_app(source, overlays_dir=OVERLAYS, auth=given, metrics=source.metrics)
    server = await serve(app, "127.0.0.1", 0)
    try:
        yield source, server
    finally:
        await server.stop()


@contextlib.asynccontextmanager
async def edge_hub(
    bus: Bus, tournament: str, tokens: Auth | None = None
) -> AsyncIterator[tuple[EdgeSource, RunningServer]]:
    source = EdgeSource(bus, tournament)
    app = create_app(source, overlays_dir=OVERLAYS, auth=auth() if tokens is None else tokens)
    server = await serve(app, "127.0.0.1", 0)
    try:
        yield source, server
    finally:
        await server.stop()
