"""`duplicast export --timeline`: the edit of each deal, one track per table camera (issue #23.5).

A simulated session goes through an engine with known receive times (the journal's ``at``);
its journal is exported as `export --events` writes it; the command's timelines are read back
with OpenTimelineIO and every clip and marker is checked against the journal's times, mapped
onto each table camera's timecode by ``[broadcast]``."""

from __future__ import annotations

import asyncio
import random
import tomllib
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import opentimelineio as otio
import pytest

from hub.bus.redis import RedisBus
from hub.cli.main import main
from hub.domain.config import ConfigError, TournamentConfig, parse_config
from hub.domain.deck import DeckOrder
from hub.domain.timecode import format_timecode, parse_timecode
from hub.engine.core import Engine
from hub.engine.simulate import simulate_session
from hub.files.decks import load_decks
from hub.files.eventlog import dumps, header, log_line
from hub.wire import codec
from hub.wire.channels import Channels

ROOT = Path(__file__).resolve().parent.parent
T0 = 1_795_380_000.0  # the hub's clock when the session starts (2026-11-22T20:40:00Z)
SYNC = "2026-11-22T22:20:00+01:00"  # = T0 + 40 minutes
FPS = 25
CAMERAS = {1: "10:00:00:00", 2: "09:59:58:12", 3: "10:00:01:24", 4: "10:00:00:00"}
BROADCAST = f"""
[broadcast]
fps = {FPS}
sync = {SYNC}

[broadcast.cameras]
""" + "".join(f'"{t}" = "{tc}"\n' for t, tc in CAMERAS.items())


def _config(tmp_path: Path, extra: str = BROADCAST) -> Path:
    path = tmp_path / "event.toml"
    path.write_text((ROOT / "samples" / "ifp6.toml").read_text() + extra)
    return path


def _load(path: Path) -> TournamentConfig:
    text = path.read_text()
    return parse_config(tomllib.loads(text), str(path), text)


def _journal(config: TournamentConfig, seed: int = 5) -> list[dict[str, Any]]:
    """A simulated session through the hub's engine at known times: its journal records."""
    decks = _decks(config)
    engine = Engine(config, decks)
    records = []
    for event in simulate_session(config, decks, random.Random(seed), mean_gap=6.0):
        outcome = engine.submit(event, T0 + event["ts"])
        assert outcome.ok and outcome.record is not None, outcome.ack
        records.append(outcome.record)
    return records


def _decks(config: TournamentConfig) -> dict[int, DeckOrder] | None:
    return load_decks(config, ROOT / "samples", {})  # the rehearsal seed of samples/ifp6.toml


def _write_log(path: Path, config: TournamentConfig, records: list[dict[str, Any]]) -> Path:
    lines = [header(config.id, "test-epoch"), *(log_line(r) for r in records)]
    path.write_text("".join(dumps(line) + "\n" for line in lines))
    return path


def _takes(records: list[dict[str, Any]]) -> dict[tuple[int, int], tuple[float, float]]:
    """Per (table, deal), from the journal alone: the ``at`` of its start, and that of the
    table's last play before its next start (the session's dispute: the declared win, not its
    confirmation, a ruling that ends no play)."""
    takes: dict[tuple[int, int], list[float]] = {}
    playing: dict[int, int] = {}
    for r in records:
        table = r["table"]
        if r["type"] == "start":
            playing[table] = r["deal"]
            takes[(table, r["deal"])] = [r["at"], r["at"]]
        elif r["type"] != "confirm":
            takes[(table, playing[table])][1] = r["at"]
    return {key: (start, end) for key, (start, end) in takes.items()}


def _frame(table: int, at: float) -> int:
    """The camera frame of a journal time, computed here from the test's own constants."""
    sync = T0 + 40 * 60
    base = parse_timecode(CAMERAS[table], FPS)
    assert base is not None
    return base + round((at - sync) * FPS)


