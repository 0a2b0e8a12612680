"""The control API for control surfaces (issue #33 item 1, docs/companion.md) against a real hub
(role all, a programme delay set, part of the sample session played): every action over REST
with the operator token in a header, the flat state a Companion button reads, idempotency (the
same request twice is one effect; a stale If-Match changes nothing), refusals (no token, a
commentator's, the tally key on a command, a token in the URL), the programme rule (nothing a
control surface reads names an unreleased deal), and the Companion export's every request
checked against the hub's routes."""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.routing import Route

from hub.engine.families import FAMILIES
from hub.roles.embedded import OVERLAYS, IngestSource
from hub.serve.auth import Auth
from hub.serve.http import create_app, serve
from tests.hubharness import COMMENTATOR, OPERATOR
from tests.test_overlays_hub import HubThread

ROOT = Path(__file__).resolve().parent.parent
EXPORT = ROOT / "deploy" / "companion" / "duplicast.companionconfig"
TALLY = "test-tally-key-0123456789"
DELAY = 1.0
PLAYED = 1300  # events of the sample session: some deals released, others still at the tables
OP = {"Authorization": f"Bearer {OPERATOR}"}


class ControlHub(HubThread):
    """The hub with a tally key configured."""

    async def _start(self) -> None:
        from hub.engine.core import Engine

        tokens = Auth(COMMENTATOR, OPERATOR, (), TALLY)
        self.source = IngestSource(self.bus, Engine(self.config, self.decks), own_bus=False)
        app = create_app(
            self.source, overlays_dir=OVERLAYS, auth=tokens, metrics=self.source.metrics
        )
        self.server = await serve(app, "127.0.0.1", self.port)
        self.port = self.server.port


@pytest.fixture(scope="module")
def hub() -> Iterator[ControlHub]:
    h = ControlHub("ctl")
    h.config = dataclasses.replace(h.config, program_delay=DELAY)
    h.start()
    h.preload(PLAYED)
    yield h
    h.stop()


def post(hub: HubThread, action: str, body: Any = None, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{hub.url}/api/control/{action}", json=body, headers={**OP, **headers}, timeout=5
    )


def state(hub: HubThread, headers: dict[str, str] | None = None) -> dict[str, Any]:
    got = httpx.get(f"{hub.url}/api/control", headers=headers or OP, timeout=5)
    assert got.status_code == 200, got.text
    data: dict[str, Any] = got.json()
    assert data.pop("topic") == "control" and isinstance(data.pop("seq"), int)
    assert got.headers["etag"] == f'"{data["version"]}"'
    return data


def ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["ok"] is True
    return body


def command(hub: HubThread, cmd: dict[str, Any]) -> None:
    assert hub.source is not None
    answer = hub.run(hub.source.control(cmd))
    assert answer["ok"], answer


def released(hub: HubThread) -> tuple[list[int], list[int]]:
    rows = hub.ops()["release"]
    out = sorted(int(r["deal"]) for r in rows if r["released"])
    playing = {int(t["deal"]) for t in hub.ops()["tables"] if t["deal"] is not None}
    return out, sorted(playing - set(out))


