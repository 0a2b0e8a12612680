"""The processes of ``bench/e2e_latency.py``: a private Redis, the ingest and two edges on one
port, the ``wsclients`` spectators, and the machine's CPU counters. Every process is started
by ``edge_bench.started`` and ended by its pid."""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import edge_bench

ROOT = Path(__file__).resolve().parent.parent
# docker-compose.yml's Redis: an ack waits for the fsync of its journal batch.
REDIS_ARGS = ("--appendonly", "yes", "--maxmemory-policy", "noeviction")
REDIS_ARGS += ("--client-output-buffer-limit", "pubsub 16mb 4mb 10")


# -- the processes -----------------------------------------------------------------------------


free_port = edge_bench.free_port


@contextlib.contextmanager
def started(command: list[str], log: Path, **kw: Any) -> Iterator[subprocess.Popen[str]]:
    """``edge_bench.started`` (ended by its pid, TERM then KILL) writing to ``log``."""
    with log.open("ab") as out, edge_bench.started(command, stdout=out, stderr=-2, **kw) as proc:
        yield proc


def wait_for(proc: subprocess.Popen[Any], log: Path, text: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    tail = log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"{proc.args[:6]}: no {text!r} within {timeout} s:\n{tail}")


def redis_server(
    work: Path, stack: contextlib.ExitStack, nice: int = 0, fsync: str = "always"
) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(work)]
    log = work / "redis.log"
    command += [*REDIS_ARGS, "--appendfsync", fsync]
    command += ["--unixsocket", str(work / "redis.sock"), "--unixsocketperm", "700"]
    proc = stack.enter_context(started(command, log, preexec_fn=niced(nice)))
    wait_for(proc, log, "Ready to accept connections", 15)
    return proc, f"redis://127.0.0.1:{port}/0"


PIN_ENV = "DUPLICAST_BENCH_PIN_INGEST"
"""Set to a CPU number: the ingest runs on that core alone (``sched_setaffinity``); run the
bench itself under ``taskset -c OTHERS`` so that everything else (Redis, the edges, the load
generators) keeps off it: the ingest's caches stay its own, as on a server with a core set
aside for it (a deployment's ``cpuset``)."""


def pinned(role: str, nice: int) -> Any:
    """``niced(nice)``, and for the ingest its core (``PIN_ENV``) when one is named."""
    core = os.environ.get(PIN_ENV)
    renice = niced(nice)
    if role != "ingest" or not core:
        return renice

    def pin() -> None:
        os.sched_setaffinity(0, {int(core)})
        if renice is not None:
            renice()

    return pin


def niced(nice: int) -> Any:
    """A ``preexec_fn`` moving a hub process's nice value by ``nice`` (None: unchanged)."""
    if not nice:
        return None
    return lambda: os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + nice)


SOCKET_ENV = "DUPLICAST_BENCH_REDIS_SOCKET"
"""Set (to anything): the hub's processes reach the private Redis by its socket file
(``unix://WORK/redis.sock``, Redis beside the hub), the bench's consoles and readers still by
TCP; unset, everything by loopback TCP."""


PROFILE_ENV = "DUPLICAST_BENCH_PROFILE"
"""Set to a file name: the ingest runs under yappi's CPU clock (``bench/profiled.py``) and
writes its function statistics there when it stops; a second tree's ingest (``--against``)
writes to the same name with ``.against`` added. A profiled run costs the ingest more CPU:
profile and measure in separate runs."""


def hub_command(
    role: str, config: Path, port: int, tree: Path = ROOT, feed: str = "inline"
) -> list[str]:
    command = [sys.executable, "-m", "hub", "serve", "--role", role, "--config", str(config)]
    command += ["--port", str(port)]
    if role == "ingest" and feed != "inline":
        command += ["--feed", feed]
    if role == "edge":
        command += ["--reuse-port", "--max-per-address", "1000000"]
    out = os.environ.get(PROFILE_ENV)
    if role == "ingest" and out:
        out += "" if tree == ROOT else ".against"
        command[1:1] = [str(Path(__file__).with_name("profiled.py")), out]
    return command


def hub_env(url: str, token: str, tree: Path = ROOT) -> dict[str, str]:
    """The hub processes' environment; ``tree``: the checkout whose ``hub`` they run."""
    env = dict(os.environ, DUPLICAST_REDIS_URL=url, DUPLICAST_LOG="WARNING")
    env["DUPLICAST_COMMENTATOR_TOKEN"] = token
    env["DUPLICAST_OPERATOR_TOKEN"] = base64.urlsafe_b64encode(os.urandom(24)).decode()
    env["PYTHONPATH"] = str(tree)
    return env


def start_hub(
    work: Path,
    stack: contextlib.ExitStack,
    text: str,
    token: str,
    nice: int,
    fsync: str,
    tree: Path = ROOT,
    feed: str = "inline",
) -> tuple[subprocess.Popen[str], str, subprocess.Popen[str], list[subprocess.Popen[str]], int]:
    """Redis, the ingest and two edges on one port (started together, waited for in turn):
    (redis, its URL, the ingest, the edges, the edges' port). ``tree``: the checkout whose
    ``hub`` runs (its folder first on the path, and the working directory of ``-m hub``).
    ``feed="separate"``: the ingest only decides, journals and answers, and a projector
    (``serve --role projector``, the last of the edges' list) publishes the feed."""
    config_path = work / "event.toml"
    config_path.write_text(text)
    redis, url = redis_server(work, stack, nice, fsync)
    socket = f"unix://{work / 'redis.sock'}?db=0"
    env = hub_env(socket if os.environ.get(SOCKET_ENV) else url, token, tree)
    port = free_port()
    roles = [("ingest", free_port()), ("edge", port), ("edge", port)]
    if feed == "separate":
        roles.append(("projector", free_port()))
    hubs = [
        stack.enter_context(
            started(
                hub_command(role, config_path, at, tree, feed),
                work / f"{role}{n}.log",
                env=env,
                cwd=tree,
                preexec_fn=pinned(role, nice),
            )
        )
        for n, (role, at) in enumerate(roles)
    ]
    for n, (role, _) in enumerate(roles):
        wait_for(hubs[n], work / f"{role}{n}.log", f"duplicast {role} for", 180)
    return redis, url, hubs[0], hubs[1:], port


# -- the machine ---------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    return edge_bench.proc_cpu_s(pid)


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all cores from /proc/stat, every process of the machine."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return float(sum(fields) - idle), float(sum(fields))


def spectators(
    stack: contextlib.ExitStack,
    command: list[str],
    clients: int,
    priority: str,
) -> subprocess.Popen[str]:
    """A ``wsclients`` process of ``clients`` clients, waited for until all are subscribed."""
    pool = stack.enter_context(
        edge_bench.started(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            preexec_fn=edge_bench.load_priority(priority),
        )
    )
    edge_bench._wait_line(pool, "connected", 60 + clients / 100)
    return pool


def tell(pools: list[subprocess.Popen[str]], line: str) -> None:
    for pool in pools:
        assert pool.stdin is not None
        pool.stdin.write(line + "\n")
        pool.stdin.flush()


def client_command(binary: Path, path: str, tables: int, marks: Path, port: int) -> list[str]:
    return [
        str(binary),
        "-p",
        path,
        "-k",
        str(tables),
        "-o",
        str(marks),
        "edge",
        f"127.0.0.1:{port}",
    ]
