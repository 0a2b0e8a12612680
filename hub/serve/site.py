"""``/site/``: the public results site (issue #34; docs/site.md), served by every edge and the
ingest from the public topics the process already holds.

What it shows is the **public** audience's and nothing else: every document is made from the
public payloads of ``standings``, ``deal:{d}`` and ``compare:{d}:{s}`` (and ``stats`` when that
family exists), exactly as a spectator's websocket would receive them, so the embargo holds by
construction: a deal the public feed does not have (not released) has no traveller, no hand
record, no score-card row and no line in a download. The site never reads the engine.

Three kinds of answer:

- **pages** (``/site/``, ``/site/deal/{d}/``, ``/site/team/{code}/``,
  ``/site/player/{code}-{seat}/``, the replayer's ``/site/replay/{d}/``): static HTML from
  ``overlays/site/``, the same file for every deal (or team, or player); their script reads
  the JSON below and, served by a hub, follows the public feed to refresh
  (``overlays/js/site/site.js``, ``overlays/js/site/replay.js``). Links are relative, so the
  static export (``duplicast export --site``) writes the same files under a folder and they
  work from there;
- **data** (``/site/data/…json``) and **downloads** (``/site/download/…``): built by
  ``SiteBuilder.document`` from a topic reader, the one function the static export calls too, so
  it writes the bytes an edge serves;
- **assets** (``ASSETS``: ``/site/css/site.css``, ``/site/js/site/site.js``, the replayer's
  ``/site/css/replay.css`` and ``/site/js/site/replay.js``, and every module and font they
  load, at the same paths as under ``overlays/``).

Caching (issue #34 item 6): every answer carries an ``ETag`` (a digest of its body) and
answers ``If-None-Match`` with ``304``; data, downloads and pages ``Cache-Control: no-cache``
(revalidate every time: cheap with the ETag), assets ``public, max-age=300``. A document is
rebuilt only when a topic it was made from moved (``Site`` remembers each one's topics and their
seqs), so a thousand phones polling one traveller cost one build per change.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from hub.domain.games.registry import games
from hub.domain.pieces import CARDS
from hub.engine.families import topic_name
from hub.serve.headers import SECURITY_HEADERS
from hub.serve.site_running import RUNNING_CSV_HEADER, running_csv_rows, running_view
from hub.wire.codec import to_json
from hub.wire.topics import PUBLIC

__all__ = [
    "ASSET_AGE",
    "Document",
    "Site",
    "SiteBuilder",
    "Unavailable",
    "engine_reader",
    "file_name",
    "phh_zip",
    "site_paths",
]

ASSET_AGE = 300
"""Seconds a browser may reuse a stylesheet or script of the site without asking again."""
PAGES = {
    "": "index.html",
    "deal": "deal.html",
    "team": "team.html",
    "player": "player.html",
    "replay": "replay.html",
}
"""Each kind of page and its template in ``overlays/site/`` (``replay``: the multi-table
replayer, ``/site/replay/{d}/``, docs/replay.md). The running view is the event's page
with ``?view=running`` (its script reads ``data/running.json``)."""
ASSETS = (
    "css/site.css",
    "js/site/site.js",
    "css/replay.css",
    "fonts/barlow-condensed-latin-700-normal.woff2",  # (replay.css's font)
    "js/site/replay.js",
    "js/ui.js",  # (replay.js's imports, and theirs)
    "js/duplicast.js",  # (the live feed's client: both pages import it on a hub)
    "js/topics.js",
    "js/playout.js",
    "js/transition.js",
    "js/sign.js",
)
"""The site's assets: each a path under ``/site/`` and under ``overlays/`` alike (the pages'
stylesheets and scripts, every module those scripts import, and the fonts the stylesheets
name). The one list: the hub serves these and nothing else of ``overlays/`` under ``/site/``,
and ``paths()`` names them, so the static export writes the same files at the same places.
``tests/test_site_export.py`` checks that it is closed (every import and ``url()`` resolves
to an entry)."""
_MEDIA = {".css": "text/css", ".js": "text/javascript", ".woff2": "font/woff2"}
DOWNLOADS = (
    "standings.csv",
    "running.csv",
    "travellers.csv",
    "scorecards.csv",
    "hands.phh.zip",
)
_CODE = re.compile(r"[A-Za-z0-9_]{1,16}")
_PLAYER = re.compile(r"([A-Za-z0-9_]{1,16})-([0-9]{1,3})")
Reader = Callable[[str], tuple[int, dict[str, Any] | None]]
"""A public topic by name -> ``(seq, payload)``; ``(0, None)``: the topic has no data (for a
deal: not released). Raises ``Unavailable`` when the process holds no current state."""


class Unavailable(Exception):
    """This process holds no current state of a topic (an edge not yet in sync): 503."""


@dataclass(frozen=True, slots=True)
class Document:
    body: bytes
    media_type: str
    kind: str  # "page" | "data" | "download" | "asset"


def file_name(path: str) -> str:
    """Where the static export writes ``path``: a page's folder gets its ``index.html``."""
    return path + "index.html" if path == "" or path.endswith("/") else path


