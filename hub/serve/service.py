"""What every ``/ws`` connection of a process shares, whatever carries it
(``hub.serve.feedsocket``'s
raw sockets, the ASGI ``/ws`` of ``hub.serve.http``): who may connect (token, Origin, connections
per address), and what a client may say (subscribe, unsubscribe, ping, the operator's
onair, undo_take, cue, preview, take, clock, confirm, void, penalty and roster, a web
console's event) —
docs/protocol.md §2, §3."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from hub.engine.families import FAMILIES
from hub.serve.auth import (
    FEEDS,
    OPERATOR,
    PUBLIC,
    Auth,
    ConsoleSeat,
    audience_for,
    check_topic,
    may_control,
    program_topic,
)
from hub.serve.commands import COMMAND_OPS, operator_command
from hub.serve.console_events import console_event
from hub.serve.fanout import Fanout
from hub.serve.feedclient import Client
from hub.serve.origins import OriginPolicy
from hub.serve.proxies import TrustedProxies
from hub.serve.session import Session, error
from hub.wire.codec import CodecError, from_json_strict, unpack_strict
from hub.wire.frames import FORMATS
from hub.wire.signing import is_proof
from hub.wire.topics import PROGRAM, TopicSpace, kind

__all__ = ["FeedService", "TopicCheck", "least_role"]

log = logging.getLogger(__name__)

TopicCheck = Callable[..., "str | None"]
"""``valid_topic(role, topic[, table])``: an error code (``unknown_topic``, ``forbidden``, ...)
or None (``table``: a console's own, asked only for a console)."""


class FeedService:
    """The sessions of one process's ``/ws``: admission, client messages, operator commands."""

    def __init__(
        self,
        source: Any,
        auth: Auth,
        origins: OriginPolicy,
        proxies: TrustedProxies | None = None,
    ) -> None:
        self.source = source
        self.fanout: Fanout = source.fanout
        self.auth = auth
        self.origins = origins
        self.proxies = TrustedProxies() if proxies is None else proxies
        checker = getattr(source, "check_topic", None)
        self.valid_topic: TopicCheck = checker if callable(checker) else check_topic
        self._tasks: set[asyncio.Task[Any]] = set()
        self.consoles = getattr(source, "consoles", None)  # the web consoles' relay
        self.fanout.console_left = self._console_left
        self._console_sockets: Counter[str] = Counter()  # console -> its sockets here

    @property
    def topics(self) -> TopicSpace:
        """The tournament's topics and program outputs, as the source knows them (none: any
        name of either is taken as a name of some tournament)."""
        space = getattr(self.source, "topics", None)
        return space if isinstance(space, TopicSpace) else _ANY

    # -- admission --

    def origin_allowed(self, origin: str | None, host: str | None, address: str | None) -> bool:
        if self.origins.allows(origin, host):
            return True
        self.refused("forbidden_origin", address, f"origin {origin!r}, host {host!r}")
        return False

    @property
    def origin_refusals(self) -> int:
        return self.fanout.refused["forbidden_origin"]

    def admit(self, query: Mapping[str, str], address: str | None) -> tuple[Any, str, Any]:
        """``(role, format, problem)`` of a new connection (``role``: a web console's
        ``ConsoleSeat``, else its role); ``problem`` is the error to send before closing it
        (None: admitted). The per-address cap is the spectators': a valid token is never
        refused for it, so a venue address full of public sockets cannot lock out the
        operator."""
        fmt = query.get("format", "json")
        role = self.auth.grant(query.get("token"))
        problem = token_spelling(query)
        if problem is not None:
            pass
        elif role is None:
            problem = error("unauthorized", "unknown token")
        elif fmt not in FORMATS:
            problem = error("bad_request", f"format must be one of {', '.join(FORMATS)}")
        else:
            problem = self.feed_problem(query)
        if problem is None and role == PUBLIC and not self.fanout.may_connect(address):
            limit = self.fanout.limits.max_per_address
            problem = error("too_many_connections", f"more than {limit} connections from {address}")
        if problem is None and isinstance(role, ConsoleSeat):
            limit = self.fanout.limits.max_per_console
            if self._console_sockets[role.console] >= limit:
                # (one console token opened 1,500 sockets: a tablet needs one, a spare a few)
                problem = error(
                    "too_many_connections",
                    f"console {role.console} already has {limit} connections here: close "
                    "another tablet's page (or wait for a dropped one to time out)",
                )
        if problem is not None:
            self.refused(problem["code"], address)
        return role, fmt, problem

    def refused(self, code: str, address: str | None, detail: str = "") -> None:
        """Count a refused connection by code (``duplicast_ws_refused``) and log it; the log
        handlers' ``RepeatFilter`` (hub.logs) keeps a flood of refusals to a few lines."""
        self.fanout.refused[code] += 1
        log.warning("refused a websocket from %s: %s %s", address, code, detail)

    def feed_problem(self, query: Mapping[str, str]) -> dict[str, Any] | None:
        """Why the ``feed`` and ``output`` a client asked for cannot be served (None: they
        can). ``output`` names a program output, so it comes with ``feed=program`` (a page
        that forgot it must not show the live feed with a token's hole cards on a screen
        meant for the delayed one); a name the tournament lacks is ``unknown_output``."""
        feed, output = query.get("feed"), query.get("output")
        if feed not in (None, *FEEDS):
            return error("bad_request", f"feed must be one of {', '.join(FEEDS)}")
        if output is not None and feed is None:
            return error("bad_request", f"output={output} names a program output: add feed=program")
        outputs = self.topics.outputs
        if feed is not None and self.topics.output(output) is None:
            known = "letters, digits, '-', '_'" if outputs is None else ", ".join(outputs)
            why = f"outputs: {known or 'none, no [broadcast] delay'}"
            return error("unknown_output", f"no program output named {output!r} ({why})")
        return None

    def audience(self, role: Any, query: Mapping[str, str] | None) -> str:
        """The audience a client reads: the program output it asked for (``feed_problem``
        passed), else its role's."""
        if query is not None and query.get("feed") in FEEDS:
            return self.topics.output(query.get("output")) or PROGRAM
        return audience_for(role)

    def rest_audience(self, role: Any, query: Mapping[str, str]) -> tuple[str, Any]:
        """``(audience, problem)`` of a REST read: as ``audience``, with ``problem`` (None:
        none) the ``feed_problem`` of an ``output`` as a response body and HTTP status (an
        unknown ``feed`` alone is read as none, as it always was)."""
        found = self.feed_problem(query) if "output" in query else None
        if found is None:
            return self.audience(role, query), None
        status = 404 if found["code"] == "unknown_output" else 400
        return PROGRAM, ({"error": found["code"], "message": found["message"]}, status)

    def join(
        self,
        sink: Any,
        role: Any,
        fmt: str,
        address: str | None,
        query: Mapping[str, str] | None = None,
    ) -> Client:
        """The admitted connection as a fan-out client, reading its role's audience or the
        program output its ``query`` asked for; only public ones count against the per-address cap
        (authenticated roles are exempt from it, see ``admit``). A web console's client hears
        its console's answers from now on."""
        if isinstance(role, ConsoleSeat):
            client = self.fanout.add(sink, role.role, audience_for(role.role), fmt, None)
            client.console = role
            self._console_sockets[role.console] += 1
            if self.consoles is not None:
                self.consoles.attach(client, role.console, role.table)
            return client
        counted = address if role == PUBLIC else None
        client = self.fanout.add(sink, role, self.audience(role, query), fmt, counted)
        client.proof = query is not None and is_proof(query.get("token") or "")
        return client

    def _console_left(self, client: Client) -> None:
        name = client.console.console
        self._console_sockets[name] -= 1
        if self._console_sockets[name] <= 0:
            del self._console_sockets[name]
        if self.consoles is not None:
            self.consoles.detach(client, client.console.console)

    def start(self, client: Client) -> Session:
        """The session of a joined client, opened with its ``hello`` (a console's names its
        console and table)."""
        hello = {"type": "hello", "role": client.role, "tournament": self.source.tournament}
        if may_control(client.role):  # what its signed commands' ts are reckoned on
            hello["now"] = round(time.time(), 3)
        seat = client.console
        if seat is not None:
            hello.update(console=seat.console, table=seat.table)
        client.send(hello)
        if seat is not None:
            self.spawn(self._send_epoch(client))
        return Session(self, client)

    async def _send_epoch(self, client: Client) -> None:
        """A web console's ``{"type": "epoch", "epoch": ...}`` after its hello: the hub's
        event epoch (null: unknown), which its outbox follows (docs/protocol.md §3.3)."""
        epoch = await self.consoles.epoch() if self.consoles is not None else None
        client.send({"type": "epoch", "epoch": epoch})

    # -- what a client says --

    def parse(self, data: bytes | str, text: bool) -> tuple[dict[str, Any] | None, Any]:
        """``(request, error)``: a well-formed request, or the error to answer."""
        try:
            # (a key given twice is refused: what counts is what every reader sees)
            request = from_json_strict(data) if text else unpack_strict(bytes(data))  # type: ignore[arg-type]
        except CodecError as exc:
            return None, error("bad_request", str(exc))
        if not isinstance(request, dict) or not isinstance(request.get("op"), str):
            return None, error("bad_request", "a message is an object with an 'op'")
        return request, None

    @staticmethod
    def is_command(request: dict[str, Any]) -> bool:
        """Operator commands wait for the ingest's answer; everything else is answered now."""
        return request["op"] in _COMMANDS

    def handle(self, client: Client, request: dict[str, Any]) -> dict[str, Any] | None:
        """Act on a request that is not a command; the error to send back, if any."""
        op = request["op"]
        if op == "ping":
            client.send({"type": "pong"})
            return None
        if op in ("subscribe", "unsubscribe"):
            return self._subscription(client, op, request)
        return error("bad_request", f"unknown op {op!r}")

    async def command(self, client: Client, request: dict[str, Any]) -> dict[str, Any] | None:
        if request["op"] == "event":  # a web console's: in order, each once it is published
            return await console_event(self.consoles, self.source.tournament, client, request)
        if "signed" not in request and client.proof:  # every edge holds the proof
            return error("unsigned", _PROOF_UNSIGNED, op=request["op"])
        if "signed" in request:  # checked here as any command; the ingest checks the signature
            signed = _unsigned(request)
            if isinstance(signed, str):
                return error("bad_request", signed, op=request["op"])
            request = signed
        op = str(request["op"])
        if not may_control(client.role):
            return error("forbidden", f"{op} needs the operator role", op=op)
        command, why = operator_command(request)  # (shaped as the REST and Redis paths do)
        if command is None:
            return error("bad_request", why, op=op)
        return self._answered(client, op, await self._control(request, command))

    def _subscription(
        self, client: Client, op: str, request: dict[str, Any]
    ) -> dict[str, Any] | None:
        topics = request.get("topics")
        resume = request.get("resume", {})
        if not (isinstance(topics, list) and all(isinstance(t, str) for t in topics)):
            return error("bad_request", "'topics' must be a list of topic names")
        if not isinstance(resume, dict) or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in resume.values()
        ):
            return error("bad_request", "'resume' must map topics to seqs (integers >= 0)")
        fanout = self.fanout
        for topic in dict.fromkeys(topics):
            if op == "unsubscribe":
                fanout.unsubscribe(client, topic)
                continue
            seat = client.console
            if seat is None:
                code = self.valid_topic(client.role, topic)
            else:
                code = self.valid_topic(client.role, topic, seat.table)
            if code is None and kind(client.audience) == PROGRAM and not program_topic(topic):
                code = "unknown_topic"  # the program feed has no projection, no ops
            if code == "unknown_topic":
                client.send(error(code, f"no topic named {topic!r}", topic=topic))
            elif code == "forbidden":
                client.send(error(code, _forbidden(client, topic), topic=topic))
            elif code is not None:
                client.send(error(code, f"topic {topic} refused", topic=topic))
            elif fanout.subscribe(client, topic, resume.get(topic)) is not None:
                limit = fanout.limits.max_topics
                client.send(
                    error(
                        "too_many_topics",
                        f"at most {limit} topics per connection; unsubscribe first",
                        topic=topic,
                    )
                )
        return None

    async def _control(self, request: dict[str, Any], command: dict[str, Any]) -> dict[str, Any]:
        """``command`` to the ingest, with the signed text and signature it came in (the
        ingest applies what was signed, after checking the signature: hub.roles.signed)."""
        envelope = request.get(_ENVELOPE)
        if envelope is not None:
            command = {**command, "signed": envelope[0], "sig": envelope[1]}
        result: dict[str, Any] = await self.source.control(command)
        return result

    def _answered(self, client: Client, op: str, result: dict[str, Any]) -> dict[str, Any] | None:
        if not result.get("ok"):
            return error(str(result.get("code", "rejected")), str(result.get("error", "")), op=op)
        client.send({"type": "ok", "op": op, **_flags(result)})
        return None

    # -- background work shared by all connections --

    def spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def _flags(result: dict[str, Any]) -> dict[str, Any]:
    """What an ``ok`` frame says beside the op: ``queued`` (the ingest will apply it), or
    ``repeated`` (a request id answered before: nothing applied again)."""
    return {k: True for k in ("queued", "repeated") if result.get(k)}


