"""Every Redis key and channel name of a tournament, spelled out here and nowhere else."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Channels"]


@dataclass(frozen=True, slots=True)
class Channels:
    """The names of one tournament (docs/protocol.md §1.1, docs/internals.md)."""

    tournament: str

    @property
    def prefix(self) -> str:
        return f"dup:{self.tournament}"

    @property
    def consoles_pattern(self) -> str:
        return f"{self.prefix}:console:*"

    def console(self, table: int) -> str:
        return f"{self.prefix}:console:{table}"

    def web(self, table: int) -> str:
        """A table's web console events, signed (``hub.roles.signed``): the console channel an
        edge may publish on (``console:{table}`` is the Redis consoles' own)."""
        return f"{self.prefix}:web:{table}"

    @property
    def web_prefix(self) -> str:
        return f"{self.prefix}:web:"

    def ack(self, console: str) -> str:
        return f"{self.prefix}:ack:{console}"

    def errors(self, table: int | None) -> str:
        return f"{self.prefix}:errors:{table if table is not None else 0}"

    @property
    def control(self) -> str:
        return f"{self.prefix}:control"

    def reply(self, edge: str) -> str:
        return f"{self.prefix}:reply:{edge}"

    @property
    def feed(self) -> str:
        return f"{self.prefix}:feed"

    @property
    def topics(self) -> str:
        return f"{self.prefix}:topics"

    @property
    def topic_seqs(self) -> str:
        return f"{self.prefix}:topic-seqs"

    @property
    def journal(self) -> str:
        return f"{self.prefix}:journal"

    @property
    def engine(self) -> str:
        return f"{self.prefix}:engine"

    @property
    def seqs(self) -> str:
        return f"{self.prefix}:consoles"

    @property
    def rejected(self) -> str:
        return f"{self.prefix}:rejected"

    @property
    def notes(self) -> str:
        """What the ingest tells a projector in another process besides the journal: the
        refusals the operator desk lists and the consoles' links (neither is journaled)."""
        return f"{self.prefix}:notes"

    @property
    def epoch(self) -> str:
        """The event epoch: made by the ingest's first start on this Redis and database, kept
        across restarts; the consoles key their outboxes to it (a rehearsal's is another)."""
        return f"{self.prefix}:epoch"

    @property
    def tables(self) -> str:
        """The tables the ingest listens for ("1,2,3"), written at each start: the ingest
        subscribes to its own tables' console channels only (a fair share each), so a console
        reads this to learn at once that no hub serves its table."""
        return f"{self.prefix}:tables"

    @property
    def lease(self) -> str:
        return f"{self.prefix}:ingest"

    @property
    def projector_lease(self) -> str:
        return f"{self.prefix}:projector"

    def table_of(self, channel: str) -> int | None:
        """The table of a console channel name (one this hub subscribed to)."""
        tail = channel.rpartition(":")[2]
        return int(tail) if tail.isdigit() and len(tail) < 7 else None

    @property
    def data_keys(self) -> tuple[str, ...]:
        """Every key holding the tournament's data (all but the ingest's lease)."""
        return (
            self.journal,
            self.topics,
            self.topic_seqs,
            self.engine,
            self.seqs,
            self.rejected,
            self.notes,
            self.epoch,
            self.tables,
        )
