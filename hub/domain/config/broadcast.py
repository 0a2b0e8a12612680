"""``[broadcast]``: the frame rate and the table cameras of the edit (`duplicast export
--timeline`, docs/edit.md), checked as the rest of the file."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from msgspec import UNSET

from hub.domain.config import shape
from hub.domain.config.shape import Checker, show
from hub.domain.config.stages import table_number
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
