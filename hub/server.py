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
import os
import socket
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from hub.auth import OPERATOR, Auth, Role, audience_for, check_topic, may_control
from hub.codec import CodecError, from_json, pack, to_json, unpack
from hub.engine.topics import FAMILIES, Family
from hub.fanout import FORMATS, AsgiSink, Client, Fanout, RawSink, Sink
from hub.metrics import CONTENT_TYPE, Metrics

__all__ = ["FeedSource", "RunningServer", "create_app", "serve", "tune_gc"]

log = logging.getLogger(__name__)

MAX_MALFORMED = 10
"""Malformed client messages tolerated on one connection before it is closed (1008)."""

_SEND_KEY = "duplicast.send"

ORIGINS_ENV = "DUPLICAST_ALLOWED_ORIGINS"
"""Comma-separated ``Origin`` values allowed on ``/ws`` (``*``: any). Unset: the request's own
host, plus clients that send no ``Origin`` (OBS, non-browser clients)."""

TopicCheck = Callable[[str, str], "str | None"]
"""``valid_topic(role, topic)``: an error code (``unknown_topic``, ``forbidden``, ...) or None."""


class OriginPolicy:
    """Which browser pages may open ``/ws``: a page's ``Origin`` must be allowed, so a page on
    ``https://evil.example`` cannot drive an operator's browser into an operator socket."""

    def __init__(self, allowed: Iterable[str] = ()) -> None:
        self.any = False
        self.allowed: set[str] = set()
        for origin in allowed:
            origin = origin.strip().rstrip("/").lower()
            if origin == "*":
                self.any = True
            elif origin:
                self.allowed.add(origin)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> OriginPolicy:
        env = os.environ if environ is None else environ
        return cls(env.get(ORIGINS_ENV, "").split(","))

    def allows(self, origin: str | None, host: str | None) -> bool:
        if origin is None or self.any:
            return True
        origin = origin.strip().rstrip("/").lower()
        if origin in self.allowed:
            return True
        if self.allowed:  # an explicit list replaces the same-host default
            return False
        netloc = urlsplit(origin).netloc
        return bool(host) and netloc == (host or "").strip().lower()


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


