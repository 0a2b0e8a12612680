"""The venue deployment with the users `duplicast acl` writes: every role of the compose files,
each a real process with its own user's URL (in ``DUPLICAST_REDIS_URL``, as compose passes
it), on a private redis-server loaded with that ACL file.

Before, an edge exited 3 at start (its reply channel ``dup:{t}:reply:{id}`` was PSUBSCRIBEd,
and Redis wants a PSUBSCRIBE pattern to equal an allowed one literally), and so did an ingest
with ``--feed separate`` (it serves as an edge too)."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from redis.exceptions import NoPermissionError
from redis_server import RedisServer, free_port

from hub.bus.redis import RedisBus, RetryPolicy
from hub.files.config import load_config
from hub.wire.channels import Channels
from hub.wire.signing import is_proof, signed_command
from tests.feedclient import FeedClient

pytestmark = [pytest.mark.redis]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
TOKENS = {
    "DUPLICAST_COMMENTATOR_TOKEN": "vN4q-Lp7_Xc2mZt8RwB3sKd-comm",
    "DUPLICAST_OPERATOR_TOKEN": "vN4q-Lp7_Xc2mZt8RwB3sKd-oper",
}
FAST = RetryPolicy(deadline=0.5, base=0.01, cap=0.05)
REFUSED = ("NOPERM", "No permissions", "no permissions")


def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    return {**env, **TOKENS, "PYTHONUNBUFFERED": "1"}


def duplicast(
    args: list[str], log: Path, url: str, credentials: dict[str, str] = TOKENS
) -> subprocess.Popen[bytes]:
    """``duplicast ARGS`` with ``url`` as its Redis (by environment, never argv) and the
    ``credentials`` compose gives its role: the tokens (the ingest), their proofs (an edge) or
    none (the projector)."""
    env = {k: v for k, v in base_env().items() if k not in TOKENS}
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "hub", *args],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**env, **credentials, "DUPLICAST_REDIS_URL": url},
        )


def edge_proofs() -> dict[str, str]:
    """What compose gives an edge: the lines `duplicast proofs` prints (its env_file)."""
    done = subprocess.run(
        [sys.executable, "-m", "hub", "proofs"],
        cwd=ROOT, capture_output=True, text=True, env=base_env(), timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    proofs = dict(line.split("=", 1) for line in done.stdout.splitlines())
    assert set(proofs) == set(TOKENS) and all(map(is_proof, proofs.values())), proofs
    return proofs


def wait_for_line(proc: subprocess.Popen[bytes], log: Path, expect: str) -> None:
    deadline = time.monotonic() + 60
    while expect not in log.read_text(errors="replace"):
        assert proc.poll() is None, f"exited {proc.returncode}: {log.read_text()[-2000:]}"
        assert time.monotonic() < deadline, f"no {expect!r}: {log.read_text()[-2000:]}"
        time.sleep(0.1)


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def venue(tmp_path: Path):
    """A private redis-server with the ACL file `duplicast acl` wrote (plus an admin user of
    the test's own, to read the ACL log); the URLs of every user, by name."""
    port = free_port()
    acl, creds = tmp_path / "users.acl", tmp_path / "credentials.txt"
    done = subprocess.run(
        [sys.executable, "-m", "hub", "acl", "--config", str(SAMPLE), "--out", str(acl),
         "--credentials-out", str(creds), "--host", f"127.0.0.1:{port}"],
        cwd=ROOT, capture_output=True, text=True, env=base_env(), timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    admin = secrets.token_hex(16)
    acl.write_text(acl.read_text() + f"user test-admin on >{admin} ~* &* +@all\n")
    urls = dict(line.split() for line in creds.read_text().splitlines() if line[:1] != "#")
    urls["test-admin"] = f"redis://test-admin:{admin}@127.0.0.1:{port}/0"
    with RedisServer(tmp_path / "redis", port=port, extra=("--aclfile", str(acl))) as server:
        yield urls, server


async def test_every_role_runs_with_its_own_user(venue, tmp_path: Path) -> None:
    urls, _ = venue
    config = load_config(SAMPLE)
    names = Channels(config.id)
    common = ["--config", str(SAMPLE)]
    edge_ports = [free_port(), free_port()]
    logs = {name: tmp_path / f"{name}.log" for name in ("ingest", "projector", "edge1", "edge2")}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        serve = ["serve", "--role", "ingest", "--feed", "separate", "--port", str(free_port())]
        procs.append(duplicast([*serve, *common], logs["ingest"], urls["duplicast-ingest"]))
        wait_for_line(procs[-1], logs["ingest"], "duplicast ingest for")
        serve = ["serve", "--role", "projector", *common]  # no token, as compose gives it
        procs.append(duplicast(serve, logs["projector"], urls["duplicast-projector"], {}))
        wait_for_line(procs[-1], logs["projector"], "duplicast projector for")
        proofs = edge_proofs()  # the edges get the proofs only, as compose gives them
        for name, port in zip(("edge1", "edge2"), edge_ports, strict=True):
            serve = ["serve", "--role", "edge", "--port", str(port), *common]
            procs.append(duplicast(serve, logs[name], urls["duplicast-edge"], proofs))
            wait_for_line(procs[-1], logs[name], "duplicast edge for")
            assert "given tokens" not in logs[name].read_text()  # no warning: proofs only
        await play_through_the_edges(config, edge_ports, urls, tmp_path)
        await asyncio.sleep(1.0)  # anything late (a lease renewal, a snapshot save) included
        assert all(proc.poll() is None for proc in procs), [p.returncode for p in procs]
        admin = aioredis.Redis.from_url(urls["test-admin"])
        try:
            refused = await admin.execute_command("ACL", "LOG")
        finally:
            await admin.aclose()
        assert refused == [], refused
    finally:
        stop(procs)
    for name, log in logs.items():
        text = log.read_text(errors="replace")
        assert not any(word in text for word in REFUSED), f"{name}: {text[-3000:]}"
        for url in urls.values():  # and no password in any log line
            assert url.split(":")[2].split("@")[0] not in text, name
    await least_privilege(urls, names)
    # The console CLI with another table: refused by Redis, said in one line, exit 1 at once.
    send = ["console", "send", "--tournament", config.id, "--table", "2", "--console", "table1"]
    wrong = duplicast([*send, "--seq", "1", "--no-outbox", "type=start", "deal=1"],
                      tmp_path / "wrong.log", urls["table1"])  # fmt: skip
    assert await asyncio.to_thread(wrong.wait, 60) == 1
    said = (tmp_path / "wrong.log").read_text()
    assert "duplicast console" in said and "permission" in said.lower(), said
    assert urls["table1"].split(":")[2].split("@")[0] not in said


async def play_through_the_edges(config, ports: list[int], urls, tmp_path: Path) -> None:
    """A console (its own user) starts a deal at table 1: the commentator on edge 1 sees it;
    the operator on edge 2 puts something on air (edge → control → ingest → edge's reply)."""
    live = TOKENS["DUPLICAST_COMMENTATOR_TOKEN"]
    operator = TOKENS["DUPLICAST_OPERATOR_TOKEN"]
    async with (
        FeedClient(f"ws://127.0.0.1:{ports[0]}/ws", live) as viewer,  # shows its proof
        FeedClient(f"ws://127.0.0.1:{ports[1]}/ws", operator) as desk,
    ):
        await viewer.subscribe(["table:1"])
        await viewer.wait_for(lambda c: "table:1" in c.states, timeout=20)
        deal = config.deal_orders[1][0]
        send = ["console", "send", "--tournament", config.id, "--table", "1"]
        send += ["--console", "table1", "--seq", "1", "--no-outbox", "type=start", f"deal={deal}"]
        console = duplicast(send, tmp_path / "console.log", urls["table1"])
        assert await asyncio.to_thread(console.wait, 60) == 0, (
            tmp_path / "console.log"
        ).read_text()
        await viewer.wait_for(lambda c: c.states["table:1"].get("deal") == deal, timeout=20)
        onair = {"op": "onair", "slot": "ticker", "value": {"visible": False}}
        await desk.send(signed_command(operator, onair))  # signed: an edge only relays it
        await desk.wait_for(
            lambda c: any(m.get("op") == "onair" for m in c.log if m.get("type") == "ok"),
            timeout=20,
        )
        assert not viewer.errors and not desk.errors, (viewer.errors, desk.errors)


async def least_privilege(urls: dict[str, str], names: Channels) -> None:
    """A console writes only its table; an edge and the projector write no journal; an edge
    cannot forge the feed; the export user reads the journal only."""

    async def refused(user: str, action) -> None:
        bus = RedisBus(urls[user], retry=FAST)
        try:
            with pytest.raises(NoPermissionError):
                await action(bus)
        finally:
            await bus.close()

    await refused("table1", lambda b: b.publish(names.console(2), b"x"))
    await refused("table1", lambda b: b.publish(names.ack("table2"), b"x"))
    await refused("table1", lambda b: b.append(names.journal, b"forged"))
    await refused("duplicast-edge", lambda b: b.append(names.journal, b"forged"))
    await refused("duplicast-edge", lambda b: b.publish(names.feed, b"forged"))
    await refused("duplicast-edge", lambda b: b.publish(names.console(1), b"forged"))
    await refused("duplicast-edge", lambda b: b.hset(names.topics, "x", b"forged"))
    await refused("duplicast-projector", lambda b: b.append(names.journal, b"forged"))
    await refused("duplicast-projector", lambda b: b.publish(names.console(1), b"x"))
    await refused("duplicast-export", lambda b: b.publish(names.control, b"x"))
    reader = RedisBus(urls["duplicast-export"], retry=FAST)
    try:
        assert len(await reader.read(names.journal)) >= 2  # the deal started, the onair
    finally:
        await reader.close()


async def test_the_default_compose_roles_and_the_export_run_with_their_users(
    venue, tmp_path: Path
) -> None:
    """docker-compose.yml without the projector: an ingest publishing the feed itself; then
    the operator's `export --events` with the export user."""
    urls, _ = venue
    config = load_config(SAMPLE)
    port = free_port()
    log = tmp_path / "ingest.log"
    serve = ["serve", "--role", "ingest", "--port", str(port), "--config", str(SAMPLE)]
    ingest = duplicast(serve, log, urls["duplicast-ingest"])
    try:
        wait_for_line(ingest, log, "duplicast ingest for")
        async with FeedClient(
            f"ws://127.0.0.1:{port}/ws", TOKENS["DUPLICAST_COMMENTATOR_TOKEN"]
        ) as viewer:
            await viewer.subscribe(["table:2"])
            await viewer.wait_for(lambda c: "table:2" in c.states, timeout=20)
            deal = config.deal_orders[2][0]
            send = ["console", "send", "--tournament", config.id, "--table", "2"]
            send += ["--console", "table2", "--seq", "1", "--no-outbox", "type=start"]
            console = duplicast([*send, f"deal={deal}"], tmp_path / "c.log", urls["table2"])
            assert await asyncio.to_thread(console.wait, 60) == 0
            await viewer.wait_for(lambda c: c.states["table:2"].get("deal") == deal, timeout=20)
        out = tmp_path / "events.jsonl"
        export = ["export", "--events", "--config", str(SAMPLE), "--out", str(out)]
        exporter = duplicast(export, tmp_path / "export.log", urls["duplicast-export"])
        assert await asyncio.to_thread(exporter.wait, 60) == 0, (
            tmp_path / "export.log"
        ).read_text()
        header, *records = out.read_text().splitlines()  # (the header: issue #20.12)
        assert '"epoch":"' in header and len(records) == 1
        assert ingest.poll() is None
    finally:
        stop([ingest])
    assert not any(word in log.read_text() for word in REFUSED)
