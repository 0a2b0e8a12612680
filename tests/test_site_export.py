"""`duplicast export --site DIR`: a played session's journal in a real Redis, exported as the
public site's static files; the folder served by `python -m http.server` at a base path of its
own, its pages loaded in Chromium; and the embargo: no deal that no group released is anywhere
in DIR (its page, its data file, its cards), whatever point of the session the export is made at.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from playwright.sync_api import Browser, expect

from hub.bus.redis import RedisBus
from hub.cli.main import main
from hub.cli.replay import replay
from hub.cli.site_export import (
    ReplaySite,
    SitePathError,
    public_engine,
    url_file,
    write_site,
)
from hub.domain.config import TournamentConfig
from hub.engine.core import Engine
from hub.engine.simulate import simulate_session
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.files.eventlog import log_line
from hub.wire import codec
from hub.wire.channels import Channels
from tests.browser import new_page
from tests.nginx import free_port

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "ifp6.toml"
T0 = time.time() - 6 * 3600  # the session was played this afternoon
BASE = "results/spring"  # the export hosted below a base path of its own


def played(config: TournamentConfig, fraction: float, seed: int = 3) -> list[dict[str, Any]]:
    """The journal records of a simulated session through the hub's engine, cut after
    ``fraction`` of its events (so some deals are released, some in play, some not started)."""
    decks = load_decks(config, SAMPLE.parent, {})
    engine = Engine(config, decks)
    events = list(simulate_session(config, decks, random.Random(seed), mean_gap=5.0))
    records = []
    for event in events[: int(len(events) * fraction)]:
        outcome = engine.submit(event, T0 + event["ts"])
        assert outcome.ok and outcome.record is not None, outcome.ack
        records.append(outcome.record)
    return records


def oracle(config: TournamentConfig, records: list[dict[str, Any]]) -> tuple[set[int], Engine]:
    """The released deals as the plain replay (`duplicast replay`) has them, and its engine."""
    engine = Engine(config, load_decks(config, SAMPLE.parent, {}))
    replay(config, [log_line(r) for r in records], engine, "test")
    return {d for d in range(1, config.deals + 1) if engine.deal_released(d)}, engine


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text("utf-8", "replace")
        for p in root.rglob("*")
        if p.is_file()
    }


def assert_embargo(out: Path, released: set[int], engine: Engine) -> None:
    """Exactly the released deals have a page and a data file; of the others, neither their
    number as a deal nor their cards appear in any file of DIR."""
    config = engine.state.config
    pages = (
        {int(p.name) for p in (out / "replay").iterdir()} if (out / "replay").exists() else set()
    )
    data = out / "data" / "deal"
    datas = {int(p.stem) for p in data.iterdir()} if data.exists() else set()
    assert pages == released and datas == released
    texts = _files(out)
    for d in range(1, config.deals + 1):
        if d in released:
            continue
        dealt = engine.state.dealt(d)
        marks = [f'"deal":{d},', f"replay/{d}/"]
        if dealt is not None:  # its board and its hands, as the data files spell them
            hole = {str(s): list(c) for s, c in sorted(dealt.hole.items())}
            marks.append(json.dumps(list(dealt.board), separators=(",", ":"))[1:-1])
            marks.append(json.dumps(hole, separators=(",", ":")))
        for name, text in texts.items():
            for mark in marks:
                assert mark not in text, f"unreleased deal {d}: {mark} in {name}"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[dict[str, Any]]:
    """A session played two thirds of the way, its journal in Redis, exported by the command
    into ``www/results/spring``; `python -m http.server` serving ``www``."""
    tmp = tmp_path_factory.mktemp("site")
    tournament = f"site-{uuid.uuid4().hex[:8]}"
    config_path = tmp / "event.toml"
    config_path.write_text(SAMPLE.read_text().replace('id = "ifp-demo"', f'id = "{tournament}"', 1))
    config = load_config(config_path)
    records = played(config, 0.62)
    channels = Channels(tournament)

    async def journal(delete: bool) -> None:
        bus = RedisBus(redis_url)
        await bus.connect()
        try:
            if delete:
                await bus.delete(*channels.data_keys)
            else:
                for record in records:
                    await bus.append(channels.journal, codec.pack(record))
        finally:
            await bus.close()

    asyncio.run(journal(delete=False))
    out = tmp / "www" / BASE
    try:
        argv = ["export", "--config", str(config_path), "--site", str(out), "--redis", redis_url]
        assert main(argv) == 0
    finally:
        asyncio.run(journal(delete=True))
    released, engine = oracle(config, records)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=tmp / "www",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/{BASE}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{url}/css/replay.css", timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield {"out": out, "url": url, "released": released, "engine": engine, "config": config}
    finally:
        server.terminate()
        server.wait(timeout=5)


def test_the_export_holds_the_released_deals_and_nothing_of_the_others(
    session: dict[str, Any],
) -> None:
    released, engine = session["released"], session["engine"]
    config = session["config"]
    assert 2 <= len(released) < config.deals  # some public, some not
    started = [d for d in range(1, config.deals + 1) if engine.state.started(d)]
    assert set(started) - released, "no deal in play to hold back: the test would prove nothing"
    assert_embargo(session["out"], released, engine)
    doc = json.loads((session["out"] / "data" / "deal" / f"{min(released)}.json").read_text())
    assert doc["deal"] == min(released) and doc["traveller"]["released"]
    assert sorted(doc["compare"], key=int) == [str(s) for s in range(1, config.seats + 1)]
    assert {r["table"] for r in doc["compare"]["1"]["rows"]} == set(range(1, 7))


def test_pages_load_from_plain_files_at_any_base_path(
    session: dict[str, Any], browser: Browser
) -> None:
    url = session["url"]
    errors: list[str] = []
    page = new_page(browser, 1280, 800, errors)
    try:
        for d in sorted(session["released"])[:2]:
            page.goto(f"{url}/replay/{d}/?tables=4,5")
            expect(page.locator('[data-testid="step-status"]')).to_contain_text("Step 0 of")
            expect(page.locator('[data-testid="table"]')).to_have_count(2)
            tables = page.locator('[data-testid="table"]').evaluate_all(
                "els => els.map(e => Number(e.dataset.table))"
            )
            assert tables == [4, 5]
    finally:
        page.context.close()
    assert errors == []
    unreleased = min(set(range(1, 13)) - session["released"])
    with pytest.raises(urllib.error.HTTPError) as got:
        urllib.request.urlopen(f"{url}/replay/{unreleased}/", timeout=2)
    assert got.value.code == 404


@settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(fraction=st.floats(0.05, 1.0))
def test_at_any_point_of_a_session_only_released_deals_are_written(
    tmp_path: Path, fraction: float
) -> None:
    config = load_config(SAMPLE)
    records = played(config, fraction, seed=11)
    released, engine = oracle(config, records)
    out = tmp_path / f"site-{uuid.uuid4().hex[:6]}"
    decks = load_decks(config, SAMPLE.parent, {})
    exported, _ = public_engine(config, decks, [log_line(r) for r in records], "test", time.time())
    site = ReplaySite(exported, ROOT / "overlays" / "site")
    write_site(out, site.paths(), site.document)
    assert_embargo(out, released, engine)


def test_a_deal_inside_its_release_delay_is_not_written(tmp_path: Path) -> None:
    """The offline replay ends with ``tick(inf)``, which would release every finished deal; the
    export releases as of its own clock, as the live hub would."""
    config = load_config(SAMPLE)
    records = played(config, 0.8)
    decks = load_decks(config, SAMPLE.parent, {})
    held = dataclasses.replace(config, release_delay=30 * 86_400.0)  # (played 6 hours ago)
    for now, expect_any in ((time.time(), False), (time.time() + 31 * 86_400, True)):
        engine, _ = public_engine(held, decks, [log_line(r) for r in records], "test", now)
        site = ReplaySite(engine, ROOT / "overlays" / "site")
        assert bool(site.paths()) is expect_any
        written = write_site(tmp_path / str(expect_any), site.paths(), site.document)
        assert bool(written) is expect_any


def test_each_url_has_its_file_and_none_leaves_the_folder() -> None:
    assert str(url_file("/site/")) == "index.html"
    assert str(url_file("/site/deal/3/")) == "deal/3/index.html"
    assert str(url_file("/site/replay/3/?tables=1,2,3")) == "replay/3/index.html"
    assert str(url_file("/site/data/deal/3.json")) == "data/deal/3.json"
    assert str(url_file("/site/download/hands.phh.zip")) == "download/hands.phh.zip"
    assert str(url_file("/site")) == "index.html"
    assert str(url_file("")) == "index.html"  # relative to the site's root (site_paths)
    assert str(url_file("deal/3/")) == "deal/3/index.html"
    assert str(url_file("data/deal/3.json")) == "data/deal/3.json"
    bad_paths = ("/site/../etc/passwd", "/overlays/x.js", "/sitex/a", "../b", "a/../../b")
    for bad in (*bad_paths, "/site/a\\..\\b/"):
        with pytest.raises(SitePathError):
            url_file(bad)
