"""The ingest's check of what web consoles and operators signed (DESIGN §8; docs/security.md).

An edge relays; it cannot write. Web console events reach the ingest on the tables' web
channels (``dup:{t}:web:{table}``, the only console channels an edge may publish on) as
``{"console", "signed", "sig"}``; operator commands on the control channel as ``{"op",
"signed", "sig", "id", "reply"}``. Each is verified with the signer's key (derived from its
token: ``hub.wire.signing``) before anything is applied, and only the signed text is used:
the event or command is read from it, never from what the edge put beside it. A message that
is not signed, signed with another key, or altered is refused (``unsigned``,
``bad_signature``), counted (``duplicast_signature_refusals_total``), and changes nothing: no
console's seq, no state.

Replays: a console event carries its ``(console, seq)``, answered once (a replay is a
``duplicate``). A command carries a ``nonce``, its idempotency key, and a ``ts``: a command
more than ``WINDOW`` seconds off the ingest's clock is refused (``expired``), and a nonce seen
within the window is answered with its first answer and not applied again (``replayed: true``
in the answer). Accepted commands journal their nonce (``key``), so a restarted ingest knows
the window's nonces again (``restore``).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hub.serve.auth import Keyring
from hub.serve.commands import operator_command
from hub.wire import codec
from hub.wire.signing import NONCE_MAX, NONCE_MIN, verified

__all__ = ["WINDOW", "SignedIntake"]

WINDOW = 600.0
"""Seconds a signed command's ``ts`` may be off the ingest's clock (either way)."""
MAX_NONCES = 100_000
"""Most command answers remembered (the oldest go first; a nonce older than the window is
refused by its ``ts`` anyway)."""
MAX_ENVELOPE_BYTES = 2 * codec.MAX_EVENT_BYTES  # a signed event: its JSON text and signature


def _refusal(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "code": code, "error": message}


class SignedIntake:
    """Verifies signed events and commands with ``keys`` (``Auth.keyring``) and remembers
    each command nonce's first answer (module docstring)."""

    def __init__(
        self,
        keys: Keyring | None = None,
        on_refused: Callable[[str, str], None] | None = None,
        *,
        window: float = WINDOW,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.keys = keys or Keyring()
        self.on_refused = on_refused  # (kind, code): ``Metrics.signature_refused``
        self.window = window
        self.clock = clock
        self.refusals: dict[str, int] = {}  # "kind:code" -> count (also in the metrics)
        self._answers: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()

    def _refuse(self, kind: str, code: str, message: str) -> dict[str, Any]:
        label = f"{kind}:{code}"
        self.refusals[label] = self.refusals.get(label, 0) + 1
        if self.on_refused is not None:
            self.on_refused(kind, code)
        return _refusal(code, message)

    # -- operator commands --

    def command(
        self, command: Mapping[str, Any], *, trusted: bool = False
    ) -> tuple[dict[str, Any] | None, str | None, dict[str, Any] | None]:
        """``(command to apply, its nonce, None)``, or ``(None, nonce, answer)`` when it is
        not to be applied (refused, or a nonce answered before: its first answer). An unsigned
        command is applied only when ``trusted`` (the ingest's own process took it from a client
        it authenticated: role ``all``)."""
        text, sig = command.get("signed"), command.get("sig")
        if text is None:
            if trusted:
                return dict(command), None, None
            why = "an operator command through an edge must be signed (docs/security.md)"
            return None, None, self._refuse("command", "unsigned", why)
        if not verified(self.keys.operator, text, sig):
            why = "the command's signature is not the operator's (forged or altered)"
            return None, None, self._refuse("command", "bad_signature", why)
        try:
            body = codec.from_json_strict(text)
        except codec.CodecError as exc:
            return None, None, _refusal("bad_request", f"the signed command: {exc}")
        if not isinstance(body, dict) or body.get("op") != command.get("op", body.get("op")):
            return None, None, _refusal("bad_request", "the signed text is another command")
        nonce, ts = body.get("nonce"), body.get("ts")
        if not isinstance(nonce, str) or not NONCE_MIN <= len(nonce) <= NONCE_MAX:
            why = f"a signed command needs a 'nonce' of {NONCE_MIN} to {NONCE_MAX} characters"
            return None, None, _refusal("bad_request", why)
        if not isinstance(ts, int) or isinstance(ts, bool):
            return None, None, _refusal("bad_request", "a signed command needs 'ts' (ms)")
        now = self.clock()
        if abs(ts / 1000 - now) > self.window:
            why = f"the command was signed {now - ts / 1000:+.0f} s from now (clock?)"
            return None, nonce, self._refuse("command", "expired", why)
        first = self._answers.get(nonce)
        if first is not None:
            self._refuse("command", "replayed", "")
            return None, nonce, {**first[1], "replayed": True}
        shaped, why = operator_command(body)
        if shaped is None:
            return None, nonce, self.answered(nonce, _refusal("bad_request", why))
        return shaped, nonce, None

    def answered(self, nonce: str | None, ack: dict[str, Any]) -> dict[str, Any]:
        """Remember ``nonce``'s first answer (a retry gets it again); ``ack`` back."""
        if nonce is not None and nonce not in self._answers:
            self._remember(nonce, self.clock(), ack)  # (the same map: its journal position too)
        return ack

    def _remember(self, nonce: str, at: float, ack: dict[str, Any]) -> None:
        answers = self._answers
        answers[nonce] = (at, ack)
        horizon = self.clock() - self.window
        while answers and (len(answers) > MAX_NONCES or next(iter(answers.values()))[0] < horizon):
            answers.popitem(last=False)

    def restore(self, records: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        """The nonces of journaled commands (``key``) of the window, with the journal position
        each was accepted at."""
        for position, record in records:
            key, at = record.get("key"), record.get("at")
            if not isinstance(key, str) or not isinstance(at, int | float):
                continue
            if at >= self.clock() - self.window:
                self._remember(key, float(at), {"ok": True, "position": position})

    # -- web console events --

    def event(self, data: bytes, table: int | None) -> tuple[Any, dict[str, Any] | None]:
        """``(event, None)`` for a web console's envelope whose signature is its console's,
        else ``(None, refusal)``."""
        if len(data) > MAX_ENVELOPE_BYTES:
            return None, self._refuse("event", "too_large", "the signed event is too large")
        envelope = codec.unpack_map(data)
        if envelope is None:
            return None, self._refuse("event", "bad_schema", "a signed event is a msgpack map")
        console = envelope.get("console")
        seat = self.keys.consoles.get(console) if isinstance(console, str) else None
        text = envelope.get("signed")
        if seat is None or not verified(seat[1], text, envelope.get("sig")):
            why = "the event's signature is not its console's (forged or altered)"
            return None, self._refuse("event", "bad_signature", why)
        try:
            event = codec.from_json_strict(str(text))
        except codec.CodecError as exc:
            return None, _refusal("bad_schema", f"the signed event: {exc}")
        if not isinstance(event, dict) or event.get("console") != console:
            return None, self._refuse("event", "bad_signature", "signed for another console")
        if seat[0] != table or event.get("table") != table:
            why = f"console {console} writes table {seat[0]}, not this channel's"
            return None, self._refuse("event", "wrong_table", why)
        return event, None
