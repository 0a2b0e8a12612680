"""The walk of one console event through the ingest (docs/internals.md, "The walk of one
console event"): a pipeline of stages, each handing the event on to the next, none returning
to a coordinator that calls the next step.

A real ingest (memory bus) takes one console event off its table's channel while a profile
hook watches; each stop of the documented walk that lives in the ingest is checked to be
entered once, in the documented order, while every stop before it (from ``handle_batch`` on)
is still on the stack: it was handed the event, not called after its predecessor returned.
And none returns to a room the event left: the engine (``hub/engine/core.py``) is entered only
by the decide stop, or as a tool read by the feed's part (``hub/engine/projecting.py``) the
event's changes were handed to; the projections move only there, at the feed stop's flush,
never while the engine decides; the consoles' links come to the feed's part with the batch.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from types import FrameType
from typing import Any

from hub.bus.memory import MemoryBus
from hub.engine.core import Engine
from hub.roles.edge import EdgeSource
from hub.roles.ingest import Ingest
from hub.serve.feed import Frame
from hub.wire import codec
from hub.wire.channels import Channels
from tests.hubharness import session_events, unique_tournament

ROOT = Path(__file__).resolve().parent.parent
ROW = re.compile(r"^\| *(\d+) *\| *`(hub/[\w/]+\.py):([\w.]+)`")


def documented_stops() -> list[tuple[str, str]]:
    """The walk's stops as docs/internals.md lists them: (file, function), in order."""
    text = (ROOT / "docs" / "internals.md").read_text()
    section = text.split("## The walk of one console event", 1)[1].split("\n## ", 1)[0]
    rows = [ROW.match(line) for line in section.splitlines()]
    return [(m.group(2), m.group(3)) for m in rows if m is not None]


def ingest_stops() -> list[tuple[str, str]]:
    """The documented stops from the ingest's batch on, up to the feed writer's (the part of
    the walk that runs in the ingest's task, one call chain)."""
    stops = documented_stops()
    names = [name for _, name in stops]
    first = names.index("Ingest.handle_batch")
    last = names.index("FeedPublisher.take")
    return stops[first : last + 1]


ENGINE = "hub/engine/core.py"  # the engine's room: the stop that decides enters it
PART = "hub/engine/projecting.py"  # the feed's part, where the engine hands the changes
DECIDE = ("hub/roles/ingest_decide.py", "Decider.take")
FLUSH = (PART, "Projecting.flush")
HAND = (PART, "Projecting.hand")
LINKS = (PART, "Projecting.links")
NOTED = ("hub/engine/projections.py", "Projections.on")
PROBED = (FLUSH, HAND, LINKS, NOTED, (PART, "Projecting.materialize"))


class Tracer:
    """A profile hook: for the first call of each watched function, the watched functions on
    the stack at that moment (the callers it was handed the event by); for every call of a
    probed function or of any function of ``rooms`` (files), the same (``calls``)."""

    def __init__(
        self,
        watched: list[tuple[str, str]],
        probed: tuple[tuple[str, str], ...] = (),
        rooms: tuple[str, ...] = (),
    ) -> None:
        self.watched = watched
        self.marks = [*watched, *probed]
        self.rooms = rooms
        self.entered: list[tuple[str, str]] = []
        self.stacks: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self.calls: list[tuple[tuple[str, str], list[tuple[str, str]]]] = []

    def mark_of(self, frame: FrameType) -> tuple[str, str] | None:
        code = frame.f_code
        for path, name in self.marks:
            if code.co_qualname == name and code.co_filename.endswith(path):
                return (path, name)
        for path in self.rooms:
            if code.co_filename.endswith(path):
                return (path, code.co_qualname)
        return None

    def stack_of(self, frame: FrameType) -> list[tuple[str, str]]:
        """The marked functions that called ``frame``'s, outermost first."""
        stack: list[tuple[str, str]] = []
        caller = frame.f_back
        while caller is not None:
            outer = self.mark_of(caller)
            if outer is not None:
                stack.append(outer)
            caller = caller.f_back
        return stack[::-1]

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        mark = self.mark_of(frame)
        if mark is None:
            return
        if mark in self.watched:
            if mark not in self.stacks:
                self.entered.append(mark)
                self.stacks[mark] = self.stack_of(frame)
            return
        self.calls.append((mark, self.stack_of(frame)))


