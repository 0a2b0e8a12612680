"""The archive of a live event replays to its standings to the chip (issue #20.12).

A live hub is played with the sample sessions of every game, with faults a real event has:
refused events (which use up their console's seq), resends, gaps, dealer errors (``undo``) and
the operator's commands (void, penalty, a penalty withdrawn, confirm, on-air). Its journal,
exported as `duplicast export --events` writes it, replays offline to the very standings the
live hub shows; a rebuild from the journal alone knows every refusal's answer; and a replay
that refuses an event the live hub accepted exits non-zero.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.bus.base import Bus
from hub.bus.memory import MemoryBus
from hub.bus.redis import RedisBus
from hub.cli.replay import read_events, replay
from hub.client.logreplay import load_events, replay_log
from hub.domain.config import TournamentConfig
from hub.engine.core import Engine
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.files.eventlog import dumps, header, journal_events
from hub.roles import ingest as ingest_module
from hub.roles import ingest_answers
from hub.roles.ingest import Ingest
from hub.wire import codec
from hub.wire.channels import Channels
from hub.wire.signing import signed_command
from tests.hubharness import ROOT, duplicast
from tests.redis_server import RedisServer, free_port

SAMPLES = ROOT / "samples"
GAMES = {
    "holdem-stages": ("ifp-event.toml", "ifp-event-session.jsonl"),
    "piecepack-holdem": ("piecepack.toml", "piecepack-session.jsonl"),
    "mcr": ("mcr.toml", "mcr-session.jsonl"),
    "rps-poker": ("rps-poker.toml", "rps-poker-session.jsonl"),
}


def load_game(game: str) -> tuple[TournamentConfig, Any, list[dict[str, Any]]]:
    config_file, session = GAMES[game]
    config = load_config(SAMPLES / config_file)
    decks = load_decks(config, SAMPLES, dict(os.environ))
    events = [json.loads(line) for line in (SAMPLES / session).read_text().splitlines() if line]
    return config, decks, events


@dataclass
class Step:
    """One thing that reaches the live hub: a console's message, or an operator command."""

    event: dict[str, Any] | None = None
    command: dict[str, Any] | None = None
    ts: float = 0.0


@dataclass
class Faults:
    steps: list[Step] = field(default_factory=list)
    next_seq: dict[str, int] = field(default_factory=dict)
    sent: list[dict[str, Any]] = field(default_factory=list)

    def send(self, event: dict[str, Any], ts: float) -> None:
        """The console's next event: numbered with its next seq."""
        seq = self.next_seq.get(event["console"], 1)
        self.next_seq[event["console"]] = seq + 1
        numbered = {**event, "seq": seq, "ts": ts}
        self.sent.append(numbered)
        self.steps.append(Step(event=numbered, ts=ts))

    def raw(self, event: dict[str, Any], ts: float) -> None:
        """A message as is (a resend, or one past a gap): it uses up no seq."""
        self.steps.append(Step(event=event, ts=ts))

    def command(self, command: dict[str, Any], ts: float) -> None:
        self.steps.append(Step(command=command, ts=ts))


