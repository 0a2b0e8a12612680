"""A small fake hub for developing and testing the browser pages without the real hub.

It serves `overlays/` at `/overlays/` and speaks the client protocol of docs/protocol.md §2 on
`/ws` (JSON frames) with scripted payloads for `standings`, `seat:{s}`, `table:1`,
`compare:{d}:{s}`, `onair`, `ticker` and `ops`. Tests push deltas, open seq gaps and drop every
connection to check that pages update, resume and recover.

Run it by hand: `.venv/bin/python tests/fake_feed.py --port 8765 --animate`, then open
http://127.0.0.1:8765/overlays/ (tokens: `com` commentator, `op` operator).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse, RedirectResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from hub.domain.games.registry import overlays, pads
from hub.engine.equities import equity_block, seat_equity, traveller_equity
from hub.engine.families import topic_list
from hub.wire.patch import diff
from hub.wire.signing import session_proof

OVERLAYS = Path(__file__).resolve().parent.parent / "overlays"
TOKENS = {"com": "commentator", "op": "operator"}
# The pages show a server the session proof of their token, never the token (docs/security.md).
TOKENS.update({session_proof(token): role for token, role in list(TOKENS.items())})
HISTORY = 64

TEAMS = [
    ("arg", "Argentina", "ARG", "#6CACE4"),
    ("bra", "Brazil", "BRA", "#009739"),
    ("chn", "China", "CHN", "#DE2910"),
    ("den", "Denmark", "DEN", "#F2F2F2"),
    ("ecu", "Ecuador", "ECU", "#FFD100"),
    ("fin", "Finland", "FIN", "#003580"),
]
SURNAMES = ["Rossi", "Silva", "Wang", "Jensen", "Mora", "Virtanen"]


def team_at(table: int, seat: int) -> tuple[str, str, str, str]:
    """Latin-square seat draw: each team once per table and once per seat position."""
    return TEAMS[(table - 1 + seat - 1) % 6]


def player(table: int, seat: int) -> str:
    idx = (table - 1 + seat - 1) % 6
    return f"{'ABCDEF'[table - 1]}. {SURNAMES[idx]}"


def team_fields(table: int, seat: int) -> dict[str, Any]:
    tid, name, code, colour = team_at(table, seat)
    return {"team": tid, "name": name, "code": code, "colour": colour}


def act(i: int, seat: int, kind: str, to: int, added: int, street: str) -> dict[str, Any]:
    return {"i": i, "seat": seat, "kind": kind, "to": to, "added": added, "street": street}


def script(*steps: tuple[int, str, int, int, str]) -> list[dict[str, Any]]:
    return [act(i, *s) for i, s in enumerate(steps)]


PF, FL, TU = "preflop", "flop", "turn"
COMPARE_ACTIONS = {
    1: script(
        (3, "raise", 300, 300, PF),
        (4, "fold", 0, 0, PF),
        (5, "raise", 900, 900, PF),
        (6, "fold", 0, 0, PF),
        (1, "fold", 0, 0, PF),
        (2, "fold", 0, 0, PF),
        (3, "call", 900, 600, PF),
        (3, "check", 0, 0, FL),
        (5, "bet", 1200, 1200, FL),
        (3, "call", 1200, 1200, FL),
        (3, "check", 0, 0, TU),
        (5, "bet", 2800, 2800, TU),
        (3, "fold", 0, 0, TU),
    ),
    2: script(
        (3, "raise", 300, 300, PF),
        (4, "fold", 0, 0, PF),
        (5, "call", 300, 300, PF),
        (6, "fold", 0, 0, PF),
        (1, "fold", 0, 0, PF),
        (2, "fold", 0, 0, PF),
        (3, "bet", 400, 400, FL),
        (5, "raise", 1400, 1400, FL),
        (3, "fold", 0, 0, FL),
    ),
    3: script(
        (3, "raise", 350, 350, PF),
        (4, "fold", 0, 0, PF),
        (5, "raise", 1100, 1100, PF),
        (6, "fold", 0, 0, PF),
        (1, "fold", 0, 0, PF),
        (2, "fold", 0, 0, PF),
        (3, "call", 1100, 750, PF),
        (3, "check", 0, 0, FL),
    ),
    4: script(
        (3, "raise", 300, 300, PF),
        (4, "fold", 0, 0, PF),
        (5, "raise", 1000, 1000, PF),
        (6, "fold", 0, 0, PF),
        (1, "fold", 0, 0, PF),
        (2, "fold", 0, 0, PF),
        (3, "raise", 10000, 9700, PF),
        (5, "call", 10000, 9000, PF),
    ),
    5: [],
    6: script((3, "raise", 300, 300, PF), (4, "fold", 0, 0, PF)),
}
COMPARE_RESULT = {
    1: ("complete", 7150, 2250),
    2: ("complete", 2550, 850),
    3: ("in_progress", 2350, None),
    4: ("complete", 20150, 10000),
    5: ("waiting", 150, None),
    6: ("void", 450, 0),
}


COMPARE_BOARD = ["9d", "5c", "2h", "Qs", "8c"]
# Board each table's hand of deal 3 has dealt: table 1 folded on the turn, table 4 ran it out
# after an all-in preflop, table 6 was void before the flop.
COMPARE_BOARD_SEEN = {1: 4, 2: 3, 3: 3, 4: 5, 5: None, 6: 0}
# Every seat's hole cards of the scripted deals (seat 5 holds the traveller's "hole").
HOLES = {
    3: {
        1: ("7s", "2d"),
        2: ("Jc", "Td"),
        3: ("Jh", "Jd"),
        4: ("4c", "4s"),
        5: ("Kh", "Ks"),
        6: ("Ac", "3h"),
    },
    2: {
        1: ("6s", "6d"),
        2: ("Tc", "9c"),
        3: ("Ah", "Jd"),
        4: ("3c", "3s"),
        5: ("Ad", "Qc"),
        6: ("Kc", "7h"),
    },
}


def scripted_equity(
    deal: int, actions: list[dict[str, Any]], board: list[str], over: bool
) -> dict[str, Any]:
    """The hub's equity block (hub/engine/equities.py) of a scripted hand: real figures."""
    return equity_block(
        HOLES[deal],
        board,
        {a["seat"]: a["street"] for a in actions if a["kind"] == "fold"},
        last_street=actions[-1]["street"] if actions else PF,
        over=over,
    )