def test_each_clip_spans_its_tables_take_of_the_deal_on_that_camera(tmp_path: Path) -> None:
    config_path = _config(tmp_path)
    config = _load(config_path)
    records = _journal(config)
    log = _write_log(tmp_path / "events.jsonl", config, records)
    out = tmp_path / "edit"
    assert main(["export", "--timeline", str(out), "--config", str(config_path), str(log)]) == 0
    expected = _takes(records)
    for deal in range(1, config.deals + 1):
        timeline = otio.adapters.read_from_file(str(out / f"deal-{deal:02d}.otio"))
        assert timeline.metadata["duplicast"]["deal"] == deal
        # One track per table camera (tables 5 and 6 have none), each clip from the top.
        assert [t.name.split(" (")[0] for t in timeline.tracks] == [
            f"Table {t}" for t in sorted(CAMERAS)
        ]
        for track in timeline.tracks:
            (clip,) = list(track)
            table = clip.metadata["duplicast"]["table"]
            start, end = expected[(table, deal)]
            assert track.range_of_child_at_index(0).start_time.value == 0
            source = clip.source_range
            assert source.start_time.rate == FPS
            assert source.start_time.value == _frame(table, start)
            assert source.duration.value == _frame(table, end) - _frame(table, start)
            assert clip.metadata["duplicast"]["start_at"] == start
            assert f"Deal {deal} · Table {table} · " in clip.name
            _check_markers(clip, table, start, end, records)


def _check_markers(
    clip: Any, table: int, start: float, end: float, records: list[dict[str, Any]]
) -> None:
    """Every marker at the time of one of the table's journal records within the take; the
    streets in order, each at most once; a showdown after the river or an all-in."""
    times = {_frame(table, r["at"]) for r in records if r["table"] == table}
    kinds = []
    for marker in clip.markers:
        frame = marker.marked_range.start_time.value
        assert frame in times
        assert _frame(table, start) <= frame <= _frame(table, end)
        kinds.append(marker.metadata["duplicast"]["kind"])
    streets = [k for k in kinds if k in ("flop", "turn", "river")]
    assert streets == ["flop", "turn", "river"][: len(streets)]
    if "showdown" in kinds:
        assert len(streets) == 3 or "all-in" in kinds
    marked = [m.marked_range.start_time.value for m in clip.markers]
    assert marked == sorted(marked)


STREETS = ("flop", "turn", "river")
BETTING = ("preflop", *STREETS)


def test_street_markers_fall_on_the_actions_that_closed_each_street(tmp_path: Path) -> None:
    """Replayed action by action, the hand's street changes exactly at the markers."""
    config = _load(_config(tmp_path))
    records = _journal(config, seed=9)
    log = _write_log(tmp_path / "events.jsonl", config, records)
    out = tmp_path / "edit"
    argv = ["export", "--timeline", str(out), "--config", str(tmp_path / "event.toml")]
    assert main([*argv, str(log)]) == 0
    engine = Engine(config, _decks(config))
    changes: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)
    for r in records:
        event = {k: v for k, v in r.items() if k not in ("kind", "at")}
        assert engine.submit(event, r["at"]).ok
        table = engine.state.tables[r["table"]]
        hand = table.current
        if hand is None:
            continue
        street, seen = str(hand.hand.street), changes[(r["table"], hand.deal)]
        if street in STREETS:
            seen.setdefault(street, r["at"])
        if street in BETTING:  # an undo takes back the streets after the one it returns to
            for later in BETTING[BETTING.index(street) + 1 :]:
                seen.pop(later, None)
    checked = 0
    for deal in range(1, config.deals + 1):
        timeline = otio.adapters.read_from_file(str(out / f"deal-{deal:02d}.otio"))
        for track in timeline.tracks:
            clip = track[0]
            table = clip.metadata["duplicast"]["table"]
            for marker in clip.markers:
                kind = marker.metadata["duplicast"]["kind"]
                if kind in ("flop", "turn", "river"):
                    at = changes[(table, deal)][kind]
                    assert marker.marked_range.start_time.value == _frame(table, at)
                    checked += 1
    assert checked > 20


def test_edl_per_track_reads_back_with_the_same_source_range(tmp_path: Path) -> None:
    config_path = _config(tmp_path)
    config = _load(config_path)
    log = _write_log(tmp_path / "events.jsonl", config, _journal(config))
    out = tmp_path / "edit"
    assert main(["export", "--timeline", str(out), "--config", str(config_path), str(log)]) == 0
    timeline = otio.adapters.read_from_file(str(out / "deal-03.otio"))
    for track in timeline.tracks:
        clip = track[0]
        table = clip.metadata["duplicast"]["table"]
        edl = otio.adapters.read_from_file(str(out / f"deal-03-table-{table:02d}.edl"), rate=FPS)
        (back,) = list(edl.tracks[0])
        assert back.source_range == clip.source_range
        assert back.metadata["cmx_3600"]["reel"] == f"TABLE{table:02d}"
        assert [m.name.lower() for m in back.markers] == [m.name.lower() for m in clip.markers]


