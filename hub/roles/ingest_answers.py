"""The ingest's answer step: what a journaled batch tells the consoles, and what it persists
first so a restarted hub tells a resend the same.

Every event gets an answer: on ``dup:{t}:ack:{console}``, or, when nothing in it names a
console, on ``dup:{t}:errors:{table}``; an operator command from an edge on the reply channel
it named. A refused event that used up its console's seq has its answer persisted
(``dup:{t}:rejected``, the latest ``MAX_REFUSALS`` per console) with the consoles' seq
high-water marks (``dup:{t}:consoles``) before any answer goes out.

``Answering.take`` is the answer stage of the ingest's pipeline: a journaled batch from the
journal stage, answered whole, then handed on with whether each answered console listens
(``Batch.links``, the ops topic's ``connected``) to this ingest's feed writer, which hands the
links to the engine's feed part with the batch's changes and publishes when it is due
(``hub.roles.publisher.FeedPublisher.take``). When a projector elsewhere publishes the feed,
the links go to this engine's desk (what the notes are told against) and, with the batch's
refusals, as notes (``hub.roles.notes``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from hub.bus.base import Bus, LeaseLost, Message
from hub.bus.protocols import Hashes, PubSubHashes
from hub.engine.core import Engine, Outcome
from hub.metrics import Metrics
from hub.roles.notes import MAXLEN as NOTES_MAXLEN
from hub.roles.notes import link_notes
from hub.roles.publisher import FeedPublisher, Waiting
from hub.wire import codec
from hub.wire.channels import Channels
from hub.wire.control_request import ControlRequest

__all__ = ["MAX_REFUSALS", "Answering", "Batch", "BatchAnswers", "Waiting"]

MAX_REFUSALS = 1000  # refusals whose answer is kept per console (older ones: "refused")
NAME_CACHE = 4096  # console names whose ack channel is remembered

log = logging.getLogger("duplicast.ingest")


class BatchAnswers:
    """What one batch answers and persists, gathered as it is decided and answered."""

    __slots__ = ("answered", "duplicates", "forget", "messages", "refusals", "replies", "seqs")

    def __init__(self) -> None:
        self.messages: list[tuple[str, bytes]] = []  # (channel, data) of each answer
        self.answered: list[str | None] = []  # the console each answers (None: error channel)
        self.replies: list[tuple[str, bytes]] = []  # to operator commands from an edge
        self.seqs: dict[str, bytes] = {}  # console -> its seq high-water mark, to persist
        self.refusals: dict[str, bytes] = {}  # "seq:console" -> the answer, to persist
        self.forget: dict[str, list[int]] = {}  # console -> seqs whose answers to drop
        self.duplicates = 0

    def add(self, channel: str, data: bytes, console: str | None) -> None:
        self.messages.append((channel, data))
        self.answered.append(console)

    def outgoing(self) -> list[tuple[str, bytes]]:
        """Every message to publish, the answers first."""
        return self.messages + self.replies if self.replies else self.messages

    def links(self, receivers: Sequence[int]) -> dict[str, bool]:
        """Whether each answered console is listening: it had a receiver for its answer."""
        return {
            console: n > 0
            for console, n in zip(self.answered, receivers, strict=False)
            if console is not None
        }


class Batch:
    """A decided batch, handed from stage to stage: its messages (their ``arrived`` give the
    lag), every decided (outcome, request, channel), the outcomes to journal (accepted, or
    refused using up a seq), the refusals as notes for a projector elsewhere, its answers as
    they are gathered, whether each answered console listened (``links``, once answered), and
    its source (None: a caller that publishes the feed itself)."""

    __slots__ = ("accepted", "decided", "links", "messages", "notes", "out", "source")

    def __init__(self, messages: Sequence[Message], source: Waiting | None) -> None:
        self.messages = messages
        self.source = source
        self.decided: list[tuple[Outcome, Any, str]] = []
        self.accepted: list[Outcome] = []
        self.notes: list[bytes] = []
        self.out = BatchAnswers()
        self.links: dict[str, bool] = {}


class Answering:
    """Turns a batch's decided outcomes into answers (module docstring); keeps which refusal
    answers are persisted, per console."""

    def __init__(
        self,
        names: Channels,
        metrics: Metrics,
        *,
        bus: Bus | None = None,
        engine: Engine | None = None,
        feed: FeedPublisher | None = None,
        refused: dict[str, int] | None = None,
    ) -> None:
        self.names = names
        self.metrics = metrics
        self.bus = bus  # where the answers go (the stage's)
        self.engine = engine  # without a feed: its desk is told whether each console listens
        self.feed = feed  # the next stage (None: a projector elsewhere, told by notes)
        self.refused = refused if refused is not None else {}  # the decider's, by code
        self._refusals: dict[str, list[int]] = {}  # console -> seqs whose answer is persisted
        self._ack_channels: dict[str, str] = {}  # console -> its ack channel

    def restore(self, rejected: Mapping[str, bytes]) -> dict[tuple[str, int], dict[str, Any]]:
        """The persisted refusal answers (``dup:{t}:rejected``) by (console, seq), remembered."""
        refusals: dict[tuple[str, int], dict[str, Any]] = {}
        for name, packed in rejected.items():
            seq_text, _, console = name.partition(":")
            answer = codec.unpack(packed)
            if seq_text.isdigit() and isinstance(answer, dict):
                refusals[(console, int(seq_text))] = answer
                self._refusals.setdefault(console, []).append(int(seq_text))
        for seqs in self._refusals.values():
            seqs.sort()
        return refusals

    async def take(self, batch: Batch) -> None:
        """The answer stage: the batch answered (``send``), its lag measured; then the batch,
        with its links, to the feed writer (``FeedPublisher.take``), which publishes when
        nothing waits where it came from, else at most every ``FEED_INTERVAL`` (a batch with
        no source: its caller publishes the feed). Without a feed writer here, the links and
        the refusals as notes (``note``)."""
        assert self.bus is not None, "the answer stage has its bus"
        links = await self.send(self.bus, batch.decided, batch.accepted, self.refused, batch.out)
        done = time.monotonic()
        lags = [done - m.arrived if done > m.arrived else 0.0 for m in batch.messages]
        self.metrics.ingest_lag(*lags)
        if self.feed is None:
            await self.note(self.bus, links, batch.notes)
            return
        batch.links = links
        await self.feed.take(batch)

    async def note(self, bus: Bus, links: dict[str, bool], notes: list[bytes]) -> None:
        """When a projector elsewhere publishes the feed: whether each answered console
        listens, to this engine's desk (what the next batch's notes are told against) and,
        with the batch's refusals, as notes on ``dup:{t}:notes`` (not fenced, not retried:
        they only inform the operator desk)."""
        if links and self.engine is not None:
            desk = self.engine.desk.links
            notes.extend(link_notes({c: up for c, up in links.items() if desk.get(c) != up}))
            self.engine.projecting.links(links)
        if notes:
            try:
                await bus.append_many(self.names.notes, notes, maxlen=NOTES_MAXLEN)
            except (asyncio.CancelledError, LeaseLost):
                raise
            except Exception as exc:  # the batch is journaled and answered already
                log.warning("%d note(s) for the projector lost (%s)", len(notes), exc)

    async def send(
        self,
        bus: PubSubHashes,
        decided: Sequence[tuple[Outcome, Any, str]],
        accepted: list[Outcome],
        refused: dict[str, int],
        out: BatchAnswers,
    ) -> dict[str, bool]:
        """A journaled batch's answer step, whole: each outcome answered (``answer``),
        counted (``count``), the refusals persisted (``persist``), then every answer
        published; whether each answered console listens (``BatchAnswers.links``)."""
        self.answer(decided, out)
        self.count(accepted, refused, out)
        await self.persist(bus, out)
        return out.links(await bus.publish_many(out.outgoing()))

    def answer(self, decided: Sequence[tuple[Outcome, Any, str]], out: BatchAnswers) -> None:
        """Each decided outcome's answer, in order; refusals to persist; rejections counted."""
        pack = codec.pack_plain
        ack_channel = self.ack_channel
        metrics = self.metrics
        for outcome, raw, channel in decided:
            if isinstance(raw, ControlRequest):  # operator commands from an edge: answered there
                reply = raw.answer(self.names, outcome.ack)
                if reply is not None:
                    out.replies.append(reply)
                continue
            console = outcome.console
            if not outcome.ok or outcome.record is None:  # (accepted ones: counted by the caller)
                if outcome.duplicate:
                    out.duplicates += 1
                else:
                    metrics.event("rejected")
                    metrics.reject(outcome.code or "unknown")
                    if outcome.seq_advanced and console is not None:
                        out.seqs[console] = str(outcome.last_seq).encode()
                        seq = int(outcome.ack["seq"])
                        out.refusals[f"{seq}:{console}"] = pack(outcome.ack)
                        forget = self.keep_refusal(console, seq)
                        out.forget.setdefault(console, []).extend(forget)
            if console is not None:
                out.add(ack_channel(console), pack(outcome.ack), console)
            elif not outcome.ok:  # nothing names a console: answer on the table's error channel
                errors = self.names.errors(self.names.table_of(channel))
                out.add(errors, pack(outcome.ack), None)

    def count(self, accepted: list[Outcome], refused: dict[str, int], out: BatchAnswers) -> None:
        """A batch's accepted, undecodable (``refused``, by code: cleared) and duplicate
        events, counted once per batch (a labelled counter costs ~2 µs a call; cheap under a
        flood). Other refusals are counted as they are answered."""
        accepted_count = sum(1 for outcome in accepted if outcome.ok)
        if accepted_count:
            self.metrics.event("accepted", accepted_count)
        if refused:
            for code, n in refused.items():
                self.metrics.event("rejected", n)
                self.metrics.reject(code, n)
            refused.clear()
        if out.duplicates:
            self.metrics.event("duplicate", out.duplicates)

    async def persist(self, hashes: Hashes, out: BatchAnswers) -> None:
        """A refused event's answer and seq are persisted before the answer goes out: a
        restarted hub expects the next seq and repeats the refusal to a resend. Only the
        latest MAX_REFUSALS answers per console are kept (a resend is of a recent seq)."""
        if out.refusals:
            await hashes.hset_many(self.names.rejected, out.refusals)
        old = [f"{seq}:{console}" for console, seqs in out.forget.items() for seq in seqs]
        if old:
            await hashes.hdel(self.names.rejected, old)
        if out.seqs:
            await hashes.hset_many(self.names.seqs, out.seqs)

    def ack_channel(self, console: str) -> str:
        """``Channels.ack(console)``, remembered (it is asked for once per event)."""
        channel = self._ack_channels.get(console)
        if channel is None:
            if len(self._ack_channels) >= NAME_CACHE:  # names from the wire: keep it bounded
                self._ack_channels.clear()
            channel = self._ack_channels[console] = self.names.ack(console)
        return channel

    def keep_refusal(self, console: str, seq: int) -> list[int]:
        """Remember that ``seq``'s answer is persisted; the seqs whose answers to drop."""
        kept = self._refusals.setdefault(console, [])
        kept.append(seq)
        if len(kept) <= MAX_REFUSALS:
            return []
        dropped = kept[:-MAX_REFUSALS]
        del kept[:-MAX_REFUSALS]
        return dropped
