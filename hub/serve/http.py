"""The client-facing Starlette app: ``/ws`` feeds, REST snapshots, health, metrics, overlays.

The app knows nothing of the engine or the bus: it reads topics from a ``FeedSource``
(the ingest in the embedded/``all`` process, an ``EdgeSource`` in an edge process) and hands
operator commands back to it. Client protocol: docs/protocol.md §2.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import logging
import math
import socket
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp
from starlette.websockets import WebSocket

from hub.domain.games.registry import overlay_dirs, overlays, pads
from hub.engine.bounds import MAX_COMMAND_BYTES
from hub.engine.families import FAMILIES, Command, Family, topic_list
from hub.metrics import CONTENT_TYPE, Metrics
from hub.serve.asgisink import AsgiSink
from hub.serve.auth import CONSOLE, OPERATOR, PUBLIC, Auth, Role
from hub.serve.commands import IDEMPOTENCY
from hub.serve.datasources import DataSources
from hub.serve.fanout import Fanout
from hub.serve.feedsocket import protocol as feedsocket_protocol
from hub.serve.headers import SecurityHeaders
from hub.serve.httpguard import REQUEST_TIMEOUT, PendingRequests, guarded_http
from hub.serve.origins import OriginPolicy
from hub.serve.phh_service import PhhExport, RateLimit
from hub.serve.proxies import TrustedProxies
from hub.serve.rulings import RULINGS, ruling_command
from hub.serve.service import FeedService, token_spelling
from hub.serve.site import Site, phh_zip
from hub.wire.codec import CodecError, from_json_strict, pack, to_json
from hub.wire.signing import is_proof
from hub.wire.topics import LIVE

__all__ = ["FeedSource", "ListenError", "RunningServer", "create_app", "serve", "tune_gc"]

log = logging.getLogger(__name__)


class FeedSource(Protocol):
    """What the app needs from the process that owns the topics."""

    tournament: str
    # hub.serve.feed store: ``snapshot(key) -> (seq, payload)``, ``available``, ``catch_up``
    store: Any
    fanout: Fanout

    def ready(self) -> bool: ...

    def check_topic(self, role: str, topic: object, table: int | None = None) -> str | None:
        """Why ``role`` may not subscribe to ``topic`` (``unknown_topic``: not a topic of this
        tournament; ``forbidden``), or None (``table``: a console's own table)."""
        ...

    # the web consoles' events and answers (``hub.roles.console_relay.ConsoleRelay``)
    consoles: Any

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        """An operator command (``{"op": "onair", "slot", "value"}``); answers
        ``{"ok": bool, "code"?, "error"?, "queued"?}``."""
        ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


SIGNATURE_HEADER = "x-duplicast-signature"
"""A REST command's signature: HMAC-SHA256 of the body with the operator's signing key, hex
(docs/security.md has the curl recipe)."""
RETRY_AFTER = 2
"""Seconds a REST client is told to wait (``Retry-After``) when this process holds no current
state of a topic: a standby ingest takes over within its lease's time to live (5 s)."""


IDEMPOTENCY_HEADER = "idempotency-key"
_TOKEN_IN_URL = {
    "error": "bad_request",
    "message": "a control surface gives its token in the Authorization header, never in the "
    "URL (docs/companion.md)",
}


PLAYOUT_KEY_HEADER = "x-duplicast-playout-key"
"""The header a playout's report carries its key in (``DUPLICAST_PLAYOUT_KEY``)."""
PLAYOUT_FIELDS = ("tool", "page", "state", "params")
_PLAYOUT_PREFLIGHT = {
    "access-control-allow-methods": "POST",
    "access-control-allow-headers": f"content-type, {PLAYOUT_KEY_HEADER}",
    "access-control-max-age": "600",
}
_PROOF_UNSIGNED = {
    "error": "unsigned",
    "message": "a command shown with the operator's session proof must be signed "
    "(X-Duplicast-Signature): every edge holds the proof. A control surface that cannot sign "
    "sends the operator token itself, to the ingest (docs/security.md)",
}
"""An unsigned REST command with the operator's proof, refused by every process: the proof is
what the edges are configured with, so taking it unsigned would let a compromised edge write
through the ingest's own port (the one nginx sends the control surfaces to)."""
_KEY_IN_URL = {
    "error": "bad_request",
    "message": "a playout gives its key in the X-Duplicast-Playout-Key header, never in the "
    "URL (docs/overlays.md)",
}


def _if_match(value: str) -> int | str:
    """The desk version an ``If-Match`` names (``"12"``, ``W/"12"`` or ``12``), or the text."""
    text = value.strip().removeprefix("W/").strip('"')
    return int(text) if text.isdigit() else value


async def read_capped(request: Request, cap: int) -> bytes | None:
    """The request's body, or None once it is known to exceed ``cap`` bytes: by its
    Content-Length before anything is read, else as it streams in (at most ``cap`` + one
    chunk is ever held; a 200 MB body with a valid token was read whole before)."""
    length = request.headers.get("content-length", "")
    if length.strip().isdigit() and int(length) > cap:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _shown(request: Request) -> str:
    """The token or proof a request shows (``Authorization: Bearer``, else ``?token=``)."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        token = request.query_params.get("token", "")
    return token.strip()


def _bearer(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer`` header (None: none)."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _json(body: Any, status: int = 200) -> Response:
    return Response(to_json(body), status_code=status, media_type="application/json")


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such route, method not allowed) in the REST error shape
    ``{"error": code, "message": text}`` every endpoint answers with."""
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "bad_request")
    return _json({"error": code, "message": str(exc.detail)}, exc.status_code)


