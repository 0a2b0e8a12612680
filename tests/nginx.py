"""Debian's nginx running the SHIPPED deploy/nginx.conf, as a child process of the test.

The file is changed only where a test must, each change a plain text replacement that must
match exactly once (so a change to the shipped file that breaks the test's reading of it fails
here, loudly, instead of testing something else):

- the upstream servers ``edge1:8000`` / ``edge2:8000`` → the test's edges on loopback ports,
  and ``ingest:8000`` (where the control surfaces' and playouts' POSTs go) → the test's ingest
  (a test that gives none has it point at its first edge: those POSTs then reach an edge,
  which refuses what is not signed, as before the ingest had a route of its own);
- ``listen 8080;`` → ``listen 127.0.0.1:PORT;``;
- the access log → a file in the test's directory.

Everything else (the ``-g``/``-e`` flags: foreground, pid file, error log, temp paths, and
``user root`` when the tests run as root, so the workers can reach a private tmp dir) is given
on the command line or added next to the temp paths, not edited into the file's directives.
Stopped by its pid (``stop()``): TERM, then KILL if it lingers.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "deploy" / "nginx.conf"
NGINX = "/usr/sbin/nginx"
SHIPPED_UPSTREAMS = ("edge1:8000", "edge2:8000", "ingest:8000")
TEMPS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _once(text: str, old: str, new: str) -> str:
    count = text.count(old)
    if count != 1:
        raise AssertionError(f"deploy/nginx.conf: expected {old!r} once, found it {count} times")
    return text.replace(old, new)


def lb_config(directory: Path, upstreams: Mapping[str, str], port: int) -> str:
    """The shipped file with the test's upstreams, port and log and temp paths."""
    text = SHIPPED.read_text()
    given = {"ingest:8000": upstreams["edge1:8000"], **upstreams}
    for name in SHIPPED_UPSTREAMS:
        text = _once(text, f"server {name}", f"server {given[name]}")
    text = _once(text, "listen 8080;", f"listen 127.0.0.1:{port};")
    text = _once(text, "/var/log/nginx/access.log", str(directory / "access.log"))
    temps = "".join(f"    {t}_temp_path {directory / t};\n" for t in TEMPS)
    return _once(text, "http {\n", "http {\n" + temps)


class Nginx:
    """``with Nginx(tmp_path, {"edge1:8000": "127.0.0.1:P1", "edge2:8000": ...}) as lb:
    lb.url``. Both edge upstreams must be given (map both to one edge to test one); and
    ``"ingest:8000"``, the ingest's HTTP port, for the control and playout POSTs."""

    def __init__(
        self, directory: Path, upstreams: Mapping[str, str], port: int | None = None
    ) -> None:
        self.directory = Path(directory)
        self.upstreams = dict(upstreams)
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def start(self, timeout: float = 10.0) -> None:
        if not os.access(NGINX, os.X_OK):
            raise RuntimeError(f"no {NGINX}: install Debian's nginx (./dev test does, as root)")
        d = self.directory
        d.mkdir(parents=True, exist_ok=True)
        conf = d / "nginx.conf"
        conf.write_text(lb_config(d, self.upstreams, self.port))
        directives = f"daemon off; pid {d / 'nginx.pid'};"
        if os.geteuid() == 0:  # else the workers run as nobody and cannot reach a 0700 tmp dir
            directives += " user root;"
        command = [NGINX, "-p", str(d), "-c", str(conf), "-e", str(d / "error.log")]
        self.process = subprocess.Popen(
            [*command, "-g", directives],
            stdout=subprocess.DEVNULL,
            stderr=(d / "stderr.log").open("ab"),
        )
        deadline = time.monotonic() + timeout
        while not self._listening():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"nginx did not start: {self.errors()}")
            time.sleep(0.05)

    def _listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def errors(self) -> str:
        return "".join(
            (self.directory / name).read_text(errors="replace")
            for name in ("stderr.log", "error.log")
            if (self.directory / name).exists()
        )

    def access_log(self) -> str:
        path = self.directory / "access.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self, grace: float = 10.0) -> None:
        """TERM (fast: a graceful QUIT waits for open websockets) to the master this object
        started, by its pid; KILL after ``grace`` (the master takes its workers with it)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()

    def __enter__(self) -> Nginx:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