def test_the_documented_walk_names_the_ingest_pipeline() -> None:
    stops = documented_stops()
    assert 0 < len(stops) <= 12, stops
    for path, name in stops:
        source = (ROOT / path).read_text()
        assert f"def {name.rsplit('.', 1)[-1]}(" in source, (path, name)


async def test_one_event_is_handed_from_stop_to_stop_through_the_ingest() -> None:
    config, decks = unique_tournament("walk")
    names = Channels(config.id)
    bus = MemoryBus()
    ingest = Ingest(bus, Engine(config, decks), tick_interval=3600)
    await ingest.start()
    event = session_events(config.id)[0]
    acks = bus.subscribe(names.ack(event["console"]))
    feed = bus.subscribe(names.feed)
    watched = ingest_stops()
    submit = (ENGINE, "Engine.submit")
    tracer = Tracer([*watched, submit], PROBED, rooms=(ENGINE,))
    sys.setprofile(tracer)
    try:
        await bus.publish(names.console(event["table"]), codec.pack(event))
        async with asyncio.timeout(30):
            ack = codec.unpack((await anext(aiter(acks))).data)
            await anext(aiter(feed))
            while watched[-1] not in tracer.stacks:  # the feed's publish may follow later
                await asyncio.sleep(0.01)
    finally:
        sys.setprofile(None)
        await acks.aclose()
        await feed.aclose()
        await ingest.stop()
    assert ack["ok"] is True and "position" in ack, ack
    assert [s for s in tracer.entered if s != submit] == watched
    for i, stop in enumerate(watched[1:], 1):  # handed on: every stop before it still runs
        assert tracer.stacks[stop][-i:] == watched[:i], (stop, tracer.stacks[stop])
    assert DECIDE in tracer.stacks[submit], tracer.stacks[submit]  # decided in the decide stop
    assert tracer.entered.index(submit) < tracer.entered.index(watched[watched.index(DECIDE) + 1])
    feed = watched[-1]
    calls = tracer.calls

    def stop(stack: list[tuple[str, str]]) -> tuple[str, str]:
        """The stop a call was made in: the innermost on its stack (each stop runs inside
        the one that handed it the event)."""
        return [mark for mark in stack if mark in watched][-1]

    # No return to the engine: entered by the decide stop, else read by the feed's part.
    engine_calls = [(f, stack) for f, stack in calls if f[0] == ENGINE]
    assert engine_calls
    for function, stack in engine_calls:
        assert stop(stack) == DECIDE or FLUSH in stack, (function, stack)
    # The decide stop hands the changes to the feed's part; nothing of the projections runs
    # there: they are noted and moved at the feed stop's flush.
    handed = [stack for f, stack in calls if f == HAND]
    assert handed and all(stop(stack) == DECIDE for stack in handed), handed
    noted = [stack for f, stack in calls if f == NOTED]
    assert noted and all(FLUSH in stack and stop(stack) == feed for stack in noted), noted
    flushes = [stack for f, stack in calls if f == FLUSH]
    assert flushes and all(stop(stack) == feed for stack in flushes), flushes
    # Whether the console listened (its ack had a subscriber) comes with the batch to the feed.
    links = [stack for f, stack in calls if f == LINKS]
    assert links and all(stack[-2:] == watched[-2:] for stack in links), links
    assert ingest.engine.desk.links == {event["console"]: True}


async def test_a_frame_is_handed_from_the_edge_to_its_store_to_the_fan_out() -> None:
    """Stops 8 to 10 (the edge, its store, the fan-out): a frame the store takes is handed on
    by the store itself, while ``EdgeSource.receive`` still runs."""
    stops = documented_stops()
    names = [name for _, name in stops]
    first = names.index("EdgeSource.receive")
    watched = stops[first : names.index("Fanout.publish") + 1]
    edge = EdgeSource(MemoryBus(), "walk")
    key = ("public", "standings")
    tracer = Tracer(watched)
    sys.setprofile(tracer)
    try:
        await edge.receive(key, Frame.snapshot("standings", 1, {"rows": []}))
        await edge.receive(
            key, Frame.delta("standings", 2, [{"op": "add", "path": "/rows/-", "value": 1}])
        )
    finally:
        sys.setprofile(None)
    assert tracer.entered == watched
    for i, stop in enumerate(watched[1:], 1):
        assert tracer.stacks[stop][-i:] == watched[:i], (stop, tracer.stacks[stop])
    assert edge.store.seq(key) == 2