class _Endpoints:
    def __init__(self, source: FeedSource, service: FeedService, metrics: Metrics) -> None:
        self.source = source
        self.service = service
        self.auth = service.auth
        self.metrics = metrics
        self.valid_topic = service.valid_topic
        self.phh: PhhExport | None = None  # made on the first request (ingest processes only)
        self.phh_limit = RateLimit()
        self._site_zip: tuple[Any, bytes] | None = None  # (the bundle, its zip)

    @property
    def origin_refusals(self) -> int:
        return self.service.origin_refusals

    # -- websocket, for ASGI servers other than ours (see hub.serve.feedsocket) --

    async def websocket(self, websocket: WebSocket) -> None:
        """The portable ``/ws``: the same sessions through the ASGI ``send``, one await per
        frame. ``serve`` never routes here (its ``FeedSocket`` takes the upgrade first)."""
        service = self.service
        origin = websocket.headers.get("origin")
        peer = websocket.client.host if websocket.client else None
        address, host = service.proxies.identify(peer, websocket.headers)
        if not service.origin_allowed(origin, host, address):
            await websocket.send_denial_response(
                _json({"error": "forbidden_origin", "message": f"origin {origin} not allowed"}, 403)
            )
            return
        role, fmt, problem = service.admit(websocket.query_params, address)
        await websocket.accept()
        if problem is not None or role is None:
            if fmt == "msgpack":
                await websocket.send_bytes(pack(problem))
            else:
                await websocket.send_text(to_json(problem).decode())
            await websocket.close(1008, problem["message"] if problem else "")
            return
        query = websocket.query_params
        session = service.start(service.join(AsgiSink(websocket), role, fmt, address, query))
        try:
            while not session.client.closed:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                if text is not None:
                    session.receive(text, True)
                else:
                    session.receive(message.get("bytes") or b"", False)
        finally:
            await session.client.aclose()

    # -- REST --

    def _role(self, request: Request) -> Role | None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            if token_spelling(request.query_params) is not None:  # ?TOKEN=: one spelling
                return None
            token = request.query_params.get("token", "")
        role = self.auth.role_for(token.strip() or None)
        return PUBLIC if role == CONSOLE else role  # over REST a console reads as the public

    async def _topic(self, request: Request, topic: str, family: Family) -> Response:
        """A topic's snapshot; a family that declares a ``select`` serves the part of it its
        ``query`` parameters pick (the standings: ``scope``, ``stage``, ``session`` and
        ``group``, ``hub.wire.standings_select``)."""
        if family.actions and "token" in request.query_params:
            return _json(_TOKEN_IN_URL, 400)
        role = self._role(request)
        if role is None and family.actions and self.auth.tally(_bearer(request)):
            role = OPERATOR  # the tally key: this family's reads, nothing else
        if role is None:
            return _json({"error": "unauthorized", "message": "unknown token"}, 401)
        code = self.valid_topic(role, topic)
        if code == "forbidden":
            needs = "operator" if family.role == OPERATOR else "commentator or operator"
            return _json({"error": code, "message": f"topic {topic} needs the {needs} role"}, 403)
        if code is not None:
            return _json({"error": "not_found", "message": f"no topic named {topic!r}"}, 404)
        audience, problem = self.service.rest_audience(role, request.query_params)
        if problem is not None:  # (body, status)
            return _json(*problem)
        key = (audience, topic)
        store = self.source.store
        await store.ensure(key)  # (an edge asks the writer for a topic it never saw)
        if not store.available(key):  # a standby, a takeover, an edge not yet in sync
            message = f"no current state of topic {topic} here yet: retry shortly"
            answer = _json({"error": "unavailable", "message": message}, 503)
            answer.headers["retry-after"] = str(RETRY_AFTER)
            return answer
        seq, payload = store.snapshot(key)
        if seq == 0:
            return _json({"error": "not_found", "message": f"topic {topic} has no data yet"}, 404)
        if family.select is not None:
            picked = {k: request.query_params.get(k) for k in family.query}
            if any(v is not None for v in picked.values()):
                chosen = family.select(payload, **picked)
                if isinstance(chosen, str):
                    return _json({"error": "not_found", "message": chosen}, 404)
                payload = chosen
        if family.at_read is not None:
            payload = family.at_read(payload, time.time())
        if not family.actions:
            return _json({"topic": topic, "seq": seq, "data": payload})
        # A control surface's state: flat (its fields at the top, as a command's answer has
        # them, so one jsonpath reads both), its desk version as the ETag (for If-Match).
        answer = _json({"topic": topic, "seq": seq, **payload})
        answer.headers["etag"] = f'"{payload.get("version", 0)}"'
        answer.headers["cache-control"] = "no-store"
        return answer

    def topic_route(self, family: Family) -> Any:
        """The REST endpoint of a topic family: its path parameters name the topic; a POST
        is the operator command the family declares (``Family.command``)."""

        async def endpoint(request: Request) -> Response:
            command = family.command
            if request.method == "POST" and command is not None:
                return await self._command(request, command.name, command.shape)
            args = [request.path_params[p] for p in family.params]
            return await self._topic(request, family.name_of(*args), family)

        return endpoint

    def action_route(self, family: Family, command: Command) -> Any:
        """``POST {route}/{action}``: a control surface's command (the family's ``actions``),
        answered with the family's state once applied (a flat object: ``ok`` and the state's
        fields)."""
        action, shape = command.name, command.shape

        def shaped(body: Any) -> tuple[dict[str, Any] | None, str]:
            if body is None:
                body = {}
            if not isinstance(body, dict):
                return None, f"{action} takes a JSON object"
            command, why = shape(body)
            if command is not None:
                command |= {k: body[k] for k in IDEMPOTENCY if k in body}
            return command, why

        async def endpoint(request: Request) -> Response:
            if "token" in request.query_params:
                return _json(_TOKEN_IN_URL, 400)
            headers = request.headers
            extra: dict[str, Any] = {}
            if IDEMPOTENCY_HEADER in headers:
                extra["request"] = headers[IDEMPOTENCY_HEADER]
            if "if-match" in headers:
                extra["expect"] = _if_match(headers["if-match"])
            answer = await self._command(request, action, shaped, extra)
            if answer.status_code != 200:
                return answer
            topic = family.name_of()
            store = self.source.store
            key = (LIVE, topic)
            if not store.available(key):
                return answer
            _, state = store.snapshot(key)
            if family.at_read is not None:
                state = family.at_read(state, time.time())
            result = {**from_json_strict(bytes(answer.body)), **state}
            response = _json(result)
            response.headers["etag"] = f'"{state.get("version", 0)}"'
            return response

        return endpoint

    async def topics(self, request: Request) -> Response:
        """``GET /api/topics``: every topic family as a client may know it (its pattern,
        parameters, audiences, least role, what a console reads, REST route, delta): the
        browser's pages build topic names from it; each game's overlay module (``games``:
        the registry's, so an installed game brings its own) and its console-pad entries
        (``pads``: the console page's declarations, served once here, not in every
        ``console:{t}``)."""
        answer = _json({"topics": topic_list(), "games": overlays(), "pads": pads()})
        answer.headers["access-control-allow-origin"] = "*"  # (a page of another origin's)
        return answer

    def ruling(self, op: str) -> Any:
        """``POST /api/{op}`` of an official's ruling: the websocket op's body and codes."""

        async def endpoint(request: Request) -> Response:
            return await self._command(request, op, lambda body: ruling_command(op, body))

        return endpoint

    async def _command(
        self, request: Request, op: str, shape: Any, extra: dict[str, Any] | None = None
    ) -> Response:
        """An operator command over REST: the token, the body (``shape``: the command, or why
        not), the ingest's answer (on an edge too). A browser page of another origin is
        refused as its websocket is (``hub.serve.origins``: one rule for both; a cross-origin
        ``no-cors`` POST with a known token was applied before)."""
        origin = request.headers.get("origin")
        peer = request.client.host if request.client else None
        address, host = self.service.proxies.identify(peer, request.headers)
        if not self.service.origin_allowed(origin, host, address):
            message = f"origin {origin} not allowed"
            return _json({"error": "forbidden_origin", "message": message}, 403)
        role = self._role(request)
        if role is None:
            return _json({"error": "unauthorized", "message": "unknown token"}, 401)
        if role != OPERATOR:
            return _json({"error": "forbidden", "message": f"{op} needs the operator role"}, 403)
        sig = request.headers.get(SIGNATURE_HEADER)
        if sig is None and is_proof(_shown(request)):  # every edge holds the proof
            return _json(_PROOF_UNSIGNED, 403)
        data = await read_capped(request, MAX_COMMAND_BYTES)
        if data is None:  # refused before it was read: the bound of a command, in bytes
            message = f"an operator command is at most {MAX_COMMAND_BYTES} bytes"
            return _json({"error": "too_large", "message": message}, 413)
        try:
            raw = data
            # (a key given twice is refused; a control surface's button may send no body)
            body = from_json_strict(raw) if raw.strip() or extra is None else None
        except CodecError as exc:
            return _json({"error": "bad_request", "message": str(exc)}, 400)
        command, why = shape(body)
        if command is None:
            return _json({"error": "bad_request", "message": why}, 400)
        if extra:  # the headers' request id and expected version; the body's win
            command = {**extra, **command}
        if sig is not None:  # the body as signed, for the ingest to verify (hub.roles.signed)
            command = {**command, "signed": raw.decode(), "sig": sig}
        result = await self.source.control(command)
        if result.get("ok"):
            return _json(result)
        code = str(result.get("code", "rejected"))
        status = {"unavailable": 503, "stale": 412}.get(code, 400)
        return _json({"error": code, "message": str(result.get("error", ""))}, status)

    async def playout(self, request: Request) -> Response:
        """``POST /api/playout``: a template run by a playout (CasparCG, SPX, an OGraf
        renderer) reports a graphic played or stopped, with the playout key in the
        ``X-Duplicast-Playout-Key`` header (docs/overlays.md). The key opens this route alone
        and the command is made here from the body's known fields: it can say what a playout
        shows, nothing else. A page of an allowed origin (``DUPLICAST_ALLOWED_ORIGINS``, else
        the hub's own host) may call it across origins (CORS, its preflight included)."""
        origin = request.headers.get("origin")
        peer = request.client.host if request.client else None
        address, host = self.service.proxies.identify(peer, request.headers)
        if not self.service.origin_allowed(origin, host, address):
            message = f"origin {origin} not allowed"
            return _json({"error": "forbidden_origin", "message": message}, 403)
        cors = {} if origin is None else {"access-control-allow-origin": origin, "vary": "Origin"}
        if request.method == "OPTIONS":
            return Response(status_code=204, headers=cors | _PLAYOUT_PREFLIGHT)
        answer = await self._playout(request)
        answer.headers.update(cors)
        return answer

    async def _playout(self, request: Request) -> Response:
        if "token" in request.query_params or "key" in request.query_params:
            return _json(_KEY_IN_URL, 400)
        key = request.headers.get(PLAYOUT_KEY_HEADER)
        if not key:
            message = "a playout report needs the playout key in the X-Duplicast-Playout-Key header"
            return _json({"error": "unauthorized", "message": message}, 401)
        if not self.auth.playout(key):
            return _json({"error": "unauthorized", "message": "unknown playout key"}, 401)
        data = await read_capped(request, MAX_COMMAND_BYTES)
        if data is None:
            message = f"a playout report is at most {MAX_COMMAND_BYTES} bytes"
            return _json({"error": "too_large", "message": message}, 413)
        try:
            body = from_json_strict(data)
        except CodecError as exc:
            return _json({"error": "bad_request", "message": str(exc)}, 400)
        if not isinstance(body, dict):
            message = "a playout report is an object {tool, page, state, params}"
            return _json({"error": "bad_request", "message": message}, 400)
        command = {"op": "playout", **{k: body[k] for k in PLAYOUT_FIELDS if k in body}}
        result = await self.source.control(command)
        if result.get("ok"):
            return _json({"ok": True})
        code = str(result.get("code", "rejected"))
        status = {"unavailable": 503}.get(code, 400)
        return _json({"error": code, "message": str(result.get("error", ""))}, status)

    async def export_phh(self, request: Request) -> Response:
        """Every completed hand as a ``.phhs`` bundle (docs/phh.md): the deals released to the
        public for any role, every completed hand for the operator."""
        role = self._role(request)
        if role is None:
            return _json({"error": "unauthorized", "message": "unknown token"}, 401)
        engine = getattr(self.source, "engine", None)
        if engine is None:
            message = "the PHH export is served by the ingest process (--role all or ingest)"
            return _json({"error": "not_found", "message": message}, 404)
        peer = request.client.host if request.client else None
        address, _ = self.service.proxies.identify(peer, request.headers)  # (behind a proxy)
        wait = self.phh_limit.retry_after(address or "")
        if wait > 0:  # a client looping on it: it costs the ingest's loop a little each time
            seconds = str(max(1, math.ceil(wait)))
            message = f"the PHH export may be asked again in {seconds} s"
            response = _json({"error": "rate_limited", "message": message}, 429)
            response.headers["retry-after"] = seconds
            return response
        if self.phh is None or self.phh.engine is not engine:
            self.phh = PhhExport(engine)  # (hub.serve.phh_service: cached, written off the loop)
        got = await self.phh.bundle(role == OPERATOR)
        name = f"{self.source.tournament}.phhs"
        return Response(
            got.text,
            media_type="application/toml; charset=utf-8",
            headers={
                "content-disposition": f'attachment; filename="{name}"',
                "x-phh-hands": str(got.hands),
                "x-phh-skipped": str(got.skipped),
            },
        )

    async def public_phh(self) -> bytes | None:
        """The released hands' zip of the site (``/site/download/hands.phh.zip``), from the
        same cached bundle as ``/api/export/phh``; None where no engine is (an edge)."""
        engine = getattr(self.source, "engine", None)
        if engine is None:
            return None
        if self.phh is None or self.phh.engine is not engine:
            self.phh = PhhExport(engine)
        got = await self.phh.bundle(False)
        if self._site_zip is None or self._site_zip[0] is not got:
            self._site_zip = (got, phh_zip(got.files, self.source.tournament))
        return self._site_zip[1]

    def close(self) -> None:
        if self.phh is not None:
            self.phh.close()

    # -- operations --

    async def healthz(self, request: Request) -> Response:
        return _json({"ok": True})

    async def readyz(self, request: Request) -> Response:
        ready = self.source.ready()
        return _json({"ready": ready}, 200 if ready else 503)

    async def metrics_text(self, request: Request) -> Response:
        role = self._role(request)  # everything for the operator; process-level for the rest
        if role is None:
            return _json({"error": "unauthorized", "message": "unknown token"}, 401)
        text = self.metrics.render(private=role == OPERATOR)
        return Response(text, headers={"content-type": CONTENT_TYPE})

    async def root(self, request: Request) -> Response:
        return RedirectResponse("/overlays/")


