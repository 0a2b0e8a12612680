"""An edge cannot write (issue #30 item 10, DESIGN §8): the attack of the issue, run with the
edge's own Redis user on the venue as the crew runs it (a Redis loaded with the ACL file of
``duplicast acl``, a real ``serve --role ingest`` holding the tokens, a real ``serve --role
edge`` holding only their proofs from ``duplicast proofs``, the shipped nginx in front), after
part of the sample session was played.

Before, with the ``duplicast-edge`` user, a ``fold`` published as table 1 was accepted (and the
real console's next event with that seq answered "duplicate"), a deal could be started at
table 3 and a penalty put on the control channel. Now each is refused and counted, nothing
changes, and the real console's next event is accepted; a replayed signed message is not
applied again; a REST penalty retried with its key applies once; the console and operator
pages in Chromium, through nginx, still work.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect
from redis.exceptions import NoPermissionError
from websockets.asyncio.client import connect

from hub.bus.redis import RedisBus, RetryPolicy
from hub.serve.auth import parse_console_tokens
from hub.wire import codec
from hub.wire.channels import Channels
from hub.wire.signing import session_proof, signed_command, signed_event
from tests.browser import new_page
from tests.nginx import Nginx, free_port
from tests.redis_server import RedisServer
from tests.test_console_web import WebConsole

pytestmark = [pytest.mark.redis]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
SESSION = ROOT / "samples" / "ifp6-session.jsonl"
TOURNAMENT = "ifp-demo"
COMMENTATOR = "fq7Z-vYp8_Lw2mXc7RtB9sHd-commentator"
OPERATOR = "fq7Z-vYp8_Lw2mXc7RtB9sHd-operator"
FAST = RetryPolicy(deadline=1.0, base=0.01, cap=0.05)
NAMES = Channels(TOURNAMENT)
GARBAGE_SIG = "0" * 64


@dataclass
class Venue:
    urls: dict[str, str]  # Redis URL of every ACL user
    consoles: dict[str, str]  # console name -> its web console token
    ingest: str  # the ingest's own HTTP base (metrics)
    lb: Nginx


def history() -> list[str]:
    """The session up to table 1's second action of its third hand: a played session with
    table 1 mid-hand, someone to act."""
    lines = SESSION.read_text().splitlines(keepends=True)
    starts = actions = 0
    for i, line in enumerate(lines):
        event = json.loads(line)
        if event["table"] != 1:
            continue
        if event["type"] == "start":
            starts += 1
        elif starts == 3:
            actions += 1
            if actions == 2:
                return lines[: i + 1]
    raise AssertionError("table 1 plays fewer than three hands")


def start(role: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``duplicast serve --role ROLE`` (its Redis URL in the environment, never argv), once it
    says it serves."""
    port = env["PORT"]
    command = [sys.executable, "-m", "hub", "serve", "--role", role, "--config", str(SAMPLE)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*command, "--port", port], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + 60
    while f"duplicast {role} for" not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            stop(process)
            raise AssertionError(f"serve --role {role}: {log.read_text()[-2000:]}")
        time.sleep(0.1)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    """End a process this test started, by its pid."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hub", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def venue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venue]:
    tmp = tmp_path_factory.mktemp("forgery")
    base = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    tokens = {"DUPLICAST_COMMENTATOR_TOKEN": COMMENTATOR, "DUPLICAST_OPERATOR_TOKEN": OPERATOR}
    port = free_port()
    acl, creds, console_tokens = tmp / "users.acl", tmp / "creds.txt", tmp / "tokens.txt"
    made = run(
        ["acl", "--config", str(SAMPLE), "--out", str(acl), "--credentials-out", str(creds),
         "--host", f"127.0.0.1:{port}", "--console-tokens-out", str(console_tokens)],
        base,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    urls = dict(line.split() for line in creds.read_text().splitlines() if line[:1] != "#")
    consoles = {s.console: s.token for s in parse_console_tokens(console_tokens.read_text())}
    # what an edge is given: the proofs, not the tokens
    console_proofs = tmp / "proofs.txt"
    with_tokens = {**base, **tokens, "DUPLICAST_CONSOLE_TOKENS_FILE": str(console_tokens)}
    proofs = run(["proofs", "--console-proofs-out", str(console_proofs)], with_tokens)
    assert proofs.returncode == 0, proofs.stderr
    edge_auth = dict(line.split("=", 1) for line in proofs.stdout.splitlines())
    assert edge_auth["DUPLICAST_OPERATOR_TOKEN"] == session_proof(OPERATOR)
    assert OPERATOR not in console_proofs.read_text() + proofs.stdout
    processes: list[subprocess.Popen[bytes]] = []
    with RedisServer(tmp / "redis", port=port, extra=("--aclfile", str(acl))):
        try:
            ingest_port, edge_port = str(free_port()), str(free_port())
            ingest_env = {**with_tokens, "DUPLICAST_REDIS_URL": urls["duplicast-ingest"]}
            processes.append(start("ingest", {**ingest_env, "PORT": ingest_port}, tmp / "i.log"))
            edge_env = {
                **base,
                **edge_auth,
                "DUPLICAST_CONSOLE_TOKENS_FILE": str(console_proofs),
                "DUPLICAST_REDIS_URL": urls["duplicast-edge"],
                "DUPLICAST_TRUSTED_PROXIES": "127.0.0.1",
                "PORT": edge_port,
            }
            processes.append(start("edge", edge_env, tmp / "edge.log"))
            assert "given tokens" not in (tmp / "edge.log").read_text()  # proofs only
            log = tmp / "session.jsonl"
            log.write_text("".join(history()))
            played = run(
                ["console", "replay", "--tournament", TOURNAMENT, str(log)],
                {**base, "DUPLICAST_REDIS_URL": urls["duplicast-ingest"]},
            )
            assert played.returncode == 0, played.stderr
            upstreams = {"edge1:8000": f"127.0.0.1:{edge_port}"}
            upstreams["edge2:8000"] = upstreams["edge1:8000"]
            with Nginx(tmp / "nginx", upstreams) as lb:
                yield Venue(urls, consoles, f"http://127.0.0.1:{ingest_port}", lb)
        finally:
            for process in reversed(processes):
                stop(process)


async def journal(venue: Venue) -> list[dict[str, Any]]:
    """Every journal record, read as ``duplicast export`` reads it (its own user)."""
    bus = RedisBus(venue.urls["duplicast-export"], retry=FAST)
    await bus.connect()
    try:
        out, after = [], "0-0"
        while page := await bus.read(NAMES.journal, after, 1000):
            out += [codec.unpack(data) for _, data in page]
            after = page[-1][0]
        return out
    finally:
        await bus.close()


def journal_now(venue: Venue) -> list[dict[str, Any]]:
    """``journal`` from a synchronous test (a loop of its own, in a thread)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, journal(venue)).result()


