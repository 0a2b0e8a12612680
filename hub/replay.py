"""Offline replay: a tournament file and a JSON Lines event log in, standings JSON out.

No server, no bus: each line goes through the same `Engine.submit` the hub uses, so the replay is
the reference the live feeds are checked against. A malformed line or a refused event stops the
replay with the file, the line and the reason (an event log for scoring must be clean).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hub.configfile import load_config
from hub.deckfile import load_decks
from hub.domain.config import TournamentConfig
from hub.engine.core import Engine


class ReplayError(ValueError):
    pass


def read_events(path: Path) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror}") from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path}:{number}: not JSON: {exc.msg}") from exc
        if not isinstance(event, dict):
            raise ReplayError(f"{path}:{number}: an event must be a JSON object")
        event["_line"] = number
        events.append(event)
    return events


def replay(
    config: TournamentConfig, events: list[dict[str, Any]], engine: Engine, source: str
) -> Engine:
    for event in events:
        line = event.pop("_line", "?")
        now = float(event.get("ts") or 0.0)
        outcome = engine.submit(event, now)
        if outcome.duplicate:
            continue
        if not outcome.ok:
            raise ReplayError(f"{source}:{line}: {outcome.code}: {outcome.message}")
    engine.tick(float("inf"))
    return engine


def replay_files(config_path: Path, events_path: Path, env: dict[str, str]) -> dict[str, Any]:
    config = load_config(config_path)
    decks = load_decks(config, config_path.parent, env)
    engine = Engine(config, decks)
    replay(config, read_events(events_path), engine, str(events_path))
    return engine.standings_json()
