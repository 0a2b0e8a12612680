"""Fuzzing (issue #9): bad input of any shape gets a coded answer, never a crash, nothing written.

- At the ingest: random values, random bytes and mutations of valid console events, on any
  table's channel. Every input is answered on an ack or error channel, a refusal carries a
  ``code``, and a refused input changes neither the journal nor any topic's state.
- At a running server's ``/ws``: random JSON, msgpack and garbage frames. No crash; every
  message is answered (an error, a pong, a snapshot, ...) or the connection is closed with a
  code; the server still serves a fresh client afterwards.

Bounded: a fixed number of examples, no deadline per example (CI machines are slow), one event
loop and one hub per test.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from hub.bus.memory import MemoryBus
from hub.engine.core import Engine
from hub.roles.embedded import OVERLAYS, IngestSource
from hub.roles.ingest import Ingest
from hub.serve.http import create_app, serve
from hub.wire import codec
from tests.factories import without_seqs
from tests.hubharness import auth, session_events, unique_tournament

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,  # the same examples on every run: CI stays reproducible
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.binary(max_size=12)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = ("v", "tournament", "table", "console", "seq", "type", "ts", "deal", "seat", "amount",
          "seats", "note")  # fmt: skip
TABLE_TAILS = ("1", "2", "0", "99", "x", "")


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    instance = asyncio.new_event_loop()
    yield instance
    instance.close()


class IngestRig:
    """One ingest on the memory bus with a hand in progress at table 1; listens to every
    answer channel."""

    def __init__(self) -> None:
        self.config, decks = unique_tournament("fuzz")
        self.bus = MemoryBus()
        self.ingest = Ingest(self.bus, Engine(self.config, decks))
        prefix = f"dup:{self.config.id}"
        self.answers = self.bus.subscribe(f"{prefix}:ack:*")
        self.errors = self.bus.subscribe(f"{prefix}:errors:*")
        events = [e for e in session_events(self.config.id) if e["table"] == 1]
        self.valid = events[:8]
        self.next_events = events[8:16]

    async def start(self) -> None:
        await self.ingest.start()
        for event in self.valid:
            await self.ingest.handle(f"dup:{self.config.id}:console:1", codec.pack(event))
        self.drain()

    def drain(self) -> list[Any]:
        out = []
        for sub in (self.answers, self.errors):
            while sub._buffer:  # the memory bus delivers synchronously into the buffer
                out.append(codec.unpack(sub._buffer.popleft().data))
        return out

    async def journal(self) -> list[str]:
        """The kinds of the journal's records, in order."""
        entries = await self.bus.read(self.ingest.names.journal, "0-0", 100_000)
        return [codec.unpack(data)["kind"] for _, data in entries]

    def state(self) -> bytes:
        """Every topic but the operator's ``ops`` view, which by design logs refusals (and
        stamps its own time), and the seqs of the console states (a refusal uses one up)."""
        engine = self.ingest.engine
        payloads = without_seqs({k: engine.payload(k) for k in engine.topic_keys()})
        return codec.pack([[list(k), payloads[k]] for k in sorted(payloads)])

    async def check(self, tail: str, data: bytes) -> None:
        before_journal, before_state = await self.journal(), self.state()
        self.drain()
        await self.ingest.handle(f"dup:{self.config.id}:console:{tail}", data)
        answers = self.drain()
        assert answers, f"no answer to {data!r} on table channel {tail!r}"
        for answer in answers:
            assert isinstance(answer, dict) and isinstance(answer.get("ok"), bool), answer
            if not answer["ok"]:
                assert isinstance(answer.get("code"), str) and answer["code"], answer
        if not any(a["ok"] for a in answers):  # refused: no event written, nothing changed
            after = await self.journal()  # (a refusal using up a seq: a `refused` record)
            assert after[: len(before_journal)] == before_journal
            assert set(after[len(before_journal) :]) <= {"refused"}
            assert self.state() == before_state


@pytest.fixture(scope="module")
def rig(loop: asyncio.AbstractEventLoop) -> Iterator[IngestRig]:
    instance = IngestRig()
    loop.run_until_complete(instance.start())
    yield instance
    loop.run_until_complete(instance.ingest.stop())


def packed(value: Any) -> bytes:
    try:
        return codec.pack(value)
    except codec.CodecError:
        return b"\xc1"  # not encodable: send the one byte msgpack never uses instead


@FUZZ
@given(tail=st.sampled_from(TABLE_TAILS), value=values)
def test_random_values_at_the_ingest(
    loop: asyncio.AbstractEventLoop, rig: IngestRig, tail: str, value: Any
) -> None:
    loop.run_until_complete(rig.check(tail, packed(value)))


@FUZZ
@given(tail=st.sampled_from(TABLE_TAILS), data=st.binary(max_size=64))
def test_random_bytes_at_the_ingest(
    loop: asyncio.AbstractEventLoop, rig: IngestRig, tail: str, data: bytes
) -> None:
    loop.run_until_complete(rig.check(tail, data))


