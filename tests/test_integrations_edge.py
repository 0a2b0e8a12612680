"""The production's tools through the one address a crew has (issue #33, docs/overlays.md): the
shipped deploy/nginx.conf in front of two real edges (``duplicast proofs`` only) and a real
ingest (the tokens, the tally key, the playout key), on a Redis loaded with the ACL file of
``duplicast acl``, after most of the sample session was played (deals released, others still
at the tables, delta tails on every topic), with a 2 s programme delay.

Through nginx: every control action with the operator token in a header (answered by the
ingest: an edge cannot take an unsigned command), a retried press applied once, the tally read
with the tally key (served by the edges), the vMix sources in JSON and XML with
``feed=program`` naming no unreleased deal, a playout's report with its key, and every request
of the Companion export as Companion sends it. One set of processes for the module."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import httpx
import pytest
from websockets.sync.client import connect

from hub.engine.families import FAMILIES
from hub.serve.datasources import source_path
from hub.wire.datasources import SOURCES
from hub.wire.signing import is_proof, session_proof, signed_command
from tests.nginx import Nginx, free_port
from tests.redis_server import RedisServer
from tests.test_control_api import EXPORT, _fill, _requests

pytestmark = [pytest.mark.redis]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
SESSION = ROOT / "samples" / "ifp6-session.jsonl"
PLAYED = 1300  # events of the sample session: deals released, others still at the tables
DELAY = 2  # seconds: [broadcast] delay, the programme
COMMENTATOR = "Hq7Z-vYp8_Lw2mXc7RtB9sHd-commentator"
OPERATOR = "Hq7Z-vYp8_Lw2mXc7RtB9sHd-operator"
TALLY = "Tz4K-wQm2_Xc8vLp5RbN7sJd-tally"
PLAYOUT = "Pk9D-rTx3_Vb6mNq2LcW8zHf-playout"
OP = {"Authorization": f"Bearer {OPERATOR}"}
TALLY_HEADERS = {"Authorization": f"Bearer {TALLY}"}


@dataclass
class Site:
    lb: Nginx
    edges: list[str]  # each edge's own base URL (the tests read through nginx)
    http: httpx.Client  # base URL: nginx
    rest: list[str]  # the `duplicast console replay` of the session's remaining events
    env: dict[str, str]  # (its environment: the Redis URL of the consoles' replay)

    def play_rest(self, log: Path) -> subprocess.Popen[bytes]:
        """The session's remaining events, replayed by a console process started now."""
        return subprocess.Popen(
            [sys.executable, "-m", "hub", *self.rest],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=log.open("wb"),
        )


