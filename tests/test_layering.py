"""The domain core and the engine stay pure: they do no I/O, and layers only import downward."""

from __future__ import annotations

import ast
from collections.abc import Mapping
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

# The floors of hub/: each folder is one floor, and a module imports only from its own floor or
# a lower one (at module level or inside a function alike; within a floor, the cycle check
# below keeps the modules in order). A module directly in hub/ has its own line; a new folder
# or top-level module needs one. No exceptions.
FLOORS: dict[str, int] = {
    "hub": 0,  # the package itself (empty)
    "hub.domain": 0,  # the pure core: what duplicate poker is, and the games
    "hub.wire": 1,  # what travels and how it is spelled (codec, channels, topics, frames)
    "hub.engine": 2,  # the tournament as a pure state machine, its topics' payloads
    "hub.redact": 3,  # passwords out of URLs and log lines
    "hub.tasks": 3,  # asyncio tasks that log their end
    "hub.logs": 3,  # the processes' log lines
    "hub.bus": 4,  # the message bus (Redis, or in memory)
    "hub.files": 5,  # formats at rest (tournament file, deck files, PHH files, event logs)
    "hub.client": 6,  # a table's console (publish, outbox, acks)
    "hub.metrics": 7,  # Prometheus metrics of one process (reads what it counts structurally)
    "hub.serve": 8,  # websocket and HTTP clients (sessions, fan-out, feed store, auth)
    "hub.roles": 9,  # the processes of a running hub (ingest, projector, edge, ...)
    "hub.cli": 10,  # the duplicast command
    "hub.__main__": 11,
}


