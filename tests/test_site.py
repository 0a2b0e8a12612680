"""The public results site's server side (``hub.serve.site``, docs/site.md): its documents on a
real ingest and a real edge on Redis during a played session (the embargo: nothing of a deal
the engine has not released, in any page, data file or download; the edge serves what the
ingest serves), its caching (ETag, ``304``, Cache-Control), the static export's builder (the
same documents from the engine's public payloads), every sample game, and a property: on
random sessions no site document ever names an unreleased deal."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import random
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.bus.redis import RedisBus
from hub.client.logreplay import replay_log
from hub.domain.config import TournamentConfig
from hub.domain.deck import DeckOrder
from hub.engine.core import Engine
from hub.engine.simulate import simulate_session
from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.roles.embedded import OVERLAYS
from hub.serve.site import ASSET_AGE, SiteBuilder, engine_reader, file_name
from hub.wire.topics import PUBLIC
from tests.factories import make_config, make_decks
from tests.feedclient import FeedClient
from tests.hubharness import (
    ROOT,
    edge_hub,
    ingest_hub,
    offline,
    session_events,
    unique_tournament,
)

SAMPLES = ROOT / "samples"


def deals_named(value: Any) -> set[int]:
    """Every deal number a JSON document names under a ``deal`` key (or in a ``deals``
    list), at any depth."""
    found: set[int] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "deal" and isinstance(v, int):
                found.add(v)
            if k == "deals" and isinstance(v, list):  # (the stats topic's counted deals)
                found |= {d for d in v if isinstance(d, int)}
            found |= deals_named(v)
    elif isinstance(value, list):
        for v in value:
            found |= deals_named(v)
    return found


def csv_deals(body: bytes) -> set[int]:
    rows = list(csv.DictReader(io.StringIO(body.decode("utf-8-sig"))))
    return {int(r["deal"]) for r in rows}


def zip_deals(body: bytes) -> set[int]:
    with zipfile.ZipFile(io.BytesIO(body)) as z:
        names = [n for n in z.namelist() if n.endswith(".phh")]
        assert all(z.read(n) for n in names)
    return {int(n.rsplit("-", 1)[1].removesuffix(".phh")) for n in names}


def check_builder(builder: SiteBuilder, released: set[int]) -> int:
    """Every document of the builder's paths, against the deals released: returns how many."""
    paths = builder.paths()
    for d in range(1, builder.event()["deals"] + 1):
        assert (f"data/deal/{d}.json" in paths) == (d in released), d
    for path in paths:
        doc = builder.document(path)
        assert doc is not None, path
        if path.endswith(".json"):
            assert deals_named(json.loads(doc.body)) <= released, path
        elif path.endswith(".csv") and path != "download/standings.csv":
            assert csv_deals(doc.body) <= released, path
        elif path.endswith(".zip"):
            assert zip_deals(doc.body) <= released, path
    event = builder.event()
    assert set(event["released"]) == released
    return len(paths)


# -- a real ingest and a real edge on Redis --------------------------------------------------


@pytest.fixture
async def redis_bus(redis_url: str) -> Any:
    bus = RedisBus(redis_url)
    await bus.connect()
    created: list[str] = []
    try:
        yield bus, created
    finally:
        for tid in created:
            names = ("journal", "topics", "consoles", "rejected", "ingest", "ingest:token")
            await bus.delete(*[f"dup:{tid}:{n}" for n in names])
        await bus.close()


def released_deals(engine: Engine) -> set[int]:
    return {d for d in range(1, engine.state.config.deals + 1) if engine.release.deal_released(d)}


