"""The PHH export of a staged event (issue #20.8) and how ``/api/export/phh`` is served."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
from pokerkit import HandHistory

from hub.configfile import load_config
from hub.deckfile import load_decks
from hub.engine.core import Engine
from hub.engine.phh_export import collect
from hub.fanout import Fanout
from hub.feed import IngestFeed
from hub.replay import read_events, replay
from hub.server import create_app
from tests.hubharness import COMMENTATOR, OPERATOR, ROOT, auth, duplicast

EVENT = ROOT / "samples" / "ifp-event.toml"
EVENT_SESSION = ROOT / "samples" / "ifp-event-session.jsonl"


def staged_engine() -> Engine:
    """The sample event played to its end: a group stage, then the final its results filled."""
    config = load_config(EVENT)
    engine = Engine(config, load_decks(config, EVENT.parent, dict(os.environ)))
    assert replay(config, read_events(EVENT_SESSION), engine, "session") == []
    return engine


class EngineSource:
    """Enough of a FeedSource to serve the export: the ingest's engine and nothing else."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.tournament = engine.config.id
        self.store = IngestFeed()
        self.fanout = Fanout(self.store)

    def ready(self) -> bool:
        return True

    def check_topic(self, role: str, topic: object) -> str | None:
        return None

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        return {"ok": False}

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


def client(source: EngineSource) -> httpx.AsyncClient:
    app = create_app(source, auth=auth(), manage_source=False)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://hub")


def bearer(token: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"} if token else {}


async def test_the_export_of_an_event_whose_final_has_started_serves_every_role() -> None:
    engine = staged_engine()
    final_tables = set(engine.config.groups["F"].tables)
    async with client(EngineSource(engine)) as http:
        for token in (OPERATOR, COMMENTATOR, None):
            response = await http.get("/api/export/phh", headers=bearer(token))
            assert response.status_code == 200, (token, response.text[:300])
            hands = list(HandHistory.loads_all(response.text))
            assert hands and final_tables & {h.table for h in hands}
    # A final's hand names the players its fill seated, not a draw the file never made.
    hand = next(h for h in collect(engine.state) if h.table in final_tables)
    seated = [engine.state.seat_holder(hand.table, s, hand.deal) for s in range(1, 7)]
    assert list(hand.players) == [holder[1] for holder in seated if holder is not None]


def test_export_phh_command_of_a_staged_event(tmp_path: Path) -> None:
    out = tmp_path / "hands"
    done = duplicast(
        "export", "--phh", str(EVENT_SESSION), "--config", str(EVENT), "--out", str(out)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(list(out.glob("*.phh"))) > 100
