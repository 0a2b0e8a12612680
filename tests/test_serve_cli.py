"""What `duplicast serve` tells whoever starts it (a real process each): one line when it
cannot listen, the links to open (tokens hidden unless asked), a warning for each role that
is off."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.redis_server import free_port

pytestmark = [pytest.mark.redis]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"


def serve_command(redis_url: str, port: int, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "hub", "serve", "--role", "edge", "--config", str(SAMPLE)]
    return [*command, "--redis", redis_url, "--port", str(port), *extra]


def environ(**tokens: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    return env | {f"DUPLICAST_{k.upper()}_TOKEN": v for k, v in tokens.items()}


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port another process listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


@pytest.mark.parametrize("extra", [(), ("--processes", "2")], ids=["one", "processes"])
def test_a_port_in_use_is_one_line_and_a_failure(
    redis_url: str, held_port: int, extra: tuple[str, ...]
) -> None:
    done = subprocess.run(
        serve_command(redis_url, held_port, *extra),
        cwd=ROOT,
        env=environ(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"duplicast serve: cannot listen on 127.0.0.1:{held_port}: the address is already in "
        "use (another process listens there: stop it, or choose another port)"
    )


def test_a_port_shared_by_other_reuse_port_listeners_is_in_use(redis_url: str) -> None:
    """`--processes N` binds with SO_REUSEPORT, which the kernel lets a second group join:
    a second hub started on the first one's port would silently take half its clients."""
    port = free_port()
    with socket.socket() as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        other.bind(("127.0.0.1", port))
        other.listen()
        done = subprocess.run(
            serve_command(redis_url, port, "--processes", "2"),
            cwd=ROOT,
            env=environ(),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1 and "already in use" in done.stderr, done.stderr


class Served:
    """A `duplicast serve` running until the test ends; its output read up to the links."""

    def __init__(self, command: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=self.log, text=True
        )
        self.lines: list[str] = []
        self.linked = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.linked.wait(60):
            self.stop()
            raise AssertionError(f"no links printed: {self.lines} {log.read_text()}")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith("  websocket"):
                self.linked.set()

    def links(self) -> dict[str, str]:
        pairs = (line.strip().split("  ", 1) for line in self.lines if line.startswith("  "))
        return {label: rest.strip() for label, rest in pairs}

    def stderr(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.mark.parametrize("show", [False, True], ids=["hidden", "shown"])
def test_serve_prints_its_links_with_tokens_hidden_unless_asked(
    redis_url: str, tmp_path: Path, show: bool
) -> None:
    commentator, operator = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    port = free_port()
    extra = ("--show-tokens",) if show else ()
    served = Served(
        serve_command(redis_url, port, *extra),
        environ(commentator=commentator, operator=operator),
        tmp_path / "serve.log",
    )
    try:
        links = served.links()
        output = "\n".join(served.lines)
        base = f"http://127.0.0.1:{port}"
        assert links["leaderboard"] == f"{base}/overlays/leaderboard.html"
        assert links["websocket"] == f"ws://127.0.0.1:{port}/ws"
        if show:
            assert links["operator panel"] == f"{base}/overlays/operator.html#token={operator}"
            assert links["commentator view"].endswith(f"#token={commentator}")
        else:
            assert commentator not in output and operator not in output
            assert commentator not in served.stderr() and operator not in served.stderr()
            assert links["operator panel"].endswith("#token=$DUPLICAST_OPERATOR_TOKEN")
            assert links["commentator view"].endswith("#token=$DUPLICAST_COMMENTATOR_TOKEN")
        assert "warning" not in served.stderr()
        for label in ("overlays index", "leaderboard", "operator panel"):  # they are served
            url = links[label].replace("$DUPLICAST_OPERATOR_TOKEN", operator)
            assert httpx.get(url, timeout=10).status_code == 200, url
    finally:
        served.stop()


def test_serve_warns_when_the_commentator_and_operator_roles_are_off(
    redis_url: str, tmp_path: Path
) -> None:
    served = Served(serve_command(redis_url, free_port()), environ(), tmp_path / "serve.log")
    try:
        stderr = served.stderr()
        assert (
            "duplicast serve: warning: the operator role is off (DUPLICAST_OPERATOR_TOKEN not set)"
            in stderr
        )
        assert (
            "duplicast serve: warning: the commentator role is off "
            "(DUPLICAST_COMMENTATOR_TOKEN not set)" in stderr
        )
        links = served.links()
        assert links["operator panel"] == "off: DUPLICAST_OPERATOR_TOKEN is not set"
        assert links["live table"] == "off: DUPLICAST_COMMENTATOR_TOKEN is not set"
    finally:
        served.stop()
