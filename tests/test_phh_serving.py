"""The PHH export of a staged event (issue #20.8) and how ``/api/export/phh`` is served."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import statistics
import sys
import time
import uuid
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import httpx
import pytest
from pokerkit import HandHistory

from hub.bus.redis import RedisBus
from hub.cli.replay import read_events, replay
from hub.client.console import ConsoleClient
from hub.client.logreplay import replay_log
from hub.engine.core import Engine
from hub.engine.phh_export import collect
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.serve import http as http_module
from hub.serve.fanout import Fanout
from hub.serve.feed import IngestFeed
from hub.serve.http import create_app
from hub.serve.phh_service import BURST, EVERY, PhhExport, RateLimit
from hub.wire.channels import Channels
from tests.hubharness import COMMENTATOR, OPERATOR, ROOT, auth, duplicast, ingest_hub

EVENT = ROOT / "samples" / "ifp-event.toml"
EVENT_SESSION = ROOT / "samples" / "ifp-event-session.jsonl"


def staged_engine() -> Engine:
    """The sample event played to its end: a group stage, then the final its results filled."""
    config = load_config(EVENT)
    engine = Engine(config, load_decks(config, EVENT.parent, dict(os.environ)))
    assert replay(config, read_events(EVENT_SESSION), engine, "session") == []
    return engine


class EngineSource:
    """Enough of a FeedSource to serve the export: the ingest's engine and nothing else."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.tournament = engine.state.config.id
        self.store = IngestFeed()
        self.fanout = Fanout(self.store)

    def ready(self) -> bool:
        return True

    def check_topic(self, role: str, topic: object) -> str | None:
        return None

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        return {"ok": False}

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


def client(source: EngineSource) -> httpx.AsyncClient:
    app = create_app(source, auth=auth(), manage_source=False)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://hub")


