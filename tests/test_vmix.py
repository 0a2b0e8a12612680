"""The vMix data sources (``/api/vmix/…``, docs/vmix.md) on a real hub (role all, in a thread
of its own) with a 1.5 s programme delay: every source in JSON and XML (an array of flat rows,
columns named as title fields, the XML well-formed and the same rows), ``304`` on a repeated
poll, no token taken, the embargo (a split screen of a deal not released is never a row of a
public or programme source) and ``feed=program`` lagging the public feed by its delay."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any
from xml.etree import ElementTree

import httpx
import pytest

from hub.engine.families import FAMILIES
from hub.serve.datasources import source_path
from hub.wire.datasources import SOURCES, Column, Source, flatten, to_xml
from tests.hubharness import COMMENTATOR
from tests.test_overlays_hub import HubThread

DELAY = 1.5
VENUE = 0.3  # a second programme output, [broadcast.outputs] venue
STEP = 150  # session events played between two rounds of reads


@pytest.fixture
def hub() -> Iterator[HubThread]:
    h = HubThread("vmix")
    h.config = dataclasses.replace(h.config, program_delay=DELAY, program_outputs={"venue": VENUE})
    h.start()
    try:
        yield h
    finally:
        h.stop()


def url(name: str, fmt: str, **args: int) -> str:
    path = source_path(SOURCES[name])
    for param, value in args.items():
        path = path.replace(f"{{{param}:int}}", str(value))
    return f"{path}.{fmt}"


def released_deal(h: HubThread) -> int:
    assert h.source is not None
    engine = h.source.engine
    return next(d for d in range(1, h.config.deals + 1) if engine.release.deal_released(d))


def args_of(name: str, deal: int) -> dict[str, int]:
    values = {"seat": 1, "table": 1, "deal": deal}
    return {p: values[p] for p in FAMILIES[SOURCES[name].family].params}


def xml_rows(body: bytes) -> list[dict[str, str]]:
    root = ElementTree.fromstring(body)  # (raises on anything not well-formed)
    assert root.tag == "data"
    rows = []
    for row in root:
        assert row.tag == "row" and len(row.attrib) == 0
        cells = {}
        for cell in row:
            assert len(cell) == 0, "a nested element in a row"
            cells[cell.tag] = cell.text or ""
        rows.append(cells)
    return rows


def test_every_source_in_json_and_xml_is_flat_rows_named_as_title_fields(hub: HubThread) -> None:
    hub.play(hub.events[:1500])
    deal = released_deal(hub)
    with httpx.Client(base_url=hub.url, timeout=10) as http:
        listing = http.get("/api/vmix").json()["sources"]
        assert [s["source"] for s in listing] == list(SOURCES)
        for name, source in SOURCES.items():
            columns = [c.name for c in source.columns]
            got = http.get(url(name, "json", **args_of(name, deal)))
            assert got.status_code == 200, (name, got.text)
            assert got.headers["content-type"] == "application/json"
            rows = got.json()
            assert isinstance(rows, list) and rows, name
            for row in rows:
                assert list(row) == columns, name
                assert all(isinstance(v, str) for v in row.values()), (name, row)
                assert all(c.endswith((".Text", ".Source")) for c in row), name
            xml = http.get(url(name, "xml", **args_of(name, deal)))
            assert xml.status_code == 200 and xml.headers["content-type"].startswith(
                "application/xml"
            )
            assert xml_rows(xml.content) == rows, name
            # a poll of the same state is answered 304, with no body
            again = http.get(
                url(name, "json", **args_of(name, deal)),
                headers={"if-none-match": got.headers["etag"]},
            )
            assert again.status_code == 304 and again.content == b"", name
            assert again.headers["etag"] == got.headers["etag"]
            assert got.headers["cache-control"] == "max-age=1"
        # what the rows say is the topic's: the leaderboard is the public standings' rows
        teams = http.get("/api/standings").json()["data"]["like_for_like"]["teams"]
        board = http.get(url("leaderboard", "json")).json()
        assert [r["Code.Text"] for r in board] == [t["code"] for t in teams]
        assert [r["Rank.Text"] for r in board] == [str(t["rank"]) for t in teams]
        flag = http.get(board[0]["Flag.Source"].removeprefix(hub.url))
        assert flag.status_code == 200 and flag.content.startswith(b"\x89PNG")
        # the public table source has no stack, cards or bets: the public payload has none
        seats = http.get(url("table", "json", table=1)).json()
        assert all(r["Cards.Text"] == "" and r["Stack.Text"] == "" for r in seats)
        # a state that moved is a new ETag
        before = http.get(url("leaderboard", "json")).headers["etag"]
        hub.play(hub.events[1500:])
        after = http.get(url("leaderboard", "json"), headers={"if-none-match": before})
        assert after.status_code == 200 and after.headers["etag"] != before


def test_no_token_and_no_wrong_output(hub: HubThread) -> None:
    hub.play(hub.events[:300])
    with httpx.Client(base_url=hub.url, timeout=10) as http:
        for query in ({"token": COMMENTATOR}, {"TOKEN": COMMENTATOR}, {"token": "nobody"}):
            got = http.get(url("leaderboard", "json"), params=query)
            assert got.status_code == 400 and "takes no token" in got.json()["message"]
        # a token in a header reads the public feed all the same (a source is for the air)
        live = http.get("/api/tables/1", params={"token": COMMENTATOR}).json()["data"]
        assert any(s.get("hole") for s in live["seats"])
        seats = http.get(
            url("table", "json", table=1), headers={"authorization": f"Bearer {COMMENTATOR}"}
        ).json()
        assert all(r["Cards.Text"] == "" for r in seats)
        got = http.get(url("ticker", "json"), params={"feed": "program", "output": "nope"})
        assert got.status_code == 404 and got.json()["error"] == "unknown_output"
        got = http.get(url("ticker", "json"), params={"output": "venue"})
        assert got.status_code == 400
        assert http.get(url("table", "json", table=99)).status_code == 404
        # the leaderboard takes the standings' selection (the family's query and select)
        whole = http.get(url("leaderboard", "json")).json()
        assert http.get(url("leaderboard", "json"), params={"group": "A"}).json() == whole
        assert http.get(url("leaderboard", "json"), params={"group": "Z"}).json() == []
        got = http.get(url("leaderboard", "json"), params={"scope": "session"})
        assert got.status_code == 404 and "only group selects" in got.json()["message"]
        assert http.get("/api/vmix/colour/nothex.png").status_code == 404


def test_unreleased_split_screen_never_a_row_and_program_lags(hub: HubThread) -> None:
    """While the session is played in steps, no public or programme split screen (nor ticker
    line) has a row of a deal the real engine had not released; the programme's leaderboard
    shows the public one's state about DELAY late."""
    assert hub.source is not None
    engine = hub.source.engine
    deals = range(1, hub.config.deals + 1)
    feeds = {
        "public": {},
        "program": {"feed": "program"},
        "venue": {"feed": "program", "output": "venue"},
    }
    leaks: list[tuple[int, str, str]] = []
    shown = 0
    with httpx.Client(base_url=hub.url, timeout=10) as http:
        last = len(hub.events) - STEP  # the session's last events: the last deal's release
        for start in range(0, last, STEP):
            hub.play(hub.events[start : min(start + STEP, last)])
            for feed, query in feeds.items():
                for deal in deals:
                    for fmt in ("json", "xml"):
                        got = http.get(url("compare", fmt, deal=deal, seat=1), params=query)
                        assert got.status_code == 200, got.text
                        rows = got.json() if fmt == "json" else xml_rows(got.content)
                        # Released is for ever: asked after the answer, it was not before.
                        if rows and not engine.release.deal_released(deal):
                            leaks.append((start, feed, f"compare {deal} {fmt}"))
                        shown += bool(rows)
                ticker = http.get(url("ticker", "json"), params=query).json()
                for row in ticker:
                    if row["Deal.Text"] and not engine.release.deal_released(int(row["Deal.Text"])):
                        leaks.append((start, feed, f"ticker {row['Headline.Text']}"))
        assert shown > 0 and not leaks, leaks

        # The programme lags: caught up, then the session's last events played, the public
        # leaderboard has the last deal released at once, each output's only its delay later
        # (the venue's, 0.3 s, before the programme's, 1.5 s).
        def board(query: dict[str, str]) -> Any:
            return http.get(url("leaderboard", "json"), params=query).json()

        time.sleep(DELAY + 0.5)
        before = board({})
        assert board(feeds["program"]) == before
        played = time.monotonic()
        hub.play(hub.events[last:])
        public = board({})  # (``play`` returns once the feed published what it moved)
        assert public != before
        if time.monotonic() - played < DELAY * 0.6:  # (a loaded machine: as the venue's, below)
            assert board(feeds["program"]) == before
        while board(feeds["venue"]) != public:
            assert time.monotonic() < played + DELAY + 10
            time.sleep(0.05)
        venue = time.monotonic() - played
        if venue < DELAY * 0.6:  # (the programme still waits; on a loaded machine, not known)
            assert board(feeds["program"]) == before, venue
        while board(feeds["program"]) != public:
            assert time.monotonic() < played + DELAY + 10
            time.sleep(0.05)
        lag = time.monotonic() - played
        assert lag >= DELAY * 0.8 and lag > venue, (lag, venue)


