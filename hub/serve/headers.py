"""The security headers of the overlay pages (issue #30 item 12; docs/security.md).

Every overlay, console and desk URL carries its token in ``?token=``: ``Referrer-Policy:
no-referrer`` keeps a page's own URL out of the ``Referer`` of what it loads. The
``Content-Security-Policy`` allows what the shipped pages use and nothing else: scripts and
styles from the hub itself (the pages' inline ``<style>`` blocks and ``style=`` attributes, no
inline script), websockets to any host (``?ws=`` may name another hub), no plugins, no ``<base>``,
forms posted only to the hub. ``tests/test_csp_browser.py`` opens every page in Chromium and
finds no violation.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CSP", "SECURITY_HEADERS", "SecurityHeaders"]

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; "
    "connect-src 'self' ws: wss:; worker-src 'self'; manifest-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
)


class SecurityHeaders:
    """ASGI middleware: ``SECURITY_HEADERS`` on every HTTP response of the app it wraps."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", ())}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in names]
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
