"""`duplicast td void|penalty|withdraw|confirm|roster`: the tournament director's rulings from
a script.

Each is one ``POST /api/{ruling}`` to a running hub (docs/protocol.md 2.7) with the operator
token from ``DUPLICAST_OPERATOR_TOKEN``: the same bodies, checks and answers as the operator
panel's websocket ops. The token never leaves this process: the request shows its session
proof (``Authorization: Bearer p1...``) and is signed with its signing key
(``X-Duplicast-Signature``, ``hub.wire.signing``), so an edge can relay it and not forge or
alter it; its ``nonce`` (``--nonce`` to give one) makes a retry apply once. The hub's answer
is printed on one line (JSON); a refusal, an unreachable hub or a missing token exits
non-zero.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from hub.cli.args import HelpFormatter
from hub.wire.signing import session_proof, signed_command

__all__ = ["add_parser", "run"]

TOKEN_ENV = "DUPLICAST_OPERATOR_TOKEN"
TIMEOUT = 10.0  # seconds for the hub's answer (an edge waits up to 3 s for the ingest)
REFUSED, UNREACHABLE, NO_TOKEN = 1, 2, 3  # exit statuses


def _seats(text: str) -> list[int]:
    try:
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"seats are numbers separated by commas, not {text!r}"
        ) from None


TABLE = ("--table", {"type": int, "required": True, "help": "the table"})
DEAL = ("--deal", {"type": int, "required": True, "help": "the deal"})
# Each ruling: its help, whether it needs a reason, its own options (flag, argparse keywords).
RULINGS: dict[str, tuple[str, bool, list[tuple[str, dict[str, Any]]]]] = {
    "void": ("void a hand after the misdeal window, or a finished hand", True, [TABLE, DEAL]),
    "penalty": (
        "chips and/or points off the player in a seat of a table",
        True,
        [
            TABLE,
            ("--seat", {"type": int, "required": True, "help": "the player's seat"}),
            ("--chips", {"type": int, "help": "chips off the player's chip-score total"}),
            ("--points", {"type": int, "help": "points off the player's points"}),
        ],
    ),
    "withdraw": (
        "withdraw a penalty (its number in the panel's penalty list): the scores move back",
        True,
        [("--penalty", {"type": int, "required": True, "help": "the penalty's number"})],
    ),
    "confirm": (
        "settle a disputed hand (or close a reopened one)",
        False,
        [
            TABLE,
            DEAL,
            (
                "--seats",
                {
                    "type": _seats,
                    "help": "winning seats, e.g. 3 or 2,5 (default: the cards decide)",
                },
            ),
        ],
    ),
    "roster": (
        "fix a player's name, substitute a player, fix a team's name or colour",
        False,
        [
            ("--team", {"required": True, "help": "the team's id"}),
            ("--table", {"type": int, "help": "the player's table"}),
            ("--seat", {"type": int, "help": "the player's seat position (with --team)"}),
            ("--player", {"help": "the player's name as shown now"}),
            ("--name", {"help": "the player's new name"}),
            ("--team-name", {"help": "the team's new name"}),
            ("--colour", {"help": "the team's new colour, #rrggbb"}),
        ],
    ),
}


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "td",
        help="a tournament director's ruling sent to a running hub (void, penalty, withdraw, "
        "confirm, roster)",
        description="Send a ruling to a running hub over REST with the operator token "
        f"(${TOKEN_ENV}); print the hub's answer in one line; exit {REFUSED} when the hub "
        f"refuses it, {UNREACHABLE} when no hub answers, {NO_TOKEN} without a token.",
        formatter_class=HelpFormatter,
    )
    rulings = p.add_subparsers(dest="ruling", required=True)
    for name, (text, reason_required, options) in RULINGS.items():
        q = rulings.add_parser(name, help=text, formatter_class=HelpFormatter)
        for flag, keywords in options:
            q.add_argument(flag, **keywords)
        q.add_argument("--url", default="http://127.0.0.1:8000", help="the hub's HTTP address")
        q.add_argument("--by", required=True, help="the official who rules (1..64 characters)")
        q.add_argument("--reason", required=reason_required, help="why (at most 500 characters)")
        q.add_argument(
            "--nonce",
            default=None,
            help="the ruling's idempotency key (16-64 characters; default: a new random one): "
            "sent again with the same nonce within 10 minutes, the hub answers the first answer "
            "and applies it once",
        )
    p.set_defaults(func=run)


def body_of(args: argparse.Namespace) -> dict[str, Any]:
    """The ruling's JSON body: every option given, by its protocol name."""
    skip = {"url", "ruling", "func", "command", "key_file"}
    return {k: v for k, v in vars(args).items() if k not in skip and v is not None}


def post(url: str, token: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """POST ``body`` (a command with its ``op``) signed: the session proof as the bearer, the
    body with a ``nonce`` (the one it has, else a new one) and ``ts``, and its signature."""
    signed = signed_command(token, body, nonce=body.get("nonce"))
    request = urllib.request.Request(
        url,
        data=signed["signed"].encode(),
        headers={
            "Authorization": f"Bearer {session_proof(token)}",
            "Content-Type": "application/json",
            "X-Duplicast-Signature": signed["sig"],
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        try:
            answer = json.loads(exc.read() or b"{}")
        except ValueError:
            answer = {"error": "http_error", "message": f"HTTP {exc.code}"}
        return exc.code, answer


def run(args: argparse.Namespace) -> int:
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        print(f"td: set {TOKEN_ENV} to the hub's operator token", file=sys.stderr)
        return NO_TOKEN
    url = f"{args.url.rstrip('/')}/api/{args.ruling}"
    try:
        status, answer = post(url, token, {"op": args.ruling, **body_of(args)})
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        print(json.dumps({"error": "unreachable", "message": f"{url}: {reason}"}))
        return UNREACHABLE
    print(json.dumps(answer, separators=(",", ":")))
    return 0 if status == 200 else REFUSED