def bearer(token: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"} if token else {}


async def test_the_export_of_an_event_whose_final_has_started_serves_every_role() -> None:
    engine = staged_engine()
    final_tables = set(engine.state.config.groups["F"].tables)
    async with client(EngineSource(engine)) as http:
        for token in (OPERATOR, COMMENTATOR, None):
            response = await http.get("/api/export/phh", headers=bearer(token))
            assert response.status_code == 200, (token, response.text[:300])
            hands = list(HandHistory.loads_all(response.text))
            assert hands and final_tables & {h.table for h in hands}
    # A final's hand names the players its fill seated, not a draw the file never made.
    hand = next(h for h in collect(engine.state) if h.table in final_tables)
    seated = [engine.state.seat_holder(hand.table, s, hand.deal) for s in range(1, 7)]
    assert list(hand.players) == [holder[1] for holder in seated if holder is not None]


def test_export_phh_command_of_a_staged_event(tmp_path: Path) -> None:
    out = tmp_path / "hands"
    done = duplicast(
        "export", "--phh", str(EVENT_SESSION), "--config", str(EVENT), "--out", str(out)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(list(out.glob("*.phh"))) > 100


# ------------------------------------------------------------------ served off the writer


def half_played() -> tuple[Engine, list[dict[str, Any]]]:
    """The sample event half played (some hands finished), and the events still to come."""
    config = load_config(EVENT)
    engine = Engine(config, load_decks(config, EVENT.parent, dict(os.environ)))
    events = read_events(EVENT_SESSION)
    half = len(events) // 2
    assert replay(config, events[:half], engine, "session") == []
    return engine, events[half:]


async def test_the_bundle_is_cached_until_the_tournament_moves() -> None:
    engine, rest = half_played()
    clock = [100.0]
    export = PhhExport(engine, executor=ThreadPoolExecutor(1), clock=lambda: clock[0])
    try:
        first = await export.bundle(operator=True)
        finished = len(collect(engine.state))
        assert first.hands == finished > 0 and export.builds == 1
        assert export.rendered == finished
        for _ in range(5):  # nothing moved: served from the cache
            clock[0] += 10
            assert await export.bundle(operator=True) is first
        assert export.builds == 1 and export.rendered == finished
        # Hands finish: the next request builds again, writing only the new hands.
        while len(collect(engine.state)) == finished:
            event = rest.pop(0)
            event.pop("_line", None)
            assert engine.submit(event, 0.0).ok
        second = await export.bundle(operator=True)
        assert second.hands == len(collect(engine.state)) and export.builds == 2
        assert export.rendered == second.hands  # each hand written once
        # Within min_interval of a build, the last bundle is served even if the state moved.
        event = rest.pop(0)
        event.pop("_line", None)
        assert engine.submit(event, 0.0).ok
        assert await export.bundle(operator=True) is second and export.builds == 2
        # The public's bundle is its own (released deals only), from the same written hands.
        public = await export.bundle(operator=False)
        assert public.hands == len(collect(engine.state, engine.release.released)) <= second.hands
        assert export.rendered == second.hands
    finally:
        export.close()


async def test_a_client_looping_on_the_export_is_answered_429(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The bucket's clock stands still: on a loaded machine five requests can take longer than
    # the EVERY seconds that earn one back, which is the limiter working, not a fault.
    monkeypatch.setattr(http_module, "RateLimit", lambda: RateLimit(clock=lambda: 1000.0))
    engine, _ = half_played()
    async with client(EngineSource(engine)) as http:
        answers = [await http.get("/api/export/phh") for _ in range(BURST + 2)]
    codes = [a.status_code for a in answers]
    assert codes[:BURST] == [200] * BURST and codes[BURST:] == [429, 429], codes
    retry = int(answers[-1].headers["retry-after"])
    assert 1 <= retry <= EVERY
    assert answers[-1].json()["error"] == "rate_limited"


def test_rate_limit_refills() -> None:
    now = [0.0]
    limit = RateLimit(every=5.0, burst=2, clock=lambda: now[0])
    assert limit.retry_after("a") == 0 and limit.retry_after("a") == 0
    assert limit.retry_after("a") == pytest.approx(5.0)
    assert limit.retry_after("b") == 0  # per client
    now[0] = 5.0
    assert limit.retry_after("a") == 0 and limit.retry_after("a") > 0


@pytest.mark.redis
async def test_acks_stay_fast_while_clients_loop_on_the_export(redis_url: str) -> None:
    """Six clients asking for the PHH export as fast as they are answered (the rate limit
    lifted, so every request reaches the export) barely move a console's ack latency."""
    config = load_config(EVENT)
    decks = load_decks(config, EVENT.parent, dict(os.environ))
    config = dataclasses.replace(config, id=f"phhload-{uuid.uuid4().hex[:8]}")
    events = [{**e, "tournament": config.id} for e in read_events(EVENT_SESSION)]
    for event in events:
        event.pop("_line", None)
    half = len(events) // 2
    counts = Counter(e["console"] for e in events[half:])
    console = max(counts, key=lambda c: counts[c])  # the table with the most left to play
    mine = [e for e in events[half:] if e["console"] == console]
    bus = RedisBus(redis_url)
    await bus.connect()
    try:
        async with ingest_hub(bus, config, decks) as (source, server):
            report = await replay_log(bus, config.id, events[:half], on_reject=print)
            assert report.rejected == 0
            endpoints = server.server.config.app.state.endpoints
            endpoints.phh_limit.burst = 10**9
            first = source.engine.admission.sequencer.expected(console)
            table = mine[0]["table"]
            async with ConsoleClient(bus, config.id, table, console, first_seq=first) as pad:
                quiet = await ack_delays(pad, mine[:20])
                # The six clients in a process of their own, as browsers elsewhere would be:
                # in this process they would share the hub's event loop, and the acks would
                # wait on the clients' own reading of the bundles, not on the hub.
                served, loops = await export_loops(server.url, 6)
                try:
                    await asyncio.sleep(1.0)  # the first (cold) build is under way
                    # Acks timed while the exports loop: at least 40, and on until 20 exports
                    # were served (a slow machine serves fewer a second; the load must be real).
                    loaded, at = [], 20
                    while (len(loaded) < 40 or served[0] < 20) and at < len(mine):
                        loaded += await ack_delays(pad, mine[at : at + 10])
                        at += 10
                finally:
                    assert await loops() == 0, "an export client failed (see its stderr)"
    finally:
        await bus.delete(*Channels(config.id).data_keys, Channels(config.id).lease)
        await bus.close()
    p50_quiet, p50_loaded = statistics.median(quiet), statistics.median(loaded)
    print(f"ack p50 quiet {p50_quiet * 1000:.1f} ms, loaded {p50_loaded * 1000:.1f} ms, "
          f"{served[0]} exports served")  # fmt: skip
    assert served[0] >= 20
    assert p50_loaded < max(4 * p50_quiet, p50_quiet + 0.015), (p50_quiet, p50_loaded)


async def ack_delays(pad: ConsoleClient, events: list[dict[str, Any]]) -> list[float]:
    """Each event sent alone and its ack awaited: the seconds each took."""
    delays = []
    for event in events:
        fields = {k: v for k, v in event.items() if k not in ("seq", "console", "table")}
        started = time.perf_counter()
        ack = await pad.send(fields)
        delays.append(time.perf_counter() - started)
        assert ack.ok, ack
        await asyncio.sleep(0.02)  # a dealer's pace, not a flood
    return delays


EXPORT_LOOPS = """
import sys, threading, urllib.request
url, n = sys.argv[1] + "/api/export/phh", int(sys.argv[2])
stop, lock, served, failed = threading.Event(), threading.Lock(), [0], []
def loop():  # a client asking for the export again as soon as it has it
    try:
        while not stop.is_set():
            with urllib.request.urlopen(url, timeout=30) as response:
                assert response.status == 200, response.status
                response.read()
            with lock:
                served[0] += 1
                print(served[0], flush=True)
    except BaseException as exc:  # an error status raises: the run fails, said on stderr
        failed.append(exc)
        print(f"export client: {exc!r}", file=sys.stderr, flush=True)
threads = [threading.Thread(target=loop) for _ in range(n)]
for t in threads:
    t.start()
sys.stdin.read()  # until the test closes our stdin
stop.set()
for t in threads:
    t.join()
sys.exit(1 if failed else 0)
"""


async def export_loops(url: str, clients: int) -> tuple[list[int], Any]:
    """``clients`` threads of a child process asking for the PHH export as fast as they are
    answered; the count served so far (kept current), and a coroutine function that stops
    them and returns the child's exit status."""
    command = [sys.executable, "-c", EXPORT_LOOPS, url, str(clients)]
    child = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert child.stdin is not None and child.stdout is not None
    served = [0]

    async def count() -> None:
        assert child.stdout is not None
        async for line in child.stdout:
            served[0] = int(line)

    counting = asyncio.create_task(count())

    async def stop() -> int:
        assert child.stdin is not None
        child.stdin.close()
        try:
            async with asyncio.timeout(60):
                code = await child.wait()
        except TimeoutError:
            child.kill()
            code = await child.wait()
        await counting
        return code

    return served, stop


async def test_a_dead_worker_is_replaced() -> None:
    """The worker process killed (out of memory, an operator's kill): that build fails, the
    next one starts a new worker."""
    engine, rest = half_played()
    export = PhhExport(engine, min_interval=0.0)
    try:
        assert (await export.bundle(operator=True)).hands > 0
        pool = export._executor
        assert isinstance(pool, ProcessPoolExecutor)
        for pid in list(pool._processes):  # the worker this test's export started
            os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.5)
        finished = len(collect(engine.state))
        while len(collect(engine.state)) == finished:  # a new hand: something to write
            event = rest.pop(0)
            event.pop("_line", None)
            assert engine.submit(event, 0.0).ok
        with pytest.raises(BrokenProcessPool):
            await export.bundle(operator=True)
        again = await export.bundle(operator=True)
        assert again.hands == len(collect(engine.state))
    finally:
        export.close()