def compare_payload(deal: int, seat: int, live: bool) -> dict[str, Any]:
    """The hub's compare payload (``families/travellers.py``), key for key."""
    rows = []
    for table in range(1, 7):
        status, pot, chips = COMPARE_RESULT[table]
        actions = COMPARE_ACTIONS[table]
        seen = COMPARE_BOARD_SEEN[table]
        if not live and status in ("in_progress", "waiting"):
            continue  # the public sees only what is released
        if deal != 3:  # another deal: every table done, different numbers
            status, pot, chips = "complete", 2550, 100 * table - 350
            actions = COMPARE_ACTIONS[2]
            seen = 3
        row: dict[str, Any] = {
            "table": table,
            "group": "A",
            **team_fields(table, seat),
            "player": player(table, seat),
            "status": status,
            "actions": actions,
            "pot": pot,
            "committed": sum(a["added"] for a in actions if a["seat"] == seat),
            "folded": any(a["seat"] == seat and a["kind"] == "fold" for a in actions),
            "street": None if status == "waiting" else actions[-1]["street"] if actions else PF,
            "chips": chips,
            "points": None,  # (IFP points: scored per session, none per deal)
        }
        if seen is not None:
            row["board"] = COMPARE_BOARD[:seen]
        over = status not in ("in_progress", "waiting")
        played = seen is not None and status != "void"  # a voided hand's cards do not count
        block = scripted_equity(deal, actions, row["board"], over) if played else None
        row["equity"] = traveller_equity(block, seat)
        row["showdown"] = scripted_showdown(deal, pot) if status == "complete" else None
        rows.append(row)
    finished = [r["chips"] for r in rows if r["chips"] is not None]
    average = sum(finished) / len(finished) if finished else None
    for r in rows:
        if r["chips"] is not None and average is not None:
            r["swing"] = round(r["chips"] - average, 2)
    return {
        "deal": deal,
        "seat": seat,
        "button": 6,
        "hole": ["Kh", "Ks"] if deal == 3 else ["Ad", "Qc"],
        "board": COMPARE_BOARD,
        "average": None if average is None else round(average, 2),
        "rows": rows,
        "game": "holdem",
    }


