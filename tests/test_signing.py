"""End-to-end signatures (hub.wire.signing, hub.roles.signed, overlays/js/sign.js): proofs open
the door an edge guards without giving the signing key; the ingest refuses what is unsigned,
forged, altered, expired or for another table, answers a nonce once, and still knows the
window's nonces after a restart. (The attack through real processes: test_edge_forgery.py.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hub.bus.memory import MemoryBus
from hub.engine.core import Engine
from hub.metrics import Metrics
from hub.roles.ingest import Ingest
from hub.roles.signed import SignedIntake
from hub.serve.auth import OPERATOR, Auth, ConsoleSeat
from hub.wire import codec
from hub.wire.channels import Channels
from hub.wire.signing import (
    session_proof,
    sign,
    signed_command,
    signed_event,
    signing_key,
    verified,
)
from tests.hubharness import unique_tournament

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "operator-token-Zq8rTz3vLm4"
CONSOLE = "console-token-Pk2wNs7yHd9"
PENALTY = {"op": "penalty", "table": 1, "seat": 2, "chips": 500, "by": "TD", "reason": "x"}


def test_a_proof_opens_what_its_token_opens_and_an_edge_with_proofs_holds_no_key() -> None:
    with_tokens = Auth(None, TOKEN, (ConsoleSeat("table1", 1, CONSOLE),))
    seats = (ConsoleSeat("table1", 1, session_proof(CONSOLE)),)
    with_proofs = Auth(None, session_proof(TOKEN), seats)
    for auth in (with_tokens, with_proofs):
        assert auth.grant(session_proof(TOKEN)) == OPERATOR
        assert auth.grant(TOKEN) == OPERATOR  # (a client that sends the token itself)
        seat = auth.grant(session_proof(CONSOLE))
        assert isinstance(seat, ConsoleSeat) and seat.table == 1
        assert auth.grant(session_proof("another-token-123456789")) is None
        assert auth.grant("p1." + "0" * 64) is None
    assert with_proofs.proofs_only() and not with_tokens.proofs_only()
    keys = with_proofs.keyring()
    assert keys.operator is None and not keys.consoles  # a proof derives no signing key
    assert with_tokens.keyring().operator == signing_key(TOKEN)
    assert signing_key(TOKEN) not in session_proof(TOKEN).encode()


def test_commands_forged_altered_expired_or_replayed_are_refused_and_counted() -> None:
    now = [1_800_000_000.0]
    metrics = Metrics()
    keys = Auth(None, TOKEN).keyring()
    intake = SignedIntake(keys, metrics.signature_refused, clock=lambda: now[0])
    good = signed_command(TOKEN, PENALTY, ts=now[0])
    shaped, nonce, answer = intake.command(good)
    assert shaped == PENALTY and answer is None and nonce
    intake.answered(nonce, {"ok": True})
    assert intake.command(good) == (None, nonce, {"ok": True, "replayed": True})
    codes = {
        "unsigned": PENALTY,
        "bad_signature": {**good, "signed": good["signed"].replace("500", "5000")},
        "expired": signed_command(TOKEN, PENALTY, ts=now[0] - 3600),
    }
    codes["bad_signature_key"] = signed_command("someone-else-token-123", PENALTY, ts=now[0])
    for expected, command in codes.items():
        got = intake.command(command)
        assert got[0] is None and got[2] is not None
        assert got[2]["code"] == expected.removesuffix("_key")
    assert intake.command(PENALTY, trusted=True)[0] == PENALTY  # the ingest's own process
    assert intake.refusals == {
        "command:replayed": 1,
        "command:unsigned": 1,
        "command:bad_signature": 2,
        "command:expired": 1,
    }
    counted = b'duplicast_signature_refusals_total{code="bad_signature",kind="command"} 2.0'
    assert counted in metrics.render(private=True)


def test_events_must_carry_their_consoles_signature_for_its_own_table() -> None:
    keys = Auth(None, None, (ConsoleSeat("table1", 1, CONSOLE),)).keyring()
    intake = SignedIntake(keys)
    event = {"v": 1, "tournament": "t", "table": 1, "console": "table1", "seq": 1, "type": "fold"}
    op = signed_event(CONSOLE, event)
    envelope = {"console": "table1", "signed": op["signed"], "sig": op["sig"]}
    assert intake.event(codec.pack(envelope), 1) == (event, None)
    for bad, table, code in (
        ({**envelope, "sig": "0" * 64}, 1, "bad_signature"),
        ({**envelope, "signed": op["signed"].replace("fold", "call")}, 1, "bad_signature"),
        ({**envelope, "console": "table2"}, 1, "bad_signature"),
        (envelope, 2, "wrong_table"),
        (event, 1, "bad_signature"),  # a plain event on a web channel
    ):
        found, refusal = intake.event(codec.pack(bad), table)
        assert found is None and refusal is not None and refusal["code"] == code


async def test_a_nonce_is_answered_once_across_a_restart() -> None:
    config, decks = unique_tournament("sign")
    bus = MemoryBus()
    await bus.connect()
    keys = Auth(None, TOKEN).keyring()
    names = Channels(config.id)
    command = {**signed_command(TOKEN, PENALTY), "id": "r1", "reply": "e1"}
    replies = bus.subscribe(names.reply("e1"))
    await replies.ready()
    try:
        answers = []
        for _ in range(2):  # the ingest, then the one that replaced it
            ingest = Ingest(bus, Engine(config, decks))
            ingest.signed.keys = keys
            await ingest.start()
            await ingest.handle(names.control, codec.pack(command))
            await ingest.stop()
            (message,) = await replies.take(10)
            answers.append(codec.unpack(message.data))
        assert answers[0]["ok"] is True and "replayed" not in answers[0]
        assert answers[1] == {**answers[0], "replayed": True}  # its position too
        records = [codec.unpack(d) for _, d in await bus.read(names.journal)]
        assert [r.get("type") for r in records if "key" in r] == ["penalty"]
    finally:
        await replies.aclose()
        await bus.close()


@pytest.mark.skipif(shutil.which("node") is None, reason="no node to run sign.js")
def test_sign_js_derives_and_signs_as_python_does() -> None:
    script = f"""
    import {{ sessionProof, signer }} from '{ROOT}/overlays/js/sign.js';
    const s = signer({json.dumps(TOKEN + "é")});
    const op = s.wrap({{ op: 'penalty', table: 1, by: 'Ann Ω', nonce: 'n'.repeat(20) }});
    console.log(JSON.stringify([sessionProof({json.dumps(TOKEN + "é")}), op]));
    """
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    proof, op = json.loads(done.stdout)
    assert proof == session_proof(TOKEN + "é")
    assert verified(signing_key(TOKEN + "é"), op["signed"], op["sig"])
    assert op["sig"] == sign(signing_key(TOKEN + "é"), op["signed"])
    assert json.loads(op["signed"])["nonce"] == "n" * 20
