"""A worker process that ends with its parent, whatever ended the parent.

``serve --processes N`` starts N-1 edge workers on its port. If the parent is SIGKILLed (the
OOM killer, ``kill -9``, a crashed container init), it cannot stop them: orphans would keep
serving the port, rejoin a later Redis on the same address and serve stale frames to clients
that should have reconnected elsewhere. Two independent guards, either one enough:

- Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the worker when the thread that
  started it exits (``start_edge_workers`` runs on the main thread, which lives as long as the
  process).
- Anywhere: the worker's stdin is a pipe whose write end only the parent holds; the kernel
  closes it when the parent dies, and a thread that reads it sees end-of-file.

An orphaned worker ends at once (``os._exit``), as it would under SIGKILL: it holds no state of
its own (an edge only relays the feed), and its clients reconnect to the edges still running.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
from typing import BinaryIO

__all__ = ["ORPHAN_EXIT", "die_with_parent"]

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
ORPHAN_EXIT = 70
"""Exit status of a worker that found its parent gone (EX_SOFTWARE)."""


def die_with_parent(parent: int, lifeline: BinaryIO | None = None) -> None:
    """End this process when ``parent`` (its pid) ends. ``lifeline``: the read end of a pipe
    only the parent writes to (default: stdin)."""
    _set_pdeathsig(signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the kernel was told: too late to wait
        _orphaned(parent)
    stream = sys.stdin.buffer if lifeline is None else lifeline
    threading.Thread(target=_watch, args=(stream, parent), name="lifeline", daemon=True).start()


def _set_pdeathsig(sig: int) -> bool:
    """Ask Linux to send ``sig`` when the parent exits; False where there is no prctl."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _watch(stream: BinaryIO, parent: int) -> None:
    """Read the lifeline until end-of-file: the parent closed it or died. Its file descriptor,
    not its buffered reader: a daemon thread blocked in ``stdin.buffer.read`` holds that
    reader's lock, and the interpreter, finalizing at the worker's ordinary exit (a SIGTERM
    from the parent at every stop), then aborted ("Fatal Python error: _enter_buffered_busy",
    SIGABRT)."""
    with contextlib.suppress(OSError, ValueError):
        fd = stream.fileno()
        while os.read(fd, 4096):
            pass
    _orphaned(parent)


def _orphaned(parent: int) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(
            f"duplicast edge worker {os.getpid()}: parent {parent} is gone; exiting",
            file=sys.stderr,
            flush=True,
        )
    os._exit(ORPHAN_EXIT)
