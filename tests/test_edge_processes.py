"""``duplicast serve --role edge --processes 2``: two edge processes on one port
(SO_REUSEPORT), connections spread over both, the workers ended with the first process."""

from __future__ import annotations

import asyncio
import json
import os
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
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


async def test_two_edge_processes_share_the_port_and_stop_together(redis_url: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "hub", "serve", "--role", "edge", "--processes", "2"]
    command += ["--config", str(SAMPLE), "--redis", redis_url, "--port", str(port)]
    edge = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
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
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(w) for w in workers):
            await asyncio.sleep(0.1)
        assert not any(alive(w) for w in workers)
    finally:
        if edge.poll() is None:
            edge.kill()
            edge.wait()
        for worker in workers:
            if alive(worker):
                os.kill(worker, signal.SIGKILL)


def test_processes_need_the_edge_role() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hub", "serve", "--role", "all", "--processes", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--processes needs --role edge" in done.stderr
