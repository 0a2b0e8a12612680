"""``[broadcast]``: the frame rate and the table cameras of the edit (`duplicast export
--timeline`, docs/edit.md) and the program outputs' delays (docs/protocol.md 2.8), checked as
the rest of the file."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from msgspec import UNSET

from hub.domain.config import shape
from hub.domain.config.shape import Checker, show
from hub.domain.config.stages import table_number
from hub.domain.states import Audience
from hub.domain.timecode import FRAME_RATES, CameraClocks, parse_timecode


def camera_clocks(c: Checker, value: Any, tables: Sequence[int]) -> CameraClocks:
    """The cameras of ``[broadcast]``: every table listed must be in a group; ``sync`` and
    ``cameras`` come together."""
    b: shape.Broadcast = c.convert(value, shape.Broadcast, "broadcast")
    fps = float(b.fps)
    if fps not in FRAME_RATES:
        c.fail("broadcast.fps", shape.WORDING["broadcast.fps"].format(got=show(value["fps"])))
    if b.cameras is UNSET:
        if b.sync is not UNSET:
            c.fail("broadcast.cameras", "missing (the timecode each table's camera showed at sync)")
        return CameraClocks(fps)
    if b.sync is UNSET:
        c.fail("broadcast.sync", "missing (the moment the cameras' timecodes were read at)")
    if not b.cameras:
        c.fail("broadcast.cameras", "no cameras (leave the section out for time-of-day timecode)")
    cameras: dict[int, int] = {}
    for name, timecode in b.cameras.items():
        key = f"broadcast.cameras.{name}"
        table = table_number(name)
        if table is None:
            c.fail(key, "a table number is expected as key")
        if table not in tables:
            c.fail(key, f"table {table} is not in any group")
        frame = parse_timecode(timecode, fps) if isinstance(timecode, str) else None
        if frame is None:
            c.fail(key, f"expected a timecode HH:MM:SS:FF at {fps:g} fps, got {show(timecode)}")
        cameras[table] = frame
    return CameraClocks(fps, b.sync.timestamp(), cameras)


_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
MAX_DELAY = 24 * 3600.0


def parse_delay(value: object) -> float | None:
    """A delay in seconds: a number, or text such as ``"20m"``, ``"90s"``, ``"1h30m"``
    (None: not a delay of at most a day)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.fullmatch(value.strip())) and any(m.groups()):
        h, mi, s = (int(g or 0) for g in m.groups())
        seconds = float(h * 3600 + mi * 60 + s)
    else:
        return None
    return seconds if 0 <= seconds <= MAX_DELAY else None


DELAY_WANTED = "expected seconds or a duration like '20m' or '1h30m' (at most a day), got {got}"
DEFAULT_OUTPUT = Audience.PROGRAM.value  # ``[broadcast] delay``'s output: ``?feed=program`` alone
OUTPUT_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")


def program_delay(c: Checker, value: Any) -> float | None:
    """``[broadcast] delay``: how far the program feed runs behind play (None: no program)."""
    b: shape.Broadcast = c.convert(value, shape.Broadcast, "broadcast")
    if b.delay is UNSET:
        return None
    seconds = parse_delay(b.delay)
    if seconds is None:
        c.fail("broadcast.delay", DELAY_WANTED.format(got=show(value["delay"])))
    return seconds


def program_outputs(c: Checker, value: Any) -> dict[str, float]:
    """``[broadcast.outputs]``: the program outputs beside the default one, name -> delay.
    A name goes in URLs (``?feed=program&output=NAME``): letters, digits, ``-`` and ``_``;
    ``program`` is the default output's, whose delay is ``[broadcast] delay`` (required)."""
    b: shape.Broadcast = c.convert(value, shape.Broadcast, "broadcast")
    if b.outputs is UNSET:
        return {}
    if b.delay is UNSET:
        c.fail(
            "broadcast.outputs",
            "needs [broadcast] delay, the delay of the default output 'program'",
        )
    outputs: dict[str, float] = {}
    for name, delay in b.outputs.items():
        key = f"broadcast.outputs.{name}"
        if name == DEFAULT_OUTPUT:
            c.fail(key, "'program' is the default output: its delay is [broadcast] delay")
        if not OUTPUT_NAME.fullmatch(name):
            c.fail(
                key,
                f"an output's name goes in URLs (output={name}): 1 to 32 letters, digits,"
                " '-' or '_'",
            )
        seconds = parse_delay(delay)
        if seconds is None:
            c.fail(key, DELAY_WANTED.format(got=show(delay)))
        outputs[name] = seconds
    return outputs
