"""The sample event (two groups, two sessions each, a final) through the real hub: consoles
play the whole log, REST serves each block (per session, per stage, across groups, overall,
one group), and the leaderboard in Debian Chromium shows the same rows for the same selection.
Screenshots go to test-artifacts/screenshots/event-*.png."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from hub.files.config import load_config
from hub.files.decks import load_decks
from hub.wire.standings_select import select_standings
from tests.hubharness import COMMENTATOR, session_events
from tests.test_event import SAMPLE, SAMPLE_LOG
from tests.test_overlays_hub import (
    HubThread,
    open_page,
    points,
    shot,
    signed,
    team_row,
)

pytestmark = pytest.mark.browser


class EventHub(HubThread):
    def __init__(self) -> None:
        super().__init__("event")
        config = load_config(SAMPLE)
        self.decks = load_decks(config, SAMPLE.parent, {})
        self.config = dataclasses.replace(config, id=f"event-{uuid.uuid4().hex[:8]}")
        self.events = session_events(self.config.id, SAMPLE_LOG)


@pytest.fixture(scope="module")
def event_hub() -> Iterator[EventHub]:
    h = EventHub()
    h.start()
    # Stage by stage, as an event plays: the final's tables start once the groups are over
    # (the ingest keeps each table's order, not an order across tables' pipelined consoles).
    final = {t for g in h.config.plan.stages[-1].groups for t in h.config.groups[g].tables}
    h.play([e for e in h.events if e["table"] not in final])
    h.play([e for e in h.events if e["table"] in final])
    h.sent = len(h.events)
    yield h
    h.stop()


def rest(hub: EventHub, query: str, token: str | None = None) -> httpx.Response:
    url = f"{hub.url}/api/standings?{query}" + (f"&token={token}" if token else "")
    return httpx.get(url, timeout=5)


def test_rest_serves_each_block_of_the_event(event_hub: EventHub) -> None:
    full = event_hub.rest("/api/standings")
    assert full["event"]["current"] == {"session": "3", "stage": "final"}
    for query, picked in [
        ("scope=session&session=1", {"scope": "session", "session": "1"}),
        ("session=2&group=B", {"session": "2", "group": "B"}),
        ("stage=groups", {"stage": "groups"}),
        ("stage=groups&group=A", {"stage": "groups", "group": "A"}),
        ("scope=across&stage=groups", {"scope": "across", "stage": "groups"}),
        ("scope=overall", {"scope": "overall"}),
        ("stage=final", {"stage": "final"}),
    ]:
        r = rest(event_hub, query)
        assert r.status_code == 200, (query, r.text)
        expected = select_standings(full, **picked)
        assert isinstance(expected, dict)
        assert r.json()["data"] == expected, query
    session1 = rest(event_hub, "session=1").json()["data"]
    assert {r["group"] for r in session1["like_for_like"]["teams"]} == {"A", "B"}
    assert session1["like_for_like"]["seats"], "a session carries its seat rankings"
    overall = rest(event_hub, "scope=overall").json()["data"]["like_for_like"]["teams"]
    assert [r["stage"] for r in overall] == ["final"] * 6 + ["groups"] * 6
    live = rest(event_hub, "stage=groups", COMMENTATOR).json()["data"]
    assert "running" in live and "running" not in rest(event_hub, "stage=groups").json()["data"]
    for bad in ("stage=semi", "session=9", "scope=sideways", "stage=final&group=A"):
        r = rest(event_hub, bad)
        assert r.status_code == 404 and r.json()["error"] == "not_found", bad


def expect_rows(
    page: Page,
    rows: list[dict[str, Any]],
) -> None:
    expect(page.locator('[data-testid="team-row"]')).to_have_count(len(rows))
    for t in rows:
        row = team_row(page, t["team"])
        expect(row.locator('[data-testid="team-points"]')).to_have_text(points(t["points"]))
        expect(row.locator('[data-testid="team-chips"]')).to_have_text(signed(t["chips"]))
        expect(row.locator('[data-testid="team-rank"]')).to_have_text(str(t["rank"]))
    ranks = page.locator('[data-testid="team-row"] [data-testid="team-rank"]').all_inner_texts()
    assert ranks == [str(t["rank"]) for t in sorted(rows, key=lambda r: (r["rank"], r["code"]))]


def test_leaderboard_follows_stage_session_group_and_overall(
    page: Page,
    event_hub: EventHub,
) -> None:
    cases = [
        ("", "stage=final", "Final · Like-for-like"),
        ("stage=groups&group=B", "stage=groups&group=B", "Group stage · Like-for-like"),
        ("session=1&group=A", "session=1&group=A", "Group stage, session 1 · Like-for-like"),
        ("scope=across&stage=groups", "scope=across&stage=groups", "Group stage · all groups"),
        ("scope=overall", "scope=overall", "Overall · Like-for-like"),
    ]
    for url_query, rest_query, label in cases:
        open_page(page, event_hub, f"leaderboard.html?slot=0&{url_query}")
        block = rest(event_hub, rest_query).json()["data"]["like_for_like"]["teams"]
        expect(page.locator('[data-testid="view-label"]')).to_contain_text(label)
        expect_rows(page, block)
        shot(page, f"event-leaderboard-{(url_query or 'current').replace('&', '-')}")
    # The group stage, session by session: "after N of 6 deals" counts that session's deals.
    open_page(page, event_hub, "leaderboard.html?slot=0&session=2&group=A")
    expect(page.locator('[data-testid="after-deals"]')).to_have_text("after 6 of 6 deals")
