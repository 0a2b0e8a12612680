"""The program feed across a restart of the ingest (role all, memory bus): from the engine
snapshot a clean stop leaves, or from the journal alone. (Apart from tests/test_program_hub.py,
whose browser tests hold an event loop of their own.)"""

from __future__ import annotations

import dataclasses
import time

import pytest

from hub.bus.memory import MemoryBus
from hub.client.logreplay import replay_log
from hub.engine.core import Engine
from hub.roles.embedded import IngestSource
from hub.roles.engine_store import FIELD
from hub.wire import codec
from hub.wire.channels import Channels
from tests.hubharness import session_events, unique_tournament

DELAY = 2.0


@pytest.mark.parametrize("snapshot", [True, False])
async def test_a_restarted_ingest_rebuilds_the_program(snapshot: bool) -> None:
    """A clean stop leaves an engine snapshot that carries the program; without it the journal
    alone rebuilds it. Either way the restarted hub's program is a journal replay's."""
    config, decks = unique_tournament("progrst")
    config = dataclasses.replace(config, program_delay=DELAY)
    bus = MemoryBus()
    await bus.connect()
    names = Channels(config.id)
    first = IngestSource(bus, Engine(config, decks), own_bus=False)
    await first.ingest.start()
    report = await replay_log(bus, config.id, session_events(config.id)[:300], on_reject=print)
    assert report.rejected == 0
    await first.ingest.stop()  # a clean stop: the engine snapshot, program included
    saved = (await bus.hgetall(names.engine)).get(FIELD)
    assert saved is not None and "program" in codec.unpack(saved)["engine"]
    if not snapshot:
        await bus.delete(names.engine)
    again = IngestSource(bus, Engine(config, decks), own_bus=False)
    await again.ingest.start()
    try:
        records = [codec.unpack(data) for _, data in await bus.read(names.journal, "0-0", 10_000)]
        reference = Engine(config, decks)
        for record in records:
            reference.restore(record)
        later = time.time() + 2 * DELAY  # every record due: both programs show the same
        reference.tick(later)
        again.engine.tick(later)
        keys = [k for k in reference.topic_keys() if k[0] == "program"]
        assert keys
        for key in keys:
            assert again.engine.payload(key) == reference.payload(key), key
        program = again.engine.program
        assert program is not None and not program.default.pending
    finally:
        await again.ingest.stop()
