"""The tournament director's rulings against a real hub (issue #22.2): `POST /api/confirm|void|
penalty` with the operator token (the websocket ops' bodies and codes), and `duplicast td`
run as a user runs it, one line printed, non-zero on a refusal."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from hub.bus.memory import MemoryBus
from hub.client.logreplay import replay_log
from hub.roles.embedded import IngestSource
from tests.hubharness import (
    COMMENTATOR,
    OPERATOR,
    duplicast,
    ingest_hub,
    session_events,
    unique_tournament,
)

Hub = tuple[IngestSource, str, dict[str, Any]]


@pytest.fixture
async def hub() -> AsyncIterator[Hub]:
    """The sample session played up to its one dispute, which no console confirms."""
    config, decks = unique_tournament("td")
    events = session_events(config.id)
    confirm = next(e for e in events if e["type"] == "confirm")
    played = events[: events.index(confirm)]
    bus = MemoryBus()
    await bus.connect()
    async with ingest_hub(bus, config, decks) as (source, server):
        report = await replay_log(bus, config.id, played, on_reject=lambda _: None)
        assert report.rejected == 0
        yield source, server.url, confirm
    await bus.close()


def ops(source: IngestSource) -> dict[str, Any]:
    return source.engine.payload(("live", "ops")) or {}


async def td(url: str, *args: str, token: str | None = OPERATOR) -> tuple[int, str]:
    env = {"DUPLICAST_OPERATOR_TOKEN": token or ""}
    done = await asyncio.to_thread(duplicast, "td", *args, "--url", url, env=env)
    return done.returncode, done.stdout


async def test_rest_rulings_need_the_operator_and_an_official(hub: Hub) -> None:
    source, url, confirm = hub
    body = {"table": confirm["table"], "deal": confirm["deal"]}
    bearer = {"Authorization": f"Bearer {OPERATOR}"}
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        statuses = []
        for headers in (
            {},
            {"Authorization": "Bearer nope"},
            {"Authorization": f"Bearer {COMMENTATOR}"},
        ):
            answer = await http.post("/api/confirm", json={**body, "by": "TD"}, headers=headers)
            statuses.append((answer.status_code, answer.json()["error"]))
        assert statuses == [(403, "forbidden"), (401, "unauthorized"), (403, "forbidden")]
        before = ops(source)
        for bad in (body, {**body, "by": " "}, [1], {"by": "TD"}):
            answer = await http.post("/api/confirm", json=bad, headers=bearer)
            assert answer.status_code == 400, answer.text
            assert answer.json()["error"] == "bad_request"
        assert "'by'" in (await http.post("/api/confirm", json=body, headers=bearer)).text
        bad_json = await http.post("/api/void", content=b"{", headers=bearer)
        assert bad_json.status_code == 400 and bad_json.json()["error"] == "bad_request"
        assert ops(source)["disputes"] == before["disputes"] != []
        assert ops(source)["corrections"] == before["corrections"]
        # the engine's own refusal, coded as over the websocket
        penalty = {"table": 1, "seat": 2, "by": "TD", "reason": "slow"}
        answer = await http.post("/api/penalty", json=penalty, headers=bearer)
        assert (answer.status_code, answer.json()["error"]) == (400, "bad_amount")
        answer = await http.post("/api/penalty", json={**penalty, "chips": 40}, headers=bearer)
        assert answer.status_code == 200 and answer.json()["ok"] is True
        assert ops(source)["penalties"][-1]["by"] == "TD"
        # a roster fix: the public standings show it at once
        fix = {"team": "BRA", "team_name": "Brasil", "by": "TD", "reason": "spelling"}
        answer = await http.post("/api/roster", json=fix, headers=bearer)
        assert answer.status_code == 200, answer.text
        teams = source.engine.payload(("public", "standings"))["like_for_like"]["teams"]
        assert next(t for t in teams if t["team"] == "BRA")["name"] == "Brasil"
        answer = await http.post("/api/roster", json={**fix, "team": "XXX"}, headers=bearer)
        assert (answer.status_code, answer.json()["error"]) == (400, "bad_request")


async def test_the_td_command_rules_and_says_so_in_one_line(hub: Hub) -> None:
    source, url, confirm = hub
    table, deal = str(confirm["table"]), str(confirm["deal"])
    code, out = await td(url, "confirm", "--table", table, "--deal", deal, "--by", "TD Ana",
                         token=None)  # fmt: skip
    assert code == 3 and out == ""
    assert ops(source)["disputes"]
    code, out = await td(
        url, "confirm", "--table", table, "--deal", deal, "--by", "TD Ana",
        "--reason", "the cards speak",
    )  # fmt: skip
    assert code == 0, out
    assert out.count("\n") == 1 and json.loads(out)["ok"] is True
    assert ops(source)["disputes"] == []
    entry = ops(source)["corrections"][-1]
    assert (entry["type"], entry["by"], entry["reason"]) == ("confirm", "TD Ana", "the cards speak")
    # confirmed twice: refused, the engine's code on the one line, exit 1
    code, out = await td(url, "confirm", "--table", table, "--deal", deal, "--by", "TD Ana")
    assert code == 1 and json.loads(out)["error"] == "not_disputed"
    code, out = await td(
        url, "void", "--table", table, "--deal", deal, "--by", "TD Ana", "--reason", "foreign card"
    )
    assert code == 0 and json.loads(out)["ok"] is True
    assert ops(source)["corrections"][-1]["type"] == "void"
    code, out = await td(
        url, "penalty", "--table", table, "--seat", "2", "--points", "1", "--by", "TD Bo",
        "--reason", "phone at the table",
    )  # fmt: skip
    assert code == 0, out
    assert ops(source)["penalties"][-1]["points"] == 1
    code, out = await td(
        url, "penalty", "--table", table, "--seat", "2", "--by", "TD Bo", "--reason", "none"
    )
    assert code == 1 and json.loads(out)["error"] == "bad_amount"
    code, out = await td(url, "roster", "--team", "ARG", "--colour", "blue", "--by", "TD Bo")
    assert code == 1 and "colour" in json.loads(out)["message"]
    code, out = await td("http://127.0.0.1:9", "void", "--table", table, "--deal", deal,
                         "--by", "X", "--reason", "y")  # fmt: skip
    assert code == 2 and json.loads(out)["error"] == "unreachable"
