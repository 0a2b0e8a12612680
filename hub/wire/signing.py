"""End-to-end signatures of web console events and operator commands (DESIGN §8).

The edge is the internet-facing process: it relays, it must not be able to write. So a token
never reaches it. From a token its holder derives two things (HMAC-SHA256 keyed by the token,
``overlays/js/sign.js`` computes the same in the browser):

- the *session proof* ``p1.<hex>`` (``session_proof``): what the page, the CLI or curl shows an
  edge (``?token=``, ``Authorization: Bearer``) instead of the token. An edge is configured with
  proofs only (``duplicast proofs``); a proof does not give the signing key;
- the *signing key* (``signing_key``): never sent anywhere. The holder signs each command or
  console event with it; the ingest, which holds the tokens, derives the same key and verifies
  the signature before anything is applied.

What is signed is a text, sent as is (``signed``) beside its signature (``sig``, hex): the
JSON of the whole command (with a ``nonce`` and a ``ts``) or of the whole console event (with
its ``v``, ``tournament``, ``table``, ``console`` and ``seq``). The verifier parses the very
bytes that were signed, so no canonical form has to be agreed between JavaScript and Python.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from typing import Any

__all__ = [
    "NONCE_MAX",
    "NONCE_MIN",
    "PROOF_PREFIX",
    "is_proof",
    "new_nonce",
    "session_proof",
    "sign",
    "signed_command",
    "signed_event",
    "signing_key",
    "verified",
]

PROOF_PREFIX = "p1."
SESSION_LABEL = b"duplicast session proof v1"
SIGNING_LABEL = b"duplicast signing key v1"
NONCE_MIN, NONCE_MAX = 16, 64  # characters of a command's nonce


def session_proof(token: str) -> str:
    """What a token's holder shows an edge: ``p1.`` and HMAC-SHA256(token, label) in hex."""
    digest = hmac.new(token.encode(), SESSION_LABEL, hashlib.sha256).hexdigest()
    return PROOF_PREFIX + digest


def is_proof(value: str) -> bool:
    """Is ``value`` a session proof (rather than a token)?"""
    return value.startswith(PROOF_PREFIX) and len(value) == len(PROOF_PREFIX) + 64


def signing_key(token: str) -> bytes:
    """The key a token's holder signs with (32 bytes); derived, never sent."""
    return hmac.new(token.encode(), SIGNING_LABEL, hashlib.sha256).digest()


def sign(key: bytes, text: str) -> str:
    """The signature of ``text`` (its UTF-8 bytes) with ``key``, in hex."""
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def verified(key: bytes | None, text: Any, sig: Any) -> bool:
    """Is ``sig`` the signature of ``text`` with ``key``? (constant time)"""
    if key is None or not isinstance(text, str) or not isinstance(sig, str):
        return False
    try:
        expected = sign(key, text)
    except UnicodeEncodeError:  # a lone surrogate: nobody signed that
        return False
    return hmac.compare_digest(expected, sig.lower())


def new_nonce() -> str:
    return secrets.token_hex(16)


def _text(body: dict[str, Any]) -> str:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def signed_command(
    token: str, command: dict[str, Any], *, nonce: str | None = None, ts: float | None = None
) -> dict[str, Any]:
    """An operator command as a client sends it signed: ``{"op", "signed", "sig"}`` (the
    signed text is the command with its ``nonce`` and ``ts`` in milliseconds). Keep the nonce
    to retry it: the hub answers a retry with its first answer and applies it once."""
    body = {
        **command,
        "nonce": nonce or new_nonce(),
        "ts": int((time.time() if ts is None else ts) * 1000),
    }
    text = _text(body)
    return {"op": command["op"], "signed": text, "sig": sign(signing_key(token), text)}


def signed_event(token: str, event: dict[str, Any]) -> dict[str, Any]:
    """A web console's ``event`` op, signed: ``event`` must be complete (``v``, ``tournament``,
    ``table``, ``console``, ``seq``, ``type``...)."""
    text = _text(event)
    return {"op": "event", "signed": text, "sig": sign(signing_key(token), text)}
