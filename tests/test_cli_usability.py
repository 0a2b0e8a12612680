"""The command line as a new operator meets it (issue #10): one safe path for the deck key, one
line for an unreachable Redis, help with defaults everywhere, one seed type, a progress line,
no traceback on a closed pipe, an honest `acl` count, a replay that notices the wrong decks."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import socket
import stat
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest

from hub.cli.args import seed
from hub.cli.main import build_parser
from hub.files.decks import read_deck_file, read_key_file
from tests.hubharness import duplicast as run_duplicast

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
SESSION = ROOT / "samples" / "ifp6-session.jsonl"
TOKENS = {
    "DUPLICAST_COMMENTATOR_TOKEN": "kq3Z-vYp8_Lw2mXc7RtB9sHd-comm",
    "DUPLICAST_OPERATOR_TOKEN": "kq3Z-vYp8_Lw2mXc7RtB9sHd-oper",
}
CLEAN = {
    k: v
    for k, v in os.environ.items()
    if k not in ("DUPLICAST_DECK_KEY", "DUPLICAST_DECK_KEY_FILE", "DUPLICAST_REDIS_URL")
}


def duplicast(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> Any:
    return run_duplicast(*args, env=env, cwd=cwd, base=CLEAN)


def subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Any:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from subcommands(child, (*path, name))


# -- 3. the deck key: made once into a file, read from it by every command ---------------------


def test_new_key_goes_to_an_owner_only_file_never_overwritten(tmp_path: Path) -> None:
    key_file = tmp_path / "deck.key"
    made = duplicast("decks", "--new-key", "--key-out", str(key_file))
    assert made.returncode == 0, made.stderr
    assert made.stdout == ""  # the key is not printed when it goes to a file
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = read_key_file(key_file)
    again = duplicast("decks", "--new-key", "--key-out", str(key_file))
    assert again.returncode == 1 and "already exists" in again.stderr
    assert read_key_file(key_file) == key


def test_every_command_that_needs_the_key_reads_it_from_the_key_file(tmp_path: Path) -> None:
    key_file = tmp_path / "secrets" / "deck.key"
    key_file.parent.mkdir()
    assert duplicast("decks", "--new-key", "--key-out", str(key_file)).returncode == 0
    event = tmp_path / "event.toml"
    event.write_text(
        SAMPLE.read_text().replace('rehearsal_seed = "ifp-demo"', 'file = "decks.enc"')
    )
    made = duplicast(
        "decks", "--config", str(event), "--key-file", str(key_file), "--out",
        str(tmp_path / "decks.enc"),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    published = made.stdout.strip()
    assert read_deck_file(tmp_path / "decks.enc", read_key_file(key_file))
    log = tmp_path / "events.jsonl"
    sim = duplicast(
        "simulate", "--config", str(event), "--key-file", str(key_file), "--out", str(log)
    )
    assert sim.returncode == 0, sim.stderr
    replayed = duplicast("replay", "--config", str(event), "--key-file", str(key_file), str(log))
    assert replayed.returncode == 0, replayed.stderr
    assert "warning" not in replayed.stderr
    # The variable naming the file works as --key-file does; the key itself is still accepted.
    by_env = duplicast(
        "replay", "--config", str(event), str(log),
        env={"DUPLICAST_DECK_KEY_FILE": str(key_file)},
    )  # fmt: skip
    assert by_env.stdout == replayed.stdout
    by_key = duplicast(
        "replay", "--config", str(event), str(log),
        env={"DUPLICAST_DECK_KEY": read_key_file(key_file)},
    )  # fmt: skip
    assert by_key.stdout == replayed.stdout
    verified = duplicast(
        "decks", "verify", "--commitment", published, "--deck-file", str(tmp_path / "decks.enc"),
        "--key-file", str(key_file),
    )  # fmt: skip
    assert verified.returncode == 0 and "commitment matches" in verified.stdout
    missing = duplicast("replay", "--config", str(event), str(log))
    assert missing.returncode == 1 and "--key-file" in missing.stderr


# -- 4. an unreachable Redis: one line, exit 1, for every command that talks to Redis ------------

UNREACHABLE = "redis://hub:s3cret-password@127.0.0.1:1/0"
REDIS_COMMANDS = {
    "serve": ["serve"],
    "export": ["export", "--events", "--config", str(SAMPLE)],
    "console send": ["console", "send", "--tournament", "t", "--table", "1", "--seq", "1",
                     "type=fold", "seat=1"],
    "console replay": ["console", "replay", "--tournament", "t", str(SESSION)],
    "console simulate": ["console", "simulate", "--table", "1"],
    "demo": ["demo"],
}  # fmt: skip


# ``duplicast`` (``python -m hub``) with the bus's connect deadline at 2 s instead of 10: the
# same retries, the same message, waited out 8 s sooner (the deadline's length is not checked).
SHORT_DEADLINE = """import sys
from hub.bus.redis_retry import RetryPolicy
RetryPolicy.__init__.__defaults__ = (2.0, *RetryPolicy.__init__.__defaults__[1:])
from hub.cli.main import main
sys.exit(main())"""


def test_an_unreachable_redis_is_one_line_and_exit_1(tmp_path: Path) -> None:
    env = {**CLEAN, **TOKENS, "XDG_STATE_HOME": str(tmp_path)}
    running = {
        name: subprocess.Popen(
            [sys.executable, "-c", SHORT_DEADLINE, *args, "--redis", UNREACHABLE],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, args in REDIS_COMMANDS.items()
    }  # all at once: each waits out the connect deadline
    for name, process in running.items():
        out, err = process.communicate(timeout=60)
        lines = [line for line in err.splitlines() if line.strip()]
        if name == "serve":  # first, what it uses (no silent defaults: item 8)
            uses, *lines = lines
            assert "samples/ifp6.toml (the bundled SAMPLE" in uses
            assert "Redis redis://hub:***@127.0.0.1:1/0" in uses and "127.0.0.1:8000" in uses
        assert process.returncode == 1, (name, err)
        assert len(lines) == 1, (name, err)
        command = name.split()[0]
        assert lines[0].startswith(f"duplicast {command}: cannot reach Redis at "), err
        assert "redis://hub:***@127.0.0.1:1/0" in lines[0] and "s3cret" not in err + out
        assert "within 2 s" in lines[0], lines[0]  # (the deadline waited out: retried till then)


# ``python -m hub`` interrupted as Ctrl-C interrupts it while its modules load (its first
# second): at the import of the module named first.
CTRL_C_WHILE_LOADING = """import runpy, sys
module = sys.argv.pop(1)
class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == module:
            raise KeyboardInterrupt
