"""Start a private redis-server on a free port, so tests can kill and restart it at will.

The machine's shared Redis must never be restarted by a test; this one lives in a temporary
directory with AOF on (``--appendonly yes``), so data survives ``restart()`` as in production.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ping(port: int, timeout: float = 0.5, host: str | None = None) -> bool:
    """True if a Redis on ``port`` answers PING (raw RESP: no client library involved); one
    that wants a user first (``NOAUTH``) is up too."""
    try:
        with socket.create_connection((host or "127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith((b"+PONG", b"-NOAUTH"))
    except OSError:
        return False


class RedisServer:
    """``with RedisServer(tmp_path) as server: ... server.restart() ... server.url``."""

    def __init__(
        self,
        directory: Path,
        port: int | None = None,
        binary: str = REDIS_SERVER,
        extra: tuple[str, ...] = (),
    ):
        self.directory = Path(directory)
        self.port = port or free_port()
        self.binary = binary
        self.extra = extra  # more redis-server arguments, e.g. ("--aclfile", path)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        if self.process is not None:
            raise RuntimeError("redis-server already running")
        self.directory.mkdir(parents=True, exist_ok=True)
        log = (self.directory / "redis.log").open("ab")
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "yes",
                "--dir", str(self.directory),
                "--daemonize", "no",
                *self.extra,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + timeout
        while not ping(self.port):
            if self.process.poll() is not None:
                self.process = None
                raise RuntimeError(f"redis-server exited; see {self.directory / 'redis.log'}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server on port {self.port} did not answer PING")
            time.sleep(0.02)

    def stop(self) -> None:
        """Kill (SIGKILL, like a crash) the server we started, by its pid, and reap it."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=10)

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
