"""The client-facing app over real loopback websockets (uvicorn on a free port)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import msgpack
import pytest
import websockets
from websockets.asyncio.client import ClientConnection
from websockets.typing import Origin

from hub.bus.base import Bus
from hub.bus.memory import MemoryBus
from hub.roles.edge import SYNC_INTERVAL, EdgeSource
from hub.serve.auth import Auth, check_topic
from hub.serve.fanout import Fanout
from hub.serve.feed import HISTORY, IngestFeed, TopicKey, encode_feed
from hub.serve.http import RunningServer, create_app, serve
from hub.serve.limits import Limits
from hub.wire.channels import Channels
from hub.wire.codec import pack, unpack
from hub.wire.patch import TopicChange, clone, diff

AUTH = Auth(commentator_token="comm-secret", operator_token="op-secret")


class Payloads:
    """Turns whole payloads into the engine's changes (a JSON Patch against the last one)."""

    def __init__(self) -> None:
        self.last: dict[TopicKey, dict[str, Any]] = {}

    def change(self, key: TopicKey, payload: dict[str, Any]) -> TopicChange:
        old = self.last.get(key)
        self.last[key] = clone(payload)
        return TopicChange(key, None if old is None else diff(old, payload), payload)


class FakeSource:
    """A FeedSource on a feed store alone: what the ingest does, minus the engine."""

    def __init__(self, tournament: str = "t-test") -> None:
        self.tournament = tournament
        self.store = IngestFeed()
        self.fanout = Fanout(self.store)
        self.commands: list[dict[str, Any]] = []
        self.is_ready = True
        self.payloads = Payloads()

    def put(self, key: TopicKey, payload: dict[str, Any]) -> None:
        frame = self.store.publish(self.payloads.change(key, payload))
        if frame is not None:
            self.fanout.publish(key, frame.outs)

    def ready(self) -> bool:
        return self.is_ready

    def check_topic(self, role: str, topic: object) -> str | None:
        return check_topic(role, topic)

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        self.commands.append(command)
        if command.get("slot") == "nope":
            return {"ok": False, "code": "not_allowed", "error": "no such slot"}
        return {"ok": True}

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@pytest.fixture
async def source() -> FakeSource:
    return FakeSource()


@pytest.fixture
async def server(source: FakeSource, tmp_path: Path) -> AsyncIterator[RunningServer]:
    (tmp_path / "index.html").write_text("<h1>overlays</h1>")
    running = await serve(create_app(source, overlays_dir=tmp_path, auth=AUTH))
    yield running
    await running.stop()


