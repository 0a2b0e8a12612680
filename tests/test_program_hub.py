"""The program feed on a real hub (role all, in a thread of its own): websockets over loopback
with a 2-second delay, and ``compare.html?feed=program`` in Chromium."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect
from websockets.sync.client import ClientConnection, connect

from hub.engine.core import Engine
from hub.wire import codec
from hub.wire.patch import apply_patch, clone
from tests.hubharness import COMMENTATOR
from tests.test_overlays_hub import HubThread
from tests.test_stats_browser import pct, signed

DELAY = 2.0


@pytest.fixture
def hub() -> Iterator[HubThread]:
    h = HubThread("prog")
    h.config = dataclasses.replace(h.config, program_delay=DELAY)
    h.start()
    try:
        yield h
    finally:
        h.stop()


class Timed:
    """A websocket client keeping each topic's state and when each of its frames arrived."""

    def __init__(self, url: str) -> None:
        self.ws: ClientConnection = connect(url, max_size=None).__enter__()  # the test closes it
        json.loads(self.ws.recv())  # hello
        self.states: dict[str, Any] = {}
        self.frames: list[tuple[float, dict[str, Any]]] = []
        self.errors: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for raw in self.ws:
                got = time.time()
                m = json.loads(raw)
                if m.get("type") == "snapshot":
                    self.states[m["topic"]] = clone(m["data"])
                elif m.get("type") == "delta":
                    self.states[m["topic"]] = apply_patch(self.states[m["topic"]], m["patch"])
                elif m.get("type") == "error":
                    self.errors.append(m)
                    continue
                else:
                    continue
                self.frames.append((got, m))
        except Exception:  # closed
            return

    def subscribe(self, topics: list[str]) -> None:
        self.ws.send(json.dumps({"op": "subscribe", "topics": topics}))

    def wait(self, predicate: Any, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not predicate(self):
            assert time.monotonic() < deadline, "feed condition not reached"
            time.sleep(0.02)

    def first(self, topic: str, after: float, test: Any = lambda s: True) -> float | None:
        for got, m in self.frames:
            if m["topic"] == topic and got >= after and test(m):
                return got
        return None


def test_program_frames_come_a_delay_after_the_live_ones_and_hold_until_release(
    hub: HubThread,
) -> None:
    first = hub.events[0]
    table, deal = first["table"], first["deal"]
    ws = f"ws://127.0.0.1:{hub.port}/ws"
    live = Timed(f"{ws}?token={COMMENTATOR}")
    program = Timed(f"{ws}?feed=program")  # no token: any role may take the program
    try:
        live.subscribe([f"table:{table}"])
        program.subscribe([f"table:{table}", f"compare:{deal}:1", "standings", "projection"])
        live.wait(lambda c: f"table:{table}" in c.states, 5)
        program.wait(lambda c: f"table:{table}" in c.states and "standings" in c.states, 5)
        assert [e["code"] for e in program.errors] == ["forbidden"]  # public role: no projection
        before = clone(program.states["standings"])
        assert program.states[f"compare:{deal}:1"]["held"] is True
        mark = time.time()
        hub.play([first])
        records = hub.run(hub.bus.read(f"dup:{hub.config.id}:journal", "0-0", 10))
        at = float(codec.unpack(records[0][1])["at"])
        live.wait(lambda c: c.states[f"table:{table}"].get("deal") == deal, 5)
        program.wait(lambda c: c.states[f"table:{table}"].get("held"), 5)
        live_got = live.first(f"table:{table}", mark)
        program_got = program.first(f"table:{table}", mark)
        assert live_got is not None and program_got is not None
        assert live_got - at < 1.0
        # No earlier than at + delay, and within a tick (0.25 s) and some load after it.
        assert at + DELAY <= program_got <= at + DELAY + 1.0, program_got - at
        held = program.states[f"table:{table}"]
        assert held == {"held": True, "deal": deal, "reason": "hand in progress", "table": table}
        assert "hole" not in json.dumps(program.states)

        hub.play(hub.events[1:])  # the session: every deal released, then shown
        program.wait(lambda c: not c.states[f"compare:{deal}:1"].get("held"), 30)
        shown = program.states[f"compare:{deal}:1"]
        assert shown["deal"] == deal and any(r["actions"] for r in shown["rows"])
        program.wait(lambda c: c.states["standings"] != before, 30)  # released deals scored
        with httpx.Client(base_url=hub.url) as http:  # REST takes the feed too
            body = http.get(f"/api/compare/{deal}/1", params={"feed": "program"}).json()
            assert body["data"]["deal"] == deal and "held" not in body["data"]
        with connect(f"{ws}?feed=nope") as bad:  # only the program is a feed to ask for
            assert json.loads(bad.recv())["code"] == "bad_request"
    finally:
        live.ws.close()
        program.ws.close()


def states_of(client: Timed, topic: str) -> Iterator[tuple[float, dict[str, Any]]]:
    """Each state a client held of ``topic``, with the arrival of the frame that made it."""
    state: Any = None
    for got, m in client.frames:
        if m["topic"] != topic:
            continue
        state = clone(m["data"]) if m["type"] == "snapshot" else apply_patch(state, m["patch"])
        yield got, state


def first_counted(client: Timed) -> dict[int, float]:
    """deal -> when the client's ``stats`` first counted it."""
    out: dict[int, float] = {}
    for got, state in states_of(client, "stats"):
        for d in state["deals"]:
            out.setdefault(d, got)
    return out


def release_times(hub: HubThread) -> dict[int, float]:
    """deal -> the ``at`` (the hub's clock) of the journal record that released it: the
    journal replayed through an engine of its own."""
    records = hub.run(hub.bus.read(f"dup:{hub.config.id}:journal", "0-0", 1_000_000))
    engine = Engine(hub.config, hub.decks, program=False)
    out: dict[int, float] = {}
    for _, raw in records:
        record = codec.unpack(raw)
        engine.restore(record)
        engine.tick(float(record["at"]))
        for d in range(1, hub.config.deals + 1):
            if d not in out and engine.release.deal_released(d):
                out[d] = float(record["at"])
    return out


def test_program_statistics_come_a_delay_after_the_public_ones_and_hold_until_release(
    hub: HubThread,
) -> None:
    """The statistics on the program (issue #34): ``stats`` counts a deal a delay after the
    public's did, never one the public has not; ``dealstats:{d}`` holds until the public's
    exists, then shows the delayed play. Caught up, the program's ``stats`` is the public's
    and its ``dealstats`` the live one, over the websocket and REST alike."""
    deal = hub.events[0]["deal"]
    topics = ["stats", f"dealstats:{deal}"]
    ws = f"ws://127.0.0.1:{hub.port}/ws"
    public = Timed(ws)
    program = Timed(f"{ws}?feed=program")
    try:
        public.subscribe(topics)
        program.subscribe(topics)
        program.wait(lambda c: all(t in c.states for t in topics), 5)
        public.wait(lambda c: "stats" in c.states, 5)
        hold = {"held": True, "deal": deal, "reason": "hand in progress"}
        assert program.states[f"dealstats:{deal}"] == hold
        assert program.states["stats"]["deals"] == [] == public.states["stats"]["deals"]

        hub.play(hub.events)
        final = hub.rest("/api/stats")
        assert deal in final["deals"]  # the session released every deal
        program.wait(lambda c: c.states["stats"]["deals"] == final["deals"], 30)
        program.wait(lambda c: not c.states[f"dealstats:{deal}"].get("held"), 30)
        assert program.states["stats"] == final
        live = hub.rest(f"/api/dealstats/{deal}", COMMENTATOR)
        assert program.states[f"dealstats:{deal}"] == live == hub.rest(f"/api/dealstats/{deal}")

        # Each deal counted no earlier than its release (the hub's clock, from the journal)
        # plus the delay, and soon after it.
        public_at, program_at = first_counted(public), first_counted(program)
        assert set(program_at) == set(public_at) == set(final["deals"])
        released_at = release_times(hub)
        for d, got in program_at.items():
            assert released_at[d] + DELAY <= got <= released_at[d] + DELAY + 10.0, (
                d,
                got - released_at[d],
            )
        # The deal's statistics: the hold until the public's came (its release), then play.
        released = public.first(f"dealstats:{deal}", 0.0)
        assert released is not None
        for got, state in states_of(program, f"dealstats:{deal}"):
            assert state == hold or got >= released, (got, released)
        with httpx.Client(base_url=hub.url) as http:  # REST takes the feed too
            for path, topic in (("/api/stats", "stats"), (f"/api/dealstats/{deal}", topics[1])):
                body = http.get(path, params={"feed": "program"}).json()
                assert body["data"] == program.states[topic], path
    finally:
        public.ws.close()
        program.ws.close()


@pytest.mark.browser
def test_stats_page_on_the_program_holds_then_shows_the_delayed_statistics(
    page: Page, hub: HubThread
) -> None:
    """``stats.html?feed=program``: one deal's seats held in words until the deal is
    released, then the hub's program figures; the players, once the program caught up."""
    deal = hub.events[0]["deal"]
    page.goto(f"{hub.url}/overlays/stats.html?feed=program&deal={deal}")
    held = page.locator('[data-testid="held"]')
    gfx = page.locator('[data-testid="gfx"]')
    expect(held).to_have_text(f"Hand in progress · deal {deal}", timeout=5000)
    expect(gfx).to_have_attribute("data-visible", "false")
    hub.play(hub.events)
    final = hub.rest("/api/stats")
    deadline = time.monotonic() + 30
    while program_rest(hub, "/api/stats")["deals"] != final["deals"]:  # caught up
        assert time.monotonic() < deadline
        time.sleep(0.1)
    expect(held).to_be_hidden(timeout=5000)
    expect(gfx).to_have_attribute("data-visible", "true", timeout=5000)
    d = program_rest(hub, f"/api/dealstats/{deal}")
    seats = page.locator('[data-testid="stats-seat"]')
    expect(seats).to_have_count(sum(1 for s in d["seats"] if s["tables"]), timeout=5000)
    first = next(s for s in d["seats"] if s["tables"])
    best = first["best"]
    expect(seats.first.locator('[data-testid="stats-best"]')).to_have_text(
        f"T{best['table']} {signed(best['chips'])}"
    )
    page.goto(f"{hub.url}/overlays/stats.html?feed=program&top=6")
    rows = page.locator('[data-testid="stats-player"]')
    expect(rows).to_have_count(6, timeout=5000)
    s = program_rest(hub, "/api/stats")
    ranked = sorted((p for p in s["players"] if p["hands"]), key=lambda p: (-p["swing"], p["id"]))
    for i, p in enumerate(ranked[:6]):
        expect(rows.nth(i)).to_have_attribute("data-id", p["id"])
        expect(rows.nth(i).locator('[data-testid="stats-vpip"]')).to_have_text(pct(p["vpip"]))
        expect(rows.nth(i).locator('[data-testid="stats-swing"]')).to_have_text(signed(p["swing"]))


def program_rest(hub: HubThread, path: str) -> Any:
    response = httpx.get(hub.url + path, params={"feed": "program"}, timeout=5)
    response.raise_for_status()
    return response.json()["data"]


@pytest.mark.browser
def test_compare_page_on_the_program_holds_then_shows_the_play(page: Page, hub: HubThread) -> None:
    first = hub.events[0]
    deal = first["deal"]
    page.goto(f"{hub.url}/overlays/compare.html?feed=program&deal={deal}&seat=1")
    held = page.locator('[data-testid="held"]')
    expect(held).to_have_text(f"Hand in progress · deal {deal}", timeout=5000)
    expect(page.locator('[data-testid="gfx"]')).to_have_attribute("data-visible", "false")
    hub.play(hub.events)
    expect(held).to_be_hidden(timeout=30_000)
    expect(page.locator('[data-testid="gfx"]')).to_have_attribute(
        "data-visible", "true", timeout=5000
    )
    expect(page.locator('[data-testid="compare-panel"]')).to_have_count(
        len(hub.config.tables), timeout=5000
    )


@pytest.mark.browser
def test_table_and_desk_on_the_program_hold_in_words(page: Page, hub: HubThread) -> None:
    first = hub.events[0]
    table, deal = first["table"], first["deal"]
    hub.play([first])
    time.sleep(DELAY + 0.5)  # the program has reached the start
    page.goto(f"{hub.url}/overlays/table.html?feed=program&table={table}")
    expect(page.locator('[data-testid="held"]')).to_have_text(
        f"Hand in progress · deal {deal} · table {table}", timeout=5000
    )
    expect(page.locator('[data-testid="hole"]')).to_have_count(0)
    page.goto(f"{hub.url}/overlays/commentator.html?feed=program&deal={deal}&seat=1&stats=1")
    box = page.locator(f'[data-testid="com-table"][data-table="{table}"]')
    expect(box.locator('[data-testid="com-held"]')).to_have_text(
        f"Hand in progress · deal {deal} · table {table}", timeout=5000
    )
    # the statistics panel reads the program's too: the deal's held in words
    expect(page.locator('[data-testid="stats-summary"]')).to_have_text(
        f"Hand in progress · deal {deal}", timeout=5000
    )
    expect(page.locator('[data-testid="com-hole"]')).to_have_count(0)
    expect(page.locator('[data-testid="onair-deal"]')).to_contain_text("Hand in progress")
    got = page.evaluate(
        """async () => {
        const m = await import('./js/duplicast.js');
        return [m.params('?feed=program').feed, m.params('').feed,
          m.holdText({held: true, deal: 4, reason: 'hand in progress', seat: 2})];
    }"""
    )
    assert got == ["program", None, "Hand in progress · deal 4"]


VENUE = 0.5  # a second output, the venue's screens: [broadcast.outputs] venue


@pytest.fixture
def outputs_hub() -> Iterator[HubThread]:
    h = HubThread("progout")
    h.config = dataclasses.replace(h.config, program_delay=DELAY, program_outputs={"venue": VENUE})
    h.start()
    try:
        yield h
    finally:
        h.stop()


def test_each_output_comes_at_its_own_delay_and_holds_until_release(
    outputs_hub: HubThread,
) -> None:
    """``?feed=program&output=venue`` and ``?feed=program`` over real websockets: the same
    moment at ``at + 0.5 s`` on the venue, at ``at + 2 s`` on the default output, each held
    until its deal is released; unknown outputs and an output without the program refused."""
    hub = outputs_hub
    first = hub.events[0]
    table, deal = first["table"], first["deal"]
    ws = f"ws://127.0.0.1:{hub.port}/ws"
    venue = Timed(f"{ws}?feed=program&output=venue")
    program = Timed(f"{ws}?feed=program")
    try:
        for client in (venue, program):
            client.subscribe([f"table:{table}", f"compare:{deal}:1"])
            client.wait(lambda c: f"table:{table}" in c.states, 5)
        mark = time.time()
        hub.play([first])
        records = hub.run(hub.bus.read(f"dup:{hub.config.id}:journal", "0-0", 10))
        at = float(codec.unpack(records[0][1])["at"])
        for client in (venue, program):
            client.wait(lambda c: c.states[f"table:{table}"].get("held"), 5)
        venue_got = venue.first(f"table:{table}", mark)
        program_got = program.first(f"table:{table}", mark)
        assert venue_got is not None and program_got is not None
        assert at + VENUE <= venue_got <= at + VENUE + 1.0, venue_got - at
        assert at + DELAY <= program_got <= at + DELAY + 1.0, program_got - at
        held = {"held": True, "deal": deal, "reason": "hand in progress", "table": table}
        assert venue.states[f"table:{table}"] == program.states[f"table:{table}"] == held

        hub.play(hub.events[1:])  # every deal released: both outputs show the play
        for client in (venue, program):
            client.wait(lambda c: not c.states[f"compare:{deal}:1"].get("held"), 30)
            assert any(r["actions"] for r in client.states[f"compare:{deal}:1"]["rows"])
        with httpx.Client(base_url=hub.url) as http:  # REST takes the output too
            params = {"feed": "program", "output": "venue"}
            body = http.get(f"/api/compare/{deal}/1", params=params).json()
            assert body["data"]["deal"] == deal and "held" not in body["data"]
            params["output"] = "nope"
            got = http.get(f"/api/compare/{deal}/1", params=params)
            assert got.status_code == 404 and got.json()["error"] == "unknown_output"
            got = http.get(f"/api/compare/{deal}/1", params={"output": "venue"})
            assert got.status_code == 400 and got.json()["error"] == "bad_request"
        with connect(f"{ws}?feed=program&output=nope") as bad:
            refused = json.loads(bad.recv())
            assert refused["code"] == "unknown_output"
            assert refused["message"] == "no program output named 'nope' (outputs: program, venue)"
        with connect(f"{ws}?token={COMMENTATOR}&output=venue") as bad:  # not the live feed
            assert json.loads(bad.recv())["code"] == "bad_request"
    finally:
        venue.ws.close()
        program.ws.close()


@pytest.mark.browser
def test_a_page_reads_the_output_its_url_names(page: Page, outputs_hub: HubThread) -> None:
    """``table.html?feed=program&output=venue``: the page passes ``output`` through as it
    passes ``feed``, so the venue's screens subscribe to the venue output and hold in words."""
    hub = outputs_hub
    first = hub.events[0]
    table, deal = first["table"], first["deal"]
    hub.play([first])
    page.goto(f"{hub.url}/overlays/table.html?feed=program&output=venue&table={table}")
    expect(page.locator('[data-testid="held"]')).to_have_text(
        f"Hand in progress · deal {deal} · table {table}", timeout=5000
    )
    assert hub.source is not None
    keys = set(hub.source.fanout._subs)
    assert ("program:venue", f"table:{table}") in keys
    assert ("program", f"table:{table}") not in keys
    got = page.evaluate(
        """async () => {
        const m = await import('./js/duplicast.js');
        return [m.params('?feed=program&output=venue').output, m.params('?feed=program').output];
    }"""
    )
    assert got == ["venue", None]
