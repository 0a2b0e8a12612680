"""A private ``redis-server`` for a bench run by hand: started on a free loopback port, stopped
at the end. A bench given no ``--redis`` uses one, never the Redis that answers on 6379 (at a
venue, the event's: a bench run there must not write into it, however briefly)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["redis_url", "start"]


def start(workdir: Path, *options: str) -> tuple[subprocess.Popen[bytes], str]:
    """A ``redis-server`` on a free port of 127.0.0.1, nothing saved (``options``: more of its
    command line); the process and its URL once it answers PING. The port is found free here
    and may be taken before the server binds it (tests run in parallel): a server that exits
    is started again on another port, and only a PONG counts (not whatever took the port)."""
    server = shutil.which("redis-server") or "/usr/bin/redis-server"
    for _ in range(3):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        command = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--dir", str(workdir), *options]
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            if _pong(port):
                return proc, f"redis://127.0.0.1:{port}/0"
            time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    raise RuntimeError("redis-server did not start")


def _pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith((b"+PONG", b"-NOAUTH"))
    except OSError:
        return False


@contextlib.contextmanager
def redis_url(given: str | None, *options: str) -> Iterator[str]:
    """``given`` when a Redis was named; else a private one for the ``with`` block."""
    if given:
        yield given
        return
    with tempfile.TemporaryDirectory() as workdir:
        proc, url = start(Path(workdir), *options)
        try:
            yield url
        finally:
            proc.terminate()
            proc.wait(10)
