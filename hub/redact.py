"""Passwords out of anything printed or logged: Redis URLs carry them (``redis://user:pw@h``,
``?password=``), and a URL ends up in messages (an error naming where it failed, a startup
line). ``redacted_url`` shows a URL without its secrets; ``redact`` does the same to every
URL inside a text (the log filter of ``hub.logs`` runs it over every record)."""

from __future__ import annotations

import re

__all__ = ["MASK", "redact", "redacted_url"]

MASK = "***"
_USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)(?P<user>[^\s:/@?#]*):[^\s/]*@", re.I)
_BARE = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)[^\s:/@?#]+@", re.I)  # redis://pw@h
_QUERY = re.compile(r"(?P<key>[?&](?:password|pass|pwd)=)[^&#\s]*", re.I)


def redact(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ``***``."""
    if "@" in text:
        text = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
        text = _BARE.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    if "=" in text:
        text = _QUERY.sub(lambda m: f"{m['key']}{MASK}", text)
    return text


def redacted_url(url: str) -> str:
    """A bus URL without its password: ``redis://user:***@host:port/0``."""
    return redact(url)