def test_every_action_answers_the_flat_state(hub: ControlHub) -> None:
    done, _ = released(hub)
    assert done, "the sample session released a deal"
    command(
        hub, {"op": "cue", "action": "add", "slot": "seat", "value": {"seat": 2}, "label": "S2"}
    )
    command(
        hub,
        {
            "op": "cue",
            "action": "add",
            "slot": "compare",
            "value": {"deal": done[0], "seat": 3, "tables": [1, 2]},
        },
    )
    cues = [c["id"] for c in hub.ops()["cues"]]
    first = state(hub)
    assert all(not isinstance(v, dict | list) for v in first.values()), "flat: scalars only"

    got = ok(post(hub, "next"))
    assert (got["preview"], got["preview_cue"], got["cue_index"]) == ("seat", cues[0], 1)
    assert got["preview_text"] == "seat · seat 2" and got["next_cue"] == cues[1]
    got = ok(post(hub, "next"))
    assert got["preview_cue"] == cues[1] and got["preview_text"].startswith(
        f"compare · deal {done[0]}"
    )
    assert ok(post(hub, "next"))["preview_cue"] == cues[1], "the end of the list stays put"
    assert ok(post(hub, "previous"))["preview_cue"] == cues[0]
    assert ok(post(hub, "cue", {"cue": cues[1]}))["preview_cue"] == cues[1]

    got = ok(post(hub, "take"))
    assert got["compare"] is True and "compare" in got["onair"]
    slot = hub.rest("/api/onair", OPERATOR)["slots"]["compare"]
    assert (slot["deal"], slot["seat"], slot["tables"], slot["visible"]) == (
        done[0],
        3,
        [1, 2],
        True,
    )
    assert "cut" not in slot
    got = ok(post(hub, "cut"))
    assert hub.rest("/api/onair", OPERATOR)["slots"]["compare"]["cut"] is True
    assert ok(post(hub, "hide", {"slot": "compare"}))["compare"] is False
    assert ok(post(hub, "show", {"slot": "compare"}))["compare"] is True
    assert ok(post(hub, "undo"))["compare"] is False  # back to before the show
    assert (
        ok(post(hub, "preview", {"slot": "table", "value": {"table": 4}}))["preview_text"]
        == "table · table 4"
    )
    got = ok(post(hub, "clear"))
    assert (got["preview"], got["preview_cue"]) == ("", 0)
    assert post(hub, "take").json()["error"] == "not_allowed"

    got = ok(post(hub, "clock", {"action": "start"}))
    assert got["clock"] == "running"
    time.sleep(1.1)
    later = state(hub)
    assert later["clock_left"] < got["clock_left"] - 1, "a read counts a running clock down"
    left = ok(post(hub, "clock", {"action": "pause"}))["clock_left"]
    assert ok(post(hub, "clock", {"action": "adjust", "seconds": 60}))[
        "clock_left"
    ] == pytest.approx(left + 60, abs=0.01)
    assert state(hub)["clock"] == "paused"


def test_a_repeated_request_is_one_effect(hub: ControlHub) -> None:
    for seat in (5, 6, 1):
        command(hub, {"op": "cue", "action": "add", "slot": "seat", "value": {"seat": seat}})
    ok(post(hub, "cue", {"cue": hub.ops()["cues"][-3]["id"]}))
    before = state(hub)
    once = ok(post(hub, "next", **{"Idempotency-Key": "press-41"}))
    again = ok(post(hub, "next", **{"Idempotency-Key": "press-41"}))
    assert again["repeated"] is True and "repeated" not in once
    assert once["version"] == again["version"] == before["version"] + 1
    assert again["preview_cue"] == once["preview_cue"] == before["next_cue"], (
        "skipped one cue, not two"
    )
    # the same in the body (what a signed command carries)
    a = ok(post(hub, "previous", {"request": "press-42"}))
    b = ok(post(hub, "previous", {"request": "press-42"}))
    assert a["version"] == b["version"] and b["repeated"] is True

    # If-Match: made against the state read; a second press against the same read is stale
    now = state(hub)
    etag = f'"{now["version"]}"'
    moved = ok(post(hub, "next", **{"If-Match": etag}))
    stale = post(hub, "next", **{"If-Match": etag})
    assert stale.status_code == 412 and stale.json()["error"] == "stale"
    assert state(hub)["version"] == moved["version"] == now["version"] + 1
    assert state(hub)["preview_cue"] == moved["preview_cue"]


