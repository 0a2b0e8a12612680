"""The README's event-day block, run as written: draw, decks with a key file, acl, serve, a
rehearsal on the consoles, export of the journal, replay, verify (issue #10, "Done when").

Each command runs as a subprocess of bash in a fresh folder outside the checkout (nothing of
it there: no `samples/`, no $DUPLICAST_HOME), on the real Redis of the fixture
(``DUPLICAST_REDIS_URL``, which the README names), with a PATH of the system's folders and the
virtualenv's `bin/` only, as the README says to set it up. Two things only are the test's own:
the tournament id is made unique (the Redis may be shared), and `serve` gets a free port (8000
may be taken); `serve ... &` is started in the background as the shell would, and stopped at
the end.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
import redis

ROOT = Path(__file__).resolve().parent.parent
OPERATOR = "kq3Z-vYp8_Lw2mXc7RtB9sHd-readme-oper"
COMMENTATOR = "kq3Z-vYp8_Lw2mXc7RtB9sHd-readme-comm"


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


@pytest.mark.redis
@pytest.mark.timeout(300)
def test_the_readme_event_day_commands_run_end_to_end(tmp_path: Path, redis_url: str) -> None:
    commands = event_day_block()
    names = [" ".join(shlex.split(c, comments=True)[:2]) for c in commands]
    for wanted in ("draw", "decks", "acl", "serve", "console", "export", "replay"):
        assert f"duplicast {wanted}" in names, names
    assert not tmp_path.is_relative_to(ROOT) and not any(tmp_path.iterdir())
    tournament = f"readme-{uuid.uuid4().hex[:8]}"
    env = fresh_shell_env(tmp_path)
    env.update(
        DUPLICAST_REDIS_URL=redis_url,
        DUPLICAST_OPERATOR_TOKEN=OPERATOR,
        DUPLICAST_COMMENTATOR_TOKEN=COMMENTATOR,
    )
    port = free_port()
    server: subprocess.Popen[str] | None = None
    try:
        for command in commands:
            if command.startswith("duplicast serve"):
                line = command.split("#")[0].strip().removesuffix("&").strip()
                server = subprocess.Popen(
                    [*shlex.split(line, comments=True), "--port", str(port)],
                    cwd=tmp_path,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
                wait_ready(server, port)
                continue
            run = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", command],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=180,
            )
            assert run.returncode == 0, f"{command}\n{run.stdout}\n{run.stderr}"
            if command.startswith("duplicast init"):  # the id made unique (a shared Redis)
                event = tmp_path / "event" / "event.toml"
                text = re.sub(
                    r'^id = ".*"$', f'id = "{tournament}"', event.read_text(), count=1, flags=re.M
                )
                event.write_text(text)
            if "console simulate" in command:
                assert ", 0 rejected" in run.stdout, run.stdout
        # What the steps left behind.
        assert (tmp_path / "deck.key").stat().st_mode & 0o077 == 0
        assert (tmp_path / "commitment.txt").read_text().startswith("commitment: sha256:")
        assert "user duplicast-ingest on" in (tmp_path / "deploy" / "users.acl").read_text()
        # The export replays to exactly the standings the live hub shows.
        replayed = json.loads((tmp_path / "standings.json").read_text())
        live = httpx.get(
            f"http://127.0.0.1:{port}/api/standings",
            headers={"Authorization": f"Bearer {OPERATOR}"},
            timeout=10,
        ).json()["data"]
        assert replayed == live
        exported = (tmp_path / "events.jsonl").read_text().splitlines()
        header, *records = [json.loads(line) for line in exported]
        assert header["journal"]["tournament"] == tournament and header["journal"]["epoch"]
        assert len(records) > 500 and all(r["tournament"] == tournament
                                          for r in records if "refused" not in r)  # fmt: skip
        teams = replayed["like_for_like"]["teams"]
        assert sum(t["points"] for t in teams) == 6 * 6 * 7 / 2  # every deal scored
    finally:
        if server is not None:
            server.terminate()
            server.wait(20)
        client = redis.Redis.from_url(redis_url)
        try:
            keys = list(client.scan_iter(match=f"dup:{tournament}:*", count=1000))
            if keys:
                client.delete(*keys)
        finally:
            client.close()


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


def wait_ready(server: subprocess.Popen[str], port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            out = server.stdout.read() if server.stdout else ""
            pytest.fail(f"serve exited with {server.returncode}:\n{out}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    pytest.fail("serve was not ready within 60 s")
