"""The tournament configuration: one TOML file, checked to the last key before anything runs.

The file format and the model are in ``model`` (its docstring is the reference); ``shape``
checks each section's shape with msgspec, ``rules``, ``stages`` and ``formats`` what spans
fields, ``keylines`` finds the line of a key for the error. ``parse_config`` is the entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hub.domain.config.keylines import KeyLines, KeyPath, key_path
from hub.domain.config.model import (
    BETTING,
    MAX_SEATS,
    RESERVED_CONSOLES,
    ConfigError,
    DeckSource,
    Group,
    ReadFile,
    Team,
    TournamentConfig,
)
from hub.domain.config.rules import parse
from hub.domain.config.shape import Checker

__all__ = [
    "BETTING",
    "MAX_SEATS",
    "RESERVED_CONSOLES",
    "ConfigError",
    "DeckSource",
    "Group",
    "KeyLines",
    "KeyPath",
    "ReadFile",
    "Team",
    "TournamentConfig",
    "key_path",
    "parse_config",
]


def parse_config(
    data: Mapping[str, Any],
    source: str = "<config>",
    text: str | None = None,
    read_file: ReadFile | None = None,
) -> TournamentConfig:
    """Check parsed TOML data and build the configuration (pure).

    ``text`` is the TOML source ``data`` was parsed from; given, errors carry line numbers.
    ``read_file`` reads the files the configuration names (an IMP scale); without it, naming
    one is an error.
    """
    return parse(Checker(source, text, read_file), data)
