"""The walk of one console event through the ingest (docs/internals.md, "The walk of one
console event"): a pipeline of stages, each handing the event on to the next, none returning
to a coordinator that calls the next step.

A real ingest (memory bus) takes one console event off its table's channel while a profile
hook watches; each stop of the documented walk that lives in the ingest is checked to be
entered once, in the documented order, while every stop before it (from ``handle_batch`` on)
is still on the stack: it was handed the event, not called after its predecessor returned.
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
    """The documented stops from the ingest's batch on, up to the feed writer's publish (the
    part of the walk that runs in the ingest's task, one call chain)."""
    stops = documented_stops()
    names = [name for _, name in stops]
    first = names.index("Ingest.handle_batch")
    last = names.index("FeedPublisher.publish")
    return stops[first : last + 1]


class Tracer:
    """A profile hook: for the first call of each watched function, the watched functions on
    the stack at that moment (the callers it was handed the event by)."""

    def __init__(self, watched: list[tuple[str, str]]) -> None:
        self.watched = watched
        self.entered: list[tuple[str, str]] = []
        self.stacks: dict[tuple[str, str], list[tuple[str, str]]] = {}

    def stop_of(self, frame: FrameType) -> tuple[str, str] | None:
        code = frame.f_code
        for path, name in self.watched:
            if code.co_qualname == name and code.co_filename.endswith(path):
                return (path, name)
        return None

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        stop = self.stop_of(frame)
        if stop is None or stop in self.stacks:
            return
        self.entered.append(stop)
        stack: list[tuple[str, str]] = []
        caller = frame.f_back
        while caller is not None:
            outer = self.stop_of(caller)
            if outer is not None:
                stack.append(outer)
            caller = caller.f_back
        self.stacks[stop] = stack[::-1]


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
    submit = ("hub/engine/core.py", "Engine.submit")
    tracer = Tracer([*watched, submit])
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
    decide = ("hub/roles/ingest_decide.py", "Decider.take")
    assert decide in tracer.stacks[submit], tracer.stacks[submit]  # decided in the decide stop
    assert tracer.entered.index(submit) < tracer.entered.index(watched[watched.index(decide) + 1])


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