def _num(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def phh_zip(files: Iterable[tuple[str, str]], tournament: str) -> bytes:
    """The released hands as a zip: one ``.phh`` file per hand (``files``: name and text, as
    ``hub.engine.phh_export`` writes them) and the ``.phhs`` bundle of them all, as
    ``/api/export/phh`` serves it. Fixed timestamps: the same hands, the same bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        bundle = []
        for i, (name, text) in enumerate(files, 1):
            info = zipfile.ZipInfo(f"{tournament}/{name}", (2026, 1, 1, 0, 0, 0))
            z.writestr(info, text, zipfile.ZIP_DEFLATED)
            bundle.append(f"[{i}]\n{text}")
        info = zipfile.ZipInfo(f"{tournament}/{tournament}.phhs", (2026, 1, 1, 0, 0, 0))
        z.writestr(info, "\n".join(bundle), zipfile.ZIP_DEFLATED)
    return out.getvalue()


_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    """A CSV cell: a text a spreadsheet would run as a formula (a name typed ``=HYPERLINK(…)``)
    is quoted as text with a leading apostrophe (OWASP's advice); numbers are left alone."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return value


BOM = "\ufeff"
"""Opens every download: Excel reads a CSV without it in the computer's ANSI code page, so a
name in Arabic, Hebrew, Chinese or with an emoji showed as mojibake; with it, Excel,
LibreOffice and Google Sheets read UTF-8 (a script reads it with ``encoding="utf-8-sig"``)."""


def _csv(header: list[str], rows: Iterable[Iterable[Any]]) -> bytes:
    """RFC 4180 (CRLF lines, a cell with a comma, quote or line break quoted, quotes doubled),
    in UTF-8 with a byte order mark (``BOM``)."""
    out = io.StringIO()
    out.write(BOM)
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(v) for v in row])
    return out.getvalue().encode()


