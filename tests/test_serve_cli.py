"""What `duplicast serve` tells whoever starts it (a real process each): one line when it
cannot listen, the links to open (tokens hidden unless asked), a warning for each role that
is off."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
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
        assert links["leaderboard"] == f"{base}/overlays/leaderboard.html?slot=1"
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
        assert links["live table (live)"] == "off: DUPLICAST_COMMENTATOR_TOKEN is not set"
        # the programme sources need no token: they are there with the roles off
        assert links["live table"].endswith("/overlays/table.html?table=1&slot=1")
    finally:
        served.stop()


PROGRAMME = ("leaderboard", "seat ranking", "split-screen", "live table", "ticker")


@pytest.mark.parametrize("delay", [False, True], ids=["public", "delayed"])
def test_serve_prints_the_programme_sources_apart_from_the_commentators_links(
    redis_url: str, tmp_path: Path, delay: bool
) -> None:
    """Issue #30 item 3: a crew pastes the printed links into OBS. The programme sources follow
    their slot and read the program feed, one set per output, when ``[broadcast] delay`` is
    set (the public feed otherwise), with no token in any of them; the commentator's links
    (the live feed, hole cards) stand under their own heading, "never on air"."""
    config = tmp_path / "event.toml"
    extra = '\n[broadcast]\ndelay = "20m"\n[broadcast.outputs]\nvenue = "5m"\n' if delay else ""
    config.write_text(SAMPLE.read_text() + extra)
    commentator, operator = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    command = serve_command(redis_url, free_port(), "--show-tokens")
    command[command.index(str(SAMPLE))] = str(config)
    env = environ(commentator=commentator, operator=operator)
    served = Served(command, env, tmp_path / "s.log")
    try:
        links = served.links()
        output = "\n".join(served.lines)
        heading = output.index("Programme sources (paste these into OBS")
        crew = output.index("Commentator only — never on air")
        outputs = {"": ""}
        if delay:
            outputs = {"": "&feed=program", " [venue]": "&feed=program&output=venue"}
        for suffix, feed in outputs.items():
            for label in PROGRAMME:
                url = links[label + suffix]
                assert heading < output.index(url) < crew, label
                assert "slot=1" in url and url.endswith(feed), url
                assert "token" not in url and commentator not in url and operator not in url
        assert ("program 20 min behind, venue 5 min behind" in output) is delay
        if not delay:
            assert "feed=program" not in output and "[venue]" not in output
        for label in ("commentator view", "split-screen (live)", "live table (live)"):
            assert crew < output.index(links[label])
            assert links[label].endswith(f"token={commentator}")
        assert links["operator panel"].endswith(f"token={operator}")
    finally:
        served.stop()


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 130)], ids=["term", "int"]
)
def test_a_stop_while_the_hub_starts_is_quiet(
    redis_url: str, tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    """`docker compose stop` (SIGTERM) or Ctrl-C while the ingest starts (its rebuild, inside
    the HTTP server's start): the process ends as that signal says, without a word. It wrote
    three tracebacks (a closed socket, a cancelled lifespan) and exited 1."""
    config = tmp_path / "event.toml"
    tournament = f"stop-{secrets.token_hex(4)}"  # no other test's ingest holds its lease
    config.write_text(SAMPLE.read_text().replace('id = "ifp-demo"', f'id = "{tournament}"', 1))
    command = [sys.executable, "-m", "hub", "serve", "--role", "all", "--config", str(config)]
    command += ["--redis", redis_url, "--port", str(free_port())]
    log = tmp_path / "stderr"
    with log.open("w") as err:
        env = environ(commentator=secrets.token_urlsafe(24), operator=secrets.token_urlsafe(24))
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while "event epoch" not in log.read_text():  # the ingest's start has begun
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.002)
        proc.send_signal(sig)
        assert proc.wait(30) == code, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = log.read_text()
    assert "Traceback" not in stderr and "ERROR" not in stderr, stderr
