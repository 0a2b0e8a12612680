"""The notes stream (``dup:{t}:notes``), bounded in entries and in bytes.

Under ``--feed separate`` the ingest tells the projector what the journal does not hold: the
refusals the operator desk lists and the consoles' links. Every garbage message is refused, so
without a bound the stream grows by an entry per message, and a refusal carries text from the
wire (a console name, a message quoting it). So the stream is trimmed (``MAXLEN ~``, like every
other stream and buffer) and every text in a note is cut: an entry stays under a few KiB and
the stream under ``MAXLEN`` of them. The projector only needs the recent past: the desk lists
the last 100 refusals, and a link's state is its latest note.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hub.wire import codec

__all__ = ["MAXLEN", "NAME_CHARS", "TEXT_CHARS", "link_notes", "refusal_note"]

MAXLEN = 1000
"""Entries the stream keeps (Redis keeps up to one more node of 100: ``MAXLEN ~``)."""
TEXT_CHARS = 200  # a refusal's texts (its message, the console name it names)
NAME_CHARS = 64  # a console name in a links note (real ones are short)
LINKS_PER_NOTE = 16  # consoles per links note: an entry stays under ~4 KiB


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def refusal_note(refusal: Mapping[str, Any]) -> bytes:
    """A refusal as a note, every text cut to ``TEXT_CHARS``."""
    clipped = {
        key: clip(value, TEXT_CHARS) if isinstance(value, str) else value
        for key, value in refusal.items()
    }
    return codec.pack({"refusal": clipped})


def link_notes(moved: Mapping[str, bool]) -> list[bytes]:
    """The consoles whose link moved, ``LINKS_PER_NOTE`` a note, names cut to ``NAME_CHARS``."""
    items = [(clip(console, NAME_CHARS), up) for console, up in moved.items()]
    return [
        codec.pack({"links": dict(items[i : i + LINKS_PER_NOTE])})
        for i in range(0, len(items), LINKS_PER_NOTE)
    ]