IFP_SCORING = {"format": "ifp-points", "column": "points", "heading": "Pts"}
"""What the hub's standings, seat and projection payloads say of the default scoring format."""


def standings_block(order: list[int], seat_numbers: Iterable[int] = range(1, 7)) -> dict[str, Any]:
    """order: team indexes from first to last; points and chips fall off down the table."""
    teams = []
    for rank, idx in enumerate(order, start=1):
        tid, name, code, colour = TEAMS[idx]
        teams.append(
            {
                "group": "A",
                "team": tid,
                "name": name,
                "code": code,
                "colour": colour,
                "rank": rank,
                "points": 30 - 3 * rank,
                "chips": 9000 - 3100 * rank,
            }
        )
    seats = []
    for s in seat_numbers:
        rows = [
            {
                "table": t,
                "team": team_at(t, s)[0],
                "player": player(t, s),
                "chips": 1500 - 700 * t,
                "points": 7 - t,
                "rank": t,
            }
            for t in range(1, 7)
        ]
        seats.append({"group": "A", "seat": s, "rows": rows})
    return {"teams": teams, "seats": seats}


def table_payload(live: bool) -> dict[str, Any]:
    roster = [{"seat": s, **team_fields(1, s), "player": player(1, s)} for s in range(1, 7)]
    if not live:
        return {
            "table": 1,
            "group": "A",
            "deals_total": 24,
            "seats": roster,
            "released": 1,
            "showdown": scripted_showdown(2, 2550),
        }
    holes = {seat: list(cards) for seat, cards in HOLES[3].items()}
    actions = COMPARE_ACTIONS[3]
    block = scripted_equity(3, actions, ["9d", "5c", "2h"], over=False)
    committed = {1: 50, 2: 100, 3: 1100, 4: 0, 5: 1100, 6: 0}
    seats = [
        {
            **r,
            "committed": committed[r["seat"]],
            "street_bet": 0,
            "stack": 10000 - committed[r["seat"]],
            "folded": r["seat"] in (1, 2, 4, 6),
            "all_in": False,
            "to_act": r["seat"] == 5,
            "hole": holes[r["seat"]],
            "equity": seat_equity(block, r["seat"]),
        }
        for r in roster
    ]
    return {
        "table": 1,
        "group": "A",
        "deals_total": 24,
        "deal": 3,
        "status": "in_progress",
        "reopened": False,
        "street": "flop",
        "button": 6,
        "pot": 2350,
        "to_act": 5,
        "board": ["9d", "5c", "2h"],
        "last_action": actions[-1],
        "actions": actions,
        "seats": seats,
        "completed": 6,
        "last_deal": 8,
        "equity": block,
        "game": "holdem",
        "showdown": None,
    }


def scripted_showdown(deal: int, pot: int) -> dict[str, Any]:
    """The hub's showdown package (hub/engine/showdown.py) of a scripted finished hand."""
    return {
        "deal": deal,
        "pots": [
            {
                "amount": pot,
                "kind": "main",
                "winners": [5],
                "shares": {"5": pot},
                "hand": "Two pair, nines and fives",
            }
        ],
        "hands": {"2": "Pair of nines", "5": "Two pair, nines and fives"},
        "runout": None,
    }


