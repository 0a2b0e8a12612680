"""Stopping background tasks reliably.

``task.cancel()`` followed by ``await task`` hangs forever if anything below the task swallows
the ``CancelledError`` (redis-py 8's command path does, now and then, when the cancel lands
while a reply is being read: the command returns normally and the task carries on). A hub that
cannot be stopped cannot be restarted, so every owner of background tasks stops them here:
cancel, wait a little, cancel again what is still running, and give up loudly, never silently.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
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
