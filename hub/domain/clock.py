"""The session clock: periods of play and breaks from the configuration, run by the operator.

Pure: time is a parameter. The clock moves only by the operator's commands (start, pause,
adjust, go to a level), each journaled with its time, and is read at a time ``now``: which
level, how long it and the session have left, whether the session's time is up. Replaying the
commands with their times gives the same clock.

Levels do not change the blinds. In duplicate poker every table plays each deal with the same
stacks and blinds (the IFP guide: a 75-hand session, every table the same hands, each in its own
random order), so blinds that rose with the clock would give two tables different blinds for
the same deal and the comparison would be lost. A level is a period of play or a break; the
clock shows the tournament's blinds, and the session ends at its hand count or its time,
whichever the configuration enforces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from hub.domain.errors import Rejection

__all__ = ["ON_TIME_UP", "Clock", "ClockReading", "ClockSpec", "Level"]

ON_TIME_UP = ("flag", "enforce")
"""When the session's time is up: ``flag`` shows it (clock overlay, operator panel, ticker);
``enforce`` also refuses to start another deal (``time_up``) until the operator adds time."""

ACTIONS = ("start", "pause", "adjust", "level")
MAX_ADJUST = 24 * 3600


@dataclass(frozen=True, slots=True)
class Level:
    """A period of the session: play, or a break."""

    seconds: float
    is_break: bool = False
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ClockSpec:
    levels: tuple[Level, ...]
    on_time_up: str = "flag"

    @property
    def total(self) -> float:
        return sum(level.seconds for level in self.levels)

    def names(self) -> list[str]:
        """Display names: the configured one, else "Level N" (play) or "Break"."""
        out: list[str] = []
        play = 0
        for level in self.levels:
            if not level.is_break:
                play += 1
            out.append(level.name or ("Break" if level.is_break else f"Level {play}"))
        return out


@dataclass(frozen=True, slots=True)
class ClockReading:
    status: str  # "not_started", "running", "paused" or "over"
    level: int  # 0-based index into the levels (the last one once over)
    elapsed: float  # seconds of the schedule behind us
    level_left: float
    session_left: float


class Clock:
    """The clock's state: how much of the schedule was used before ``since`` and whether it
    runs. ``elapsed`` may be negative after the operator added time before anything ran."""

    __slots__ = ("changed_at", "elapsed", "running", "since", "spec", "started")

    def __init__(self, spec: ClockSpec) -> None:
        self.spec = spec
        self.elapsed = 0.0  # schedule used up to `since` (or in all, when paused)
        self.since: float | None = None  # when it last started running
        self.running = False
        self.started = False
        self.changed_at = 0.0  # when the operator last moved it

    def used(self, now: float) -> float:
        if self.running and self.since is not None:
            return self.elapsed + max(0.0, now - self.since)
        return self.elapsed

    def read(self, now: float) -> ClockReading:
        used = self.used(now)
        total = self.spec.total
        if not self.started:
            status = "not_started"
        elif used >= total:
            status = "over"
        else:
            status = "running" if self.running else "paused"
        at = max(0.0, used)
        end = 0.0
        index = len(self.spec.levels) - 1
        for i, level in enumerate(self.spec.levels):
            end += level.seconds
            if at < end:
                index = i
                break
        return ClockReading(
            status=status,
            level=index,
            elapsed=used,
            level_left=max(0.0, end - used) if at < total else 0.0,
            session_left=max(0.0, total - used),
        )

    def as_of(self, now: float) -> float:
        """The moment a reading is best taken at to describe the clock at ``now``: the last
        operator command, or the start of the level running at ``now`` (the end of the
        session once over), whichever is later. Readings taken at any moment of one level are
        equivalent; this one is the same whenever it is asked, which keeps the clock's topic
        equal after a restart."""
        if not self.running or self.since is None:
            return self.changed_at
        used = self.used(now)
        start = 0.0
        for level in self.spec.levels:
            if start + level.seconds > used:
                break
            start += level.seconds
        return max(self.changed_at, self.since + (start - self.elapsed))

    def time_up(self, now: float) -> bool:
        return self.started and self.used(now) >= self.spec.total

    def next_change(self, now: float) -> float | None:
        """When the reading next changes by itself (a level ends), if the clock runs."""
        if not self.running or self.since is None:
            return None
        used = self.used(now)
        end = 0.0
        for level in self.spec.levels:
            end += level.seconds
            if used < end:
                return now + (end - used)
        return None

    # -- the operator's commands -----------------------------------------------------------

    @staticmethod
    def check(command: dict[str, Any], levels: int) -> dict[str, Any]:
        """A clock command as it is journaled: ``action`` and its argument, checked."""
        action = command.get("action")
        if action not in ACTIONS:
            raise Rejection("bad_request", f"clock action must be one of {', '.join(ACTIONS)}")
        out: dict[str, Any] = {"action": action}
        if action == "adjust":
            seconds = command.get("seconds")
            if (
                isinstance(seconds, bool)
                or not isinstance(seconds, int | float)
                or not math.isfinite(seconds)  # NaN passes the range check below
            ):
                raise Rejection(
                    "bad_request", "clock adjust needs 'seconds', a finite number (+ adds time)"
                )
            if abs(seconds) > MAX_ADJUST:
                raise Rejection("bad_request", f"clock adjust is at most {MAX_ADJUST} s")
            out["seconds"] = float(seconds)
        if action == "level":
            level = command.get("level")
            if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= levels:
                raise Rejection("bad_request", f"clock level must be from 1 to {levels}")
            out["level"] = level
        return out

    def apply(self, command: dict[str, Any], now: float) -> None:
        """Apply a checked command at ``now``."""
        action = command["action"]
        self.changed_at = now
        if action == "start":  # also resumes after a pause
            if not self.running:
                self.running, self.since, self.started = True, now, True
        elif action == "pause":
            if self.running:
                self.elapsed = self.used(now)
                self.running, self.since = False, None
        elif action == "adjust":  # + gives time back (the level and session end later)
            self.elapsed = self.used(now) - float(command["seconds"])
            if self.running:
                self.since = now
        elif action == "level":  # the start of that level (1-based)
            self.elapsed = sum(lv.seconds for lv in self.spec.levels[: int(command["level"]) - 1])
            if self.running:
                self.since = now

    # -- snapshot ----------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        return {
            "elapsed": self.elapsed,
            "since": self.since,
            "running": self.running,
            "started": self.started,
            "changed_at": self.changed_at,
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.elapsed = float(data["elapsed"])
        self.since = None if data["since"] is None else float(data["since"])
        self.running = bool(data["running"])
        self.started = bool(data["started"])
        self.changed_at = float(data.get("changed_at", 0.0))