def test_refusals_without_the_operator_token(hub: ControlHub) -> None:
    before = state(hub)["version"]
    url = f"{hub.url}/api/control"
    assert httpx.post(f"{url}/next", timeout=5).status_code == 403  # no token: the public
    assert (
        httpx.post(
            f"{url}/next", headers={"Authorization": "Bearer wrong-token-xx"}, timeout=5
        ).status_code
        == 401
    )
    commentator = {"Authorization": f"Bearer {COMMENTATOR}"}
    assert httpx.post(f"{url}/next", headers=commentator, timeout=5).json()["error"] == "forbidden"
    assert httpx.get(url, headers=commentator, timeout=5).status_code == 403
    tally = {"Authorization": f"Bearer {TALLY}"}
    assert httpx.post(f"{url}/next", headers=tally, timeout=5).status_code == 401, (
        "the tally key reads only"
    )
    assert httpx.get(f"{hub.url}/api/ops", headers=tally, timeout=5).status_code == 401
    assert state(hub, tally)["version"] == before, "the tally key reads the state"
    in_url = httpx.get(url, params={"token": OPERATOR}, timeout=5)
    assert in_url.status_code == 400 and "header" in in_url.json()["message"]
    assert httpx.post(f"{url}/next", params={"token": OPERATOR}, timeout=5).status_code == 400
    assert post(hub, "hide", {}).json()["error"] == "bad_request"
    assert post(hub, "next", [1]).status_code == 400
    assert state(hub)["version"] == before, "nothing refused moved the desk"


def test_a_control_surface_never_reads_an_unreleased_deal(hub: ControlHub) -> None:
    _, held = released(hub)
    assert held, "a deal is in play and not released"
    deal = held[0]
    command(
        hub,
        {
            "op": "cue",
            "action": "add",
            "slot": "compare",
            "value": {"deal": deal, "seat": 4, "tables": [1]},
        },
    )
    cue = hub.ops()["cues"][-1]["id"]
    got = ok(post(hub, "cue", {"cue": cue}))
    assert (
        got["preview_text"] == "compare · deal not released" and got["preview_unreleased"] is True
    )
    got = ok(post(hub, "take"))
    assert hub.rest("/api/onair", OPERATOR)["slots"]["compare"]["deal"] == deal  # live: on air
    assert got["compare"] is False, "the programme shows nothing of it"
    for text in (
        json.dumps(got),
        httpx.get(
            f"{hub.url}/api/control", headers={"Authorization": f"Bearer {TALLY}"}, timeout=5
        ).text,
    ):
        assert not re.search(rf"deal {deal}\b", text), text
        assert f'"deal": {deal}' not in text
    assert got["feed"] == "program"


# -- the Companion export ------------------------------------------------------------------


def _routes(hub: HubThread) -> dict[str, set[str]]:
    assert hub.server is not None
    app = hub.server.server.config.app
    return {r.path: set(r.methods or ()) for r in app.routes if isinstance(r, Route)}


def _fill(text: str, variables: dict[str, str]) -> str:
    """``$(custom:NAME)`` filled in, as Companion does before it sends a request."""
    return re.sub(r"\$\(custom:([a-z_]+)\)", lambda m: variables[m.group(1)], text)