async def site_deals(http: httpx.AsyncClient, base: str, engine: Engine, deals: int) -> set[int]:
    """Read every data file and download of one server's site; each deal any of them names
    must be released by the engine (read after the document: an edge may lag, never lead)."""
    seen: set[int] = set()

    def released() -> set[int]:
        return {d for d in range(1, deals + 1) if engine.release.deal_released(d)}

    event = (await http.get(f"{base}/site/data/event.json")).json()
    assert set(event["released"]) <= released()
    seen |= set(event["released"])
    for d in range(1, deals + 1):
        got = await http.get(f"{base}/site/data/deal/{d}.json")
        if got.status_code == 200:
            assert d in released(), d
            assert deals_named(got.json()) == {d}
        else:
            assert got.status_code == 404 and got.json()["error"] == "not_released"
    for team in event["teams"]:
        for path in [f"team/{team['code']}", *(f"player/{p['id']}" for p in team["players"])]:
            got = await http.get(f"{base}/site/data/{path}.json")
            assert got.status_code == 200, path
            assert deals_named(got.json()) <= released(), path
    got = await http.get(f"{base}/site/data/running.json")  # (the ranking deal by deal)
    assert got.status_code == 200
    assert deals_named(got.json()) <= released()
    for name in ("travellers.csv", "scorecards.csv", "running.csv"):
        got = await http.get(f"{base}/site/download/{name}")
        assert got.status_code == 200
        assert csv_deals(got.content) <= released(), name
    return seen


@pytest.mark.redis
@pytest.mark.asyncio
async def test_ingest_and_edge_serve_the_site_and_hold_the_embargo(redis_bus: Any) -> None:
    bus, created = redis_bus
    config, decks = unique_tournament("site")
    created.append(config.id)
    events = session_events(config.id)
    async with (
        ingest_hub(bus, config, decks) as (source, ingest),
        edge_hub(bus, config.id) as (_edge, edge),
        httpx.AsyncClient(timeout=20) as http,
        FeedClient(edge.ws_url) as phone,  # a page's websocket: the `released` topic only
    ):
        engine = source.engine
        await phone.subscribe(["released"])
        sent = 0
        grew: list[int] = []
        for stop in (400, 1100, len(events)):  # before, during and after the releases
            report = await replay_log(bus, config.id, events[sent:stop], on_reject=print)
            assert report.rejected == 0
            sent = stop
            # the phone's frames name no deal the engine has not released (the embargo)
            for message in phone.log:
                named = message.get("data", {}).get("released", [])
                named += [
                    op["value"] for op in message.get("patch", []) if "released" in op["path"]
                ]
                assert set(named) <= released_deals(engine), message
            for base in (ingest.url, edge.url):
                seen = await site_deals(http, base, engine, config.deals)
            if stop == len(events):  # the last deal's release: the clock's tick, then the feed
                for _ in range(100):
                    if len(seen) == config.deals:
                        break
                    await asyncio.sleep(0.1)
                    got = (await http.get(f"{edge.url}/site/data/event.json")).json()
                    seen = set(got["released"])
                seen = await site_deals(http, edge.url, engine, config.deals)
            grew.append(len(seen))
            # the PHH zip (the ingest's): the released hands only, each a PHH file
            got = await http.get(f"{ingest.url}/site/download/hands.phh.zip")
            assert got.status_code == 200 and got.headers["content-type"] == "application/zip"
            hands = zip_deals(got.content)
            public = engine.release.deal_released
            assert hands <= {d for d in range(1, config.deals + 1) if public(d)}
        assert grew[0] < grew[-1] == config.deals, grew  # deals went public during the session
        # the phone followed every release through the edge: a frame a release, a few bytes
        await phone.wait_for(lambda c: c.states.get("released", {}).get("complete") is True)
        assert phone.states["released"] == engine.payload((PUBLIC, "released"))
        assert phone.gaps == [] and phone.errors == []
        deltas = [m for m in phone.log if m.get("type") == "delta"]
        assert len(deltas) >= 2  # (the log is replayed fast: a flush may release several)
        for m in deltas:  # a few bytes a frame, and a few more for each deal it releases
            adds = sum(1 for op in m["patch"] if op["op"] == "add")
            assert len(json.dumps(m, separators=(",", ":"))) < 200 + 50 * adds, m
        got = await http.get(f"{edge.url}/api/released")
        assert got.status_code == 200
        assert got.json()["data"]["released"] == list(range(1, config.deals + 1))
        listed = (await http.get(f"{edge.url}/api/topics")).json()
        assert "released" in {f["name"] for f in listed["topics"]}
        # every deal's hands, once the bundle is built again: at most once a second
        # (``phh_service.MIN_INTERVAL``), so a zip asked for within a second of the last build
        # is that build's (CI, loaded: the first build, which starts the writer's process,
        # ended late, and the zip after the last release was still its, with no hand)
        for _ in range(100):
            if hands == set(range(1, config.deals + 1)):
                break
            await asyncio.sleep(0.1)
            hands = zip_deals((await http.get(f"{ingest.url}/site/download/hands.phh.zip")).content)
        assert hands == set(range(1, config.deals + 1))
        # an edge has no hands to write: it says where the download is
        got = await http.get(f"{edge.url}/site/download/hands.phh.zip")
        assert got.status_code == 404 and "ingest" in got.json()["message"]

        # once the edge has caught up it serves the ingest's documents, byte for byte (one
        # ETag for both behind a load balancer), and the export's builder makes the same
        builder = SiteBuilder(engine_reader(engine), OVERLAYS)
        paths = [p for p in builder.paths() if not p.endswith(".zip")]
        for _ in range(100):
            here = (await http.get(f"{edge.url}/site/data/standings.json")).json()
            there = (await http.get(f"{ingest.url}/site/data/standings.json")).json()
            if here == there:
                break
            await asyncio.sleep(0.1)
        for path in paths:
            one = await http.get(f"{ingest.url}/site/{path}")
            two = await http.get(f"{edge.url}/site/{path}")
            assert one.status_code == two.status_code == 200, path
            doc = builder.document(path)
            assert doc is not None
            assert one.content == two.content == doc.body, path
            assert one.headers["etag"] == two.headers["etag"], path


