"""Broken tournament files, to pin every message of `parse_config` (tests/test_config.py).

Each sample of samples/ (and a few variants that reach the sections the samples leave out) is
broken in one place at a time: a key deleted, a key misspelt, an unknown key added, a value
replaced by one of every type and by out-of-range numbers. Each case is written back as TOML
text (so the messages carry their line) and the outcome (the exact message, or a digest of the
configuration when the file is still valid) is compared with tests/data/config_golden.json,
recorded from the parser before it was rebuilt on msgspec (issue #21). Regenerate it only on
purpose: ``python -m tests.config_corpus --write``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
import tomllib
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "data" / "config_golden.json"
SAMPLES = ("ifp6", "ifp-event", "event", "mcr", "piecepack", "rps-poker")
REPLACEMENTS: tuple[Any, ...] = ("x", " ", "", 42, 0, 1.5, True, [], ["x"], {})
Path_ = tuple[str | int, ...]


def variants() -> dict[str, dict[str, Any]]:
    """The samples, and variants with the sections they do not show."""
    bases = {
        name: tomllib.loads((ROOT / "samples" / f"{name}.toml").read_text()) for name in SAMPLES
    }
    imp = copy.deepcopy(bases["ifp6"])
    imp["scoring"] = {"format": "imp", "unit": "big_blinds", "scale": "imp-scale-wbf.csv"}
    imp["schedule"] = {"method": "random", "seed": 3, "buttons": [1, 2, 3, 4, 5, 6] * 2}
    bases["ifp6-imp"] = imp
    rps = copy.deepcopy(bases["rps-poker"])
    rps["tournament"]["betting"] = "limit"
    rps["rps"] = {"dealer": "chosen"}
    bases["rps-limit"] = rps
    event = copy.deepcopy(bases["ifp-event"])
    a, b = event["groups"][0], event["groups"][1]
    rows = {str(t): a["teams"][i:] + a["teams"][:i] for i, t in enumerate(a["tables"])}
    rows |= {str(t): b["teams"][i:] + b["teams"][:i] for i, t in enumerate(b["tables"])}
    event["sessions"][1]["draw"] = {"tables": rows}
    event["schedule"] = {"method": "sequential"}
    bases["ifp-event-tables"] = event
    bases["event"]["draw"] = {"method": "random", "seed": 5}
    mcr = copy.deepcopy(bases["mcr"])
    mcr["scoring"] = {"format": "imp", "scale": "imp-scale-wbf.csv", "average": "others"}
    bases["mcr-scale"] = mcr
    cameras = copy.deepcopy(bases["ifp6"])
    cameras["broadcast"] = {
        "fps": 29.97,
        "sync": datetime(2026, 11, 25, 20, tzinfo=timezone(timedelta(hours=1))),
        "cameras": {"1": "10:00:00:00", "6": "09:59:58:29"},
    }
    bases["ifp6-broadcast"] = cameras
    return bases


def nodes(value: Any, path: Path_ = ()) -> Iterator[Path_]:
    """Paths of the values worth breaking: every key, and the first and the last element of
    each array."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*path, key)
            yield from nodes(child, (*path, key))
    elif isinstance(value, list):
        picked = sorted({0, len(value) - 1} & set(range(len(value))))
        for i in picked:
            yield (*path, i)
            yield from nodes(value[i], (*path, i))


def cases() -> Iterator[tuple[str, dict[str, Any]]]:
    for name, base in variants().items():
        yield f"{name}", base
        tables = [(), *(p for p in nodes(base) if isinstance(_get(base, p), dict))]
        for table in tables:
            where = ".".join(map(str, table))
            broken = copy.deepcopy(base)
            _get(broken, table)["bogus_key"] = 1
            yield f"{name} {where} +bogus_key", broken
        for path in nodes(base):
            where = ".".join(map(str, path))
            parent, last = path[:-1], path[-1]
            broken = copy.deepcopy(base)
            container = _get(broken, parent)
            del container[last]
            yield f"{name} {where} deleted", broken
            if isinstance(last, str) and len(last) > 2:
                broken = copy.deepcopy(base)
                container = _get(broken, parent)
                container[last[:-1]] = container.pop(last)
                yield f"{name} {where} misspelt", broken
            for replacement in REPLACEMENTS:
                broken = copy.deepcopy(base)
                _get(broken, parent)[last] = copy.deepcopy(replacement)
                yield f"{name} {where} = {json.dumps(replacement)}", broken
            original = _get(base, path)
            if isinstance(original, int) and not isinstance(original, bool):
                for number in (original + 1, original - 1):
                    broken = copy.deepcopy(base)
                    _get(broken, parent)[last] = number
                    yield f"{name} {where} = {number}", broken


def _get(data: Any, path: Path_) -> Any:
    for step in path:
        data = data[step]
    return data


# -- a small TOML writer (enough for these files) --------------------------------------------

_BARE = re.compile(r"[A-Za-z0-9_-]+")


def _key(name: str) -> str:
    return name if _BARE.fullmatch(name) else json.dumps(name)


def _inline(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return "{" + ", ".join(f"{_key(k)} = {_inline(v)}" for k, v in value.items()) + "}"


def _tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def to_toml(data: dict[str, Any], prefix: str = "") -> str:
    """TOML text for ``data``: scalars and arrays inline, tables as [headers], arrays of tables
    as [[headers]]."""
    lines: list[str] = []
    for key, value in data.items():
        if not isinstance(value, dict) and not _tables(value):
            lines.append(f"{_key(key)} = {_inline(value)}")
    for key, value in data.items():
        name = f"{prefix}{_key(key)}"
        if isinstance(value, dict):
            lines.append(f"\n[{name}]")
            lines.append(to_toml(value, name + "."))
        elif _tables(value):
            for entry in value:
                lines.append(f"\n[[{name}]]")
                lines.append(to_toml(entry, name + "."))
    return "\n".join(line for line in lines if line)


def read_file(name: str) -> str:
    if name == "imp-scale-wbf.csv":
        return (ROOT / "samples" / name).read_text(encoding="utf-8")
    raise FileNotFoundError(2, "No such file or directory", name)


def outcome(data: dict[str, Any]) -> str:
    """The exact error message, or ``ok`` and a digest of the configuration."""
    from hub.domain.config import ConfigError, parse_config

    text = to_toml(data)
    parsed = tomllib.loads(text)
    try:
        config = parse_config(parsed, "corpus.toml", text, read_file)
    except ConfigError as exc:
        return f"{exc} | line={exc.line} key={exc.key}"
    digest = hashlib.sha256(repr(config).encode()).hexdigest()[:16]
    return f"ok {digest}"


def outcomes() -> dict[str, str]:
    return {name: outcome(data) for name, data in cases()}


if __name__ == "__main__":
    results = outcomes()
    if "--write" in sys.argv:
        GOLDEN.write_text(json.dumps(results, indent=0, ensure_ascii=False, sort_keys=True) + "\n")
    print(len(results), "cases,", len(set(results.values())), "distinct outcomes")
