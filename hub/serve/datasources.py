"""``/api/vmix/…``: the vMix data sources (docs/vmix.md) over HTTP, JSON and XML.

Each source of ``hub.wire.datasources.SOURCES`` gets ``/api/vmix/{name}[/{param}…].json`` and
``.xml``, its path parameters its family's (``/api/vmix/compare/{deal}/{seat}.xml``). A source
serves what goes to air and nothing else: the **public** audience, or with ``feed=program``
(and ``output=NAME``) a programme output's delayed state, exactly as ``/api/…?feed=program``
does. It takes no token: vMix cannot send a header, a token pasted into its URL box would sit
in the production's show file and in every proxy's log, and a switcher's source must never
show the live feed (DESIGN §8, "What goes to air is the programme"). ``?token=`` is refused,
not ignored, so a URL with one never works by accident.

Polling: every answer carries an ``ETag`` (a digest of its body) and ``Cache-Control:
max-age=1``; a poll with ``If-None-Match`` of the current ETag is answered ``304`` with no
body. A topic this process holds no current state of answers ``503`` with ``Retry-After``; a
topic without data yet (a public split screen before its deal is released, a programme topic
held back) is an empty array, so what is not public yet and what does not exist yet look the
same from outside.
"""

from __future__ import annotations

import hashlib
import re
import struct
import zlib
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hub.engine.families import FAMILIES
from hub.serve.auth import PUBLIC
from hub.wire.codec import to_json
from hub.wire.datasources import SOURCES, Source, flatten, to_xml

__all__ = ["MAX_AGE", "DataSources", "source_path"]

MAX_AGE = 1
"""Seconds an answer may be reused without asking again (vMix polls every few seconds)."""
FORMATS = {"json": "application/json", "xml": "application/xml; charset=utf-8"}
NO_TOKEN = (
    "a vMix data source takes no token: it serves the public feed, or the programme with "
    "feed=program (docs/vmix.md)"
)
NO_PROGRAM = (
    "this hub has no programme output (no [broadcast] delay): the source without feed=program "
    "is the one to put on air"
)
_HEX = re.compile(r"[0-9A-Fa-f]{6}")


def source_path(source: Source) -> str:
    """The route of a source without its extension: ``/api/vmix/{name}``, then one path
    segment per parameter of its family (``/{deal:int}/{seat:int}``)."""
    params = "".join(f"/{{{p}:int}}" for p in FAMILIES[source.family].params)
    return f"/api/vmix/{source.name}{params}"


def _error(code: str, message: str, status: int) -> Response:
    return Response(
        to_json({"error": code, "message": message}), status, media_type="application/json"
    )


def _matches(header: str | None, etag: str) -> bool:
    """Does an ``If-None-Match`` header name ``etag`` (RFC 9110: a list, weak or strong)?"""
    if not header:
        return False
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return "*" in tags or etag in tags


def swatch_png(rgb: bytes, width: int = 96, height: int = 64) -> bytes:
    """A PNG of one colour (``Flag.Source``: the team's colour as an image field shows it)."""
    raw = (b"\x00" + rgb * width) * height  # (filter 0 on each scanline)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


class DataSources:
    """The data sources' endpoints for one app (``source``: the app's ``FeedSource``;
    ``service``: its ``FeedService``, whose audience and topic checks they share)."""

    def __init__(self, source: Any, service: Any) -> None:
        self.source = source
        self.service = service

    def routes(self) -> list[Route]:
        routes = [Route("/api/vmix", self.listing)]
        for src in SOURCES.values():
            for fmt in FORMATS:
                routes.append(Route(f"{source_path(src)}.{fmt}", self.endpoint(src, fmt)))
        routes.append(Route("/api/vmix/colour/{hex}.png", self.swatch))
        return routes

    async def listing(self, request: Request) -> Response:
        """``GET /api/vmix``: every source, its path, its columns and what it shows."""
        body = [
            {
                "source": s.name,
                "path": source_path(s).replace(":int}", "}") + ".json",
                "topic": s.family + "".join(f":{{{p}}}" for p in FAMILIES[s.family].params),
                "columns": [c.name for c in s.columns],
                "about": s.about,
            }
            for s in SOURCES.values()
        ]
        return Response(to_json({"sources": body}), media_type="application/json")

    def endpoint(self, src: Source, fmt: str) -> Any:
        family = FAMILIES[src.family]

        async def answer(request: Request) -> Response:
            query = request.query_params
            if any(k.lower() == "token" for k in query):
                return _error("bad_request", NO_TOKEN, 400)
            problem = self.service.feed_problem(query)  # (feed=program without a delay too)
            if problem is not None:
                status = 404 if problem["code"] == "unknown_output" else 400
                return _error(problem["code"], problem["message"], status)
            if "feed" in query and self.service.topics.outputs == {}:  # (no delay: none)
                return _error("unknown_output", NO_PROGRAM, 404)
            audience = self.service.audience(PUBLIC, query)
            topic = family.name_of(*(request.path_params[p] for p in family.params))
            if self.service.valid_topic(PUBLIC, topic) is not None:
                return _error("not_found", f"no topic named {topic!r}", 404)
            store = self.source.store
            key = (audience, topic)
            await store.ensure(key)  # (an edge asks the writer for a topic it never saw)
            if not store.available(key):  # a standby, a takeover, an edge not yet in sync
                found = _error("unavailable", f"no current state of topic {topic} here yet", 503)
                found.headers["retry-after"] = "2"
                return found
            seq, payload = store.snapshot(key)
            if seq == 0:
                payload = None
            if payload is not None and family.select is not None:
                picked = {k: query.get(k) for k in family.query}
                if any(v is not None for v in picked.values()):
                    chosen = family.select(payload, **picked)
                    if isinstance(chosen, str):
                        return _error("not_found", chosen, 404)
                    payload = {**chosen, "scoring": payload.get("scoring")}
            base = str(request.base_url).rstrip("/")
            rows = flatten(src, payload, lambda c: f"{base}/api/vmix/colour/{c.lstrip('#')}.png")
            body = to_json(rows) if fmt == "json" else to_xml(src, rows)
            etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
            headers = {"etag": etag, "cache-control": f"max-age={MAX_AGE}"}
            if _matches(request.headers.get("if-none-match"), etag):
                return Response(status_code=304, headers=headers)
            return Response(body, media_type=FORMATS[fmt], headers=headers)

        return answer

    async def swatch(self, request: Request) -> Response:
        """``GET /api/vmix/colour/RRGGBB.png``: the image behind a ``Flag.Source`` cell."""
        hex_ = request.path_params["hex"]
        if not _HEX.fullmatch(hex_):
            return _error("not_found", "a colour is six hex digits (002F6C)", 404)
        png = swatch_png(bytes.fromhex(hex_))
        return Response(png, media_type="image/png", headers={"cache-control": "max-age=86400"})