def test_feed_program_without_a_delay_is_refused() -> None:
    h = HubThread("vmixnodelay")
    h.start()
    try:
        h.play(h.events[:300])
        with httpx.Client(base_url=h.url, timeout=10) as http:
            got = http.get(url("leaderboard", "json"), params={"feed": "program"})
            assert got.status_code == 404 and got.json()["error"] == "unknown_output"
            assert "no [broadcast] delay" in got.json()["message"]
            assert http.get(url("leaderboard", "json")).json()
    finally:
        h.stop()


def test_flatten_holds_back_and_columns_are_title_fields() -> None:
    source = SOURCES["compare"]
    assert flatten(source, {"held": True, "deal": 3, "reason": "hand in progress"}) == []
    assert flatten(source, None) == []
    with pytest.raises(ValueError, match="title field"):
        Source("x", "ticker", lambda doc: [], (Column("Headline", lambda r, d: ""),))
    with pytest.raises(ValueError, match="twice"):
        cell = Column("A.Text", lambda r, d: "")
        Source("x", "ticker", lambda doc: [], (cell, cell))
    for s in SOURCES.values():
        assert s.family in FAMILIES


def test_xml_escapes_what_a_name_may_hold() -> None:
    source = SOURCES["ticker"]
    payload = {"items": [{"text": 'A & B <"C"> \x01end', "kind": "swing", "table": 1, "deal": 2}]}
    rows = flatten(source, payload)
    assert rows[0]["Deal.Text"] == "2" and rows[0]["Kind.Text"] == "swing"
    parsed = ElementTree.fromstring(to_xml(source, rows))
    assert parsed.find("row/Headline.Text").text == 'A & B <"C"> end'  # (no control char)