class SiteBuilder:
    """The site's documents from a public topic reader (``read``) and the ``overlays/``
    folder (pages and assets). ``phh``: the released hands' zip, where this process can write
    PHH (None: the download is not offered here). What it read for the last document is in
    ``seen`` (topic -> seq): the server's cache compares those."""

    def __init__(
        self,
        read: Reader,
        overlays_dir: str | Path,
        phh: Callable[[], bytes | None] | None = None,
    ) -> None:
        self.read = read
        self.overlays = Path(overlays_dir)
        self.phh = phh
        self.seen: dict[str, int] = {}

    # -- topics --

    def topic(self, name: str) -> dict[str, Any] | None:
        seq, payload = self.read(name)
        self.seen[name] = seq
        return payload if seq > 0 and payload else None

    def standings(self) -> dict[str, Any]:
        got = self.topic(topic_name("standings"))
        if got is None:
            raise Unavailable("standings")
        return got

    def released(self, total: int) -> list[int]:
        return [d for d in range(1, total + 1) if self.topic(topic_name("deal", d)) is not None]

    # -- the event --

    def event(self) -> dict[str, Any]:
        """``event.json``: the event, its teams and players, which deals are public. An
        event of stages and sessions (``[[stages]]``) lists every team of any of its blocks,
        and each player as the latest block seats them (the roster's current name)."""
        st = self.standings()
        total = int(st.get("deals", {}).get("total", 0))
        view = st.get("like_for_like", {})
        blocks = [*view.get("sessions", {}).values(), view]  # (the current one last)
        seat_blocks = [b for block in blocks for b in block.get("seats", [])]
        seats = max((int(b["seat"]) for b in seat_blocks), default=0)
        players: dict[str, dict[int, dict[str, Any]]] = {}
        for block in seat_blocks:
            for row in block.get("rows", []):
                code = str(row["team"])
                players.setdefault(code, {})[int(block["seat"])] = {
                    "seat": block["seat"],
                    "table": row.get("table"),
                    "name": row.get("player"),
                    "id": f"{code}-{block['seat']}",
                }
        rows = [*view.get("overall", [])]
        rows += [r for b in view.get("stages", {}).values() for r in b.get("teams", [])]
        rows += [r for b in blocks for r in b.get("teams", [])]
        teams: dict[str, dict[str, Any]] = {}
        for row in rows:
            if row["team"] in teams:
                continue
            code = str(row.get("code") or row["team"])
            mine = players.get(str(row["team"]), {})
            teams[row["team"]] = {
                "code": code,
                "team": row["team"],
                "name": row.get("name", code),
                "colour": row.get("colour"),
                "group": row.get("group"),
                "players": [mine[s] for s in sorted(mine)],
            }
        game = games.get(str(st.get("game")))
        released = self.released(total)
        return {
            "id": st.get("tournament"),
            "name": st.get("name"),
            "game": st.get("game"),
            "game_facts": _game_facts(game),
            "scoring": st.get("scoring"),
            "tables": st.get("tables", []),
            "seats": seats,
            "deals": total,
            "released": released,
            "teams": list(teams.values()),
            "complete": _complete(st, released),
            "stats": True,  # data/stats.json is served (an archive of an older hub has none)
        }

    # -- deals --

    def deal(self, d: int, seats: int) -> dict[str, Any] | None:
        """``deal/{d}.json``: the traveller, each seat's comparison and the hand record; None
        before the public has the deal."""
        traveller = self.topic(topic_name("deal", d))
        if traveller is None:
            return None
        compare: dict[str, Any] = {}
        for s in range(1, seats + 1):
            got = self.topic(topic_name("compare", d, s))
            if got is not None:
                compare[str(s)] = got
        return {
            "deal": d,
            "traveller": traveller,
            "compare": compare,
            "record": _record(traveller, compare),
        }

    # -- score cards --

    def _card_rows(
        self, event: dict[str, Any], keep: Callable[[int, dict[str, Any]], bool]
    ) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for d in event["released"]:
            for s in range(1, event["seats"] + 1):
                cmp_ = self.topic(topic_name("compare", d, s))
                if cmp_ is None:
                    continue
                bb = _big_blind(cmp_)
                avg = _num(cmp_.get("average"))
                for row in cmp_.get("rows", []):
                    if not keep(s, row):
                        continue
                    chips = _num(row.get("chips"))
                    swing = _num(row.get("swing"))
                    rows.append(
                        {
                            "deal": d,
                            "table": row.get("table"),
                            "seat": s,
                            "team": row.get("code"),
                            "player": row.get("player"),
                            "status": row.get("status"),
                            "chips": chips,
                            "bb": None if chips is None or not bb else _round(chips / bb),
                            "field_avg": avg,
                            "swing": swing,
                            "points": _num(row.get("points")),
                        }
                    )
        return rows

    @staticmethod
    def _team_of(event: dict[str, Any], code: str) -> dict[str, Any] | None:
        return next((t for t in event["teams"] if t["code"] == code), None)

    def card(self, code: str, seat: int | None = None) -> dict[str, Any] | None:
        """A team's score card (``seat`` None) or one of its players' (its seat)."""
        event = self.event()
        team = self._team_of(event, code)
        if team is None:
            return None
        player = None
        if seat is not None:
            player = next((p for p in team["players"] if p["seat"] == seat), None)
            if player is None:
                return None
        team_id = team["team"]
        rows = self._card_rows(
            event, lambda s, row: row.get("team") == team_id and seat in (None, s)
        )
        st = self.standings()
        column = (st.get("scoring") or {}).get("column", "points")
        view = st.get("like_for_like", {})
        standing: dict[str, Any]
        if seat is None:
            ranked = view.get("overall") or view.get("teams", [])  # (an event: overall)
            standing = next((t for t in ranked if t.get("team") == team_id), {})
        else:
            standing = next(
                (
                    r
                    for b in view.get("seats", [])
                    if b["seat"] == seat
                    for r in b.get("rows", [])
                    if r.get("team") == team_id
                ),
                {},
            )
        chips = [r["chips"] for r in rows if r["chips"] is not None]
        bbs = [r["bb"] for r in rows if r["bb"] is not None]
        swings = [r["swing"] for r in rows if r["swing"] is not None]
        total = {
            "chips": sum(chips) if chips else 0,
            "bb": _round(sum(bbs)) if bbs else None,
            "swing": _round(sum(swings)),
            "points": standing.get(column),
            "rank": standing.get("rank"),
            "column": column,
        }
        scoring = st.get("scoring") or {}
        name = team["name"] if player is None else player["name"]
        return {
            "id": code if seat is None else f"{code}-{seat}",
            "name": name,
            "team": {"code": code, "name": team["name"], "colour": team["colour"]},
            "seat": seat,
            "table": None if player is None else player["table"],
            "game": event["game"],
            "game_facts": event["game_facts"],
            "scoring": st.get("scoring"),
            "rows": rows,
            "total": total,
            "points_note": _points_note(scoring, seat is None),
        }

    # -- the running view --

    def running(self) -> dict[str, Any]:
        """``running.json``: the ranking after each released deal (``site_running``)."""
        event = self.event()
        return running_view(
            self.standings(),
            event["released"],
            event["seats"],
            lambda d, s: self.topic(topic_name("compare", d, s)),
        )

    # -- downloads --

    def running_csv(self) -> bytes:
        return _csv(RUNNING_CSV_HEADER, running_csv_rows(self.running()))

    def standings_csv(self) -> bytes:
        st = self.standings()
        column = (st.get("scoring") or {}).get("column", "points")
        view = st.get("like_for_like", {})
        rows: list[list[Any]] = []
        for t in view.get("teams", []):
            rows.append(
                [
                    "team",
                    t.get("group"),
                    t.get("rank"),
                    t.get("code"),
                    t.get("name"),
                    "",
                    "",
                    t.get(column),
                    t.get("chips"),
                ]
            )
        for b in view.get("seats", []):
            for r in b.get("rows", []):
                rows.append(
                    [
                        "player",
                        b.get("group"),
                        r.get("rank"),
                        r.get("team"),
                        r.get("player"),
                        b.get("seat"),
                        r.get("table"),
                        r.get(column),
                        r.get("chips"),
                    ]
                )
        header = ["kind", "group", "rank", "team", "name", "seat", "table", column, "chips"]
        return _csv(header, rows)

    def travellers_csv(self) -> bytes:
        event = self.event()
        rows: list[list[Any]] = []
        for d in event["released"]:
            for s in range(1, event["seats"] + 1):
                cmp_ = self.topic(topic_name("compare", d, s))
                if cmp_ is None:
                    continue
                bb = _big_blind(cmp_)
                for r in cmp_.get("rows", []):
                    chips = _num(r.get("chips"))
                    rows.append(
                        [
                            d,
                            s,
                            r.get("table"),
                            r.get("group"),
                            r.get("code"),
                            r.get("player"),
                            r.get("status"),
                            chips,
                            None if chips is None or not bb else _round(chips / bb),
                            cmp_.get("average"),
                            r.get("swing"),
                        ]
                    )
        header = [
            "deal",
            "seat",
            "table",
            "group",
            "team",
            "player",
            "status",
            "result",
            "bb",
            "field_avg",
            "swing",
        ]
        return _csv(header, rows)

    def scorecards_csv(self) -> bytes:
        event = self.event()
        rows = self._card_rows(event, lambda s, row: True)
        body = [
            [
                r["deal"],
                r["table"],
                r["seat"],
                r["team"],
                r["player"],
                r["chips"],
                r["bb"],
                r["field_avg"],
                r["swing"],
                r["points"],
            ]
            for r in sorted(rows, key=lambda r: (str(r["team"]), r["seat"], r["deal"]))
        ]
        header = [
            "deal",
            "table",
            "seat",
            "team",
            "player",
            "result",
            "bb",
            "field_avg",
            "swing",
            "points",
        ]
        return _csv(header, body)

    # -- paths --

    def paths(self) -> list[str]:
        """Every page, data file, download and asset of the event now (paths under the
        site's root: ``""`` is the event's page, ``"deal/3/"`` a deal's,
        ``"replay/3/"`` its replayer, ``"data/deal/3.json"`` its data). Released deals only:
        every deal has its page (which says the deal is not public yet), only a released one
        its replayer and its data."""
        event = self.event()
        out = ["", *(f"deal/{d}/" for d in range(1, event["deals"] + 1))]
        out += [f"replay/{d}/" for d in event["released"]]  # (a hub answers it for any deal)
        out += [f"team/{t['code']}/" for t in event["teams"]]
        out += [f"player/{p['id']}/" for t in event["teams"] for p in t["players"]]
        out += ["data/event.json", "data/standings.json", "data/running.json"]
        out += [f"data/deal/{d}.json" for d in event["released"]]
        out += [f"data/team/{t['code']}.json" for t in event["teams"]]
        out += [f"data/player/{p['id']}.json" for t in event["teams"] for p in t["players"]]
        if event["stats"]:
            out.append("data/stats.json")
        out += [f"download/{n}" for n in DOWNLOADS if n != "hands.phh.zip" or self.phh]
        out += list(ASSETS)
        return out

    def document(self, path: str) -> Document | None:
        """The document at ``path`` (as ``paths`` names it); None: no such document (or, for
        a deal, not public yet). Raises ``Unavailable``."""
        self.seen = {}
        head, _, rest = path.partition("/")
        if path in ASSETS:
            file = self.overlays / path
            media = _MEDIA[file.suffix]
            return Document(file.read_bytes(), media, "asset") if file.is_file() else None
        if head in PAGES and (path == "" or re.fullmatch(r"[^/]+/", rest)):
            return self._page(head, rest[:-1])
        if head == "data":
            got = self._data(rest)
            return None if got is None else Document(to_json(got), "application/json", "data")
        if head == "download" and rest in DOWNLOADS:
            return self._download(rest)
        return None

    def _page(self, kind: str, ident: str) -> Document | None:
        if kind in ("deal", "replay"):
            event = self.event()
            if not ident.isdigit() or not 1 <= int(ident) <= event["deals"]:
                return None
        elif kind == "team":
            if self._team_of(self.event(), ident) is None:
                return None
        elif kind == "player":
            m = _PLAYER.fullmatch(ident)
            team = self._team_of(self.event(), m.group(1)) if m else None
            if m is None or team is None:
                return None
            if all(p["id"] != ident for p in team["players"]):
                return None
        file = self.overlays / "site" / PAGES[kind]
        return Document(file.read_bytes(), "text/html; charset=utf-8", "page")

    def _data(self, rest: str) -> dict[str, Any] | None:
        if rest == "event.json":
            return self.event()
        if rest == "standings.json":
            return self.standings()
        if rest == "running.json":
            return self.running()
        if rest == "stats.json":  # ({}: its topic has no data here yet)
            return self.topic(topic_name("stats")) or {}
        kind, _, name = rest.partition("/")
        ident = name.removesuffix(".json")
        if not name.endswith(".json") or not ident:
            return None
        if kind == "deal" and ident.isdigit():
            event = self.event()
            d = int(ident)
            return self.deal(d, event["seats"]) if 1 <= d <= event["deals"] else None
        if kind == "team" and _CODE.fullmatch(ident):
            return self.card(ident)
        if kind == "player" and (m := _PLAYER.fullmatch(ident)):
            return self.card(m.group(1), int(m.group(2)))
        return None

    def _download(self, name: str) -> Document | None:
        if name == "hands.phh.zip":
            body = self.phh() if self.phh is not None else None
            return None if body is None else Document(body, "application/zip", "download")
        made = {
            "standings.csv": self.standings_csv,
            "running.csv": self.running_csv,
            "travellers.csv": self.travellers_csv,
            "scorecards.csv": self.scorecards_csv,
        }[name]()
        return Document(made, "text/csv; charset=utf-8", "download")