@FUZZ
@given(
    index=st.integers(min_value=0, max_value=15),
    tail=st.sampled_from(("1", "1", "1", "2", "x")),
    overrides=st.dictionaries(st.sampled_from(FIELDS), values, max_size=3),
    removed=st.sets(st.sampled_from(FIELDS), max_size=3),
)
def test_mutated_console_events_at_the_ingest(
    loop: asyncio.AbstractEventLoop,
    rig: IngestRig,
    index: int,
    tail: str,
    overrides: dict[str, Any],
    removed: set[str],
) -> None:
    base = (rig.valid + rig.next_events)[index]
    event = {k: v for k, v in base.items() if k not in removed} | overrides
    loop.run_until_complete(rig.check(tail, packed(event)))


# --- the websocket ---------------------------------------------------------------------------


class ServerRig:
    def __init__(self) -> None:
        self.config, decks = unique_tournament("fuzzws")
        self.bus = MemoryBus()
        self.source = IngestSource(self.bus, Engine(self.config, decks), own_bus=False)
        self.ws: ClientConnection | None = None
        self.closed_with: list[int] = []
        self.sentinels = 0
        self.history: list[tuple[str | bytes, list[Any]]] = []  # (frame, replies), for failures

    async def start(self) -> None:
        await self.source.start()
        app = create_app(self.source, overlays_dir=OVERLAYS, auth=auth())
        self.server = await serve(app, "127.0.0.1", 0)

    async def stop(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        await self.server.stop()
        await self.source.stop()

    async def client(self) -> ClientConnection:
        if self.ws is None:
            self.ws = await connect(self.server.ws_url, compression=None, max_size=2**22)
            hello = json.loads(await self.ws.recv())
            assert hello["type"] == "hello"
        return self.ws

    async def check(self, frame: str | bytes) -> None:
        """Send ``frame``, then a sentinel (a subscription to a topic that cannot exist, named
        uniquely, answered by an ``unknown_topic`` error naming it): whatever arrives before
        the sentinel's answer answers the frame."""
        ws = await self.client()
        replies: list[Any] = []
        self.sentinels += 1
        sentinel = f"sentinel-{self.sentinels}"
        try:
            await ws.send(frame)
            await ws.send(json.dumps({"op": "subscribe", "topics": [sentinel]}))
            async with asyncio.timeout(5):
                while True:
                    reply = json.loads(await ws.recv())
                    if reply.get("topic") == sentinel and reply.get("code") == "unknown_topic":
                        break
                    replies.append(reply)
        except ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd is not None else None
            assert code is not None and code != 1011, (
                f"closed without a code or on a crash: {closed}"
            )
            self.closed_with.append(code)
            self.ws = None
            return
        self.history = [*self.history[-4:], (frame, replies)]
        if not replies:  # only a well-formed (un)subscribe of nothing new may go unanswered
            request = _decoded(frame)
            assert isinstance(request, dict) and request.get("op") in (
                "subscribe",
                "unsubscribe",
            ), f"no answer to {frame!r}; the last frames and their answers: {self.history}"
        for reply in replies:
            assert isinstance(reply, dict) and isinstance(reply.get("type"), str), reply
            if reply["type"] == "error":
                assert isinstance(reply.get("code"), str)

    async def still_serves(self) -> None:
        async with connect(self.server.ws_url, compression=None) as ws:
            assert json.loads(await ws.recv())["type"] == "hello"
            await ws.send(json.dumps({"op": "subscribe", "topics": ["standings"]}))
            async with asyncio.timeout(5):
                snapshot = json.loads(await ws.recv())
            assert snapshot["type"] == "snapshot" and snapshot["topic"] == "standings"


def _decoded(frame: str | bytes) -> Any:
    try:
        return codec.from_json(frame.encode() if isinstance(frame, str) else frame)
    except (codec.CodecError, UnicodeEncodeError):
        try:
            return codec.unpack(frame if isinstance(frame, bytes) else frame.encode())
        except (codec.CodecError, UnicodeEncodeError):
            return None


@pytest.fixture(scope="module")
def server_rig(loop: asyncio.AbstractEventLoop) -> Iterator[ServerRig]:
    instance = ServerRig()
    loop.run_until_complete(instance.start())
    yield instance
    loop.run_until_complete(instance.still_serves())
    loop.run_until_complete(instance.stop())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
NAMES = ["standings", "seat:1", "table:1", "deal:1", "compare:1:1", "ops", "projection", "nope",
         "seat:99999999", ""]  # fmt: skip
topics = st.sampled_from(NAMES) | st.text(max_size=10)
requests = st.fixed_dictionaries(
    {"op": st.sampled_from(["subscribe", "unsubscribe", "onair", "confirm", "ping", "x"])},
    optional={
        "topics": st.lists(topics, max_size=4) | json_values,
        "resume": st.dictionaries(topics, st.integers()) | json_values,
        "slot": json_values,
        "value": json_values,
        "table": json_values,
        "deal": json_values,
    },
)
frames = (
    requests.map(json.dumps)
    | json_values.map(json.dumps)
    | st.text(max_size=40)
    | requests.map(packed)
    | st.binary(max_size=40)
)


@FUZZ
@given(frame=frames)
def test_random_frames_at_the_websocket(
    loop: asyncio.AbstractEventLoop, server_rig: ServerRig, frame: str | bytes
) -> None:
    loop.run_until_complete(server_rig.check(frame))