async def recv(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    frame = await asyncio.wait_for(ws.recv(), timeout)
    message: dict[str, Any] = unpack(frame) if isinstance(frame, bytes) else json.loads(frame)
    return message


async def send(ws: ClientConnection, message: dict[str, Any]) -> None:
    await ws.send(json.dumps(message))


async def connect(server: RunningServer, query: str = "") -> ClientConnection:
    ws = await websockets.connect(f"{server.ws_url}{query}", compression=None)
    return ws


async def test_hello_snapshot_then_deltas_in_order(
    server: RunningServer, source: FakeSource
) -> None:
    source.put(("public", "standings"), {"tournament": "t-test", "teams": [1, 2], "n": 0})
    source.put(("live", "standings"), {"running": {"secret": True}})
    async with await connect(server) as ws:
        assert await recv(ws) == {"type": "hello", "role": "public", "tournament": "t-test"}
        (client,) = source.fanout.clients
        assert type(client.sink).__name__ == "FeedSocket"  # pre-built frames straight to the socket
        await send(ws, {"op": "subscribe", "topics": ["standings"]})
        snap = await recv(ws)
        assert snap == {
            "type": "snapshot",
            "topic": "standings",
            "seq": 1,
            "data": {"tournament": "t-test", "teams": [1, 2], "n": 0},
        }
        for n in range(1, 30):
            source.put(("public", "standings"), {"tournament": "t-test", "teams": [1, 2], "n": n})
        source.put(("public", "standings"), {"tournament": "t-test", "n": 29})
        for n in range(1, 30):
            assert await recv(ws) == {
                "type": "delta",
                "topic": "standings",
                "seq": n + 1,
                "patch": [{"op": "replace", "path": "/n", "value": n}],
            }
        last = await recv(ws)
        assert (last["seq"], last["patch"]) == (31, [{"op": "remove", "path": "/teams"}])
        # The live audience's updates never reach a public client.
        source.put(("live", "standings"), {"running": {"secret": False}})
        await send(ws, {"op": "ping"})
        assert await recv(ws) == {"type": "pong"}


async def test_missing_topic_gets_empty_snapshot_then_fills(
    server: RunningServer, source: FakeSource
) -> None:
    async with await connect(server, "?token=comm-secret") as ws:
        assert (await recv(ws))["role"] == "commentator"
        await send(ws, {"op": "subscribe", "topics": ["deal:3"]})
        assert await recv(ws) == {"type": "snapshot", "topic": "deal:3", "seq": 0, "data": {}}
        source.put(("public", "deal:3"), {"deal": 3, "released": True})  # other audience
        source.put(("live", "deal:3"), {"deal": 3, "board": ["Ah"]})
        assert await recv(ws) == {
            "type": "snapshot",
            "topic": "deal:3",
            "seq": 1,
            "data": {"deal": 3, "board": ["Ah"]},
        }


async def test_resume_within_history_and_beyond(server: RunningServer, source: FakeSource) -> None:
    key = ("public", "table:1")
    for n in range(10):
        source.put(key, {"table": 1, "n": n})  # seqs 1..10, history of 16
    async with await connect(server) as ws:
        await recv(ws)
        await send(ws, {"op": "subscribe", "topics": ["table:1"], "resume": {"table:1": 7}})
        got = [await recv(ws) for _ in range(3)]
        assert [(m["type"], m["seq"], m["patch"]) for m in got] == [
            ("delta", n + 1, [{"op": "replace", "path": "/n", "value": n}]) for n in (7, 8, 9)
        ]
        await send(ws, {"op": "ping"})
        assert await recv(ws) == {"type": "pong"}  # nothing else was queued before it
    for n in range(10, 300):
        source.put(key, {"table": 1, "n": n})  # seq 300; 11 has left the history
    async with await connect(server) as ws:
        await recv(ws)
        await send(ws, {"op": "subscribe", "topics": ["table:1"], "resume": {"table:1": 10}})
        assert await recv(ws) == {
            "type": "snapshot",
            "topic": "table:1",
            "seq": 300,
            "data": {"table": 1, "n": 299},
        }
        # Up to date already: nothing but later deltas.
        await send(ws, {"op": "subscribe", "topics": ["table:1"], "resume": {"table:1": 300}})
        source.put(key, {"table": 1, "n": 300})
        assert (await recv(ws))["seq"] == 301


async def test_msgpack_format(server: RunningServer, source: FakeSource) -> None:
    source.put(("live", "table:2"), {"table": 2, "pot": 30})
    async with await connect(server, "?format=msgpack&token=op-secret") as ws:
        hello = await asyncio.wait_for(ws.recv(), 5)
        assert isinstance(hello, bytes)
        got = msgpack.unpackb(hello)
        assert isinstance(got.pop("now"), float)  # the hub's clock, for signed commands' ts
        assert got == {
            "type": "hello",
            "role": "operator",
            "tournament": "t-test",
        }
        await ws.send(pack({"op": "subscribe", "topics": ["table:2", "ops"]}))
        snap = await recv(ws)
        assert snap == {
            "type": "snapshot",
            "topic": "table:2",
            "seq": 1,
            "data": {"table": 2, "pot": 30},
        }
        assert await recv(ws) == {"type": "snapshot", "topic": "ops", "seq": 0, "data": {}}
        source.put(("live", "table:2"), {"table": 2, "pot": 60})
        frame = await asyncio.wait_for(ws.recv(), 5)
        assert isinstance(frame, bytes)
        assert unpack(frame) == {
            "type": "delta",
            "topic": "table:2",
            "seq": 2,
            "patch": [{"op": "replace", "path": "/pot", "value": 60}],
        }


async def test_public_denied_ops_and_unknown_topics(
    server: RunningServer, source: FakeSource
) -> None:
    source.put(("live", "ops"), {"consoles": []})
    async with await connect(server) as ws:
        await recv(ws)
        topics = ["ops", "projection", "seat:x", "standings", "seat:01"]
        await send(ws, {"op": "subscribe", "topics": topics})
        assert await recv(ws) == {
            "type": "error",
            "code": "forbidden",
            "message": "topic ops needs the operator role",
            "topic": "ops",
        }
        assert (await recv(ws))["message"] == (
            "topic projection needs a commentator or operator token"
        )
        err = await recv(ws)
        assert (err["type"], err["code"], err["topic"]) == ("error", "unknown_topic", "seat:x")
        assert (await recv(ws))["topic"] == "standings"
        assert (await recv(ws))["code"] == "unknown_topic"
        source.put(("live", "ops"), {"consoles": [1]})
        await send(ws, {"op": "onair", "slot": "compare", "value": {"visible": True}})
        err = await recv(ws)
        assert (err["type"], err["code"]) == ("error", "forbidden")
        assert source.commands == []


async def test_malformed_messages_answered_then_closed(server: RunningServer) -> None:
    async with await connect(server) as ws:
        await recv(ws)
        malformed: list[str | bytes] = [
            "{nope",
            "[1, 2]",
            '{"op": 3}',
            '{"op": "dance"}',
            b"\xc1",
            '{"op": "subscribe", "topics": "standings"}',
            '{"op": "subscribe", "topics": ["standings"], "resume": {"standings": -1}}',
        ]
        for bad in malformed:
            await ws.send(bad)
            msg = await recv(ws)
            assert (msg["type"], msg["code"]) == ("error", "bad_request")
        await send(ws, {"op": "ping"})
        assert await recv(ws) == {"type": "pong"}  # still open
        for _ in range(4):
            await ws.send("nope")
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:
                await recv(ws)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


async def test_bad_token_refused(server: RunningServer) -> None:
    async with await connect(server, "?token=guess") as ws:
        assert (await recv(ws))["code"] == "unauthorized"
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await recv(ws)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


async def test_operator_onair_goes_to_control(server: RunningServer, source: FakeSource) -> None:
    async with await connect(server, "?token=op-secret") as ws:
        await recv(ws)
        value = {"visible": True, "deal": 3, "seat": 5, "tables": [1, 4]}
        await send(ws, {"op": "onair", "slot": "compare", "value": value})
        assert await recv(ws) == {"type": "ok", "op": "onair"}
        await send(ws, {"op": "onair", "slot": "nope", "value": 1})
        err = await recv(ws)
        assert (err["code"], err["message"]) == ("not_allowed", "no such slot")
    assert source.commands[0] == {"op": "onair", "slot": "compare", "value": value}


async def test_cue_and_undo_take_go_to_control_for_operators_only(
    server: RunningServer, source: FakeSource
) -> None:
    cue = {"op": "cue", "action": "add", "slot": "seat", "value": {"seat": 2}, "label": "S2"}
    async with await connect(server, "?token=comm-secret") as ws:
        await recv(ws)
        for command in (cue, {"op": "undo_take"}):
            await send(ws, command)
            err = await recv(ws)
            assert (err["code"], err["op"]) == ("forbidden", command["op"])
    assert source.commands == []
    async with await connect(server, "?token=op-secret") as ws:
        await recv(ws)
        await send(ws, {**cue, "extra": 1})
        assert await recv(ws) == {"type": "ok", "op": "cue"}
        await send(ws, {"op": "undo_take", "cut": True})
        assert await recv(ws) == {"type": "ok", "op": "undo_take"}
        await send(ws, {"op": "cue", "action": "remove", "cue": 1, "slot": "nope"})
        err = await recv(ws)
        assert (err["code"], err["message"], err["op"]) == ("not_allowed", "no such slot", "cue")
    # Only the command's own fields are passed on.
    assert source.commands[:2] == [cue, {"op": "undo_take", "cut": True}]


async def test_rest_endpoints(server: RunningServer, source: FakeSource) -> None:
    source.put(("public", "standings"), {"like_for_like": {"teams": []}})
    source.put(("live", "standings"), {"like_for_like": {"teams": []}, "running": {}})
    source.put(("live", "compare:3:5"), {"deal": 3, "seat": 5})
    source.put(("public", "onair"), {"slots": {}})
    async with httpx.AsyncClient(base_url=server.url) as http:
        r = await http.get("/api/standings")
        assert r.status_code == 200
        assert r.json() == {
            "topic": "standings",
            "seq": 1,
            "data": {"like_for_like": {"teams": []}},
        }
        r = await http.get("/api/standings", headers={"Authorization": "Bearer comm-secret"})
        assert "running" in r.json()["data"]
        r = await http.get("/api/compare/3/5?token=comm-secret")
        assert r.json()["data"] == {"deal": 3, "seat": 5}
        assert (await http.get("/api/compare/3/5")).status_code == 404  # not public yet
        r = await http.get("/api/seats/9")
        assert r.status_code == 404 and r.json()["error"] == "not_found"
        assert (await http.get("/api/tables/x")).status_code == 404
        assert (await http.get("/api/standings?token=wrong")).status_code == 401
        assert (await http.get("/api/onair")).json()["data"] == {"slots": {}}
        source.put(("live", "projection"), {"hands": [], "teams": [], "seats": []})
        r = await http.get("/api/projection")
        assert r.status_code == 403 and "commentator" in r.json()["message"]
        r = await http.get("/api/projection?token=comm-secret")
        assert r.json()["data"] == {"hands": [], "teams": [], "seats": []}
        assert (await http.get("/api/ticker")).status_code == 404  # nothing notable yet
        body = {"slot": "ticker", "value": {"visible": False}}
        assert (await http.post("/api/onair", json=body)).status_code == 403
        r = await http.post("/api/onair", json=body, headers={"Authorization": "Bearer op-secret"})
        assert r.status_code == 200 and r.json() == {"ok": True}
        assert source.commands == [{"op": "onair", **body}]
        r = await http.post("/api/onair?token=op-secret", content=b"{")
        assert r.status_code == 400
        assert (await http.get("/healthz")).json() == {"ok": True}
        assert (await http.get("/readyz")).status_code == 200
        source.is_ready = False
        assert (await http.get("/readyz")).status_code == 503
        r = await http.get("/")
        assert r.status_code in (302, 307) and r.headers["location"] == "/overlays/"
        assert "overlays" in (await http.get("/overlays/")).text


async def test_every_rest_error_has_one_shape(server: RunningServer, source: FakeSource) -> None:
    """Issue #10.10: `POST /api/onair` answered 400 in two body shapes (malformed JSON vs a
    refused command). Every REST error is ``{"error": code, "message": text}``, Starlette's
    own 404/405 included."""
    operator = {"Authorization": "Bearer op-secret"}
    async with httpx.AsyncClient(base_url=server.url) as http:
        answers = [
            await http.post("/api/onair", content=b"{", headers=operator),
            await http.post("/api/onair", json={"slot": "x"}, headers=operator),
            await http.post("/api/onair", json={"slot": "nope", "value": {}}, headers=operator),
            await http.post("/api/onair", json={"slot": "ticker", "value": {}}),
            await http.get("/api/standings?token=wrong"),
            await http.get("/api/seats/99"),
            await http.get("/api/no-such-route"),
            await http.delete("/api/onair", headers=operator),
        ]
    statuses = [r.status_code for r in answers]
    assert statuses == [400, 400, 400, 403, 401, 404, 404, 405]
    for r in answers:
        body = r.json()
        assert set(body) == {"error", "message"}, body
        assert isinstance(body["error"], str) and body["error"]
        assert isinstance(body["message"], str) and body["message"]
    assert answers[2].json() == {"error": "not_allowed", "message": "no such slot"}


async def test_metrics_text(server: RunningServer, source: FakeSource) -> None:
    """The operator's token gets every metric; anyone else the process-level view only."""
    async with await connect(server, "?token=comm-secret") as ws:
        await recv(ws)
        async with httpx.AsyncClient(base_url=server.url) as http:
            operator = {"authorization": "Bearer op-secret"}
            text = (await http.get("/metrics", headers=operator)).text
            public = (await http.get("/metrics")).text
            commentator = {"authorization": "Bearer comm-secret"}
            assert (await http.get("/metrics", headers=commentator)).text == public
            bad = await http.get("/metrics", headers={"authorization": "Bearer nope"})
            assert bad.status_code == 401
    assert "duplicast_clients_connected 1.0" in public and "duplicast_up 1.0" in public
    for private in ("events", "rejects", "role=", "frames", "ingest", "slow"):
        assert private not in public
    for name in [
        'duplicast_clients{role="commentator"} 1.0',
        "duplicast_frames_sent_total",
        "duplicast_frames_dropped_total",
        "duplicast_slow_client_closes_total",
        "duplicast_ingest_lag_seconds",
        "duplicast_events_total",
        "duplicast_rejects_total",
    ]:
        assert name in text


# -- edges ------------------------------------------------------------------------------------


class Ingest:
    """What the ingest does on the bus for one topic store: persists each snapshot, publishes
    the frame, and answers the edges' requests on the control channel."""

    def __init__(self, bus: Bus, tournament: str, *, save_on_put: bool = True) -> None:
        self.bus, self.names, self.store = bus, Channels(tournament), IngestFeed()
        self.save_on_put = save_on_put  # else, as the real ingest: when an edge asks
        self.payloads = Payloads()
        self.commands: list[dict[str, Any]] = []
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        control = self.bus.subscribe(self.names.control)
        await control.ready()
        self._task = asyncio.create_task(self._answer(control))

    async def _answer(self, control: Any) -> None:
        try:
            async for message in control:
                command = unpack(message.data)
                if command.get("op") != "snapshots":
                    self.commands.append(command)
                elif not self.save_on_put:
                    keys = [tuple(k.split("|", 1)) for k in command.get("keys", ())]
                    await self.bus.hset_many(self.names.topics, self.store.snapshots(keys))
                answer = {"ok": True, "id": command["id"]}
                await self.bus.publish(self.names.reply(command["reply"]), pack(answer))
        finally:
            await control.aclose()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def put(self, key: TopicKey, payload: dict[str, Any], *, publish: bool = True) -> None:
        frame = self.store.publish(self.payloads.change(key, payload))
        assert frame is not None
        if self.save_on_put or frame.seq == 1:
            await self.bus.hset_many(self.names.topics, self.store.snapshots([key]))
        if publish:
            await self.bus.publish(self.names.feed, encode_feed(key, frame))


async def collect(ws: ClientConnection, count: int) -> list[dict[str, Any]]:
    return [await recv(ws) for _ in range(count)]


async def edges_deliver_identical_feeds(bus: Bus, tournament: str) -> None:
    ingest = Ingest(bus, tournament)
    await ingest.start()
    await ingest.put(("public", "standings"), {"n": 0, "teams": []})
    edges = [EdgeSource(bus, tournament) for _ in range(2)]
    servers = [await serve(create_app(edge, auth=AUTH)) for edge in edges]
    try:
        clients = [await connect(s) for s in servers]
        for ws in clients:
            await recv(ws)
            await send(ws, {"op": "subscribe", "topics": ["standings", "ticker"]})
        firsts = [await collect(ws, 2) for ws in clients]
        assert firsts[0] == firsts[1]
        assert firsts[0][0] == {
            "type": "snapshot",
            "topic": "standings",
            "seq": 1,
            "data": {"n": 0, "teams": []},
        }
        for n in range(1, 21):
            await ingest.put(("public", "standings"), {"n": n, "teams": []})
        await ingest.put(("public", "ticker"), {"items": [1]})
        # A lost feed message: the edges notice the gap and reload from the hash.
        await ingest.put(("public", "ticker"), {"items": [1, 2]}, publish=False)
        await ingest.put(("public", "ticker"), {"items": [1, 2, 3]})
        feeds = [await collect(ws, 22) for ws in clients]
        assert feeds[0] == feeds[1]
        assert [m["seq"] for m in feeds[0][:20]] == list(range(2, 22))
        assert feeds[0][20:] == [
            {"type": "snapshot", "topic": "ticker", "seq": 1, "data": {"items": [1]}},
            # healed from the hash, which already includes the update that revealed the gap
            {"type": "snapshot", "topic": "ticker", "seq": 3, "data": {"items": [1, 2, 3]}},
        ]
        assert all(edge.gaps == 1 for edge in edges)
        # Operator commands on an edge go to the ingest, whose answer comes back.
        op = await connect(servers[1], "?token=op-secret")
        await recv(op)
        await send(op, {"op": "onair", "slot": "leaderboard", "value": {"visible": True}})
        assert await recv(op) == {"type": "ok", "op": "onair"}
        (command,) = ingest.commands
        assert {k: command[k] for k in ("op", "slot", "value")} == {
            "op": "onair",
            "slot": "leaderboard",
            "value": {"visible": True},
        }
        for ws in [*clients, op]:
            await ws.close()
    finally:
        for s in servers:
            await s.stop()
        await ingest.stop()


class HashReads(MemoryBus):
    """A memory bus that counts the snapshot hash's reads: whole, and by fields."""

    def __init__(self) -> None:
        super().__init__()
        self.whole = 0
        self.fields: list[list[str]] = []

    async def hgetall(self, key: str) -> dict[str, bytes]:
        self.whole += 1
        return await super().hgetall(key)

    async def hmget(self, key: str, fields: Any) -> dict[str, bytes]:
        self.fields.append(list(fields))
        return await super().hmget(key, self.fields[-1])


async def test_an_edge_refreshes_a_busy_topic_now_and_then_reading_its_field_only() -> None:
    """A topic with a delta a second (a live table) keeps the snapshot new clients start
    from near the head: a refresh every ``HISTORY // 4`` frames at most, each reading that
    topic's field, not the whole hash. (The hash answers at the seq the edge already has:
    that snapshot must become the edge's base, or it asks again at every frame.)"""
    bus = HashReads()
    ingest = Ingest(bus, "t-busy", save_on_put=False)
    await ingest.start()
    key = ("live", "table:1")
    await ingest.put(key, {"n": 0})
    edge = EdgeSource(bus, "t-busy")
    await edge.start()
    try:
        assert bus.whole == 1  # the start reads every topic, once
        frames = 1000
        for n in range(1, frames + 1):
            await ingest.put(key, {"n": n})
            await asyncio.sleep(0)  # (a refresh's two round trips run meanwhile)
        async with asyncio.timeout(5):
            while edge.store.seq(key) < frames + 1 or edge._refreshing:
                await asyncio.sleep(0.01)
        assert bus.whole == 1
        assert bus.fields and all(f == ["live|table:1"] for f in bus.fields)
        assert len(bus.fields) <= frames // (HISTORY // 4) + 1, len(bus.fields)
        assert edge.store.behind(key) <= HISTORY // 2 + HISTORY // 4
        assert edge.store.snapshot(key) == (frames + 1, {"n": frames})
    finally:
        await edge.stop()
        await ingest.stop()


async def test_two_edges_on_memory_bus() -> None:
    await edges_deliver_identical_feeds(MemoryBus(), "t-mem")


@pytest.mark.redis
async def test_two_edges_on_redis(redis_url: str) -> None:
    from hub.bus.redis import RedisBus

    bus = RedisBus(redis_url)
    await bus.connect()
    tournament = f"test-{uuid.uuid4().hex[:8]}"
    try:
        await edges_deliver_identical_feeds(bus, tournament)
    finally:
        await bus.delete(Channels(tournament).topics)
        await bus.close()


# -- origins, limits, topics of the tournament (issue #9.2, #9.8) -----------------------------


@contextlib.asynccontextmanager
async def app_server(source: Any, **options: Any) -> AsyncIterator[RunningServer]:
    running = await serve(create_app(source, auth=AUTH, **options))
    try:
        yield running
    finally:
        await running.stop()


async def test_foreign_origin_refused_same_host_and_no_origin_allowed(
    source: FakeSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DUPLICAST_ALLOWED_ORIGINS", raising=False)
    async with app_server(source) as server:
        url = f"{server.ws_url}?token=op-secret"
        with pytest.raises(websockets.InvalidStatus) as refused:
            await websockets.connect(url, origin=Origin("https://evil.example"))
        assert refused.value.response.status_code == 403
        assert json.loads(refused.value.response.body or b"")["error"] == "forbidden_origin"
        own = f"http://{server.host}:{server.port}"
        for origin in (Origin(own), None):
            async with websockets.connect(url, origin=origin) as ws:
                assert (await recv(ws))["role"] == "operator"


async def test_allowed_origins_from_the_environment(
    source: FakeSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DUPLICAST_ALLOWED_ORIGINS", "https://overlays.example, https://b.example")
    async with app_server(source) as server:
        async with websockets.connect(server.ws_url, origin=Origin("https://b.example")) as ws:
            assert (await recv(ws))["type"] == "hello"
        own = f"http://{server.host}:{server.port}"
        for origin in (own, "https://evil.example"):  # an explicit list replaces same-host
            with pytest.raises(websockets.InvalidStatus):
                await websockets.connect(server.ws_url, origin=Origin(origin))
    monkeypatch.setenv("DUPLICAST_ALLOWED_ORIGINS", "*")
    async with (
        app_server(source) as server,
        websockets.connect(server.ws_url, origin=Origin("https://any.example")) as ws,
    ):
        assert (await recv(ws))["type"] == "hello"


async def test_connections_per_address_limited_with_a_coded_error() -> None:
    source = FakeSource()
    source.fanout = Fanout(source.store, Limits(max_per_address=2))
    async with app_server(source) as server:
        first = [await connect(server) for _ in range(2)]
        for ws in first:
            await recv(ws)
        async with await connect(server) as third:
            err = await recv(third)
            assert (err["type"], err["code"]) == ("error", "too_many_connections")
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await recv(third)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        await first[0].close()
        await wait_until(lambda: source.fanout.addresses() == 1 and len(source.fanout.clients) == 1)
        async with await connect(server) as again:
            assert (await recv(again))["type"] == "hello"
        await first[1].close()


async def wait_until(predicate: Any, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


async def test_topics_per_connection_limited_and_freed_on_close() -> None:
    source = FakeSource()
    source.fanout = Fanout(source.store, Limits(max_topics=64))
    async with app_server(source) as server:
        sockets = [await connect(server) for _ in range(20)]
        for n, ws in enumerate(sockets):
            await recv(ws)
            topics = [f"deal:{n * 1000 + k}" for k in range(65)]
            await send(ws, {"op": "subscribe", "topics": topics})
            got = [await recv(ws) for _ in range(65)]
            assert [m["type"] for m in got[:64]] == ["snapshot"] * 64
            assert (got[64]["code"], got[64]["topic"]) == ("too_many_topics", topics[64])
        assert source.fanout.topics() == 20 * 64
        for ws in sockets:
            await ws.close()
        await wait_until(lambda: not source.fanout.clients)
        assert source.fanout.topics() == 0 and source.fanout.addresses() == 0


async def test_the_source_decides_which_topics_exist() -> None:
    class Tournament(FakeSource):
        def check_topic(self, role: str, topic: str) -> str | None:
            if topic.startswith("table:") and int(topic[6:]) > 6:
                return "unknown_topic"
            return check_topic(role, topic)

    source = Tournament()
    async with app_server(source) as server, await connect(server) as ws:
        await recv(ws)
        await send(ws, {"op": "subscribe", "topics": ["table:7", "table:6", "ops"]})
        assert [(m["type"], m.get("code")) for m in [await recv(ws) for _ in range(3)]] == [
            ("error", "unknown_topic"),
            ("snapshot", None),
            ("error", "forbidden"),
        ]
        async with httpx.AsyncClient(base_url=server.url) as http:
            assert (await http.get("/api/tables/7")).status_code == 404


def test_one_topic_check_for_a_tournament_and_for_any_name() -> None:
    """``TopicSpace.check`` (a running tournament) and ``hub.serve.auth.check_topic`` (a name of any
    tournament) are one check (``hub.wire.topics.refusal``): they agree on every topic of a
    tournament, for every role, and on names that are no topic at all."""
    from hub.engine.families import FAMILIES
    from hub.wire.topics import ROLES, TopicSpace, parse_topic

    space = TopicSpace(FAMILIES, tables=(1, 2), seats=3, deals=4)
    garbage = [
        "",
        "nope",
        "standings:1",
        "seat",
        "seat:01",
        "seat:1:1",
        "compare:1:x",
        "x" * 41,
        7,
        None,
    ]
    for role in ROLES:
        for topic in space:
            assert parse_topic(topic.name, FAMILIES) == topic
            assert check_topic(role, topic.name) == space.check(role, topic.name)
        for name in garbage:
            assert check_topic(role, name) == space.check(role, name) == "unknown_topic"
    assert space.check("public", "compare:9:1") == "unknown_topic"  # not in this tournament
    assert check_topic("public", "compare:9:1") is None  # a topic of some tournament


async def test_a_source_that_is_not_live_sends_nothing_then_fresh_snapshots(
    server: RunningServer, source: FakeSource
) -> None:
    """A standby ingest (DESIGN §7): a subscriber gets nothing, not the empty snapshot; REST
    answers 503 with Retry-After; when it turns live, every subscriber gets a fresh snapshot
    (``Fanout.refresh``) and the deltas after it."""
    source.store.live = False
    ws = await connect(server)
    try:
        assert (await recv(ws))["type"] == "hello"
        await send(ws, {"op": "subscribe", "topics": ["standings"]})
        await send(ws, {"op": "ping"})
        assert await recv(ws) == {"type": "pong"}  # nothing for the topic came before
        async with httpx.AsyncClient(base_url=server.url) as http:
            answer = await http.get("/api/standings")
            assert answer.status_code == 503 and answer.headers["retry-after"] == "2"
            assert answer.json()["error"] == "unavailable"
        source.store.publish(source.payloads.change(("public", "standings"), {"n": 7}))
        source.store.live = True
        source.fanout.refresh()
        assert await recv(ws) == {
            "type": "snapshot",
            "topic": "standings",
            "seq": 1,
            "data": {"n": 7},
        }
        source.put(("public", "standings"), {"n": 8})
        assert (await recv(ws))["seq"] == 2
    finally:
        await ws.close()


async def test_an_edge_that_starts_before_its_writer_answers_every_subscriber_once_live() -> None:
    """An edge started while no writer answers serves what the hash holds and says nothing of
    the rest (no empty snapshot it may not be). A subscriber to a topic that has no data yet
    (a deal's public travellers before its release, the public site's ``deal:N``) gets
    nothing then; once a writer answers and the edge turns live, it gets the empty snapshot
    at seq 0, and the subscriber to a topic with data its snapshot. (It got nothing at all,
    ever: the edge turned live without telling its subscribers; a phone waited on the site's
    deal page until it reconnected.)"""
    bus = MemoryBus()
    tournament = "t-late-writer"
    ingest = Ingest(bus, tournament)
    await ingest.put(("public", "standings"), {"n": 1})  # in the hash: no writer answers yet
    edge = EdgeSource(bus, tournament, answer_timeout=0.2)
    server = await serve(create_app(edge, auth=AUTH))
    try:
        assert not edge.store.live
        ws = await connect(server)
        await recv(ws)
        await send(ws, {"op": "subscribe", "topics": ["deal:3", "standings"]})
        first = await recv(ws)  # the hash's standings: the last good state
        assert (first["topic"], first["seq"]) == ("standings", 1)
        await send(ws, {"op": "ping"})
        assert await recv(ws) == {"type": "pong"}  # nothing of deal:3
        await ingest.start()  # a writer answers: the edge's next sync turns it live
        async with asyncio.timeout(SYNC_INTERVAL * 5):
            got = {m["topic"]: m for m in await collect(ws, 2)}
        assert edge.store.live
        assert got["deal:3"] == {"type": "snapshot", "topic": "deal:3", "seq": 0, "data": {}}
        assert got["standings"]["data"] == {"n": 1}
        await ws.close()
    finally:
        await server.stop()
        await ingest.stop()