def deal_payload(deal: int, live: bool) -> dict[str, Any]:
    """The hub's deal payload: every table's status, pot and result (seat -> chips)."""
    tables = []
    for table in range(1, 7):
        status, pot, chips = COMPARE_RESULT[table]
        if deal != 3:
            status, pot, chips = "complete", 2550, 100 * table - 350
        if not live and status in ("in_progress", "waiting"):
            continue
        result = None
        if chips is not None:
            # seat 5 as in the comparison; the other seats share the rest by seat number
            others = {s: (-chips if s == 3 else 0) + 10 * (s - 3) * table for s in (1, 2, 3, 4, 6)}
            others[6] -= sum(others.values()) + chips  # chips sum to zero
            result = {str(s): c for s, c in sorted({**others, 5: chips}.items())}
        tables.append(
            {"table": table, "group": "A", "status": status, "result": result, "pot": pot}
        )
    return {
        "deal": deal,
        "button": 6,
        "released": ["A"] if deal != 3 else [],
        "board": COMPARE_BOARD,
        "hole": {"5": ["Kh", "Ks"] if deal == 3 else ["Ad", "Qc"]},
        "tables": tables,
        "game": "holdem",
    }


def onair_payload() -> dict[str, Any]:
    return {
        "slots": {
            "leaderboard": {"visible": True, "view": "like_for_like"},
            "seat": {"visible": True, "seat": 3},
            "table": {"visible": True, "table": 1},
            "compare": {"visible": True, "deal": 3, "seat": 5, "tables": [1, 2, 3, 4]},
            "ticker": {"visible": True},
        }
    }


def ticker_payload() -> dict[str, Any]:
    return {
        "items": [
            {
                "id": 1,
                "kind": "swing",
                "text": "Deal 3 seat 5: Brazil +10,000 with kings all-in",
                "deal": 3,
                "table": 4,
                "seat": 5,
                "chips": 10000,
            },
            {
                "id": 2,
                "kind": "all_in",
                "text": "Table 4: Denmark moves all-in with jacks",
                "deal": 3,
                "table": 4,
                "seat": 3,
                "chips": -10000,
            },
            {
                "id": 3,
                "kind": "void",
                "text": "Table 6 deal 3 declared void (misdeal)",
                "deal": 3,
                "table": 6,
                "seat": None,
                "chips": 0,
            },
        ]
    }


# The hub's ops payload (hub/engine/families/ops.py ops_payload), key for key:
# tests/test_overlays_hub.py
# checks these key sets against the real hub's `ops` snapshot so the fake cannot drift again.
OPS_KEYS = frozenset(
    {
        "at",
        "game",
        "tables",
        "rejections",
        "disputes",
        "corrections",
        "penalties",
        "release",
        "preview",
        "cues",
        "undo_take",
        "program",
        "playout",
    }
)
OPS_TABLE_KEYS = frozenset(
    {
        "table",
        "group",
        "console",
        "connected",
        "last_event_at",
        "last_seq",
        "deal",
        "last_deal",
        "status",
        "completed",
        "rejections",
    }
)
OPS_DISPUTE_KEYS = frozenset({"table", "deal", "status", "pot", "declared", "computed", "players"})
OPS_PLAYER_KEYS = frozenset({"seat", "team", "code", "player"})
OPS_REJECTION_KEYS = frozenset({"table", "console", "seq", "code", "message", "at"})
OPS_CORRECTION_KEYS = frozenset({"table", "deal", "type", "at"})
OPS_RELEASE_KEYS = frozenset({"group", "deal", "tables_complete", "tables", "released"})

# Link state of each table's console in the fake: connected (True, recent event), silent
# (True, last event 95 s ago), down (False: its last ack went to nobody), none (None: no
# console seen yet), and table 4's hand waits for an official (status "disputed").
FAKE_LINKS: dict[int, tuple[bool | None, float | None]] = {
    1: (True, 4),
    2: (True, 4),
    3: (True, 95),
    4: (True, 12),
    5: (False, 40),
    6: (None, None),
}
FAKE_LINK_STATE = {1: "ok", 2: "ok", 3: "silent", 4: "ok", 5: "down", 6: "none"}


