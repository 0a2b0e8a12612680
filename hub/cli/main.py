"""`duplicast` command line (also `python -m hub`): thin shells over the modules.

Every option says what it does and shows its default (``hub.cli.args.HelpFormatter``). Output
cut short by its reader (``duplicast ... | head``) ends the command quietly with the status a
process killed by SIGPIPE has (141), without a traceback.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from hub.cli.args import (
    HelpFormatter,
    add_config,
    add_key_file,
    add_progress,
    apply_key_file,
    seed,
)

SAMPLE_CONFIG = Path(__file__).resolve().parents[2] / "samples" / "ifp6.toml"

REPLAY_DIVERGED = 3  # replay refused an event of a journal export that the live hub accepted
BROKEN_PIPE_EXIT = 128 + 13  # as if killed by SIGPIPE, what `cat`, `git` and others report

if TYPE_CHECKING:
    from hub.domain.games.base import Command

Sub: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _add_replay(sub: Sub) -> None:
    p = sub.add_parser(
        "replay",
        help="offline: tournament file + JSON Lines event log -> standings JSON",
        description="Rescore an event log offline (a `duplicast simulate` session, or the "
        "journal of a live event from `duplicast export --events`) and print the standings. "
        "Warns when the showdowns contradict the winners declared in the log (the deck orders "
        "of the tournament file are not those the log was played with).",
        formatter_class=HelpFormatter,
    )
    p.add_argument("--config", required=True, type=Path, help="tournament TOML file")
    p.add_argument("events", type=Path, help="console events, JSON Lines")
    p.add_argument("--indent", type=int, default=2, help="JSON indent (0: one line)")
    add_key_file(p)
    add_progress(p)
    p.add_argument(
        "--strict",
        action="store_true",
        help="stop at the first refused event (exit 1) instead of reporting it and going on",
    )
    p.set_defaults(func=_run_replay)


def _run_replay(args: argparse.Namespace) -> int:
    from hub.cli.progress import Progress
    from hub.cli.replay import DeckCheck, Refusal, ReplayError, replay_files
    from hub.domain.config import ConfigError
    from hub.files.decks import DeckFileError

    check = DeckCheck()
    bars: list[Progress] = []
    refused: list[Refusal] = []

    def on_start(total: int) -> Callable[[int], object]:
        bars.append(Progress(total, "replay", enabled=args.progress))
        return bars[0].advance

    def report(refusal: Refusal) -> None:
        refused.append(refusal)
        print(f"duplicast replay: refused: {refusal}", file=sys.stderr)

    try:
        standings = replay_files(
            args.config,
            args.events,
            dict(os.environ),
            check=check,
            on_start=on_start,
            strict=args.strict,
            on_refusal=report,
        )
    except (ConfigError, ReplayError, DeckFileError) as exc:
        print(f"duplicast replay: {exc}", file=sys.stderr)
        return 1
    finally:
        for bar in bars:
            bar.close()
    warning = check.warning(str(args.events))
    if warning:
        print(warning, file=sys.stderr)
    diverged = [refusal for refusal in refused if refusal.accepted_live]
    if diverged:
        print(
            f"duplicast replay: {len(diverged)} event(s) the live hub accepted were refused: "
            "these standings are NOT those of the live event (another tournament file, deck "
            "file or hub version?)",
            file=sys.stderr,
        )
    elif refused:
        print(
            f"duplicast replay: {len(refused)} event(s) refused; the hub answered them and "
            "went on, and so did the replay (--strict stops at the first)",
            file=sys.stderr,
        )
    json.dump(standings, sys.stdout, indent=args.indent or None)
    sys.stdout.write("\n")
    return REPLAY_DIVERGED if diverged else 0


def _add_init(sub: Sub) -> None:
    p = sub.add_parser(
        "init",
        help="start an event folder: FOLDER/event.toml from the bundled sample (never overwritten)",
        formatter_class=HelpFormatter,
    )
    p.add_argument("folder", type=Path, help="the event's folder (made if missing)")
    p.add_argument("--id", default=None, help="the tournament id (default: the sample's, my-event)")
    p.set_defaults(func=_run_init)


def _run_init(args: argparse.Namespace) -> int:
    from hub.cli.scaffold import init_event

    return init_event(args.folder, args.id)


def _add_draw(sub: Sub) -> None:
    p = sub.add_parser(
        "draw",
        help="write a seat draw (Latin square) as a TOML fragment",
        formatter_class=HelpFormatter,
    )
    p.add_argument("--config", required=True, type=Path, help="tournament TOML file")
    p.add_argument(
        "--method",
        choices=("random", "cyclic"),
        default="random",
        help="random: a random Latin square; cyclic: team i in seat i at table 1, shifted by "
        "one seat each table",
    )
    p.add_argument(
        "--seed",
        type=seed,
        default=None,
        help="rehearsal only: a reproducible draw (default: the system CSPRNG)",
    )
    p.add_argument("--out", type=Path, default=None, help="file to write (default: stdout)")
    p.set_defaults(func=_run_draw)


def _run_draw(args: argparse.Namespace) -> int:
    from hub.cli.offline import run_draw

    return run_draw(args)


def _add_decks(sub: Sub) -> None:
    p = sub.add_parser(
        "decks",
        help="deck orders (encrypted file), per-table deal orders, commitment; "
        "'decks verify' checks a published commitment after play",
        description="Make the deck key once (--new-key --key-out FILE), then the encrypted deck "
        "file with it (--key-file FILE --out decks.enc); prints the commitment to publish. "
        "After play, 'decks verify' checks the published commitment.",
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "action", nargs="?", choices=("verify",), help="verify: check a published commitment"
    )
    p.add_argument("--commitment", default=None, help="verify: the published sha256:HEX")
    p.add_argument("--deck-file", type=Path, default=None, help="verify: encrypted deck file")
    p.add_argument("--plain", type=Path, default=None, help="verify: a plain export")
    p.add_argument("--config", type=Path, default=None, help="tournament TOML file")
    p.add_argument(
        "--deals", type=int, default=None, help="deck orders to make (default: the file's deals)"
    )
    p.add_argument("--out", type=Path, default=None, help="encrypted deck file to write")
    p.add_argument("--orders-out", type=Path, default=None, help="per-table deal orders (TOML)")
    p.add_argument("--plain-out", type=Path, default=None, help="plain export for a dealer")
    p.add_argument(
        "--seed",
        type=seed,
        default=None,
        help="rehearsal only: seeded deck orders (default: the system CSPRNG)",
    )
    p.add_argument(
        "--new-key",
        action="store_true",
        help="make a fresh deck key: into --key-out FILE, else printed",
    )
    p.add_argument(
        "--key-out",
        type=Path,
        default=None,
        help="with --new-key: the key file to create (owner-only; never overwritten)",
    )
    add_key_file(p, "--out and verify --deck-file")
    p.add_argument("--force", action="store_true", help="overwrite an existing deck file")
    p.set_defaults(func=_run_decks)


def _run_decks(args: argparse.Namespace) -> int:
    from hub.cli.offline import run_decks

    return run_decks(args)


def _add_acl(sub: Sub) -> None:
    p = sub.add_parser(
        "acl",
        help="Redis ACL users: one per role and per console, each with only what it uses",
        formatter_class=HelpFormatter,
    )
    p.add_argument("--config", required=True, type=Path, help="tournament TOML file")
    p.add_argument("--out", required=True, type=Path, help="ACL file for redis-server --aclfile")
    p.add_argument("--credentials-out", required=True, type=Path, help="clear passwords (mode 600)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--host", default="127.0.0.1:6379", help="host:port in the printed URLs")
    where.add_argument(
        "--url",
        help="the printed URLs' Redis, without a login: redis://HOST:PORT/DB, or "
        "rediss://HOST:PORT/DB?ssl_ca_certs=/path/ca.crt over TLS (instead of --host)",
    )
    p.add_argument(
        "--console-tokens-out",
        type=Path,
        default=None,
        help="also make a web console token per console of [consoles]: lines 'CONSOLE TABLE "
        "TOKEN' (mode 600) for serve's DUPLICAST_CONSOLE_TOKENS_FILE",
    )
    p.set_defaults(func=_run_acl)


def _run_acl(args: argparse.Namespace) -> int:
    from hub.cli.offline import write_text
    from hub.cli.redis_acl import (
        acl_file,
        acl_users,
        console_tokens_text,
        credentials_text,
        redis_base,
    )
    from hub.domain.config import ConfigError
    from hub.files.config import load_config

    try:
        base = redis_base(args.url or f"redis://{args.host}/0")
        config = load_config(args.config)
        text, credentials = acl_file(config)
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    write_text(str(args.out), text, private=True)
    write_text(str(args.credentials_out), credentials_text(credentials, base), True)
    if args.console_tokens_out is not None:
        tokens = console_tokens_text(config)
        write_text(str(args.console_tokens_out), tokens, private=True)
        print(
            f"wrote a web console token for each of the {len(config.consoles or {})} consoles "
            f"to {args.console_tokens_out} (serve reads it from DUPLICAST_CONSOLE_TOKENS_FILE)",
            file=sys.stderr,
        )
    users = acl_users(args.out.read_text("utf-8"))
    enabled = [name for name, on in users.items() if on]
    off = [name for name, on in users.items() if not on]
    print(
        f"wrote {len(enabled)} Redis users to {args.out} ({', '.join(enabled)}"
        + (f"; {', '.join(off)} switched off" if off else "")
        + f"; load with redis-server --aclfile) and the URLs of the {len(credentials)} with a "
        f"password to {args.credentials_out}",
        file=sys.stderr,
    )
    return 0


def _add_proofs(sub: Sub) -> None:
    p = sub.add_parser(
        "proofs",
        help="what to give an edge instead of the tokens: their session proofs",
        description="Print the session proofs of $DUPLICAST_OPERATOR_TOKEN, "
        "$DUPLICAST_COMMENTATOR_TOKEN and $DUPLICAST_TALLY_TOKEN as environment lines for an "
        "edge (the same variables, holding proofs), and write the proofs of the console tokens "
        "file ($DUPLICAST_CONSOLE_TOKENS_FILE). An edge given proofs checks who connects but "
        "cannot derive the keys commands and console events are signed with (docs/security.md).",
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "--console-proofs-out",
        type=Path,
        default=None,
        help="write 'CONSOLE TABLE PROOF' lines here: the edge's DUPLICAST_CONSOLE_TOKENS_FILE",
    )
    p.set_defaults(func=_run_proofs)


def _run_proofs(args: argparse.Namespace) -> int:
    from hub.cli.offline import write_text
    from hub.serve.auth import CONSOLE_TOKENS_ENV, parse_console_tokens
    from hub.wire.signing import is_proof, session_proof

    def proof(value: str) -> str:
        return value if is_proof(value) else session_proof(value)

    # (and the tally key's: the edges serve the tally, GET /api/control, docs/security.md)
    for name in (
        "DUPLICAST_OPERATOR_TOKEN",
        "DUPLICAST_COMMENTATOR_TOKEN",
        "DUPLICAST_TALLY_TOKEN",
    ):
        value = os.environ.get(name)
        if value:
            print(f"{name}={proof(value)}")
    if args.console_proofs_out is not None:
        path = os.environ.get(CONSOLE_TOKENS_ENV)
        if not path:
            print(f"error: {CONSOLE_TOKENS_ENV} names no console tokens file", file=sys.stderr)
            return 1
        try:
            seats = parse_console_tokens(Path(path).read_text("utf-8"), path)
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        rows = [f"{s.console} {s.table} {proof(s.token)}" for s in seats]
        head = "# the console tokens' session proofs, for edges (CONSOLE TABLE PROOF)\n"
        write_text(str(args.console_proofs_out), head + "\n".join(rows) + "\n", private=True)
        print(f"wrote {len(rows)} console proofs to {args.console_proofs_out}", file=sys.stderr)
    return 0


def _add_simulate(sub: Sub) -> None:
    p = sub.add_parser(
        "simulate",
        help="offline: bots play a session, events as JSON Lines",
        formatter_class=HelpFormatter,
    )
    add_config(p, SAMPLE_CONFIG)
    p.add_argument("--seed", type=seed, default=1, help="the bots' choices (same seed, same log)")
    p.add_argument("--out", type=Path, default=None, help="file to write (default: stdout)")
    p.add_argument(
        "--no-corrections",
        action="store_true",
        help="no void, undo or dispute in the session (they are in by default)",
    )
    add_key_file(p)
    p.set_defaults(func=_run_simulate)


def _run_simulate(args: argparse.Namespace) -> int:
    import random

    from hub.engine.simulate import simulate_session
    from hub.files.config import load_config
    from hub.files.decks import load_decks

    config = load_config(args.config)
    decks = load_decks(config, args.config.parent, dict(os.environ))
    rng = random.Random(args.seed)
    events = simulate_session(config, decks, rng, corrections=not args.no_corrections)
    out = args.out.open("w", encoding="utf-8") if args.out else sys.stdout
    try:
        for event in events:
            out.write(json.dumps(event, separators=(",", ":")) + "\n")
    finally:
        if args.out:
            out.close()
    return 0


def _add_phh_check(sub: Sub) -> None:
    p = sub.add_parser(
        "phh-check",
        help="replay every PHH hand of a folder through the hand engine; list each mismatch "
        "against the file's finishing_stacks (exit 1 if any)",
        formatter_class=HelpFormatter,
    )
    p.add_argument("folder", type=Path, help="searched recursively for .phh and .phhs files")
    p.set_defaults(func=_run_phh_check)


def _run_phh_check(args: argparse.Namespace) -> int:
    from hub.files.phh import check_folder

    if not args.folder.is_dir():
        print(f"duplicast phh-check: {args.folder} is not a folder", file=sys.stderr)
        return 2
    report = check_folder(args.folder)
    report.write(sys.stdout)
    if report.hands == 0 and not report.unreplayable and not report.unchecked:
        print(f"duplicast phh-check: no .phh or .phhs files in {args.folder}", file=sys.stderr)
        return 2
    return 1 if report.mismatches else 0


def _add_game_commands(sub: Sub) -> None:
    """The sub-commands the games bring (``Game.commands``), in the registry's order."""
    from hub.domain.games.registry import games

    for game in games.values():
        for command in game.commands:
            p = sub.add_parser(
                command.name,
                help=command.help,
                description=command.description,
                formatter_class=HelpFormatter,
            )
            if command.config:
                p.add_argument("--config", type=Path, required=True, help="tournament TOML file")
                add_key_file(p)
            p.set_defaults(func=functools.partial(_run_game_command, command))