async def held_still(http: httpx.AsyncClient, path: str) -> httpx.Response:
    """``path`` once two reads 0.2 s apart have one ETag: the site reads the published topics,
    and the feed's last publish trails the last ack (``FEED_GATHER``; later on a loaded
    machine), so a read right after the acks can be of the state before it (CI: two reads
    that straddled it gave 200 where the test asked for 304)."""
    got = await http.get(path)
    for _ in range(50):
        await asyncio.sleep(0.2)
        again = await http.get(path)
        if again.headers["etag"] == got.headers["etag"]:
            return again
        got = again
    raise AssertionError(f"{path} still moving after 10 s")


@pytest.mark.redis
@pytest.mark.asyncio
async def test_site_answers_are_cacheable(redis_bus: Any) -> None:
    bus, created = redis_bus
    config, decks = unique_tournament("sitecache")
    created.append(config.id)
    events = session_events(config.id)
    async with (
        ingest_hub(bus, config, decks) as (_source, ingest),
        httpx.AsyncClient(base_url=ingest.url, timeout=20) as http,
    ):
        await replay_log(bus, config.id, events[:900], on_reject=print)
        moved = await held_still(http, "/site/data/event.json")
        for path, cache in (
            ("/site/data/event.json", "no-cache"),
            ("/site/data/standings.json", "no-cache"),
            ("/site/download/standings.csv", "no-cache"),
            ("/site/data/running.json", "no-cache"),
            ("/site/download/running.csv", "no-cache"),
            ("/site/", "no-cache"),
            ("/site/deal/12/", "no-cache"),
            ("/site/team/FIN/", "no-cache"),
            ("/site/player/FIN-3/", "no-cache"),
            ("/site/css/site.css", f"public, max-age={ASSET_AGE}"),
            ("/site/js/site/site.js", f"public, max-age={ASSET_AGE}"),
        ):
            got = await http.get(path)
            assert got.status_code == 200, path
            assert got.headers["cache-control"] == cache, path
            etag = got.headers["etag"]
            again = await http.get(path, headers={"if-none-match": f'W/{etag}, "other"'})
            assert again.status_code == 304 and again.content == b"", path
            assert again.headers["etag"] == etag
            if path.endswith("/"):
                assert got.headers["content-type"].startswith("text/html")
                assert "script-src 'self'" in got.headers["content-security-policy"]
        # a document is built once, then served from the cache until a topic it read moves
        app = ingest.server.config.app
        site = next(r for r in app.routes if getattr(r, "path", "") == "/site/{path:path}")
        assert (await http.get("/site/data/team/FIN.json")).status_code == 200  # (built)
        builds = site.endpoint.__self__.builds
        for _ in range(20):
            assert (await http.get("/site/data/team/FIN.json")).status_code == 200
        assert site.endpoint.__self__.builds == builds
        # the documents of one kind are one file, whatever the deal
        one = await http.get("/site/deal/1/")
        assert one.content == (await http.get("/site/deal/12/")).content
        # a moved tournament is a new ETag
        await replay_log(bus, config.id, events[900:], on_reject=print)
        for _ in range(100):
            now = await http.get(
                "/site/data/event.json", headers={"if-none-match": moved.headers["etag"]}
            )
            if now.status_code == 200:
                break
            await asyncio.sleep(0.05)
        assert now.status_code == 200 and now.json()["released"] != moved.json()["released"]
        # what is not there
        got = await http.get("/site", follow_redirects=False)
        assert got.status_code == 308 and got.headers["location"] == "/site/"
        for path in (
            "/site/deal/0/",
            "/site/deal/13/",
            "/site/team/NOPE/",
            "/site/player/FIN-9/",
            "/site/player/FIN/",
            "/site/running/",
            "/site/data/deal/13.json",
            "/site/data/team/NOPE.json",
            "/site/data/nothing.json",
            "/site/download/secret.csv",
            "/site/js/site/../../../hub/serve/site.py",
        ):
            got = await http.get(path)
            assert got.status_code == 404, path
            assert got.json()["error"] == "not_found", path