sys.meta_path.insert(0, CtrlC())
runpy.run_module("hub", run_name="__main__", alter_sys=True)"""


@pytest.mark.parametrize("module", ["hub.files.decks", "hub.cli.runner"])
def test_ctrl_c_while_the_command_loads_is_exit_130_without_a_traceback(module: str) -> None:
    """`duplicast demo` (or `serve`) stopped with Ctrl-C in its first second printed a
    KeyboardInterrupt traceback through whichever import it was in: hub.cli.main's own
    (``hub.files.decks``) or the commands' (``hub.cli.runner``, in ``main``)."""
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_WHILE_LOADING, module, "demo"],
        cwd=ROOT,
        env=CLEAN,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert (done.returncode, done.stderr) == (130, ""), done.stderr


# -- 8. help, defaults, seed, progress, closed pipe ------------------------------------------


def test_every_option_has_a_help_text_and_shows_its_default() -> None:
    missing: list[str] = []
    for path, parser in subcommands(build_parser()):
        text = " ".join(parser.format_help().split())
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            name = " ".join((*path, *(action.option_strings or [action.dest])))
            if not action.help:
                missing.append(f"{name}: no help")
                continue
            default = action.default
            if default in (None, False, argparse.SUPPRESS) or not action.option_strings:
                continue
            shown = str(default.name if isinstance(default, Path) else default)
            if f"default: {default}" not in text and shown not in action.help:
                missing.append(f"{name}: default {default!r} not shown")
    assert missing == []


def test_serve_help_names_the_sample_redis_and_port() -> None:
    parser = next(p for path, p in subcommands(build_parser()) if path == ("serve",))
    text = " ".join(parser.format_help().split())
    assert "default: the bundled sample, ifp6.toml" in text
    assert "redis://127.0.0.1:6379/0" in text and "(default: 8000)" in text


def test_seed_is_one_type_everywhere() -> None:
    seeds = []
    for path, parser in subcommands(build_parser()):
        for action in parser._actions:
            if "--seed" in action.option_strings:
                seeds.append((path, action.type))
    assert {p for p, _ in seeds} >= {("draw",), ("decks",), ("simulate",), ("demo",)}
    assert ("console", "simulate") in {p for p, _ in seeds}
    assert {t for _, t in seeds} == {seed}
    assert seed("7") == 7 and seed("ifp-demo") == "ifp-demo"
    # The same seed, the same draw, as in the tournament file (`seed = 7` is the integer 7).
    one = duplicast("draw", "--config", str(SAMPLE), "--seed", "7")
    two = duplicast("draw", "--config", str(SAMPLE), "--seed", "07")
    assert one.returncode == 0 and one.stdout.split("\n", 1)[1] == two.stdout.split("\n", 1)[1]


def test_replay_progress_is_rate_limited_and_only_on_a_terminal_unless_asked() -> None:
    quiet = duplicast("replay", "--config", str(SAMPLE), str(SESSION))
    assert quiet.returncode == 0 and "events/s" not in quiet.stderr and "it/s" not in quiet.stderr
    started = time.monotonic()
    forced = duplicast("replay", "--config", str(SAMPLE), "--progress", str(SESSION))
    elapsed = time.monotonic() - started
    assert forced.returncode == 0, forced.stderr
    total = sum(1 for line in SESSION.read_text().splitlines() if line.strip())
    assert "replay: 100%" in forced.stderr and f"{total}/{total}" in forced.stderr
    # At most one update a second, besides the first and the last.
    assert forced.stderr.count("\r") <= elapsed + 3, forced.stderr
    assert json.loads(forced.stdout) == json.loads(quiet.stdout)
    # On a terminal it shows by itself.
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        run = subprocess.run(
            [sys.executable, "-m", "hub", "replay", "--config", str(SAMPLE), str(SESSION)],
            cwd=ROOT,
            env=CLEAN,
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=120,
        )
        os.close(follower)
        follower = -1
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert run.returncode == 0
    assert b"replay: 100%" in seen


