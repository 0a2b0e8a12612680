"""The edit of a deal: an OpenTimelineIO timeline with the deal played at every table, side by
side (`duplicast export --timeline`, docs/edit.md).

One timeline per deal, one video track per table camera (``[broadcast.cameras]``), each with
one clip: the table's take of the deal (hub.cli.timeline), its source range in the camera's
timecode (hub.domain.timecode), starting at the top of the timeline so every table plays the
deal from the same record frame; markers at the flop, turn, river, all-ins, showdown, void and
dispute, in the camera's timecode. Each track is also written as a CMX 3600 EDL when the
adapter plug-in (``otio-cmx3600-adapter``) is installed: an EDL holds one video track.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import opentimelineio as otio

from hub.cli.timeline import DealCut, Marker, Take
from hub.domain.config import TournamentConfig
from hub.domain.timecode import DEFAULT_CAMERAS, CameraClocks

COLOURS = {
    "flop": otio.schema.MarkerColor.GREEN,
    "turn": otio.schema.MarkerColor.CYAN,
    "river": otio.schema.MarkerColor.BLUE,
    "all-in": otio.schema.MarkerColor.ORANGE,
    "showdown": otio.schema.MarkerColor.PURPLE,
    "void": otio.schema.MarkerColor.RED,
    "dispute": otio.schema.MarkerColor.RED,
}


def cameras_of(config: TournamentConfig) -> CameraClocks:
    return config.broadcast if config.broadcast is not None else DEFAULT_CAMERAS


def _time(frame: int, fps: float) -> otio.opentime.RationalTime:
    return otio.opentime.RationalTime(frame, fps)


def _marker(take: Take, marker: Marker, cameras: CameraClocks) -> otio.schema.Marker:
    frame = cameras.frame(take.table, take.start)
    frame += cameras.position(take.table, marker.at) - cameras.position(take.table, take.start)
    return otio.schema.Marker(
        name=marker.name,
        marked_range=otio.opentime.TimeRange(_time(frame, cameras.fps), _time(0, cameras.fps)),
        color=COLOURS.get(marker.kind, otio.schema.MarkerColor.YELLOW),
        metadata={"duplicast": {"kind": marker.kind, "at": marker.at}},
    )


def clip_of(take: Take, cameras: CameraClocks) -> otio.schema.Clip:
    """The take as a clip of its table camera's recording."""
    fps = cameras.fps
    first = cameras.frame(take.table, take.start)
    frames = cameras.position(take.table, take.end) - cameras.position(take.table, take.start)
    reel = f"TABLE{take.table:02d}"[:8]
    clip = otio.schema.Clip(
        name=take.name,
        media_reference=otio.schema.MissingReference(name=f"Table {take.table} camera"),
        source_range=otio.opentime.TimeRange(_time(first, fps), _time(frames, fps)),
        metadata=_metadata(take, reel),
    )
    for marker in take.markers:
        clip.markers.append(_marker(take, marker, cameras))
    return clip


def _metadata(take: Take, reel: str) -> dict[str, Any]:
    return {
        "cmx_3600": {"reel": reel},
        "duplicast": {
            "table": take.table,
            "group": take.group,
            "deal": take.deal,
            "status": take.status,
            "start_at": take.start,
            "end_at": take.end,
            "seats": list(take.seats),
            "winners": list(take.winners),
        },
    }


def timeline_of(cut: DealCut, config: TournamentConfig) -> otio.schema.Timeline:
    """The deal at every filmed table, one track each, every clip from the top."""
    cameras = cameras_of(config)
    timeline = otio.schema.Timeline(name=f"{config.name} · Deal {cut.deal}")
    timeline.metadata["duplicast"] = {
        "tournament": config.id,
        "deal": cut.deal,
        "complete": cut.complete,
        "fps": cameras.fps,
    }
    for take in cut.takes:
        if not cameras.films(take.table):
            continue
        teams = " ".join(seat.split(" ", 1)[0] for seat in take.seats)
        track = otio.schema.Track(name=f"Table {take.table} ({take.group}) {teams}")
        track.append(clip_of(take, cameras))
        timeline.tracks.append(track)
    return timeline


def edl_adapter() -> bool:
    """Is the CMX 3600 EDL adapter plug-in installed?"""
    try:
        otio.adapters.from_name("cmx_3600")
    except otio.exceptions.NotSupportedError:
        return False
    return True


def write_edit(cuts: Sequence[DealCut], config: TournamentConfig, folder: Path) -> list[Path]:
    """One ``deal-NN.otio`` per deal, and ``deal-NN-table-TT.edl`` per track when the EDL
    adapter is installed; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    edl = edl_adapter()
    written: list[Path] = []
    for cut in cuts:
        timeline = timeline_of(cut, config)
        path = folder / f"deal-{cut.deal:02d}.otio"
        otio.adapters.write_to_file(timeline, str(path))
        written.append(path)
        for track in timeline.tracks if edl else ():
            table = track[0].metadata["duplicast"]["table"]
            single = otio.schema.Timeline(name=f"{timeline.name} · Table {table}")
            single.tracks.append(track.deepcopy())
            path = folder / f"deal-{cut.deal:02d}-table-{table:02d}.edl"
            otio.adapters.write_to_file(single, str(path), adapter_name="cmx_3600")
            written.append(path)
    return written
