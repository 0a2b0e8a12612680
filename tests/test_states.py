"""Named states (hub.domain.states): one definition each, the wire strings unchanged."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import msgpack

from hub.domain.states import (
    AUDIENCES,
    BETTING_STREETS,
    ROLES,
    Audience,
    HandStatus,
    ProcessRole,
    Role,
    Street,
)
from hub.wire.codec import pack, to_json

HUB = Path(__file__).resolve().parents[1] / "hub"

WIRE = {
    Street: ["preflop", "flop", "turn", "river", "showdown", "complete"],
    HandStatus: ["in_progress", "showdown", "complete", "void", "disputed"],
    Audience: ["public", "live", "program"],
    Role: ["public", "commentator", "operator", "console"],
    ProcessRole: ["all", "ingest", "edge", "projector"],
}


def test_members_are_their_wire_strings() -> None:
    """A member equals, hashes and encodes as its string: payloads and the protocol are as
    they were with the strings spelled out."""
    for enum, values in WIRE.items():
        assert [m.value for m in enum] == values
        for member, value in zip(enum, values, strict=True):
            assert member == value and hash(member) == hash(value) and str(member) == value
            assert {value: 1}[member] == 1
            assert to_json({"s": member}) == json.dumps({"s": value}).replace(" ", "").encode()
            assert pack(member) == msgpack.packb(value)
    assert BETTING_STREETS == ("preflop", "flop", "turn", "river")
    assert AUDIENCES == ("public", "live") and ROLES == ("public", "commentator", "operator")


NOT_STATES = {"RESERVED_CONSOLES", "OPERATOR_CONSOLE"}  # the operator desk's console name


def _state_definitions(tree: ast.Module) -> list[tuple[int, str]]:
    """Module-level names bound to a state's string, or to a tuple/list of them."""
    spelled = {v for values in WIRE.values() for v in values}
    found = []
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Name) and t.id in NOT_STATES for t in targets):
            continue
        value = node.value
        items = value.elts if isinstance(value, ast.Tuple | ast.List) else [value]
        strings = [i.value for i in items if isinstance(i, ast.Constant)]
        if items and len(strings) == len(items) and all(s in spelled for s in strings):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_each_state_is_defined_once() -> None:
    """No module but hub/domain/states.py spells a state set or a state constant of its own
    (``STREETS = ("preflop", ...)``, ``IN_PROGRESS = "in_progress"``, ``PUBLIC = "public"``):
    the others name the enum's members."""
    offenders = []
    for path in sorted(HUB.rglob("*.py")):
        if path.name == "states.py":
            continue
        for line, text in _state_definitions(ast.parse(path.read_text())):
            offenders.append(f"{path.relative_to(HUB.parent)}:{line}: {text}")
    assert offenders == []
