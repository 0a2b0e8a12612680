"""The README's event-day block, run as written: draw, decks with a key file, acl, serve, a
rehearsal on the consoles, export of the journal, replay, verify (issue #10, "Done when").

Each command runs as a subprocess in a fresh folder, on the real Redis of the fixture
(``DUPLICAST_REDIS_URL``, which the README names), with the `duplicast` of this checkout on
the PATH. Two things only are the test's own: the tournament id is made unique (the Redis may
be shared), and `serve` gets a free port (8000 may be taken); `serve ... &` is started in the
background as the shell would, and stopped at the end.
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
    (tmp_path / "samples").symlink_to(ROOT / "samples")
    tournament = f"readme-{uuid.uuid4().hex[:8]}"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DUPLICAST_DECK_KEY", "DUPLICAST_DECK_KEY_FILE")
    }
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        DUPLICAST_REDIS_URL=redis_url,
        DUPLICAST_OPERATOR_TOKEN=OPERATOR,
        DUPLICAST_COMMENTATOR_TOKEN=COMMENTATOR,
        XDG_STATE_HOME=str(tmp_path / "state"),
        DUPLICAST_HOME=str(ROOT),
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
            if command.startswith("mkdir"):  # the operator edits the id (the Redis is shared)
                event = tmp_path / "event" / "event.toml"
                event.write_text(event.read_text().replace('"my-event"', f'"{tournament}"', 1))
            if "console simulate" in command:
                assert ", 0 rejected" in run.stdout, run.stdout
        # What the steps left behind.
        assert (tmp_path / "deck.key").stat().st_mode & 0o077 == 0
        assert (tmp_path / "commitment.txt").read_text().startswith("commitment: sha256:")
        assert "user duplicast-hub on" in (tmp_path / "deploy" / "users.acl").read_text()
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
