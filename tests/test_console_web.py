"""Web consoles (docs/protocol.md §3): a console token, the ``event`` op over ``/ws`` and the
hub's answers as ``ack`` frames, on the embedded bus and through an edge on a Redis run with
the ACL file ``duplicast acl`` writes; web and Redis consoles mixed on one table."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hubharness import (
    COMMENTATOR,
    OPERATOR,
    SAMPLE,
    duplicast,
    edge_hub,
    proofs_of,
    unique_tournament,
)
from hubharness import ingest_hub as ingest_hub_with
from redis_server import RedisServer
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from hub.bus.memory import MemoryBus
from hub.bus.redis import RedisBus, RetryPolicy
from hub.cli.main import main
from hub.cli.redis_acl import EDGE_USER, INGEST_USER, acl_file
from hub.cli.serve import console_tokens
from hub.client.console import ConsoleClient
from hub.engine.core import Engine
from hub.files.config import load_config
from hub.roles.console_relay import ConsoleRelay
from hub.roles.embedded import IngestSource
from hub.serve.auth import Auth, ConsoleSeat, parse_console_tokens, weak_tokens
from hub.serve.http import create_app, serve
from hub.wire.codec import pack
from hub.wire.patch import apply_patch, clone
from hub.wire.signing import signed_event

TOKEN1 = "web-console-one-Xq8rTz3vLm"
TOKEN2 = "web-console-two-Pk2wNs7yHd"
TOKEN1B = "web-console-1b-Jc4uRf9eGa"
FAST = RetryPolicy(deadline=1.0, base=0.01, cap=0.05)


def seats() -> tuple[ConsoleSeat, ...]:
    return (
        ConsoleSeat("table1", 1, TOKEN1),
        ConsoleSeat("table2", 2, TOKEN2),
        ConsoleSeat("table1-cli", 1, TOKEN1B),
    )


def tokens() -> Auth:
    return Auth(COMMENTATOR, OPERATOR, seats())


def tournament() -> tuple[Any, Any]:
    config, decks = unique_tournament("web")
    consoles = {**config.consoles, "table1-cli": 1}
    return dataclasses.replace(config, consoles=consoles), decks


class WebConsole:
    """A console page's conversation, as a test sees it: frames kept by type."""

    def __init__(self, ws: ClientConnection, token: str) -> None:
        self.ws = ws
        self.token = token  # signs its events, as sign.js does
        self.frames: list[dict[str, Any]] = []
        self.arrived = asyncio.Condition()
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.ws:
            async with self.arrived:
                self.frames.append(json.loads(raw))
                self.arrived.notify_all()

    def state(self, topic: str) -> dict[str, Any]:
        """A topic as the page holds it: its latest snapshot with the deltas after it."""
        doc: Any = None
        for frame in self.frames:
            if frame.get("topic") != topic:
                continue
            if frame["type"] == "snapshot":
                doc = clone(frame["data"])
            elif frame["type"] == "delta" and doc is not None:
                doc = apply_patch(doc, frame["patch"])
        return doc

    async def until(self, check: Any, timeout: float = 10.0) -> None:
        """Wait until ``check()`` holds, testing it as frames arrive."""

        async def holds() -> None:
            async with self.arrived:
                while not check():
                    await self.arrived.wait()

        await asyncio.wait_for(holds(), timeout)

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def event(self, **fields: Any) -> None:
        """A signed event, completed with what the hello names (as sign.js completes it)."""
        hello = await self.wait(lambda f: f.get("type") == "hello")
        mine = {k: hello[k] for k in ("tournament", "table", "console") if k in hello}
        await self.send(signed_event(self.token, {"v": 1, **mine, **fields}))

    async def wait(self, match: Any, timeout: float = 10.0) -> dict[str, Any]:
        """The first frame (seen or to come) that ``match`` accepts."""

        async def found() -> dict[str, Any]:
            async with self.arrived:
                while True:
                    for frame in self.frames:
                        if match(frame):
                            return frame
                    await self.arrived.wait()

        return await asyncio.wait_for(found(), timeout)

    async def ack(self, seq: int, **more: Any) -> dict[str, Any]:
        return await self.typed("ack", seq=seq, **more)

    async def error(self, code: str, **more: Any) -> dict[str, Any]:
        return await self.typed("error", code=code, **more)

    async def typed(self, kind: str, **more: Any) -> dict[str, Any]:
        """The first frame of type ``kind`` whose fields equal ``more``."""
        return await self.wait(
            lambda f: f.get("type") == kind and all(f.get(k) == v for k, v in more.items())
        )


