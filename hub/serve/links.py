"""The links a running hub prints: each overlay, desk, REST and websocket address to open.

One list for `duplicast demo` and `duplicast serve`, so what an operator is told to open is
what the hub serves. A role that is off (its token not configured) has its links replaced by
a line that says so; a token can be shown, or stand as the environment variable that holds it
(``serve`` prints no secret to a terminal or a log unless asked: ``--show-tokens``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hub.domain.config.broadcast import DEFAULT_OUTPUT
from hub.wire.topics import program_outputs

__all__ = [
    "COMMENTATOR_ENV",
    "OPERATOR_ENV",
    "console_link_lines",
    "display_host",
    "link_lines",
    "programme_rows",
    "roles_off",
]

COMMENTATOR_ENV = "DUPLICAST_COMMENTATOR_TOKEN"
OPERATOR_ENV = "DUPLICAST_OPERATOR_TOKEN"

WILDCARDS = ("", "0.0.0.0", "::")


def display_host(host: str) -> str:
    """An address a browser can open: a wildcard bind is reached on loopback here."""
    if host in WILDCARDS:
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def _delay_words(seconds: float) -> str:
    """20 min, 90 s, 1 h 30 min."""
    s = round(seconds)
    if s < 120:
        return f"{s} s"
    h, m = divmod(round(s / 60), 60)
    return f"{h} h {m} min" if h and m else f"{h} h" if h else f"{m} min"


def programme_rows(config: Any) -> list[tuple[str, str]]:
    """The programme sources (``label``, ``path``): the pages to paste into OBS, each following
    its on-air slot (``slot=1``: the operator's Take) and never showing anything of a deal
    before it is released. With ``[broadcast] delay``: the program feed (``feed=program``), one
    set per output (``&output=NAME`` for all but the default one); without: the public feed.
    No token: a token would give the source the live feed, hole cards and all."""
    table = config.tables[0]
    deal = config.deal_orders[table][0]
    pages = [
        ("leaderboard", "leaderboard.html?slot=1"),
        ("seat ranking", "seat.html?seat=1&slot=1"),
        ("split-screen", f"compare.html?deal={deal}&seat=1&slot=1"),
        ("live table", f"table.html?table={table}&slot=1"),
        ("ticker", "ticker.html?slot=1"),
    ]
    outputs = program_outputs(config)
    if not outputs:
        return [(label, f"/overlays/{page}") for label, page in pages]
    rows = []
    for name in outputs:
        feed = "&feed=program" + ("" if name == DEFAULT_OUTPUT else f"&output={name}")
        tail = "" if name == DEFAULT_OUTPUT else f" [{name}]"
        rows += [(f"{label}{tail}", f"/overlays/{page}{feed}") for label, page in pages]
    return rows


def programme_heading(config: Any) -> str:
    """What the programme sources are, in a line above them."""
    outputs = program_outputs(config)
    if not outputs:
        return (
            "Programme sources (paste these into OBS; the public feed: nothing of a deal "
            "before it is released):"
        )
    delays = ", ".join(
        f"{name} {_delay_words(delay)} behind" for name, (_, delay) in outputs.items()
    )
    return (
        "Programme sources (paste these into OBS; the program feed, "
        f"{delays}; nothing of a deal before it is released):"
    )


def link_lines(
    config: Any, host: str, port: int, commentator: str | None, operator: str | None
) -> list[str]:
    """``label   url`` lines (a label, two spaces or more, the address), under three headings:
    the programme sources (no token: what may go on air), the commentator's and operator's own
    pages (the live feed: never on air), and the rest. ``commentator`` and ``operator``: the
    token to put in the links (in the fragment, ``#token=``: a browser never sends it to the
    server, docs/security.md), None for a role that is off."""
    base = f"http://{display_host(host)}:{port}"
    table = config.tables[0]
    deal = config.deal_orders[table][0]
    crew: list[tuple[str, str, str]] = [  # label, path, the role it needs
        ("commentator view", "/overlays/commentator.html#token=", "c"),
        ("split-screen (live)", f"/overlays/compare.html?deal={deal}&seat=1#token=", "c"),
        ("live table (live)", f"/overlays/table.html?table={table}#token=", "c"),
        ("operator panel", "/overlays/operator.html#token=", "o"),
    ]
    tokens = {"c": commentator, "o": operator}
    off = {"c": f"off: {COMMENTATOR_ENV} is not set", "o": f"off: {OPERATOR_ENV} is not set"}
    lines = [f"  {'overlays index':<20}  {base}/overlays/", programme_heading(config)]
    lines += [f"  {label:<20}  {base}{path}" for label, path in programme_rows(config)]
    lines.append(f"  {'clock':<20}  {base}/overlays/clock.html")
    lines.append(
        "Commentator only \N{EM DASH} never on air (the live feed: hole cards and boards "
        "of deals other tables still play):"
    )
    for label, path, role in crew:
        token = tokens[role]
        shown = f"{base}{path}{token}" if token is not None else off[role]
        lines.append(f"  {label:<20}  {shown}")
    lines.append(f"  {'results site':<20}  {base}/site/")  # public (docs/site.md)
    lines.append(f"  {'standings (REST)':<20}  {base}/api/standings")
    lines.append(f"  {'websocket':<20}  ws://{display_host(host)}:{port}/ws")
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


# -- the tables' web consoles ---------------------------------------------------------------


def console_link_lines(
    host: str, port: int, seats: Sequence[Any], tokens_file: str | None, show_tokens: bool
) -> list[str]:
    """One ``label   url`` line per web console (``ConsoleSeat``: console, table, token), by
    table: the page a table's official opens on the tablet. The token is shown with
    ``show_tokens``, else named by where it is (the line of the console tokens file). No
    console tokens: a line saying how to make them."""
    if not seats:
        return [
            "  consoles           off: no console tokens (duplicast acl --console-tokens-out "
            "FILE, then DUPLICAST_CONSOLE_TOKENS_FILE=FILE)"
        ]
    base = f"http://{display_host(host)}:{port}/overlays/console.html#token="
    lines = []
    for seat in sorted(seats, key=lambda s: (s.table, s.console)):
        token = seat.token if show_tokens else f"<{seat.console}'s token in {tokens_file}>"
        label = f"console table {seat.table}"
        if seat.console != f"table{seat.table}":
            label += f" ({seat.console})"
        lines.append(f"  {label:<18} {base}{token}")
    return lines
