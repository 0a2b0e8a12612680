"""A feed store fed whole payloads, for tests of the layers above the engine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hub.serve.feed import Frame, PayloadFeed
from hub.wire.frames import Outgoing
from hub.wire.topics import TopicKey


@dataclass(frozen=True)
class Published:
    key: TopicKey
    frame: Frame

    @property
    def outs(self) -> dict[str, Outgoing]:
        return self.frame.outs


class FeedWriter(PayloadFeed):
    """``put`` returns the key with the frame, ready for ``Fanout.publish(key, outs)``."""

    def put(self, key: TopicKey, payload: dict[str, Any]) -> Published | None:  # type: ignore[override]
        frame = super().put(key, payload)
        return None if frame is None else Published(key, frame)
