"""Redis ACL users for a tournament: each console may write only its own table.

Redis is the bus every console publishes to, so its own access control is where "a console
writes only its table" is enforced, before any event reaches the hub (the hub's ``[consoles]``
allow-list checks the same thing again on the events themselves). ``acl_file`` writes a Redis
ACL file (load it with ``redis-server --aclfile users.acl``) with:

- one user per console of the ``[consoles]`` section: ``PUBLISH`` to its table's console
  channel and ``SUBSCRIBE``/``PSUBSCRIBE`` to its own ack channel and its table's error
  channel, nothing else (no keys, no other channel, no other command);
- ``duplicast-hub`` for ingest and edges: every command but the admin and dangerous ones, on
  this tournament's keys and channels only;
- ``probe``: ``PING`` only, for health checks;
- ``default`` switched off, so nobody gets in without a user.

Passwords are random (``secrets``), stored in the ACL file only as SHA-256 hashes (``#...``);
the clear passwords go to a separate credentials file, one ``name url`` line each, to hand to
each console and to the hub (``--redis URL``).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from hub.channels import Channels
from hub.domain.config import TournamentConfig

HUB_USER = "duplicast-hub"
PROBE_USER = "probe"


@dataclass(frozen=True)
class Credential:
    user: str
    password: str

    def url(self, host: str, db: int = 0) -> str:
        return f"redis://{self.user}:{self.password}@{host}/{db}"


def console_rules(tournament: str, console: str, table: int) -> str:
    """The ACL rules of one console: its table's console channel out, its answers in, and
    the event epoch read."""
    names = Channels(tournament)
    channels = (
        names.console(table),
        names.ack(console),
        names.errors(table),
    )
    allowed = " ".join(f"&{c}" for c in channels)
    # GET of the event epoch only: what the console keys its outbox to (hub.outbox).
    commands = "+publish +subscribe +psubscribe +unsubscribe +punsubscribe +ping +get"
    return f"resetkeys resetchannels ~{names.epoch} {allowed} -@all {commands}"


def hub_rules(tournament: str) -> str:
    """Ingest and edges. Redis matches a PSUBSCRIBE pattern literally against the allowed
    patterns, so the hub's own subscription patterns are listed besides ``dup:{t}:*``."""
    names = Channels(tournament)
    prefix = names.prefix
    patterns = (f"{prefix}:*", names.consoles_pattern, names.control, names.feed)
    allowed = " ".join(f"&{p}" for p in patterns)
    return f"resetkeys resetchannels ~{prefix}:* {allowed} +@all -@admin -@dangerous"


def acl_file(
    config: TournamentConfig, passwords: dict[str, str] | None = None
) -> tuple[str, dict[str, Credential]]:
    """The ACL file text and every user's credential (``passwords`` fixes them, for tests)."""
    if not config.consoles:
        raise ValueError(
            "the tournament file has no [consoles] section: list each console and its table"
        )
    chosen = dict(passwords or {})

    def credential(user: str) -> Credential:
        return Credential(user, chosen.get(user) or secrets.token_urlsafe(24))

    lines = ["user default off"]  # an ACL file takes no comments
    credentials: dict[str, Credential] = {}

    def add(user: str, rules: str) -> None:
        cred = credential(user)
        credentials[user] = cred
        digest = hashlib.sha256(cred.password.encode()).hexdigest()
        lines.append(f"user {user} on #{digest} {rules}")

    add(HUB_USER, hub_rules(config.id))
    for console, table in sorted(config.consoles.items()):
        if console in (HUB_USER, PROBE_USER, "default"):
            raise ValueError(f"console name {console!r} is reserved for another Redis user")
        add(console, console_rules(config.id, console, table))
    lines.append(f"user {PROBE_USER} on nopass resetkeys resetchannels -@all +ping")
    return "\n".join(lines) + "\n", credentials


def credentials_text(credentials: dict[str, Credential], host: str) -> str:
    """``name redis://user:password@host/0`` per user: what each console and the hub get."""
    rows = [f"{user} {cred.url(host)}" for user, cred in credentials.items()]
    return "# keep secret: one Redis URL per console, and the hub's\n" + "\n".join(rows) + "\n"


def acl_users(text: str) -> dict[str, bool]:
    """The users an ACL file defines, and whether each is on (what a report should count)."""
    users: dict[str, bool] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "user":
            users[words[1]] = "on" in words[2:]
    return users
