"""A Redis password never shows: not in a log line or printout (``redis://user:***@host``),
not in a worker's command line (``serve --processes N`` passes the URL by environment). And a
tournament file without ``[consoles]`` is announced at start: any console name goes."""

from __future__ import annotations

import io
import logging
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from redis_server import RedisServer, free_port

from hub import logs
from hub.cli.serve import NO_CONSOLES_WARNING
from hub.redact import redact, redacted_url

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
TOKENS = {
    "DUPLICAST_COMMENTATOR_TOKEN": "Hq8w-Zt3_Np6mVc1RyD5sLk-comm",
    "DUPLICAST_OPERATOR_TOKEN": "Hq8w-Zt3_Np6mVc1RyD5sLk-oper",
}


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://user:s3cr3t@host:6379/0", "redis://user:***@host:6379/0"),
        ("redis://:s3cr3t@host/0", "redis://:***@host/0"),
        ("redis://s3cr3t@host/0", "redis://***@host/0"),
        ("rediss://user:s3@cr3t@host/0", "rediss://user:***@host/0"),
        ("redis://host:6379/0?password=s3cr3t&db=1", "redis://host:6379/0?password=***&db=1"),
        ("unix:///run/redis.sock?db=0&password=s3cr3t", "unix:///run/redis.sock?db=0&password=***"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
    ],
)
def test_urls_are_shown_without_their_password(url: str, shown: str) -> None:
    assert redacted_url(url) == shown
    assert redact(f"cannot reach {url} now") == f"cannot reach {shown} now"


def test_every_log_line_is_redacted_and_repeats_still_collapse() -> None:
    out = io.StringIO()
    logger = logging.getLogger(f"test-redact-{secrets.token_hex(4)}")
    logger.propagate = False
    handler = logging.StreamHandler(out)
    logger.addHandler(handler)
    (repeat,) = logs.install(logger, first=2, window=60)
    for _ in range(5):  # a library's message with the URL in its arguments
        logger.warning("lost %s: %s", "redis://hub:s3cr3t@redis:6379/0", "reset")
    repeat.flush()
    text = out.getvalue()
    assert "s3cr3t" not in text
    assert text.count("redis://hub:***@redis:6379/0") == 2
    assert "repeated 3 times" in text


def env(url: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    return {**clean, **TOKENS, "PYTHONUNBUFFERED": "1", "DUPLICAST_REDIS_URL": url}


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def wait_for(log: Path, proc: subprocess.Popen[bytes], text: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while text not in (seen := log.read_text(errors="replace")):
        assert proc.poll() is None, f"exited {proc.returncode}: {seen[-2000:]}"
        assert time.monotonic() < deadline, seen[-2000:]
        time.sleep(0.1)
    return seen


@pytest.mark.redis
def test_edge_workers_get_the_password_by_environment_and_no_log_shows_it(
    tmp_path: Path,
) -> None:
    password = secrets.token_urlsafe(18)
    with RedisServer(tmp_path / "redis", extra=("--requirepass", password)) as server:
        port = free_port()
        urls = (
            f"redis://default:{password}@127.0.0.1:{server.port}/0",
            f"redis://127.0.0.1:{server.port}/0?password={password}",
        )
        for n, url in enumerate(urls):
            log = tmp_path / f"edge{n}.log"
            command = [sys.executable, "-m", "hub", "serve", "--role", "edge"]
            command += ["--processes", "2", "--config", str(SAMPLE), "--port", str(port)]
            with log.open("wb") as out:
                edge = subprocess.Popen(
                    command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env(url)
                )
            workers: list[int] = []
            try:
                wait_for(log, edge, "(2 processes)")
                workers = children(edge.pid)
                assert len(workers) == 1
                for pid in (edge.pid, *workers):
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                    assert b"serve" in cmdline and password.encode() not in cmdline
                edge.send_signal(signal.SIGTERM)
                assert edge.wait(20) == 0
            finally:
                if edge.poll() is None:
                    edge.kill()
                    edge.wait()
                for pid in workers:
                    if Path(f"/proc/{pid}").exists():
                        os.kill(pid, signal.SIGKILL)
            text = log.read_text(errors="replace")
            assert password not in text
            assert ":***@" in text or "password=***" in text  # the startup line names Redis
        # A refused password: one line naming Redis, without the password given.
        wrong = secrets.token_urlsafe(18)
        url = f"redis://default:{wrong}@127.0.0.1:{server.port}/0"
        done = subprocess.run(
            [sys.executable, "-m", "hub", "serve", "--role", "edge", "--config", str(SAMPLE),
             "--port", str(port)],
            cwd=ROOT, capture_output=True, text=True, env=env(url), timeout=60,
        )  # fmt: skip
        assert done.returncode == 1
        assert wrong not in done.stderr + done.stdout and "default:***@" in done.stderr


@pytest.mark.redis
def test_serve_warns_once_when_the_file_has_no_consoles_section(tmp_path: Path) -> None:
    bare = tmp_path / "bare.toml"
    bare.write_text(SAMPLE.read_text().split("[consoles]")[0])
    with RedisServer(tmp_path / "redis") as server:
        for config, warned in ((bare, True), (SAMPLE, False)):
            log = tmp_path / f"{config.stem}.log"
            command = [sys.executable, "-m", "hub", "serve", "--role", "ingest"]
            command += ["--config", str(config), "--port", str(free_port())]
            with log.open("wb") as out:
                ingest = subprocess.Popen(
                    command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env(server.url)
                )
            try:
                text = wait_for(log, ingest, "duplicast ingest for")
            finally:
                ingest.send_signal(signal.SIGTERM)
                ingest.wait(20)
            assert text.count(NO_CONSOLES_WARNING) == (1 if warned else 0)