def test_a_closed_pipe_ends_quietly() -> None:
    """`duplicast simulate | head -1`: no traceback, the SIGPIPE status."""
    process = subprocess.Popen(
        [sys.executable, "-m", "hub", "simulate", "--seed", "3"],
        cwd=ROOT,
        env=CLEAN,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    err = process.stderr.read().decode()
    process.wait(60)
    assert json.loads(first)["type"] == "start"
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert process.returncode == 141


# -- 10. acl counts what it wrote; replay notices deck orders that do not match the log --------


def test_acl_reports_the_users_it_wrote(tmp_path: Path) -> None:
    out, creds = tmp_path / "users.acl", tmp_path / "credentials.txt"
    run = duplicast(
        "acl", "--config", str(SAMPLE), "--out", str(out), "--credentials-out", str(creds)
    )
    assert run.returncode == 0, run.stderr
    written = [line for line in out.read_text().splitlines() if line.startswith("user ")]
    on = [line for line in written if " on " in f"{line} "]
    assert len(on) == 11  # four roles, six consoles, the probe
    assert f"wrote {len(on)} Redis users to {out}" in run.stderr
    assert "default switched off" in run.stderr


def test_replay_against_other_deck_orders_warns(tmp_path: Path) -> None:
    right = duplicast("replay", "--config", str(SAMPLE), str(SESSION))
    assert right.returncode == 0 and "warning" not in right.stderr
    assert "note:" in right.stderr and "1 of" in right.stderr  # the session's one dispute
    other = tmp_path / "other.toml"
    other.write_text(
        SAMPLE.read_text().replace('rehearsal_seed = "ifp-demo"', 'rehearsal_seed = "x"')
    )
    wrong = duplicast("replay", "--config", str(other), str(SESSION))
    assert "warning:" in wrong.stderr and "showdowns contradict" in wrong.stderr, wrong.stderr
    assert "not those this log was played with" in wrong.stderr


def test_a_refused_redis_login_is_one_line_at_once(redis_url: str) -> None:
    wrong = redis_url.replace("redis://", "redis://nobody:wrong-password@", 1)
    run = duplicast("export", "--events", "--config", str(SAMPLE), "--redis", wrong)
    assert run.returncode == 1
    assert run.stderr.strip().count("\n") == 0, run.stderr
    assert run.stderr.startswith("duplicast export: Redis at redis://nobody:***@")
    assert "refused" in run.stderr and "wrong-password" not in run.stderr


def test_console_simulate_and_replay_show_progress(tmp_path: Path, redis_url: str) -> None:
    """The long console commands: `--progress` gives the line on a pipe too, complete at the
    end; against a real hub (`serve`) on the fixture's Redis."""
    import uuid

    import httpx
    import redis

    tournament = f"progress-{uuid.uuid4().hex[:8]}"
    config = tmp_path / "event.toml"
    config.write_text(SAMPLE.read_text().replace('"ifp-demo"', f'"{tournament}"', 1))
    table2 = tmp_path / "table2.jsonl"
    events = [json.loads(line) for line in SESSION.read_text().splitlines() if line.strip()]
    mine = [{**e, "tournament": tournament} for e in events if e["table"] == 2]
    table2.write_text("".join(json.dumps(e) + "\n" for e in mine))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**CLEAN, **TOKENS, "DUPLICAST_REDIS_URL": redis_url}
    server = subprocess.Popen(
        [sys.executable, "-m", "hub", "serve", "--config", str(config), "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        simulate = duplicast(
            "console", "simulate", "--config", str(config), "--table", "1", "--seed", "5",
            "--pace", "0", "--no-outbox", "--progress", env=env,
        )  # fmt: skip
        assert simulate.returncode == 0, simulate.stderr
        assert "console simulate: 100%" in simulate.stderr, simulate.stderr
        replay = duplicast(
            "console", "replay", "--tournament", tournament, "--no-outbox", "--progress",
            str(table2), env=env,
        )  # fmt: skip
        assert replay.returncode == 0, replay.stderr
        assert "console replay: 100%" in replay.stderr and f"{len(mine)}/{len(mine)}" in (
            replay.stderr
        )
        assert ", 0 rejected" in replay.stdout
        quiet = duplicast(
            "console", "replay", "--tournament", tournament, "--no-outbox", str(table2), env=env
        )  # not a terminal, not asked: no progress line
        assert "%|" not in quiet.stderr and "100%" not in quiet.stderr
    finally:
        server.terminate()
        server.wait(20)
        client = redis.Redis.from_url(redis_url)
        keys = list(client.scan_iter(match=f"dup:{tournament}:*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()
