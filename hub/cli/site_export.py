"""`duplicast export --site DIR`: the public results site as static files, hostable anywhere.

The journal (from Redis, or an event log) is replayed through an `Engine` as `duplicast replay`
does, released at the moment of the export (`AtExport`: a deal still inside its release delay
stays embargoed; the offline replay alone would release every finished deal). Only the PUBLIC
audience's topic payloads are read from it, so a deal that no group has released is never
written: its replayer, its data file, its cards and its hands do not exist in DIR (its page
of the site is the same template as every deal's, and says it is not public yet).

What it writes is THE WHOLE SITE, the bytes a hub serves under ``/site/``: `site_builder` is
hub/serve/site.py's `SiteBuilder` on the engine's public payloads (``engine_reader``), whose
``paths()`` names every page (the event, each deal, team and player, each released deal's
replayer), data file, download (the CSVs, the released hands' PHH zip) and asset (the site
module's ``ASSETS``: the stylesheets, the scripts and every module and font they load), and
whose ``document(path)`` answers each one's bytes, as an edge's ``/site/`` route does.
`write_site(out, paths, document)` maps each URL path onto a file at the same place under DIR
(`url_file`: ``/site/deal/3/`` (or ``deal/3/``, relative to the site's root) is
``DIR/deal/3/index.html``, ``/site/data/deal/3.json`` is ``DIR/data/deal/3.json``). Pages link
everything relatively (``../../js/site/...``, ``../../data/...``), so the folder works from any
base path and from ``python -m http.server``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from hub.domain.config import TournamentConfig
from hub.domain.deck import DeckOrder
from hub.engine.core import Engine
from hub.engine.phh_export import collect, render
from hub.serve.site import SiteBuilder, engine_reader, phh_zip

SITE_ROOT = "/site/"
Document = Callable[[str], Any]  # a path's bytes (or an object with ``.body``), None: nothing

__all__ = [
    "AtExport",
    "SiteSource",
    "public_engine",
    "site_builder",
    "url_file",
    "write_site",
]


class SiteSource(Protocol):
    """What the export writes: every URL path of the site now, and each one's bytes (None: not
    public, nothing is written). The site module (hub/serve/site.py) answers the same two."""

    def paths(self) -> list[str]: ...

    def document(self, path: str) -> Any: ...


class AtExport(Engine):
    """The engine, released as of ``now`` (the export's wall clock): the replay's final
    ``tick(inf)`` would release a deal finished a second ago, which the live hub still holds
    for its release delay."""

    def __init__(
        self, config: TournamentConfig, decks: Mapping[int, DeckOrder] | None, now: float
    ) -> None:
        super().__init__(config, decks, program=False)
        self._now = now

    def tick(self, now: float) -> Any:
        return super().tick(min(now, self._now))


def public_engine(
    config: TournamentConfig,
    decks: Mapping[int, DeckOrder] | None,
    entries: Sequence[Any],
    source: str,
    now: float,
) -> tuple[Engine, list[Any]]:
    """The log replayed as `duplicast replay` does, released as of ``now``; the refusals."""
    from hub.cli.replay import replay

    engine = AtExport(config, decks, now)
    refused = replay(config, entries, engine, source)
    engine.start_feed()
    return engine, refused


def site_builder(engine: Engine, overlays: Path) -> SiteBuilder:
    """The site of ``engine`` as the public sees it (hub/serve/site.py's `SiteBuilder` on the
    engine's public payloads, ``overlays``: the pages and assets), with the released hands'
    PHH zip as ``/api/export/phh`` and an ingest's ``/site/download/hands.phh.zip`` make it
    (the same files, the same zip): the export's one source of paths and bytes."""
    config = engine.state.config

    def phh() -> bytes | None:
        if not engine.state.game.phh:
            return None
        rendered = render(collect(engine.state, engine.release.released), config.name)
        return phh_zip([(h.name, text) for h, text in rendered.hands], config.id)

    return SiteBuilder(engine_reader(engine), overlays, phh=phh)


class SitePathError(ValueError):
    pass


def url_file(path: str) -> PurePosixPath:
    """Where a site URL path lives under DIR: ``/site/`` -> ``index.html``, ``/site/deal/3/``
    -> ``deal/3/index.html``, ``/site/data/deal/3.json`` -> ``data/deal/3.json`` (a query
    string is the page's own: ``/site/replay/3/?tables=1,2`` is the replay page). A path
    without a leading ``/`` is relative to the site's root (``""``, ``deal/3/``: the site
    module's ``site_paths``)."""
    bare = path.split("?", 1)[0].split("#", 1)[0]
    if bare.startswith("/"):
        if not (bare + "/").startswith(SITE_ROOT):
            raise SitePathError(f"{path!r} is not under {SITE_ROOT}")
        bare = bare[len(SITE_ROOT) - 1 :]
    else:
        bare = "/" + bare
    rest = bare[1:]
    parts = [p for p in rest.split("/") if p]
    if any(p in (".", "..") or "\\" in p or "\0" in p for p in parts):
        raise SitePathError(f"{path!r} leaves the site")
    if not parts or bare.endswith("/"):
        parts.append("index.html")
    return PurePosixPath(*parts)


def write_site(out: Path, paths: Iterable[str], document: Document) -> list[Path]:
    """Write each path's document at its place under ``out`` (`url_file`); the files written.
    A document is bytes or an object with ``.body`` (the site module's ``Document``); None
    (not public) is not written. The site's assets are paths like the others (the site
    module's ``ASSETS``), so DIR holds exactly what a hub serves under ``/site/``. Files are
    written whole (to a temporary name, then renamed), so a web server reading DIR while the
    export runs never serves half a file."""
    written: list[Path] = []
    seen: set[PurePosixPath] = set()
    for path in paths:
        where = url_file(path)
        if where in seen:
            continue
        seen.add(where)
        got = document(path)
        if got is None:
            continue
        body: bytes = got if isinstance(got, bytes) else got.body
        target = out.joinpath(*where.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.part")
        temporary.write_bytes(body)
        os.replace(temporary, target)
        written.append(target)
    return written


def export_site(
    args: argparse.Namespace,
    entries: Sequence[Any],
    source: str,
    *,
    site: Callable[[Engine], SiteSource] | None = None,
    now: float | None = None,
) -> int:
    """`duplicast export --site DIR`: the engine from ``entries`` (the journal's lines), the
    site's paths and documents from ``site`` (default: `site_builder`, the whole site), written
    under DIR."""
    from hub.cli.replay import ReplayError
    from hub.domain.config import ConfigError
    from hub.files.config import load_config
    from hub.files.decks import DeckFileError, load_decks
    from hub.roles.embedded import OVERLAYS

    try:
        config = load_config(args.config)
        decks = load_decks(config, args.config.parent, dict(os.environ))
        at = time.time() if now is None else now
        engine, refused = public_engine(config, decks, entries, source, at)
    except (ConfigError, ReplayError, DeckFileError) as exc:
        print(f"duplicast export: {exc}", file=sys.stderr)
        return 1
    made = site(engine) if site is not None else site_builder(engine, OVERLAYS)
    out: Path = args.site
    written = write_site(out, made.paths(), made.document)
    released = [d for d in range(1, config.deals + 1) if engine.release.deal_released(d)]
    print(
        f"duplicast export: the public site of {config.id!r} in {out}: {len(written)} file(s), "
        f"{len(released)} of {config.deals} deal(s) released",
        file=sys.stderr,
    )
    diverged = [r for r in refused if r.accepted_live]
    for refusal in diverged[:10]:
        print(f"duplicast export: refused: {refusal}", file=sys.stderr)
    return 3 if diverged else 0