def test_only_deals_finished_at_every_table_unless_unfinished(tmp_path: Path) -> None:
    config_path = _config(tmp_path, "")  # no [broadcast]: every table, UTC time of day
    config = _load(config_path)
    records = _journal(config)
    cut = len(records) * 2 // 3
    log = _write_log(tmp_path / "events.jsonl", config, records[:cut])
    finished = _finished_everywhere(config, records[:cut])
    out = tmp_path / "edit"
    assert main(["export", "--timeline", str(out), "--config", str(config_path), str(log)]) == 0
    assert sorted(p.name for p in out.glob("*.otio")) == [f"deal-{d:02d}.otio" for d in finished]
    timeline = otio.adapters.read_from_file(str(out / f"deal-{finished[0]:02d}.otio"))
    assert len(timeline.tracks) == 6
    clip = timeline.tracks[0][0]
    start = clip.metadata["duplicast"]["start_at"]
    assert clip.source_range.start_time.value == round(start * 25) % (24 * 3600 * 25)
    every = tmp_path / "every"
    argv = ["export", "--timeline", str(every), "--unfinished", "--config", str(config_path)]
    assert main([*argv, str(log)]) == 0
    assert len(list(every.glob("*.otio"))) > len(finished)


def _finished_everywhere(config: TournamentConfig, records: list[dict[str, Any]]) -> list[int]:
    engine = Engine(config, _decks(config))
    for r in records:
        engine.submit({k: v for k, v in r.items() if k not in ("kind", "at")}, r["at"])
    return [
        d
        for d in range(1, config.deals + 1)
        if all(
            (h := engine.state.hand(t, d)) is not None
            and h.status in ("complete", "void", "disputed")
            for t in config.tables
        )
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('[broadcast]\nfps = 26\n', "broadcast.fps: expected frames per second 23.976, 24, 25, "
         "29.97, 30, 50, 59.94 or 60, got 26"),
        (f'[broadcast]\nsync = {SYNC}\n[broadcast.cameras]\n"1" = "10:00:00:25"\n',
         "broadcast.cameras.1: expected a timecode HH:MM:SS:FF at 25 fps, got '10:00:00:25'"),
        ('[broadcast]\nsync = 2026-11-22T22:20:00\n[broadcast.cameras]\n"1" = "10:00:00:00"\n',
         "broadcast.sync: expected a date and time with its UTC offset, like "
         "2026-11-25T20:00:00+01:00, got 2026-11-22T22:20:00"),
        (f'[broadcast]\nsync = {SYNC}\n[broadcast.cameras]\n"7" = "10:00:00:00"\n',
         "broadcast.cameras.7: table 7 is not in any group"),
        ('[broadcast]\n[broadcast.cameras]\n"1" = "10:00:00:00"\n',
         "broadcast.sync: missing (the moment the cameras' timecodes were read at)"),
    ],
)  # fmt: skip
def test_bad_broadcast_sections_are_named_at_their_line(
    tmp_path: Path, extra: str, message: str
) -> None:
    path = _config(tmp_path, "\n" + extra)
    with pytest.raises(ConfigError) as caught:
        _load(path)
    assert str(caught.value).endswith(message)
    assert caught.value.line is not None and caught.value.line > 100


def test_timecodes_round_trip_at_every_rate() -> None:
    for fps in (23.976, 24.0, 25.0, 29.97, 30.0, 50.0, 59.94, 60.0):
        frame = parse_timecode("23:59:59:00", fps)
        assert frame is not None and format_timecode(frame, fps) == "23:59:59:00"
        assert format_timecode(frame + 2 * round(fps), fps) == "00:00:01:00"  # wraps at 24 h
    assert parse_timecode("10:00:00;00", 29.97) is None  # drop-frame: not supported


