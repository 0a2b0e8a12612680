"""Offline replay: a tournament file and a JSON Lines event log in, standings JSON out.

No server, no bus: each line goes through the same `Engine.submit` the hub uses, so the replay is
the reference the live feeds are checked against. A real console log holds refused events (the
hub answered them and went on): the replay answers them the same way, reports each with its file,
line and code, and goes on; ``strict`` stops at the first instead. A line that is not a JSON
object is refused as ``bad_schema``, as the hub refuses a message it cannot decode.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hub.configfile import load_config
from hub.deckfile import load_decks
from hub.domain.config import TournamentConfig
from hub.engine.core import Engine


class ReplayError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Refusal:
    """One event the engine refused, where it stands in the log."""

    where: str  # file:line
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.code}: {self.message}"


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
            events.append({"_line": number, "_bad": f"not JSON: {exc.msg}"})
            continue
        if not isinstance(event, dict):
            events.append({"_line": number, "_bad": "an event must be a JSON object"})
            continue
        event["_line"] = number
        events.append(event)
    return events


def replay(
    config: TournamentConfig,
    events: list[dict[str, Any]],
    engine: Engine,
    source: str,
    *,
    strict: bool = False,
    on_refusal: Callable[[Refusal], None] | None = None,
) -> list[Refusal]:
    """Submit each event as the hub would; the refusals, in log order (each also handed to
    ``on_refusal`` as it happens). ``strict``: `ReplayError` at the first refusal. A resent
    event (a seq already answered) is skipped as the hub skips it."""
    refusals: list[Refusal] = []
    for event in events:
        line = event.pop("_line", "?")
        bad = event.pop("_bad", None)
        if bad is not None:
            refusal = Refusal(f"{source}:{line}", "bad_schema", bad)
        else:
            ts = event.get("ts")
            now = float(ts) if isinstance(ts, int | float) and not isinstance(ts, bool) else 0.0
            outcome = engine.submit(event, now)
            if outcome.duplicate or outcome.ok:
                continue
            refusal = Refusal(f"{source}:{line}", str(outcome.code), str(outcome.message))
        if strict:
            raise ReplayError(str(refusal))
        refusals.append(refusal)
        if on_refusal is not None:
            on_refusal(refusal)
    engine.tick(float("inf"))
    return refusals


def replay_files(
    config_path: Path,
    events_path: Path,
    env: dict[str, str],
    *,
    strict: bool = False,
    on_refusal: Callable[[Refusal], None] | None = None,
) -> dict[str, Any]:
    config = load_config(config_path)
    decks = load_decks(config, config_path.parent, env)
    engine = Engine(config, decks)
    events = read_events(events_path)
    replay(config, events, engine, str(events_path), strict=strict, on_refusal=on_refusal)
    return engine.standings_json()
