"""`duplicast export --site DIR`: a played session's journal in a real Redis, exported as the
public site's static files: the whole site (every page, data file, download and asset), the
bytes `SiteBuilder` serves for the same engine state and nothing else; the folder served by
`python -m http.server` at a base path of its own, its pages loaded in Chromium and linked to
each other (the deal's page to the replayer and back); the site's asset list closed over the
imports and fonts of its scripts and stylesheets; and the embargo: no deal that no group
released is anywhere in DIR (its replayer, its data file, its cards, its hands in the PHH zip),
whatever point of the session the export is made at.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import random
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from playwright.sync_api import Browser, expect

from hub.bus.redis import RedisBus
from hub.cli.main import main
from hub.cli.replay import replay
from hub.cli.site_export import (
    SitePathError,
    public_engine,
    site_builder,
    url_file,
    write_site,
)
from hub.domain.config import TournamentConfig
from hub.engine.core import Engine
from hub.engine.simulate import simulate_session
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.files.eventlog import log_line
from hub.roles.embedded import OVERLAYS
from hub.serve.site import ASSETS, PAGES
from hub.wire import codec
from hub.wire.channels import Channels
from tests.browser import new_page
from tests.nginx import free_port
from tests.test_site import zip_deals

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
    return {d for d in range(1, config.deals + 1) if engine.release.deal_released(d)}, engine


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
    hands = out / "download" / "hands.phh.zip"
    if hands.exists():  # (compressed: read inside)
        assert zip_deals(hands.read_bytes()) == released
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
        yield {
            "out": out,
            "url": url,
            "released": released,
            "engine": engine,
            "config": config,
            "records": records,
        }
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


def test_the_export_is_the_whole_site_the_builder_serves(session: dict[str, Any]) -> None:
    """Every path of the site for the same engine state (the journal replayed again, released
    as of now) is a file of DIR with the bytes `SiteBuilder` answers for it, and DIR holds
    nothing else: the pages of every kind, the data, the downloads (the CSVs and the PHH zip)
    and the assets."""
    config, out = session["config"], session["out"]
    decks = load_decks(config, SAMPLE.parent, {})
    lines = [log_line(r) for r in session["records"]]
    engine, _ = public_engine(config, decks, lines, "test", time.time())
    builder = site_builder(engine, OVERLAYS)
    expected: dict[str, bytes] = {}
    for path in builder.paths():
        doc = builder.document(path)
        assert doc is not None, path
        expected[str(url_file(path))] = doc.body
    found = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert sorted(found) == sorted(expected)
    for name, body in expected.items():
        assert found[name] == body, name
    d = min(session["released"])
    for name in (
        "index.html",
        f"deal/{d}/index.html",
        f"replay/{d}/index.html",
        "team/FIN/index.html",
        "player/FIN-2/index.html",
        "data/event.json",
        f"data/deal/{d}.json",
        "download/standings.csv",
        "data/running.json",
        "download/running.csv",
        "download/travellers.csv",
        "download/scorecards.csv",
        "download/hands.phh.zip",
        *ASSETS,
    ):
        assert name in found, name
    where = {"": "index.html", "team": "team/FIN/index.html", "player": "player/FIN-2/index.html"}
    for kind, template in PAGES.items():  # each page is its template, as a hub serves it
        name = where.get(kind, f"{kind}/{d}/index.html")
        assert found[name] == (OVERLAYS / "site" / template).read_bytes(), name


_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(\s*|^import\s*)['"]([^'"]+)['"]""", re.M)
_URL = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)""")
_HTML = re.compile(r'(?:src|href)="([^"#]+)"')


def test_the_site_assets_are_closed_over_what_they_load() -> None:
    """``ASSETS`` (what a hub serves under /site/ and the export writes) holds every module a
    listed script imports (statically or dynamically), every file a listed stylesheet names,
    and every stylesheet and script a page names: a page works from the site's files alone."""
    listed = set(ASSETS)
    assert all((OVERLAYS / a).is_file() for a in listed)
    wanted: set[str] = set()
    for asset in sorted(a for a in listed if a.endswith((".js", ".css"))):
        text = (OVERLAYS / asset).read_text("utf-8")
        pattern = _IMPORT if asset.endswith(".js") else _URL
        for ref in pattern.findall(text):
            if ref.startswith(("data:", "http:", "https:")):
                continue
            assert not ref.startswith("/"), f"{asset}: {ref} (a site asset links relatively)"
            wanted.add(str(PurePosixPath(asset).parent / ref))
    for template in PAGES.values():  # a page is two folders down (deal/3/), but the event's
        text = (OVERLAYS / "site" / template).read_text("utf-8")
        depth = "" if template == "index.html" else "a/b/"
        refs = [r for r in _HTML.findall(text) if r.endswith((".js", ".css"))]
        assert refs, template
        wanted |= {depth + r for r in refs}
    resolved = {os.path.normpath(w) for w in wanted}
    assert resolved <= listed, resolved - listed


def test_pages_load_from_plain_files_at_any_base_path(
    session: dict[str, Any], browser: Browser
) -> None:
    """From the folder at a base path of its own: the event's page, a deal's (its link to the
    replayer), the replayer (its links back), a team's and a player's score cards."""
    url = session["url"]
    d = min(session["released"])
    errors: list[str] = []
    page = new_page(browser, 1280, 800, errors)
    try:
        page.goto(f"{url}/")
        expect(page.locator("#link")).to_have_text("A copy of the results: not updated live.")
        assert page.locator("#deals a").count() == len(session["released"])
        page.locator("#deals a", has_text=f"Deal {d}").first.click()
        expect(page.locator("#traveller table tbody tr").first).to_be_visible()
        link = page.get_by_test_id("replay-link")
        assert link.get_attribute("href") == f"../../replay/{d}/?tables=1,2,3"
        link.click()
        expect(page.locator('[data-testid="step-status"]')).to_contain_text("Step 0 of")
        tables = page.locator('[data-testid="table"]').evaluate_all(
            "els => els.map(e => Number(e.dataset.table))"
        )
        assert tables == [1, 2, 3]
        assert page.url == f"{url}/replay/{d}/?tables=1,2,3"
        page.get_by_test_id("deal-link").click()
        expect(page.locator("#traveller")).to_be_visible()
        assert page.url == f"{url}/deal/{d}/"
        page.goto(f"{url}/replay/{d}/?tables=4,5")
        expect(page.locator('[data-testid="table"]')).to_have_count(2)
        page.get_by_test_id("home").click()  # "Results": the event's page
        expect(page.locator("#ranking table tbody tr").first).to_be_visible()
        assert page.url == f"{url}/"
        for card in ("team/FIN/", "player/FIN-2/"):
            page.goto(f"{url}/{card}")
            expect(page.locator("#card tbody tr")).to_have_count(
                len(session["released"]) * (6 if card.startswith("team") else 1)
            )
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
    site = site_builder(exported, OVERLAYS)
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
        site = site_builder(engine, OVERLAYS)
        assert any(p.startswith("data/deal/") for p in site.paths()) is expect_any
        out = tmp_path / str(expect_any)
        write_site(out, site.paths(), site.document)
        assert (out / "data" / "deal").exists() is expect_any
        assert (out / "replay").exists() is expect_any


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
