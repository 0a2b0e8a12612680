"""Failover on real processes: the active writer SIGKILLed mid-session, its standby takes over.

DESIGN §7: a client never receives an empty or older snapshot; a role that is not ready serves
nothing new rather than something wrong. On a private redis-server: ingest A (active), ingest B
(standby) and an edge (or, ``--feed separate``: an ingest, projectors A and B and an edge),
websocket clients on every process subscribed to standings, table and compare topics while
``duplicast console simulate --pace`` plays. The active writer is killed with SIGKILL; its
clients reconnect to the next process with ``resume`` (as behind a load balancer); REST is read
throughout. Counted: blank frames (a snapshot with seq 0 or empty data), seq regressions (a
frame whose seq is below one the client holds), REST answers other than 200 with data or 503
with ``Retry-After``. All must be 0; play goes on after the takeover; at the end every client
holds what a fresh subscriber gets. Loopback only, bounded in time, processes stopped by pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis_server import RedisServer, free_port
from websockets.asyncio.client import connect

from hub.wire.patch import apply_patch, clone
from hub.wire.signing import session_proof

pytestmark = [pytest.mark.redis, pytest.mark.asyncio, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "ifp6.toml"
COMMENTATOR = "failover-test-commentator-token"
OPERATOR = "failover-test-operator-token"
TOKEN_VARIABLES = ("DUPLICAST_COMMENTATOR_TOKEN", "DUPLICAST_OPERATOR_TOKEN")
TOPICS = ["standings", "table:1", "table:2"]  # and a compare topic that has data


class Process:
    """One ``duplicast`` process started by this test (stopped by its pid)."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str]) -> None:
        self.log = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hub", *args],
            cwd=ROOT,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
        )

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()


def serve(role: str, config: Path, redis: str, log: Path, env: dict[str, str], *extra: str):
    port = free_port()
    if role == "edge":  # an edge gets the tokens' proofs only (`duplicast proofs`), as in compose
        env = {**env, **{k: session_proof(v) for k, v in env.items() if k in TOKEN_VARIABLES}}
    args = ["serve", "--role", role, "--config", str(config), "--redis", redis]
    args += ["--host", "127.0.0.1", "--port", str(port), *extra]
    return Process(args, log, env), f"127.0.0.1:{port}"


async def ready(address: str, timeout: float = 60.0) -> None:
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=1.0) as http:
        async with asyncio.timeout(timeout):
            while True:
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get("/readyz")).status_code == 200:
                        return
                await asyncio.sleep(0.1)


async def listening(address: str, timeout: float = 60.0) -> None:
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=1.0) as http:
        async with asyncio.timeout(timeout):
            while True:
                with contextlib.suppress(httpx.TransportError):
                    await http.get("/healthz")
                    return
                await asyncio.sleep(0.1)


class Watcher:
    """A live client: on a lost connection it goes to the next address and resumes with the
    seqs it holds. Checks every frame against what it holds."""

    def __init__(self, name: str, addresses: list[str], topics: list[str]) -> None:
        self.name = name
        self.addresses = addresses
        self.topics = topics
        self.states: dict[str, dict[str, Any]] = {}
        self.seqs: dict[str, int] = {}
        self.blanks: list[tuple[str, str, int]] = []  # (address, topic, seq)
        self.regressions: list[tuple[str, str, int, int]] = []  # (address, topic, held, got)
        self.gaps: list[tuple[str, int, int]] = []
        self.reconnects = 0
        self.frames = 0
        self.task: asyncio.Task[None] | None = None
        self.ws: Any = None

    async def hop(self, address: str) -> None:
        """Move to ``address`` (as a load balancer would), resuming there."""
        self.addresses.append(address)
        if self.ws is not None:
            await self.ws.close()

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def _run(self) -> None:
        index = 0
        while True:
            address = self.addresses[index % len(self.addresses)]
            try:
                url = f"ws://{address}/ws?token={session_proof(COMMENTATOR)}"
                async with connect(url, max_size=None, compression=None, open_timeout=3) as ws:
                    self.ws = ws
                    await ws.recv()  # hello
                    request: dict[str, Any] = {"op": "subscribe", "topics": self.topics}
                    if self.seqs:
                        request["resume"] = dict(self.seqs)
                    await ws.send(json.dumps(request))
                    async for raw in ws:
                        self._take(address, json.loads(raw))
            except Exception:  # any loss of the connection: move on, as a real client does
                pass
            self.reconnects += 1
            index += 1
            await asyncio.sleep(0.2)

    def _take(self, address: str, message: dict[str, Any]) -> None:
        kind, topic = message.get("type"), message.get("topic")
        if kind not in ("snapshot", "delta") or not isinstance(topic, str):
            return
        self.frames += 1
        seq, held = message["seq"], self.seqs.get(topic)
        if kind == "snapshot":
            if seq == 0 or not message["data"]:
                self.blanks.append((address, topic, seq))
                return
            if held is not None and seq < held:
                self.regressions.append((address, topic, held, seq))
                return
            self.states[topic] = clone(message["data"])
            self.seqs[topic] = seq
            return
        if held is not None and seq <= held:
            self.regressions.append((address, topic, held, seq))
            return
        if held is None or seq != held + 1:
            self.gaps.append((topic, -1 if held is None else held, seq))
            return
        self.states[topic] = apply_patch(self.states[topic], clone(message["patch"]))
        self.seqs[topic] = seq


