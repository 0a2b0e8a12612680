"""The client-facing Starlette app: ``/ws`` feeds, REST snapshots, health, metrics, overlays.

The app knows nothing of the engine or the bus: it reads topics from a ``FeedSource``
(the ingest in the embedded/``all`` process, an ``EdgeSource`` in an edge process) and hands
operator commands back to it. Client protocol: docs/protocol.md §2.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import socket
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp
from starlette.websockets import WebSocket

from hub.auth import OPERATOR, Auth, Role, audience_for
from hub.codec import CodecError, from_json, pack, to_json
from hub.engine.standings_select import select_standings
from hub.engine.topics import FAMILIES, Family
from hub.fanout import AsgiSink, Fanout
from hub.feedsocket import FeedService, OriginPolicy
from hub.metrics import CONTENT_TYPE, Metrics
from hub.proxies import TrustedProxies

__all__ = ["FeedSource", "RunningServer", "create_app", "serve", "tune_gc"]

log = logging.getLogger(__name__)


class FeedSource(Protocol):
    """What the app needs from the process that owns the topics."""

    tournament: str
    store: Any  # hub.feed store: ``snapshot(key) -> (seq, payload)``, ``catch_up``
    fanout: Fanout

    def ready(self) -> bool: ...

    def check_topic(self, role: str, topic: object) -> str | None:
        """Why ``role`` may not subscribe to ``topic`` (``unknown_topic``: not a topic of this
        tournament; ``forbidden``), or None."""
        ...

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        """An operator command (``{"op": "onair", "slot", "value"}``); answers
        ``{"ok": bool, "code"?, "error"?, "queued"?}``."""
        ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


SELECT = ("scope", "stage", "session", "group")  # the standings' REST query parameters


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

    @property
    def origin_refusals(self) -> int:
        return self.service.origin_refusals

    # -- websocket, for ASGI servers other than ours (see hub.feedsocket) --

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
        session = service.start(service.join(AsgiSink(websocket), role, fmt, address))
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
            token = request.query_params.get("token", "")
        return self.auth.role_for(token.strip() or None)

    async def _topic(self, request: Request, topic: str) -> Response:
        """A topic's snapshot; the standings take ``scope``, ``stage``, ``session`` and
        ``group`` to serve one block of it (``hub.engine.standings_select``)."""
        role = self._role(request)
        if role is None:
            return _json({"error": "unauthorized", "message": "unknown token"}, 401)
        code = self.valid_topic(role, topic)
        if code == "forbidden":
            needs = "operator" if topic == "ops" else "commentator or operator"
            return _json({"error": code, "message": f"topic {topic} needs the {needs} role"}, 403)
        if code is not None:
            return _json({"error": "not_found", "message": f"no topic named {topic!r}"}, 404)
        seq, payload = self.source.store.snapshot((audience_for(role), topic))
        if seq == 0:
            return _json({"error": "not_found", "message": f"topic {topic} has no data yet"}, 404)
        if topic == "standings":
            picked = {k: request.query_params.get(k) for k in SELECT}
            if any(v is not None for v in picked.values()):
                chosen = select_standings(payload, **picked)
                if isinstance(chosen, str):
                    return _json({"error": "not_found", "message": chosen}, 404)
                payload = chosen
        return _json({"topic": topic, "seq": seq, "data": payload})

    def topic_route(self, family: Family) -> Any:
        """The REST endpoint of a topic family: its path parameters name the topic."""

        async def endpoint(request: Request) -> Response:
            args = [request.path_params[p] for p in family.params]
            return await self._topic(request, family.name_of(*args))

        return endpoint

    async def onair(self, request: Request) -> Response:
        if request.method == "GET":
            return await self._topic(request, FAMILIES["onair"].name_of())
        role = self._role(request)
        if role is None:
            return _json({"error": "unauthorized", "message": "unknown token"}, 401)
        if role != OPERATOR:
            return _json({"error": "forbidden", "message": "onair needs the operator role"}, 403)
        try:
            body = from_json(await request.body())
        except CodecError as exc:
            return _json({"error": "bad_request", "message": str(exc)}, 400)
        if not (isinstance(body, dict) and isinstance(body.get("slot"), str) and "value" in body):
            return _json({"error": "bad_request", "message": "needs 'slot' and 'value'"}, 400)
        result = await self.source.control(
            {"op": "onair", "slot": body["slot"], "value": body["value"]}
        )
        if result.get("ok"):
            return _json(result)
        code = str(result.get("code", "rejected"))
        status = 503 if code == "unavailable" else 400
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
        from hub.engine.phh_export import bundle, collect, render

        hands = collect(engine.state, None if role == OPERATOR else engine.released)
        rendered = await asyncio.to_thread(render, hands, engine.config.name)  # PokerKit is slow
        name = f"{self.source.tournament}.phhs"
        return Response(
            bundle(rendered),
            media_type="application/toml; charset=utf-8",
            headers={
                "content-disposition": f'attachment; filename="{name}"',
                "x-phh-hands": str(len(rendered.hands)),
                "x-phh-skipped": str(len(rendered.skipped)),
            },
        )

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
        text = self.metrics.render(private=role == "operator")
        return Response(text, headers={"content-type": CONTENT_TYPE})

    async def root(self, request: Request) -> Response:
        return RedirectResponse("/overlays/")


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
    ``raw_frames``: ``serve`` hands ``/ws`` to ``hub.feedsocket.FeedSocket`` (frames written
    straight to the socket, no task per connection); False: to Starlette's websocket route.
    ``allowed_origins``: ``Origin`` values allowed on ``/ws`` (default:
    ``$DUPLICAST_ALLOWED_ORIGINS``, else the request's own host and clients without
    ``Origin``). ``trusted_proxies``: addresses/CIDRs of the load balancers whose
    ``X-Forwarded-For``/``-Host`` are believed (default: ``$DUPLICAST_TRUSTED_PROXIES``, else
    none; hub.proxies)."""
    auth = Auth.from_env() if auth is None else auth
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
    ep = _Endpoints(source, service, metrics)
    routes: list[BaseRoute] = [
        WebSocketRoute("/ws", ep.websocket),
        *(
            Route(f.route, ep.topic_route(f))
            for f in FAMILIES.values()
            if f.route is not None and f.name != "onair"
        ),
        Route(FAMILIES["onair"].route or "/api/onair", ep.onair, methods=["GET", "POST"]),
        Route("/api/export/phh", ep.export_phh),
        Route("/healthz", ep.healthz),
        Route("/readyz", ep.readyz),
        Route("/metrics", ep.metrics_text),
        Route("/", ep.root),
    ]
    if overlays_dir is not None:
        routes.append(Mount("/overlays", StaticFiles(directory=overlays_dir, html=True)))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if manage_source:
            await source.start()
        try:
            yield
        finally:
            await source.fanout.close_all()
            await service.stop()
            if manage_source:
                await source.stop()

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error},
    )
    app.state.source = source
    app.state.feed = service
    app.state.ws_protocol = service.protocol() if raw_frames else None
    app.state.metrics = metrics
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


@dataclass
class RunningServer:
    server: uvicorn.Server
    task: asyncio.Task[None]
    host: str
    port: int

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
    app: ASGIApp, host: str = "127.0.0.1", port: int = 0, reuse_port: bool = False, **options: Any
) -> RunningServer:
    """Start uvicorn in this event loop and return once it listens (``port=0``: a free one).
    Websocket upgrades go to the app's ``FeedSocket`` class (``create_app``), else to
    uvicorn's sans-I/O protocol without per-message deflate. ``reuse_port``: several edge
    processes share the port (``SO_REUSEPORT``; the kernel spreads connections over them), one
    per core."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    state = getattr(app, "state", None)
    config = uvicorn.Config(
        app,
        ws=getattr(state, "ws_protocol", None) or "websockets-sansio",
        ws_per_message_deflate=False,
        ws_max_size=1 << 20,
        proxy_headers=False,  # forwarding headers are hub.proxies' call, not uvicorn's
        log_level="warning",
        lifespan="on",
        **options,
    )
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            sock.close()
            await task  # raises the startup error
            raise RuntimeError("uvicorn exited during startup")
        await asyncio.sleep(0.01)
    return RunningServer(server, task, host, sock.getsockname()[1])
