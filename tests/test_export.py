"""`duplicast export --events`: a live session's journal on Redis back to the event log `replay`
reads, with the same standings (issue #10.7), the operator's commands included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hub.bus.redis import RedisBus
from hub.cli.replay import DeckCheck, read_events, replay
from hub.client.logreplay import replay_log
from hub.engine.core import Engine
from hub.files.eventlog import dumps, journal_events, log_line
from hub.wire.channels import Channels
from tests.hubharness import ingest_hub, session_events, unique_tournament


def test_log_line_of_each_journal_record_kind() -> None:
    console = {
        "kind": "console", "v": 1, "tournament": "t", "table": 2, "console": "table2",
        "seq": 4, "type": "fold", "seat": 3, "ts": 17.0, "at": 1795380383.2914,
    }  # fmt: skip
    assert log_line(console) == {
        "v": 1, "tournament": "t", "table": 2, "console": "table2", "seq": 4, "type": "fold",
        "seat": 3, "ts": 1795380383.2914,  # the hub's clock, unrounded
    }  # fmt: skip
    control = {"kind": "control", "op": "onair", "slot": "ticker", "value": {"on": 1}, "at": 5}
    assert log_line(control) == {"op": "onair", "slot": "ticker", "value": {"on": 1}, "ts": 5.0}


@pytest.mark.redis
async def test_a_live_session_exported_replays_to_the_same_standings(
    redis_url: str, tmp_path: Path
) -> None:
    config, decks = unique_tournament("export")
    events = session_events(config.id)
    # The session's one dispute is settled from the operator panel, not by its console.
    confirm = next(e for e in events if e["type"] == "confirm")
    events.remove(confirm)
    bus = RedisBus(redis_url)
    await bus.connect()
    try:
        async with ingest_hub(bus, config, decks) as (source, _server):
            report = await replay_log(bus, config.id, events, on_reject=lambda _: None)
            assert report.rejected == 0 and report.accepted == len(events)
            answer = await source.control(
                {"op": "confirm", "table": confirm["table"], "deal": confirm["deal"], "by": "TD"}
            )
            assert answer["ok"], answer
            onair = {"op": "onair", "slot": "ticker", "value": {"visible": False}}
            assert (await source.control(onair))["ok"]
            live = source.engine.standings_json()
            live_onair = source.engine.desk.onair
        log = tmp_path / "events.jsonl"
        lines = [dumps(event) async for event in journal_events(bus, config.id)]
        log.write_text("\n".join(lines) + "\n")
    finally:
        await bus.delete(*Channels(config.id).data_keys, Channels(config.id).lease)
        await bus.close()
    exported: list[dict[str, Any]] = [json.loads(line) for line in lines]
    assert len(exported) == len(events) + 2
    assert exported[-2]["console"] == "operator" and exported[-2]["type"] == "confirm"
    assert exported[-1]["op"] == "onair"
    # Offline, from the file alone: the same standings and the same on-air state.
    check = DeckCheck()
    engine = Engine(config, decks)
    refused = replay(config, read_events(log), engine, str(log), check=check)
    assert refused == []
    assert engine.standings_json() == live
    assert engine.desk.onair == live_onair
    assert check.contradicted == 1 and not check.mismatch  # the one dispute, as played


@pytest.mark.redis
async def test_a_refused_valid_event_is_exported_as_the_event_it_was(redis_url: str) -> None:
    """Issue #30 item 13: a well-formed event the hub refused (the hub decoded it, then the
    rules refused it) is written as JSON in its ``refused`` line, not as a Python repr."""
    config, decks = unique_tournament("export-refused")
    events = session_events(config.id)
    fold = {**next(e for e in events if e["table"] == 1 and e["type"] == "fold"), "seq": 1}
    fold.pop("deal", None)
    bus = RedisBus(redis_url)
    await bus.connect()
    try:
        async with ingest_hub(bus, config, decks):
            report = await replay_log(bus, config.id, [fold], on_reject=lambda _: None)
            assert report.rejected == 1
        lines = [json.loads(dumps(e)) async for e in journal_events(bus, config.id)]
    finally:
        await bus.delete(*Channels(config.id).data_keys, Channels(config.id).lease)
        await bus.close()
    [line] = lines
    assert line["refused"]["code"] == "hand_not_started"
    sent = {k: v for k, v in line["event"].items() if k != "ts"}
    assert sent == {k: v for k, v in fold.items() if k != "ts"}