# -- the static export's builder on every sample game ---------------------------------------


def sample_engine(name: str) -> Engine:
    path = SAMPLES / f"{name}.toml"
    config = load_config(path)
    decks = load_decks(config, path.parent, dict(os.environ))
    engine = Engine(config, decks)
    for line in (SAMPLES / f"{name}-session.jsonl").read_text().splitlines():
        if line.strip():
            event = {**json.loads(line), "tournament": config.id}
            engine.submit(event, float(event.get("ts", 0.0)))
    engine.tick(float("inf"))
    return engine


@pytest.mark.parametrize(
    ("sample", "unit", "cards", "blinds"),
    [
        ("ifp6", "chips", True, True),
        ("mcr", "points", False, False),
        ("rps-poker", "chips", True, True),  # (its deck is the 52 cards; no hole cards shown)
        ("piecepack", "chips", False, True),
    ],
)
def test_every_game_has_a_site_read_from_its_declaration(
    sample: str, unit: str, cards: bool, blinds: bool
) -> None:
    engine = sample_engine(sample)
    config = engine.state.config
    builder = SiteBuilder(engine_reader(engine), OVERLAYS)
    released = {d for d in range(1, config.deals + 1) if engine.release.deal_released(d)}
    assert released == set(range(1, config.deals + 1))
    assert check_builder(builder, released) > 10
    event = builder.event()
    facts = event["game_facts"]
    assert (facts["unit"], facts["cards"]) == (unit, cards)
    assert event["complete"] is True
    assert len(event["teams"]) == len(config.teams)
    # each team's score card adds up to its chips in the (complete) like-for-like standings
    standings = builder.standings()["like_for_like"]["teams"]
    for team in event["teams"]:
        card = builder.card(team["code"])
        assert card is not None
        row = next(t for t in standings if t["code"] == team["code"])
        assert card["total"]["chips"] == row["chips"], team["code"]
        assert len(card["rows"]) == config.deals * config.seats
        assert all((r["bb"] is not None) == blinds for r in card["rows"] if r["chips"])
        assert abs(sum(r["swing"] for r in card["rows"]) - card["total"]["swing"]) < 0.1
        if sample == "mcr":  # IMPs, a team's on its players' totals: the card says so
            assert card["points_note"] and "total" in card["points_note"]
            assert all(isinstance(r["points"], int) for r in card["rows"])
        else:  # IFP points: none per deal, and the card says they are per session
            assert card["points_note"] and "per session" in card["points_note"]
            assert all(r["points"] is None for r in card["rows"])
        for p in team["players"]:
            mine = builder.card(team["code"], p["seat"])
            assert mine is not None and {r["seat"] for r in mine["rows"]} == {p["seat"]}
            if sample == "mcr":  # a player's IMPs are the sum of their deals'
                assert mine["points_note"] is None
                assert sum(r["points"] for r in mine["rows"]) == mine["total"]["points"]
    # the hand record of a deal: every seat's pieces, the board (the game's own codes)
    deal = builder.deal(1, event["seats"])
    assert deal is not None
    assert deal["record"]["hole"] == engine.payload((PUBLIC, "deal:1"))["hole"]  # type: ignore[index]
    # the export's file names: a page's folder gets its index.html
    assert file_name("") == "index.html" and file_name("deal/3/") == "deal/3/index.html"
    assert file_name("data/deal/3.json") == "data/deal/3.json"