@contextlib.asynccontextmanager
async def web_console(ws_url: str, token: str) -> AsyncIterator[WebConsole]:
    async with connect(f"{ws_url}?token={token}") as ws:
        page = WebConsole(ws, token)
        try:
            yield page
        finally:
            page.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await page.task


@dataclasses.dataclass
class Embedded:
    config: Any
    bus: MemoryBus
    source: Any
    server: Any


@contextlib.asynccontextmanager
async def embedded() -> AsyncIterator[Embedded]:
    """The sample tournament (with a second console of table 1) on the embedded bus."""
    config, decks = tournament()
    bus = MemoryBus()
    await bus.connect()
    try:
        async with ingest_hub_with(bus, config, decks, tokens()) as (source, server):
            yield Embedded(config, bus, source, server)
    finally:
        await bus.close()


async def test_a_web_console_plays_its_table_on_the_embedded_bus() -> None:
    async with (
        embedded() as hub,
        web_console(hub.server.ws_url, TOKEN1) as page,
    ):
        config, source = hub.config, hub.source
        deal = config.deal_orders[1][0]
        hello = await page.wait(lambda f: f.get("type") == "hello")
        assert hello == {
            "type": "hello",
            "role": "console",
            "tournament": config.id,
            "console": "table1",
            "table": 1,
        }
        await page.event(seq=1, type="start", deal=deal)
        first = await page.ack(1)
        assert first["ok"] is True and "position" in first
        # the same seq again (a resend after a drop): the same answer, marked duplicate
        await page.event(seq=1, type="start", deal=deal)
        again = await page.ack(1, duplicate=True)
        assert again["ok"] is True and again["position"] == first["position"]
        # a refusal: a seat that is not to act
        hand = source.engine.state.hand(1, deal)
        assert hand is not None
        to_act = hand.hand.to_act
        other = next(s for s in range(1, config.seats + 1) if s != to_act)
        await page.event(seq=2, type="fold", deal=deal, seat=other)
        refused = await page.ack(2)
        assert refused["ok"] is False and refused["code"] == "out_of_turn"
        assert refused["error"]
        # another table, console or tournament named: refused at the edge, nothing sent
        await page.event(seq=3, type="fold", deal=deal, seat=to_act, table=2)
        wrong = await page.error("bad_request", seq=3)
        assert "table" in wrong["message"]
        await page.event(seq=3, type="fold", deal=deal, seat=to_act, console="table2")
        await page.error("bad_request", seq=3, message=_contains("console"))
        await page.send({"op": "event", "signed": "[1, 2]", "sig": "00"})
        await page.error("bad_request", message=_contains("map"))
        await page.send({"op": "event", "event": {"seq": 3, "type": "fold"}})  # not signed
        await page.error("unsigned")
        assert source.engine.admission.sequencer.last("table1") == 2
        await page.event(seq=3, type="fold", deal=deal, seat=to_act)
        assert (await page.ack(3))["ok"] is True


class _contains:
    def __init__(self, word: str) -> None:
        self.word = word

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and self.word in other


async def test_console_tokens_are_bound_to_their_table() -> None:
    async with embedded() as hub:
        server = hub.server
        async with web_console(server.ws_url, TOKEN2) as page:
            await page.send(
                {"op": "subscribe", "topics": ["console:1", "table:2", "ops", "standings"]}
            )
            for topic in ("console:1", "table:2", "ops"):
                refused = await page.error("forbidden", topic=topic)
                assert "table 2" in refused["message"]
            await page.wait(lambda f: f.get("type") == "snapshot" and f["topic"] == "standings")
        # an unknown token: refused, never downgraded to public
        async with connect(f"{server.ws_url}?token=web-console-guess-123456") as ws:
            answer = json.loads(await ws.recv())
            assert answer["code"] == "unauthorized"
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 5)
        # an operator token sends no console events
        async with web_console(server.ws_url, OPERATOR) as page:
            await page.event(seq=1, type="start", deal=1)
            await page.error("forbidden")