def _routes(ep: _Endpoints, overlays_dir: str | Path | None) -> list[BaseRoute]:
    """Every route of the app: /ws, each family's REST route (its declaration's), the
    rulings, the exports, health and metrics, and the overlays (a game's own module from its
    package, then the pages)."""
    routes: list[BaseRoute] = [
        WebSocketRoute("/ws", ep.websocket),
        *(
            Route(f.route, ep.topic_route(f), methods=["GET", "POST"] if f.command else ["GET"])
            for f in FAMILIES.values()
            if f.route is not None
        ),
        *(
            Route(f"{f.route}/{action.name}", ep.action_route(f, action), methods=["POST"])
            for f in FAMILIES.values()
            if f.route is not None
            for action in f.actions
        ),
        Route("/api/topics", ep.topics),
        *(Route(f"/api/{op}", ep.ruling(op), methods=["POST"]) for op in RULINGS),
        Route("/api/export/phh", ep.export_phh),
        Route("/api/playout", ep.playout, methods=["POST", "OPTIONS"]),
        *DataSources(ep.source, ep.service).routes(),  # /api/vmix/… (hub.serve.datasources)
        Route("/healthz", ep.healthz),
        Route("/readyz", ep.readyz),
        Route("/metrics", ep.metrics_text),
        Route("/", ep.root),
    ]
    if overlays_dir is not None:
        for name, directory in overlay_dirs().items():  # a game's own module, from its package
            module = SecurityHeaders(StaticFiles(directory=directory))
            routes.append(Mount(f"/overlays/js/games/{name}", module))
        routes += Site(ep.source, overlays_dir, ep.public_phh).routes()  # /site/ (hub.serve.site)
        pages = SecurityHeaders(StaticFiles(directory=overlays_dir, html=True))  # CSP, no Referer
        routes.append(Mount("/overlays", pages))
    return routes


