"""The program feed over REST agrees with the program feed over the websocket (DESIGN §7
"Program feed (secure delay)"), on a real hub (role all, in a thread of its own) with two
outputs: the default ``program`` 1 s behind play and ``venue`` 0.5 s behind.

While the sample session is played in steps, every REST read of a program topic that shows a
deal's play (``/api/tables/N``, ``/api/deals/D``, ``/api/compare/D/S``, ``/api/dealstats/D``,
``/api/stats``, with ``?feed=program`` and ``&output=venue``) shows either the hold payload or
deals the real engine had released (the embargo). After the session, with the outputs caught
up, each table's REST answer is the state a websocket client following that output's
``table:N`` holds: the same last deal as the live table (table 2 ends with deal 7 in the
sample's schedule)."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from hub.wire.patch import apply_patch, clone
from tests.hubharness import COMMENTATOR
from tests.test_overlays_hub import HubThread

DELAY = 1.0
VENUE = 0.5
OUTPUTS = {"program": {"feed": "program"}, "venue": {"feed": "program", "output": "venue"}}
STEP = 120  # session events played between two rounds of REST reads


@pytest.fixture
def hub() -> Iterator[HubThread]:
    h = HubThread("progrest")
    h.config = dataclasses.replace(h.config, program_delay=DELAY, program_outputs={"venue": VENUE})
    h.start()
    try:
        yield h
    finally:
        h.stop()


class Follower:
    """A websocket client of one program output keeping each topic's state."""

    def __init__(self, url: str, topics: list[str]) -> None:
        self.ws: ClientConnection = connect(url, max_size=None).__enter__()  # closed by the test
        assert json.loads(self.ws.recv())["type"] == "hello"
        self.states: dict[str, Any] = {}
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        self.ws.send(json.dumps({"op": "subscribe", "topics": topics}))

    def _read(self) -> None:
        try:
            for raw in self.ws:
                m = json.loads(raw)
                if m.get("type") == "snapshot":
                    self.states[m["topic"]] = clone(m["data"])
                elif m.get("type") == "delta":
                    self.states[m["topic"]] = apply_patch(self.states[m["topic"]], m["patch"])
        except Exception:  # closed
            return


def shown_deals(family: str, data: dict[str, Any], arg: int) -> list[int]:
    """The deals whose play a program answer shows (none: held, or nothing yet)."""
    if data.get("held"):
        return []
    if family == "stats":  # the deals its statistics count
        return list(data["deals"])
    if family != "tables":
        return [arg]
    deal = data.get("deal")
    shown = data.get("last_deal") if deal is None else deal
    return [] if shown is None else [shown]


def test_program_over_rest_is_the_websocket_program_and_never_ahead_of_release(
    hub: HubThread,
) -> None:
    assert hub.source is not None
    engine = hub.source.engine
    tables = sorted(hub.config.tables)
    deals = range(1, hub.config.deals + 1)
    topics = [f"table:{t}" for t in tables]
    ws = f"ws://127.0.0.1:{hub.port}/ws"
    followers = {
        name: Follower(ws + "?" + "&".join(f"{k}={v}" for k, v in q.items()), topics)
        for name, q in OUTPUTS.items()
    }
    paths = [("tables", t, f"/api/tables/{t}") for t in tables]
    paths += [("deals", d, f"/api/deals/{d}") for d in deals]
    paths += [("compare", d, f"/api/compare/{d}/1") for d in deals]
    paths += [("dealstats", d, f"/api/dealstats/{d}") for d in deals]
    paths += [("stats", 0, "/api/stats")]
    leaks: list[tuple[int, str, str, int]] = []
    reads = 0
    try:
        with httpx.Client(base_url=hub.url, timeout=10) as http:
            for start in range(0, len(hub.events), STEP):
                hub.play(hub.events[start : start + STEP])
                for name, query in OUTPUTS.items():
                    for family, arg, path in paths:
                        answer = http.get(path, params=query)
                        if answer.status_code == 404:  # no data yet
                            continue
                        assert answer.status_code == 200, (path, answer.text)
                        reads += 1
                        # Released is for ever: asked after the answer, it was not before.
                        for deal in shown_deals(family, answer.json()["data"], arg):
                            if not engine.release.deal_released(deal):
                                leaks.append((start, name, path, deal))
                time.sleep(0.25)  # the outputs move on between two rounds
            assert reads > 0 and not leaks, leaks

            time.sleep(DELAY + 1.0)  # every output has shown the whole session
            live = {t: http.get(f"/api/tables/{t}", params={"token": COMMENTATOR}) for t in tables}
            last = {t: live[t].json()["data"].get("last_deal") for t in tables}
            assert last[2] == 7 and all(last[t] is not None for t in tables), last
            for name, query in OUTPUTS.items():
                follower = followers[name]
                deadline = time.monotonic() + 10
                while any(
                    follower.states.get(f"table:{t}", {}).get("last_deal") != last[t]
                    for t in tables
                ):
                    assert time.monotonic() < deadline, (name, follower.states)
                    time.sleep(0.05)
                for t in tables:
                    rest = http.get(f"/api/tables/{t}", params=query).json()["data"]
                    assert rest == follower.states[f"table:{t}"], (name, t)
                    assert rest.get("last_deal") == last[t] and not rest.get("held"), (name, t)
    finally:
        for follower in followers.values():
            follower.ws.close()