async def test_web_and_redis_protocol_consoles_share_a_hand() -> None:
    """Two consoles of table 1, one a web page and one a bus console (``duplicast console``'s
    client), enter one hand between them."""
    async with embedded() as hub:
        config, source = hub.config, hub.source
        deal = config.deal_orders[1][0]
        async with (
            web_console(hub.server.ws_url, TOKEN1) as page,
            ConsoleClient(hub.bus, config.id, 1, "table1-cli") as pad,
        ):
            await page.event(seq=1, type="start", deal=deal)
            assert (await page.ack(1))["ok"]
            hand = source.engine.state.hand(1, deal)
            assert hand is not None
            ack = await asyncio.wait_for(
                pad.send({"type": "call", "deal": deal, "seat": hand.hand.to_act}), 10
            )
            assert ack.ok
            await page.event(seq=2, type="fold", deal=deal, seat=hand.hand.to_act)
            assert (await page.ack(2))["ok"]
            kinds = [(a.seat, a.kind) for a in hand.hand.actions if a.kind in ("call", "fold")]
            assert [k for _, k in kinds] == ["call", "fold"]
            # the bus console's answers never reach the page
            assert not [f for f in page.frames if f.get("type") == "ack" and f["seq"] > 2]


# -- on Redis, with the users `duplicast acl` makes ------------------------------------------


@pytest.fixture
def acl_redis(tmp_path: Path) -> Iterator[tuple[Any, dict[str, Any], RedisServer]]:
    """A private redis-server run with the ACL file ``duplicast acl`` writes."""
    config = load_config(SAMPLE)
    text, credentials = acl_file(config)
    (tmp_path / "users.acl").write_text(text)
    with RedisServer(tmp_path / "redis", extra=("--aclfile", str(tmp_path / "users.acl"))) as s:
        yield config, credentials, s


@pytest.mark.redis
async def test_a_web_console_through_an_edge_on_redis_with_acl_users(
    acl_redis: tuple[Any, dict[str, Any], RedisServer],
) -> None:
    """The ingest as duplicast-ingest, an edge as duplicast-edge; the page speaks to the edge,
    and ``duplicast console send`` (the table1 Redis user) enters the hand's next action
    under the same console: one sequence of seqs, the page told every answer."""
    config, credentials, server = acl_redis
    host = f"127.0.0.1:{server.port}"
    deal = config.deal_orders[1][0]
    ingest_bus = RedisBus(credentials[INGEST_USER].url(host), retry=FAST)
    edge_bus = RedisBus(credentials[EDGE_USER].url(host), retry=FAST)
    await ingest_bus.connect()
    await edge_bus.connect()
    ingest = IngestSource(ingest_bus, Engine(config), own_bus=False, keys=tokens().keyring())
    await ingest.start()
    try:
        async with (
            edge_hub(edge_bus, config.id, proofs_of(tokens())) as (edge, edge_server),
            web_console(edge_server.ws_url, TOKEN1) as page,
        ):
            await page.event(seq=1, type="start", deal=deal)
            assert (await page.ack(1))["ok"] is True
            hand = ingest.engine.state.hand(1, deal)
            assert hand is not None
            to_act = hand.hand.to_act
            cli = await asyncio.to_thread(
                duplicast,
                *("console", "send", "--tournament", config.id, "--table", "1"),
                *("--seq", "2", "--no-outbox", "type=call", f"deal={deal}", f"seat={to_act}"),
                env={"DUPLICAST_REDIS_URL": credentials["table1"].url(host)},
            )
            assert cli.returncode == 0, cli.stderr
            assert (await page.ack(2))["ok"] is True  # the CLI's answer reaches the page too
            await page.event(seq=2, type="call", deal=deal, seat=to_act)  # a stale seq
            assert (await page.ack(2, duplicate=True))["ok"] is True
            await page.event(seq=3, type="fold", deal=deal, seat=hand.hand.to_act)
            assert (await page.ack(3))["ok"] is True
            assert [a.kind for a in hand.hand.actions][-2:] == ["call", "fold"]
            await page.send({"op": "subscribe", "topics": ["console:1"]})
            await page.typed("snapshot", topic="console:1")
            await page.until(lambda: page.state("console:1")["consoles"]["table1"]["last_seq"] == 3)
            # Redis gone: the page is told at once, and keeps its event to send again
            server.stop()
            await page.event(seq=4, type="fold", deal=deal, seat=hand.hand.to_act)
            down = await page.error("unavailable", seq=4)
            assert down["message"]
            assert edge.consoles.listening() == ["table1"]
    finally:
        if server.process is None:
            server.start()
        await ingest.stop()
        await ingest_bus.close()
        await edge_bus.close()