def _complete(standings: dict[str, Any], released: list[int]) -> bool:
    """Is the event over: every deal released, and every group of each stage through every
    deal of the stage's sessions (a one-stage event: every group through every deal)."""
    total = int(standings.get("deals", {}).get("total", 0))
    done = standings.get("deals", {}).get("complete", {})
    if not total or len(released) < total or not done:
        return False
    plan = standings.get("event")
    if not plan:
        return all(len(deals) >= total for deals in done.values())
    for stage in plan.get("stages", []):
        ranges = [s["deals"] for s in plan.get("sessions", []) if s.get("stage") == stage["id"]]
        wanted = {d for lo, hi in ranges for d in range(lo, hi + 1)}
        if any(not wanted <= set(done.get(g, [])) for g in stage.get("groups", [])):
            return False
    return True


def _game_facts(game: Any) -> dict[str, Any]:
    """What the pages need of the game's declaration (never its name): the unit of a result,
    whether its pieces are the 52 cards (drawn as rank and suit), and whether its hands are
    PHH."""
    if game is None:
        return {"unit": "chips", "cards": False, "pieces": None, "phh": False, "title": ""}
    unit = game.points_unit.strip() or "chips"
    pieces = game.pieces
    return {
        "unit": unit,
        "cards": pieces is CARDS,
        "pieces": None if pieces is None else pieces.game,
        "phh": bool(game.phh),
        "title": game.title or game.name,
    }


