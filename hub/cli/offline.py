"""The offline preparation commands: `duplicast draw` and `duplicast decks`.

Both run before the event, on the organiser's machine, and print TOML fragments to paste into
the tournament file. They need only the teams and groups of that file: a file without a
``[draw]`` section yet is accepted here (it is what `draw` is for).

``hub.cli.main`` builds the ``argparse.Namespace``; these functions return the process exit code:
0 done, 1 a file or configuration problem, 2 a missing or bad deck key / bad arguments.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import secrets
import sys
from collections.abc import Mapping
from pathlib import Path

from hub.domain.config import ConfigError, TournamentConfig, parse_config
from hub.domain.deck import DeckOrder, commitment
from hub.domain.draw import METHODS, Draw, DrawError, make_draw, validate_draw
from hub.domain.games.registry import game_of
from hub.domain.schedule import (
    block_deal_orders,
    stage_block_orders,
    validate_deal_orders,
    validate_session_orders,
)
from hub.files.config import file_reader, print_warnings, read_config
from hub.files.decks import (
    NEW_KEY_HINT,
    DeckFileError,
    deck_key,
    export_plain,
    generate_key,
    parse_key,
    parse_plain,
    read_deck_file,
    write_deck_file,
    write_key_file,
)

# Stands in for a missing [draw] while reading a file that is still being prepared.
_PLACEHOLDER_DRAW = {"method": "cyclic", "seed": 0}


def _fail(message: str, code: int = 1) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def load_for_preparation(path: str | Path) -> TournamentConfig:
    """Read a tournament file that may not have its ``[draw]`` or ``[schedule]`` section yet.
    Without ``[schedule]`` the loader's warning about the sequential schedule it would play is
    left out: `decks --orders-out` is what writes the schedule (`serve` still warns of a file
    that ends up without one)."""
    data, text = read_config(path)
    data.setdefault("draw", dict(_PLACEHOLDER_DRAW))
    config = parse_config(data, str(path), text, file_reader(path))
    if "schedule" not in data:
        unscheduled = [w for w in config.warnings if not _default_schedule_warning(w)]
        config = dataclasses.replace(config, warnings=tuple(unscheduled))
    return print_warnings(config)


def _default_schedule_warning(warning: str) -> bool:
    """The warning of a file without ``[schedule]`` (key ``schedule``: the sequential one)."""
    return ": schedule: the sequential schedule: " in warning


def write_text(out: str | None, text: str, private: bool = False) -> None:
    """Write ``text`` to the file ``out`` (owner-only if ``private``), or to stdout."""
    if out is None:
        sys.stdout.write(text)
        return
    path = Path(out)
    if private:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8")


def _rng(seed: int | str | None) -> random.Random:
    return random.Random(seed) if seed is not None else secrets.SystemRandom()


# -- draw ---------------------------------------------------------------------------------------


def draw_fragment(config: TournamentConfig, draw: Draw, note: str) -> str:
    """The ``[draw.tables]`` TOML fragment: per table, the team in seats 1..N."""
    lines = [
        f"# Seat draw for {config.id}: {note}.",
        "# Replace the [draw] section of the tournament file with this one.",
        "[draw.tables]",
    ]
    for group in config.groups.values():
        lines.append(f"# group {group.id}: team in seat 1..{config.seats}")
        for table in group.tables:
            teams = ", ".join(f'"{draw[(table, s)]}"' for s in range(1, config.seats + 1))
            lines.append(f'"{table}" = [{teams}]')
    return "\n".join(lines) + "\n"


def run_draw(args: argparse.Namespace) -> int:
    """`duplicast draw`: a random or cyclic seat draw for every group, as a TOML fragment."""
    if args.method not in METHODS:
        return _fail(f"unknown draw method {args.method!r} (expected random or cyclic)", 2)
    try:
        config = load_for_preparation(args.config)
        rng = _rng(args.seed)
        draw: Draw = {}
        for group in config.groups.values():
            part = make_draw(args.method, group.teams, group.tables, config.seats, rng)
            validate_draw(part, group.teams, group.tables, config.seats)
            draw.update(part)
    except (ConfigError, DrawError) as exc:
        return _fail(str(exc))
    if args.seed is None:
        note = f"{args.method} draw from the system CSPRNG"
    else:
        note = f"{args.method} draw from seed {args.seed} (reproducible)"
    try:
        write_text(args.out, draw_fragment(config, draw, note))
    except OSError as exc:
        return _fail(f"{args.out}: cannot write ({exc.strerror})")
    if args.out is not None:
        print(f"wrote the seat draw to {args.out}", file=sys.stderr)
    return 0


# -- decks --------------------------------------------------------------------------------------


def orders_fragment(
    config: TournamentConfig, orders: Mapping[int, tuple[int, ...]], note: str
) -> str:
    """The ``[schedule.tables]`` TOML fragment: per table, the deals in the order it plays them."""
    lines = [
        f"# Deal order per table for {config.id}: {note}.",
        "# Replace the [schedule] section of the tournament file with this one.",
        "[schedule.tables]",
    ]
    for table in sorted(orders):
        lines.append(f'"{table}" = [{", ".join(str(d) for d in orders[table])}]')
    return "\n".join(lines) + "\n"


REHEARSAL_WARNING = (
    "*** REHEARSAL: these deck orders come from seed {seed!r}: anyone who knows the seed knows "
    "every card. Never use them for real play. ***"
)


def run_decks(args: argparse.Namespace) -> int:
    """`duplicast decks`: deck orders (encrypted file, plain export), deal orders, commitment."""
    if getattr(args, "action", None) == "verify":
        return run_decks_verify(args)
    if getattr(args, "new_key", False):
        return _new_key(getattr(args, "key_out", None))
    if args.config is None:
        return _fail("--config is required (the tournament file)", 2)
    try:
        config = load_for_preparation(args.config)
    except ConfigError as exc:
        return _fail(str(exc))
    deals = args.deals if args.deals is not None else config.deals
    if deals < 1:
        return _fail(f"--deals must be at least 1, got {deals}", 2)
    if args.out is None and args.plain_out is None and args.seed is None:
        return _fail("nothing to write: give --out (encrypted deck file) or --plain-out", 2)
    key: str | None = None
    if args.out is not None:
        try:
            key = deck_key(os.environ)
            if not key:
                return _fail(f"no deck key: {NEW_KEY_HINT}", 2)
            parse_key(key)
        except DeckFileError as exc:
            return _fail(str(exc), 2)
        if Path(args.out).exists() and not getattr(args, "force", False):
            return _fail(
                f"{args.out}: already exists; a published commitment may refer to it "
                "(delete it first to replace it)"
            )
    if args.seed is not None:
        print(REHEARSAL_WARNING.format(seed=args.seed), file=sys.stderr)
        orders: dict[int, DeckOrder] = game_of(config.game).seeded_orders(args.seed, deals)
        schedule_rng = random.Random(f"duplicast-schedule:{args.seed}")
        note = f"seed {args.seed} (REHEARSAL)"
    else:
        orders = game_of(config.game).random_orders(deals)
        schedule_rng = secrets.SystemRandom()
        note = "system CSPRNG"
    failed = _write_decks(args, config, orders, key, schedule_rng, note)
    if failed is not None:
        return failed
    if deals != config.deals:
        print(
            f"note: {deals} deck orders, but the tournament file says deals = {config.deals}",
            file=sys.stderr,
        )
    print(f"commitment: sha256:{commitment(orders)}")
    return 0


def _new_key(key_out: str | None) -> int:
    """`decks --new-key`: a new deck key on stdout, or into an owner-only file."""
    new_key = generate_key()
    if key_out is None:
        print(new_key)
        return 0
    try:
        write_key_file(key_out, new_key)
    except DeckFileError as exc:
        return _fail(str(exc))
    print(
        f"wrote a new deck key to {key_out} (owner-only): give it to every command that "
        f"needs it with --key-file {key_out}; keep it out of the event folder and back it "
        "up (without it the deck file cannot be read)",
        file=sys.stderr,
    )
    return 0


def _write_decks(
    args: argparse.Namespace,
    config: TournamentConfig,
    orders: dict[int, DeckOrder],
    key: str | None,
    schedule_rng: random.Random,
    note: str,
) -> int | None:
    """Write what `decks` was asked for; an exit code on failure, else None."""
    try:
        if args.out is not None and key is not None:
            write_deck_file(args.out, orders, key)
            if read_deck_file(args.out, key) != orders:
                return _fail(f"{args.out}: the written file does not read back the same")
            print(f"wrote {len(orders)} encrypted deck orders to {args.out}", file=sys.stderr)
        if args.plain_out is not None:
            write_text(args.plain_out, export_plain(orders), private=True)
            print(
                f"wrote {len(orders)} deck orders IN PLAIN TEXT to {args.plain_out} "
                "(for the dealing machine; delete it after use)",
                file=sys.stderr,
            )
        if args.orders_out is not None:
            deal_orders = release_aware_orders(config, len(orders), schedule_rng)
            write_text(args.orders_out, orders_fragment(config, deal_orders, note))
            print(f"wrote the deal order per table to {args.orders_out}", file=sys.stderr)
    except DeckFileError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"{exc.filename}: cannot write ({exc.strerror})")
    return None


def release_aware_orders(
    config: TournamentConfig, deals: int, rng: random.Random
) -> dict[int, tuple[int, ...]]:
    """Each table's deal order in blocks (``hub.domain.schedule.block_deal_orders``): per group,
    and per session in an event with sessions (when ``deals`` is the file's count)."""
    groups = [group.tables for group in config.groups.values()]
    if not config.phased or deals != config.deals:
        orders = block_deal_orders(groups, [range(1, deals + 1)], rng)
        validate_deal_orders(orders, config.tables, deals)
        return orders
    plan = config.plan
    sessions = {
        table: [s.deals for s in plan.sessions_of(plan.stage_of_group[group.id].id)]
        for group in config.groups.values()
        for table in group.tables
    }
    orders = stage_block_orders(groups, sessions, rng)
    validate_session_orders(orders, sessions)
    return orders


def run_decks_verify(args: argparse.Namespace) -> int:
    """`duplicast decks verify --commitment sha256:HEX (--deck-file F | --plain F)`: after play,
    does the published commitment match the revealed deck orders? Exit 0 ("commitment
    matches") or 1 naming the mismatch."""
    published = (getattr(args, "commitment", None) or "").strip().lower()
    # Also the line `duplicast decks` printed, as it was saved: "commitment: sha256:HEX".
    published = published.removeprefix("commitment:").strip().removeprefix("sha256:")
    if len(published) != 64 or any(c not in "0123456789abcdef" for c in published):
        return _fail("--commitment must be the published sha256:<64 hex digits>", 2)
    deck_file, plain = getattr(args, "deck_file", None), getattr(args, "plain", None)
    if (deck_file is None) == (plain is None):
        return _fail(
            "give the revealed orders: --deck-file FILE (with --key-file) "
            "or --plain FILE (a plain export)",
            2,
        )
    try:
        if deck_file is not None:
            key = deck_key(os.environ)
            if not key:
                return _fail(f"{deck_file}: the deck file needs its key; {NEW_KEY_HINT}", 2)
            orders = read_deck_file(deck_file, key)
        else:
            assert plain is not None
            try:
                text = Path(plain).read_text("utf-8")
            except OSError as exc:
                return _fail(f"{plain}: cannot read ({exc.strerror})")
            orders = parse_plain(text, str(plain))
    except DeckFileError as exc:
        return _fail(str(exc))
    deals = getattr(args, "deals", None)
    if deals is not None and sorted(orders) != list(range(1, deals + 1)):
        return _fail(
            f"commitment does NOT match: expected deals 1..{deals}, the revealed orders hold "
            f"deals {_ranges(sorted(orders))}"
        )
    actual = commitment(orders)
    if actual == published:
        print(f"commitment matches: sha256:{actual} ({len(orders)} deals)")
        return 0
    # Name the mismatch as closely as the hash allows: fewer deals committed than revealed?
    ordered = sorted(orders)
    for n in range(len(ordered) - 1, 0, -1):
        if commitment({deal: orders[deal] for deal in ordered[:n]}) == published:
            return _fail(
                f"commitment does NOT match all {len(orders)} revealed deals: it matches deals "
                f"{_ranges(ordered[:n])} only; deals {_ranges(ordered[n:])} were not committed"
            )
    return _fail(
        f"commitment does NOT match: published sha256:{published}, the revealed orders of "
        f"deals {_ranges(ordered)} hash to sha256:{actual} (a deck order differs from the one "
        "committed to, or a deal is missing)"
    )


def _ranges(deals: list[int]) -> str:
    """``[1, 2, 3, 5]`` as ``1-3, 5``."""
    parts: list[str] = []
    start = prev = None
    for deal in deals:
        if start is None:
            start = prev = deal
        elif prev is not None and deal == prev + 1:
            prev = deal
        else:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = deal
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(parts) or "none"
