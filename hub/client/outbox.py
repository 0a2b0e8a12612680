"""A console's outbox on disk: events sent but not yet acknowledged survive a console crash.

One SQLite file per console (stdlib ``sqlite3``, WAL, ``synchronous=FULL``): an event is
written, and committed, before it is first published, and deleted when the hub answers it. A
console restarted on the same file resends what was never answered, in order, with its original
seqs and bytes, and numbers new events after the highest seq it ever used (kept even once every
event is answered, so a seq is never reused). The file records which tournament, table and
console it belongs to and refuses to serve another.

It also records the event epoch of the hub it talks to (``dup:{t}:epoch``, made by the hub's
first start on its Redis). Opened for a hub of another epoch (the outbox of a rehearsal on
another Redis or database, the real event's hub now), it is set aside, renamed
``<file>.epoch-<old epoch>``, and a new one started: its pending events and seqs belong to the
other hub (sent here they would be applied to the wrong event, or its seqs would make this hub
answer every new event as a duplicate).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = ["Outbox", "OutboxError", "default_outbox_template"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class OutboxError(Exception):
    """The outbox file cannot be used (another console's, or not an outbox)."""


def default_outbox_template() -> str:
    """``$XDG_STATE_HOME/duplicast/outbox-{tournament}-{console}.sqlite`` (``~/.local/state``
    when unset): survives a reboot, one file per console; the braces are filled in per console.
    """
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(state, "duplicast", "outbox-{tournament}-{console}.sqlite")


class Outbox:
    """The unacknowledged events of one console, durable across crashes."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        tournament: str,
        table: int,
        console: str,
        epoch: str | None = None,
    ):
        """``epoch``: the event epoch of the hub the console talks to; ``""``: that Redis has
        none (no hub started there yet: not the hub of an outbox that has one); None: not
        checked (reading a file). The outbox keeps the first epoch it is opened with."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.set_aside: Path | None = None  # another hub's outbox found there, moved here
        stored = self._open(tournament, table, console)
        held = stored.get("epoch")
        if epoch is not None and held is not None and held != epoch:
            self._db.close()
            self.set_aside = self.path.with_name(f"{self.path.name}.epoch-{held}")
            self.path.rename(self.set_aside)
            for suffix in ("-wal", "-shm"):  # (closed: checkpointed; left over if not)
                self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
            stored = self._open(tournament, table, console)
        if epoch and stored.get("epoch") is None:
            self.bind(epoch)

    @property
    def epoch(self) -> str | None:
        """The epoch of the hub this outbox belongs to (None: not bound yet)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
        return None if row is None else str(row[0])

    def bind(self, epoch: str) -> None:
        """Record the hub's epoch, once: an outbox opened before any hub had started is bound
        to the first one that answers it (``hub.client.console``)."""
        with self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('epoch', ?)", (epoch,)
            )

    def _open(self, tournament: str, table: int, console: str) -> dict[str, str]:
        """Open (or create) the file for this console; what its ``meta`` table holds."""
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)  # explicit transactions
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            identity = {"tournament": tournament, "table": str(table), "console": console}
            stored = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise OutboxError(f"{self.path}: not a console outbox ({exc})") from None
        for key, value in identity.items():
            if key in stored and stored[key] != value:
                self._db.close()
                raise OutboxError(
                    f"{self.path}: the outbox of {stored.get('console')!r} at table "
                    f"{stored.get('table')} of {stored.get('tournament')!r}, not of {console!r} "
                    f"at table {table} of {tournament!r}"
                )
        with self._db:
            self._db.executemany(
                "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", identity.items()
            )
        return stored

    def next_seq(self) -> int:
        """One more than the highest seq this console ever stored (1 for a new outbox)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'next_seq'").fetchone()
        return int(row[0]) if row else 1

    def pending(self) -> list[tuple[int, bytes]]:
        """Unacknowledged events, oldest (lowest seq) first."""
        rows = self._db.execute("SELECT seq, data FROM pending ORDER BY seq").fetchall()
        return [(int(seq), bytes(data)) for seq, data in rows]

    def add(self, seq: int, data: bytes) -> None:
        """Keep an event before its first send (committed, fsynced, when this returns)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT OR REPLACE INTO pending (seq, data) VALUES (?, ?)", (seq, data)
            )
            self._db.execute(
                "INSERT INTO meta (key, value) VALUES ('next_seq', ?) ON CONFLICT(key) DO "
                "UPDATE SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
                (str(seq + 1),),
            )

    def remove(self, seq: int) -> None:
        """The hub answered ``seq``: forget it."""
        self._db.execute("DELETE FROM pending WHERE seq = ?", (seq,))

    def close(self) -> None:
        self._db.close()
