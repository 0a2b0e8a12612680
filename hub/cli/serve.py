"""`duplicast serve`: a hub's process role on Redis, started and run until a signal, or until
the lease it held passes to another process (exit 3).

- *ingest*: the single writer: console channels → engine → journal → feed channel.
- *edge*: websocket and REST clients, fed from the feed channel (any number of them).
- *all*: both in one process, the edge fed directly by the ingest (also what `demo` runs).
- *projector*: the feed of an ingest run with ``--feed separate``, from its journal.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hub.bus import open_bus, redacted_url
from hub.cli.workers import raise_open_files, start_edge_workers, stop_workers, wait_listening
from hub.domain.states import ProcessRole
from hub.engine.core import Engine
from hub.engine.families import topic_space
from hub.files.config import load_config
from hub.files.decks import KEY_ENV, KEY_FILE_ENV, load_decks
from hub.roles.edge import EdgeSource
from hub.roles.embedded import (
    OVERLAYS,
    SAMPLE_CONFIG,
    IngestSource,
    until_signalled,
    weak_tokens_refused,
)
from hub.roles.ingest import Ingest
from hub.serve.http import ListenError
from hub.serve.links import (
    COMMENTATOR_ENV,
    OPERATOR_ENV,
    console_link_lines,
    link_lines,
    roles_off,
)
from hub.serve.proxies import TRUSTED_PROXIES_ENV, TrustedProxies

NO_CONSOLES_WARNING = (
    "duplicast serve: WARNING: the tournament file has no [consoles] section: any console "
    "name is accepted, and whoever writes a table first under a name holds that name "
    "(list each console and its table in [consoles]; docs/security.md)"
)


EDGE_TOKENS_WARNING = (
    "duplicast serve: WARNING: this edge was given tokens, not their session proofs: whoever "
    "takes it over can sign as the operator and the consoles. Give edges the proofs "
    "(`duplicast proofs`; docs/security.md)"
)


async def run_serve(args: argparse.Namespace) -> int:
    """Check the options, say what it runs on, then serve the role until a signal (exit 0) or
    until its lease passes to another ingest (exit 3)."""
    from hub.serve.http import create_app

    checked = _checked_options(args)
    if isinstance(checked, int):
        return checked
    auth, proxies = checked
    raise_open_files()
    config = load_config(args.config)
    seats = console_tokens(config, os.environ)
    if seats is None:
        return 2
    obs = _obs_settings(args, config)
    if obs == 2:
        return 2
    auth = dataclasses.replace(auth, consoles=seats)
    if weak_tokens_refused("serve", auth):
        return 2
    _announce(args, config, auth, proxies)
    if args.role == ProcessRole.EDGE and not auth.proofs_only():
        print(EDGE_TOKENS_WARNING, file=sys.stderr, flush=True)
    bus = open_bus(args.redis)
    await bus.connect()
    if args.role == ProcessRole.PROJECTOR:
        return await run_projector(bus, config, args)
    source, writer, lost = await _open_source(bus, config, args, auth.keyring())
    metrics = getattr(source, "metrics", None)
    app = create_app(
        source,
        overlays_dir=OVERLAYS,
        auth=auth,
        metrics=metrics,
        trusted_proxies=proxies,
    )
    if writer is None:
        lost = getattr(source, "lost", None)
    stop_metrics = _private_metrics(app, args)
    obs_link = None
    if obs is not None and not isinstance(obs, int):
        from hub.roles.obs_link import start_obs_link

        settings, audience = obs
        obs_link = start_obs_link(source.store, settings, audience, app.state.metrics.registry)
    try:
        await _serve_until_stopped(app, args, config, auth, lost)
    finally:
        if obs_link is not None:
            await obs_link.stop()
        if stop_metrics is not None:
            stop_metrics()
        if writer is not None:
            await writer.stop()
        await bus.close()
    if lost is not None and lost.is_set():
        print("duplicast: this ingest lost its lease to another one; exiting", file=sys.stderr)
        return 3
    return 0


def _checked_options(args: argparse.Namespace) -> tuple[Any, TrustedProxies] | int:
    """The tokens and trusted proxies `serve` runs with, or the exit status (2) of options it
    refuses. An edge worker of ``--processes N`` is bound to end with its parent here."""
    from hub.serve.auth import Auth

    auth = Auth.from_env()
    if weak_tokens_refused("serve", auth):
        return 2
    if args.processes > 1 and args.role != ProcessRole.EDGE:
        print(
            "duplicast serve: --processes needs --role edge (one ingest writes the journal)",
            file=sys.stderr,
        )
        return 2
    if args.worker_of is not None:  # an edge worker of `--processes N`: ends with its parent
        from hub.roles.lifeline import die_with_parent

        die_with_parent(args.worker_of)
    try:
        proxies = TrustedProxies(args.trusted_proxy or ()) or TrustedProxies.from_env()
    except ValueError as exc:
        print(f"duplicast serve: --trusted-proxy / {TRUSTED_PROXIES_ENV}: {exc}", file=sys.stderr)
        return 2
    return auth, proxies


def _obs_settings(args: argparse.Namespace, config: Any) -> Any:
    """The OBS link's settings and audience (``DUPLICAST_OBS_URL``, hub.roles.obs_link), None
    without it, or 2 after saying which setting is wrong. One process runs the link: the one
    with the feed's writer (``--role all`` or ``ingest``); an edge or a projector says it
    leaves it to that one."""
    from hub.roles.obs_link import URL_ENV, ObsSettingsError, obs_settings

    if args.worker_of is not None:  # an edge worker of `--processes N`
        return None
    if args.role in (ProcessRole.EDGE, ProcessRole.PROJECTOR):
        if os.environ.get(URL_ENV, "").strip():
            print(
                f"duplicast serve: warning: {URL_ENV} is set, but the OBS link runs in the "
                f"ingest (or --role all), not in this {args.role}: ignored here",
                file=sys.stderr,
                flush=True,
            )
        return None
    try:
        return obs_settings(config, os.environ)
    except ObsSettingsError as exc:
        print(f"duplicast serve: refusing to start: {exc}", file=sys.stderr)
        return 2


def console_tokens(config: Any, environ: Mapping[str, str]) -> tuple[Any, ...] | None:
    """The web consoles' tokens from the file ``$DUPLICAST_CONSOLE_TOKENS_FILE`` (none without
    it), or None after saying why ``serve`` refuses them: an unreadable file or line, a console
    the tournament's ``[consoles]`` does not give that table."""
    from hub.serve.auth import CONSOLE_TOKENS_ENV, console_token_problems, parse_console_tokens

    path = environ.get(CONSOLE_TOKENS_ENV)
    if not path:
        return ()
    try:
        seats = parse_console_tokens(Path(path).read_text("utf-8"), path)
    except (OSError, UnicodeError, ValueError) as exc:
        print(f"duplicast serve: refusing to start: {CONSOLE_TOKENS_ENV}: {exc}", file=sys.stderr)
        return None
    problems = console_token_problems(seats, config.consoles)
    for problem in problems:
        print(f"duplicast serve: refusing to start: {path}: {problem}", file=sys.stderr)
    return None if problems else seats


