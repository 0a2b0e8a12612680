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


# The parts of the Engine that its readers (the families' builders, the program, the site, the
# PHH export, the feed writer and the answer stage) read as parts:
# ``engine.release.deal_released(d)``, not ``engine.deal_released(d)``;
# ``engine.projecting.flush()``, not ``engine.changes()``.
READ_PARTS = ("state", "admission", "release", "desk", "projecting")


def _passed_on(member: ast.FunctionDef) -> ast.expr | None:
    """What a member's one statement (its docstring aside) reads, if it only hands on: an
    attribute read, or called with the member's own parameters, or its ``len``."""
    body = [
        b
        for b in member.body
        if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))
    ]
    if len(body) != 1 or not isinstance(body[0], ast.Return | ast.Expr) or body[0].value is None:
        return None
    value = body[0].value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and len(value.args) == 1:
        value = value.args[0]  # len(self.release.pairs)
    if isinstance(value, ast.Call):
        params = [a.arg for a in member.args.args[1:]]
        names = [a.id if isinstance(a, ast.Name) else None for a in value.args]
        if names != params or value.keywords:
            return None
        value = value.func
    return value


def forwarders(path: Path, cls: str, parts: tuple[str, ...] = READ_PARTS) -> list[str]:
    """Members of class ``cls`` that only hand on to ``self.<part>.<name>`` for a part of
    ``parts`` (`_passed_on`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and node.name == cls):
            continue
        for member in node.body:
            if not isinstance(member, ast.FunctionDef):
                continue
            value = _passed_on(member)
            if (
                isinstance(value, ast.Attribute)
                and isinstance(value.value, ast.Attribute)
                and isinstance(value.value.value, ast.Name)
                and value.value.value.id == "self"
                and value.value.attr in parts
            ):
                found.append(f"{cls}.{member.name} -> self.{value.value.attr}.{value.attr}")
    return found


def test_the_engine_forwards_nothing_of_the_parts_its_readers_read() -> None:
    """Issue #31 item 4: a caller reads the part (``engine.release.released``,
    ``engine.projecting.flush()``); the Engine keeps no pass-through to it, and the builders'
    view of it (``EngineView``) lists the parts, not names forwarded from them."""
    assert not forwarders(HUB / "engine" / "core.py", "Engine")
    view = ast.parse((HUB / "engine" / "families" / "base.py").read_text(encoding="utf-8"))
    [engine_view] = [n for n in view.body if isinstance(n, ast.ClassDef) and n.name == "EngineView"]
    methods = [
        f.name
        for f in engine_view.body
        if isinstance(f, ast.FunctionDef)
        and not any(isinstance(d, ast.Name) and d.id == "property" for d in f.decorator_list)
    ]
    assert not methods, f"EngineView forwards {methods}: read them of the part"


FORWARDING = '''
class E:
    def released(self, g, d):
        """Doc."""
        return self.release.released(g, d)

    @property
    def count(self):
        return len(self.release.pairs)

    def links(self, links):
        self.desk.note_links(links)

    def config(self):
        return self.state.config

    def own(self, d):  # not a pass-through: a value of its own
        return self.release.released("A", d)

    def feed(self, k):
        return self.projecting.materialize(k)

    def topic(self, k):  # not a part: the engine's topic space
        return self.topics.get(k)

    def two(self, d):
        x = 1
        return self.release.released(d)
'''


def test_the_checks_see_a_forwarder(tmp_path: Path) -> None:
    path = tmp_path / "engine.py"
    path.write_text(FORWARDING)
    assert forwarders(path, "E") == [
        "E.released -> self.release.released",
        "E.count -> self.release.pairs",
        "E.links -> self.desk.note_links",
        "E.config -> self.state.config",
        "E.feed -> self.projecting.materialize",
    ]


def test_the_checks_see_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(85))
    path = tmp_path / "long.py"
    path.write_text(
        f"def f():\n{body}\n\n"
        "class C:\n    def __init__(self):\n        self.a = self.b = 1\n        self.c: int = 2\n"
    )
    assert len(long_functions(path)) == 1
    assert instance_attributes(path, "C") == {"a", "b", "c"}
