"""Who a websocket client is when the edge stands behind a load balancer.

Behind nginx every TCP peer is nginx: per-address caps would count the balancer, not the
spectators (a whole venue shared 2 edges x 256 connections, and one client could take them
all). A trusted proxy says who its client was in ``X-Forwarded-For`` (and which host the page
asked for in ``X-Forwarded-Host``); anyone else could write the same headers, so they are read
only when the TCP peer is one of ``--trusted-proxy`` / ``DUPLICAST_TRUSTED_PROXIES``
(addresses or CIDR ranges). The client is the right-most address of the chain that is not
itself a trusted proxy: entries left of it were written by the client and prove nothing.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["TRUSTED_PROXIES_ENV", "TrustedProxies"]

TRUSTED_PROXIES_ENV = "DUPLICAST_TRUSTED_PROXIES"
"""Comma-separated addresses or CIDR ranges of the load balancers in front of the edges."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _address(text: str) -> Address | None:
    """An IP address (an IPv4-mapped IPv6 address as its IPv4 one), or None if not one."""
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[::1]:port" as some proxies write it
        text = text[1 : text.index("]")]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


class TrustedProxies:
    """The proxies whose forwarding headers are believed; empty: none (the default)."""

    def __init__(self, networks: Iterable[str] = ()) -> None:
        self.networks: list[Network] = []
        for item in networks:
            item = item.strip()
            if item:  # a bad entry is a start-up error, not a silently open door
                self.networks.append(ipaddress.ip_network(item, strict=False))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> TrustedProxies:
        env = os.environ if environ is None else environ
        return cls(env.get(TRUSTED_PROXIES_ENV, "").split(","))

    def __bool__(self) -> bool:
        return bool(self.networks)

    def __str__(self) -> str:
        return ", ".join(map(str, self.networks)) or "no proxy"

    def trusts(self, peer: str | None) -> bool:
        ip = _address(peer) if peer else None
        return ip is not None and any(ip in net for net in self.networks)

    def client(self, peer: str | None, forwarded_for: Iterable[str] = ()) -> str | None:
        """The client's address: ``peer`` unless it is a trusted proxy, else the right-most
        ``X-Forwarded-For`` entry that is not a trusted proxy (each header value in order)."""
        if not self.trusts(peer):
            return peer
        chain = [part for value in forwarded_for for part in value.split(",")]
        client = peer
        for entry in reversed(chain):
            ip = _address(entry)
            if ip is None:  # garbage a trusted hop passed on: the last hop we know is it
                break
            client = str(ip)
            if not self.trusts(client):
                break
        return client

    def host(self, peer: str | None, host: str | None, forwarded_host: Iterable[str]) -> str | None:
        """The host a browser asked for: the proxy's ``X-Forwarded-Host`` (its right-most
        value) when ``peer`` is trusted and sent one, else the ``Host`` header."""
        if self.trusts(peer):
            values = [v.strip() for value in forwarded_host for v in value.split(",")]
            if values and values[-1]:
                return values[-1]
        return host

    def identify(self, peer: str | None, headers: Any) -> tuple[str | None, str | None]:
        """``(client address, host the page asked for)`` of an upgrade from TCP peer ``peer``
        (``client`` and ``host``). ``headers``: websockets' (``get_all``) or Starlette's
        (``getlist``), both case-insensitive."""
        values = getattr(headers, "get_all", None) or headers.getlist
        address = self.client(peer, values("X-Forwarded-For"))
        return address, self.host(peer, headers.get("Host"), values("X-Forwarded-Host"))