def _serve(role: str, config: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``duplicast serve --role ROLE`` started (its Redis URL in the environment): ``_ready``
    waits until it serves (so the processes start side by side)."""
    command = [sys.executable, "-m", "hub", "serve", "--role", role, "--config", str(config)]
    with log.open("wb") as out:
        return subprocess.Popen(
            [*command, "--port", env["PORT"]],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _ready(process: subprocess.Popen[bytes], role: str, log: Path) -> None:
    deadline = time.monotonic() + 60
    while f"duplicast {role} for" not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"serve --role {role}: {log.read_text()[-2000:]}")
        time.sleep(0.1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End a process this module started, by its pid."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hub", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("integrations")
    config = tmp / "event.toml"
    config.write_text(SAMPLE.read_text() + f"\n[broadcast]\ndelay = {DELAY}\n")
    base = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    tokens = {
        "DUPLICAST_COMMENTATOR_TOKEN": COMMENTATOR,
        "DUPLICAST_OPERATOR_TOKEN": OPERATOR,
        "DUPLICAST_TALLY_TOKEN": TALLY,
    }
    port = free_port()
    acl, creds = tmp / "users.acl", tmp / "creds.txt"
    made = _run(
        ["acl", "--config", str(config), "--out", str(acl), "--credentials-out", str(creds),
         "--host", f"127.0.0.1:{port}"],
        base,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    urls = dict(line.split() for line in creds.read_text().splitlines() if line[:1] != "#")
    # what compose gives an edge: the lines `duplicast proofs` prints, the tally key's too
    proofs = _run(["proofs"], {**base, **tokens})
    assert proofs.returncode == 0, proofs.stderr
    edge_auth = dict(line.split("=", 1) for line in proofs.stdout.splitlines())
    assert set(edge_auth) == set(tokens) and all(map(is_proof, edge_auth.values()))
    processes: list[subprocess.Popen[bytes]] = []
    with RedisServer(tmp / "redis", port=port, extra=("--aclfile", str(acl))):
        try:
            ingest_port = str(free_port())
            ingest_env = {**base, **tokens, "DUPLICAST_PLAYOUT_KEY": PLAYOUT}
            ingest_env |= {"DUPLICAST_REDIS_URL": urls["duplicast-ingest"], "PORT": ingest_port}
            logs = {"ingest": tmp / "ingest.log"}
            processes.append(_serve("ingest", config, ingest_env, logs["ingest"]))
            edges = []
            for name in ("edge1", "edge2"):
                edge_port = str(free_port())
                edge_env = {**base, **edge_auth, "DUPLICAST_TRUSTED_PROXIES": "127.0.0.1"}
                edge_env |= {"DUPLICAST_REDIS_URL": urls["duplicast-edge"], "PORT": edge_port}
                logs[name] = tmp / f"{name}.log"
                processes.append(_serve("edge", config, edge_env, logs[name]))
                edges.append(f"127.0.0.1:{edge_port}")
            for process, (name, log_path) in zip(processes, logs.items(), strict=True):
                _ready(process, "ingest" if name == "ingest" else "edge", log_path)
            log = tmp / "session.jsonl"
            lines = SESSION.read_text().splitlines(keepends=True)
            log.write_text("".join(lines[:PLAYED]))
            consoles = {**base, "DUPLICAST_REDIS_URL": urls["duplicast-ingest"]}
            played = _run(["console", "replay", "--tournament", "ifp-demo", str(log)], consoles)
            assert played.returncode == 0, played.stderr
            rest = tmp / "rest.jsonl"
            rest.write_text("".join(lines[PLAYED:]))
            replay_rest = ["console", "replay", "--tournament", "ifp-demo", str(rest)]
            upstreams = {"edge1:8000": edges[0], "edge2:8000": edges[1]}
            upstreams["ingest:8000"] = f"127.0.0.1:{ingest_port}"
            with (
                Nginx(tmp / "nginx", upstreams) as lb,
                httpx.Client(base_url=lb.url, timeout=10) as http,
            ):
                yield Site(lb, [f"http://{e}" for e in edges], http, replay_rest, consoles)
        finally:
            for process in reversed(processes):
                _stop(process)


# -- helpers ----------------------------------------------------------------------------------


def ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["ok"] is True
    return body


def press(site: Site, action: str, body: Any = None, **headers: str) -> httpx.Response:
    """A control surface's button: ``POST /api/control/{action}`` through nginx."""
    return site.http.post(f"/api/control/{action}", json=body, headers={**OP, **headers})


def tally(site: Site, at_least: int = 0, until: Any = None) -> dict[str, Any]:
    """``GET /api/control`` with the tally key through nginx (an edge answers), once the
    edge's desk is at version ``at_least`` and ``until(state)`` holds (a button's answer is
    the ingest's; the edges follow the feed)."""
    deadline = time.monotonic() + 10
    while True:
        got = site.http.get("/api/control", headers=TALLY_HEADERS)
        assert got.status_code == 200, got.text
        data: dict[str, Any] = got.json()
        if data["version"] >= at_least and (until is None or until(data)):
            assert data.pop("topic") == "control" and isinstance(data.pop("seq"), int)
            assert got.headers["etag"] == f'"{data["version"]}"'
            assert got.headers["cache-control"] == "no-store"
            return data
        assert time.monotonic() < deadline, (data, at_least)
        time.sleep(0.05)


def desk(site: Site, command: dict[str, Any]) -> dict[str, Any]:
    """An operator's desk command as the operator page sends it: signed, on the websocket,
    through nginx and an edge (its proof in the URL, the token never sent)."""
    with connect(f"{site.lb.ws_url}?token={session_proof(OPERATOR)}") as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "hello"
        ws.send(json.dumps(signed_command(OPERATOR, command)))
        while True:
            answer: dict[str, Any] = json.loads(ws.recv(timeout=10))
            if answer.get("type") in ("ok", "error"):
                assert answer["type"] == "ok", answer
                return answer


def on_air(site: Site, until: Any) -> dict[str, Any]:
    """The live ``onair`` slots (the operator's read, from an edge) once ``until(slots)``."""
    deadline = time.monotonic() + 10
    while True:
        got = site.http.get("/api/onair", headers=OP)
        assert got.status_code == 200, got.text
        slots: dict[str, Any] = got.json()["data"]["slots"]
        if until(slots):
            return slots
        assert time.monotonic() < deadline, slots
        time.sleep(0.05)


def ops(site: Site) -> dict[str, Any]:
    got = site.http.get("/api/ops", headers=OP)
    assert got.status_code == 200, got.text
    data: dict[str, Any] = got.json()["data"]
    return data


def released(site: Site) -> tuple[list[int], list[int]]:
    """The deals released, and those played at some table and not released (the live ops)."""
    now = ops(site)
    done = sorted(int(r["deal"]) for r in now["release"] if r["released"])
    playing = {int(t["deal"]) for t in now["tables"] if t["deal"] is not None}
    return done, sorted(playing - set(done))


def add_cue(site: Site, slot: str, value: dict[str, Any]) -> int:
    """A cue added by the operator page (signed, through an edge); its id, once the edges
    have it (they follow the feed)."""
    had = {c["id"] for c in ops(site)["cues"]}
    desk(site, {"op": "cue", "action": "add", "slot": slot, "value": value})
    deadline = time.monotonic() + 10
    while not (new := [c for c in ops(site)["cues"] if c["id"] not in had]):
        assert time.monotonic() < deadline, "the edges never had the new cue"
        time.sleep(0.05)
    assert new[-1]["slot"] == slot and new[-1]["value"] == value, new
    return int(new[-1]["id"])


# -- the tests --------------------------------------------------------------------------------


def test_every_control_action_through_nginx(site: Site) -> None:
    done, _ = released(site)
    assert done, "the played session released a deal"
    seat = add_cue(site, "seat", {"seat": 2})
    split = add_cue(site, "compare", {"deal": done[0], "seat": 3, "tables": [1, 2]})
    before = tally(site)
    assert all(not isinstance(v, dict | list) for v in before.values()), "flat: scalars only"
    assert before["feed"] == "program"

    assert ok(press(site, "cue", {"cue": seat}))["preview_cue"] == seat
    got = ok(press(site, "next"))
    assert (got["preview"], got["preview_cue"]) == ("compare", split)
    assert got["preview_text"].startswith(f"compare · deal {done[0]}")
    assert ok(press(site, "previous"))["preview_cue"] == seat
    assert ok(press(site, "cue", {"cue": split}))["preview_cue"] == split
    got = ok(press(site, "take"))
    assert got["compare"] is True and "compare" in got["onair"]
    assert tally(site, got["version"])["compare"] is True, "the edges' tally follows"
    ok(press(site, "cut"))
    slot = on_air(site, lambda slots: slots["compare"].get("cut"))["compare"]
    assert (slot["deal"], slot["seat"], slot["tables"], slot["cut"]) == (done[0], 3, [1, 2], True)
    assert ok(press(site, "hide", {"slot": "compare"}))["compare"] is False
    assert ok(press(site, "show", {"slot": "compare"}))["compare"] is True
    assert ok(press(site, "undo"))["compare"] is False  # back to before the show
    got = ok(press(site, "preview", {"slot": "table", "value": {"table": 4}}))
    assert got["preview_text"] == "table · table 4"
    assert ok(press(site, "clear"))["preview"] == ""

    got = ok(press(site, "clock", {"action": "start"}))
    assert got["clock"] == "running"
    left = ok(press(site, "clock", {"action": "pause"}))["clock_left"]
    got = ok(press(site, "clock", {"action": "adjust", "seconds": 60}))
    assert got["clock_left"] == pytest.approx(left + 60, abs=0.01)
    after = tally(site, got["version"])
    assert (after["clock"], after["clock_left"]) == ("paused", got["clock_left"])


def test_a_retried_press_is_one_effect(site: Site) -> None:
    for seat in (5, 6):
        add_cue(site, "seat", {"seat": seat})
    first = ops(site)["cues"][0]["id"]
    before = tally(site, ok(press(site, "cue", {"cue": first}))["version"])
    once = ok(press(site, "next", **{"Idempotency-Key": "deck-press-7"}))
    again = ok(press(site, "next", **{"Idempotency-Key": "deck-press-7"}))
    assert again["repeated"] is True and "repeated" not in once
    assert once["version"] == again["version"] == before["version"] + 1
    assert again["preview_cue"] == once["preview_cue"] == before["next_cue"], "one cue, not two"
    # If-Match: the version the tally read; a second press against the same read is stale
    now = tally(site, once["version"])
    moved = ok(press(site, "next", **{"If-Match": f'"{now["version"]}"'}))
    stale = press(site, "next", **{"If-Match": f'"{now["version"]}"'})
    assert stale.status_code == 412 and stale.json()["error"] == "stale"
    assert tally(site, moved["version"])["version"] == moved["version"]


def test_what_is_refused_through_nginx(site: Site) -> None:
    before = tally(site)["version"]
    assert site.http.post("/api/control/next").status_code == 403  # no token: the public
    wrong = site.http.post("/api/control/next", headers={"Authorization": "Bearer nope-nope-1"})
    assert wrong.status_code == 401
    commentator = {"Authorization": f"Bearer {COMMENTATOR}"}
    assert site.http.post("/api/control/next", headers=commentator).status_code == 403
    assert site.http.get("/api/control", headers=commentator).status_code == 403
    assert site.http.post("/api/control/next", headers=TALLY_HEADERS).status_code == 401
    # the proof every edge holds is no way to write: unsigned, it is refused everywhere
    proof = {"Authorization": f"Bearer {session_proof(OPERATOR)}"}
    refused = site.http.post("/api/control/next", headers=proof)
    assert refused.status_code == 403 and refused.json()["error"] == "unsigned"
    # a token in a URL never works
    assert site.http.get("/api/control", params={"token": OPERATOR}).status_code == 400
    assert site.http.post("/api/control/next", params={"token": OPERATOR}).status_code == 400
    # an edge itself takes no unsigned command (why nginx sends these to the ingest)
    for edge in site.edges:
        got = httpx.post(f"{edge}/api/control/next", headers=OP, timeout=10)
        assert got.status_code == 400 and got.json()["error"] == "unsigned", got.text
    assert tally(site)["version"] == before, "nothing refused moved the desk"
    access = site.lb.access_log()
    assert "POST /api/control/next" in access
    for secret in (OPERATOR, TALLY, PLAYOUT, session_proof(OPERATOR)):
        assert secret not in access


def test_a_control_surface_reads_no_unreleased_deal(site: Site) -> None:
    _, held = released(site)
    assert held, "a deal is at the tables and not released"
    deal = held[0]
    cue = add_cue(site, "compare", {"deal": deal, "seat": 4, "tables": [1]})
    got = ok(press(site, "cue", {"cue": cue}))
    assert got["preview_text"] == "compare · deal not released" and got["preview_unreleased"]
    got = ok(press(site, "take"))
    on_air(site, lambda slots: slots["compare"].get("deal") == deal)  # live: on air
    assert got["compare"] is False, "the programme shows nothing of it"
    read = site.http.get("/api/control", headers=TALLY_HEADERS).text
    for text in (json.dumps(got), read):
        assert not re.search(rf"deal {deal}\b", text) and f'"deal": {deal}' not in text, text
    ok(press(site, "undo"))


def _vmix(name: str, fmt: str, **args: int) -> str:
    path = source_path(SOURCES[name])
    for param, value in args.items():
        path = path.replace(f"{{{param}:int}}", str(value))
    return f"{path}.{fmt}"


def _rows(response: httpx.Response, fmt: str) -> list[dict[str, str]]:
    assert response.status_code == 200, response.text
    if fmt == "json":
        rows: list[dict[str, str]] = response.json()
        return rows
    root = ElementTree.fromstring(response.content)  # (raises on anything not well-formed)
    return [{c.tag: c.text or "" for c in item} for item in root]


def test_vmix_sources_on_the_programme_name_no_unreleased_deal(site: Site) -> None:
    program = {"feed": "program"}
    deals = range(1, 13)
    shown, leaks = 0, list[tuple[str, object]]()
    for fmt in ("json", "xml"):
        for deal in deals:
            got = site.http.get(_vmix("compare", fmt, deal=deal, seat=1), params=program)
            rows = _rows(got, fmt)
            assert got.headers["cache-control"] == "max-age=1" and got.headers["etag"]
            if rows and deal not in released(site)[0]:  # (released is for ever: asked after)
                leaks.append((fmt, deal))
            shown += bool(rows)
        ticker = _rows(site.http.get(_vmix("ticker", fmt), params=program), fmt)
        done = released(site)[0]
        leaks += [
            (fmt, r["Deal.Text"])
            for r in ticker
            if r["Deal.Text"] and int(r["Deal.Text"]) not in done
        ]
        board = _rows(site.http.get(_vmix("leaderboard", fmt), params=program), fmt)
        assert len(board) == 6 and all("Name.Text" in r for r in board)
    assert shown > 0 and not leaks, leaks
    # a poll with the ETag it has is a 304, no body (through nginx as from an edge)
    first = site.http.get(_vmix("leaderboard", "json"), params=program)
    again = site.http.get(
        _vmix("leaderboard", "json"),
        params=program,
        headers={"If-None-Match": first.headers["etag"]},
    )
    assert again.status_code == 304 and again.content == b""
    assert site.http.get(_vmix("leaderboard", "json"), params={"token": TALLY}).status_code == 400


def test_a_playout_reports_through_nginx(site: Site) -> None:
    done, _ = released(site)
    params = {"deal": done[-1], "seat": 2}
    body: dict[str, Any] = {
        "tool": "casparcg",
        "page": "compare",
        "state": "play",
        "params": params,
    }
    key = {"X-Duplicast-Playout-Key": PLAYOUT}
    before = tally(site)
    assert site.http.post("/api/playout", json=body).status_code == 401
    wrong = site.http.post("/api/playout", json=body, headers={"X-Duplicast-Playout-Key": TALLY})
    assert wrong.status_code == 401
    assert site.http.post("/api/playout", json=body, params={"key": PLAYOUT}).status_code == 400
    assert site.http.post("/api/playout", json=body, headers=OP).status_code == 401
    # the template's page, served by the hub, asks first (CORS preflight), then reports
    origin = {"Origin": site.lb.url}
    preflight = site.http.options(
        "/api/playout",
        headers={**origin, "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type, x-duplicast-playout-key"},
    )  # fmt: skip
    assert preflight.status_code == 204, preflight.text
    assert preflight.headers["access-control-allow-origin"] == site.lb.url
    assert ok(site.http.post("/api/playout", json=body, headers={**key, **origin}))
    shown = tally(site, until=lambda s: s["playout"] == before["playout"] + 1)
    assert f"compare · deal {done[-1]}" in shown["playout_text"]
    assert "CasparCG" in shown["playout_text"]
    ok(site.http.post("/api/playout", json={**body, "state": "stop"}, headers=key))
    tally(site, until=lambda s: s["playout"] == before["playout"])


def test_the_companion_export_replayed_against_nginx(site: Site) -> None:
    """Every request of deploy/companion/duplicast.companionconfig, filled in as Companion
    fills its variables, sent to nginx (the Base URL a crew gives it): each is taken."""
    export = json.loads(EXPORT.read_text())
    requests = _requests(export)
    assert requests
    control = FAMILIES["control"]
    posted = set()
    for where, action in requests:
        options = action["options"]
        path, method = options["url"], action["action"].upper()
        variables = {
            "duplicast_operator_token": OPERATOR,
            "duplicast_tally_key": TALLY,
            "duplicast_version": str(tally(site)["version"]),
        }
        headers = {k: _fill(v, variables) for k, v in json.loads(options["header"]).items()}
        if method == "GET":
            got = site.http.get(path, headers=headers)
            assert got.status_code == 200 and got.json()["topic"] == control.name, where
            continue
        headers["Content-Type"] = options["contenttype"]
        answer = site.http.post(path, content=options["body"] or b"", headers=headers)
        assert answer.status_code in (200, 400, 412), f"{where}: {answer.text}"
        if answer.status_code != 200:  # a take with nothing in preview; a press raced a poll
            assert answer.json()["error"] in ("not_allowed", "stale"), f"{where}: {answer.text}"
        posted.add(path)
    assert {f"{control.route}/{a}" for a in ("take", "cut", "next", "previous", "undo")} <= posted


def test_the_edges_serve_the_programme_its_delay_behind(site: Site, tmp_path: Path) -> None:
    """Last (it plays the session to its end): while the remaining events are played, every
    state of the leaderboard that the public vMix source showed reaches the programme one
    (``feed=program``, served by the edges through nginx) about DELAY later, and the
    programme ends where the public feed ends; the tally says whose air it describes."""
    board = _vmix("leaderboard", "json")

    def read() -> tuple[str, str]:
        public = site.http.get(board)
        program = site.http.get(board, params={"feed": "program"})
        assert public.status_code == program.status_code == 200, (public.text, program.text)
        return public.text, program.text

    deadline = time.monotonic() + DELAY + 10
    while (now := read())[0] != now[1]:  # (caught up: what earlier tests played is on air)
        assert time.monotonic() < deadline, "the programme never caught up"
        time.sleep(0.05)
    start = now[0]
    # Each state's first sight, as (the end of the read that saw it, the start of the read
    # before it, which did not): a state appeared within that span. Under load one read
    # through nginx can take a few hundred ms, so a state is seen late by up to one read.
    first_public: dict[str, tuple[float, float]] = {}
    first_program: dict[str, tuple[float, float]] = {}
    playing = site.play_rest(tmp_path / "replay.log")
    try:
        done_at = None
        before = time.monotonic()
        while True:
            at = time.monotonic()
            public, program = read()
            seen = time.monotonic()
            first_public.setdefault(public, (seen, before))
            first_program.setdefault(program, (seen, before))
            before = at
            if done_at is None and playing.poll() is not None:
                done_at = at
                assert playing.returncode == 0, (tmp_path / "replay.log").read_text()
            if done_at is not None and public == program and at > done_at + 0.5:
                break
            assert done_at is None or at < done_at + DELAY + 15, "the programme never ended"
            time.sleep(0.05)
    finally:
        if playing.poll() is None:
            os.kill(playing.pid, signal.SIGTERM)
            playing.wait(10)
    shown = [body for body in first_program if body != start and body in first_public]
    assert shown, "the leaderboard moved on the programme"
    # As measured (each end seen late alike): about the delay.
    lags = sorted(first_program[b][0] - first_public[b][0] for b in shown)
    assert statistics.median(lags) >= DELAY * 0.75, lags
    # At the least (the programme's state appeared after the read before the one that saw
    # it began; the public one before the read that saw it ended): never near live.
    floors = sorted(first_program[b][1] - first_public[b][0] for b in shown)
    assert floors[0] >= DELAY * 0.4, floors
    assert tally(site)["feed"] == "program"


def test_the_results_site_through_nginx(site: Site) -> None:
    """A spectator at nginx: the site's page and data come from the edges (revalidated by
    ETag), a deal's data only once released, and the PHH bundle from the ingest (nginx sends
    that one path there: an edge holds no hands), released deals only."""
    import io
    import zipfile

    page = site.http.get("/site/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    event = site.http.get("/site/data/event.json")
    assert event.status_code == 200
    again = site.http.get("/site/data/event.json", headers={"If-None-Match": event.headers["etag"]})
    assert again.status_code == 304
    assert event.json()["released"], "the played session released deals"
    answered = {d: site.http.get(f"/site/data/deal/{d}.json").status_code for d in range(1, 13)}
    bundle = site.http.get("/site/download/hands.phh.zip")
    now = set(released(site)[0])  # (released is for ever: asked after)
    assert {d for d, code in answered.items() if code == 200} <= now, answered
    assert set(answered.values()) <= {200, 404} and 200 in answered.values(), answered
    assert bundle.status_code == 200, bundle.text
    assert bundle.headers["content-type"].startswith("application/zip")
    names = zipfile.ZipFile(io.BytesIO(bundle.content)).namelist()
    hands = [n for n in names if n.endswith(".phh")]
    assert hands, "the bundle has the released hands"
    for name in hands:  # table-TT-deal-DD.phh (hub.engine.phh_export)
        deal = re.search(r"deal-(\d+)\.phh$", name)
        assert deal is not None and int(deal.group(1)) in now, name


def test_the_site_downloads_reach_a_phone_through_nginx_to_the_byte(site: Site) -> None:
    """The CSVs a TD opens in Excel, after the played session, through nginx (gzip on) and
    an edge: the UTF-8 byte order mark first (Excel reads the file as UTF-8), every team, and
    the players' accented names as the tournament file wrote them."""
    config = tomllib.loads(SAMPLE.read_text())
    teams = {t["name"] for t in config["teams"]}
    players = {p for t in config["teams"] for p in t["players"]}
    seen: set[str] = set()
    for name in ("standings", "running", "travellers", "scorecards"):
        got = site.http.get(f"/site/download/{name}.csv", headers={"Accept-Encoding": "gzip"})
        assert got.status_code == 200, (name, got.status_code)
        assert got.content.startswith("\ufeff".encode()), (name, got.content[:20])
        rows = list(csv.reader(io.StringIO(got.content.decode("utf-8-sig"))))
        assert len(rows) > 1, name
        seen |= {cell for row in rows for cell in row}
    assert teams <= seen, teams - seen
    accented = {p for p in players if not p.isascii()}
    assert accented and accented & seen, accented