class RestPoller:
    """Reads every topic's REST endpoint of some processes in a loop; counts bad answers."""

    PATHS = {"standings": "/api/standings", "table:1": "/api/tables/1"}

    def __init__(self, addresses: list[str]) -> None:
        self.addresses = addresses
        self.bad: list[tuple[str, str, int, str]] = []
        self.answers: dict[int, int] = {}
        self.seqs: dict[tuple[str, str], int] = {}
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def _run(self) -> None:
        headers = {"authorization": f"Bearer {session_proof(COMMENTATOR)}"}
        async with httpx.AsyncClient(timeout=2.0, headers=headers) as http:
            while True:
                for address in self.addresses:
                    for topic, path in self.PATHS.items():
                        try:
                            answer = await http.get(f"http://{address}{path}")
                        except httpx.TransportError:
                            continue  # a dead process: the load balancer's business
                        self._check(address, topic, answer)
                await asyncio.sleep(0.1)

    def _check(self, address: str, topic: str, answer: httpx.Response) -> None:
        status = answer.status_code
        self.answers[status] = self.answers.get(status, 0) + 1
        if status == 503 and answer.headers.get("retry-after"):
            return
        body = answer.json() if status in (200, 404, 503) else {}
        if status != 200 or not body.get("data") or not body.get("seq"):
            self.bad.append((address, topic, status, answer.text[:80]))
            return
        held = self.seqs.get((address, topic), 0)
        if body["seq"] < held:
            self.bad.append((address, topic, status, f"seq {body['seq']} after {held}"))
        self.seqs[(address, topic)] = body["seq"]


def event_config(tmp_path: Path) -> Path:
    tournament = f"fo-{uuid.uuid4().hex[:8]}"
    config = tmp_path / "event.toml"
    config.write_text(SAMPLE.read_text().replace('id = "ifp-demo"', f'id = "{tournament}"', 1))
    return config


async def watched_topics(address: str) -> list[str] | None:
    """The watched topics once each has data (so any blank frame later is the failover's):
    standings, two tables and the first compare topic with data; None before."""
    headers = {"authorization": f"Bearer {session_proof(COMMENTATOR)}"}
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=2.0) as http:
        for path in ["/api/standings", "/api/tables/1", "/api/tables/2"]:
            answer = await http.get(path, headers=headers)
            if answer.status_code != 200 or not answer.json().get("data"):
                return None
        for deal in range(1, 13):
            answer = await http.get(f"/api/compare/{deal}/1", headers=headers)
            if answer.status_code == 200 and answer.json().get("data"):
                return [*TOPICS, f"compare:{deal}:1"]
    return None


async def fresh_states(address: str, topics: list[str]) -> dict[str, Any]:
    """What a new subscriber holds once its catch-up (a snapshot and any deltas) is in."""
    watcher = Watcher("fresh", [address], topics)
    watcher.start()
    try:
        async with asyncio.timeout(10):
            while len(watcher.states) < len(topics):
                await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)  # the deltas after the snapshots
    finally:
        await watcher.stop()
    return watcher.states


async def same_as_fresh(watchers: list[Watcher], addresses: list[str], topics: list[str]) -> bool:
    for address in addresses:
        states = await fresh_states(address, topics)
        for watcher in watchers:
            differ = [t for t in topics if watcher.states.get(t) != states[t]]
            if differ:
                return False
    return True


async def journal_length(redis: str, tournament: str) -> int:
    from hub.bus.redis import RedisBus

    bus = RedisBus(redis)
    await bus.connect()
    try:
        return len(await bus.read(f"dup:{tournament}:journal", "0-0", 100_000))
    finally:
        await bus.close()


def process_env() -> dict[str, str]:
    """The environment of the processes a test starts: the tokens, unbuffered output."""
    return {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "DUPLICAST_COMMENTATOR_TOKEN": COMMENTATOR,
        "DUPLICAST_OPERATOR_TOKEN": OPERATOR,
    }