@pytest.mark.redis
def test_the_journal_in_redis_gives_the_same_edit_as_its_export(
    tmp_path: Path, redis_url: str
) -> None:
    tournament = f"edit-{uuid.uuid4().hex[:8]}"
    text = _config(tmp_path).read_text().replace('id = "ifp-demo"', f'id = "{tournament}"', 1)
    config_path = tmp_path / "event.toml"
    config_path.write_text(text)
    config = _load(config_path)
    records = _journal(config)

    async def journal(delete: bool) -> None:
        bus = RedisBus(redis_url)
        await bus.connect()
        try:
            if delete:
                await bus.delete(*Channels(tournament).data_keys)
            else:
                for record in records:
                    await bus.append(Channels(tournament).journal, codec.pack(record))
        finally:
            await bus.close()

    asyncio.run(journal(delete=False))
    try:
        live, logged = tmp_path / "live", tmp_path / "logged"
        argv = ["export", "--config", str(config_path), "--timeline"]
        assert main([*argv, str(live), "--redis", redis_url]) == 0
        log = _write_log(tmp_path / "events.jsonl", config, records)
        assert main([*argv, str(logged), str(log)]) == 0
    finally:
        asyncio.run(journal(delete=True))
    names = sorted(p.name for p in live.iterdir())
    assert names == sorted(p.name for p in logged.iterdir()) and len(names) == 60
    for name in names:
        assert (live / name).read_text() == (logged / name).read_text()


def test_a_dispute_confirmed_after_the_tables_next_start_keeps_the_takes_end(
    tmp_path: Path,
) -> None:
    """The operator confirms the session's dispute once the table plays its next deal: the
    take still ends at the declared win, and is named by the confirmed result."""
    config_path = _config(tmp_path)
    config = _load(config_path)
    records = _journal(config)
    confirm = next(r for r in records if r["type"] == "confirm")
    table, deal = confirm["table"], confirm["deal"]
    at, win = confirm["at"], records[records.index(confirm) - 1]["at"]  # the declared win's
    records.remove(confirm)
    for r in records:  # the table console's later seqs close the gap
        if r["console"] == confirm["console"] and r["seq"] > confirm["seq"]:
            r["seq"] -= 1
    later = next(i for i, r in enumerate(records) if r["at"] > at and r["table"] == table)
    later += 1  # after the table's next start (its next record)
    by_operator = {**confirm, "console": "operator", "seq": 1, "at": records[later]["at"]}
    records.insert(later + 1, by_operator)
    log = _write_log(tmp_path / "events.jsonl", config, records)
    out = tmp_path / "edit"
    assert main(["export", "--timeline", str(out), "--config", str(config_path), str(log)]) == 0
    timeline = otio.adapters.read_from_file(str(out / f"deal-{deal:02d}.otio"))
    (clip,) = [t[0] for t in timeline.tracks if t[0].metadata["duplicast"]["table"] == table]
    assert clip.metadata["duplicast"]["end_at"] == win
    assert clip.metadata["duplicast"]["status"] == "complete" and " wins " in clip.name
    assert [m.metadata["duplicast"]["kind"] for m in clip.markers][-1] == "dispute"


def test_a_dispute_confirmed_long_after_its_play_ends_the_clip_with_the_play(
    tmp_path: Path,
) -> None:
    """Issue #30 item 13: the session's dispute confirmed 18 minutes after the declared win,
    before the table starts its next deal (everything after the confirmation comes 18 minutes
    later too): the clip ends with the hand's play (the declared win), not with the
    confirmation; named by the confirmed result, every marker within the play."""
    config_path = _config(tmp_path)
    config = _load(config_path)
    records = _journal(config)
    i = next(i for i, r in enumerate(records) if r["type"] == "confirm")
    confirm, win = records[i], records[i - 1]
    assert win["type"] == "win" and win["table"] == confirm["table"]
    for r in records[i:]:
        r["at"] += 18 * 60
    log = _write_log(tmp_path / "events.jsonl", config, records)
    out = tmp_path / "edit"
    assert main(["export", "--timeline", str(out), "--config", str(config_path), str(log)]) == 0
    timeline = otio.adapters.read_from_file(str(out / f"deal-{confirm['deal']:02d}.otio"))
    (clip,) = [
        t[0] for t in timeline.tracks if t[0].metadata["duplicast"]["table"] == confirm["table"]
    ]
    meta = clip.metadata["duplicast"]
    assert meta["end_at"] == win["at"]
    assert meta["end_at"] - meta["start_at"] < 18 * 60  # the play, not the play + 18 min
    table = confirm["table"]
    frames = _frame(table, win["at"]) - _frame(table, meta["start_at"])
    assert clip.source_range.duration.value == frames
    assert meta["status"] == "complete" and " wins " in clip.name
    assert [m.metadata["duplicast"]["kind"] for m in clip.markers][-1] == "dispute"
