"""Log lines rate-limited: repeats of one message template collapse into a summary line.

A flood of bad input (100,000 garbage messages wrote 16,000 warning lines, issue #9) must not
flood the log: a ``RepeatFilter`` on a handler lets through the first ``first`` records of each
(logger, message template) pair per ``window`` seconds, drops the rest, and once the window is
over writes one line ``'<template>' repeated K times in the last T s (not shown)``. The
template is the format string before its arguments, so ``"undecodable event on %s: %s"`` is one
template whatever the channel and error. ``install()`` puts one on every root handler; the
process entry points (``duplicast serve|console|demo``) call it after configuring logging.

``install()`` also puts a ``RedactFilter`` on each handler: a Redis URL's password
(``redis://user:pw@host``, ``?password=``) never reaches a log line, whoever logs the URL
(our messages, a library's error text).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from hub.redact import redact

__all__ = ["RedactFilter", "RepeatFilter", "install"]

FIRST = 5  # records of one template shown per window
WINDOW = 60.0  # seconds
MAX_TEMPLATES = 1024  # templates tracked at once (the oldest is summarised and forgotten)
_SUMMARY = "_duplicast_repeat_summary"


@dataclass(slots=True)
class _Seen:
    start: float
    level: int
    count: int = 0
    suppressed: int = 0


class RepeatFilter(logging.Filter):
    """Drop repeats of a (logger, template) past ``first`` per ``window``; summarise them on
    ``handler`` once the window is over (checked as records arrive, and by ``flush()``)."""

    def __init__(
        self,
        handler: logging.Handler,
        *,
        first: int = FIRST,
        window: float = WINDOW,
        max_templates: int = MAX_TEMPLATES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        if first < 1 or window <= 0 or max_templates < 1:
            raise ValueError("first >= 1, window > 0, max_templates >= 1")
        self.handler = handler
        self.first = first
        self.window = window
        self.max_templates = max_templates
        self._clock = clock
        self._seen: dict[tuple[str, str], _Seen] = {}
        self._next_sweep = 0.0

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, _SUMMARY, False):
            return True
        now = self._clock()
        if now >= self._next_sweep:
            self._sweep(now)
        key = (record.name, str(record.msg))
        seen = self._seen.get(key)
        if seen is None:
            if len(self._seen) >= self.max_templates:
                oldest = next(iter(self._seen))
                self._summarise(oldest, self._seen.pop(oldest), now)
            seen = self._seen[key] = _Seen(now, record.levelno)
        seen.count += 1
        if seen.count <= self.first:
            return True
        seen.suppressed += 1
        seen.level = max(seen.level, record.levelno)
        return False

    def flush(self) -> None:
        """Summarise every template with dropped records now (at exit)."""
        now = self._clock()
        for key, seen in list(self._seen.items()):
            del self._seen[key]
            self._summarise(key, seen, now)

    def _sweep(self, now: float) -> None:
        self._next_sweep = now + min(1.0, self.window)
        for key, seen in list(self._seen.items()):
            if now - seen.start >= self.window:
                del self._seen[key]
                self._summarise(key, seen, now)

    def _summarise(self, key: tuple[str, str], seen: _Seen, now: float) -> None:
        if not seen.suppressed:
            return
        name, template = key
        record = logging.LogRecord(
            name,
            seen.level,
            __file__,
            0,
            "%r repeated %d times in the last %.0f s (not shown)",
            (template, seen.suppressed, max(now - seen.start, 0.0)),
            None,
        )
        setattr(record, _SUMMARY, True)
        self.handler.handle(record)


class RedactFilter(logging.Filter):
    """Every record's message with the passwords of the URLs in it masked (``hub.redact``).
    A record is rewritten only when it holds one, so ``RepeatFilter`` (before it) still sees
    each message's template."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def install(
    logger: logging.Logger | None = None, *, first: int = FIRST, window: float = WINDOW
) -> list[RepeatFilter]:
    """Put a ``RepeatFilter`` on every handler of ``logger`` (the root logger by default) that
    has none yet; returns the filters (``flush()`` them at exit)."""
    target = logger or logging.getLogger()
    filters = []
    for handler in target.handlers:
        existing = [f for f in handler.filters if isinstance(f, RepeatFilter)]
        if existing:
            filters.extend(existing)
            continue
        repeat = RepeatFilter(handler, first=first, window=window)
        handler.addFilter(repeat)
        handler.addFilter(RedactFilter())
        filters.append(repeat)
    return filters
