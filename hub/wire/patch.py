"""Deltas as JSON Patch (RFC 6902): what changed in a topic payload, not the payload again.

A delta is a list of operations, each ``{"op": "add" | "replace" | "remove", "path": ...}`` with
a JSON Pointer path (RFC 6901); ``add`` at ``/list/-`` appends. Any JSON Patch library applies
them; ``apply_patch`` here is the reference the tests hold the browser client to.

Two ways to produce one: projections that know what moved record it directly (``Recorder``: one
action appends one row), and ``diff`` compares two versions of a payload for the rest. ``diff``
recognises a list that only grew, one with new items in front (a ticker) and one that slid (the
oldest dropped, new ones appended: the operator's latest corrections) and emits just the moved
rows, so even a rebuilt payload costs the client only its change.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

_json_encode = msgspec.json.encode

__all__ = [
    "Op",
    "PatchError",
    "Recorder",
    "TopicChange",
    "apply_patch",
    "clone",
    "diff",
    "pointer",
]

Op = dict[str, Any]


class TopicChange(msgspec.Struct, frozen=True):
    """One topic's change since the last flush: ``patch`` (JSON Patch operations) or, for a
    topic the feed has not had before, ``patch=None`` and the whole ``payload``. ``key`` is a
    ``hub.wire.topics.TopicKey``: (audience, topic name). (A Struct: made in C, one per topic
    changed per flush.)"""

    key: tuple[str, str]
    patch: list[Op] | None
    payload: dict[str, Any]


_MISSING = object()


def clone(value: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, scalars); far cheaper than ``copy.deepcopy``."""
    if type(value) is dict:
        return {k: clone(v) for k, v in value.items()}
    if type(value) is list:
        return [clone(v) for v in value]
    return value


class PatchError(ValueError):
    """A patch that does not fit the document it is applied to."""


def _escape(part: str | int) -> str:
    text = str(part)
    if "~" in text or "/" in text:
        return text.replace("~", "~0").replace("/", "~1")
    return text


_TAILS: dict[str | int, str] = {}
_TAILS_MOST = 1 << 16


def _tail(part: str | int) -> str:
    """``"/" + _escape(part)``, kept for a ``str`` (``_TAILS``): the members of the payloads'
    maps are a fixed vocabulary of field names and ids, and every edit recorded and every
    field diffed names one (~30 an event at 60 tables). Read as ``_TAILS.get(key) or _tail(key)``;
    only ``str`` keys are kept, so ``1``, ``True`` and ``1.0`` (equal, hashed alike, escaped
    apart) are never taken one for another."""
    tail = "/" + _escape(part)
    if type(part) is str:
        if len(_TAILS) >= _TAILS_MOST:  # (a vocabulary beyond any payload's: start again)
            _TAILS.clear()
        _TAILS[part] = tail
    return tail


def pointer(*parts: str | int) -> str:
    """The JSON Pointer of a path given as parts: ``pointer("rows", 2)`` → ``/rows/2``."""
    tails = _TAILS
    return "".join([tails.get(p) or _tail(p) for p in parts])


Path = tuple[str | int, ...]


@functools.lru_cache(maxsize=1 << 18)
def _path(parts: Path) -> str:
    """``pointer`` of a path the projections edit (every action sets the same fields again;
    their number follows the tournament's shape, not its events: ~32,500 at 480 tables,
    where a cache of 16,384 was thrown over and over)."""
    return pointer(*parts)


