"""The console client against a fake hub on the memory bus that loses, gaps and rejects."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hub.bus.memory import MemoryBus
from hub.client.acks import Ack
from hub.client.console import ConsoleClient, ack_channel, console_channel
from hub.client.logreplay import replay_log
from hub.wire.codec import pack, unpack

T = "ifp"


class FakeHub:
    """A hub reduced to its sequencer: applies each (console, seq) once, in order, and acks.

    ``lose_events``: seqs whose first transmission vanishes (the hub then answers seq_gap to
    the next ones); ``lose_acks``: seqs whose first ack vanishes; ``reject``: seq -> (code,
    sentence), answered with ok false (the seq is consumed, as the real sequencer does).
    """

    def __init__(
        self,
        bus: MemoryBus,
        *,
        lose_events: set[int] = frozenset(),  # type: ignore[assignment]
        lose_acks: set[int] = frozenset(),  # type: ignore[assignment]
        reject: dict[int, tuple[str, str]] | None = None,
        ack_delay: float = 0.0,  # a busy hub: every answer leaves this long after the event
    ) -> None:
        self.bus = bus
        self.ack_delay = ack_delay
        self.late: set[asyncio.Task[None]] = set()
        self.lose_events = set(lose_events)
        self.lose_acks = set(lose_acks)
        self.reject = reject or {}
        self.applied: list[tuple[str, int, dict[str, Any]]] = []
        self.received: Counter[tuple[str, int]] = Counter()
        self.answers: dict[tuple[str, int], dict[str, Any]] = {}
        self.expected: dict[str, int] = {}
        self.gaps = 0
        self.lost_acceptances = 0  # acceptances whose ack was lost (re-acked as duplicates)
        self.subscription = bus.subscribe(f"dup:{T}:console:*")
        self.task = asyncio.create_task(self.run())

    async def run(self) -> None:
        async for message in self.subscription:
            event = unpack(message.data)
            console, seq = event["console"], event["seq"]
            assert message.channel == console_channel(T, event["table"])
            self.received[console, seq] += 1
            first_time = self.received[console, seq] == 1
            if first_time and seq in self.lose_events:
                continue
            expected = self.expected.get(console, 1)
            if seq < expected:
                ack = {**self.answers[console, seq]}
                if ack["ok"]:
                    ack["duplicate"] = True
            elif seq > expected:
                self.gaps += 1
                ack = {"seq": seq, "ok": False, "code": "seq_gap", "expected": expected}
            else:
                if seq in self.reject:
                    code, sentence = self.reject[seq]
                    ack = {"seq": seq, "ok": False, "code": code, "error": sentence}
                else:
                    self.applied.append((console, seq, event))
                    ack = {"seq": seq, "ok": True, "position": f"{len(self.applied)}-0"}
                self.answers[console, seq] = ack
                self.expected[console] = seq + 1
            if seq in self.lose_acks and self.received[console, seq] == 1:
                self.lost_acceptances += ack["ok"] and not ack.get("duplicate")
                continue
            if self.ack_delay:
                task = asyncio.create_task(self.answer_later(console, ack))
                self.late.add(task)
                task.add_done_callback(self.late.discard)
            else:
                await self.bus.publish(ack_channel(T, console), pack(ack))

    async def answer_later(self, console: str, ack: dict[str, Any]) -> None:
        await asyncio.sleep(self.ack_delay)
        await self.bus.publish(ack_channel(T, console), pack(ack))

    def applied_seqs(self, console: str) -> list[int]:
        return [seq for c, seq, _ in self.applied if c == console]

    async def stop(self) -> None:
        await self.subscription.aclose()
        await self.task


@pytest.fixture
async def bus() -> AsyncIterator[MemoryBus]:
    instance = MemoryBus()
    yield instance
    await instance.close()


def fold(seat: int) -> dict[str, Any]:
    return {"type": "fold", "seat": seat, "deal": 1}


async def test_send_fills_the_envelope_and_returns_the_ack(bus: MemoryBus) -> None:
    hub = FakeHub(bus)
    async with ConsoleClient(bus, T, 3, "c3", clock=lambda: 12.5) as client:
        ack = await client.send({"type": "start", "deal": 1, "seq": 99, "table": 7, "v": 2})
        assert ack == Ack(seq=1, ok=True, position="1-0")
        assert client.pending == [] and client.next_seq == 2
    await hub.stop()
    (_, _, event), *_ = hub.applied
    assert event == {
        "type": "start",
        "deal": 1,
        "v": 1,
        "tournament": T,
        "table": 3,
        "console": "c3",
        "seq": 1,
        "ts": 12.5,
    }


async def test_pipelined_events_with_losses_apply_exactly_once_in_order(bus: MemoryBus) -> None:
    hub = FakeHub(bus, lose_events={10, 100}, lose_acks={5, 50, 150})
    async with ConsoleClient(bus, T, 1, "c1", timeout=0.05, max_backoff=0.1) as client:
        for i in range(200):
            await client.submit(fold(i % 6 + 1))
        await client.drain(timeout=10)
        stats = client.stats
    await hub.stop()
    assert hub.applied_seqs("c1") == list(range(1, 201))
    assert stats.accepted == 200 and stats.rejected == 0
    # Events whose acceptance was not heard are resent and re-acked as duplicates. (Lost acks
    # of seqs after 10 may have been seq_gap answers instead: timing decides.)
    assert hub.lost_acceptances >= 1
    assert stats.duplicates == hub.lost_acceptances
    assert stats.resent > 0
    for seq in (5, 10, 50, 100, 150):
        assert hub.received["c1", seq] >= 2


async def test_seq_gap_resends_from_expected_at_once_and_not_per_gap(bus: MemoryBus) -> None:
    hub = FakeHub(bus, lose_events={3})
    # A long ack timeout: only the seq_gap answers can explain a quick recovery.
    async with ConsoleClient(bus, T, 1, "c1", timeout=5.0) as client:
        for i in range(50):
            await client.submit(fold(i % 6 + 1))
        await client.drain(timeout=2.0)
    await hub.stop()
    assert hub.applied_seqs("c1") == list(range(1, 51))
    assert hub.gaps == 47  # seqs 4..50 of the first burst
    # One resend of the tail, not one per gap answer (which would be 47 resends of each).
    assert max(hub.received.values()) == 2
    assert hub.received["c1", 1] == 1


async def test_rejection_is_reported_and_not_retried(bus: MemoryBus) -> None:
    hub = FakeHub(bus, reject={2: ("out_of_turn", "seat 4 is to act, not seat 2")})
    lines: list[str] = []
    async with ConsoleClient(bus, T, 3, "c3", timeout=0.05, on_reject=lines.append) as client:
        assert (await client.send(fold(1))).ok
        ack = await client.send(fold(2))
        assert not ack.ok and ack.code == "out_of_turn"
        assert (await client.send(fold(4))).ok
        await asyncio.sleep(0.2)  # several ack timeouts: nothing is resent
        assert client.stats.rejected == 1 and client.stats.resent == 0
        assert client.rejections == [ack]
    await hub.stop()
    assert lines == ["table 3 seq 2 REJECTED out_of_turn: seat 4 is to act, not seat 2"]
    assert hub.applied_seqs("c3") == [1, 3]
    assert hub.received["c3", 2] == 1


class UpperBound:
    """An rng whose jitter always takes the largest value: the backoff bound itself."""

    def uniform(self, a: float, b: float) -> float:
        return b


async def test_resends_back_off_exponentially_up_to_the_cap(bus: MemoryBus) -> None:
    client = ConsoleClient(
        bus,
        T,
        1,
        "c1",
        timeout=0.05,
        max_backoff=0.4,
        rng=UpperBound(),  # type: ignore[arg-type]
    )
    expected = [0.05, 0.05 + 0.1, 0.05 + 0.2, 0.05 + 0.4, 0.05 + 0.4]
    assert [client.resend_delay(n) for n in range(1, 6)] == pytest.approx(expected)

    # With nobody answering, the transmissions themselves are spaced that way.
    sent_at: list[float] = []
    listener = bus.subscribe(console_channel(T, 1))

    async def record() -> None:
        async for _ in listener:
            sent_at.append(asyncio.get_running_loop().time())

    recorder = asyncio.create_task(record())
    async with client:
        await client.submit(fold(1))
        await asyncio.sleep(1.0)
    await listener.aclose()
    await recorder
    gaps = [b - a for a, b in itertools.pairwise(sent_at)]
    assert len(gaps) >= 3
    for gap, delay in zip(gaps, expected, strict=False):
        assert delay - 0.01 <= gap <= delay + 0.15


async def test_ack_timeout_adapts_to_a_slow_hub_and_stops_needless_resends(
    bus: MemoryBus,
) -> None:
    """Acks take 0.25 s, the configured timeout is 0.1 s: the first event is sent again (and the
    timer backs off), then the timer has learnt the delay and the rest go once. Without
    adaptation every event would be sent at least twice."""
    hub = FakeHub(bus, ack_delay=0.25)
    async with ConsoleClient(bus, T, 1, "c1", timeout=0.1, max_backoff=0.1) as client:
        assert client.ack_timeout == 0.1
        for seat in range(1, 6):
            await client.send(fold(seat))
        learnt = client.stats.resent
        assert learnt >= 1  # the fixture really is slower than the configured timeout
        assert client.ack_timeout >= 0.25
        for seat in range(1, 21):  # pipelined: all twenty in flight at once
            await client.submit(fold(seat))
        await client.drain(timeout=5)
        assert client.stats.resent == learnt
        assert client.stats.accepted == 25
    await hub.stop()


async def test_ack_timeout_ignores_ambiguous_samples_and_stays_bounded(bus: MemoryBus) -> None:
    client = ConsoleClient(bus, T, 1, "c1", timeout=0.5)
    client.observe_ack_delay(0.01)
    assert client.ack_timeout == 0.5  # never below the configured floor
    for _ in range(50):
        client.observe_ack_delay(60.0)
    assert client.ack_timeout == 5.0  # never above the cap


async def test_full_jitter_stays_within_the_bound(bus: MemoryBus) -> None:
    import random

    client = ConsoleClient(bus, T, 1, "c1", timeout=0.1, max_backoff=1.0, rng=random.Random(7))
    for sends in range(2, 10):
        bound = min(1.0, 0.1 * 2 ** (sends - 1))
        delays = [client.resend_delay(sends) for _ in range(200)]
        assert all(0.1 <= d <= 0.1 + bound for d in delays)
        assert max(delays) - min(delays) > bound / 2  # actually jittered


async def test_malformed_acks_are_ignored(bus: MemoryBus) -> None:
    hub = FakeHub(bus)
    async with ConsoleClient(bus, T, 1, "c1") as client:
        for junk in (b"\xc1", pack([1, 2]), pack({"seq": "1", "ok": True}), pack({"seq": 99})):
            await bus.publish(ack_channel(T, "c1"), junk)
        assert (await client.send(fold(1))).ok
        await bus.publish(ack_channel(T, "c1"), pack({"seq": 1, "ok": True}))  # stale
        await asyncio.sleep(0.01)
        assert client.stats.stale_acks == 1
    await hub.stop()


async def test_window_limits_events_in_flight(bus: MemoryBus) -> None:
    async with ConsoleClient(bus, T, 1, "c1", timeout=10, window=3) as client:
        for i in range(3):
            await client.submit(fold(i + 1))
        blocked = asyncio.create_task(client.submit(fold(4)))
        await asyncio.sleep(0.05)
        assert not blocked.done() and client.pending == [1, 2, 3]
        await bus.publish(ack_channel(T, "c1"), pack({"seq": 1, "ok": True}))
        await asyncio.wait_for(blocked, 1.0)
        assert client.pending == [2, 3, 4]


async def test_close_cancels_waiting_sends(bus: MemoryBus) -> None:
    client = ConsoleClient(bus, T, 1, "c1", timeout=10)
    await client.start()
    waiting = asyncio.create_task(client.send(fold(1)))
    await asyncio.sleep(0.01)
    await client.close()
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_unencodable_event_consumes_no_seq(bus: MemoryBus) -> None:
    async with ConsoleClient(bus, T, 1, "c1") as client:
        with pytest.raises(ValueError):
            await client.submit({"type": "fold", "seat": object()})
        assert client.next_seq == 1 and client.pending == []


async def test_replay_log_sends_each_console_in_order(bus: MemoryBus, tmp_path: Path) -> None:
    hub = FakeHub(bus, lose_events={4}, reject={6: ("over_pot_limit", "the pot allows 700")})
    events = []
    for i in range(8):
        events.append({"table": 1, "console": "c1", "seq": i + 1, "type": "check", "seat": i})
        events.append({"table": 2, "console": "c2", "seq": i + 1, "type": "call", "seat": i})
    log = tmp_path / "session.jsonl"
    log.write_text("\n".join(json.dumps(e) for e in events) + "\n\n")
    lines: list[str] = []
    report = await replay_log(bus, T, log, on_reject=lines.append, timeout=0.05)
    await hub.stop()
    assert report.events == 16 and report.consoles == 2
    assert (report.accepted, report.rejected) == (14, 2)
    assert report.resent > 0
    assert lines == report.rejections
    assert sorted(lines) == [
        "table 1 seq 6 REJECTED over_pot_limit: the pot allows 700",
        "table 2 seq 6 REJECTED over_pot_limit: the pot allows 700",
    ]
    for console in ("c1", "c2"):
        assert hub.applied_seqs(console) == [1, 2, 3, 4, 5, 7, 8]
        seats = [e["seat"] for c, _, e in hub.applied if c == console]
        assert seats == [0, 1, 2, 3, 4, 6, 7]


async def test_replay_log_continues_from_the_first_seq_and_checks_input(bus: MemoryBus) -> None:
    hub = FakeHub(bus)
    hub.expected["c9"] = 5
    events = [{"table": 9, "console": "c9", "seq": 5, "type": "fold", "seat": s} for s in (1, 2)]
    report = await replay_log(bus, T, events, pace=0.01, on_reject=print)
    await hub.stop()
    assert report.accepted == 2 and hub.applied_seqs("c9") == [5, 6]
    with pytest.raises(ValueError, match="tables 1 and 2"):
        await replay_log(bus, T, [{"table": 1, "console": "x"}, {"table": 2, "console": "x"}])
    with pytest.raises(ValueError, match="int table"):
        await replay_log(bus, T, [{"console": "x"}])


async def test_a_seq_the_hub_cannot_reach_ends_with_a_clear_refusal(bus: MemoryBus) -> None:
    """Issue #10.4: `console send --seq 9999` logged "hub expects seq 255" every few seconds for
    90 minutes. A seq gap that no resend can close (the console does not hold the seq the hub
    expects) now ends at once as a refusal that says which seq to send."""
    hub = FakeHub(bus)
    hub.expected["c1"] = 255
    lines: list[str] = []
    events = [{"table": 1, "console": "c1", "seq": 9999, "type": "fold", "seat": 2}]
    async with asyncio.timeout(5):
        report = await replay_log(bus, T, events, on_reject=lines.append, timeout=0.05)
    await hub.stop()
    assert (report.accepted, report.rejected) == (0, 1)
    assert hub.received["c1", 9999] <= 2  # no storm of resends
    (line,) = lines
    assert "seq_gap" in line and "send from seq 255" in line


async def test_a_reused_seq_is_not_reported_as_accepted(bus: MemoryBus) -> None:
    """Issue #10.4: a seq the hub already held was reported "1 accepted ... 1 duplicates" though
    nothing was applied."""
    hub = FakeHub(bus)
    first = [{"table": 1, "console": "c1", "seq": 1, "type": "fold", "seat": 2}]
    assert (await replay_log(bus, T, first, on_reject=print)).accepted == 1
    lines: list[str] = []
    again = [{"table": 1, "console": "c1", "seq": 1, "type": "check", "seat": 3}]
    report = await replay_log(bus, T, again, on_reject=lines.append)
    await hub.stop()
    assert (report.accepted, report.already, report.duplicates) == (0, 1, 0)
    assert "already holds this seq" in lines[0]
    assert hub.applied_seqs("c1") == [1]
