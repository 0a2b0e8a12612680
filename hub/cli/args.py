"""What every `duplicast` command shares on its command line: help that shows defaults, one seed
type, and the ``--redis``, ``--key-file`` and ``--progress`` options, each meaning the same in
every command that has it."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import Any

from hub.files.decks import KEY_ENV, KEY_FILE_ENV

REDIS_ENV = "DUPLICAST_REDIS_URL"
DEFAULT_REDIS = "redis://127.0.0.1:6379/0"


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's "(default: X)" after every option's help, except where there is nothing to
    show (no value, a flag that is off) or the help already says what the default is."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        help = action.help or ""
        if "default" in help or action.default in (None, False, argparse.SUPPRESS):
            return help
        return super()._get_help_string(action)


def seed(text: str) -> int | str:
    """A seed as the tournament file takes one: an integer, else any text. ``7`` is the integer
    7 in every command (as ``seed = 7`` is in the file), so the same seed gives the same draw,
    deck orders or session wherever it is typed."""
    try:
        return int(text)
    except ValueError:
        if not text:
            raise argparse.ArgumentTypeError("a seed is an integer or a non-empty text") from None
        return text


def finite(text: str) -> float:
    """A float option that is a real number: ``float()`` also reads "nan" and "inf", which a
    pace or a speed cannot be (a NaN sleep never ends, an infinite one neither)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def positive(text: str) -> float:
    """A number of seconds above zero and finite (a timeout of 0 would close every
    connection, an infinite one none)."""
    value = finite(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return value


def add_redis(parser: argparse.ArgumentParser, **kwargs: Any) -> None:
    default = os.environ.get(REDIS_ENV) or DEFAULT_REDIS
    parser.add_argument(
        "--redis",
        default=kwargs.pop("default", default),
        metavar="URL",
        help=kwargs.pop(
            "help",
            f"Redis to use (default: ${REDIS_ENV} if set, else {DEFAULT_REDIS})",
        ),
        **kwargs,
    )


def add_config(
    parser: argparse.ArgumentParser, default: Path, what: str = "tournament TOML file"
) -> None:
    """``--config``, defaulting to the bundled sample ``default``."""
    parser.add_argument(
        "--config",
        type=Path,
        default=default,
        help=f"{what} (default: the bundled sample, {default.name})",
    )


def add_key_file(parser: argparse.ArgumentParser, what: str = "the encrypted deck file") -> None:
    parser.add_argument(
        "--key-file",
        type=Path,
        default=None,
        metavar="FILE",
        help=f"the deck key for {what}, from `duplicast decks --new-key --key-out FILE` "
        f"(default: ${KEY_FILE_ENV}, else the key itself in ${KEY_ENV})",
    )


def add_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress line on stderr, at most one update a second (default: only when "
        "stderr is a terminal)",
    )


def apply_key_file(args: argparse.Namespace) -> None:
    """``--key-file`` stands for ``$DUPLICAST_DECK_KEY_FILE`` in this process: every loader of
    the deck file reads the key through it."""
    key_file = getattr(args, "key_file", None)
    if key_file is not None:
        os.environ[KEY_FILE_ENV] = str(key_file)
