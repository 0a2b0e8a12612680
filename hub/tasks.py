"""Stopping background tasks reliably, and bounding what a stop waits for.

``task.cancel()`` followed by ``await task`` hangs forever if anything below the task swallows
the ``CancelledError`` (redis-py 8's command path does, now and then, when the cancel lands
while a reply is being read: the command returns normally and the task carries on). A hub that
cannot be stopped cannot be restarted, so every owner of background tasks stops them here:
cancel, wait a little, cancel again what is still running, and give up loudly, never silently.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Iterable
from typing import Any

log = logging.getLogger("duplicast.tasks")


async def cancel_and_wait(
    tasks: Iterable[asyncio.Future[Any]],
    *,
    grace: float = 0.5,
    attempts: int = 10,
) -> list[str]:
    """Cancel ``tasks`` and wait until they are done; returns the names of any that would not
    stop after ``attempts`` rounds of ``grace`` seconds (they are left cancelled, logged)."""
    pending = {task for task in tasks if not task.done()}
    for _ in range(attempts):
        if not pending:
            return []
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=grace)
    names = sorted(
        task.get_name() if isinstance(task, asyncio.Task) else repr(task) for task in pending
    )
    if names:
        log.error("tasks would not stop after %d cancellations: %s", attempts, ", ".join(names))
    return names


async def bounded(aw: Awaitable[Any], timeout: float, what: str) -> bool:
    """Await ``aw`` for at most ``timeout`` seconds; True if it finished (errors are logged,
    not raised). Unlike ``asyncio.wait_for``, never waits for a cancellation to be honoured: a
    step of a shutdown that hangs (a command to a Redis that stopped answering) is cancelled and
    left behind, so the shutdown itself stays bounded."""
    task = asyncio.ensure_future(aw)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        task.add_done_callback(_consume)
        log.error("%s did not finish within %.1f s; left behind", what, timeout)
        return False
    error = None if task.cancelled() else task.exception()
    if error is not None:
        log.warning("%s failed: %s", what, error)
    return True


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved, so asyncio does not report it at exit