def wrong(event: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The event as a console gets it wrong: each is refused, and uses up its seq."""
    kind = rng.randrange(5)
    if kind == 0:
        return {**event, "type": "bogus"}  # bad_schema
    if kind == 1:
        return {**event, "type": "fold", "seat": 99}  # unknown seat
    if kind == 2:
        return {"v": 1, **event, "type": "start", "deal": 999}  # unknown deal
    if kind == 3:
        return {**event, "tournament": "another-event"}  # unknown_tournament
    return {**event, "type": "fold", "seat": 1} if event["type"] == "start" else event


def faulty_session(
    config: TournamentConfig, events: list[dict[str, Any]], rng: random.Random
) -> Faults:
    """The session with refusals, resends, gaps, dealer errors and operator commands."""
    faults = Faults()
    commands = max(0.012, 6 / len(events))  # a few even in a short session
    deal_of: dict[int, int] = {}  # table -> the deal it plays
    for event in events:
        ts = float(event["ts"])
        table = event["table"]
        if event["type"] == "start":
            deal_of[table] = event["deal"]
        roll = rng.random()
        if roll < 0.06:
            faults.send(wrong(event, rng), ts)
        elif roll < 0.07 and event["type"] != "start":
            faults.send({**event, "type": "undo"}, ts)  # a dealer error, taken back
        elif roll < 0.08 and faults.sent:
            faults.raw(dict(rng.choice(faults.sent)), ts)  # a resend: answered again
        elif roll < 0.09:
            ahead = faults.next_seq.get(event["console"], 1) + 3
            faults.raw({**event, "seq": ahead}, ts)  # a gap: refused, uses up nothing
        faults.send(event, ts)
        if rng.random() < commands and table in deal_of:
            faults.command(operator_command(config, table, deal_of[table], rng), ts)
    return faults


def operator_command(
    config: TournamentConfig, table: int, deal: int, rng: random.Random
) -> dict[str, Any]:
    official = {"by": "Chief TD", "reason": "ruling"}
    choice = rng.randrange(6)
    if choice == 5:  # a penalty withdrawn (issue #30 item 7; refused when there is none yet)
        return {"op": "withdraw", "penalty": rng.randint(1, 3), **official}
    if choice == 0:
        return {"op": "void", "table": table, "deal": deal, **official}
    if choice == 1:
        seat = rng.randint(1, config.seats)
        return {"op": "penalty", "table": table, "seat": seat, "chips": 25, **official}
    if choice == 2:
        return {"op": "penalty", "table": table, "seat": 1, "points": 1, **official}
    if choice == 3:
        return {"op": "confirm", "table": table, "deal": deal, **official}
    return {"op": "onair", "slot": "ticker", "value": {"visible": rng.random() < 0.5}}


async def play_live(bus: Bus, config: TournamentConfig, decks: Any, faults: Faults) -> Ingest:
    """The live hub (ingest, journal on ``bus``) fed every step, on the session's clock."""
    clock = [0.0]
    ingest = Ingest(bus, Engine(config, decks), clock=lambda: clock[0], feed=False)
    await ingest.start()
    names = Channels(config.id)
    for step in faults.steps:
        clock[0] = step.ts
        if step.command is not None:
            await ingest.control(step.command)
        else:
            assert step.event is not None
            channel = names.console(step.event["table"])
            await ingest.handle_batch([ingest_module.Message(channel, codec.pack(step.event), 0)])
    return ingest


async def export(bus: Bus, tournament: str, path: Path) -> list[dict[str, Any]]:
    """`duplicast export --events`, in process."""
    lines = [header(tournament)] + [line async for line in journal_events(bus, tournament)]
    path.write_text("".join(dumps(line) + "\n" for line in lines))
    return lines


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("game", sorted(GAMES))
async def test_an_exported_journal_replays_to_the_live_standings(
    game: str, seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The ingest persists only the latest refusal answers beside the journal: the journal
    # itself must say what every refused seq was told.
    monkeypatch.setattr(ingest_answers, "MAX_REFUSALS", 2)
    config, decks, events = load_game(game)
    faults = faulty_session(config, events, random.Random(f"{game}:{seed}"))
    bus = MemoryBus()
    await bus.connect()
    live = await play_live(bus, config, decks, faults)
    live_standings = live.engine.standings_json()
    live_seqs = live.engine.admission.sequencer.snapshot()
    await live.stop()
    log = tmp_path / "events.jsonl"
    lines = await export(bus, config.id, log)
    refused = [line for line in lines if "refused" in line]
    operator = [line for line in lines if line.get("console") == "operator" or "op" in line]
    assert len(refused) >= len(events) // 50 and operator, (len(refused), len(operator))

    engine = Engine(config, decks)
    refusals = replay(config, read_events(log), engine, str(log))
    assert refusals == []  # every seq accounted for: no seq_gap, nothing refused the hub took
    assert engine.standings_json() == live_standings  # to the chip

    # A rebuild from the journal alone (a crash: no engine snapshot) knows every answer.
    await bus.delete(Channels(config.id).engine)
    rebuilt = Ingest(bus, Engine(config, decks), feed=False)
    await rebuilt.start()
    try:
        assert (
            rebuilt.engine.admission.sequencer.snapshot()["consoles"].keys()
            == live_seqs["consoles"].keys()
        )
        for name, entry in live_seqs["consoles"].items():
            got = rebuilt.engine.admission.sequencer.snapshot()["consoles"][name]
            assert got["last"] == entry["last"] and got["rejected"] == entry["rejected"], name
        assert rebuilt.engine.standings_json() == live_standings
    finally:
        await rebuilt.stop()
        await bus.close()


def test_replay_exits_non_zero_when_it_refuses_what_the_hub_accepted(tmp_path: Path) -> None:
    config, _, events = load_game("rps-poker")
    lines: list[dict[str, Any]] = [header(config.id)]
    lines += events
    log = tmp_path / "journal.jsonl"
    log.write_text("".join(dumps(line) + "\n" for line in lines))
    config_file = SAMPLES / GAMES["rps-poker"][0]
    same = duplicast("replay", "--config", str(config_file), str(log))
    assert same.returncode == 0, same.stderr[-2000:]
    # One accepted event altered after the fact: the replay refuses it (and what follows).
    tampered = [dict(line) for line in lines]
    victim = next(i for i, line in enumerate(tampered) if line.get("type") == "start")
    tampered[victim]["deal"] = 999
    log.write_text("".join(dumps(line) + "\n" for line in tampered))
    diverged = duplicast("replay", "--config", str(config_file), str(log))
    assert diverged.returncode == 3, diverged.stderr[-2000:]
    assert "the live hub accepted" in diverged.stderr
    assert "NOT those of the live event" in diverged.stderr
    hands = duplicast(
        "export", "--phh", str(log), "--config", str(config_file), "--out", str(tmp_path / "h")
    )
    assert hands.returncode == 3 and "NOT those of the live event" in hands.stderr
    # A console's own log (no journal header) holds refusals the hub answered: not an error.
    log.write_text("".join(dumps(line) + "\n" for line in tampered[1:]))
    assert duplicast("replay", "--config", str(config_file), str(log)).returncode == 0


@pytest.mark.redis
async def test_a_served_event_exported_replays_to_its_live_standings(tmp_path: Path) -> None:
    """The whole chain as run at a venue: `duplicast serve` on its own Redis, consoles with
    refused events, operator commands on the control channel, `duplicast export --events`,
    then `duplicast replay`: exit 0 and the standings the hub serves, to the chip."""
    config, _, events = load_game("holdem-stages")
    faults = faulty_session(config, events, random.Random("served"))
    sent = [s.event for s in faults.steps]
    commands = [s.command for s in faults.steps if s.command is not None]
    # Consoles renumber what they send (replay_log): resends and gaps become refusals too.
    sent = [{k: v for k, v in e.items() if k != "seq"} for e in sent if e is not None]
    token = "archive-operator-token"
    config_file = SAMPLES / GAMES["holdem-stages"][0]
    port = free_port()
    with RedisServer(tmp_path / "redis") as redis:
        command = [sys.executable, "-m", "hub", "serve", "--config", str(config_file)]
        command += ["--redis", redis.url, "--role", "all", "--host", "127.0.0.1"]
        command += ["--port", str(port)]
        env = {**os.environ, "DUPLICAST_OPERATOR_TOKEN": token}
        with (tmp_path / "hub.log").open("ab") as log:
            hub = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        bus = RedisBus(redis.url)
        await bus.connect()
        try:
            url = f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=url, timeout=5.0) as http:
                await until_ready(http, hub)
                half = len(sent) // 2
                first = await replay_log(bus, config.id, sent[:half], on_reject=lambda _: None)
                for command_ in commands:
                    signed = signed_command(token, command_)  # as a page or `duplicast td` sends
                    await bus.publish(Channels(config.id).control, codec.pack(signed))
                second = await replay_log(bus, config.id, sent[half:], on_reject=lambda _: None)
                assert first.rejected + second.rejected >= len(events) // 50
                live = await settled_standings(http, token)
                # The PHH export of the staged event, written in the serve process's worker.
                headers = {"authorization": f"Bearer {token}"}
                phh = await http.get("/api/export/phh", headers=headers, timeout=60)
                assert phh.status_code == 200 and int(phh.headers["x-phh-hands"]) > 0
            journal = tmp_path / "journal.jsonl"
            done = await asyncio.to_thread(
                duplicast, "export", "--events", "--config", str(config_file),
                "--redis", redis.url, "--out", str(journal),
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-2000:]
        finally:
            await bus.close()
            if hub.poll() is None:
                hub.terminate()
            hub.wait(timeout=20)
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert "journal" in lines[0] and lines[0]["journal"]["epoch"]
    assert any("refused" in line for line in lines)
    assert any(line.get("console") == "operator" for line in lines)
    replayed = await asyncio.to_thread(
        duplicast, "replay", "--config", str(config_file), str(journal), "--indent", "0"
    )
    assert replayed.returncode == 0, replayed.stderr[-2000:]
    assert json.loads(replayed.stdout) == live


async def until_ready(http: httpx.AsyncClient, hub: subprocess.Popen[bytes]) -> None:
    async with asyncio.timeout(60):
        while True:
            assert hub.poll() is None, "the hub exited"
            try:
                if (await http.get("/readyz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)


async def settled_standings(http: httpx.AsyncClient, token: str) -> Any:
    """The live standings the hub serves, once two reads a second apart agree."""
    headers = {"authorization": f"Bearer {token}"}
    previous = None
    async with asyncio.timeout(60):
        while True:
            response = await http.get("/api/standings", headers=headers)
            assert response.status_code == 200, response.text[:300]
            data = response.json()["data"]
            if data == previous:
                return data
            previous = data
            await asyncio.sleep(1.0)


def test_console_replay_of_an_export_sends_only_events(tmp_path: Path) -> None:
    """`duplicast console replay` of an export (a hub rebuilt from the archive): the header
    and the refused lines are not events a console sends."""
    event = {"v": 1, "tournament": "t", "table": 1, "console": "table1", "seq": 2, "type": "fold"}
    refused = {"refused": {"console": "table1", "seq": 1, "code": "bad_schema"}, "event": {}}
    log = tmp_path / "export.jsonl"
    log.write_text("".join(dumps(line) + "\n" for line in (header("t", "e"), refused, event)))
    assert load_events(log) == [event]
