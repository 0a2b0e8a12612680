"""A progress line on stderr for the long commands (`console simulate`, `console replay`,
`replay`): events done out of the total, rate, time left.

Shown by default only when stderr is a terminal, so logs and pipes get no carriage-return
noise; ``--progress`` forces it (``--no-progress`` hides it). Updates are rate-limited to one a
second (tqdm's ``mininterval``), so a fast replay costs nothing and a log file gets at most a
line a second.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

from tqdm import tqdm

INTERVAL = 1.0  # seconds between two updates of the line


class Progress:
    """``with Progress(total, "replay", enabled=args.progress) as p: p.advance()``."""

    def __init__(self, total: int, label: str, *, enabled: bool | None = None) -> None:
        self._bar: Any = tqdm(
            total=total,
            desc=label,
            unit=" events",
            file=sys.stderr,
            disable=None if enabled is None else not enabled,  # None: only on a terminal
            mininterval=INTERVAL,
            maxinterval=INTERVAL * 10,
            dynamic_ncols=True,
            leave=True,
        )

    def advance(self, n: int = 1) -> None:
        self._bar.update(n)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
