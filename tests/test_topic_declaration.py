"""A topic family is one declaration (issue #31 item 1): a family declared here, in a test, and
added to ``hub.engine.families.FAMILIES`` is a topic of the hub with no other edit: its keys
(``TopicKeys``), the engine's routing and builder, the subscription checks (websocket and the
check of a name of any tournament), its REST route and the hub's list of topics
(``GET /api/topics``) all read it. The existing families' facts are read from their
declarations too: the program feed's, the embargo's and the REST routes'."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from playwright.sync_api import Page

from hub.bus.memory import MemoryBus
from hub.domain.states import Role
from hub.engine.changes import ActionApplied, HandSettled, HandStarted
from hub.engine.core import Engine
from hub.engine.families import FAMILIES, Family, Reading, TopicKeys, topic_space
from hub.engine.families.base import CADENCE
from hub.engine.program import is_now, source_of
from hub.serve.auth import check_topic
from hub.wire.signing import session_proof
from hub.wire.topics import LIVE, OWN, PROGRAM, PUBLIC, TopicKey
from tests.hubharness import COMMENTATOR, ingest_hub, unique_tournament
from tests.test_overlays_hub import HubThread


def toy_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    return [k[LIVE]["toy"][event.table]]


def toy_build(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    table = read.engine.state.tables[args[0]]
    return {"table": args[0], "audience": audience, "group": table.group}


TOY = Family(
    "toy",
    (HandStarted, ActionApplied, HandSettled),
    toy_keys,
    toy_build,
    params=("table",),
    audiences=(PUBLIC, LIVE),
    role=Role.COMMENTATOR,
    route="/api/toys/{table:int}",
    delta="replace of the fields that moved",
    console=OWN,
)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Family]:
    monkeypatch.setitem(FAMILIES, "toy", TOY)
    yield TOY


def test_a_declared_family_has_keys_topics_checks_and_a_builder(toy: Family) -> None:
    config, decks = unique_tournament("toy")
    table = config.tables[0]
    keys = TopicKeys(config, FAMILIES)
    assert keys[LIVE]["toy"][table] == (LIVE, f"toy:{table}")
    space = topic_space(config)
    assert f"toy:{table}" in space and "toy" not in space
    assert space.check("public", f"toy:{table}") == check_topic("public", f"toy:{table}")
    assert space.check("public", f"toy:{table}") == "forbidden"
    assert space.check("commentator", f"toy:{table}") is None
    assert space.check("console", f"toy:{table}", table) is None  # its own table's
    assert space.check("console", f"toy:{table}", table + 1) == "forbidden"
    engine = Engine(config, decks, program=False)
    assert engine.payload((LIVE, f"toy:{table}")) == {
        "table": table,
        "audience": LIVE,
        "group": engine.state.tables[table].group,
    }
    route = engine.projecting.projections.route(HandStarted(table, 1))[0]
    assert (LIVE, f"toy:{table}") in route


async def test_a_declared_family_is_served_over_rest_and_websocket(toy: Family) -> None:
    config, decks = unique_tournament("toy")
    table = config.tables[0]
    async with ingest_hub(MemoryBus(), config, decks) as (_, server):
        async with httpx.AsyncClient(base_url=server.url) as http:
            listed = (await http.get("/api/topics")).json()["topics"]
            facts = {f["name"]: f for f in listed}
            assert list(facts) == list(FAMILIES)
            assert facts["toy"] == {
                "name": "toy",
                "pattern": "toy:{table}",
                "params": ["table"],
                "audiences": [PUBLIC, LIVE],
                "role": "commentator",
                "console": OWN,
                "route": "/api/toys/{table:int}",
                "delta": "replace of the fields that moved",
                "cadence": 0.0,
            }
            assert facts["projection"]["cadence"] == facts["stats"]["cadence"] == CADENCE
            r = await http.get(f"/api/toys/{table}")
            assert r.status_code == 403
            assert r.json()["message"] == (
                f"topic toy:{table} needs the commentator or operator role"
            )
            r = await http.get(f"/api/toys/{table}?token={COMMENTATOR}")
            assert r.status_code == 200, r.text
            assert r.json()["data"]["table"] == table
            assert (await http.get(f"/api/toys/{table}?token={COMMENTATOR}&x=1")).status_code == 200
        url = f"{server.ws_url}?format=json&token={session_proof(COMMENTATOR)}"
        async with websockets.connect(url) as ws:
            assert json.loads(await ws.recv())["role"] == "commentator"
            await ws.send(json.dumps({"op": "subscribe", "topics": [f"toy:{table}"]}))
            snap = json.loads(await ws.recv())
            assert snap["type"] == "snapshot" and snap["topic"] == f"toy:{table}"
            assert snap["data"]["audience"] == LIVE
        async with websockets.connect(f"{server.ws_url}?format=json") as ws:
            assert json.loads(await ws.recv())["role"] == "public"
            await ws.send(json.dumps({"op": "subscribe", "topics": [f"toy:{table}"]}))
            refused = json.loads(await ws.recv())
            assert refused["code"] == "forbidden"
            assert refused["message"] == f"topic toy:{table} needs a commentator or operator token"


def test_the_program_and_the_embargo_read_the_declarations() -> None:
    config, _ = unique_tournament("toy")
    space = topic_space(config)
    on_program = {f.name for f in FAMILIES.values() if PROGRAM in f.audiences}
    assert on_program == {
        "standings",
        "seat",
        "table",
        "deal",
        "compare",
        "onair",
        "ticker",
        "clock",
        "stats",
        "dealstats",
        "released",
    }
    sources = {t.family.name: source_of(t) for t in space}
    held = {"table", "deal", "compare", "dealstats"}
    assert {n for n, s in sources.items() if s == LIVE} == held
    aggregates = {"standings", "seat", "ticker", "stats", "released"}
    assert {n for n, s in sources.items() if s == PUBLIC} == aggregates
    assert {t.family.name for t in space if is_now(space, t.name)} == {"onair", "clock"}
    assert {f.name for f in FAMILIES.values() if f.held} == held
    assert {f.name for f in FAMILIES.values() if f.embargo} == {"deal", "compare", "dealstats"}
    with pytest.raises(ValueError, match="program"):
        Family("bad", (), toy_keys, toy_build, audiences=(PUBLIC, PROGRAM))


def test_the_browser_builds_topic_names_from_the_hub_s_list(toy: Family, page: Page) -> None:
    """The overlays' ``js/topics.js`` reads the families the hub serves: the toy family declared
    here is one a page can name and subscribe to (Chromium, a real hub), and a name the hub
    does not serve is refused in the page, not sent."""
    hub = HubThread("toy")
    hub.start()
    try:
        table = hub.config.tables[0]
        page.goto(f"{hub.url}/overlays/index.html")
        got = page.evaluate(
            """async (table) => {
            const t = await import('./js/topics.js');
            let refused = null;
            try { t.topic('nope'); } catch (err) { refused = err.message; }
            return [t.topic('toy', table), t.topic('compare', 3, 5), t.family('toy').role,
              t.parseTopic('toy', `toy:${table}`), refused, Object.keys(t.FAMILIES)];
        }""",
            table,
        )
        assert got == [
            f"toy:{table}",
            "compare:3:5",
            "commentator",
            {"table": table},
            'the hub serves no topic family "nope"',
            list(FAMILIES),
        ]
    finally:
        hub.stop()


def test_the_protocol_documents_every_declared_route() -> None:
    """docs/protocol.md's REST table has a row for every family's route, and a POST row for a
    route that takes an operator command (``Family.command``), read from the declarations."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text()
    for fam in FAMILIES.values():
        if fam.route is None:
            continue
        path = re.sub(r"\\\{[a-z]+:int\\\}", r"\\{[a-z]+\\}", re.escape(fam.route))
        for method in ("GET", *(("POST",) if fam.command else ())):
            row = re.compile(rf"^\| `{method} {path}` \|", re.MULTILINE)
            assert row.search(text), f"docs/protocol.md: no row for {method} {fam.route}"
        if fam.actions:  # a control surface's commands: one row names them all
            row = re.compile(rf"^\| `POST {path}/{{action}}` \|(.*)$", re.MULTILINE)
            found = row.search(text)
            assert found, f"docs/protocol.md: no row for POST {fam.route}/{{action}}"
            for action in (a.name for a in fam.actions):
                assert f"`{action}`" in found.group(1), f"docs/protocol.md: no {action}"


