"""Any topic's payload, built now by its family's builder (``hub.engine.families``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from hub.engine.families.base import EngineView, Feed, Mover, TopicKeys
from hub.engine.families.scores import build_standings
from hub.wire.topics import PROGRAM, PUBLIC, TopicKey

__all__ = ["Payloads"]


class Payloads:
    """Builds payloads from the engine's state; keeps both audiences' standings (the seat
    topics are cut from them) until the next change (``forget``)."""

    def __init__(self, engine: EngineView, feeds: dict[str, Feed]) -> None:
        self.engine = engine
        self._feeds = feeds
        self._standings: dict[bool, dict[str, Any]] = {}
        # Something changed: what was made from the old state is made again when asked. (The
        # dict's own clear, bound once: every event of the engine calls it.)
        self.forget: Callable[[], None] = self._standings.clear
        self._keys: TopicKeys | None = None
        self._movers: Mapping[str, Mover] = {}  # (the projections', ``moved_by``)

    def keys(self) -> TopicKeys:
        """Every topic key of the tournament, from the declarations (made on first use)."""
        if self._keys is None:
            self._keys = TopicKeys(self.engine.state.config, self._feeds)
        return self._keys

    def standings(self, live: bool) -> dict[str, Any]:
        found = self._standings.get(live)
        if found is None:
            found = self._standings[live] = build_standings(self.engine, live)
        return found

    def moved_by(self, movers: Mapping[str, Mover]) -> None:
        """The movers the projections keep from now on, by family (``Projections``: none
        until they start, and again when they are made anew)."""
        self._movers = movers

    def mover(self, family: str) -> Mover | None:
        """The family's mover while the projections keep one (``Reading.mover``)."""
        return self._movers.get(family)

    def feed_of(self, key: TopicKey) -> Feed | None:
        """The family of a topic (None: no such topic for that audience)."""
        audience, name = key
        topic = self.engine.topics.get(name)
        if topic is None or audience not in topic.family.audiences:
            return None
        return self._feeds[topic.family.name]

    def build(self, key: TopicKey) -> dict[str, Any] | None:
        """A topic's payload built from the state now (None: no such topic for that
        audience, or not yet)."""
        audience, name = key
        topic = self.engine.topics.get(name)
        if topic is None or audience not in topic.family.audiences:
            return None
        return self._feeds[topic.family.name].build(self, topic.args, audience)

    def topic_keys(self) -> Iterator[TopicKey]:
        """Every topic that exists now, per audience (a deal's public ones once released, for
        the families under its embargo: ``Family.embargo``)."""
        engine = self.engine
        for topic in engine.topics:
            fam = topic.family
            embargoed = self._feeds[fam.name].embargo and not engine.release.deal_released(
                topic.arg("deal")
            )
            for audience in fam.audiences:
                if (audience == PUBLIC and embargoed) or audience == PROGRAM:
                    continue
                yield (audience, topic.name)