def test_acl_makes_console_tokens_that_serve_checks(tmp_path: Path) -> None:
    """``duplicast acl --console-tokens-out``: a strong token per console of [consoles], in an
    owner-only file; ``serve`` refuses a file whose table disagrees, or a weak token."""
    acl, creds, tokens_out = (tmp_path / n for n in ("users.acl", "creds.txt", "tokens.txt"))
    args = ["acl", "--config", str(SAMPLE), "--out", str(acl), "--credentials-out", str(creds)]
    assert main([*args, "--console-tokens-out", str(tokens_out)]) == 0
    assert tokens_out.stat().st_mode & 0o777 == 0o600
    seats = parse_console_tokens(tokens_out.read_text())
    config = load_config(SAMPLE)
    assert {s.console: s.table for s in seats} == dict(config.consoles or {})
    assert not weak_tokens(Auth(consoles=seats)) and len({s.token for s in seats}) == len(seats)
    assert console_tokens(config, {"DUPLICAST_CONSOLE_TOKENS_FILE": str(tokens_out)}) == seats
    # the edge's user may relay the web consoles (publish web:*, hear ack:* and errors:*),
    # never publish on the Redis consoles' console:*
    edge = next(line for line in acl.read_text().splitlines() if f" {EDGE_USER} " in line)
    assert f"&dup:{config.id}:web:*" in edge and f"&dup:{config.id}:ack:*" in edge
    assert f"dup:{config.id}:console:" not in edge
    bad = tmp_path / "bad.txt"
    for text, word in (
        ("table1 2 " + seats[0].token + "\n", "not table 2"),
        ("table9 1 " + seats[0].token + "\n", "not in the tournament"),
        ("table1 1\n", "CONSOLE TABLE TOKEN"),
        ("table1 1 short\n", "shorter than"),
    ):
        bad.write_text(text)
        env = {"DUPLICAST_CONSOLE_TOKENS_FILE": str(bad), "DUPLICAST_REDIS_URL": "redis://x:1/0"}
        run = duplicast("serve", "--role", "edge", "--config", str(SAMPLE), env=env)
        assert run.returncode == 2 and word in run.stderr, run.stderr


async def test_the_page_plays_from_console_state_and_sees_the_dispute() -> None:
    """The page as a real one works: it reads ``console:1`` (who is to act, what is legal),
    enters the action, waits for the state to move; a ``win`` the cards contradict is acked
    and shows in ``console:1`` as a dispute, in words."""
    async with embedded() as hub, web_console(hub.server.ws_url, TOKEN1) as page:
        await page.send({"op": "subscribe", "topics": ["console:1"]})
        await page.typed("snapshot", topic="console:1")
        first = page.state("console:1")
        assert first["status"] == "none" and first["consoles"]["table1"] == {"last_seq": 0}
        deal = first["next_deal"]
        seq = 0

        async def enter(**fields: Any) -> None:
            nonlocal seq
            seq += 1
            await page.event(seq=seq, deal=deal, **fields)
            assert (await page.ack(seq))["ok"] is True
            await page.until(
                lambda: page.state("console:1")["consoles"]["table1"]["last_seq"] == seq
            )

        await enter(type="start")
        while not page.state("console:1")["winners_needed"]:
            state = page.state("console:1")
            call = state["legal"]["call"] is not None
            await enter(type="call" if call else "check", seat=state["to_act"])
        hand = hub.source.engine.state.hand(1, deal)
        computed = hand.hand.computed_winners()
        wrong = next(s for s in range(1, hub.config.seats + 1) if s not in computed)
        await enter(type="win", seats=[wrong])
        await page.until(lambda: page.state("console:1")["status"] == "disputed")
        dispute = page.state("console:1")["dispute"]
        assert dispute["declared"] == [wrong] and "official" in dispute["reason"]


