"""What an operator command may carry (issue #30 item 12), checked before anything else.

Every operator command (on-air, cue, clock, rulings, roster, withdraw) reaches the journal, the
engine snapshot and public topics (``onair``): unbounded, 60 on-air changes of 2 MB each took
an ingest from 96 to 1,048 MB and its snapshot past the 16 MB a restore reads. So a command is
bounded as a whole (``MAX_COMMAND_BYTES`` encoded), per text (``MAX_TEXT`` characters), per
list (``MAX_LIST`` items) and per nesting (``MAX_DEPTH``); an on-air slot's value, as it stands
after a change merged into it, is bounded too (``MAX_SLOT_BYTES``). No text an operator sends
carries a control character (NUL, a newline, ...) or a character that reorders what is shown
(the bidi overrides, embeddings, isolates and marks): a ``by`` of "\\u202eanA DT" would be
shown reversed on the desk and in exports. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from hub.domain.config.model import UNSHOWN
from hub.domain.errors import Rejection

__all__ = [
    "MAX_COMMAND_BYTES",
    "MAX_LIST",
    "MAX_SLOT_BYTES",
    "MAX_TEXT",
    "check_command",
    "check_slot_size",
    "encoded_size",
]

MAX_COMMAND_BYTES = 8 << 10  # one operator command, as JSON
MAX_SLOT_BYTES = 2 << 10  # one on-air slot's value once a change is merged into it
MAX_TEXT = 500  # characters of any one text (a reason's bound)
MAX_LIST = 64  # items of any one list (winners, tables)
MAX_DEPTH = 4  # nesting of objects and lists (a command's value is one level down)

# C0 and C1 controls and the characters that reorder text (the tournament file's names hold
# none either).
FORBIDDEN = UNSHOWN

_ENCODER = msgspec.json.Encoder()


def encoded_size(value: Any) -> int:
    """Bytes of ``value`` as JSON (what the journal and a topic carry, near enough)."""
    try:
        return len(_ENCODER.encode(value))
    except (TypeError, ValueError, OverflowError):
        return 0  # (not JSON: the command's own checks refuse it)


def _walk(value: Any, path: str, depth: int) -> None:
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise Rejection(  # (bad_request, as the roster's and the rulings' own bounds)
                "bad_request", f"'{path}' is {len(value)} characters long: at most {MAX_TEXT}"
            )
        bad = FORBIDDEN.search(value)
        if bad is not None:
            raise Rejection(
                "bad_request",
                f"'{path}' holds the character U+{ord(bad.group()):04X} (a control or bidi "
                "character): plain text only",
            )
        return
    if depth > MAX_DEPTH and isinstance(value, Mapping | list | tuple):
        raise Rejection("bad_request", f"'{path}' is nested too deep (at most {MAX_DEPTH} levels)")
    if isinstance(value, Mapping):
        for key, item in value.items():
            name = f"{path}.{key}" if path else str(key)
            _walk(key, name, depth + 1)
            _walk(item, name, depth + 1)
    elif isinstance(value, list | tuple):
        if len(value) > MAX_LIST:
            raise Rejection("too_large", f"'{path}' has {len(value)} items: at most {MAX_LIST}")
        for i, item in enumerate(value):
            _walk(item, f"{path}[{i}]", depth + 1)


def check_command(command: Mapping[str, Any]) -> None:
    """`Rejection` (``too_large`` or ``bad_request``) for a command beyond the bounds, or with
    a control or bidi character in any text; nothing else is checked here."""
    size = encoded_size(command)
    if size > MAX_COMMAND_BYTES:
        raise Rejection(
            "too_large",
            f"the command is {size} bytes: an operator command is at most {MAX_COMMAND_BYTES}",
        )
    _walk(command, "", 0)


def check_slot_size(slot: str, merged: Mapping[str, Any]) -> None:
    """`Rejection` (``too_large``) for an on-air slot whose value would outgrow its bound
    once this change is merged into it (keys accumulate from change to change)."""
    size = encoded_size(merged)
    if size > MAX_SLOT_BYTES:
        raise Rejection(
            "too_large",
            f"the '{slot}' slot would hold {size} bytes: at most {MAX_SLOT_BYTES} (set keys "
            "you no longer need to null)",
        )
