"""``hub.roles.lifeline``: a worker ends with its parent even when the parent is SIGKILLed, by each
of
its two guards alone (Linux's parent-death signal; the pipe whose end-of-file it watches)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

WORKER = {
    # only the pipe: the kernel is not asked for a signal
    "pipe": """
        from hub.roles import lifeline
        lifeline._set_pdeathsig = lambda sig: False
        lifeline.die_with_parent(PARENT)
    """,
    # only the signal: the lifeline is a pipe this process holds both ends of (never EOF)
    "pdeathsig": """
        import os
        from hub.roles import lifeline
        r, w = os.pipe()
        lifeline.die_with_parent(PARENT, os.fdopen(r, "rb"))
    """,
}

PARENT = """
import subprocess, sys, time
worker = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdin=subprocess.PIPE)
print(worker.pid, flush=True)
time.sleep(120)
"""


def alive(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("guard", sorted(WORKER))
def test_a_worker_ends_with_its_sigkilled_parent(guard: str) -> None:
    body = textwrap.dedent(WORKER[guard]).replace("PARENT", "__import__('os').getppid()")
    worker_code = body + "\nimport time\nprint('ready', flush=True)\ntime.sleep(120)\n"
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, worker_code],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    worker = 0
    try:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        assert parent.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        assert alive(worker)
        parent.kill()
        parent.wait()
        killed = time.monotonic()
        while time.monotonic() - killed < 3 and alive(worker):
            time.sleep(0.05)
        assert not alive(worker)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if worker and alive(worker):
            os.kill(worker, signal.SIGKILL)