class _ExposeSend:
    """Keeps the server's own websocket ``send`` in the scope, so the fan-out can write
    pre-built frames to uvicorn's transport (Starlette wraps ``send`` further in)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            scope[_SEND_KEY] = send
        await self.app(scope, receive, send)


def _json(body: Any, status: int = 200) -> Response:
    return Response(to_json(body), status_code=status, media_type="application/json")


def _error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message, **extra}


class _Endpoints:
    def __init__(
        self, source: FeedSource, auth: Auth, metrics: Metrics, raw: bool, origins: OriginPolicy
    ) -> None:
        self.source = source
        self.auth = auth
        self.metrics = metrics
        self.raw = raw
        self.origins = origins
        # Topics of this tournament when the source knows them; any well-formed name else.
        checker = getattr(source, "check_topic", None)
        self.valid_topic: TopicCheck = checker if callable(checker) else check_topic
        self.origin_refusals = 0

    # -- websocket --

    def _sink(self, websocket: WebSocket) -> Sink:
        protocol = getattr(websocket.scope.get(_SEND_KEY), "__self__", None)
        if self.raw and RawSink.supports(protocol):
            limits = self.source.fanout.limits
            return RawSink(protocol, limits.close_grace, limits.sndbuf)
        return AsgiSink(websocket)

    async def websocket(self, websocket: WebSocket) -> None:
        origin = websocket.headers.get("origin")
        if not self.origins.allows(origin, websocket.headers.get("host")):
            self.origin_refusals += 1
            log.info("refused a websocket from origin %r", origin)
            await websocket.send_denial_response(
                _json({"error": "forbidden_origin", "message": f"origin {origin} not allowed"}, 403)
            )
            return
        fmt = websocket.query_params.get("format", "json")
        role = self.auth.role_for(websocket.query_params.get("token"))
        fanout = self.source.fanout
        address = websocket.client.host if websocket.client else None
        await websocket.accept()
        problem = None
        if role is None:
            problem = _error("unauthorized", "unknown token")
        elif fmt not in FORMATS:
            problem = _error("bad_request", f"format must be one of {', '.join(FORMATS)}")
        elif not fanout.may_connect(address):
            limit = fanout.limits.max_per_address
            problem = _error(
                "too_many_connections", f"more than {limit} connections from {address}"
            )
        if problem is not None or role is None:
            problem = problem or _error("unauthorized", "unknown token")
            if fmt == "msgpack":
                await websocket.send_bytes(pack(problem))
            else:
                await websocket.send_text(to_json(problem).decode())
            await websocket.close(1008, problem["message"])
            return
        client = fanout.add(self._sink(websocket), role, audience_for(role), fmt, address)
        client.send({"type": "hello", "role": role, "tournament": self.source.tournament})
        malformed = 0
        try:
            while not client.closed:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                error = await self._handle(client, message)
                if error is None:
                    continue
                client.send(error)
                if error["code"] == "bad_request":
                    malformed += 1
                    if malformed > MAX_MALFORMED:
                        client.close(1008, "too many malformed messages")
        finally:
            await client.aclose()

    async def _handle(self, client: Client, message: Mapping[str, Any]) -> dict[str, Any] | None:
        """Act on one client message; the error to send back, if any."""
        try:
            if message.get("text") is not None:
                request = from_json(message["text"])
            else:
                request = unpack(message.get("bytes") or b"")
        except CodecError as exc:
            return _error("bad_request", str(exc))
        if not isinstance(request, dict) or not isinstance(request.get("op"), str):
            return _error("bad_request", "a message is an object with an 'op'")
        op = request["op"]
        if op == "ping":
            client.send({"type": "pong"})
            return None
        if op in ("subscribe", "unsubscribe"):
            return self._subscription(client, op, request)
        if op == "onair":
            return await self._onair(client, request)
        if op == "confirm":
            return await self._confirm(client, request)
        return _error("bad_request", f"unknown op {op!r}")

    def _subscription(
        self, client: Client, op: str, request: dict[str, Any]
    ) -> dict[str, Any] | None:
        topics = request.get("topics")
        resume = request.get("resume", {})
        if not (isinstance(topics, list) and all(isinstance(t, str) for t in topics)):
            return _error("bad_request", "'topics' must be a list of topic names")
        if not isinstance(resume, dict) or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in resume.values()
        ):
            return _error("bad_request", "'resume' must map topics to seqs (integers >= 0)")
        fanout = self.source.fanout
        for topic in dict.fromkeys(topics):
            if op == "unsubscribe":
                fanout.unsubscribe(client, topic)
                continue
            code = self.valid_topic(client.role, topic)
            if code == "unknown_topic":
                client.send(_error(code, f"no topic named {topic!r}", topic=topic))
            elif code == "forbidden":
                needs = "the operator role" if topic == "ops" else "a commentator or operator token"
                client.send(_error(code, f"topic {topic} needs {needs}", topic=topic))
            elif code is not None:
                client.send(_error(code, f"topic {topic} refused", topic=topic))
            elif fanout.subscribe(client, topic, resume.get(topic)) is not None:
                limit = fanout.limits.max_topics
                client.send(
                    _error(
                        "too_many_topics",
                        f"at most {limit} topics per connection; unsubscribe first",
                        topic=topic,
                    )
                )
        return None

    async def _onair(self, client: Client, request: dict[str, Any]) -> dict[str, Any] | None:
        if not may_control(client.role):
            return _error("forbidden", "onair needs the operator role", op="onair")
        if not isinstance(request.get("slot"), str) or "value" not in request:
            return _error("bad_request", "onair needs a 'slot' and a 'value'", op="onair")
        result = await self.source.control(
            {"op": "onair", "slot": request["slot"], "value": request["value"]}
        )
        if not result.get("ok"):
            return _error(
                str(result.get("code", "rejected")), str(result.get("error", "")), op="onair"
            )
        client.send(
            {"type": "ok", "op": "onair", **({"queued": True} if result.get("queued") else {})}
        )
        return None

    async def _confirm(self, client: Client, request: dict[str, Any]) -> dict[str, Any] | None:
        """An official settles a disputed hand from the operator panel (journaled by ingest)."""
        if not may_control(client.role):
            return _error("forbidden", "confirm needs the operator role", op="confirm")
        table, deal, seats = request.get("table"), request.get("deal"), request.get("seats")
        if not (isinstance(table, int) and isinstance(deal, int)) or not (
            seats is None or (isinstance(seats, list) and all(isinstance(s, int) for s in seats))
        ):
            return _error("bad_request", "confirm needs int 'table', 'deal' and optional 'seats'")
        command: dict[str, Any] = {"op": "confirm", "table": table, "deal": deal}
        if seats:
            command["seats"] = seats
        result = await self.source.control(command)
        if not result.get("ok"):
            return _error(
                str(result.get("code", "rejected")), str(result.get("error", "")), op="confirm"
            )
        client.send(
            {"type": "ok", "op": "confirm", **({"queued": True} if result.get("queued") else {})}
        )
        return None

    # -- REST --

    def _role(self, request: Request) -> Role | None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            token = request.query_params.get("token", "")
        return self.auth.role_for(token.strip() or None)

    async def _topic(self, request: Request, topic: str) -> Response:
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
        return _json(result, 200 if result.get("ok") else 400)

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
) -> Starlette:
    """The app for one process. ``manage_source``: start and stop ``source`` in the lifespan.
    ``raw_frames``: write pre-built frames to uvicorn's transport when it allows it.
    ``allowed_origins``: ``Origin`` values allowed on ``/ws`` (default:
    ``$DUPLICAST_ALLOWED_ORIGINS``, else the request's own host and clients without
    ``Origin``)."""
    auth = Auth.from_env() if auth is None else auth
    metrics = Metrics() if metrics is None else metrics
    metrics.watch(source.fanout)
    origins = OriginPolicy.from_env() if allowed_origins is None else OriginPolicy(allowed_origins)
    ep = _Endpoints(source, auth, metrics, raw_frames, origins)
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
            if manage_source:
                await source.stop()

    app = Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(_ExposeSend)])
    app.state.source = source
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
    Websockets use the sans-I/O protocol without per-message deflate, which the fan-out
    writes pre-built frames to. ``reuse_port``: several edge processes share the port
    (``SO_REUSEPORT``; the kernel spreads connections over them), one per core."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    config = uvicorn.Config(
        app,
        ws="websockets-sansio",
        ws_per_message_deflate=False,
        ws_max_size=1 << 20,
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
