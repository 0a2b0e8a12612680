"""The ``released`` family: a small public topic that tells the results site (and anyone who
shows released results) that what the public is shown moved, without the results themselves.

Its payload is ``version`` (``Release.version``: one more for each engine event that may move
what the public is shown, ``release.SHOWN``: a deal released, a released deal's result or hand
corrected, a penalty or its withdrawal, a roster fix, a stage's teams fixed), ``deals`` (how
many the event has), ``released`` (the deal numbers public now, ascending: a deal is public
for every group that plays it at once) and ``complete`` (every deal released). A page that
follows it reads its data again over HTTP (ETag, the edges' cache) when a frame comes, rather
than being sent the tournament-sized standings at every release (issue #34.6: 10,000 phones).
The same for the commentators (live) and on the program feed (the delayed engine's public:
the programme's releases). A release's delta: the deal added in its place, the version (and
``complete`` once). It never names a deal that is not public (the embargo: the public board's
deals only, ``Release.deals``).

Moved in place by ``ReleasedMover`` (``Feed.mover``): a release inserts its deal, every event
sets the version; the builder (``released_payload``) is the oracle it is held to after every
event (tests/test_projections.py).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from typing import Any

from hub.engine.changes import DealReleased
from hub.engine.families.base import EngineView, Feed, Reading, TopicKeys
from hub.engine.release import SHOWN
from hub.wire.patch import Recorder
from hub.wire.topics import LIVE, PUBLIC, TopicKey

__all__ = ["RELEASED", "ReleasedMover", "released_payload"]

AUDIENCES = (PUBLIC, LIVE)  # (the program's: the delayed engine's public)


def released_keys(k: TopicKeys, event: Any) -> list[TopicKey]:
    return [k[a]["released"] for a in AUDIENCES]


def released_payload(engine: EngineView) -> dict[str, Any]:
    """What the public is shown now, in brief (the family's builder)."""
    total = engine.state.config.deals
    deals = [d for d in range(1, total + 1) if engine.release.deal_released(d)]
    return {
        "version": engine.release.version,
        "deals": total,
        "released": deals,
        "complete": len(deals) == total,
    }


def _released(read: Reading, args: tuple[int, ...], audience: str) -> dict[str, Any]:
    return released_payload(read.engine)


class ReleasedMover:
    """The ``released`` topics moved in place: a release's deal inserted at its place, the
    version and ``complete`` set (a field that did not move records nothing)."""

    def __init__(self, read: Reading) -> None:
        self.engine = read.engine
        keys = read.keys()
        self._keys = [keys[a]["released"] for a in AUDIENCES]
        self.docs: dict[TopicKey, Recorder] = {}
        self._deals: list[int] = []  # released since the last flush
        self._noted = False

    def on(self, event: Any) -> None:
        self._noted = True
        if isinstance(event, DealReleased):
            self._deals.append(event.deal)

    def open(self, key: TopicKey) -> Recorder | None:
        if key not in self._keys:
            return None
        rec = self.docs[key] = Recorder(released_payload(self.engine))
        return rec

    def flush(self) -> Iterable[TopicKey]:
        if not self._noted:
            return ()
        deals, self._deals, self._noted = self._deals, [], False
        engine = self.engine
        for rec in self.docs.values():
            doc = rec.doc
            shown: list[int] = doc["released"]
            for d in deals:
                at = bisect_left(shown, d)
                if at == len(shown) or shown[at] != d:
                    rec.insert(("released", at), d)
            rec.set(("version",), engine.release.version)
            rec.set(("complete",), len(shown) == doc["deals"])
        return self._keys


def _mover(read: Reading) -> ReleasedMover:
    return ReleasedMover(read)


RELEASED = Feed(
    "released",
    SHOWN,
    released_keys,
    _released,
    mover=_mover,
    # As the public's standings: on the program feed from the delayed engine's public (its
    # releases, in the programme's time), never ahead of the programme's pictures.
    program=PUBLIC,
    # After the standings, deals and statistics of the same flush (an edge applies a flush's
    # frames in order): a page that reads again on this frame reads them moved.
    last=True,
    route="/api/released",
    delta="add of a released deal at its place in /released; replace of /version (and /complete)",
)
