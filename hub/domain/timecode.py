"""Camera timecode: where a moment of the hub's clock is in each table camera's recording.

The hub stamps every journal record with its own clock (``at``, seconds since the epoch).
An editor cuts by the cameras' timecode. The production enters, in ``[broadcast]``, the frame
rate, one moment of the hub's clock (``sync``) and the timecode each table's camera showed at
that moment (``[broadcast.cameras]``); `CameraClocks.frame` maps any ``at`` onto a camera from
there. Without cameras, every camera is taken as jam-synced to UTC time of day (the hub's
clock modulo 24 hours).

Timecodes are non-drop-frame ``HH:MM:SS:FF``, counted at the nominal rate (30 for 29.97): what
a camera running non-drop timecode shows. A timecode wraps at 24 hours.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

FRAME_RATES = (23.976, 24.0, 25.0, 29.97, 30.0, 50.0, 59.94, 60.0)
DAY = 24 * 3600
TIMECODE = re.compile(r"^(\d{2}):(\d{2}):(\d{2}):(\d{2})$")


def nominal(fps: float) -> int:
    """Frames counted per timecode second: 30 for 29.97, 24 for 23.976."""
    return math.ceil(fps - 0.01)


def parse_timecode(text: str, fps: float) -> int | None:
    """``HH:MM:SS:FF`` as a frame count at ``fps`` (nominal), or None if it is not one."""
    match = TIMECODE.match(text)
    if match is None:
        return None
    hours, minutes, seconds, frames = (int(part) for part in match.groups())
    if hours >= 24 or minutes >= 60 or seconds >= 60 or frames >= nominal(fps):
        return None
    return ((hours * 60 + minutes) * 60 + seconds) * nominal(fps) + frames


def format_timecode(frame: int, fps: float) -> str:
    """A frame count as ``HH:MM:SS:FF`` (wrapped at 24 hours)."""
    rate = nominal(fps)
    frame %= DAY * rate
    seconds, frames = divmod(frame, rate)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}:{frames:02d}"


@dataclass(frozen=True, slots=True)
class CameraClocks:
    """``[broadcast]``: the cameras' frame rate, and per table the frame its camera showed at
    ``sync`` (the hub's clock, seconds). ``cameras`` None: every table, UTC time of day."""

    fps: float = 25.0
    sync: float | None = None
    cameras: Mapping[int, int] | None = field(default=None)

    def films(self, table: int) -> bool:
        """Does a camera record ``table``? (every table when no cameras are listed)"""
        return self.cameras is None or table in self.cameras

    def position(self, table: int, at: float) -> int:
        """The frame of ``table``'s camera at hub time ``at``, not wrapped (durations are
        differences of positions, right across midnight)."""
        if self.cameras is None or self.sync is None:
            return round(at * self.fps)
        return self.cameras[table] + round((at - self.sync) * self.fps)

    def frame(self, table: int, at: float) -> int:
        """The timecode frame of ``table``'s camera at hub time ``at`` (wrapped at 24 hours)."""
        return self.position(table, at) % (DAY * nominal(self.fps))


DEFAULT_CAMERAS = CameraClocks()
