"""Issue #30 items 7 and 12 against a real hub (role all, uvicorn on loopback) after a played
session, and through the shipped deploy/nginx.conf where the edge is what matters:

- a penalty withdrawn over REST and with `duplicast td withdraw`;
- operator bodies bounded in bytes before they are read (a 200 MB body announced with the
  operator token is refused at once, ``too_large``), on-air values bounded (60 changes of
  growing keys cannot grow the ``onair`` topic or the snapshot);
- no control or bidi character in operator text, a strict colour, no JSON key given twice;
- REST rulings follow the websocket's Origin rule;
- sockets per console token capped (the refusal counted); one spelling of ``token``;
- the pages' Content-Security-Policy and Referrer-Policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from hub.bus.memory import MemoryBus
from hub.client.logreplay import replay_log
from hub.engine.bounds import MAX_COMMAND_BYTES, MAX_SLOT_BYTES
from hub.roles.embedded import IngestSource
from hub.serve.auth import Auth, ConsoleSeat
from hub.serve.headers import CSP
from hub.wire.codec import CodecError, TooLarge, from_json_strict, pack, unpack, unpack_strict
from tests.hubharness import (
    COMMENTATOR,
    OPERATOR,
    duplicast,
    ingest_hub,
    session_events,
    unique_tournament,
)
from tests.nginx import Nginx

CONSOLE_TOKEN = "test-console-token-table-1"
TOKENS = Auth(COMMENTATOR, OPERATOR, consoles=(ConsoleSeat("table1", 1, CONSOLE_TOKEN),))
BEARER = {"Authorization": f"Bearer {OPERATOR}"}


class Venue:
    def __init__(self, source: IngestSource, url: str, lb: Nginx) -> None:
        self.source, self.url, self.lb = source, url, lb

    def ops(self) -> dict[str, Any]:
        return self.source.engine.payload(("live", "ops")) or {}


@pytest.fixture
async def venue(tmp_path: Path) -> AsyncIterator[Venue]:
    """The sample session played (up to its one dispute) into a hub behind nginx."""
    config, decks = unique_tournament("hard")
    events = session_events(config.id)
    confirm = next(e for e in events if e["type"] == "confirm")
    played = events[: events.index(confirm)]
    bus = MemoryBus()
    await bus.connect()
    async with ingest_hub(bus, config, decks, TOKENS) as (source, server):
        report = await replay_log(bus, config.id, played, on_reject=lambda _: None)
        assert report.rejected == 0
        upstream = f"127.0.0.1:{server.port}"
        lb = Nginx(tmp_path / "nginx", {"edge1:8000": upstream, "edge2:8000": upstream})
        await asyncio.to_thread(lb.start)
        try:
            yield Venue(source, server.url, lb)
        finally:
            await asyncio.to_thread(lb.stop)
    await bus.close()


async def td(url: str, *args: str) -> tuple[int, dict[str, Any]]:
    env = {"DUPLICAST_OPERATOR_TOKEN": OPERATOR}
    done = await asyncio.to_thread(duplicast, "td", *args, "--url", url, env=env)
    return done.returncode, json.loads(done.stdout)


# ------------------------------------------------------------------ item 7: REST and CLI
async def test_a_penalty_is_withdrawn_over_rest_and_from_the_command_line(venue: Venue) -> None:
    engine = venue.source.engine
    before = copy.deepcopy(engine.payload(("live", "standings")))
    penalty = {"table": 2, "seat": 4, "chips": 500, "by": "TD Ana", "reason": "slow play"}
    async with httpx.AsyncClient(base_url=venue.lb.url, timeout=10) as http:
        answer = await http.post("/api/penalty", json=penalty, headers=BEARER)
        assert answer.status_code == 200, answer.text
        number = venue.ops()["penalties"][-1]["id"]
        assert engine.payload(("live", "standings")) != before
        body = {"penalty": number, "by": "TD Bo"}  # no reason: refused, nothing changed
        answer = await http.post("/api/withdraw", json=body, headers=BEARER)
        assert (answer.status_code, answer.json()["error"]) == (400, "bad_request")
        answer = await http.post("/api/withdraw", json={**body, "penalty": 99, "reason": "x"},
                                 headers=BEARER)  # fmt: skip
        assert (answer.status_code, answer.json()["error"]) == (400, "unknown_penalty")
    code, out = await td(venue.lb.url, "withdraw", "--penalty", str(number), "--by", "TD Bo",
                         "--reason", "the wrong seat")  # fmt: skip
    assert code == 0 and out["ok"] is True, out
    assert engine.payload(("live", "standings")) == before
    assert venue.ops()["penalties"][-1]["withdrawn"]["by"] == "TD Bo"
    code, out = await td(venue.lb.url, "withdraw", "--penalty", str(number), "--by", "TD Bo",
                         "--reason", "again")  # fmt: skip
    assert code == 1 and out["error"] == "not_allowed"


# ------------------------------------------------------------------ item 12: sizes
async def raw_post(url: str, head: str, body: bytes = b"", wait: float = 5.0) -> tuple[int, float]:
    """Send a request head (and ``body``) on a raw socket; the status and how long it took."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    started = time.monotonic()
    try:
        writer.write(head.encode() + body)
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), wait)
        return int(line.split()[1]), time.monotonic() - started
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def test_operator_bodies_are_bounded_before_they_are_read(venue: Venue) -> None:
    head = (
        "POST /api/onair HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {OPERATOR}\r\n"
    )
    # 200 MB announced, 10 bytes sent: refused at once, nothing of it waited for
    status, took = await raw_post(venue.url, head + "Content-Length: 209715200\r\n\r\n", b"{" * 10)
    assert status == 413 and took < 2.0, (status, took)
    # a chunked body with no length: refused once it passes the bound, not read to its end
    chunk = b"x" * 65536
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(4))
    status, _ = await raw_post(venue.url, head + "Transfer-Encoding: chunked\r\n\r\n", chunks)
    assert status == 413
    huge = {"slot": "ticker", "value": {"visible": True, "text": "x" * (2 << 20)}}
    async with httpx.AsyncClient(base_url=venue.url, timeout=30) as http:
        answer = await http.post("/api/onair", json=huge, headers=BEARER)  # the hub itself
        assert (answer.status_code, answer.json()["error"]) == (413, "too_large")
    async with httpx.AsyncClient(base_url=venue.lb.url, timeout=30) as http:
        answer = await http.post("/api/onair", json=huge, headers=BEARER)
        assert answer.status_code == 413  # nginx's own bound (client_max_body_size 64k)
        assert "nginx" in answer.text
        # under the body's bound, but one text over its own: refused by the engine
        long = {"slot": "ticker", "value": {"visible": True, "text": "x" * 4000}}
        answer = await http.post("/api/onair", json=long, headers=BEARER)
        assert (answer.status_code, answer.json()["error"]) == (400, "bad_request")
        assert "at most 500" in answer.json()["message"]
        # 60 changes, each with keys of its own: the slot's value cannot grow past its bound
        codes = []
        for i in range(60):
            value = {"visible": True, f"k{i}": "y" * 400}
            answer = await http.post("/api/onair", json={"slot": "ticker", "value": value},
                                     headers=BEARER)  # fmt: skip
            codes.append(answer.json().get("error", "ok"))
        assert codes.count("ok") < 10 and set(codes) == {"ok", "too_large"}, codes
        onair = (await http.get("/api/onair")).content
        assert len(onair) < 2 * MAX_SLOT_BYTES * 5, len(onair)
    snapshot = pack(venue.source.engine.snapshot())
    assert len(snapshot) < 1 << 20, len(snapshot)
    print(f"after 60 growing on-air changes: onair {len(onair)} B, snapshot {len(snapshot)} B")
    assert MAX_COMMAND_BYTES < 64 << 10  # (the websocket's frame bound is 64 KiB)