def token_spelling(query: Mapping[str, str]) -> dict[str, Any] | None:
    """The refusal of a query that spells ``token`` otherwise (``TOKEN=``, ``Token=``): nginx
    reads query arguments without regard to case (deploy/nginx.conf exempts a request with a
    ``token`` from its per-address cap), so ``?TOKEN=x`` escaped the cap while the hub read no
    token and served it as public. One spelling, everywhere: ``token``."""
    for key in query:
        if key != "token" and key.lower() == "token":
            return error("bad_request", f"the token is given as 'token=', not {key!r}")
    return None


_PROOF_UNSIGNED = (
    "a command from a session opened with a token's session proof must be signed: every edge "
    "holds the proof, so an unsigned one could come from any of them (docs/security.md)"
)
_COMMANDS = frozenset((*COMMAND_OPS, "event"))  # (a web console's event: in order, answered)
_ENVELOPE = "\x00signed"  # where an unwrapped request keeps its signed text and signature


def _unsigned(request: dict[str, Any]) -> dict[str, Any] | str:
    """The request a signed command carries (``{"op", "signed", "sig"}``, docs/protocol.md
    §2.7), with its text and signature kept for the ingest; or why it cannot be one."""
    text, sig = request.get("signed"), request.get("sig")
    if not isinstance(text, str) or not isinstance(sig, str):
        return "a signed command has 'signed' (the command's JSON text) and 'sig' (hex)"
    try:
        inner = from_json_strict(text)  # (a key given twice is refused)
    except CodecError as exc:
        return f"'signed' is not a JSON command: {exc}"
    if not isinstance(inner, dict) or inner.get("op") != request["op"]:
        return "'signed' must be the JSON of this very command (the same 'op')"
    return {**inner, _ENVELOPE: (text, sig)}


_ANY = TopicSpace(FAMILIES, tables=(), seats=0, deals=0)  # no tournament: outputs of any name


def least_role(topic: str) -> str | None:
    """The least role that may read ``topic`` (its family's declaration), None: no family."""
    fam = FAMILIES.get(topic.partition(":")[0])
    return None if fam is None else fam.role


def _forbidden(client: Client, topic: str) -> str:
    """Why a subscription is forbidden, in words."""
    seat = client.console
    if seat is not None:
        return (
            f"a console of table {seat.table} reads console:{seat.table} and the public "
            f"standings, seats, on-air, ticker and clock, not {topic}"
        )
    operator = least_role(topic) == OPERATOR
    needs = "the operator role" if operator else "a commentator or operator token"
    return f"topic {topic} needs {needs}"
