"""The patch module's shortcuts (issue #31: the hottest code of every flush) give what the plain
rules give: a path's escaped members cached (``_tail``), a map's removed members looked for only
when some are, a row's operations encoded only when the fewest bytes they can take does not
decide whether the row whole is shorter (``_shorter_whole``)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.wire import patch
from hub.wire.patch import diff, pointer

_KEY = st.text(alphabet='ab/~é"\\\x01', max_size=4)
_PART = _KEY | st.integers(-3, 300) | st.booleans()
_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet='ab/~é"\\\x01 ', max_size=24)
)


def _escaped(part: str | int) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_PART, max_size=5), min_size=1, max_size=6))
def test_a_pointer_is_its_parts_escaped(paths: list[list[str | int]]) -> None:
    """RFC 6901 escaping of every part, whatever was cached before: ``1``, ``True`` and
    ``"1"`` name three different members (``/1``, ``/True``, ``/1``)."""
    for parts in paths:
        assert pointer(*parts) == "".join("/" + _escaped(p) for p in parts)


def test_the_cache_of_escaped_members_starts_again_when_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(patch, "_TAILS", {})
    monkeypatch.setattr(patch, "_TAILS_MOST", 3)
    names = [f"k{i}/" for i in range(10)]
    assert [pointer(n) for n in names] == [f"/k{i}~1" for i in range(10)]
    assert len(patch._TAILS) <= 3
    assert pointer(1, True, "1") == "/1/True/1" and set(patch._TAILS) <= {*names, "1"}


def _plain(old: dict[str, Any], new: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """The rule for two maps of scalars, spelled out: each member added, changed or removed
    one operation, in ``new``'s order then ``old``'s; two or more replaced by the map whole
    when its JSON is the shorter (never the document itself)."""
    ops: list[dict[str, Any]] = []
    for key, value in new.items():
        if key not in old:
            ops.append({"op": "add", "path": f"{path}/{_escaped(key)}", "value": value})
        elif old[key] is not value and old[key] != value:
            ops.append({"op": "replace", "path": f"{path}/{_escaped(key)}", "value": value})
    ops += [{"op": "remove", "path": f"{path}/{_escaped(k)}"} for k in old if k not in new]
    size = sum(len(msgspec.json.encode(op)) for op in ops)
    if path and len(ops) > 1 and len(msgspec.json.encode(new)) < size:
        return [{"op": "replace", "path": path, "value": new}]
    return ops


_ROW = st.dictionaries(_KEY, _SCALAR, max_size=8)


@settings(max_examples=500, deadline=None)
@given(_ROW, _ROW, st.data())
def test_a_map_of_scalars_diffs_as_the_plain_rule(
    old: dict[str, Any], new: dict[str, Any], data: st.DataObject
) -> None:
    """Any members, values and paths (escapes, non-ASCII, long numbers: the bytes a path or a
    value takes in JSON differ from its characters), the same members kept most of the time
    (a row whose fields moved, as the standings' rows)."""
    if data.draw(st.booleans()):
        new = {k: data.draw(_SCALAR) if data.draw(st.booleans()) else v for k, v in old.items()}
    path = data.draw(st.sampled_from(["", "/rows/3", "/running/seats/12/rows/5", "/é~0x"]))
    assert diff(old, new, path) == _plain(old, new, path)


@settings(max_examples=500, deadline=None)
@given(_ROW, _ROW, st.data())
def test_a_map_that_gains_or_loses_members_at_its_end_diffs_as_the_plain_rule(
    old: dict[str, Any], extra: dict[str, Any], data: st.DataObject
) -> None:
    """A map that is another with members added at its end (a seat row when a hand starts:
    its live fields), or the other way (when it settles), passed over by ``_diff``'s loop
    (``_members_only``): the same operations as the plain rule, the map whole when shorter."""
    grown = {**old, **{k: v for k, v in extra.items() if k not in old}}
    path = data.draw(st.sampled_from(["/rows/3", "/seats/0", "/running/seats/12/rows/5", "/é~0x"]))
    assert diff(old, grown, path) == _plain(old, grown, path)
    assert diff(grown, old, path) == _plain(grown, old, path)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_members_added_or_removed_diff_as_the_loop_would(data: st.DataObject) -> None:
    """With values that are maps and lists too, ``_members_only`` gives what ``_diff``'s own
    loop gives without it."""
    value = st.recursive(_SCALAR, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
    old = data.draw(st.dictionaries(_KEY, value, max_size=6))
    extra = data.draw(st.dictionaries(_KEY, value, max_size=6))
    grown = {**old, **{k: v for k, v in extra.items() if k not in old}}
    path = data.draw(st.sampled_from(["/rows/3", "/seats/0", "/é~0x"]))
    fast = (diff(old, grown, path), diff(grown, old, path))
    fast_path = patch._members_only
    patch._members_only = lambda *a: False  # (a hypothesis test holds no monkeypatch)
    try:
        assert (diff(old, grown, path), diff(grown, old, path)) == fast
    finally:
        patch._members_only = fast_path
