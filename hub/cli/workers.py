"""The edge workers of ``serve --processes N``: started on the first process's port, awaited
until they listen, their output passed on, and stopped with it (``hub.roles.lifeline``: they end
with it even when it is SIGKILLed)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from hub.cli.args import REDIS_ENV
from hub.domain.states import ProcessRole

__all__ = ["raise_open_files", "start_edge_workers", "stop_workers", "wait_listening"]

log = logging.getLogger("duplicast")


def raise_open_files() -> None:
    """The open-file limit up to its hard limit: every client is a descriptor, and many
    systems start a service at a soft 1024, which 1,000 clients (or half-sent requests) use
    up. The hard limit is the administrator's (``LimitNOFILE``, ``ulimit -Hn``)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    if soft != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):  # e.g. macOS refuses above OPEN_MAX
            log.info("open-file limit left at %d", soft)


def start_edge_workers(args: argparse.Namespace, port: int) -> list[subprocess.Popen[bytes]]:
    """``args.processes - 1`` more edge processes on this one's port (``SO_REUSEPORT``: the
    kernel spreads new connections over them), each the same edge, without a metrics port of
    its own. An update's fan-out is one socket write per client, so clients spread over N
    processes are served by N cores at once (docs/performance.md). Their output is passed on;
    see ``wait_listening``. Each ends with this process however it ends (``hub.roles.lifeline``:
    its stdin is a pipe only we hold, and on Linux the kernel kills it when we exit). The
    Redis URL goes in their environment, not their command line: a password there would be
    in ``ps`` and ``/proc/PID/cmdline`` for every local user. They are not in this process's
    group: a terminal's Ctrl-C reaches this process only, which stops them (``stop_workers``)."""
    command = [sys.executable, "-m", "hub", "serve", "--role", ProcessRole.EDGE, "--reuse-port"]
    command += ["--worker-of", str(os.getpid())]
    command += ["--config", str(args.config)]
    command += ["--host", args.host, "--port", str(port)]
    command += ["--max-per-address", str(args.max_per_address)]
    command += ["--request-timeout", str(args.request_timeout)]
    for proxy in args.trusted_proxy or ():  # else the workers read the same environment
        command += ["--trusted-proxy", proxy]
    if args.max_pending_requests is not None:
        command += ["--max-pending-requests", str(args.max_pending_requests)]
    env = {**os.environ, REDIS_ENV: args.redis}
    # A process group of its own: Ctrl-C in a terminal signals the foreground group, and a
    # worker still importing wrote a KeyboardInterrupt traceback; this process stops them.
    return [
        subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, process_group=0
        )
        for _ in range(args.processes - 1)
    ]


async def wait_listening(workers: list[subprocess.Popen[bytes]], timeout: float = 60.0) -> None:
    """Until every worker printed its listening line (then its output goes on to ours)."""

    def first_line(worker: subprocess.Popen[bytes]) -> bytes:
        assert worker.stdout is not None
        line = worker.stdout.readline()
        while line and not line.startswith(b"duplicast edge"):  # what it runs on, first
            line = worker.stdout.readline()
        threading.Thread(target=_forward, args=(worker.stdout,), daemon=True).start()
        return line

    # not wait_for(gather): cancelled (Ctrl-C while the workers start), Python 3.11's wait_for
    # left the gather's CancelledError unretrieved ("ERROR asyncio: _GatheringFuture exception
    # was never retrieved"), or returned its result and lost the cancellation
    async with asyncio.timeout(timeout):
        lines = await asyncio.gather(*(asyncio.to_thread(first_line, w) for w in workers))
    for worker, line in zip(workers, lines, strict=True):
        if not line.startswith(b"duplicast edge"):
            raise RuntimeError(f"edge worker {worker.pid} did not start: {line!r}")


def _forward(stream: Any) -> None:
    with stream:  # closed at the worker's end (else "ResourceWarning: unclosed file")
        for line in stream:
            sys.stdout.buffer.write(line)
            sys.stdout.flush()


def stop_workers(workers: list[subprocess.Popen[bytes]], grace: float = 5.0) -> None:
    """End the worker processes this one started, by pid: TERM, then KILL after ``grace``."""
    for worker in workers:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for worker in workers:
        try:
            worker.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        if worker.stdin is not None:  # its lifeline (its stdout: closed by _forward)
            worker.stdin.close()
