"""The engine's snapshot on the bus: what a restart of the ingest, or a projector, starts from
instead of the whole journal.

The ingest writes it (every ``ENGINE_SNAPSHOT_EVERY`` records, and on a clean stop) with the
journal position it stands at; both the ingest and the projector restore from it and replay the
journal after that position. A snapshot that cannot be used (another version's, damaged) is
not fatal: the journal alone says everything, it just takes longer.
"""

from __future__ import annotations

from hub.bus.protocols import Hashes
from hub.engine.core import Engine
from hub.wire import codec
from hub.wire.channels import Channels

__all__ = ["FIELD", "UnusableSnapshot", "pack_snapshot", "restore_snapshot"]

FIELD = "snapshot"  # the field of the ``dup:{t}:engine`` hash that holds it


class UnusableSnapshot(ValueError):
    """The stored snapshot could not be restored: replay the whole journal instead."""


def pack_snapshot(position: str, engine: Engine) -> bytes:
    """The engine's snapshot, standing at journal ``position``, as stored."""
    return codec.pack({"position": position, "engine": engine.snapshot()})


async def restore_snapshot(hashes: Hashes, names: Channels, engine: Engine) -> str | None:
    """Restore ``engine`` from its stored snapshot; the journal position to replay after, or
    None when there is none. Raises ``UnusableSnapshot`` when there is one it cannot take."""
    found = (await hashes.hgetall(names.engine)).get(FIELD)
    if found is None:
        return None
    try:
        saved = codec.unpack(found)
        engine.restore_snapshot(saved["engine"])
        return str(saved["position"])
    except (codec.CodecError, ValueError, KeyError, TypeError) as exc:
        raise UnusableSnapshot(str(exc)) from exc
