"""Web consoles (docs/protocol.md §3): a console token, the ``event`` op over ``/ws`` and the
hub's answers as ``ack`` frames, on the embedded bus and through an edge on a Redis run with
the ACL file ``duplicast acl`` writes; web and Redis consoles mixed on one table."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hubharness import COMMENTATOR, OPERATOR, unique_tournament
from hubharness import ingest_hub as ingest_hub_with
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from hub.bus.memory import MemoryBus
from hub.client.console import ConsoleClient
from hub.serve.auth import Auth, ConsoleSeat

TOKEN1 = "web-console-one-Xq8rTz3vLm"
TOKEN2 = "web-console-two-Pk2wNs7yHd"
TOKEN1B = "web-console-1b-Jc4uRf9eGa"


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

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []
        self.arrived = asyncio.Condition()
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.ws:
            async with self.arrived:
                self.frames.append(json.loads(raw))
                self.arrived.notify_all()

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def event(self, **fields: Any) -> None:
        await self.send({"op": "event", "event": fields})

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
        page = WebConsole(ws)
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
        await page.send({"op": "event", "event": [1, 2]})
        await page.error("bad_request", message=_contains("map"))
        assert source.engine.sequencer.last("table1") == 2
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
