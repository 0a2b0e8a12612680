"""``/readyz`` means what it says in every documented topology (issue #30 item 2): real
``duplicast serve`` processes on a Redis of the test's own, each HTTP process polled until it
is ready and then for some seconds more, while a client plays a hand's worth of events.

An edge beside a separate feed (``--role ingest --feed separate`` + ``--role projector``)
answered 200 for about a second and then 503 for ever while it served clients normally: its
readiness counted the task that waits for a writer's first answer, which ends once one has
answered. A readiness probe (Kubernetes, a balancer's health check, compose) would have taken
every edge out.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.nginx import free_port
from tests.redis_server import RedisServer

pytestmark = [pytest.mark.redis]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
SESSION = ROOT / "samples" / "ifp6-session.jsonl"
TOKENS = {
    "DUPLICAST_COMMENTATOR_TOKEN": "rZ4q-Lp7_Xc2mZt8RwB3sKd-comm",
    "DUPLICAST_OPERATOR_TOKEN": "rZ4q-Lp7_Xc2mZt8RwB3sKd-oper",
}
HOLD = 4.0  # seconds every process must stay ready once it is (it fell after ~1 s)


def env(url: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    return {**base, **TOKENS, "PYTHONUNBUFFERED": "1", "DUPLICAST_REDIS_URL": url}


class Processes:
    """``duplicast`` processes of one topology, each logging to a file, stopped by pid."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.starting: list[tuple[str, subprocess.Popen[bytes], str]] = []  # and their marker

    def start(self, name: str, args: list[str], url: str, marker: str, wait: bool = True) -> None:
        """Start one; with ``wait``, return once each started says ``marker`` (without, the
        next ones start at once, as compose starts a topology: ``ready`` waits for them)."""
        log = self.tmp / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "hub", *args, "--config", str(SAMPLE)],
                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env(url),
            )  # fmt: skip
        self.procs.append((name, proc))
        self.starting.append((name, proc, marker))
        if wait:
            self.ready()

    def ready(self) -> None:
        starting, self.starting = self.starting, []
        deadline = time.monotonic() + 60
        for name, proc, marker in starting:
            log = self.tmp / f"{name}.log"
            while marker not in log.read_text(errors="replace"):
                assert proc.poll() is None, f"{name} exited: {log.read_text()[-2000:]}"
                assert time.monotonic() < deadline, f"{name}: {log.read_text()[-2000:]}"
                time.sleep(0.1)

    def serve(self, name: str, role: str, url: str, *extra: str, wait: bool = True) -> int:
        port = free_port()
        args = ["serve", "--role", role, "--port", str(port), *extra]
        self.start(name, args, url, f"duplicast {role} for", wait)
        return port

    def stop(self) -> None:
        for _, proc in reversed(self.procs):
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
        for _, proc in self.procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()


def play(url: str, tmp: Path, events: int = 60) -> None:
    """Some of the sample session, sent by the console CLI as the venue's consoles would."""
    log = tmp / "session.jsonl"
    log.write_text("".join(SESSION.read_text().splitlines(keepends=True)[:events]))
    done = subprocess.run(
        [sys.executable, "-m", "hub", "console", "replay", "--tournament", "ifp-demo", str(log)],
        cwd=ROOT, env=env(url), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]


def stays_ready(ports: dict[str, int], url: str, tmp: Path) -> None:
    """Every port ready within 30 s, then ready at every look for ``HOLD`` seconds, while
    some play goes through."""
    deadline = time.monotonic() + 30
    for name, port in ports.items():
        while True:
            status = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code
            if status == 200:
                break
            assert time.monotonic() < deadline, f"{name} never ready"
            time.sleep(0.2)
    play(url, tmp)
    seen: dict[str, set[int]] = {name: set() for name in ports}
    end = time.monotonic() + HOLD
    while time.monotonic() < end:
        for name, port in ports.items():
            seen[name].add(httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code)
        time.sleep(0.2)
    assert seen == {name: {200} for name in ports}


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[str]:
    with RedisServer(tmp_path / "redis") as server:
        yield server.url


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    procs = Processes(tmp_path)
    try:
        yield procs
    finally:
        procs.stop()


def test_all_in_one(redis: str, processes: Processes, tmp_path: Path) -> None:
    ports = {"all": processes.serve("all", "all", redis)}
    stays_ready(ports, redis, tmp_path)


def test_ingest_and_edges(redis: str, processes: Processes, tmp_path: Path) -> None:
    ports = {"ingest": processes.serve("ingest", "ingest", redis, wait=False)}
    ports |= {f"edge{i}": processes.serve(f"edge{i}", "edge", redis, wait=False) for i in (1, 2)}
    processes.ready()
    stays_ready(ports, redis, tmp_path)


def test_an_edge_started_before_the_ingest(
    redis: str, processes: Processes, tmp_path: Path
) -> None:
    """Not ready while no writer has answered (it serves nothing new); ready once one has,
    and then for good (the task that waited for it ends)."""
    edge = processes.serve("edge", "edge", redis)
    time.sleep(1.5)
    assert httpx.get(f"http://127.0.0.1:{edge}/readyz", timeout=5).status_code == 503
    ports = {"ingest": processes.serve("ingest", "ingest", redis), "edge": edge}
    stays_ready(ports, redis, tmp_path)


def separate_feed(processes: Processes, urls: dict[str, str]) -> dict[str, int]:
    """Its processes started at once, returned once each serves."""
    ingest = processes.serve("ingest", "ingest", urls["ingest"], "--feed", "separate", wait=False)
    processes.start("projector", ["serve", "--role", "projector"], urls["projector"],
                    "duplicast projector for", wait=False)  # fmt: skip
    ports = {"ingest": ingest}
    ports |= {
        f"edge{i}": processes.serve(f"edge{i}", "edge", urls["edge"], wait=False) for i in (1, 2)
    }
    processes.ready()
    return ports


def test_a_separate_feed_and_edges(redis: str, processes: Processes, tmp_path: Path) -> None:
    """The edges answered 200 for about a second, then 503 for ever."""
    urls = {"ingest": redis, "projector": redis, "edge": redis}
    stays_ready(separate_feed(processes, urls), redis, tmp_path)


def test_a_separate_feed_and_edges_with_acl_users(processes: Processes, tmp_path: Path) -> None:
    """The same with the users ``duplicast acl`` writes, each role with its own."""
    port = free_port()
    acl, creds = tmp_path / "users.acl", tmp_path / "credentials.txt"
    done = subprocess.run(
        [sys.executable, "-m", "hub", "acl", "--config", str(SAMPLE), "--out", str(acl),
         "--credentials-out", str(creds), "--host", f"127.0.0.1:{port}"],
        cwd=ROOT, capture_output=True, text=True, env=env(""), timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    admin = secrets.token_hex(16)
    acl.write_text(acl.read_text() + f"user test-admin on >{admin} ~* &* +@all\n")
    users = dict(line.split() for line in creds.read_text().splitlines() if line[:1] != "#")
    with RedisServer(tmp_path / "redis", port=port, extra=("--aclfile", str(acl))):
        urls = {
            "ingest": users["duplicast-ingest"],
            "projector": users["duplicast-projector"],
            "edge": users["duplicast-edge"],
        }
        try:
            ports = separate_feed(processes, urls)
            stays_ready(ports, f"redis://test-admin:{admin}@127.0.0.1:{port}/0", tmp_path)
        finally:
            processes.stop()