# ------------------------------------------------------------------ item 12: plain text
async def test_operator_text_is_plain_and_every_key_is_given_once(venue: Venue) -> None:
    before = venue.ops()["penalties"], venue.ops()["corrections"]
    base = {"table": 2, "seat": 4, "chips": 10, "reason": "slow play"}
    async with httpx.AsyncClient(base_url=venue.url, timeout=10) as http:
        for by in ("TD\x00Ana", "TD \u202eanA", "TD\nAna", "TD\u2066Ana"):
            answer = await http.post("/api/penalty", json={**base, "by": by}, headers=BEARER)
            assert (answer.status_code, answer.json()["error"]) == (400, "bad_request"), by
            assert "control or bidi" in answer.json()["message"]
        colour = {"team": "BRA", "colour": "#75AADB\n", "by": "TD Ana"}
        answer = await http.post("/api/roster", json=colour, headers=BEARER)
        assert (answer.status_code, answer.json()["error"]) == (400, "bad_request")
        # a key given twice: the last would have won (chips 10^15)
        twice = (
            b'{"table": 2, "seat": 4, "chips": 10, "chips": 1000000000000000,'
            b' "by": "TD Ana", "reason": "slow play"}'
        )
        answer = await http.post("/api/penalty", content=twice, headers=BEARER)
        assert (answer.status_code, answer.json()["error"]) == (400, "bad_request")
        assert "twice" in answer.json()["message"]
    ws_url = venue.url.replace("http", "ws") + f"/ws?token={OPERATOR}"
    async with websockets.connect(ws_url) as ws:
        json.loads(await ws.recv())  # hello
        await ws.send(twice.replace(b"{", b'{"op": "penalty", ', 1).decode())
        answer = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert (answer["type"], answer["code"]) == ("error", "bad_request"), answer
        await ws.send(json.dumps({"op": "penalty", **base, "by": "TD\u202eAna"}))
        answer = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert (answer["type"], answer["code"]) == ("error", "bad_request"), answer
    assert (venue.ops()["penalties"], venue.ops()["corrections"]) == before