def imports_of(path: Path, root: Path = HUB) -> set[str]:
    """The modules ``path`` imports, resolved: ``from hub.wire import codec`` is ``hub.wire.codec``
    (not the package ``hub.wire``), and relative imports are read from the module's own package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, path, root)
            for alias in node.names:
                child = f"{base}.{alias.name}"
                names.add(child if _is_module(child, root) else base)
    return names


def _absolute(node: ast.ImportFrom, path: Path, root: Path) -> str:
    """The absolute name of the module a ``from ... import`` reads from."""
    if node.level == 0:
        return node.module or ""
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, node.module] if node.module else package)


def _is_module(name: str, root: Path) -> bool:
    """``name`` is a module or package of the tree under ``root`` (not a name inside one)."""
    if not name.startswith(root.name + "."):
        return False
    where = root.parent.joinpath(*name.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


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
    """Every module of ``hub/<package>``, its subfolders' included (or the one module
    ``hub/<package>`` when it names a file)."""
    where = HUB / package
    return [where] if where.is_file() else sorted(where.rglob("*.py"))


# The pure core, and the wire facts it shares with transport (pure too).
PURE = (
    "hub.domain",
    "hub.engine",
    "hub.wire.topics",
    "hub.wire.patch",
    "hub.wire.standings_select",
)


@pytest.mark.parametrize(
    "package", ["domain", "engine", "wire/topics.py", "wire/patch.py", "wire/standings_select.py"]
)
def test_pure_layers_import_no_io(package: str) -> None:
    assert modules(package), f"hub/{package} has no modules"
    for path in modules(package):
        for name in imports_of(path):
            top = name.split(".")[0]
            assert top not in FORBIDDEN_EXTERNAL, f"{path.name} imports {name}"
            # (the hub's I/O modules, the bus, codec, frames, serve and roles, are all outside)
            assert not name.startswith("hub.") or name.startswith(PURE), (
                f"{path.name} imports {name} from outside the pure core"
            )


@pytest.mark.parametrize(
    "package", ["domain", "engine", "wire/topics.py", "wire/patch.py", "wire/standings_select.py"]
)
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


def module_name(path: Path, root: Path = HUB) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(name: str, layers: Mapping[str, int] = FLOORS) -> int | None:
    """The floor of a module: its folder's (hub.domain.cards -> 0, and so for any depth of
    folder), or its own line for a module directly in hub/ (None: it has none)."""
    return layers.get(".".join(name.split(".")[:2]))


def hub_graph(root: Path = HUB) -> dict[str, set[str]]:
    top = root.name
    return {
        module_name(path, root): {
            n for n in imports_of(path, root) if n == top or n.startswith(top + ".")
        }
        for path in sorted(root.rglob("*.py"))
    }


def violations(graph: Mapping[str, set[str]], layers: Mapping[str, int] = FLOORS) -> list[str]:
    """Modules without a floor, and imports of a module of a higher floor (a floor's modules
    import each other freely: the cycle check keeps them in order)."""
    problems = []
    for module, deps in graph.items():
        mine = layer_of(module, layers)
        if mine is None:
            problems.append(f"{module} has no layer in tests/test_layering.py")
            continue
        for dep in sorted(deps):
            theirs = layer_of(dep, layers)
            if theirs is None:
                problems.append(f"{module} imports {dep}, which has no layer")
            elif theirs > mine:
                problems.append(f"{module} (layer {mine}) imports {dep} (layer {theirs})")
    return problems


def test_every_module_of_hub_imports_only_lower_layers() -> None:
    graph = hub_graph()
    assert len(graph) > 40
    problems = violations(graph)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("importer", "upward"),
    [
        ("hub.wire.codec", "hub.engine.events"),  # wire -> engine (issue #31)
        ("hub.wire.control_request", "hub.engine.core"),
        ("hub.metrics", "hub.roles.intake"),  # metrics -> roles, serve
        ("hub.metrics", "hub.serve.fanout"),
        ("hub.cli.workers", "hub.cli.args"),  # within a floor: allowed
        ("hub.engine.core", "hub.serve.feed"),
        ("hub.domain.cards", "hub.wire.codec"),
    ],
)
def test_the_floors_refuse_each_arrow_that_ran_up(importer: str, upward: str) -> None:
    """The real tree with one more import: refused when it runs up a floor, accepted within
    one (``hub.roles.workers`` read ``hub.cli.args``: it is ``hub.cli.workers`` now)."""
    graph = hub_graph()
    graph[importer] = {*graph[importer], upward}
    problems = violations(graph)
    if layer_of(upward) == layer_of(importer):
        assert not problems
    else:
        assert problems == [
            f"{importer} (layer {layer_of(importer)}) imports {upward} (layer {layer_of(upward)})"
        ]


def test_every_folder_of_hub_has_a_layer() -> None:
    """A folder's modules inherit its layer, so every folder of hub/ needs one."""
    folders = {path.parent for path in HUB.rglob("*.py")} - {HUB}
    missing = sorted(
        name for name in (module_name(f / "__init__.py") for f in folders) if layer_of(name) is None
    )
    assert not missing, f"folders without a layer: {missing}"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import cycles (Tarjan's strongly connected components of more than one module, or a
    module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_hub_has_no_import_cycles() -> None:
    assert cycles(hub_graph()) == []


def test_the_layer_check_sees_a_cycle_and_an_upward_import() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"a"}}) == [["a"]]
    assert layer_of("hub.domain.cards") == 0 and layer_of("hub.engine.families") == 2
    assert layer_of("hub.engine.families.base") == 2 and layer_of("hub.metrics") == 7
    assert layer_of("hub.domain.config.rules") == 0  # a subfolder inherits its folder's layer
    assert layer_of("hub.nothing") is None


def _tree(root: Path, files: Mapping[str, str]) -> Path:
    """A package ``hub`` under ``root`` with ``files`` (path in the package -> source)."""
    hub = root / "hub"
    for name, source in {"__init__.py": "", **files}.items():
        (hub / name).parent.mkdir(parents=True, exist_ok=True)
        (hub / name).write_text(source, encoding="utf-8")
    return hub


FAKE_LAYERS = {"hub": 0, "hub.domain": 0, "hub.low": 1, "hub.high": 2}


