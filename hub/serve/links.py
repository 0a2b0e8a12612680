"""The links a running hub prints: each overlay, desk, REST and websocket address to open.

One list for `duplicast demo` and `duplicast serve`, so what an operator is told to open is
what the hub serves. A role that is off (its token not configured) has its links replaced by
a line that says so; a token can be shown, or stand as the environment variable that holds it
(``serve`` prints no secret to a terminal or a log unless asked: ``--show-tokens``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["COMMENTATOR_ENV", "OPERATOR_ENV", "display_host", "link_lines", "roles_off"]

COMMENTATOR_ENV = "DUPLICAST_COMMENTATOR_TOKEN"
OPERATOR_ENV = "DUPLICAST_OPERATOR_TOKEN"

WILDCARDS = ("", "0.0.0.0", "::")


def display_host(host: str) -> str:
    """An address a browser can open: a wildcard bind is reached on loopback here."""
    if host in WILDCARDS:
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def link_lines(
    config: Any, host: str, port: int, commentator: str | None, operator: str | None
) -> list[str]:
    """``label   url`` lines (a label, two spaces or more, the address). ``commentator`` and
    ``operator``: the token to put in the links (in the fragment, ``#token=``: a browser never
    sends it to the server, docs/security.md), None for a role that is off."""
    base = f"http://{display_host(host)}:{port}"
    table = config.tables[0]
    deal = config.deal_orders[table][0]
    rows: list[tuple[str, str | None, str | None]] = [  # label, path, the role it needs
        ("overlays index", "/overlays/", None),
        ("leaderboard", "/overlays/leaderboard.html", None),
        ("seat ranking", "/overlays/seat.html?seat=1", None),
        ("split-screen", f"/overlays/compare.html?deal={deal}&seat=1#token=", "c"),
        ("live table", f"/overlays/table.html?table={table}#token=", "c"),
        ("clock", "/overlays/clock.html", None),
        ("commentator view", "/overlays/commentator.html#token=", "c"),
        ("operator panel", "/overlays/operator.html#token=", "o"),
        ("standings (REST)", "/api/standings", None),
    ]
    tokens = {"c": commentator, "o": operator}
    off = {"c": f"off: {COMMENTATOR_ENV} is not set", "o": f"off: {OPERATOR_ENV} is not set"}
    lines = []
    for label, path, role in rows:
        token = tokens[role] if role else ""
        shown = f"{base}{path}{token}" if token is not None else off[role or "c"]
        lines.append(f"  {label:<18} {shown}")
    lines.append(f"  {'websocket':<18} ws://{display_host(host)}:{port}/ws")
    if host in WILDCARDS:
        lines.append("  (listening on every address: from elsewhere, use this machine's)")
    return lines


def roles_off(commentator: str | None, operator: str | None) -> list[str]:
    """A warning for each role without a token: what the event cannot do without it."""
    warnings = []
    if not commentator:
        warnings.append(
            f"the commentator role is off ({COMMENTATOR_ENV} not set): no live table, "
            "split-screen or commentator view (they show hole cards, so they need a token)"
        )
    if not operator:
        warnings.append(
            f"the operator role is off ({OPERATOR_ENV} not set): no operator panel, nothing "
            "can be put on air, no clock, no rulings"
        )
    return warnings
