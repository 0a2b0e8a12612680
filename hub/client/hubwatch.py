"""Whether any hub answers a console: a console sending to a tournament no hub serves (a typo in
its id, the wrong Redis, a hub not started) used to resend forever without a word.

``Silence`` measures how long a console's oldest unanswered event has gone without anything
heard from a hub (an ack, or an answer on its table's error channel naming it); past
``timeout`` the console gives up with ``ConsoleFailure`` and one line saying so
("no hub is serving tournament T at redis://user:***@host/0"). A hub that answers anything
restarts the clock, so a busy hub or one restarting within the timeout is waited for.
"""

from __future__ import annotations

from typing import Any

from hub.redact import redacted_url

__all__ = ["ConsoleFailure", "Silence", "no_hub_message", "where"]


class ConsoleFailure(RuntimeError):
    """A console cannot get its events through, and resending will not help: no hub answers,
    or Redis refuses its publishes (its user may write another table). One line."""


def where(bus: Any) -> str:
    """The bus a console talks through, fit to print (the password masked)."""
    url = getattr(bus, "url", None)
    return redacted_url(url) if isinstance(url, str) else "the in-process bus"


def no_hub_message(tournament: str, table: int, bus: Any, timeout: float) -> str:
    return (
        f"no hub is serving tournament {tournament!r} at {where(bus)}: nothing answered "
        f"table {table}'s events for {timeout:g} s (is the hub running, on this Redis, with "
        f"this tournament?)"
    )


class Silence:
    """How long the hub has said nothing while an event waits (``loop.time()`` seconds)."""

    def __init__(self, timeout: float | None, now: float) -> None:
        if timeout is not None and timeout <= 0:
            timeout = None  # 0: wait for ever (an outage the operator knows of)
        self.timeout = timeout
        self.heard = now

    def hear(self, now: float) -> None:
        self.heard = now

    def deadline(self, oldest_sent: float | None) -> float | None:
        """When to give up if nothing is heard (None: nothing waits, or no timeout)."""
        if self.timeout is None or oldest_sent is None:
            return None
        return max(oldest_sent, self.heard) + self.timeout