def _run_game_command(command: Command, args: argparse.Namespace) -> int:
    from hub.domain.games.base import CommandError

    try:
        if command.config:
            from hub.files.config import load_config
            from hub.files.decks import load_decks

            config = load_config(args.config)
            decks = load_decks(config, args.config.parent, dict(os.environ))
            text = command.run(config, decks)
        else:
            text = command.run()
    except CommandError as exc:
        print(f"duplicast {command.name}: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


def _add_td(sub: Sub) -> None:
    from hub.cli import td

    td.add_parser(sub)


def _add_server_commands(sub: Sub) -> None:
    from hub.cli import runner

    runner.add_parsers(sub)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="duplicast",
        description="Real-time scoring and graphics hub for duplicate poker.",
        formatter_class=HelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _add_init(sub)
    _add_replay(sub)
    _add_draw(sub)
    _add_decks(sub)
    _add_acl(sub)
    _add_proofs(sub)
    _add_simulate(sub)
    _add_phh_check(sub)
    _add_game_commands(sub)
    _add_server_commands(sub)
    _add_td(sub)
    return parser


def register_installed_games() -> None:
    """Add each installed distribution's games to the registry: the entry points of the group
    ``registry.ENTRY_POINTS`` (a game already registered, the same object: kept)."""
    from importlib.metadata import entry_points

    from hub.domain.games import registry

    for point in sorted(entry_points(group=registry.ENTRY_POINTS), key=lambda p: p.name):
        game = point.load()
        known = registry.games.get(game.name)
        if known is game:
            continue
        if known is not None:
            raise ValueError(
                f"entry point {point.name!r} ({point.value}): game {game.name!r} is declared twice"
            )
        registry.register(game)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        register_installed_games()  # before the parser: a game may bring sub-commands
        parser = build_parser()  # (the commands' modules: about a second)
        args = parser.parse_args(argv)
        apply_key_file(args)
        code: int = args.func(args)
        sys.stdout.flush()
    except KeyboardInterrupt:
        # Ctrl-C before a command runs (while its modules load) or in one that has no handling
        # of its own: the status a shell expects of it, not a traceback through an import.
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): nothing more to say to it, and Python must not try
        # to flush stdout again at exit (that would print "Exception ignored ...").
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return BROKEN_PIPE_EXIT
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
