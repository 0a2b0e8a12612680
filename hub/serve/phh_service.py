"""``GET /api/export/phh`` served without delaying the ingest's acknowledgements.

The ingest is the single writer: anything its event loop does, or any thread of its process
does while holding the GIL, delays the acks. Writing PHH is PokerKit playing every hand again
(~17 ms a hand: 2 s for the 119 hands of the sample event), and six public clients looping on
the export moved the ack p50 from 1.4 to 116 ms (issue #20). So:

- the bundle is cached per audience and rebuilt only when the tournament moved (an event
  applied, a deal released), and at most once per ``min_interval``: meanwhile the last one is
  served (an export a second old is still an export);
- only the hands new or changed since the last build are written, in a worker *process*
  (its own GIL), one build at a time whatever the number of requests waiting for it;
- what runs on the loop is copying the finished hands out of the state (``collect``: a few ms);
- each client (its address) may ask ``burst`` times, then once every ``every`` seconds:
  past that it is answered 429 with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from hub.engine.phh_export import ExportedHand, Rendered, bundle, collect, render

MIN_INTERVAL = 1.0  # seconds between two builds of one audience's bundle
EVERY = 5.0  # seconds per request a client earns back
BURST = 3  # requests a client may make at once
MAX_CLIENTS = 10_000  # clients whose budgets are remembered (the oldest forgotten first)

HandKey = tuple[int, int]  # (table, deal)


@dataclass(frozen=True, slots=True)
class Bundle:
    text: str
    hands: int
    skipped: int
    files: tuple[tuple[str, str], ...] = ()  # each hand's file name and text (the site's zip)


@dataclass(slots=True)
class _Audience:
    version: tuple[int, int] | None = None
    built_at: float = -math.inf
    bundle: Bundle | None = None
    building: asyncio.Task[Bundle] | None = None


@dataclass(slots=True)
class _Written:
    fingerprint: tuple[Any, ...]
    text: str | None  # None: skipped
    reason: str = ""


@dataclass
class RateLimit:
    """A token bucket per client: ``burst`` requests, then one every ``every`` seconds."""

    every: float = EVERY
    burst: int = BURST
    clock: Callable[[], float] = time.monotonic
    _buckets: OrderedDict[str, tuple[float, float]] = field(default_factory=OrderedDict)

    def retry_after(self, client: str) -> float:
        """0: allowed (and counted); else the seconds until this client may ask again."""
        now = self.clock()
        tokens, at = self._buckets.pop(client, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) / self.every)
        if tokens < 1.0:
            self._buckets[client] = (tokens, now)
            return (1.0 - tokens) * self.every
        self._buckets[client] = (tokens - 1.0, now)
        while len(self._buckets) > MAX_CLIENTS:
            self._buckets.popitem(last=False)
        return 0.0


def _fingerprint(hand: ExportedHand) -> tuple[Any, ...]:
    """What a hand's PHH text depends on: a correction (reopened, replayed) changes it."""
    return (hand.inputs, tuple(sorted(hand.result.items())), hand.players, hand.teams, hand.spec)


def _render_in_worker(hands: list[ExportedHand], event: str | None) -> Rendered:
    return render(hands, event)


class PhhExport:
    """The PHH bundles of one engine, cached and written off the ingest's loop and GIL."""

    def __init__(
        self,
        engine: Any,
        *,
        min_interval: float = MIN_INTERVAL,
        executor: Executor | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.min_interval = min_interval
        self.clock = clock
        self._executor = executor
        self._own_executor = executor is None
        self._audiences = {True: _Audience(), False: _Audience()}  # operator?
        self._written: dict[HandKey, _Written] = {}
        self.builds = 0  # bundles built (what the cache saved is requests - builds)
        self.rendered = 0  # hands written (each once, unless corrected)

    def _version(self) -> tuple[int, int]:
        return (self.engine.state.events_applied, self.engine.release.released_count)

    async def bundle(self, operator: bool) -> Bundle:
        """The bundle for the operator (every finished hand) or anyone else (the released
        deals): the cached one unless the tournament moved and ``min_interval`` passed."""
        audience = self._audiences[operator]
        if audience.building is not None:
            return await asyncio.shield(audience.building)
        fresh = audience.version == self._version()
        recent = self.clock() - audience.built_at < self.min_interval
        if audience.bundle is not None and (fresh or recent):
            return audience.bundle
        task = audience.building = asyncio.create_task(self._build(audience, operator))
        task.add_done_callback(lambda _: setattr(audience, "building", None))
        return await asyncio.shield(task)  # (a client that leaves does not cancel the build)

    async def _build(self, audience: _Audience, operator: bool) -> Bundle:
        version = self._version()
        engine = self.engine
        hands = collect(engine.state, None if operator else engine.release.released)
        todo = [h for h in hands if self._stale(h)]
        if todo:
            loop = asyncio.get_running_loop()
            event = engine.state.config.name
            try:
                done = await loop.run_in_executor(self._pool(), _render_in_worker, todo, event)
            except BrokenProcessPool:  # the worker died (killed, out of memory): a new one next
                self.close()
                raise
            self._keep(done)
        written = [(h, w.text) for h in hands if (w := self._written[(h.table, h.deal)]).text]
        skipped = sum(1 for h in hands if self._written[(h.table, h.deal)].text is None)
        text = bundle(Rendered(written, []))
        files = tuple((h.name, t) for h, t in written)
        audience.bundle = Bundle(text, len(written), skipped, files)
        audience.version, audience.built_at = version, self.clock()
        self.builds += 1
        return audience.bundle

    def _stale(self, hand: ExportedHand) -> bool:
        found = self._written.get((hand.table, hand.deal))
        return found is None or found.fingerprint != _fingerprint(hand)

    def _keep(self, done: Rendered) -> None:
        for hand, text in done.hands:
            self._written[(hand.table, hand.deal)] = _Written(_fingerprint(hand), text)
        for hand, reason in done.skipped:
            self._written[(hand.table, hand.deal)] = _Written(_fingerprint(hand), None, reason)
        self.rendered += len(done.hands) + len(done.skipped)

    def _pool(self) -> Executor:
        if self._executor is None:
            # spawn: a clean interpreter (no copy of the hub's loop, sockets or threads)
            context = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(max_workers=1, mp_context=context)
        return self._executor

    def close(self) -> None:
        """Stop the worker process (this object made it)."""
        if self._own_executor and self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
