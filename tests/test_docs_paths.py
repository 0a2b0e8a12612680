"""The documents that point into the code name only modules that exist: every ``hub/...`` path
and every dotted ``hub.x.y`` name (a module, or a name defined in one) in README.md,
docs/internals.md and docs/protocol.md. A regroup or a rename that leaves one behind fails here."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = ("README.md", "docs/internals.md", "docs/protocol.md")
PATH = re.compile(r"(?<![\w/.-])hub/[\w./-]*[\w/]")
DOTTED = re.compile(r"(?<![\w./-])hub(?:\.\w+)+")


def module_file(root: Path, parts: list[str]) -> Path | None:
    where = root.joinpath(*parts)
    if where.with_suffix(".py").is_file():
        return where.with_suffix(".py")
    return where / "__init__.py" if (where / "__init__.py").is_file() else None


@cache
def defined(path: Path, inside: str | None = None) -> frozenset[str]:
    """Names bound at the top of a module (or of its class ``inside``, with the attributes its
    methods set on ``self``): definitions, assignments, imports, including those under a
    module-level ``if`` or ``try``."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    names: set[str] = set()
    if inside is not None:
        body = next((n.body for n in body if isinstance(n, ast.ClassDef) and n.name == inside), [])
        names.update(
            n.attr
            for node in body
            for n in ast.walk(node)
            if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name)
            and n.value.id == "self"
            and isinstance(n.ctx, ast.Store)
        )
    for node in body:
        for n in ast.walk(node) if isinstance(node, ast.If | ast.Try) else (node,):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(n.name)
            elif isinstance(n, ast.Assign | ast.AnnAssign):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                bound = (t for target in targets for t in ast.walk(target))
                names.update(t.id for t in bound if isinstance(t, ast.Name))
            elif isinstance(n, ast.Import | ast.ImportFrom):
                names.update((a.asname or a.name).split(".")[0] for a in n.names)
    return frozenset(names)


def dotted_problem(name: str, root: Path = ROOT) -> str | None:
    """Why ``name`` names nothing (None when it does): the longest module it starts with
    must define its next part, and a class so named its part after that."""
    parts = name.split(".")
    found = next(
        ((i, f) for i in range(len(parts), 0, -1) if (f := module_file(root, parts[:i]))), None
    )
    if found is None or (found[0] == 1 and len(parts) > 1):
        return f"no module {'.'.join(parts[:2])}"
    i, path = found
    module, rest = ".".join(parts[:i]), parts[i:]
    if rest and rest[0] not in defined(path):
        return f"{module} defines no {rest[0]}"
    members = defined(path, rest[0]) if len(rest) > 1 else frozenset()
    if members and rest[1] not in members:  # a class of that module: it must bind the name
        return f"{module}.{rest[0]} has no {rest[1]}"
    return None


def problems(text: str, root: Path = ROOT) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for m in PATH.finditer(line):
            if not (root / m.group().rstrip("/")).exists():
                found.append(f"line {number}: {m.group()} does not exist")
        for m in DOTTED.finditer(line):
            if problem := dotted_problem(m.group(), root):
                found.append(f"line {number}: {m.group()}: {problem}")
    return found


@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_document_names_only_modules_that_exist(document: str) -> None:
    found = problems((ROOT / document).read_text(encoding="utf-8"))
    assert not found, f"{document}:\n" + "\n".join(found)


def test_the_check_sees_stale_paths_and_names() -> None:
    stale = (
        "`hub/feedsession.py`, `hub.feedsession`, `hub.serve.feed.Channels`, "
        "`hub.wire.frames.Outgoing.nothing`, `hub/serve/nowhere/`"
    )
    assert len(problems(stale)) == 5
    fine = (
        "`hub/serve/feed.py`, `hub/engine/families/`, `hub.wire.channels.Channels`, "
        "`hub.engine.core.Engine.submit`, `hub.bus`, `hub.cli.args.HelpFormatter`. `hub/`"
    )
    assert problems(fine) == []