def _requests(export: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every generic-http action of the export (buttons' steps, triggers): (where, action)."""
    instance = next(
        k for k, v in export["instances"].items() if v["instance_type"] == "generic-http"
    )
    found = []
    for page in export["pages"].values():
        for row, cols in page["controls"].items():
            for col, control in cols.items():
                for step in control.get("steps", {}).values():
                    for actions in step["action_sets"].values():
                        found += [
                            (f"button {row}/{col}", a) for a in actions if a["instance"] == instance
                        ]
    for name, trigger in export.get("triggers", {}).items():
        found += [(f"trigger {name}", a) for a in trigger["actions"] if a["instance"] == instance]
    return found


def test_the_companion_export_makes_only_requests_the_hub_takes(hub: ControlHub) -> None:
    export = json.loads(EXPORT.read_text())
    assert export["version"] == 6 and export["type"] == "full"
    requests = _requests(export)
    routes = _routes(hub)
    control = FAMILIES["control"]
    actions = {f"{control.route}/{a.name}" for a in control.actions}
    posted = set()
    variables = {f"$(custom:{name})": name for name in export["custom_variables"]}
    for where, action in requests:
        options = action["options"]
        path = options["url"]
        assert "token" not in path.lower() and "?" not in path, f"{where}: no token in a URL"
        method = action["action"].upper()
        assert path in routes and method in routes[path], f"{where}: {method} {path} is no route"
        header = json.loads(options["header"])
        assert header["Authorization"] in (
            "Bearer $(custom:duplicast_operator_token)",
            "Bearer $(custom:duplicast_tally_key)",
        ), where
        assert all(
            v in variables for v in re.findall(r"\$\(custom:[a-z_]+\)", options["header"])
        ), where
        if method == "GET":
            assert path == control.route and "tally" in header["Authorization"], where
            assert (
                options["jsonResultDataVariable"] == "duplicast"
                and options["result_stringify"] is False
            )
            continue
        assert path in actions, f"{where}: {path} is not a control action"
        assert "operator" in header["Authorization"], where
        assert options["contenttype"] == "application/json", where
        body = json.loads(options["body"]) if options["body"].strip() else {}
        [shape] = [a.shape for a in control.actions if a.name == path.rsplit("/", 1)[1]]
        command, why = shape(body)
        assert command is not None, f"{where}: {why}"
        posted.add(path)
        # each request as Companion sends it (its variables as the tally poll left them) is
        # taken by the hub
        filled = {
            "duplicast_operator_token": OPERATOR,
            "duplicast_tally_key": TALLY,
            "duplicast_version": str(state(hub)["version"]),
        }
        real = {k: _fill(v, filled) for k, v in header.items()}
        real["Content-Type"] = "application/json"
        answer = httpx.post(hub.url + path, content=json.dumps(body), headers=real, timeout=5)
        assert answer.status_code in (200, 400), f"{where}: {answer.text}"
        if answer.status_code == 400:  # (a take with nothing in preview, an empty cue list)
            assert answer.json()["error"] in ("not_allowed",), f"{where}: {answer.text}"
    assert {
        "/api/control/take",
        "/api/control/cut",
        "/api/control/next",
        "/api/control/previous",
        "/api/control/undo",
        "/api/control/clock",
    } <= posted
    # tally: every slot's button has a feedback on the polled state
    feedbacks = [
        f
        for page in export["pages"].values()
        for cols in page["controls"].values()
        for c in cols.values()
        for f in c.get("feedbacks", [])
    ]
    # what the tally variable holds: the poll's answer, or a button's (the same fields at the top)
    polled = httpx.get(
        f"{hub.url}/api/control", headers={"Authorization": f"Bearer {TALLY}"}, timeout=5
    )
    pressed = post(hub, "clear").json()
    fields = set(polled.json()) & set(pressed)
    assert fields >= set(state(hub))
    for feedback in feedbacks:
        expression = feedback["options"]["expression"]
        for path in re.findall(r"jsonpath\(\$\(custom:duplicast\), '\$\.([a-z_]+)'\)", expression):
            assert path in fields, f"feedback reads {path}, not a field of the state"
    assert {"leaderboard", "seat", "table", "compare", "ticker"} <= {
        p for f in feedbacks for p in re.findall(r"'\$\.([a-z_]+)'", f["options"]["expression"])
    }


# -- the desk's side, without a server -------------------------------------------------------


def test_the_preview_version_and_request_ids_survive_a_snapshot_and_a_replay() -> None:
    from hub.engine.core import Engine
    from tests.hubharness import unique_tournament

    config, decks = unique_tournament("ctlsnap")
    engine = Engine(config, decks)
    records = []
    for i, cmd in enumerate(
        [
            {"op": "cue", "action": "add", "slot": "seat", "value": {"seat": 2}},
            {"op": "cue", "action": "add", "slot": "table", "value": {"table": 3}},
            {"op": "preview", "action": "next", "request": "r1"},
            {"op": "preview", "action": "next", "request": "r2", "expect": 3},
            {"op": "take", "cut": True, "request": "r3"},
        ]
    ):
        out = engine.control(cmd, float(i))
        assert out.ok, out.ack
        records.append(out.record)
    assert engine.control({"op": "preview", "action": "next", "request": "r2"}, 9.0).ack == {
        "ok": True,
        "repeated": True,
    }
    stale = engine.control({"op": "preview", "action": "previous", "expect": 3}, 9.0)
    assert stale.code == "stale" and engine.desk.version == 5
    assert engine.desk.onair["slots"]["table"] == {"table": 3, "visible": True, "cut": True}

    def same(other: Engine) -> None:
        assert (
            other.desk.preview
            == engine.desk.preview
            == {
                "slot": "table",
                "value": {"table": 3},
                "cue": 2,
            }
        )
        assert other.desk.version == 5 and list(other.desk.requests) == ["r1", "r2", "r3"]
        assert other.desk.seen("r3") and other.desk.onair == engine.desk.onair

    replayed = Engine(config, decks)
    for record in records:
        replayed.restore(record)
    same(replayed)
    restored = Engine(config, decks)
    restored.restore_snapshot(engine.snapshot())
    same(restored)


def test_a_signed_command_keeps_its_request_and_expect() -> None:
    """Through an edge the ingest reads the command from the signed text alone
    (``operator_command``): the new ops and the idempotency fields survive it."""
    from hub.serve.commands import operator_command

    for request in (
        {"op": "preview", "action": "cue", "cue": 4, "request": "k", "expect": 7},
        {"op": "take", "cut": True, "request": "k", "expect": 7},
        {"op": "onair", "slot": "seat", "value": {"visible": False}, "request": "k", "expect": 7},
        {"op": "clock", "action": "adjust", "seconds": 60, "request": "k", "expect": 7},
        {"op": "undo_take", "request": "k", "expect": 7},
    ):
        assert operator_command(request) == (request, "")


def test_a_weak_or_reused_tally_key_is_refused_and_it_comes_from_the_environment() -> None:
    from hub.serve.auth import TALLY_TOKEN_ENV, weak_tokens

    good, other = "kq3Z-vYp8_Lw2mXc7RtB9sHd", "Zr7Q-mWp2_Xv9sLk4TcB8nHe"
    assert Auth.from_env({TALLY_TOKEN_ENV: good}).tally(good)
    assert not Auth.from_env({TALLY_TOKEN_ENV: good}).tally(other)
    assert not Auth.from_env({}).tally(good) and not Auth().tally(None)
    assert weak_tokens(Auth(tally_token="short")) == [
        f"{TALLY_TOKEN_ENV} is shorter than 16 characters"
    ]
    assert weak_tokens(Auth(None, good, (), good)) == [
        f"{TALLY_TOKEN_ENV} is another role's token too"
    ]
    assert weak_tokens(Auth(good, other, (), "Mn5R-wQz3_Yb8tKp6VdC2xJf")) == []
    # the key opens the state and nothing else: it is no role
    assert Auth(None, other, (), good).role_for(good) is None


def test_the_same_commands_on_the_operators_websocket(hub: ControlHub) -> None:
    from websockets.sync.client import connect

    with connect(f"ws://127.0.0.1:{hub.port}/ws?token={OPERATOR}") as ws:
        assert json.loads(ws.recv(timeout=5))["type"] == "hello"

        def say(message: dict[str, Any]) -> dict[str, Any]:
            ws.send(json.dumps(message))
            answer: dict[str, Any] = json.loads(ws.recv(timeout=5))
            return answer

        pick = {"op": "preview", "action": "set", "slot": "seat", "value": {"seat": 3}}
        assert say({**pick, "request": "ws-1"}) == {"type": "ok", "op": "preview"}
        assert say({**pick, "request": "ws-1"}) == {"type": "ok", "op": "preview", "repeated": True}
        version = state(hub)["version"]
        stale = say({"op": "take", "expect": version - 1})
        assert (stale["type"], stale["code"], stale["op"]) == ("error", "stale", "take")
        assert say({"op": "take", "expect": version}) == {"type": "ok", "op": "take"}
    got = state(hub)
    assert (
        got["version"] == version + 1
        and got["seat"] is True
        and got["seat_text"] == "seat · seat 3"
    )