def ops_payload() -> dict[str, Any]:
    now = time.time()
    tables = []
    for t in range(1, 7):
        connected, age = FAKE_LINKS[t]
        seen = connected is not None
        status = "disputed" if t == 4 else COMPARE_RESULT[t][0] if seen else "idle"
        tables.append(
            {
                "table": t,
                "group": "A",
                "console": f"pad-{t}" if seen else None,
                "connected": connected,
                "last_event_at": now - age if age is not None else None,
                "last_seq": 100 + t if seen else 0,
                "deal": (2 if t == 4 else 3) if seen else None,
                "last_deal": 2 if seen else None,
                "status": status,
                "completed": 2 if seen else 0,
                "rejections": 1 if t == 2 else 0,
            }
        )
    players = [
        {"seat": s, "team": team_at(4, s)[0], "code": team_at(4, s)[2], "player": player(4, s)}
        for s in (3, 5)
    ]
    return {
        "at": now,
        "game": "holdem",
        "tables": tables,
        "rejections": [
            {
                "table": 2,
                "console": "pad-2",
                "seq": 57,
                "code": "out_of_turn",
                "message": "seat 4 is to act, not seat 2",
                "at": now - 30,
            }
        ],
        "disputes": [
            {
                "table": 4,
                "deal": 2,
                "status": "disputed",
                "pot": 20150,
                "declared": [3],
                "computed": [5],
                "players": players,
            }
        ],
        "corrections": [
            {"table": 6, "deal": 3, "type": "void", "at": now - 60, "by": "TD", "reason": "r"},
            {"table": 1, "deal": 1, "type": "undo", "at": now - 600},
        ],
        "penalties": [],
        "release": [
            {"group": "A", "deal": d, "tables_complete": c, "tables": 6, "released": c == 6}
            for d, c in ((1, 6), (2, 5), (3, 3), (4, 0))
        ],
        "preview": None,  # the hub's preview (the mixer's and the control surfaces')
        "cues": [
            {"id": 1, "slot": "compare", "value": {"deal": 2, "seat": 5, "tables": [1, 4]}},
            {"id": 3, "slot": "seat", "value": {"seat": 4}, "label": "Seat 4"},
        ],
        "undo_take": {
            "slot": "seat",
            "value": {"visible": False, "seat": 1},
            "at": now - 30,
            "depth": 1,
        },
        "program": {},
        # what a playout (CasparCG, SPX, OGraf) reports it has on air (issue #33 item 4)
        "playout": [
            {
                "tool": "casparcg",
                "name": "CasparCG",
                "page": "leaderboard",
                "label": "Leaderboard",
                "since": now - 12,
            },
        ],
    }


def scripted_payloads() -> dict[str, dict[str, dict[str, Any]]]:
    """audience -> topic -> payload: `live` for commentators and operators, `public` for others."""
    order = [1, 3, 0, 5, 2, 4]
    live_standings = {
        "tournament": "ifp-demo",
        "name": "IFP demo",
        "tables": [1, 2, 3, 4, 5, 6],
        "deals": {"total": 24, "complete": {"A": [1]}},
        "scoring": dict(IFP_SCORING),
        "like_for_like": standings_block(order),
        "running": standings_block([3, 1, 0, 2, 5, 4]),
        "game": "holdem",
    }
    public_standings = {k: v for k, v in live_standings.items() if k != "running"}
    out: dict[str, dict[str, dict[str, Any]]] = {"public": {}, "live": {}}
    for audience, live in (("public", False), ("live", True)):
        topics = out[audience]
        topics["standings"] = copy.deepcopy(live_standings if live else public_standings)
        for s in range(1, 7):
            block = standings_block(order, [s])["seats"][0]
            topics[f"seat:{s}"] = {
                "seat": s,
                "scoring": dict(IFP_SCORING),
                "like_for_like": {"rows": block["rows"]},
            }
            if live:
                topics[f"seat:{s}"]["running"] = {"rows": block["rows"][::-1]}
        topics["table:1"] = table_payload(live)
        for deal in (2, 3):
            for seat in range(1, 7):
                topics[f"compare:{deal}:{seat}"] = compare_payload(deal, seat, live)
            topics[f"deal:{deal}"] = deal_payload(deal, live)
        topics["onair"] = onair_payload()
        topics["ticker"] = ticker_payload()
    out["live"]["ops"] = ops_payload()
    out["live"]["projection"] = projection_payload()
    return out


