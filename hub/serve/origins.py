"""Which browser pages may open ``/ws`` or send an operator command over REST (``POST
/api/onair|confirm|void|penalty|withdraw|roster``): the ``Origin`` check, one rule for both.

A page's ``Origin`` must be allowed (``$DUPLICAST_ALLOWED_ORIGINS``, else the request's own
host); clients that send none (OBS, non-browser clients) are let through."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

__all__ = ["ORIGINS_ENV", "OriginPolicy"]

ORIGINS_ENV = "DUPLICAST_ALLOWED_ORIGINS"
"""Comma-separated ``Origin`` values allowed on ``/ws`` (``*``: any). Unset: the request's own
host, plus clients that send no ``Origin`` (OBS, non-browser clients)."""


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