def _announce(args: argparse.Namespace, config: Any, auth: Any, proxies: TrustedProxies) -> None:
    """What `serve` runs on, and the warnings about how it is set up, before it starts."""
    print(_serve_line(args, config, proxies), file=sys.stderr, flush=True)
    if args.role in (ProcessRole.INGEST, ProcessRole.ALL) and not config.consoles:
        print(NO_CONSOLES_WARNING, file=sys.stderr, flush=True)
    if args.role != ProcessRole.PROJECTOR and args.worker_of is None:
        for warning in roles_off(auth.commentator_token, auth.operator_token):
            print(f"duplicast serve: warning: {warning}", file=sys.stderr, flush=True)


async def _open_source(
    bus: Any, config: Any, args: argparse.Namespace, keys: Any
) -> tuple[Any, Ingest | None, asyncio.Event | None]:
    """What the role's server serves, the ingest started beside an edge's server (``--feed
    separate``) and the event set when that ingest loses its lease. ``keys``: what the ingest
    verifies signed commands and web console events with (``Auth.keyring``)."""
    from hub.serve.limits import Limits

    limits = Limits(max_per_address=args.max_per_address)
    if args.role == ProcessRole.EDGE:  # an edge never needs the deck key: it holds no cards
        return EdgeSource(bus, config.id, topics=topic_space(config), limits=limits), None, None
    decks = load_decks(config, args.config.parent, dict(os.environ))
    if args.role == ProcessRole.INGEST and args.feed == "separate":
        lost = asyncio.Event()
        writer = Ingest(bus, Engine(config, decks), feed=False, on_lost=lost.set)
        writer.signed.keys = keys
        source = WriterSource(bus, config.id, writer, topics=topic_space(config), limits=limits)
        await writer.start()
        return source, writer, lost
    ingest = IngestSource(bus, Engine(config, decks), own_bus=False, limits=limits, keys=keys)
    return ingest, None, None