def test_the_strict_decoders_refuse_a_key_given_twice() -> None:
    twice = b"\x82\xa5chips\x0a\xa5chips\xcf\x00\x03\x8d\x7e\xa4\xc6\x80\x00"  # 10, 10**15
    assert unpack(twice) == {"chips": 10**15}  # what the plain decoder counted
    with pytest.raises(CodecError, match="given twice"):
        unpack_strict(twice)
    with pytest.raises(CodecError, match="given twice"):
        from_json_strict('{"a": {"b": 1, "b": 2}}')  # nested objects too
    assert from_json_strict('{"a": {"b": 1}, "b": 2}') == {"a": {"b": 1}, "b": 2}
    with pytest.raises(TooLarge):
        from_json_strict(b"{}" + b" " * 100, max_bytes=64)


# ------------------------------------------------------------------ item 12: Origin
async def test_rest_rulings_follow_the_websockets_origin_rule(venue: Venue) -> None:
    body = {"table": 2, "seat": 4, "chips": 10, "by": "TD Ana", "reason": "slow play"}
    count = len(venue.ops()["penalties"])
    for base in (venue.url, venue.lb.url):
        async with httpx.AsyncClient(base_url=base, timeout=10) as http:
            # what a no-cors POST from another site's page sends: its Origin, a text body
            evil = {**BEARER, "Origin": "https://evil.example", "Content-Type": "text/plain"}
            answer = await http.post("/api/penalty", content=json.dumps(body), headers=evil)
            assert (answer.status_code, answer.json()["error"]) == (403, "forbidden_origin")
            assert len(venue.ops()["penalties"]) == count
            own = {**BEARER, "Origin": base}  # the hub's own page: allowed, as on /ws
            answer = await http.post("/api/penalty", json=body, headers=own)
            assert answer.status_code == 200, answer.text
            count += 1
            assert len(venue.ops()["penalties"]) == count
    ws = venue.url.replace("http", "ws") + f"/ws?token={OPERATOR}"
    with pytest.raises(websockets.InvalidStatus):
        await websockets.connect(ws, origin="https://evil.example")  # type: ignore[arg-type]


# ------------------------------------------------------------------ item 12: sockets, spelling
async def hello_or_error(url: str) -> tuple[Any, dict[str, Any]]:
    ws = await websockets.connect(url, open_timeout=10)
    first = json.loads(await asyncio.wait_for(ws.recv(), 10))
    return ws, first


async def test_a_console_token_opens_a_few_sockets_through_nginx(venue: Venue) -> None:
    url = f"{venue.lb.ws_url}?token={CONSOLE_TOKEN}"
    limit = venue.source.fanout.limits.max_per_console
    assert limit == 4
    opened = [await hello_or_error(url) for _ in range(limit)]
    refused_before = venue.source.fanout.refused["too_many_connections"]
    try:
        assert [f["type"] for _, f in opened] == ["hello"] * limit
        extra = [await hello_or_error(url) for _ in range(20)]
        assert {(f["type"], f.get("code")) for _, f in extra} == {("error", "too_many_connections")}
        assert "console table1" in extra[0][1]["message"]
        refused = venue.source.fanout.refused["too_many_connections"] - refused_before
        assert refused == 20
        for ws, _ in extra:
            await ws.close()
        # one closed: the tablet's reconnect is admitted
        await opened.pop()[0].close()
        for _ in range(50):
            ws, first = await hello_or_error(url)
            if first["type"] == "hello":
                opened.append((ws, first))
                break
            await ws.close()
            await asyncio.sleep(0.05)
        assert opened[-1][1]["type"] == "hello"
        # the operator and the public are not counted against a console
        ws, first = await hello_or_error(f"{venue.lb.ws_url}?token={OPERATOR}")
        assert first["type"] == "hello"
        await ws.close()
    finally:
        for ws, _ in opened:
            await ws.close()


async def test_the_token_has_one_spelling_through_nginx(venue: Venue) -> None:
    """nginx reads ``$arg_token`` without regard to case: ``?TOKEN=x`` was exempt from its
    per-address cap while the hub served it as public. Now the hub refuses it, so it is no
    way around the cap (and a mistyped operator link says so instead of showing public)."""
    for query in ("TOKEN=junk", f"Token={OPERATOR}", f"TOKEN={CONSOLE_TOKEN}"):
        ws, first = await hello_or_error(f"{venue.lb.ws_url}?{query}")
        assert (first["type"], first["code"]) == ("error", "bad_request"), (query, first)
        assert "'token='" in first["message"]
        await ws.close()
    async with httpx.AsyncClient(base_url=venue.lb.url, timeout=10) as http:
        assert (await http.get("/api/ops", params={"TOKEN": OPERATOR})).status_code == 401
        assert (await http.get("/api/ops", params={"token": OPERATOR})).status_code == 200


# ------------------------------------------------------------------ item 12: headers
async def test_the_pages_send_csp_and_no_referrer(venue: Venue) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        for base in (venue.url, venue.lb.url):
            for page in ("operator.html", "console.html", "leaderboard.html", ""):
                answer = await http.get(f"{base}/overlays/{page}")
                assert answer.status_code == 200, page
                assert answer.headers["content-security-policy"] == CSP
                assert answer.headers["referrer-policy"] == "no-referrer"


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    yield
