"""Public metrics say nothing about deals (issue #9): a poller of the public view must not be
able to count the actions of a hand, see reject codes, or count commentators and operators."""

from __future__ import annotations

import socket
import urllib.request
from typing import Any

import pytest

from hub.bus.memory import MemoryBus
from hub.engine.core import Engine
from hub.metrics import Metrics, serve_private
from hub.roles.ingest import Ingest
from hub.wire import codec
from tests.hubharness import unique_tournament


def event(tournament: str, seq: int, **fields: Any) -> bytes:
    base = {"v": 1, "tournament": tournament, "table": 1, "console": "table1", "seq": seq}
    return codec.pack(base | fields)


@pytest.mark.asyncio
async def test_public_metrics_do_not_move_with_a_hand() -> None:
    config, decks = unique_tournament("metrics")
    metrics = Metrics()
    ingest = Ingest(MemoryBus(), Engine(config, decks), metrics=metrics)
    await ingest.start()
    try:
        channel = f"dup:{config.id}:console:1"
        before = metrics.render(private=False)
        await ingest.handle(
            channel, event(config.id, 1, type="start", deal=config.deal_orders[1][0])
        )
        seat = ingest.engine.state.tables[1].current.hand.to_act
        await ingest.handle(channel, event(config.id, 2, type="fold", seat=seat))
        await ingest.handle(channel, event(config.id, 3, type="raise", seat=99, amount=1))
        await ingest.handle(channel, b"\xc1 not msgpack")
        assert metrics.render(private=False) == before
        private = metrics.render(private=True).decode()
        assert 'duplicast_events_total{result="accepted"} 2.0' in private
        assert "duplicast_rejects_total" in private
    finally:
        await ingest.stop()


def test_metrics_port_serves_every_metric() -> None:
    metrics = Metrics()
    metrics.event("accepted")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    stop = serve_private(metrics, "127.0.0.1", port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            text = reply.read().decode()
    finally:
        stop()
    assert 'duplicast_events_total{result="accepted"} 1.0' in text


def test_default_render_is_the_public_view() -> None:
    metrics = Metrics()
    metrics.reject("over_pot_limit")
    assert b"over_pot_limit" not in metrics.render()
    assert b"over_pot_limit" in metrics.render(private=True)