def hand_made_names(path: Path) -> list[str]:
    """Where ``path`` puts a topic name of a family with parameters together by hand (an
    f-string or a text starting ``deal:``, ``compare:``...), rather than from the family's
    declaration (``topic_name``, ``Family.name_of``)."""
    heads = tuple(f"{name}:" for name, fam in FAMILIES.items() if fam.params)
    found: dict[str, None] = {}  # (an f-string's head is a text of its own too: once)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        text = node.value if isinstance(node, ast.Constant) else None
        if isinstance(text, str) and text.startswith(heads) and len(text) < 40:
            found[f"{path.name}:{node.lineno} {text!r}"] = None
    return sorted(found)


def test_no_module_of_the_hub_spells_a_topic_name() -> None:
    """The site, the roles and the services name a topic through its family's declaration
    (``topic_name("compare", d, s)``): only the declarations and the wire's topic space
    put names together."""
    hub = Path(__file__).resolve().parent.parent / "hub"
    declared = {hub / "wire" / "topics.py", *(hub / "engine" / "families").glob("*.py")}
    found = [f for p in sorted(hub.rglob("*.py")) if p not in declared for f in hand_made_names(p)]
    assert not found, "\n".join(found)


def test_the_check_sees_a_topic_name_spelled(tmp_path: Path) -> None:
    path = tmp_path / "site.py"
    path.write_text('a = f"compare:{d}:{s}"\nb = "deal:3"\nc = "standings"\nd = f"x deal:{d}"\n')
    assert hand_made_names(path) == ["site.py:1 'compare:'", "site.py:2 'deal:3'"]