@pytest.mark.parametrize(
    ("importer", "source"),
    [
        ("low.py", "import hub.high\n"),
        ("low.py", "from hub.high import thing\n"),
        ("low.py", "from hub import high\n"),
        ("low.py", "def f():\n    from hub import domain, high\n"),
        ("low.py", "from . import high\n"),
        ("low.py", "from .high import thing\n"),
        ("domain/inner/deep.py", "from ... import high\n"),
        ("domain/inner/deep.py", "from ...high import thing\n"),
    ],
)
def test_the_layer_check_sees_an_upward_import_in_any_form(
    tmp_path: Path, importer: str, source: str
) -> None:
    hub = _tree(tmp_path, {"high.py": "", "low.py": "", "domain/inner/__init__.py": ""})
    (hub / importer).write_text(source, encoding="utf-8")
    module = module_name(hub / importer, hub)
    problems = violations(hub_graph(hub), FAKE_LAYERS)
    assert problems == [
        f"{module} (layer {layer_of(module, FAKE_LAYERS)}) imports hub.high (layer 2)"
    ]
    assert "hub.high" in imports_of(hub / importer, hub)


def test_the_layer_check_resolves_names_that_are_not_modules(tmp_path: Path) -> None:
    hub = _tree(
        tmp_path, {"high.py": "from hub import low\nfrom hub.low import X, Y\n", "low.py": ""}
    )
    assert imports_of(hub / "high.py", hub) == {"hub.low"}
    hub = _tree(tmp_path, {"high.py": "from hub import __version__\n"})
    assert imports_of(hub / "high.py", hub) == {"hub"}


def test_the_cycle_check_sees_a_cycle_through_resolved_imports(tmp_path: Path) -> None:
    hub = _tree(
        tmp_path,
        {
            "low.py": "from hub import high\n",
            "high.py": "from . import low\n",
            "domain/__init__.py": "",
        },
    )
    assert cycles(hub_graph(hub)) == [["hub.high", "hub.low"]]


# ------------------------------------------------------------------ the games' shared layer
# hub/domain/games/ holds what every game shares: `base.py` (the `Game` and `Hand` protocols,
# the pad's types, the defaults), `spec.py` (`HandSpec`) and `records.py` (`ActionRecord`,
# `Legal`, `Pot`), which import no game's folder; `registry.py` lists the games. Hold'em's own
# declaration (`PokerGame`, its pad, its betting) is `holdem/game.py` (issue #31 item 2).
GAMES = HUB / "domain" / "games"
GAME_FOLDERS = tuple(
    f"hub.domain.games.{path.parent.name}" for path in sorted(GAMES.glob("*/__init__.py"))
)
HOLDEM = "hub.domain.games.holdem"
# The modules outside the game folders that may import hold'em's folder, each for hold'em-only
# work. No module of the engine: it reads every game's hands through the `Hand` protocol, the
# spec and records of the shared layer, and asks the game (`state.game`) for the rest.
HOLDEM_READERS: dict[str, str] = {
    "hub.domain.games.registry": "it lists the hub's games, HOLDEM among them",
    "hub.domain.phh": "a PHH file is a hold'em hand history: replayed on hold'em's Hand",
    "hub.files.phh": "a PHH file's hand is read and checked on hold'em's Hand",
}


def _in_game_folder(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in GAME_FOLDERS)


def shared_game_layer_problems(graph: Mapping[str, set[str]]) -> list[str]:
    """Imports of a game's folder by the shared layer (the modules directly in games/ but the
    registry), and imports of hold'em's folder by a module outside the game folders that
    `HOLDEM_READERS` does not name (a game's folder may build on hold'em: piecepack, RPS)."""
    problems = []
    for module, deps in sorted(graph.items()):
        shared = module.startswith("hub.domain.games.") and not _in_game_folder(module)
        if shared and module != "hub.domain.games.registry":
            problems += [f"{module} imports {d}" for d in sorted(deps) if _in_game_folder(d)]
        elif not _in_game_folder(module) and module not in HOLDEM_READERS:
            problems += [
                f"{module} imports {d}"
                for d in sorted(deps)
                if d == HOLDEM or d.startswith(HOLDEM + ".")
            ]
    return problems