def _points_note(scoring: dict[str, Any], team: bool) -> str | None:
    """What a score card says when its rows' ``points`` do not add up to its total: IFP
    points rank a seat's chips over a session (no deal has any); IMPs a team scores on its
    players' total per deal (``teams = "totals"``) are not its rows' (each player's) sum.
    None: the rows add up to the standings' figure (like-for-like)."""
    name = scoring.get("format", "ifp-points")
    if name == "ifp-points":
        return (
            "Points are given per session, not per deal: each seat's chips over the session "
            "are ranked against the same seat at the other tables."
        )
    if team and name == "imp" and scoring.get("teams") == "totals":
        return (
            "The team's IMPs are scored on its players' total on each deal: the rows show "
            "each player's own IMPs, which do not add up to the team's."
        )
    return None


def _big_blind(compare: dict[str, Any]) -> int | None:
    """The big blind of a deal, from its rows' posted blinds (a game without blinds: None)."""
    for row in compare.get("rows", []):
        for action in row.get("actions") or ():
            if action.get("kind") == "big_blind" and _num(action.get("to")):
                return int(action["to"])
    return None


def _record(traveller: dict[str, Any], compare: dict[str, Any]) -> dict[str, Any]:
    """The hand record of a released deal: every seat's cards, the board, and the equities:
    each seat's before the flop with every hand in, and each table's run-out after an all-in."""
    preflop: dict[str, Any] = {}
    runouts: dict[int, Any] = {}
    hands: dict[str, dict[str, str]] = {}
    for seat, cmp_ in compare.items():
        for row in cmp_.get("rows", []):
            streets = ((row.get("equity") or {}).get("streets") or {}).get("preflop")
            if streets and seat not in preflop:
                preflop[seat] = {"win": streets.get("win"), "tie": streets.get("tie")}
            showdown = row.get("showdown") or {}
            table = row.get("table")
            if showdown.get("runout") and table not in runouts:
                runouts[table] = showdown["runout"]
            for s, text in (showdown.get("hands") or {}).items():
                hands.setdefault(str(table), {})[str(s)] = text
    # A game whose seats have winds (its block of a seat's compare, ``Game.compare_fields``,
    # gives the deal's ``winds`` and ``prevalent``: MCR's): each seat's wind and the deal's
    # prevalent wind, where a poker deal has its button. (Read by the field, not the game.)
    winds = next(
        (
            block
            for c in compare.values()
            for block in c.values()
            if isinstance(block, dict) and isinstance(block.get("winds"), dict)
        ),
        None,
    )
    return {
        "hole": traveller.get("hole", {}),
        "board": traveller.get("board", []),
        "button": traveller.get("button"),
        "winds": None if winds is None else winds.get("winds"),
        "prevalent": None if winds is None else winds.get("prevalent"),
        "equities": {
            "preflop": preflop,
            "runouts": [{"table": t, "streets": r} for t, r in sorted(runouts.items())],
        },
        "hands": hands,
    }


