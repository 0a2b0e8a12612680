"""msgpack and JSON encoding, bytes in, bytes out, kept apart from any transport.

Input from the wire is untrusted: ``unpack`` and ``from_json`` turn every kind of malformed
input (truncated, trailing bytes, bad UTF-8, absurd nesting, oversized) into one ``CodecError``
so callers need a single ``except``. Encoding is on the fan-out hot path (once per update per
format), so it reuses one msgpack ``Packer`` and one ``JSONEncoder`` per thread.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import msgpack
import msgspec

__all__ = [
    "MAX_EVENT_BYTES",
    "MAX_MESSAGE_BYTES",
    "CodecError",
    "TooLarge",
    "from_json",
    "from_json_strict",
    "pack",
    "pack_plain",
    "to_json",
    "unpack",
    "unpack_event",
    "unpack_map",
    "unpack_strict",
]

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""Largest message either decoder accepts; far above any event or snapshot we produce."""
MAX_EVENT_BYTES = 64 * 1024
"""Largest console event the ingest decodes (a legitimate one is under 1 KB): a 300-KB map
from a flooding console is refused by its length, before any decoding."""
MAX_EVENT_ITEMS = 1024
"""Most entries in any one map or array of an event (msgpack's own limit is the input size)."""


class CodecError(ValueError):
    """Data that cannot be encoded, or bytes that are not a well-formed message."""


class TooLarge(CodecError):
    """A message longer than the decoder's limit: refused without being decoded."""


class _Codecs(threading.local):
    """Reusable encoders, one set per thread (a ``Packer`` keeps internal state)."""

    def __init__(self) -> None:
        self.packer = msgpack.Packer(use_bin_type=True, datetime=False)
        self.json = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


_codecs = _Codecs()


def _reject_ext(code: int, data: bytes) -> Any:
    raise CodecError(f"msgpack extension type {code} is not part of the protocol")


def pack(obj: Any) -> bytes:
    """msgpack-encode ``obj`` (str as str, bytes as bin)."""
    try:
        return _codecs.packer.pack(obj)  # type: ignore[no-any-return]
    except (TypeError, ValueError, OverflowError) as exc:
        raise CodecError(f"cannot encode as msgpack: {exc}") from exc


_plain = msgspec.msgpack.Encoder().encode  # thread-safe: no state between calls


def pack_plain(obj: Any) -> bytes:
    """``pack`` for the hot path's plain data (maps, lists, str, int, float, bool, None,
    bytes: frames, feed envelopes, acks, journal records), about 3x fewer instructions:
    msgspec's encoder, whose bytes for these are ``pack``'s, byte for byte (both use the
    smallest msgpack form of each value, str as str and bytes as bin:
    tests/test_codec.py). Whatever it refuses (a str or int subclass, an int beyond 64 bits,
    anything unknown) goes to ``pack``, which encodes it or raises as ever."""
    try:
        return _plain(obj)
    except Exception:
        return pack(obj)


_BINARY = (bytes, bytearray, memoryview)  # a tuple: ``bytes | bytearray | ...`` is built per call


def unpack(data: bytes | bytearray | memoryview) -> Any:
    """Decode exactly one msgpack object; anything else raises ``CodecError``."""
    return _unpack(data, MAX_MESSAGE_BYTES, {})


def unpack_map(data: bytes | bytearray | memoryview) -> dict[str, Any] | None:
    """One msgpack map (an answer on a bus channel), or None for anything else."""
    try:
        found = unpack(data)
    except CodecError:
        return None
    return found if isinstance(found, dict) else None


_EVENT_LIMITS = {"max_array_len": MAX_EVENT_ITEMS, "max_map_len": MAX_EVENT_ITEMS}


def unpack_event(data: bytes | bytearray | memoryview) -> Any:
    """Unpack one console event, bounded: ``TooLarge`` past ``MAX_EVENT_BYTES`` (checked on
    the length, before decoding), ``CodecError`` for anything malformed or with a map or array
    of more than ``MAX_EVENT_ITEMS`` entries. The ingest first tries the event's msgspec
    class on a small map (``hub.roles.ingest_decide.read_event``)."""
    return _unpack(data, MAX_EVENT_BYTES, _EVENT_LIMITS)


def _unpack(data: bytes | bytearray | memoryview, max_bytes: int, limits: dict[str, Any]) -> Any:
    if not isinstance(data, _BINARY):
        raise CodecError(f"msgpack input must be bytes, not {type(data).__name__}")
    if len(data) > max_bytes:
        raise TooLarge(f"message of {len(data)} bytes exceeds {max_bytes}")
    try:
        # The C unpacker bounds nesting itself (StackError) and limits every str/bin/array/map
        # length to the input size, so hostile length prefixes cannot allocate much.
        return msgpack.unpackb(
            data, raw=False, strict_map_key=False, use_list=True, ext_hook=_reject_ext, **limits
        )
    except CodecError:
        raise
    except msgpack.ExtraData as exc:
        raise CodecError("trailing bytes after the msgpack object") from exc
    except Exception as exc:  # ValueError, TypeError (unhashable key), RecursionError, ...
        raise CodecError(f"malformed msgpack: {type(exc).__name__}: {exc}") from exc


def to_json(obj: Any) -> bytes:
    """Compact UTF-8 JSON; NaN and infinities are refused (browsers cannot parse them)."""
    try:
        return _codecs.json.encode(obj).encode()
    except (TypeError, ValueError, RecursionError) as exc:
        raise CodecError(f"cannot encode as JSON: {exc}") from exc


def _reject_constant(name: str) -> Any:
    raise CodecError(f"JSON constant {name} is not allowed")


def from_json(data: bytes | bytearray | str) -> Any:
    """Decode one JSON document (UTF-8 bytes or str); anything else raises ``CodecError``."""
    return _from_json(data, MAX_MESSAGE_BYTES, None)


def _from_json(data: bytes | bytearray | str, max_bytes: int, pairs: Any) -> Any:
    if not isinstance(data, bytes | bytearray | str):
        raise CodecError(f"JSON input must be bytes or str, not {type(data).__name__}")
    if len(data) > max_bytes:
        raise TooLarge(f"message of {len(data)} bytes exceeds {max_bytes}")
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=pairs)
    except CodecError:
        raise
    except Exception as exc:  # JSONDecodeError, UnicodeDecodeError, RecursionError, ...
        raise CodecError(f"malformed JSON: {type(exc).__name__}: {exc}") from exc


def _unique_keys(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """An object whose keys are each given once: ``{"chips": 5, "chips": 10**15}`` is refused
    (plain decoders keep the last, so what a proxy or a log shows differs from what counts)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[Any] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise CodecError(f"the key {twice!r} is given twice in one object")
    return out


def from_json_strict(data: bytes | bytearray | str, max_bytes: int = MAX_MESSAGE_BYTES) -> Any:
    """`from_json` for what a client sends to act (operator commands, REST bodies): at most
    ``max_bytes``, and no object with a key given twice."""
    return _from_json(data, max_bytes, _unique_keys)


def unpack_strict(data: bytes | bytearray | memoryview) -> Any:
    """`unpack`, refusing a map with a key given twice (as `from_json_strict`)."""
    return _unpack(data, MAX_MESSAGE_BYTES, {"object_pairs_hook": _unique_keys})