def test_the_games_shared_layer_imports_no_game() -> None:
    graph = hub_graph()
    assert {"hub.domain.games.base", "hub.domain.games.spec", "hub.domain.games.records"} <= set(
        graph
    )
    assert f"{HOLDEM}.game" in graph and len(GAME_FOLDERS) >= 4
    problems = shared_game_layer_problems(graph)
    assert not problems, "\n".join(problems)
    readers = {
        m
        for m, deps in graph.items()
        if not _in_game_folder(m) and any(d == HOLDEM or d.startswith(HOLDEM + ".") for d in deps)
    }
    assert readers == set(HOLDEM_READERS), "HOLDEM_READERS names a module that no longer needs it"


@pytest.mark.parametrize(
    ("importer", "imported", "refused"),
    [
        ("hub.domain.games.base", "hub.domain.games.holdem.game", True),
        ("hub.domain.games.spec", "hub.domain.games.mahjong.hand", True),
        ("hub.engine.tournament", "hub.domain.games.holdem.hand", True),
        ("hub.engine.console_view", "hub.domain.games.holdem.game", True),
        ("hub.domain.bots", "hub.domain.games.holdem", True),
        ("hub.domain.games.rps.game", "hub.domain.games.holdem.hand", False),  # game to game
        ("hub.domain.phh", "hub.domain.games.holdem.game", False),  # a named reader
    ],
)
def test_the_shared_layer_check_refuses_a_new_import_of_a_game(
    importer: str, imported: str, refused: bool
) -> None:
    graph = hub_graph()
    graph[importer] = {*graph[importer], imported}
    expected = [f"{importer} imports {imported}"] if refused else []
    assert shared_game_layer_problems(graph) == expected


# A game's folder imports no other game's folder (issue #31): what every game shares is the
# shared layer's (`console_event.SHARED_EVENTS`, `base`, `spec`, `records`). The poker variants
# build on hold'em's folder (its `Hand`, betting events and pad), as named here; no other pair.
BUILDS_ON: dict[str, set[str]] = {
    "hub.domain.games.piecepack": {HOLDEM},  # hold'em dealt with 48 tiles (`PokerGame`)
    "hub.domain.games.rps": {HOLDEM},  # `RpsHand` extends hold'em's betting machine
}


def _folder_of(module: str) -> str | None:
    return next((f for f in GAME_FOLDERS if module == f or module.startswith(f + ".")), None)


def game_to_game_problems(graph: Mapping[str, set[str]]) -> list[str]:
    """Imports of one game's folder by another's that `BUILDS_ON` does not name."""
    problems = []
    for module, deps in sorted(graph.items()):
        mine = _folder_of(module)
        if mine is None:
            continue
        for dep in sorted(deps):
            theirs = _folder_of(dep)
            if theirs not in (None, mine) and theirs not in BUILDS_ON.get(mine, set()):
                problems.append(f"{module} imports {dep}")
    return problems


def test_no_game_folder_imports_another_games_folder() -> None:
    graph = hub_graph()
    problems = game_to_game_problems(graph)
    assert not problems, "\n".join(problems)
    used = {
        (_folder_of(m), _folder_of(d))
        for m, deps in graph.items()
        for d in deps
        if _folder_of(m) and _folder_of(d) and _folder_of(m) != _folder_of(d)
    }
    named = {(game, base) for game, bases in BUILDS_ON.items() for base in bases}
    assert used == named, "BUILDS_ON names a folder that no longer builds on another"


@pytest.mark.parametrize(
    ("importer", "imported", "refused"),
    [
        ("hub.domain.games.mahjong.game", "hub.domain.games.holdem.events", True),  # #31
        ("hub.domain.games.holdem.game", "hub.domain.games.piecepack.pieces", True),
        ("hub.domain.games.piecepack.game", "hub.domain.games.rps.events", True),
        ("hub.domain.games.rps.game", "hub.domain.games.holdem.events", False),
        ("hub.domain.games.mahjong.game", "hub.domain.games.mahjong.events", False),
    ],
)
def test_the_game_to_game_check_refuses_a_new_import(
    importer: str, imported: str, refused: bool
) -> None:
    graph = hub_graph()
    graph[importer] = {*graph[importer], imported}
    expected = [f"{importer} imports {imported}"] if refused else []
    assert game_to_game_problems(graph) == expected