async def run_failover(tmp_path: Path, separate: bool) -> None:
    config = event_config(tmp_path)
    tournament = config.read_text().split('id = "', 1)[1].split('"', 1)[0]
    env = process_env()
    redis = RedisServer(tmp_path / "redis", extra=("--appendfsync", "always"))
    redis.start()
    procs: list[Process] = []
    watchers: list[Watcher] = []
    poller: RestPoller | None = None
    simulate: Process | None = None

    def start(role: str, name: str, *extra: str) -> str:
        proc, address = serve(role, config, redis.url, tmp_path / f"{name}.log", env, *extra)
        procs.append(proc)
        return address

    try:
        if separate:  # the writer's role is the projector's here; the ingest stays up
            ingest = start("ingest", "ingest", "--feed", "separate")
            victim = Process(
                ["serve", "--role", "projector", "--config", str(config), "--redis", redis.url],
                tmp_path / "projector-a.log",
                env,
            )
            procs.append(victim)
            await ready(ingest)
            standby = Process(
                ["serve", "--role", "projector", "--config", str(config), "--redis", redis.url],
                tmp_path / "projector-b.log",
                env,
            )
            procs.append(standby)
            edge = start("edge", "edge")
            await ready(edge)
            served, first, second = [ingest, edge], ingest, edge
        else:
            active = start("ingest", "ingest-a")
            await ready(active)
            backup = start("ingest", "ingest-b")
            edge = start("edge", "edge")
            await asyncio.gather(ready(edge), listening(backup))
            served, first, second = [active, backup, edge], active, backup
            victim = procs[0]
        play = ["--seed", "7", "--pace", "0.15", "--no-outbox"]
        simulate = Process(
            ["console", "simulate", "--config", str(config), "--redis", redis.url, *play],
            tmp_path / "simulate.log",
            env,
        )
        topics = None
        async with asyncio.timeout(60):
            while (topics := await watched_topics(first)) is None:
                await asyncio.sleep(0.2)
        watchers = [
            Watcher("first", [first, second], topics),
            Watcher("edge", [edge, first], topics),
        ]
        if not separate:  # subscribed to the standby while it waits
            watchers.append(Watcher("standby", [second, edge], topics))
        for watcher in watchers:
            watcher.start()
        poller = RestPoller(served)
        poller.start()
        await asyncio.sleep(3.0)
        before = await journal_length(redis.url, tournament)
        victim.kill()  # SIGKILL: no clean stop, no snapshots saved
        killed = time.monotonic()
        # An edge started while no writer answers (the takeover window): it has only the
        # snapshot hash, older than what clients hold. A client moves there and resumes.
        late = start("edge", "late-edge")
        await listening(late)
        poller.addresses.append(late)
        await watchers[1].hop(late)
        if separate:
            async with asyncio.timeout(30):  # play goes on: the feed moves again
                seqs = dict(watchers[1].seqs)
                while watchers[1].seqs == seqs:
                    await asyncio.sleep(0.1)
        else:
            await ready(second, timeout=30)
        took_over = time.monotonic() - killed
        await asyncio.sleep(3.0)  # play after the takeover
        after = await journal_length(redis.url, tournament)
        assert after > before, "play did not continue after the takeover"
        simulate.stop()
        simulate = None
        await asyncio.sleep(2.0)  # the last frames arrive
        await poller.stop()
        report = {
            w.name: (len(w.blanks), len(w.regressions), len(w.gaps), w.reconnects, w.frames)
            for w in watchers
        }
        print(f"takeover after {took_over:.1f} s; journal {before} -> {after}")
        print(f"watchers (blanks, regressions, gaps, reconnects, frames): {report}")
        print(f"REST answers by status: {poller.answers}; bad: {len(poller.bad)}")
        for watcher in watchers:
            assert watcher.blanks == [], (watcher.name, watcher.blanks[:5])
            assert watcher.regressions == [], (watcher.name, watcher.regressions[:5])
            assert watcher.gaps == [], (watcher.name, watcher.gaps[:5])
        assert poller.bad == [], poller.bad[:5]
        alive = [*served, late] if separate else [second, edge, late]  # (not the dead ingest)
        async with asyncio.timeout(20):  # every client ends where a fresh subscriber starts
            while not await same_as_fresh(watchers, alive, topics):
                await asyncio.sleep(0.5)
        for watcher in watchers:
            await watcher.stop()
    finally:
        if simulate is not None:
            simulate.kill()
        if poller is not None:
            await poller.stop()
        for watcher in watchers:
            await watcher.stop()
        for proc in procs:
            proc.stop()
        redis.stop()


async def test_ingest_failover_never_blanks_nor_goes_back(tmp_path: Path) -> None:
    await run_failover(tmp_path, separate=False)


async def test_projector_failover_never_blanks_nor_goes_back(tmp_path: Path) -> None:
    await run_failover(tmp_path, separate=True)