@functools.lru_cache(maxsize=64)
def _getter(keys: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of a map's ``keys`` (two or more: one key's getter gives the bare value)."""
    assert len(keys) > 1, keys
    return operator.itemgetter(*keys)


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def _split(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"a JSON Pointer starts with '/': {path!r}")
    return [_unescape(p) for p in path[1:].split("/")]


# -- producing ----------------------------------------------------------------------------------


def diff(old: Any, new: Any, path: str = "") -> list[Op]:
    """Operations that turn ``old`` into ``new`` (both JSON-like). Maps are compared key by key,
    a list that only grew becomes ``add``s at ``/-``, a list of the same length is compared item
    by item; anything else that differs is replaced whole."""
    ops: list[Op] = []
    _diff(old, new, path, ops)
    return ops


def _diff(old: Any, new: Any, path: str, ops: list[Op]) -> None:
    if old is new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        if path and len(new) != len(old) and _members_only(old, new, path, ops):
            return
        start, flat, added = len(ops), True, 0
        tails, get = _TAILS, old.get
        for key, value in new.items():
            before = get(key, _MISSING)
            if before is value:
                continue
            if before is _MISSING:
                added += 1
                where = path + (tails.get(key) or _tail(key))
                ops.append({"op": "add", "path": where, "value": value})
            elif before != value:
                where = path + (tails.get(key) or _tail(key))
                kind = type(value)
                if (kind is dict or kind is list) and type(before) is kind:
                    flat = False
                    _diff(before, value, where, ops)
                else:  # (what ``_diff`` would do, without the call)
                    ops.append({"op": "replace", "path": where, "value": value})
        if len(new) - added != len(old):  # (else every key of ``old`` was found in ``new``)
            for key in old:
                if key not in new:
                    where = path + (tails.get(key) or _tail(key))
                    ops.append({"op": "remove", "path": where})
        moved = len(ops) - start
        if flat and path and moved > 1 and _shorter_whole(new, ops, start):
            # A row whose fields changed (a ranking whose rows slid: another team at this
            # place): the row whole is shorter than its fields each with its full path (a
            # release's standings delta was 2-4x the document's own snapshot).
            del ops[start:]
            ops.append({"op": "replace", "path": path, "value": new})
        return
    if isinstance(old, list) and isinstance(new, list):
        n_old, n_new = len(old), len(new)
        if n_new > n_old and old == new[:n_old]:
            where = path + "/-"
            ops.extend([{"op": "add", "path": where, "value": v} for v in new[n_old:]])
            return
        front = _prepended(old, new)
        if front:  # new items at the front, the oldest gone from the end (a ticker)
            kept = n_new - front
            for i in range(n_old - 1, kept - 1, -1):
                ops.append({"op": "remove", "path": f"{path}/{i}"})
            for i in range(front):
                ops.append({"op": "add", "path": f"{path}/{i}", "value": new[i]})
            return
        dropped = _slid(old, new)
        if dropped:  # the oldest gone from the front, new items at the end (a window)
            first, where, kept = path + "/0", path + "/-", n_old - dropped
            ops.extend([{"op": "remove", "path": first} for _ in range(dropped)])
            ops.extend([{"op": "add", "path": where, "value": v} for v in new[kept:]])
            return
        if n_new == n_old and n_old and _containers(new):
            for i, (a, b) in enumerate(zip(old, new, strict=True)):
                if a is not b and a != b:
                    _diff(a, b, f"{path}/{i}", ops)
            return
        if n_new > n_old and _inserted_rows(old, new, path, ops):
            return
    if type(old) is not type(new) or old != new:
        ops.append({"op": "replace", "path": path, "value": new})


def _members_only(old: dict[str, Any], new: dict[str, Any], path: str, ops: list[Op]) -> bool:
    """``_diff`` of two maps (not the root) of which one is the other with members added at
    its end, all else equal (a table's seat row when a hand starts: its live fields added;
    when it settles: removed): the map replaced whole when the fewest bytes the members'
    operations can take already make that shorter (``_shorter_whole``'s bound), else the
    adds (or removes) and ``_shorter_whole``, as the loop of ``_diff`` gives them, without
    the loop (the equal members compared in C). False if it is not that."""
    n_old, n_new = len(old), len(new)
    if n_new > n_old:
        keys = list(new)
        if keys[:n_old] != list(old) or not old.items() <= new.items():
            return False
        kind, moved = "add", keys[n_old:]
    else:
        keys = list(old)
        if keys[:n_new] != list(new) or not new.items() <= old.items():
            return False
        kind, moved = "remove", keys[n_new:]
    moved_key = tuple(moved)
    found = _MOVED.get(moved_key) or _moved_tails(moved_key)
    tails, length = found
    if len(moved) > 1:
        least = len(moved) * (_LEAST[kind] + len(path)) + length
        if len(_json_encode(new)) < least:  # (``_shorter_whole``'s first answer)
            ops.append({"op": "replace", "path": path, "value": new})
            return True
    start = len(ops)
    if kind == "add":
        ops.extend(
            [
                {"op": "add", "path": path + tail, "value": new[key]}
                for key, tail in zip(moved, tails, strict=True)
            ]
        )
    else:
        ops.extend([{"op": "remove", "path": path + tail} for tail in tails])
    if len(moved) > 1 and _shorter_whole(new, ops, start):
        del ops[start:]
        ops.append({"op": "replace", "path": path, "value": new})
    return True


_MOVED: dict[tuple[Any, ...], tuple[list[str], int]] = {}


def _moved_tails(keys: tuple[Any, ...]) -> tuple[list[str], int]:
    """The tails of ``keys`` (``_tail``) and their length in all, kept in ``_MOVED`` when
    every key is a ``str`` (as ``_TAILS``: ``1`` and ``True`` are never taken one for
    another); a few sets of fields (a seat's live ones) are added and removed over and over."""
    tails = [_TAILS.get(k) or _tail(k) for k in keys]
    found = (tails, sum(map(len, tails)))
    if all(type(k) is str for k in keys):
        if len(_MOVED) >= 1024:
            _MOVED.clear()
        _MOVED[keys] = found
    return found


# The fewest JSON bytes of an operation of each kind, its path's aside: its value at least
# one byte (``0``), its path at least one byte a character (escapes and UTF-8 only add).
_LEAST = {
    "add": len(_json_encode({"op": "add", "path": "", "value": 0})),
    "replace": len(_json_encode({"op": "replace", "path": "", "value": 0})),
    "remove": len(_json_encode({"op": "remove", "path": ""})),
}


def _shorter_whole(new: dict[str, Any], ops: list[Op], start: int) -> bool:
    """Whether one ``replace`` of the map ``new`` encodes shorter than its field operations
    ``ops[start:]`` (JSON bytes; each field's op repeats the map's path). The operations are
    encoded only when the fewest bytes they can take (``_LEAST`` and their paths' lengths)
    does not decide it: nearly every row a diff reaches here (3,654 of 3,658 in the 60-table
    bench) is shorter whole by that bound already."""
    whole = len(_json_encode(new))
    least, fewest = 0, _LEAST
    for i in range(start, len(ops)):
        op = ops[i]
        least += fewest[op["op"]] + len(op["path"])
    if whole < least:
        return True
    return whole < sum([len(_json_encode(op)) for op in ops[start:]])


def _inserted_rows(old: list[Any], new: list[Any], path: str, ops: list[Op]) -> bool:
    """Rows of tables (maps with a ``table``) that gained rows anywhere, the others kept in
    their order (a group's deal released: its tables' rows join a traveller in the middle):
    each new row added where it goes, then each kept row diffed, rather than the whole list
    replaced (at 720 tables, 3 MB for one group's six rows). False if it is not that."""
    if not old or type(new[0]) is not dict or "table" not in new[0]:
        return False
    keys = []
    for row in new:
        if type(row) is not dict:
            return False
        keys.append(row.get("table"))
    kept: list[int] = []  # the index in ``new`` of each row of ``old``
    j = 0
    for i, key in enumerate(keys):
        if j < len(old) and type(old[j]) is dict and old[j].get("table") == key:
            kept.append(i)
            j += 1
    if j != len(old) or len(set(keys)) != len(keys):
        return False
    at = set(kept)
    ops.extend(
        {"op": "add", "path": f"{path}/{i}", "value": row}
        for i, row in enumerate(new)
        if i not in at
    )
    for a, i in zip(old, kept, strict=True):
        b = new[i]
        if a is not b and a != b:
            _diff(a, b, f"{path}/{i}", ops)
    return True


def _containers(items: list[Any]) -> bool:
    """Every item a dict or a list (a loop, not ``all`` over ``isinstance(v, dict | list)``:
    that builds a union per item, and this runs for every row of every list diffed)."""
    for v in items:
        kind = type(v)
        if kind is not dict and kind is not list and not isinstance(v, (dict, list)):
            return False
    return True


def _slid(old: list[Any], new: list[Any], most: int = 64) -> int:
    """How many items ``new`` dropped from the front of ``old`` to then continue it (a window
    of the latest items, as the operator's corrections); 0 if it is not that."""
    if not old or not new or new[0] == old[0]:
        return 0
    first = new[0]
    for dropped in range(1, min(len(old), most + 1)):
        if old[dropped] == first:
            kept = len(old) - dropped
            if kept <= len(new) and old[dropped:] == new[:kept]:
                return dropped
    return 0


def _prepended(old: list[Any], new: list[Any], most: int = 64) -> int:
    """How many items ``new`` has in front of (a prefix of) ``old``; 0 if it is not that."""
    if not old or not new or new[0] == old[0]:
        return 0
    first = old[0]
    for front in range(1, min(len(new), most + 1)):
        if new[front] == first if front < len(new) else False:
            kept = len(new) - front
            if kept <= len(old) and new[front:] == old[:kept]:
                return front
    return 0


def _update(node: dict[str, Any], parts: Path, fields: dict[str, Any], ops: list[Op]) -> None:
    """``Recorder.update``'s edit of the map ``node`` at ``parts``: each field that changed set
    and recorded. (The hot path of every mover, ~26 calls an action: a field is read by
    subscript, a missing one is the exception, as it is in a document once built.)"""
    at, tails = None, _TAILS  # (the map's path: looked up once, when a field moved)
    for key, value in fields.items():
        try:
            before = node[key]
        except KeyError:
            kind = "add"
        else:
            if before is value or before == value:
                continue
            kind = "replace"
        node[key] = value
        if at is None:
            at = _path(parts)
        ops.append({"op": kind, "path": at + (tails.get(key) or _tail(key)), "value": value})


def _update_values(
    node: dict[str, Any],
    parts: Path,
    keys: tuple[str, ...],
    get: Callable[[Any], tuple[Any, ...]],
    values: tuple[Any, ...],
    ops: list[Op],
) -> None:
    """``_update`` of ``node`` with ``keys``' ``values``: passed over when the tuples compare
    equal (item by item, ``before is value or before == value``, as ``_update``'s), else each
    field that changed replaced (no map of the fields built)."""
    try:
        old = get(node)
    except KeyError:  # (a field the map lacks: added)
        _update(node, parts, dict(zip(keys, values, strict=True)), ops)
        return
    if old == values:
        return
    at, tails = _path(parts), _TAILS
    for key, before, value in zip(keys, old, values, strict=True):
        if before is value or before == value:
            continue
        node[key] = value
        ops.append({"op": "replace", "path": at + (tails.get(key) or _tail(key)), "value": value})


class Recorder:
    """Edits a payload in place and records each edit as a patch operation.

    Operations share their values with the payload (no copies on the hot path), so they hold
    only until the payload is next edited: take them (``ops``), encode them, then edit again.
    The engine's projections do exactly that: every edit happens inside one ``flush``, whose
    operations the feed encodes before anything can edit the payload again. Within a flush a
    value, once recorded, is never changed (rows of actions are final)."""

    __slots__ = ("doc", "ops")

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.ops: list[Op] = []

    def _parent(self, parts: Path) -> Any:
        node: Any = self.doc
        for part in parts[:-1]:
            node = node[part]
        return node

    def set(self, parts: Path, value: Any) -> None:
        """Set a value; recorded only if it changed."""
        parent = self._parent(parts)
        key = parts[-1]
        if type(parent) is dict:
            before = parent.get(key, _MISSING)
            if before is value or (before is not _MISSING and before == value):
                return
            op = "add" if before is _MISSING else "replace"
        else:
            if parent[key] == value:
                return
            op = "replace"
        parent[key] = value
        self.ops.append({"op": op, "path": _path(parts), "value": value})

    def update(self, parts: Path, fields: dict[str, Any]) -> None:
        """``set`` each of ``fields`` in the map at ``parts``."""
        node: Any = self.doc
        for part in parts:
            node = node[part]
        _update(node, parts, fields, self.ops)

    def update_in(self, node: dict[str, Any], parts: Path, fields: dict[str, Any]) -> None:
        """``update`` of ``node``, the map at ``parts`` that its caller holds (not looked up
        again: a ranking's rows, each set where it stands)."""
        _update(node, parts, fields, self.ops)

    def update_values(self, parts: Path, keys: tuple[str, ...], values: tuple[Any, ...]) -> None:
        """``update`` with the fields ``keys`` (two or more) given as ``values``, in their order:
        when each equals the map's (one compare of tuples, which is ``before is value or
        before == value`` item by item, as ``update``'s), nothing is built nor recorded."""
        node: Any = self.doc
        for part in parts:
            node = node[part]
        _update_values(node, parts, keys, _getter(keys), values, self.ops)

    def update_rows(
        self, parts: Path, keys: tuple[str, ...], rows: Sequence[tuple[Any, ...]]
    ) -> None:
        """``update_values`` of each map of the list at ``parts`` with its ``rows`` item (a
        table's seats after an action: most did not move, and are passed over whole)."""
        node: Any = self.doc
        for part in parts:
            node = node[part]
        get, ops = _getter(keys), self.ops
        for i, values in enumerate(rows):
            item = node[i]
            try:  # (a row that did not move: passed over here, no call, no path made)
                if get(item) == values:
                    continue
            except KeyError:
                pass
            _update_values(item, (*parts, i), keys, get, values, ops)

    def update_each(self, parts: Path, rows: Sequence[dict[str, Any]]) -> None:
        """``update`` each map of the list at ``parts`` with its ``rows`` item (a table's
        seats after an action: one call, not one per seat)."""
        node: Any = self.doc
        for part in parts:
            node = node[part]
        ops = self.ops
        for i, fields in enumerate(rows):
            _update(node[i], (*parts, i), fields, ops)

    def append(self, parts: Path, value: Any) -> None:
        node: Any = self.doc
        for part in parts:
            node = node[part]
        node.append(value)
        self.ops.append({"op": "add", "path": _path(parts) + "/-", "value": value})

    def extend(self, parts: Path, values: Sequence[Any]) -> None:
        """Append each of ``values`` (one operation each)."""
        node: Any = self.doc
        for part in parts:
            node = node[part]
        node.extend(values)
        where = _path(parts) + "/-"
        self.ops.extend([{"op": "add", "path": where, "value": v} for v in values])

    def insert(self, parts: Path, value: Any) -> None:
        """Insert ``value`` into a list at index ``parts[-1]`` (the items after it move up)."""
        self._parent(parts).insert(parts[-1], value)
        self.ops.append({"op": "add", "path": _path(parts), "value": value})

    def pop(self, parts: Path) -> None:
        """Remove the item at index ``parts[-1]`` of a list (the items after it move down)."""
        del self._parent(parts)[parts[-1]]
        self.ops.append({"op": "remove", "path": _path(parts)})

    def remove(self, parts: Path) -> None:
        """Remove a member of a map, if it is there."""
        parent = self._parent(parts)
        if parts[-1] in parent:
            del parent[parts[-1]]
            self.ops.append({"op": "remove", "path": _path(parts)})

    def replace_at(self, parts: Path, new: Any) -> None:
        """A rebuilt part of the payload: record its difference and adopt it."""
        parent = self._parent(parts)
        self.ops.extend(diff(parent[parts[-1]], new, _path(parts)))
        parent[parts[-1]] = new

    def replace_with(self, new: dict[str, Any]) -> None:
        """A rebuilt payload: record its difference and adopt it. ``new`` may be the doc
        itself (a memoized payload rebuilt with nothing changed): nothing to do."""
        if new is self.doc:
            return
        self.ops.extend(diff(self.doc, new))
        self.doc.clear()
        self.doc.update(new)


# -- applying -----------------------------------------------------------------------------------


def _child(node: Any, part: str) -> Any:
    if isinstance(node, dict):
        if part not in node:
            raise PatchError(f"no member {part!r}")
        return node[part]
    if isinstance(node, list):
        return node[_index(node, part, extend=False)]
    raise PatchError(f"cannot descend into {type(node).__name__} at {part!r}")


def _index(node: list[Any], part: str, *, extend: bool) -> int:
    if part == "-" and extend:
        return len(node)
    if not part.isdigit() or (len(part) > 1 and part[0] == "0"):
        raise PatchError(f"bad array index {part!r}")
    i = int(part)
    if i > len(node) or (i == len(node) and not extend):
        raise PatchError(f"array index {i} out of range")
    return i


def apply_patch(doc: Any, ops: Sequence[Op], *, in_place: bool = False) -> Any:
    """Apply ``add``/``replace``/``remove`` operations; returns the new document. Raises
    ``PatchError`` for an operation that does not fit (the document is then unusable when
    ``in_place``; resubscribe for a snapshot)."""
    if not in_place:
        doc = clone(doc)
    for op in ops:
        kind, parts = op.get("op"), _split(str(op.get("path", "")))
        if not parts:
            if kind == "remove":
                raise PatchError("cannot remove the whole document")
            doc = op["value"] if in_place else clone(op["value"])
            continue
        parent: Any = doc
        for part in parts[:-1]:
            parent = _child(parent, part)
        last = parts[-1]
        if kind == "add":
            if isinstance(parent, list):
                parent.insert(_index(parent, last, extend=True), op["value"])
            elif isinstance(parent, dict):
                parent[last] = op["value"]
            else:
                raise PatchError(f"cannot add into {type(parent).__name__}")
        elif kind == "replace":
            if isinstance(parent, list):
                parent[_index(parent, last, extend=False)] = op["value"]
            elif isinstance(parent, dict) and last in parent:
                parent[last] = op["value"]
            else:
                raise PatchError(f"nothing to replace at {op.get('path')!r}")
        elif kind == "remove":
            if isinstance(parent, list):
                del parent[_index(parent, last, extend=False)]
            elif isinstance(parent, dict) and last in parent:
                del parent[last]
            else:
                raise PatchError(f"nothing to remove at {op.get('path')!r}")
        else:
            raise PatchError(f"unsupported operation {kind!r}")
    return doc
