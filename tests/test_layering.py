"""The domain core and the engine stay pure: they do no I/O, and layers only import downward."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HUB = Path(__file__).resolve().parent.parent / "hub"
FORBIDDEN_EXTERNAL = {
    "asyncio",
    "redis",
    "starlette",
    "uvicorn",
    "websockets",
    "msgpack",
    "socket",
    "threading",
    "subprocess",
    "prometheus_client",
    "time",
    "cryptography",
    "pathlib",
    "os",
    "io",
}
IO_MODULES = {"hub.bus", "hub.codec", "hub.feed", "hub.fanout", "hub.server", "hub.ingest"}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def opens_files(path: Path) -> list[int]:
    """Lines that call the builtin ``open`` (or ``builtins.open``, ``io.open``...)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (isinstance(func, ast.Name) and func.id == "open") or (
            isinstance(func, ast.Attribute)
            and func.attr == "open"
            and isinstance(func.value, ast.Name)
            and func.value.id in ("builtins", "io", "os")
        ):
            lines.append(node.lineno)
    return sorted(lines)


def modules(package: str) -> list[Path]:
    return sorted((HUB / package).glob("*.py"))


@pytest.mark.parametrize("package", ["domain", "engine"])
def test_pure_layers_import_no_io(package: str) -> None:
    assert modules(package), f"hub/{package} has no modules"
    for path in modules(package):
        for name in imports_of(path):
            top = name.split(".")[0]
            assert top not in FORBIDDEN_EXTERNAL, f"{path.name} imports {name}"
            assert not any(name == m or name.startswith(m + ".") for m in IO_MODULES), (
                f"{path.name} imports the I/O module {name}"
            )
            assert not name.startswith("hub.") or name.startswith(("hub.domain", "hub.engine")), (
                f"{path.name} imports {name} from outside the pure core"
            )


@pytest.mark.parametrize("package", ["domain", "engine"])
def test_pure_layers_open_no_files(package: str) -> None:
    for path in modules(package):
        assert not opens_files(path), f"{path.name} calls open() at lines {opens_files(path)}"


def test_domain_does_not_import_engine() -> None:
    for path in modules("domain"):
        for name in imports_of(path):
            assert not name.startswith("hub.engine"), f"{path.name} imports {name}"


def test_the_check_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import asyncio\nfrom redis import asyncio as r\n")
    assert {"asyncio", "redis"} <= imports_of(bad)
    bad.write_text(
        "from pathlib import Path\nimport os.path\n"
        "def f(p):\n    return open(p).read()\n\n"
        "def g(p):\n    return builtins.open(p)\n\n"
        "def h(f):\n    return f.open()  # a method of something else: not flagged\n"
    )
    assert {"pathlib", "os.path"} <= imports_of(bad)
    assert {name.split(".")[0] for name in imports_of(bad)} <= FORBIDDEN_EXTERNAL
    assert opens_files(bad) == [4, 7]
