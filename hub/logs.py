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

A record with a traceback is keyed on where the exception was raised instead (its type and the
innermost frame's file and line, behind the template), and only the first of each site is
shown per window: one bug hit by every request (a failing endpoint polled by 100 clients wrote
4,752 traceback lines, issue #20) is one traceback and one count per window, while a second,
different failure behind the same template ("Exception in ASGI application") still shows.
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
        site = _exception_site(record)
        key = (record.name, str(record.msg) if site is None else f"{record.msg} [{site}]")
        first = self.first if site is None else 1
        seen = self._seen.get(key)
        if seen is None:
            if len(self._seen) >= self.max_templates:
                oldest = next(iter(self._seen))
                self._summarise(oldest, self._seen.pop(oldest), now)
            seen = self._seen[key] = _Seen(now, record.levelno)
        seen.count += 1
        if seen.count <= first:
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


def _exception_site(record: logging.LogRecord) -> str | None:
    """``KeyError at hub/domain/config.py:292``: the type of a logged exception and the frame
    that raised it (None: the record carries no exception)."""
    info = record.exc_info
    if not info or info[1] is None:
        return None
    tb = info[2]
    if tb is None:
        return info[0].__name__ if info[0] is not None else None
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return f"{type(info[1]).__name__} at {code.co_filename}:{tb.tb_lineno}"


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