@pytest.mark.parametrize("scoring", ["imp", "chips"])
def test_a_score_cards_points_per_deal_add_up_to_the_standings(
    tmp_path: Path, scoring: str
) -> None:
    """The sample session scored by IMPs (each player's against the average of the same seat
    at the other tables, a team's the sum of its players') or by chips: a score card's
    ``points`` per deal are the hub's (the compare rows'), and a team's (a player's) add up
    to its like-for-like standings' figure, its IMPs (or chips)."""
    path = tmp_path / "ifp6-points.toml"
    text = (SAMPLES / "ifp6.toml").read_text(encoding="utf-8")
    path.write_text(text + f'\n[scoring]\nformat = "{scoring}"\n', encoding="utf-8")
    config = load_config(path)
    engine = Engine(config, load_decks(config, SAMPLES, dict(os.environ)))
    for line in (SAMPLES / "ifp6-session.jsonl").read_text().splitlines():
        if line.strip():
            event = {**json.loads(line), "tournament": config.id}
            engine.submit(event, float(event.get("ts", 0.0)))
    engine.tick(float("inf"))
    builder = SiteBuilder(engine_reader(engine), OVERLAYS)
    event = builder.event()
    assert event["complete"] is True
    column = "imps" if scoring == "imp" else "chips"
    view = builder.standings()["like_for_like"]
    teams = {t["code"]: t[column] for t in view["teams"]}
    moved = 0
    for team in event["teams"]:
        card = builder.card(team["code"])
        assert card is not None and card["points_note"] is None
        assert len(card["rows"]) == config.deals * config.seats
        points = [r["points"] for r in card["rows"]]
        assert all(isinstance(p, int) for p in points)
        assert sum(points) == card["total"]["points"] == teams[team["code"]], team["code"]
        moved += sum(p != 0 for p in points)
        for p in team["players"]:
            mine = builder.card(team["code"], p["seat"])
            assert mine is not None
            assert sum(r["points"] for r in mine["rows"]) == mine["total"]["points"]
    assert moved > len(event["teams"])  # (not a column of zeros)
    if scoring == "chips":  # chips per deal: the result itself
        rows = builder.card(event["teams"][0]["code"])["rows"]  # type: ignore[index]
        assert all(r["points"] == r["chips"] for r in rows)
    body = builder.scorecards_csv().decode("utf-8-sig")
    got = list(csv.DictReader(io.StringIO(body)))
    assert sum(int(r["points"]) for r in got) == sum(teams.values())


# -- a property: no document of the site ever names an unreleased deal ------------------------

SMALL = make_config(seats=3, deals=3)
SMALL_DECKS = make_decks(SMALL)


def play_and_check(
    config: TournamentConfig,
    decks: dict[int, DeckOrder],
    seed: int,
    every: int,
    check: Callable[[Engine, SiteBuilder], int],
) -> int:
    """A random session played on a fresh engine: ``check`` (a count) after every ``every``
    events, and once every deal is released; the counts added up."""
    rng = random.Random(seed)
    engine = Engine(config, decks)
    builder = SiteBuilder(engine_reader(engine), OVERLAYS)
    now = 0.0
    checked = 0
    for i, event in enumerate(simulate_session(config, decks, rng)):
        now += 1.0
        assert engine.submit(event, now).ok
        if i % every == 0:
            checked += check(engine, builder)
    engine.tick(float("inf"))
    return checked + check(engine, builder)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000))