def create_app(
    source: FeedSource,
    *,
    overlays_dir: str | Path | None = None,
    auth: Auth | None = None,
    metrics: Metrics | None = None,
    manage_source: bool = True,
    raw_frames: bool = True,
    allowed_origins: Iterable[str] | None = None,
    trusted_proxies: TrustedProxies | Iterable[str] | None = None,
) -> Starlette:
    """The app for one process. ``manage_source``: start and stop ``source`` in the lifespan.
    ``raw_frames``: ``serve`` hands ``/ws`` to ``hub.serve.feedsocket.FeedSocket`` (frames written
    straight to the socket, no task per connection); False: to Starlette's websocket route.
    ``allowed_origins``: ``Origin`` values allowed on ``/ws`` (default:
    ``$DUPLICAST_ALLOWED_ORIGINS``, else the request's own host and clients without
    ``Origin``). ``trusted_proxies``: addresses/CIDRs of the load balancers whose
    ``X-Forwarded-For``/``-Host`` are believed (default: ``$DUPLICAST_TRUSTED_PROXIES``, else
    none; hub.serve.proxies)."""
    auth = Auth.from_env() if auth is None else auth
    verify_with = getattr(source, "verify_with", None)
    if callable(verify_with):  # an ingest's own server: it verifies with the tokens it takes
        verify_with(auth.keyring())
    metrics = Metrics() if metrics is None else metrics
    metrics.watch(source.fanout)
    origins = OriginPolicy.from_env() if allowed_origins is None else OriginPolicy(allowed_origins)
    if trusted_proxies is None:
        proxies = TrustedProxies.from_env()
    elif isinstance(trusted_proxies, TrustedProxies):
        proxies = trusted_proxies
    else:
        proxies = TrustedProxies(trusted_proxies)
    service = FeedService(source, auth, origins, proxies)
    ws_protocol = feedsocket_protocol(service) if raw_frames else None
    ep = _Endpoints(source, service, metrics)
    routes = _routes(ep, overlays_dir)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if manage_source:
            await source.start()
        try:
            yield
        finally:
            await source.fanout.close_all()
            await service.stop()
            if ws_protocol is not None:
                await ws_protocol.sweep.stop()
            ep.close()
            if manage_source:
                await source.stop()

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error},
    )
    app.state.source = source
    app.state.feed = service
    app.state.ws_protocol = ws_protocol
    app.state.metrics = metrics
    app.state.endpoints = ep  # (tests reach the PHH export's cache and rate limit here)
    return app


