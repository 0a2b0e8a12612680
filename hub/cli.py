"""`duplicast` command line (also `python -m hub`): thin shells over the modules."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

SAMPLE_CONFIG = Path(__file__).resolve().parent.parent / "samples" / "ifp6.toml"


def _add_replay(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("replay", help="offline: config + JSONL event log -> standings JSON")
    p.add_argument("--config", required=True, type=Path, help="tournament TOML file")
    p.add_argument("events", type=Path, help="console events, JSON Lines")
    p.add_argument("--indent", type=int, default=2)
    p.add_argument(
        "--strict",
        action="store_true",
        help="stop at the first refused event (exit 1) instead of reporting it and going on",
    )
    p.set_defaults(func=_run_replay)


def _run_replay(args: argparse.Namespace) -> int:
    from hub.deckfile import DeckFileError
    from hub.domain.config import ConfigError
    from hub.replay import Refusal, ReplayError, replay_files

    refused: list[Refusal] = []

    def report(refusal: Refusal) -> None:
        refused.append(refusal)
        print(f"duplicast replay: refused: {refusal}", file=sys.stderr)

    try:
        standings = replay_files(
            args.config, args.events, dict(os.environ), strict=args.strict, on_refusal=report
        )
    except (ConfigError, ReplayError, DeckFileError) as exc:
        print(f"duplicast replay: {exc}", file=sys.stderr)
        return 1
    if refused:
        print(
            f"duplicast replay: {len(refused)} event(s) refused; the hub answered them and "
            "went on, and so did the replay (--strict stops at the first)",
            file=sys.stderr,
        )
    json.dump(standings, sys.stdout, indent=args.indent or None)
    sys.stdout.write("\n")
    return 0


def _add_draw(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("draw", help="write a seat draw (Latin square) as a TOML fragment")
    p.add_argument("--config", required=True, type=Path)
    p.add_argument("--method", choices=("random", "cyclic"), default="random")
    p.add_argument("--seed", type=int, default=None, help="rehearsal only: a seeded draw")
    p.add_argument("--out", type=Path, default=None, help="file to write (default: stdout)")
    p.set_defaults(func=_run_draw)


def _run_draw(args: argparse.Namespace) -> int:
    from hub.offline import run_draw

    return run_draw(args)


def _add_decks(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "decks",
        help="deck orders (encrypted file), per-table deal orders, commitment; "
        "'decks verify' checks a published commitment after play",
    )
    p.add_argument(
        "action", nargs="?", choices=("verify",), help="verify: check a published commitment"
    )
    p.add_argument("--commitment", default=None, help="verify: the published sha256:HEX")
    p.add_argument("--deck-file", type=Path, default=None, help="verify: encrypted deck file")
    p.add_argument("--plain", type=Path, default=None, help="verify: a plain export")
    p.add_argument("--config", type=Path, default=None)
    p.add_argument("--deals", type=int, default=None)
    p.add_argument("--out", type=Path, default=None, help="encrypted deck file to write")
    p.add_argument("--orders-out", type=Path, default=None, help="per-table deal orders (TOML)")
    p.add_argument("--plain-out", type=Path, default=None, help="plain export for a dealer")
    p.add_argument("--seed", default=None, help="rehearsal only: seeded deck orders")
    p.add_argument("--new-key", action="store_true", help="print a fresh DUPLICAST_DECK_KEY")
    p.add_argument("--force", action="store_true", help="overwrite an existing deck file")
    p.set_defaults(func=_run_decks)


def _run_decks(args: argparse.Namespace) -> int:
    from hub.offline import run_decks

    return run_decks(args)


def _add_acl(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "acl", help="Redis ACL users: each console may publish only to its own table"
    )
    p.add_argument("--config", required=True, type=Path)
    p.add_argument("--out", required=True, type=Path, help="ACL file for redis-server --aclfile")
    p.add_argument("--credentials-out", required=True, type=Path, help="clear passwords (mode 600)")
    p.add_argument("--host", default="127.0.0.1:6379", help="host:port in the printed URLs")
    p.set_defaults(func=_run_acl)


def _run_acl(args: argparse.Namespace) -> int:
    from hub.configfile import load_config
    from hub.domain.config import ConfigError
    from hub.offline import write_text
    from hub.redis_acl import acl_file, credentials_text

    try:
        text, credentials = acl_file(load_config(args.config))
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    write_text(str(args.out), text, private=True)
    write_text(str(args.credentials_out), credentials_text(credentials, args.host), True)
    print(
        f"wrote {len(credentials)} Redis users to {args.out} (load with redis-server "
        f"--aclfile) and their URLs to {args.credentials_out}",
        file=sys.stderr,
    )
    return 0


def _add_simulate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("simulate", help="offline: bots play a session, events as JSON Lines")
    p.add_argument("--config", type=Path, default=SAMPLE_CONFIG)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--no-corrections", action="store_true")
    p.set_defaults(func=_run_simulate)


def _run_simulate(args: argparse.Namespace) -> int:
    import random

    from hub.configfile import load_config
    from hub.deckfile import load_decks
    from hub.engine.simulate import simulate_session

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


def _add_server_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from hub import runner

    runner.add_parsers(sub)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="duplicast", description="Real-time scoring and graphics hub for duplicate poker."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _add_replay(sub)
    _add_draw(sub)
    _add_decks(sub)
    _add_acl(sub)
    _add_simulate(sub)
    _add_server_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