def projection_payload() -> dict[str, Any]:
    """Live standings if table 1's hand (deal 3, flop) ended now: China from 4th to 2nd."""
    block = standings_block([3, 2, 0, 1, 5, 4])
    return {
        "scoring": dict(IFP_SCORING),
        "hands": [
            {
                "table": 1,
                "deal": 3,
                "street": "flop",
                "pot": 2350,
                "result": {"1": -50, "2": 1175, "3": -1125, "4": 0, "5": 0, "6": 0},
            }
        ],
        "teams": block["teams"],
        "seats": block["seats"],
    }


@dataclass
class Topic:
    seq: int = 0
    data: dict[str, Any] = field(default_factory=dict)
    history: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=HISTORY))


@dataclass(eq=False)
class Client:
    ws: WebSocket
    role: str
    topics: set[str] = field(default_factory=set)

    @property
    def audience(self) -> str:
        return "public" if self.role == "public" else "live"


class FakeFeed:
    """The fake hub: scripted topics per audience, a websocket endpoint, test controls."""

    def __init__(self) -> None:
        self.stores: dict[str, dict[str, Topic]] = {}
        self.clients: set[Client] = set()
        self.received: list[dict[str, Any]] = []
        self.refuse_until = 0.0
        self.loop: asyncio.AbstractEventLoop | None = None
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None
        self.port = 0
        self.reset_state()
        self.app = Starlette(
            routes=[
                WebSocketRoute("/ws", self.endpoint),
                Route("/", lambda request: RedirectResponse("/overlays/")),
                Route(
                    "/api/topics",
                    lambda request: JSONResponse(
                        {"topics": topic_list(), "games": overlays(), "pads": pads()}
                    ),
                ),
                Mount("/overlays", StaticFiles(directory=OVERLAYS, html=True)),
            ],
            lifespan=self.lifespan,
        )

    # ---- state --------------------------------------------------------------------------
    def reset_state(self) -> None:
        self.stores = {
            audience: {name: Topic(seq=1, data=data) for name, data in topics.items()}
            for audience, topics in scripted_payloads().items()
        }
        self.received = []

    @asynccontextmanager
    async def lifespan(self, app: Starlette):  # type: ignore[no-untyped-def]
        self.loop = asyncio.get_running_loop()
        yield

    # ---- websocket ----------------------------------------------------------------------
    async def endpoint(self, ws: WebSocket) -> None:
        if time.monotonic() < self.refuse_until:
            await ws.close(code=1013)  # "try again later": the server is restarting
            return
        role = TOKENS.get(ws.query_params.get("token", ""), "public")
        await ws.accept()
        client = Client(ws, role)
        self.clients.add(client)
        try:
            await self.send(client, {"type": "hello", "role": role, "tournament": "ifp-demo"})
            while True:
                text = await ws.receive_text()
                try:
                    op = json.loads(text)
                    if isinstance(op, dict) and isinstance(op.get("signed"), str):
                        # a signed command (docs/protocol.md §2.9): what it carries; the fake
                        # feed plays the hub's part, not the ingest's check of the signature
                        op = {**json.loads(op["signed"]), "op": op["op"]}
                        op.pop("nonce", None)  # the signature's own: the command is the rest
                        op.pop("ts", None)
                except ValueError:
                    await self.send(
                        client,
                        {
                            "type": "error",
                            "code": "bad_schema",
                            "message": "frames are JSON objects",
                        },
                    )
                    continue
                self.received.append(op)
                await self.handle(client, op)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            self.clients.discard(client)

    async def send(self, client: Client, frame: dict[str, Any]) -> None:
        try:
            await client.ws.send_text(json.dumps(frame))
        except Exception:
            self.clients.discard(client)

    async def handle(self, client: Client, op: dict[str, Any]) -> None:
        kind = op.get("op")
        if kind == "ping":
            await self.send(client, {"type": "pong"})
        elif kind == "subscribe":
            resume = op.get("resume") or {}
            for topic in op.get("topics", []):
                if topic == "ops" and client.role != "operator":
                    await self.send(
                        client,
                        {
                            "type": "error",
                            "code": "forbidden",
                            "topic": topic,
                            "message": "topic ops needs the operator role",
                        },
                    )
                    continue
                client.topics.add(topic)
                await self.answer_subscribe(client, topic, resume.get(topic))
        elif kind == "unsubscribe":
            client.topics.difference_update(op.get("topics", []))
        elif kind in ("preview", "take") and client.role == "operator":
            await self._desk(client, kind, op)
        elif kind in ("onair", "confirm"):
            if client.role != "operator":
                await self.send(
                    client,
                    {
                        "type": "error",
                        "code": "forbidden",
                        "message": f"{kind} needs the operator role",
                    },
                )
            elif kind == "onair":
                slots = dict(self.stores["live"]["onair"].data.get("slots", {}))
                slots[str(op.get("slot"))] = op.get("value") or {}
                await self._push("onair", {"slots": slots}, (), "all", False)
            else:
                ops = self.stores["live"]["ops"].data
                disputes = [
                    d
                    for d in ops.get("disputes", [])
                    if (d["table"], d["deal"]) != (op.get("table"), op.get("deal"))
                ]
                await self._push("ops", {"disputes": disputes}, (), "live", False)
        else:
            await self.send(
                client, {"type": "error", "code": "bad_schema", "message": f"unknown op {kind!r}"}
            )

    async def _desk(self, client: Client, kind: str, op: dict[str, Any]) -> None:
        """The hub's preview and take (hub.engine.desk), as far as the mixer needs: ``preview``
        sets a slot's selection or a cue (by id, next, previous); ``take`` puts the preview on
        air. Answered ``ok`` as the hub answers an operator's command."""
        ops = self.stores["live"]["ops"].data
        preview = ops.get("preview")
        cues = ops.get("cues", [])
        if kind == "preview":
            action = op.get("action", "set")
            if action == "set":
                preview = {"slot": op.get("slot"), "value": op.get("value") or {}, "cue": None}
            elif action == "clear":
                preview = None
            else:
                ids = [c["id"] for c in cues]
                at = ids.index(preview["cue"]) if preview and preview.get("cue") in ids else -1
                if action == "cue":
                    pick = op.get("cue")
                else:
                    step = 1 if action == "next" else -1
                    pick = ids[min(max(at + step, 0), len(ids) - 1)] if ids else None
                cue = next((c for c in cues if c["id"] == pick), None)
                if cue is None:
                    await self.send(
                        client, {"type": "error", "code": "not_found", "message": "no such cue"}
                    )
                    return
                preview = {"slot": cue["slot"], "value": cue["value"], "cue": cue["id"]}
            await self._push("ops", {"preview": preview}, (), "live", False)
        else:
            if preview is None:
                await self.send(
                    client,
                    {"type": "error", "code": "bad_request", "message": "nothing in preview"},
                )
                return
            slots = dict(self.stores["live"]["onair"].data.get("slots", {}))
            slots[str(preview["slot"])] = preview["value"]
            await self._push("onair", {"slots": slots}, (), "all", False)
        await self.send(client, {"type": "ok", "op": kind})

    async def answer_subscribe(self, client: Client, topic: str, resume: Any) -> None:
        t = self.stores[client.audience].get(topic) or Topic()
        if isinstance(resume, int) and resume <= t.seq:
            missed = [d for d in t.history if d["seq"] > resume]
            if len(missed) == t.seq - resume:
                for frame in missed:
                    await self.send(client, frame)
                return
        await self.send(client, {"type": "snapshot", "topic": topic, "seq": t.seq, "data": t.data})

    async def _push(
        self, topic: str, data: dict[str, Any], removed: Iterable[str], audience: str, hide: bool
    ) -> None:
        audiences = ["public", "live"] if audience == "all" else [audience]
        for aud in audiences:
            store = self.stores[aud]
            t = store.setdefault(topic, Topic())
            if t.seq == 0:  # the topic appears: the first delta carries the whole payload
                t.data = {}
            t.seq += 1
            old = t.data
            t.data = {**t.data, **copy.deepcopy(data)}
            for key in removed:
                t.data.pop(key, None)
            frame = {"type": "delta", "topic": topic, "seq": t.seq, "patch": diff(old, t.data)}
            t.history.append(frame)
            if hide:
                continue  # simulate a lost frame: the next delta opens a gap
            for client in list(self.clients):
                if client.audience == aud and topic in client.topics:
                    await self.send(client, frame)

    async def _drop_all(self, down_for: float) -> None:
        self.refuse_until = time.monotonic() + down_for
        for client in list(self.clients):
            try:
                await client.ws.close(code=1012)
            except Exception:
                pass
        self.clients.clear()

    # ---- thread-safe test controls -------------------------------------------------------
    def _call(self, coro: Any) -> Any:
        assert self.loop is not None, "feed not started"
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=5)

    def push(
        self,
        topic: str,
        data: dict[str, Any],
        removed: Iterable[str] = (),
        audience: str = "all",
        hide: bool = False,
    ) -> None:
        """Publish a delta on `topic` (audience: all|public|live); hide=True loses the frame."""
        self._call(self._push(topic, data, tuple(removed), audience, hide))

    def payload(self, topic: str, audience: str = "public") -> dict[str, Any]:
        return copy.deepcopy(self.stores[audience][topic].data)

    def restart(self, down_for: float = 0.0) -> None:
        """Drop every connection, refusing new ones for `down_for` seconds."""
        self._call(self._drop_all(down_for))

    def reset(self) -> None:
        """Back to the scripted payloads (seqs restart); drops every connection."""
        self.restart()
        self.reset_state()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, port: int = 0) -> FakeFeed:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not (self.server.started and self.loop) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not self.server.started:
            raise RuntimeError("fake feed did not start")
        return self

    def stop(self) -> None:
        if self.server and self.thread:
            self.restart()
            self.server.should_exit = True
            self.thread.join(timeout=5)


def animate(feed: FakeFeed, every: float) -> None:
    """Keep the pages moving by hand: rotate the standings and grow the ticker."""
    n = 0
    while True:
        time.sleep(every)
        n += 1
        order = [1, 3, 0, 5, 2, 4]
        order = order[n % 6 :] + order[: n % 6]
        feed.push("standings", {"like_for_like": standings_block(order)}, audience="public")
        feed.push("standings", {"like_for_like": standings_block(order)}, audience="live")
        items = feed.payload("ticker")["items"]
        items.insert(
            0,
            {
                "id": 100 + n,
                "kind": "swing",
                "text": f"Update {n}: table {n % 6 + 1}",
                "deal": 3,
                "table": n % 6 + 1,
                "seat": 5,
                "chips": 100 * n,
            },
        )
        feed.push("ticker", {"items": items[:8]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--animate",
        type=float,
        nargs="?",
        const=4.0,
        default=None,
        help="push changes every N seconds (default 4)",
    )
    args = parser.parse_args()
    feed = FakeFeed().start(args.port)
    print(f"fake feed on {feed.url}/overlays/  (tokens: com, op)")
    try:
        if args.animate:
            animate(feed, args.animate)
        else:
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        feed.stop()


if __name__ == "__main__":
    main()