def tune_gc(young: int = 50_000) -> None:
    """For a serving process, once start-up is done: move everything allocated so far out of
    the collector's sight (``gc.freeze``) and collect the young generation every ``young``
    allocations instead of 700. With 10,000 connections a full collection walks millions of
    objects (~0.9 s measured); per-update objects are short-lived, so rarer young collections
    promote far fewer of them and full collections become rare."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(young, 20, 100)


# -- running in-process -----------------------------------------------------------------------


class ListenError(RuntimeError):
    """The server cannot listen where it was told: a one-line reason, not a traceback."""

    WHY: ClassVar[dict[int, str]] = {
        errno.EADDRINUSE: "the address is already in use (another process listens there: "
        "stop it, or choose another port)",
        errno.EACCES: "permission denied (ports below 1024 need privileges)",
        errno.EADDRNOTAVAIL: "no such address on this machine",
    }

    def __init__(self, host: str, port: int, exc: OSError) -> None:
        why = self.WHY.get(exc.errno or 0, exc.strerror or str(exc))
        super().__init__(f"cannot listen on {host}:{port}: {why}")
        self.errno = exc.errno


def _listening_socket(host: str, port: int, reuse_port: bool, join: bool) -> socket.socket:
    """A socket bound to ``host:port``. With ``reuse_port`` and not ``join`` (the first of
    several processes), the port must be free even of other ``SO_REUSEPORT`` listeners: the
    kernel would otherwise quietly split connections with whatever already listens there."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if reuse_port and not join:
        with socket.socket(family) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                raise ListenError(host, port, exc) from None
            port = probe.getsockname()[1]  # port 0: the free one found, for every process
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on the connections of a socket whose
    # proto says TCP (a bare socket.socket() says 0), and without it every answer after the
    # first on a kept-alive connection waited ~40 ms (Nagle against the peer's delayed ACK)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ListenError(host, port, exc) from None
    return sock