async def test_the_asgi_websocket_route_serves_consoles_alike() -> None:
    """``create_app(raw_frames=False)`` (Starlette's websocket route, any ASGI server): the
    same hello, event and ack as the raw sockets."""
    config, decks = tournament()
    bus = MemoryBus()
    await bus.connect()
    source = IngestSource(bus, Engine(config, decks), own_bus=False, keys=tokens().keyring())
    app = create_app(source, auth=tokens(), raw_frames=False)
    server = await serve(app, "127.0.0.1", 0)
    try:
        async with web_console(server.ws_url, TOKEN2) as page:
            hello = await page.typed("hello")
            assert (hello["console"], hello["table"]) == ("table2", 2)
            await page.event(seq=1, type="start", deal=config.deal_orders[2][0])
            assert (await page.ack(1))["ok"] is True
            await page.event(seq=2, type="start", deal=config.deal_orders[2][0], table=1)
            await page.error("bad_request", seq=2)
    finally:
        await server.stop()
        await bus.close()


async def test_a_console_whose_answers_cannot_be_heard_is_told_unavailable() -> None:
    """A relay whose SUBSCRIBE is refused (an edge user without the web consoles' rights)
    tells the page ``unavailable`` rather than publishing an event whose answer nobody would
    hear, and listens again on the next event."""
    bus = MemoryBus()
    await bus.connect()
    refused: list[str] = []
    subscribe = bus.subscribe

    def refusing(pattern: str, **options: Any) -> Any:
        if ":ack:" in pattern and not refused:
            refused.append(pattern)
            raise_on_ready = subscribe(pattern, **options)

            async def ready() -> None:
                raise PermissionError(
                    "NOPERM this user has no permissions to access one of the channels"
                )

            raise_on_ready.ready = ready  # type: ignore[method-assign]
            return raise_on_ready
        return subscribe(pattern, **options)

    bus.subscribe = refusing  # type: ignore[method-assign]
    relay = ConsoleRelay(bus, "t-relay", timeout=1.0)
    listener = subscribe("dup:t-relay:web:1")  # a hub listening
    await listener.ready()
    page = _Collecting()
    relay.attach(page, "table1", 1)
    event = {"v": 1, "tournament": "t-relay", "table": 1, "console": "table1", "seq": 1}
    problem = await relay.send("table1", 1, event)
    assert problem is not None and "NOPERM" in problem
    assert await relay.send("table1", 1, event) is None  # heard again: sent
    await bus.publish("dup:t-relay:ack:table1", pack({"seq": 1, "ok": True}))
    for _ in range(100):
        if page.sent:
            break
        await asyncio.sleep(0.01)
    assert page.sent == [{"seq": 1, "ok": True, "type": "ack"}]
    await relay.stop()
    await listener.aclose()
    await bus.close()


class _Collecting:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


async def test_a_console_token_reads_over_rest_what_the_public_reads() -> None:
    """docs/protocol.md §3.1 (issue #30 item 13): after a played session, a console token over
    REST reads every public topic as the public does (it was 403 for ``/api/tables/1``), and
    nothing more; an unknown token is still 401."""
    import httpx
    from hubharness import session_events

    from hub.client.logreplay import replay_log

    async with embedded() as hub:
        events = session_events(hub.config.id)
        report = await replay_log(hub.bus, hub.config.id, events, on_reject=lambda _: None)
        assert report.accepted == len(events)
        base = hub.server.url
        async with httpx.AsyncClient(base_url=base, timeout=10) as http:
            for path in ("/api/tables/1", "/api/standings", "/api/seats/1", "/api/deals/1"):
                public = await http.get(path)
                assert public.status_code == 200, (path, public.text)
                for asked in (
                    {"headers": {"Authorization": f"Bearer {TOKEN2}"}},
                    {"params": {"token": TOKEN1}},
                ):
                    console = await http.get(path, **asked)
                    assert console.status_code == 200, (path, console.text)
                    assert console.json() == public.json()
            ops = await http.get("/api/ops", headers={"Authorization": f"Bearer {TOKEN1}"})
            assert ops.status_code == 403
            guess = await http.get("/api/tables/1", params={"token": "web-console-guess-123456"})
            assert guess.status_code == 401