def site_paths(builder: SiteBuilder) -> list[str]:
    """Every page and data path of the event now (``SiteBuilder.paths``)."""
    return builder.paths()


def engine_reader(engine: Any) -> Reader:
    """A ``Reader`` of an engine's public payloads (built from scratch, as ``GET /api/…`` of a
    fresh process would): what ``export --site`` builds the site from. Each payload is kept
    until the engine moves (an event applied, a deal released), so a whole export builds each
    topic once. For the PHH zip, give ``SiteBuilder`` ``phh=lambda: phh_zip(files, id)`` with
    the files of ``hub.engine.phh_export.render(collect(state, engine.release.released))``."""
    cache: dict[tuple[str, int, int], dict[str, Any] | None] = {}

    def read(topic: str) -> tuple[int, dict[str, Any] | None]:
        key = (topic, engine.state.events_applied, engine.release.released_count)
        if key not in cache:
            if len(cache) > 100_000:  # (an engine read while it moves: keep the latest only)
                cache.clear()
            cache[key] = engine.payload((PUBLIC, topic))
        payload = cache[key]
        return (1, payload) if payload else (0, None)

    return read


# -- serving ---------------------------------------------------------------------------------


def _etag(body: bytes) -> str:
    return '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'


def _matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return "*" in tags or etag in tags