@dataclass
class RunningServer:
    server: uvicorn.Server
    task: asyncio.Task[None]
    host: str
    port: int
    pending: PendingRequests | None = None  # the incomplete requests (hub.serve.httpguard)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}/ws"

    async def stop(self) -> None:
        self.server.should_exit = True
        await self.task


async def serve(
    app: ASGIApp,
    host: str = "127.0.0.1",
    port: int = 0,
    reuse_port: bool = False,
    join: bool = False,
    request_timeout: float = REQUEST_TIMEOUT,
    max_pending: int | None = None,
    **options: Any,
) -> RunningServer:
    """Start uvicorn in this event loop and return once it listens (``port=0``: a free one).
    Websocket upgrades go to the app's ``FeedSocket`` class (``create_app``), else to
    uvicorn's sans-I/O protocol without per-message deflate. ``reuse_port``: several edge
    processes share the port (``SO_REUSEPORT``; the kernel spreads connections over them), one
    per core; ``join``: this one joins processes already listening there (else the port must
    be free; ``ListenError`` when it cannot listen). ``request_timeout``, ``max_pending``: the
    bound on incomplete requests (``hub.serve.httpguard``; ``max_pending`` None: a quarter of the
    open-file limit, at most 1024)."""
    sock = _listening_socket(host, port, reuse_port, join)
    state = getattr(app, "state", None)
    pending = PendingRequests(request_timeout, max_pending)
    if getattr(state, "metrics", None) is not None:
        state.metrics.watch_requests(pending)  # type: ignore[union-attr]
    # uvicorn's own logging config would give its loggers a handler of their own, out of reach
    # of the root handlers' repeat filters (hub.logs): a failing endpoint polled in a loop then
    # wrote one traceback per request. Without it they propagate to the root handlers.
    options.setdefault("log_config", None)
    config = uvicorn.Config(
        app,
        http=guarded_http(pending),
        ws=getattr(state, "ws_protocol", None) or "websockets-sansio",
        ws_per_message_deflate=False,
        ws_max_size=1 << 20,
        proxy_headers=False,  # forwarding headers are hub.serve.proxies' call, not uvicorn's
        log_level="warning",
        lifespan="on",
        **options,
    )
    bound = sock.getsockname()[1]
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.should_exit:
        # A SIGINT or SIGTERM while it started (an ingest's rebuild): uvicorn takes them until
        # the caller's own handlers are in place, stops, and raises the signal again. SIGTERM
        # then ends the process; SIGINT cancels this task (asyncio.run: KeyboardInterrupt).
        # Not awaited, the stopped server's closed socket and cancelled lifespan were three
        # tracebacks and exit 1.
        await task
        raise asyncio.CancelledError
    if task.done():
        sock.close()
        await task  # raises the startup error
        raise RuntimeError("uvicorn exited during startup")
    return RunningServer(server, task, host, bound, pending)