def _private_metrics(app: Any, args: argparse.Namespace) -> Callable[[], None] | None:
    """``--metrics-port``: every metric, unauthenticated, on a port kept off the public
    network; the function that stops it (None: off)."""
    if not args.metrics_port:
        return None
    from hub.metrics import serve_private

    try:
        return serve_private(app.state.metrics, args.metrics_host, args.metrics_port)
    except OSError as exc:
        raise ListenError(args.metrics_host, args.metrics_port, exc) from None


async def _serve_until_stopped(
    app: Any, args: argparse.Namespace, config: Any, auth: Any, lost: asyncio.Event | None
) -> None:
    """Listen (with the edge workers of ``--processes N``), print where, and serve until a
    signal or the lost lease."""
    from hub.serve.http import serve, tune_gc

    workers: list[subprocess.Popen[bytes]] = []
    try:
        several = args.processes > 1 or args.reuse_port
        server = await serve(
            app,
            args.host,
            args.port,
            reuse_port=several,
            join=args.reuse_port,
            request_timeout=args.request_timeout,
            max_pending=args.max_pending_requests,
        )
        if args.processes > 1:
            workers = start_edge_workers(args, server.port)
            await wait_listening(workers)
        tune_gc()
        print(
            f"duplicast {args.role} for {config.id!r} on {server.url}"
            + (f" ({args.processes} processes)" if args.processes > 1 else ""),
            flush=True,
        )
        if args.worker_of is None:  # a worker's parent prints them
            print("\n".join(_links(args, config, auth, server.port)), flush=True)
        try:
            await _until_signalled_or(lost)
        finally:
            await server.stop()
    finally:
        stop_workers(workers)


async def _until_signalled_or(lost: asyncio.Event | None) -> None:
    """Wait for SIGINT/SIGTERM, or for ``lost`` (a lease passed to another process)."""
    stop = asyncio.Event()
    waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(until_signalled(stop))]
    if lost is not None:
        waits.append(asyncio.ensure_future(lost.wait()))
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waits:
            waiter.cancel()


class WriterSource(EdgeSource):
    """What an ingest run with ``--feed separate`` serves: its clients as an edge's (the feed
    comes from the projector), its own metrics and PHH export, its operator commands applied
    by its own ingest (as ``--role ingest`` does: a control surface's unsigned command with the
    operator token, docs/companion.md), and ready only while both the edge follows the feed and
    the ingest holds the lease (not in standby)."""

    def __init__(self, bus: Any, tournament: str, ingest: Ingest, **options: Any) -> None:
        super().__init__(bus, tournament, **options)
        self.ingest = ingest
        self.metrics = ingest.metrics

    @property
    def engine(self) -> Engine:
        """The ingest's engine: what `/api/export/phh` reads (it holds the cards)."""
        return self.ingest.engine

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        """An operator command, applied by this process's ingest while it writes (its client
        showed the operator token itself, or signed it and the ingest verifies that; a bare
        proof never reaches here): not relayed over the bus, where an unsigned one is refused
        as an edge's is. In standby (another ingest writes) a signed one is relayed to it; an
        unsigned one is unavailable here."""
        if self.ingest.ready:
            return await self.ingest.control_now(command)
        if "signed" in command:
            return await super().control(command)
        message = "this ingest is in standby (another one writes the journal): retry shortly"
        return {"ok": False, "code": "unavailable", "error": message}

    def ready(self) -> bool:
        return super().ready() and self.ingest.ready


