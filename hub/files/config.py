"""Reading the tournament file: the I/O half of `hub.domain.config`.

`load_config` reads the bytes, decodes them and parses the TOML; the pure `parse_config` checks
the result, with the text at hand to put the line of the faulty key in every error (and in
every warning, which `load_config` prints on stderr).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

from hub.domain.config import ConfigError, ReadFile, TournamentConfig, parse_config

_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


def load_config(path: str | Path) -> TournamentConfig:
    """Read and check a tournament file; the file name (and line) appears in every error."""
    data, text = read_config(path)
    return print_warnings(parse_config(data, str(path), text, file_reader(path)))


def print_warnings(config: TournamentConfig) -> TournamentConfig:
    """Show on stderr what the file loaded with but should not (``config.warnings``)."""
    for warning in config.warnings:
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    return config


def file_reader(path: str | Path) -> ReadFile:
    """Reads the files a tournament file names (an IMP scale), relative to its directory."""
    folder = Path(path).parent

    def read(name: str) -> str:
        return (folder / name).read_text(encoding="utf-8")

    return read


def read_config(path: str | Path) -> tuple[dict[str, Any], str]:
    """The parsed TOML and its text (for line numbers), or a `ConfigError` naming the line."""
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(source, "-", f"cannot read the file ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(source, "-", "not UTF-8 text", line) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise toml_error(source, exc) from None
    return data, text


def toml_error(source: str, exc: tomllib.TOMLDecodeError) -> ConfigError:
    """A TOML syntax error as a `ConfigError`, its line moved to the line slot."""
    message = str(exc)
    position = _TOML_POSITION.search(message)
    if position is None:
        return ConfigError(source, "-", f"not valid TOML ({message})")
    line, column = position.groups()
    message = message.replace(position.group(), f"(at column {column})")
    return ConfigError(source, "-", f"not valid TOML ({message})", int(line))
