"""The shape the code keeps (issue #21): small modules, short functions, a small Engine.

A module over 500 lines or a function over 80 lines does too many things to read at once; the
Engine composes its parts (admission, release, desk) and holds no more than a handful of them.
"""

from __future__ import annotations

import ast
from pathlib import Path

HUB = Path(__file__).resolve().parent.parent / "hub"
# A bound against a module that has grown into several concepts, not a size to cut to: modules
# are cut by concept (STYLE.md: one file of 700 lines reads better than a concept split in three
# for a cap; starlette's routing.py is ~870; issue #31 item 4).
MAX_MODULE_LINES = 900
MAX_FUNCTION_LINES = 80
MAX_ENGINE_ATTRIBUTES = 8


def _sources() -> list[Path]:
    return sorted(HUB.rglob("*.py"))


def _label(path: Path) -> str:
    return str(path.relative_to(HUB.parent)) if path.is_relative_to(HUB.parent) else path.name


def long_functions(path: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{_label(path)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (node.end_lineno or node.lineno) - node.lineno + 1 > limit
    ]


def instance_attributes(path: Path, cls: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for sub in ast.walk(node):
                targets = (
                    sub.targets
                    if isinstance(sub, ast.Assign)
                    else [sub.target]
                    if isinstance(sub, ast.AnnAssign)
                    else []
                )
                for target in targets:
                    for part in ast.walk(target):
                        if (
                            isinstance(part, ast.Attribute)
                            and isinstance(part.value, ast.Name)
                            and part.value.id == "self"
                        ):
                            found.add(part.attr)
    return found


def test_no_module_is_over_900_lines() -> None:
    over = [
        f"{p.relative_to(HUB.parent)}: {n} lines"
        for p in _sources()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert not over, "\n".join(over)


def test_no_function_is_over_80_lines() -> None:
    over = [line for p in _sources() for line in long_functions(p)]
    assert not over, "\n".join(over)


def test_the_engine_holds_a_handful_of_parts() -> None:
    attrs = instance_attributes(HUB / "engine" / "core.py", "Engine")
    assert attrs, "the check found no Engine"
    assert len(attrs) <= MAX_ENGINE_ATTRIBUTES, sorted(attrs)


def test_the_checks_see_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(85))
    path = tmp_path / "long.py"
    path.write_text(
        f"def f():\n{body}\n\n"
        "class C:\n    def __init__(self):\n        self.a = self.b = 1\n        self.c: int = 2\n"
    )
    assert len(long_functions(path)) == 1
    assert instance_attributes(path, "C") == {"a", "b", "c"}