async def run_projector(bus: Any, config: Any, args: argparse.Namespace) -> int:
    """`serve --role projector`: the feed of an ingest started with ``--feed separate``,
    published by following the journal (hub.roles.projector); no HTTP of its own."""
    from hub.roles.projector import Projector
    from hub.serve.http import tune_gc

    decks = load_decks(config, args.config.parent, dict(os.environ))
    lost = asyncio.Event()
    projector = Projector(bus, Engine(config, decks), on_lost=lost.set)
    try:
        await projector.start()
        tune_gc()
        state = "standby" if projector.standby else f"at {projector.position}"
        print(f"duplicast projector for {config.id!r} ({state})", flush=True)
        await _until_signalled_or(lost)
    finally:
        await projector.stop()
        await bus.close()
    if lost.is_set():
        print("duplicast: this projector lost its lease to another one; exiting", file=sys.stderr)
        return 3
    return 0


def _links(args: argparse.Namespace, config: Any, auth: Any, port: int) -> list[str]:
    """What to open (``hub.serve.links``). Tokens stand as the variables that hold them: a terminal
    or a service log is no place for a secret, unless ``--show-tokens``."""
    if args.show_tokens:
        commentator, operator = auth.commentator_token, auth.operator_token
    else:
        commentator = auth.commentator_token and f"${COMMENTATOR_ENV}"
        operator = auth.operator_token and f"${OPERATOR_ENV}"
    hidden = "" if args.show_tokens else " (tokens hidden: --show-tokens prints them)"
    return [
        f"Links{hidden}:",
        *link_lines(config, args.host, port, commentator, operator),
        *_console_links(args, auth, port),
    ]


def _console_links(args: argparse.Namespace, auth: Any, port: int) -> list[str]:
    """Each table's web console page (an ingest-less edge serves them too: the events go to
    the ingest over Redis); none for a projector, which serves no HTTP."""
    from hub.serve.auth import CONSOLE_TOKENS_ENV

    tokens_file = os.environ.get(CONSOLE_TOKENS_ENV)
    return console_link_lines(args.host, port, auth.consoles, tokens_file, args.show_tokens)


def _serve_line(args: argparse.Namespace, config: Any, proxies: TrustedProxies) -> str:
    """What `serve` runs on, before it starts: no silent defaults."""
    sample = " (the bundled SAMPLE: give --config FILE for an event)" if _is_sample(args) else ""
    decks = ""
    if args.role != ProcessRole.EDGE and config.decks is not None:
        if config.decks.rehearsal_seed is not None:
            decks = f", REHEARSAL deck orders (seed {config.decks.rehearsal_seed!r})"
        else:
            decks = f", deck file {config.decks.file} (key {_key_source()})"
    return (
        f"duplicast serve: role {args.role}, tournament {config.id!r} from "
        f"{args.config}{sample}, Redis {redacted_url(args.redis)}{decks}, "
        f"HTTP on {args.host}:{args.port}"
        + (f", metrics on {args.metrics_host}:{args.metrics_port}" if args.metrics_port else "")
        + (f", client addresses from X-Forwarded-For of {proxies}" if proxies else "")
    )


def _is_sample(args: argparse.Namespace) -> bool:
    return Path(args.config).resolve() == SAMPLE_CONFIG.resolve()


def _key_source() -> str:
    if os.environ.get(KEY_FILE_ENV):
        return f"from {os.environ[KEY_FILE_ENV]}"
    if os.environ.get(KEY_ENV):
        return f"from ${KEY_ENV}"
    return "not given"