@dataclass(slots=True)
class _Cached:
    seen: dict[str, int]
    document: Document | None
    etag: str


class Site:
    """The site's routes for one app (``source``: its ``FeedSource``). Documents are cached by
    path and rebuilt when a topic they were made from moved; the PHH zip comes from the
    ingest's own ``PhhExport`` (an edge has no hands to write: 404 there)."""

    MAX_CACHED = 4096

    def __init__(self, source: Any, overlays_dir: str | Path, phh: Any = None) -> None:
        self.source = source
        self.overlays = Path(overlays_dir)
        self.phh_export = phh  # an async () -> bytes | None, or None
        self._cache: dict[str, _Cached] = {}
        self.builds = 0  # documents built (the rest were served from the cache)

    def _read(self, topic: str) -> tuple[int, dict[str, Any] | None]:
        store = self.source.store
        key = (PUBLIC, topic)
        if not store.available(key):
            raise Unavailable(topic)
        seq, payload = store.snapshot(key)
        return (seq, payload) if seq > 0 else (0, None)

    def _fresh(self, cached: _Cached) -> bool:
        store = self.source.store
        return all(store.seq((PUBLIC, t)) == seq for t, seq in cached.seen.items())

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/site", self.redirect),
            Route("/site/{path:path}", self.answer),
        ]

    async def redirect(self, request: Request) -> Response:
        return RedirectResponse("/site/", 308)

    async def answer(self, request: Request) -> Response:
        path = request.path_params["path"]
        phh = None
        if path == "download/hands.phh.zip":
            phh = None if self.phh_export is None else await self.phh_export()
            if phh is None:
                message = "the PHH download is served by the ingest (--role all or ingest)"
                return _error("not_found", message, 404)
        cached = self._cache.get(path)
        if cached is None or not self._fresh(cached) or phh is not None:
            builder = SiteBuilder(self._read, self.overlays, None if phh is None else lambda: phh)
            try:
                doc = builder.document(path)
            except Unavailable as exc:
                answer = _error("unavailable", f"no current state of topic {exc} here yet", 503)
                answer.headers["retry-after"] = "2"
                return answer
            self.builds += 1
            cached = _Cached(builder.seen, doc, "" if doc is None else _etag(doc.body))
            if len(self._cache) >= self.MAX_CACHED:  # bounded: paths are a closed set, but
                self._cache.clear()  # a client may name many that are not
            self._cache[path] = cached
        doc = cached.document
        if doc is None:
            deal = re.fullmatch(r"data/deal/([0-9]{1,6})\.json", path)
            if deal and 1 <= int(deal.group(1)) <= self._deals():
                return _error("not_released", "this deal is not public yet", 404)
            return _error("not_found", f"no page or file at /site/{path}", 404)
        return _send(request, doc, cached.etag)

    def _deals(self) -> int:
        try:
            st = SiteBuilder(self._read, self.overlays).standings()
        except Unavailable:
            return 0
        return int(st.get("deals", {}).get("total", 0))


def _send(request: Request, doc: Document, etag: str) -> Response:
    cache = f"public, max-age={ASSET_AGE}" if doc.kind == "asset" else "no-cache"
    headers = {"etag": etag, "cache-control": cache}
    headers.update({k.decode(): v.decode() for k, v in SECURITY_HEADERS})
    if doc.kind == "download":
        name = request.url.path.rsplit("/", 1)[-1]
        headers["content-disposition"] = f'attachment; filename="{name}"'
    if _matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(doc.body, media_type=doc.media_type, headers=headers)


def _error(code: str, message: str, status: int) -> Response:
    return Response(
        to_json({"error": code, "message": message}),
        status,
        media_type="application/json",
        headers={"cache-control": "no-cache"},
    )