def signature_refusals(venue: Venue) -> dict[tuple[str, str], float]:
    """``duplicast_signature_refusals_total`` of the ingest, by (kind, code)."""
    request = urllib.request.Request(
        f"{venue.ingest}/metrics", headers={"Authorization": f"Bearer {OPERATOR}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    found = {}
    for line in text.splitlines():
        if line.startswith("duplicast_signature_refusals_total{"):
            labels, value = line.rsplit(" ", 1)
            kind = labels.split('kind="')[1].split('"')[0]
            code = labels.split('code="')[1].split('"')[0]
            found[(kind, code)] = float(value)
    return found


async def answer_on(bus: RedisBus, channel: str, publish: tuple[str, bytes]) -> dict[str, Any]:
    """Publish, then the first answer heard on ``channel``."""
    sub = bus.subscribe(channel)
    await sub.ready()
    try:
        await bus.publish(*publish)
        async with asyncio.timeout(10):
            async for message in sub:
                found = codec.unpack_map(message.data)
                if found is not None:
                    return found
        raise AssertionError("no answer")
    finally:
        await sub.aclose()


def penalties(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("type") == "penalty"]  # (as the operator's event)


async def test_the_edges_own_credentials_write_nothing(venue: Venue) -> None:
    edge = RedisBus(venue.urls["duplicast-edge"], retry=FAST)
    await edge.connect()
    token = venue.consoles["table1"]
    async with connect(f"{venue.lb.ws_url}?token={session_proof(token)}") as ws:
        page = WebConsole(ws, token)
        try:
            await page.send({"op": "subscribe", "topics": ["console:1"]})
            await page.typed("snapshot", topic="console:1")
            state = page.state("console:1")
            last = state["consoles"]["table1"]["last_seq"]
            to_act, deal = state["to_act"], state["deal"]
            assert last > 0 and to_act is not None  # after a played session, mid-hand
            before = await journal(venue)
            refused_before = signature_refusals(venue)
            # 1. the Redis consoles' channel: Redis refuses the edge's user outright
            fold = {"v": 1, "tournament": TOURNAMENT, "table": 1, "console": "table1"}
            fold |= {"seq": last + 1, "type": "fold", "deal": deal, "seat": to_act}
            with pytest.raises(NoPermissionError):
                await edge.publish(NAMES.console(1), codec.pack(fold))
            # 2. the web channel: a fold as table 1 unsigned, then with a made-up signature
            text = json.dumps(fold)
            await edge.publish(NAMES.web(1), codec.pack(fold))
            forged = {"console": "table1", "signed": text, "sig": GARBAGE_SIG}
            await edge.publish(NAMES.web(1), codec.pack(forged))
            # 3. a deal started at table 3 (its state read once the feed has shown all the
            # journal holds of table 3: the feed follows the journal, and may lag it under load)
            journaled3 = max(
                (r["seq"] for r in before if r.get("console") == "table3" and "seq" in r),
                default=0,
            )
            deadline = time.monotonic() + 30
            while True:
                state3 = await table_state(venue, 3)
                if state3["consoles"]["table3"]["last_seq"] >= journaled3:
                    break
                assert time.monotonic() < deadline, (state3["consoles"], journaled3)
                await asyncio.sleep(0.2)
            start3 = {"v": 1, "tournament": TOURNAMENT, "table": 3, "console": "table3"}
            start3 |= {"seq": 999, "type": "start", "deal": state3["next_deal"] or 1}
            envelope = {"console": "table3", "signed": json.dumps(start3), "sig": GARBAGE_SIG}
            await edge.publish(NAMES.web(3), codec.pack(envelope))
            # 4. a penalty on the control channel: unsigned, forged, altered
            penalty = {"op": "penalty", "table": 1, "seat": 2, "chips": 500}
            penalty |= {"by": "TD", "reason": "forged"}
            reply = NAMES.reply("attacker")
            ask = {**penalty, "id": "a1", "reply": "attacker"}
            unsigned = await answer_on(edge, reply, (NAMES.control, codec.pack(ask)))
            assert (unsigned["ok"], unsigned["code"]) == (False, "unsigned"), unsigned
            made_up = {**ask, "signed": json.dumps(penalty), "sig": GARBAGE_SIG}
            bad = await answer_on(edge, reply, (NAMES.control, codec.pack(made_up)))
            assert bad["code"] == "bad_signature", bad
            real = signed_command(OPERATOR, penalty)  # (the operator's, never sent)
            altered = {**real, "signed": real["signed"].replace("500", "5000"), "id": "a3"}
            altered["reply"] = "attacker"
            bad = await answer_on(edge, reply, (NAMES.control, codec.pack(altered)))
            assert bad["code"] == "bad_signature", bad
            # every forgery counted (the web channels' once the ingest took them: it reads
            # them apart from the control channel), nothing applied, nothing journaled
            expected = {("event", "bad_signature"): 3, ("command", "unsigned"): 1}
            expected[("command", "bad_signature")] = 2
            deadline = time.monotonic() + 20
            while True:
                refused = signature_refusals(venue)
                gained = {k: v - refused_before.get(k, 0.0) for k, v in refused.items()}
                if all(gained.get(k, 0) >= n for k, n in expected.items()):
                    break
                assert time.monotonic() < deadline, gained
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.3)
            assert await journal(venue) == before
            refused = signature_refusals(venue)
            gained = {k: v - refused_before.get(k, 0.0) for k, v in refused.items()}
            assert gained.get(("event", "bad_signature"), 0) == 3, refused
            assert gained.get(("command", "unsigned"), 0) == 1, refused
            assert gained.get(("command", "bad_signature"), 0) == 2, refused
            assert (await table_state(venue, 3))["consoles"] == state3["consoles"]
            # the real console's next event, with the seq the forgery took: accepted
            move = "check" if state["legal"]["check"] else "fold"
            event = {"seq": last + 1, "type": move, "deal": deal, "seat": to_act}
            await page.event(**event)
            ack = await page.ack(last + 1)
            assert ack["ok"] is True and not ack.get("duplicate"), ack
            # replayed by the edge as it relayed it: answered duplicate, not applied again
            after = await journal(venue)
            assert len(after) == len(before) + 1
            hello = await page.typed("hello")
            full = {"v": 1, **{k: hello[k] for k in ("tournament", "table", "console")}, **event}
            relayed = signed_event(token, full)
            envelope = {"console": "table1", "signed": relayed["signed"], "sig": relayed["sig"]}
            again = await answer_on(edge, NAMES.ack("table1"), (NAMES.web(1), codec.pack(envelope)))
            assert again["duplicate"] is True and again["seq"] == last + 1
            assert len(await journal(venue)) == len(after)
        finally:
            page.task.cancel()
            await edge.close()


async def table_state(venue: Venue, table: int) -> dict[str, Any]:
    """``console:{table}`` as that table's console reads it through nginx."""
    token = venue.consoles[f"table{table}"]
    async with connect(f"{venue.lb.ws_url}?token={session_proof(token)}") as ws:
        page = WebConsole(ws, token)
        try:
            await page.send({"op": "subscribe", "topics": [f"console:{table}"]})
            await page.typed("snapshot", topic=f"console:{table}")
            return page.state(f"console:{table}")
        finally:
            page.task.cancel()


def td(venue: Venue, *args: str) -> dict[str, Any]:
    """``duplicast td ...`` through nginx, as a TD's script runs it: its answer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    done = run(["td", *args, "--url", venue.lb.url], {**env, "DUPLICAST_OPERATOR_TOKEN": OPERATOR})
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


async def test_a_retried_rest_penalty_applies_once_and_a_replay_is_not_applied(
    venue: Venue,
) -> None:
    nonce = "retry-" + os.urandom(8).hex()
    ruling = ["penalty", "--table", "2", "--seat", "4", "--chips", "300"]
    ruling += ["--by", "TD Ana Ruiz", "--reason", "slow play", "--nonce", nonce]
    first = await asyncio.to_thread(td, venue, *ruling)
    assert first["ok"] is True and not first.get("replayed")
    again = await asyncio.to_thread(td, venue, *ruling)  # the script retried (a lost answer)
    assert again["ok"] is True and again["replayed"] is True
    # the edge replays the signed command it relayed: answered, not applied
    edge = RedisBus(venue.urls["duplicast-edge"], retry=FAST)
    await edge.connect()
    try:
        body = {"op": "penalty", "table": 2, "seat": 4, "chips": 300, "by": "TD Ana Ruiz"}
        body["reason"] = "slow play"
        signed = signed_command(OPERATOR, body, nonce=nonce)
        replay = {**signed, "id": "r1", "reply": "attacker"}
        answer = await answer_on(edge, NAMES.reply("attacker"), (NAMES.control, codec.pack(replay)))
        assert answer["ok"] is True and answer["replayed"] is True
    finally:
        await edge.close()
    mine = [p for p in penalties(await journal(venue)) if p.get("key") == nonce]
    assert len(mine) == 1, mine
    assert signature_refusals(venue).get(("command", "replayed"), 0) >= 2


@pytest.mark.browser
def test_the_console_and_operator_pages_work_through_the_edge(
    browser: Browser, venue: Venue
) -> None:
    """The pages sign with sign.js (their token in the link's fragment, never sent): the table
    2 console enters an action, the operator panel a penalty, through nginx and the edge."""
    errors: list[str] = []
    page = new_page(browser, 1280, 800, errors)
    try:
        before = journal_now(venue)
        page.goto(f"{venue.lb.url}/overlays/console.html#token={venue.consoles['table2']}")
        tid = lambda name: page.locator(f'[data-testid="{name}"]')  # noqa: E731
        expect(tid("link")).to_have_attribute("data-state", "open", timeout=10000)
        expect(page.locator('[data-testid="pad"] button').first).to_be_visible(timeout=10000)
        for name in ("start", "check", "call", "fold"):
            button = tid(name)
            if button.count() and button.first.is_visible() and button.first.is_enabled():
                button.first.click()
                break
        else:
            raise AssertionError("the pad offers nothing to enter")
        expect(tid("link")).to_have_attribute("data-waiting", "0", timeout=10000)
        records = journal_now(venue)
        entered = [r for r in records[len(before) :] if r.get("console") == "table2"]
        assert len(entered) == 1 and entered[0].get("kind") == "console", entered
        # the operator panel: a penalty
        page.goto(f"{venue.lb.url}/overlays/operator.html#token={OPERATOR}")
        expect(page.locator('[data-testid="console-row"]')).to_have_count(6, timeout=10000)
        page.locator('[data-testid="td-by"]').fill("TD Ana Ruiz")
        form = page.locator('[data-testid="td-penalty"]')
        for name, value in (("table", 5), ("seat", 1), ("chips", 25), ("reason", "phone")):
            form.locator(f'input[name="{name}"]').fill(str(value))
        form.locator('[data-testid="td-penalty-send"]').click()
        page.locator('[data-testid="td-ask-yes"]').click()  # the ruling repeated, confirmed
        status = page.locator('[data-testid="td-status"]')
        expect(status).to_have_text("Penalty: done.", timeout=10000)
        mine = [p for p in penalties(journal_now(venue)) if p.get("table") == 5]
        assert len(mine) == 1 and isinstance(mine[0].get("key"), str), mine
    finally:
        page.context.close()
    assert errors == []
    access = venue.lb.access_log()
    assert OPERATOR not in access and venue.consoles["table2"] not in access  # never sent


def test_the_documented_curl_recipe_signs_a_ruling(venue: Venue) -> None:
    """docs/security.md's openssl + curl recipe, run as written (its URL the venue's): the
    ruling is applied through nginx and the edge, and sent again it is answered, not applied."""
    text = (ROOT / "docs" / "security.md").read_text()
    recipe = text.split("A curl caller computes the same with openssl:", 1)[1]
    recipe = recipe.split("```sh\n", 1)[1].split("```", 1)[0]
    recipe = "\n".join(line.strip() for line in recipe.splitlines())
    recipe = recipe.replace("https://hub.example", venue.lb.url)
    recipe += '\necho\ncurl -sS -X POST "' + venue.lb.url + '/api/penalty" '
    recipe += '-H "Authorization: Bearer $PROOF" -H "X-Duplicast-Signature: $SIG" '
    recipe += "-H 'Content-Type: application/json' --data \"$BODY\"\n"
    env = {**os.environ, "DUPLICAST_OPERATOR_TOKEN": OPERATOR}
    before = len(penalties(journal_now(venue)))
    done = subprocess.run(
        ["bash", "-euc", recipe], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    first, again = (json.loads(line) for line in done.stdout.splitlines() if line.strip())
    assert first["ok"] is True and again == {**first, "replayed": True}
    assert len(penalties(journal_now(venue))) == before + 1
