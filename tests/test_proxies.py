"""Who a client is behind a load balancer (hub.serve.proxies), and what an edge does with it: the
per-address cap counts the addresses a trusted proxy names, never headers from anyone else,
and exempts commentators and the operator; refusals are counted in /metrics.

Through real nginx with the shipped config: tests/test_lb.py."""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.typing import Origin

from hub.serve.fanout import Fanout
from hub.serve.http import RunningServer, create_app, serve
from hub.serve.limits import Limits
from hub.serve.proxies import TrustedProxies
from tests.test_server import AUTH, FakeSource, recv

LB = TrustedProxies(["127.0.0.1", "10.0.0.0/8"])


def test_only_a_trusted_peer_names_the_client() -> None:
    assert LB.client("203.0.113.9", ["198.51.100.1"]) == "203.0.113.9"  # forged: ignored
    assert LB.client("127.0.0.1", ["198.51.100.1"]) == "198.51.100.1"
    assert LB.client("127.0.0.1", []) == "127.0.0.1"  # the proxy's own request
    assert TrustedProxies().client("127.0.0.1", ["198.51.100.1"]) == "127.0.0.1"


def test_the_right_most_untrusted_address_is_the_client() -> None:
    """Entries left of the first untrusted one were written by the client itself."""
    chain = ["6.6.6.6, 198.51.100.1", "10.1.2.3"]  # two headers, as a chain of proxies sends
    assert LB.client("127.0.0.1", chain) == "198.51.100.1"
    assert LB.client("127.0.0.1", ["10.0.0.2, 10.0.0.3"]) == "10.0.0.2"  # all trusted
    assert LB.client("127.0.0.1", ["garbage, 10.0.0.3"]) == "10.0.0.3"  # not an address
    assert LB.client("::ffff:127.0.0.1", [" 2001:db8::1 "]) == "2001:db8::1"
    assert LB.client("127.0.0.1", ["[2001:db8::2]"]) == "2001:db8::2"


def test_forwarded_host_only_from_a_trusted_peer() -> None:
    assert LB.host("127.0.0.1", "edge1:8000", ["venue.example:8080"]) == "venue.example:8080"
    assert LB.host("203.0.113.9", "edge1:8000", ["evil.example"]) == "edge1:8000"
    assert LB.host("127.0.0.1", "venue.example:8080", []) == "venue.example:8080"


def test_configuration_from_the_environment_and_bad_entries() -> None:
    proxies = TrustedProxies.from_env({"DUPLICAST_TRUSTED_PROXIES": "172.16.0.0/12, ::1"})
    assert proxies.trusts("172.18.0.2") and proxies.trusts("::1") and not proxies.trusts("8.8.8.8")
    assert not TrustedProxies.from_env({}) and str(TrustedProxies()) == "no proxy"
    with pytest.raises(ValueError):
        TrustedProxies(["not-a-network"])


@contextlib.asynccontextmanager
async def edge(trusted: list[str], raw: bool) -> AsyncIterator[tuple[RunningServer, FakeSource]]:
    source = FakeSource()
    source.fanout = Fanout(source.store, Limits(max_per_address=2))
    app = create_app(source, auth=AUTH, trusted_proxies=trusted, raw_frames=raw)
    running = await serve(app)
    try:
        yield running, source
    finally:
        await running.stop()


async def first(server: RunningServer, query: str = "", **headers: str) -> tuple[Any, Any]:
    ws = await websockets.connect(
        f"{server.ws_url}{query}", compression=None, additional_headers=headers
    )
    return ws, await recv(ws)


@pytest.mark.parametrize("raw", [True, False], ids=["feedsocket", "asgi"])
async def test_the_cap_counts_forwarded_clients_and_exempts_tokens(
    raw: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "hub.serve.service")
    async with edge(["127.0.0.1"], raw) as (server, source):
        xff = {"X-Forwarded-For": "203.0.113.5"}
        full = [await first(server, **xff) for _ in range(2)]
        assert all(hello["type"] == "hello" for _, hello in full)
        ws, refused = await first(server, **xff)
        assert refused["code"] == "too_many_connections" and "203.0.113.5" in refused["message"]
        await ws.close()
        # another client behind the same balancer, and the operator from the full address
        other, hello = await first(server, **{"X-Forwarded-For": "203.0.113.6"})
        assert hello["type"] == "hello"
        for token in ("op-secret", "comm-secret", "op-secret", "comm-secret"):
            sock, hello = await first(server, f"?token={token}", **xff)
            assert hello["type"] == "hello" and hello["role"] != "public", hello
            full.append((sock, hello))
        assert source.fanout.addresses() == 2  # tokens neither refused nor counted
        bad, refused = await first(server, "?token=nope", **xff)
        assert refused["code"] == "unauthorized"
        await bad.close()
        async with httpx.AsyncClient(base_url=server.url) as http:
            text = (await http.get("/metrics", params={"token": "op-secret"})).text
        assert 'duplicast_ws_refused_total{code="too_many_connections"} 1.0' in text
        assert 'duplicast_ws_refused_total{code="unauthorized"} 1.0' in text
        for sock, _ in [*full, (other, None)]:
            await sock.close()
    logged = [r.getMessage() for r in caplog.records if r.name == "hub.serve.service"]
    assert any("from 203.0.113.5: too_many_connections" in line for line in logged), logged


def test_serve_refuses_a_bad_trusted_proxy() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hub", "serve", "--trusted-proxy", "edge1", "--port", "1"],
        cwd=Path(__file__).resolve().parent.parent,
        env={"PATH": "/usr/bin:/bin", "DUPLICAST_TRUSTED_PROXIES": "10.0.0.0/8"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--trusted-proxy" in done.stderr, done.stderr


@pytest.mark.parametrize("raw", [True, False], ids=["feedsocket", "asgi"])
async def test_forwarding_headers_from_an_untrusted_peer_change_nothing(raw: bool) -> None:
    async with edge([], raw) as (server, _):  # loopback is not a trusted proxy here
        socks = [await first(server, **{"X-Forwarded-For": f"198.51.100.{i}"}) for i in (1, 2)]
        ws, refused = await first(server, **{"X-Forwarded-For": "198.51.100.3"})
        assert refused["code"] == "too_many_connections" and "127.0.0.1" in refused["message"]
        for sock, _ in [*socks, (ws, None)]:
            await sock.close()
        with pytest.raises(websockets.InvalidStatus):  # no borrowed Host for the Origin check
            await websockets.connect(
                server.ws_url,
                origin=Origin("http://venue.example:8080"),
                additional_headers={"X-Forwarded-Host": "venue.example:8080"},
            )


@pytest.mark.parametrize("raw", [True, False], ids=["feedsocket", "asgi"])
async def test_the_origin_check_uses_the_host_the_balancer_was_asked_for(raw: bool) -> None:
    """A proxy that sends the upstream's name as Host says the browser's in X-Forwarded-Host."""
    async with edge(["127.0.0.1"], raw) as (server, _):
        ws = await websockets.connect(
            server.ws_url,
            origin=Origin("http://venue.example:8080"),
            additional_headers={"X-Forwarded-Host": "venue.example:8080"},
        )
        assert (await recv(ws))["type"] == "hello"
        await ws.close()
        with pytest.raises(websockets.InvalidStatus) as refused:
            await websockets.connect(
                server.ws_url,
                origin=Origin("https://evil.example"),
                additional_headers={"X-Forwarded-Host": "venue.example:8080"},
            )
        assert refused.value.response.status_code == 403
