"""`duplicast export --site DIR`: the public results site as static files, hostable anywhere.

The journal (from Redis, or an event log) is replayed through an `Engine` as `duplicast replay`
does, released at the moment of the export (`AtExport`: a deal still inside its release delay
stays embargoed; the offline replay alone would release every finished deal). Only the PUBLIC
audience's topic payloads are read from it, so a deal that no group has released is never
written: its page, its data file and its cards do not exist in DIR.

The writer is the site's, not the export's: `write_site(out, paths, document)` takes the list of
URL paths under ``/site/`` and a function that answers each path's bytes (the site module's
``site_paths`` and data builder, hub/serve/site.py, so the files are the bytes an edge serves),
and maps each URL onto a file at the same place under DIR (`url_file`: ``/site/deal/3/`` (or
``deal/3/``, relative to the site's root) is ``DIR/deal/3/index.html``, ``/site/data/deal/3.json``
is ``DIR/data/deal/3.json``). Pages link their assets relatively (``../../js/site/...``, served
under ``/site/js/``), and the overlays' ``js``, ``css`` and ``fonts`` are copied to ``DIR/js``,
``DIR/css`` and ``DIR/fonts``, so the folder works from any base path and from
``python -m http.server``.

`ReplaySite` is this module's own source of paths and documents: the replayer's pages
(``/site/replay/{d}/``, overlays/site/replay.html) and each released deal's data document
(`deal_document`, the contract's ``/site/data/deal/{d}.json`` made from the public ``deal:{d}``
and ``compare:{d}:{s}`` payloads). The other pages and data (ranking, score cards, downloads)
are the site module's: `export_site` takes its source as a parameter (``site=``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from hub.domain.config import TournamentConfig
from hub.domain.deck import DeckOrder
from hub.engine.core import Engine
from hub.wire.topics import PUBLIC

SITE_ROOT = "/site/"
ASSET_DIRS = ("js", "css", "fonts")  # of overlays/, copied to DIR/js, DIR/css, DIR/fonts
Document = Callable[[str], Any]  # a path's bytes (or an object with ``.body``), None: nothing

__all__ = [
    "AtExport",
    "ReplaySite",
    "SiteSource",
    "deal_document",
    "public_engine",
    "url_file",
    "write_site",
]


class SiteSource(Protocol):
    """What the export writes: every URL path of the site now, and each one's bytes (None: not
    public, nothing is written). The site module (hub/serve/site.py) answers the same two."""

    def paths(self) -> list[str]: ...

    def document(self, path: str) -> bytes | None: ...


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


def _public(engine: Engine, name: str) -> dict[str, Any] | None:
    """A public topic's payload, None when the public has no such topic (yet)."""
    if not engine.topics_named([f"{PUBLIC}|{name}"]):
        return None
    return engine.payload((PUBLIC, name))


def deal_document(engine: Engine, deal: int) -> dict[str, Any] | None:
    """``/site/data/deal/{d}.json`` as the contract shapes it, from the PUBLIC payloads only
    (None before any group released the deal). The seam: once hub/serve/site.py builds this
    document, `ReplaySite.document` should answer with its bytes instead."""
    traveller = _public(engine, f"deal:{deal}")
    if traveller is None or not traveller.get("released"):
        return None
    compare: dict[str, Any] = {}
    for seat in range(1, engine.state.config.seats + 1):
        payload = _public(engine, f"compare:{deal}:{seat}")
        if payload is not None:
            compare[str(seat)] = payload
    record = {
        "hole": traveller.get("hole", {}),
        "board": traveller.get("board", []),
        "equities": {s: [r.get("equity") for r in c["rows"]] for s, c in compare.items()},
    }
    return {"deal": deal, "traveller": traveller, "compare": compare, "record": record}


def dumps(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class ReplaySite:
    """The replayer's pages and the released deals' data documents (see the module's doc)."""

    def __init__(self, engine: Engine, pages: Path) -> None:
        self.engine = engine
        self.page = (pages / "replay.html").read_bytes()

    def released(self) -> list[int]:
        deals = range(1, self.engine.state.config.deals + 1)
        return [d for d in deals if self.engine.deal_released(d)]

    def paths(self) -> list[str]:
        out = []
        for d in self.released():
            out += [f"{SITE_ROOT}replay/{d}/", f"{SITE_ROOT}data/deal/{d}.json"]
        return out

    def document(self, path: str) -> bytes | None:
        if m := re.fullmatch(r"/site/replay/([1-9][0-9]{0,5})/", path):
            return self.page if self.engine.deal_released(int(m[1])) else None
        if m := re.fullmatch(r"/site/data/deal/([1-9][0-9]{0,5})\.json", path):
            doc = deal_document(self.engine, int(m[1]))
            return None if doc is None else dumps(doc)
        return None


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


def write_site(
    out: Path,
    paths: Iterable[str],
    document: Document,
    *,
    assets: Path | None = None,
) -> list[Path]:
    """Write each path's document at its place under ``out`` (`url_file`), then the overlays'
    ``js``, ``css`` and ``fonts`` under ``out``; the files written. A document is bytes or an
    object with ``.body`` (the site module's ``Document``); None (not public) is not written.
    Files are written whole (to a temporary name, then renamed), so a web server reading DIR
    while the export runs never serves half a file."""
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
    if assets is not None:
        for name in ASSET_DIRS:
            source = assets / name
            if source.is_dir():
                shutil.copytree(source, out / name, dirs_exist_ok=True)
                written += [p for p in (out / name).rglob("*") if p.is_file()]
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
    site's paths and documents from ``site`` (default: `ReplaySite`), written under DIR."""
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
    made = site(engine) if site is not None else ReplaySite(engine, OVERLAYS / "site")
    out: Path = args.site
    written = write_site(out, made.paths(), made.document, assets=OVERLAYS)
    released = [d for d in range(1, config.deals + 1) if engine.deal_released(d)]
    print(
        f"duplicast export: the public site of {config.id!r} in {out}: {len(written)} file(s), "
        f"{len(released)} of {config.deals} deal(s) released",
        file=sys.stderr,
    )
    diverged = [r for r in refused if r.accepted_live]
    for refusal in diverged[:10]:
        print(f"duplicast export: refused: {refusal}", file=sys.stderr)
    return 3 if diverged else 0