def test_site_documents_never_name_an_unreleased_deal(seed: int) -> None:
    def check(engine: Engine, builder: SiteBuilder) -> int:
        released = {d for d in range(1, SMALL.deals + 1) if engine.release.deal_released(d)}
        return check_builder(builder, released)

    assert play_and_check(SMALL, SMALL_DECKS, seed, 7, check) > 0


def test_the_nginx_config_lets_caches_revalidate_the_site() -> None:
    """``deploy/nginx.conf`` passes the site's ETag and Cache-Control through and compresses
    its JSON and CSV (the edge's own headers decide what is cached)."""
    text = Path(ROOT / "deploy" / "nginx.conf").read_text()
    block = text[text.index("location /site/") :]
    block = block[: block.index("}")]
    assert "proxy_pass http://edges" in block
    assert "gzip_types" in block and "application/json" in block and "text/csv" in block


def test_an_event_of_stages_lists_every_team_and_ends_complete() -> None:
    """``samples/ifp-event.toml``: two groups, then a final of six of the twelve teams."""
    engine = sample_engine("ifp-event")
    config = engine.state.config
    builder = SiteBuilder(engine_reader(engine), OVERLAYS)
    assert check_builder(builder, set(range(1, config.deals + 1))) > 100
    event = builder.event()
    assert event["complete"] is True
    assert len(event["teams"]) == len(config.teams) == 12
    assert all(len(t["players"]) == config.seats for t in event["teams"])
    overall = builder.standings()["like_for_like"]["overall"]
    card = builder.card(overall[0]["code"])
    assert card is not None and card["total"]["rank"] == 1


def test_a_csv_cell_is_never_a_spreadsheet_formula() -> None:
    from hub.serve.site import _csv

    body = _csv(["name", "chips"], [["=HYPERLINK(1)", -5], ["@x", None], ["D. Vera", 0]])
    rows = list(csv.reader(io.StringIO(body.decode("utf-8-sig"))))
    assert rows == [["name", "chips"], ["'=HYPERLINK(1)", "-5"], ["'@x", ""], ["D. Vera", "0"]]


def test_the_downloads_keep_a_venues_names_and_open_in_excel(tmp_path: Path) -> None:
    """The sample session played with names a venue meets (tests/names.py): every CSV starts
    with the UTF-8 byte order mark (without it Excel read the Arabic, Hebrew, Chinese and emoji
    names in the ANSI code page: mojibake) and gives back each name to the byte, commas,
    quotes and line ends quoted (a formula's first character kept as text)."""
    from hub.serve.site import _cell
    from tests.names import TEAMS, names_file

    config = load_config(names_file(tmp_path))
    decks = load_decks(config, ROOT / "samples", dict(os.environ))
    engine = offline(config, decks, session_events(config.id))
    builder = SiteBuilder(engine_reader(engine), OVERLAYS)
    names = {name for name, players in TEAMS.values() for name in (name, *players)}
    for download in ("standings", "running", "travellers", "scorecards"):
        body = builder.document(f"download/{download}.csv").body  # type: ignore[union-attr]
        assert body.startswith(b"\xef\xbb\xbf"), download
        rows = list(csv.DictReader(io.StringIO(body.decode("utf-8-sig"), newline="")))
        shown = {r.get("name") or r.get("player") for r in rows}
        assert {str(_cell(n)) for n in names} & shown, download
    standings = list(csv.reader(io.StringIO(builder.standings_csv().decode("utf-8-sig"))))
    header = standings[0]
    teams = {r[header.index("team")]: r[header.index("name")] for r in standings if r[0] == "team"}
    assert teams == {t: str(_cell(name)) for t, (name, _) in TEAMS.items()}
    players = {r[header.index("name")] for r in standings if r[0] == "player"}
    assert players == {str(_cell(p)) for _, ps in TEAMS.values() for p in ps}
