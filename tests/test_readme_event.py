"""The README's event-day block, run as written: prepare, rehearse on the event's Redis, export,
replay, verify, reset, and serve the event (issue #10, "Done when"; issue #30 item 9), then the
first real hand played on a console link the last `serve` printed, in Chromium.

The block runs line by line in one bash (as a person types it: `export` and `$hub` carry from
line to line, `serve ... &` runs in the background) in a fresh folder outside the checkout
(nothing of it there: no `samples/`, no $DUPLICAST_HOME), on the real Redis of the fixture
(``DUPLICAST_REDIS_URL``, which the README names), with a PATH of the system's folders and the
virtualenv's `bin/` only, as the README says to set it up. Two things only are the test's own:
the tournament id is made unique (the Redis may be shared), and each `serve` gets a free port
(8000 may be taken). The tokens are the block's own (`export ...`): the test has none.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
import redis
from playwright.sync_api import Browser, expect

from tests.browser import new_page
from tests.test_console_page import settled, tid

ROOT = Path(__file__).resolve().parent.parent
CONSOLE_LINK = re.compile(
    r"^  console table (\d+)\s+(http://\S+/overlays/console\.html#token=(\S+))$"
)


def event_day_block() -> list[str]:
    """The commands of the README's first ``sh`` block under "Running a tournament"."""
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme[readme.index("## Running a tournament") :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    joined = block.group(1).replace("\\\n", " ")
    return [line for line in joined.splitlines() if line.strip()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Shell:
    """One bash reading the block's lines from a pipe, as a terminal's shell would read them
    typed: each line's exit status and output (with what background jobs print meanwhile)."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.count = 0
        self.pids: list[int] = []  # the background jobs started (stopped at the end)
        self.run("set -uo pipefail", 10)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()

    def run(self, command: str, timeout: float) -> tuple[int, list[str]]:
        """Type ``command``; its exit status and the lines printed until it ended."""
        self.count += 1
        marker = f"__readme_{self.count}_{uuid.uuid4().hex[:6]}__"
        start = len(self.lines)
        assert self.process.stdin is not None
        self.process.stdin.write(f'{command}\necho "{marker} $?"\n')
        self.process.stdin.flush()
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                for i in range(start, len(self.lines)):
                    if self.lines[i].startswith(marker):
                        return int(self.lines[i].split()[-1]), self.lines[start:i]
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    pytest.fail(f"{command}: no end within {timeout} s\n" + self.output(start))
                self.changed.wait(left)

    def value(self, expression: str) -> str:
        """What the shell expands ``expression`` to (``$DUPLICAST_OPERATOR_TOKEN``)."""
        code, out = self.run(f'printf "%s\\n" "{expression}"', 10)
        assert code == 0 and len(out) == 1, out
        return out[0]

    def wait_for(
        self, pattern: re.Pattern[str], count: int, since: int, timeout: float
    ) -> list[str]:
        """``count`` lines matching ``pattern`` printed after line ``since``."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                found = [x for x in self.lines[since:] if pattern.match(x)]
                if len(found) >= count or time.monotonic() > deadline:
                    return found
                self.changed.wait(0.2)

    def output(self, since: int = 0) -> str:
        return "\n".join(self.lines[since:])

    def close(self) -> None:
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        for pid in self.pids:  # a hub that ignored SIGTERM
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.redis
@pytest.mark.browser
@pytest.mark.timeout(480)
def test_the_readme_event_day_ends_ready_for_the_first_real_hand(
    tmp_path: Path, redis_url: str, browser: Browser
) -> None:
    commands = event_day_block()
    names = [" ".join(shlex.split(c, comments=True)[:2]) for c in commands]
    for wanted in ("draw", "decks", "acl", "serve", "console", "export", "replay", "reset"):
        assert f"duplicast {wanted}" in names, names
    assert names[-1] == "duplicast serve", "the block ends with the event's hub"
    assert not tmp_path.is_relative_to(ROOT) and not any(tmp_path.iterdir())
    tournament = f"readme-{uuid.uuid4().hex[:8]}"
    env = fresh_shell_env(tmp_path)
    env.update(DUPLICAST_REDIS_URL=redis_url)
    shell = Shell(tmp_path, env)
    ports: list[int] = []
    try:
        for command in commands:
            since = len(shell.lines)
            if command.startswith("duplicast serve"):
                ports.append(free_port())
                command = re.sub(r"\s*&", f" --port {ports[-1]} &", command, count=1)
            code, out = shell.run(command, 180)
            text = "\n".join(out)
            assert code == 0, f"{command}\n{text}"
            if command.startswith("duplicast serve"):
                shell.pids.append(int(shell.value("$!")))
                wait_ready(shell, ports[-1], since)
            if command.startswith(("duplicast init", "duplicast draw", "duplicast decks")):
                assert "sequential" not in text, text  # the block adds a schedule two lines on
            if command.startswith("duplicast init"):  # the id made unique (a shared Redis)
                event = tmp_path / "event" / "event.toml"
                text = re.sub(
                    r'^id = ".*"$', f'id = "{tournament}"', event.read_text(), count=1, flags=re.M
                )
                event.write_text(text)
            if "console simulate" in command:
                assert ", 0 rejected" in text, text
            if command.startswith("duplicast replay"):  # the rehearsal's hub still serves
                rehearsal_checks(shell, tmp_path, ports[-1], tournament)
            if command.startswith("duplicast reset"):
                assert f"deleted tournament {tournament!r}" in text, text
        event_port = ports[-1]
        assert len(ports) == 2 and event_port != ports[0]
        assert (tmp_path / "deck.key").stat().st_mode & 0o077 == 0
        assert (tmp_path / "commitment.txt").read_text().startswith("commitment: sha256:")
        assert "user duplicast-ingest on" in (tmp_path / "deploy" / "users.acl").read_text()
        # The rehearsal's hub printed its console links with the tokens hidden; the event's,
        # asked to show them, one per table with its token.
        hidden = [x for x in shell.lines if x.startswith("  console table ")]
        assert any("<table1's token in console-tokens.txt>" in x for x in hidden), hidden
        links = event_console_links(shell, tmp_path)
        operator = shell.value("$DUPLICAST_OPERATOR_TOKEN")
        commentator = shell.value("$DUPLICAST_COMMENTATOR_TOKEN")
        assert len(operator) >= 32 and len(commentator) >= 32 and operator != commentator
        printed = shell.output()
        assert f"operator.html#token={operator}" in printed
        assert f"commentator.html#token={commentator}" in printed
        # Nothing of the rehearsal is left: the event's journal is empty, its standings blank.
        client = redis.Redis.from_url(redis_url)
        try:
            assert client.xlen(f"dup:{tournament}:journal") == 0
        finally:
            client.close()
        first_real_hand(browser, shell, tmp_path, links[1], tournament)
    finally:
        shell.close()
        client = redis.Redis.from_url(redis_url)
        try:
            keys = list(client.scan_iter(match=f"dup:{tournament}:*", count=1000))
            if keys:
                client.delete(*keys)
        finally:
            client.close()


def rehearsal_checks(shell: Shell, folder: Path, port: int, tournament: str) -> None:
    """The rehearsal's export replays to exactly the standings its live hub shows."""
    operator = shell.value("$DUPLICAST_OPERATOR_TOKEN")
    replayed = json.loads((folder / "standings.json").read_text())
    live = httpx.get(
        f"http://127.0.0.1:{port}/api/standings",
        headers={"Authorization": f"Bearer {operator}"},
        timeout=10,
    ).json()["data"]
    assert replayed == live
    exported = (folder / "rehearsal.jsonl").read_text().splitlines()
    header, *records = [json.loads(line) for line in exported]
    assert header["journal"]["tournament"] == tournament and header["journal"]["epoch"]
    assert len(records) > 500 and all(r["tournament"] == tournament
                                      for r in records if "refused" not in r)  # fmt: skip
    teams = replayed["like_for_like"]["teams"]
    assert sum(t["points"] for t in teams) == 6 * 6 * 7 / 2  # every deal scored


def event_console_links(shell: Shell, folder: Path) -> dict[int, str]:
    """The console links the event's `serve` printed: one per table, each with the token
    `acl --console-tokens-out` made for that table's console."""
    last_serve = max(i for i, x in enumerate(shell.lines) if x.startswith("duplicast serve: role"))
    lines = shell.wait_for(CONSOLE_LINK, 6, last_serve, 10)
    found = {}
    for line in lines:
        match = CONSOLE_LINK.match(line)
        assert match is not None
        found[int(match.group(1))] = (match.group(2), match.group(3))
    tokens = {}
    for line in (folder / "console-tokens.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            _console, table, token = line.split()
            tokens[int(table)] = token
    assert sorted(found) == [1, 2, 3, 4, 5, 6], lines
    assert {t: token for t, (_, token) in found.items()} == tokens
    return {t: link for t, (link, _) in found.items()}


def first_real_hand(
    browser: Browser, shell: Shell, folder: Path, link: str, tournament: str
) -> None:
    """Table 1's official opens the printed link: its first deal starts at seq 1, every seat
    but the big blind folds, the deal completes; the journal holds exactly that, accepted."""
    config = (folder / "event" / "event.toml").read_text()
    row = re.search(r'^"1" = \[(\d+),', config[config.index("[schedule.tables]") :], re.M)
    assert row is not None
    first_deal = int(row.group(1))
    errors: list[str] = []
    page = new_page(browser, 1280, 800, errors)
    try:
        page.goto(link)
        expect(tid(page, "link")).to_have_attribute("data-state", "open", timeout=10_000)
        expect(tid(page, "start")).to_have_text(f"Start deal {first_deal}", timeout=10_000)
        tid(page, "start").click()
        settled(page)
        for _ in range(5):
            expect(tid(page, "fold")).to_be_enabled(timeout=5000)
            tid(page, "fold").click()
            settled(page)
        expect(tid(page, "deal")).to_contain_text("complete", timeout=5000)
    finally:
        page.context.close()
    assert errors == []
    code, out = shell.run(
        "duplicast export --events --config event/event.toml --out first-hand.jsonl", 60
    )
    assert code == 0, out
    header, *records = [
        json.loads(x) for x in (folder / "first-hand.jsonl").read_text().splitlines()
    ]
    assert header["journal"]["tournament"] == tournament
    assert [(r.get("table"), r.get("console"), r.get("seq"), r.get("type")) for r in records] == [
        (1, "table1", 1, "start"),
        *[(1, "table1", seq, "fold") for seq in range(2, 7)],
    ], records
    assert records[0]["deal"] == first_deal


def fresh_shell_env(home: Path) -> dict[str, str]:
    """A login-like environment: the system's PATH plus the virtualenv's ``bin/`` (where
    `duplicast` is, as after `. .venv/bin/activate`), nothing of the checkout or of Duplicast's
    own settings from the caller's shell."""
    venv_bin = Path(sys.executable).parent
    keep = ("LANG", "LC_ALL", "TZ", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(
        PATH=os.pathsep.join([str(venv_bin), "/usr/local/bin", "/usr/bin", "/bin"]),
        HOME=str(home),
        XDG_STATE_HOME=str(home / ".state"),
        VIRTUAL_ENV=str(venv_bin.parent),
    )
    return env


def test_init_writes_the_sample_event_and_never_overwrites(tmp_path: Path) -> None:
    env = fresh_shell_env(tmp_path)
    run = subprocess.run(
        ["bash", "-c", "duplicast init event/ --id cup-1 && duplicast init event/"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1, run.stderr
    assert run.stderr.splitlines()[-1] == "duplicast init: event/event.toml exists: not overwritten"
    written = (tmp_path / "event" / "event.toml").read_text()
    sample = (ROOT / "samples" / "event.toml").read_text()
    assert written == sample.replace('id = "my-event"', 'id = "cup-1"', 1)
    bad = subprocess.run(
        ["duplicast", "init", "other", "--id", "no spaces"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1 and len(bad.stderr.splitlines()) == 1, bad.stderr
    assert bad.stderr.startswith("duplicast init: tournament.id: ")
    assert not (tmp_path / "other" / "event.toml").exists()


def wait_ready(shell: Shell, port: int, since: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    pytest.fail(f"serve was not ready within 60 s:\n{shell.output(since)}")


@pytest.mark.redis
def test_reset_asks_first_and_refuses_while_a_hub_serves(tmp_path: Path, redis_url: str) -> None:
    """`duplicast reset` says what it holds and deletes only when the tournament id is typed
    back (or --yes); never without a terminal to ask on; never while a hub holds the lease."""
    import argparse
    import asyncio
    import concurrent.futures

    from hub.cli.reset import run_reset

    tournament = f"reset-{uuid.uuid4().hex[:8]}"
    env = fresh_shell_env(tmp_path)
    subprocess.run(
        ["duplicast", "init", "event/", "--id", tournament], cwd=tmp_path, env=env, check=True
    )
    config = tmp_path / "event" / "event.toml"
    client = redis.Redis.from_url(redis_url)
    prefix = f"dup:{tournament}"
    try:
        client.xadd(f"{prefix}:journal", {"d": b"x"})
        client.set(f"{prefix}:epoch", b"e1")

        def reset(yes: bool, answer: str | None, terminal: bool = True) -> tuple[int, list[str]]:
            asked: list[str] = []

            def ask(question: str) -> str:
                asked.append(question)
                assert answer is not None
                return answer

            args = argparse.Namespace(config=config, redis=redis_url, yes=yes)
            reset = run_reset(args, ask=ask, interactive=terminal)
            # (a thread of its own: the module's Chromium runs an event loop in this one)
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                return pool.submit(asyncio.run, reset).result(60), asked

        code, asked = reset(False, "no")
        assert code == 1 and "the journal (1 records)" in asked[0] and tournament in asked[0]
        assert client.exists(f"{prefix}:journal", f"{prefix}:epoch") == 2
        assert reset(False, None, terminal=False) == (2, [])  # a pipe: nothing asked, kept
        client.set(f"{prefix}:ingest", b"host:1:abc", px=5000)  # a hub serves it
        assert reset(True, None) == (1, [])
        assert client.exists(f"{prefix}:journal") == 1
        client.delete(f"{prefix}:ingest")
        code, asked = reset(False, tournament)
        assert code == 0 and len(asked) == 1
        assert client.exists(f"{prefix}:journal", f"{prefix}:epoch") == 0
        assert reset(False, None) == (0, [])  # nothing left: nothing asked
    finally:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()
