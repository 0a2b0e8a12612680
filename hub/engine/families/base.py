"""What a topic family declaration is on the engine's side, and what its builders may read.

A ``Feed`` says, for one family of ``hub.wire.topics.FAMILIES``: the engine events
(``hub.engine.changes``) that touch it, which of its topics a given event touches, which of
those events the projections apply in place (rather than rebuild), and the builder of its
payload. Builders read the engine only through ``EngineView`` (read-only), so the payload code
lives with its family and nothing in the engine dispatches on family names.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from hub.domain.clock import Clock
from hub.domain.config import TournamentConfig
from hub.domain.eventscore import EventScoreboard
from hub.domain.scoring import Scoreboard
from hub.engine.cues import CueList
from hub.engine.onair import Takes
from hub.engine.sequencer import Sequencer
from hub.engine.ticker import Ticker
from hub.engine.tournament import TournamentState
from hub.wire.topics import AUDIENCES, TopicKey, TopicSpace, topic_name

__all__ = ["EngineView", "Feed", "Model", "Reading", "TopicKeys"]


class BoardHolder(Protocol):
    @property
    def board(self) -> Scoreboard | EventScoreboard | None: ...


class EngineView(Protocol):
    """The engine as payload builders read it (the names ``Engine`` has; read-only)."""

    @property
    def config(self) -> TournamentConfig: ...
    @property
    def state(self) -> TournamentState: ...
    @property
    def topics(self) -> TopicSpace: ...
    @property
    def onair(self) -> dict[str, Any]: ...
    @property
    def cues(self) -> CueList: ...
    @property
    def takes(self) -> Takes: ...
    @property
    def clock(self) -> Clock | None: ...
    @property
    def _clock_at(self) -> float: ...  # when the clock last changed
    @property
    def _now(self) -> float: ...  # the time of the last event
    @property
    def ticker(self) -> Ticker: ...
    @property
    def public_board(self) -> Scoreboard | EventScoreboard: ...
    @property
    def rejections(self) -> deque[dict[str, Any]]: ...
    @property
    def links(self) -> dict[str, bool]: ...
    @property
    def projections(self) -> BoardHolder: ...
    @property
    def sequencer(self) -> Sequencer: ...

    def released(self, group: str, deal_no: int) -> bool: ...
    def released_deals(self, group: str) -> list[int]: ...
    def deal_released(self, deal_no: int) -> bool: ...
    def release_state(self) -> list[dict[str, Any]]: ...
    def _public_teams(self, group: str | Mapping[str, Any]) -> bool: ...


class Reading(Protocol):
    """What a builder is handed: the engine, and the standings made once per change."""

    @property
    def engine(self) -> EngineView: ...

    def standings(self, live: bool) -> dict[str, Any]: ...


class TopicKeys(dict[str, dict[str, Any]]):
    """Every topic key of a tournament, made once: ``k[audience][family]`` is the key of a
    family without parameters, a list by seat, a dict by table or deal, or (compare) a dict by
    deal of lists by seat."""

    def __init__(self, config: TournamentConfig) -> None:
        seats = range(1, config.seats + 1)
        deals = range(1, config.deals + 1)
        super().__init__((a, {}) for a in AUDIENCES)
        self.k: dict[str, dict[str, Any]] = self  # (a plain dict: ``k[a]`` costs no frame)
        for a in AUDIENCES:
            k = self[a]
            for name in (
                "standings",
                "onair",
                "ticker",
                "projection",
                "ops",
                "clock",
                "suggestions",
            ):
                k[name] = (a, topic_name(name))
            k["seat"] = [(a, topic_name("seat", s)) for s in seats]
            k["table"] = {t: (a, topic_name("table", t)) for t in config.tables}
            k["console"] = {t: (a, topic_name("console", t)) for t in config.tables}
            k["deal"] = {d: (a, topic_name("deal", d)) for d in deals}
            k["compare"] = {d: [(a, topic_name("compare", d, s)) for s in seats] for d in deals}


Keys = Callable[[TopicKeys, Any], Iterable[TopicKey]]
Builder = Callable[[Reading, tuple[int, ...], str], "dict[str, Any] | None"]


class Model(Protocol):
    """A family's documents kept by a model of its own, moved incrementally (``Feed.model``):
    made when one of its topics is first materialized, never before. A model shares what did
    not move with the documents it made before (the diff passes it by identity) and never
    edits what it handed out."""

    def on(self, event: Any) -> None:
        """An event the family declares: note what it moved (the work waits for ``flush``)."""

    def flush(self) -> Iterable[str]:
        """Move by what was noted; the audiences whose payload may have changed."""

    def payload(self, audience: str, *args: int) -> dict[str, Any]:
        """An audience's payload now (``args``: the topic's, as ``seat:{s}``'s seat), equal
        to the family's builder's (a new document)."""


@dataclass(frozen=True, slots=True)
class Feed:
    """How the engine feeds one topic family (``name``, as in ``hub.wire.topics.FAMILIES``)."""

    name: str
    events: tuple[type, ...]  # the engine events that touch it
    keys: Keys  # (keys, event) -> the topics of this family the event touches
    build: Builder  # (reading, parameters, audience) -> its payload now (None: not yet)
    moves: tuple[type, ...] = ()  # events the projections apply in place (else: rebuilt)
    # A family whose documents a model keeps: the model is made when one of them is first
    # materialized (or touched, unless ``lazy``), and moves them.
    model: Callable[[EngineView], Model] | None = None
    # With a model: True, nothing of the family is built until someone asks for one of its
    # topics (suggestions: its ranking costs every hand); False, a topic an event touches is
    # made then and handed out whole, as other families' (after a writer's restart, the
    # edges' copies are replaced so).
    lazy: bool = False
