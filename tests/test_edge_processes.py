"""``duplicast serve --role edge --processes 2``: two edge processes on one port
(SO_REUSEPORT), connections spread over both, the workers ended with the first process."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import websockets

pytestmark = [pytest.mark.redis]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def sockets(pid: int) -> int:
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            count += os.readlink(fd).startswith("socket:")
        except OSError:
            continue
    return count


def alive(pid: int) -> bool:
    """Any thread of `pid` not yet a zombie: a process whose main thread has exited shows Z
    while its other threads still end (and hold its sockets open)."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except FileNotFoundError:
        return False
    for task in tasks:
        try:
            status = (task / "status").read_text()
        except FileNotFoundError:
            continue
        if "\nState:\tZ" not in status and "\nState:\tX" not in status:
            return True
    return False


def gone(workers: list[int], within: float) -> bool:
    """Whether every worker has ended, waiting ``within`` seconds at most."""
    deadline = time.monotonic() + within
    while any(alive(w) for w in workers):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def end(edge: subprocess.Popen[str], workers: list[int]) -> None:
    """A test's cleanup: the parent and any worker still there, by pid."""
    if edge.poll() is None:
        edge.kill()
        edge.wait()
    for worker in workers:
        if alive(worker):
            os.kill(worker, signal.SIGKILL)


async def test_two_edge_processes_share_the_port_and_stop_together(
    redis_url: str, tmp_path: Path
) -> None:
    """...and stop cleanly: a worker's ordinary exit at the parent's SIGTERM aborted with
    "Fatal Python error: _enter_buffered_busy" (its lifeline thread held stdin's lock), on the
    stderr the workers share with the parent; the parent left each worker's pipes unclosed
    ("ResourceWarning: unclosed file", shown where warnings are)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "hub", "serve", "--role", "edge", "--processes", "2"]
    command += ["--config", str(SAMPLE), "--redis", redis_url, "--port", str(port)]
    errors = (tmp_path / "stderr").open("w")
    # ResourceWarnings shown (Python hides them): the workers' pipes were left unclosed
    env = {**os.environ, "PYTHONWARNINGS": "default::ResourceWarning"}
    edge = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=errors, text=True, env=env
    )
    errors.close()
    workers: list[int] = []
    try:
        assert edge.stdout is not None
        line = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "processes)" not in line:
            line = edge.stdout.readline()
            assert line or edge.poll() is None, "the edge exited"
        assert "(2 processes)" in line  # printed once every worker listens
        workers = children(edge.pid)
        assert len(workers) == 1
        before = {pid: sockets(pid) for pid in (edge.pid, *workers)}
        clients = []
        for _ in range(30):
            ws = await websockets.connect(f"ws://127.0.0.1:{port}/ws", compression=None)
            hello = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert hello["type"] == "hello" and hello["tournament"] == "ifp-demo"
            clients.append(ws)
        grew = {pid: sockets(pid) - n for pid, n in before.items()}
        assert all(g > 0 for g in grew.values()), grew  # both processes hold clients
        assert sum(grew.values()) >= 30
        for ws in clients:
            await ws.close()
        edge.send_signal(signal.SIGTERM)
        assert edge.wait(15) == 0
        assert gone(workers, within=10)
        no_errors(tmp_path / "stderr")
    finally:
        end(edge, workers)


def test_processes_need_the_edge_role() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hub", "serve", "--role", "all", "--processes", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--processes needs --role edge" in done.stderr


def start_edge(
    redis_url: str, port: int, stderr: Path, processes: int = 2, **options: bool
) -> subprocess.Popen[str]:
    """The edge of ``processes`` processes; their stderr (the workers share it) in ``stderr``."""
    command = [sys.executable, "-m", "hub", "serve", "--role", "edge"]
    command += ["--processes", str(processes), "--config", str(SAMPLE), "--redis", redis_url]
    command += ["--port", str(port)]
    with stderr.open("w") as errors:
        return subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=errors, text=True, **options
        )


def no_errors(stderr: Path) -> None:
    text = stderr.read_text()
    for error in ("Traceback", "Fatal Python error", "ERROR", "never retrieved", "Warning:"):
        assert error not in text, text


def wait_line(process: subprocess.Popen[str], marker: str, timeout: float = 30) -> str:
    assert process.stdout is not None
    line = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and marker not in line:
        line = process.stdout.readline()
        assert line or process.poll() is None, "the process exited"
    assert marker in line
    return line


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def unshared_port() -> int:
    """A free port below the kernel's ephemeral range (32768-60999), which ``bind(port 0)``
    never hands out: once freed, no other process of the run (another pytest-xdist worker's
    hub) can be given it, so whoever accepts there afterwards is ours."""
    for port in random.sample(range(20_000, 32_000), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port between 20000 and 32000")


def test_workers_end_with_a_sigkilled_parent(redis_url: str, tmp_path: Path) -> None:
    """A SIGKILLed parent cannot stop its workers: they must notice and end by themselves
    (hub.roles.lifeline), else orphans keep serving the port."""
    port = unshared_port()
    edge = start_edge(redis_url, port, tmp_path / "stderr", processes=3)
    workers: list[int] = []
    try:
        wait_line(edge, "(3 processes)")
        workers = children(edge.pid)
        assert len(workers) == 2 and all(alive(w) for w in workers)
        assert accepts(port)
        edge.kill()  # SIGKILL: no handler, no finally, no stop_workers
        edge.wait()
        killed = time.monotonic()
        assert gone(workers, within=3)
        took = time.monotonic() - killed
        assert not accepts(port)
        no_errors(tmp_path / "stderr")
        print(f"workers gone {took:.2f} s after their parent's SIGKILL")
    finally:
        end(edge, workers)


def test_ctrl_c_while_the_workers_start_is_quiet(redis_url: str, tmp_path: Path) -> None:
    """Ctrl-C in a terminal (SIGINT to the foreground process group) while the workers start:
    exit 130, no worker left, nothing on stderr. A worker still importing wrote a
    KeyboardInterrupt traceback, and the parent, cancelled in wait_for(gather),
    "ERROR asyncio: _GatheringFuture exception was never retrieved" (or, when a worker had
    died first, a RuntimeError and uvicorn's traceback, exit 1)."""
    edge = start_edge(redis_url, unshared_port(), tmp_path / "stderr", start_new_session=True)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while not (workers := children(edge.pid)):  # the parent waits for them to listen
            assert edge.poll() is None and time.monotonic() < deadline
            time.sleep(0.005)
        time.sleep(0.2)  # the worker is importing (about a second), its SIGINT handler set
        os.killpg(edge.pid, signal.SIGINT)  # what the terminal does: the whole group
        assert edge.wait(30) == 130, (tmp_path / "stderr").read_text()
        assert gone(workers, within=10)
        no_errors(tmp_path / "stderr")
    finally:
        end(edge, workers)
