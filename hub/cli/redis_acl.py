"""Redis ACL users for a tournament: each role and each console gets only what it uses.

Redis is the bus every process talks through, so its own access control is where least
privilege is enforced, before anything reaches the hub (the hub's ``[consoles]`` allow-list
checks consoles again on the events themselves). ``acl_file`` writes a Redis ACL file (load it
with ``redis-server --aclfile users.acl``) with these users, all limited to this tournament's
keys and channels (``dup:{t}:...``, names from ``hub.wire.channels``):

- ``duplicast-ingest``: the single writer (``serve --role ingest|all``, ``--feed separate``
  too, and ``demo --redis``): every key of the tournament, every channel, the commands the bus
  uses (streams, hashes, the lease scripts, pub/sub), no admin or dangerous command;
- ``duplicast-projector`` (``serve --role projector``): reads the journal, the notes and the
  engine snapshot; writes only the topic hashes and its own lease; publishes only the feed and
  the edges' reply channels; listens to the control channel;
- ``duplicast-edge`` (``serve --role edge``, any number): listens to the feed and its reply
  channel, reads the topic snapshots, publishes operator commands on the control channel and
  the web consoles' signed events on the web channels (``dup:{t}:web:*``), never on the Redis
  consoles' ``dup:{t}:console:*``; listens to the consoles' ack and error channels (to hand a
  web console its answers); no write to any key (not the journal, not the feed). What it
  publishes is applied only with a valid signature (``hub.roles.signed``): an edge holds
  session proofs, never the keys, so a compromised edge cannot write a table or a ruling
  (docs/security.md);
- ``duplicast-export`` (``duplicast export --events``): reads the journal and the event epoch,
  nothing else;
- one user per console of the ``[consoles]`` section: ``PUBLISH`` to its table's console
  channel only, ``SUBSCRIBE`` to its own ack channel and its table's error channel only,
  ``GET`` of the event epoch ``dup:{t}:epoch`` (what its outbox is keyed to) only;
- ``probe``: ``PING`` only, for health checks;
- ``default`` switched off, so nobody gets in without a user.

Publishing and subscribing are told apart with Redis 7 selectors (``(+publish &channel)``):
channel rules alone cannot, so without them an edge could publish a forged feed and a console
could answer itself. Subscriptions to one channel use ``SUBSCRIBE`` (``hub.bus.redis``), which
Redis matches against the patterns below; the ingest's ``PSUBSCRIBE dup:{t}:console:*`` must
equal an allowed pattern literally, so that pattern is listed as is.

Passwords are random (``secrets``), stored in the ACL file only as SHA-256 hashes (``#...``);
the clear passwords go to a separate credentials file, one ``name url`` line each, to hand to
each console and role (as ``DUPLICAST_REDIS_URL``, never on a command line).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from urllib.parse import quote, urlsplit, urlunsplit

from hub.domain.config import TournamentConfig
from hub.wire.channels import Channels

INGEST_USER = "duplicast-ingest"
PROJECTOR_USER = "duplicast-projector"
EDGE_USER = "duplicast-edge"
EXPORT_USER = "duplicast-export"
PROBE_USER = "probe"
ROLE_USERS = (INGEST_USER, PROJECTOR_USER, EDGE_USER, EXPORT_USER)

_BASE = "resetkeys resetchannels -@all +ping +select"  # SELECT: a URL may name its database
_LISTEN = "+subscribe +psubscribe +unsubscribe +punsubscribe"
_SCRIPTS = "+evalsha +eval +script|load"  # the bus's scripts (leases, batches)


@dataclass(frozen=True)
class Credential:
    user: str
    password: str

    def url(self, host: str, db: int = 0) -> str:
        return self.at(f"redis://{host}/{db}")

    def at(self, base: str) -> str:
        """``base`` (``redis_base``'s) with this user's login: its scheme, host, database and
        options (TLS's ``ssl_ca_certs``...) kept."""
        parts = urlsplit(base)
        login = f"{quote(self.user, safe='')}:{quote(self.password, safe='')}"
        return urlunsplit((parts.scheme, f"{login}@{parts.netloc}", parts.path, parts.query, ""))


def redis_base(url: str) -> str:
    """Where the users' URLs point (``acl --url``): ``redis://HOST:PORT/DB`` or
    ``rediss://HOST:PORT/DB?ssl_ca_certs=...`` (TLS), with no login (each user gets its own);
    the database defaults to 0. A socket file (``unix://``) is refused: the consoles reach
    Redis over the network (a role on Redis's machine may use ``unix://USER:PASSWORD@/path``
    with its line's login)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        raise ValueError(
            f"--url {url!r}: give redis://HOST:PORT/DB or rediss://HOST:PORT/DB (TLS), the "
            "address the consoles and the roles reach Redis at"
        )
    if not parts.hostname:
        raise ValueError(f"--url {url!r} names no host")
    if parts.username or parts.password:
        raise ValueError(f"--url {url!r} holds a login: leave it out, each user gets its own")
    path = parts.path if parts.path not in ("", "/") else "/0"
    if not path[1:].isdigit():
        raise ValueError(f"--url {url!r}: the database is a number (/0, /3)")
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _channels(*names: str) -> str:
    return " ".join(f"&{name}" for name in names)


def console_rules(tournament: str, console: str, table: int) -> str:
    """One console: publish to its table's console channel; hear its own answers; read the
    event epoch (``GET`` of that key: what it keys its outbox to, ``hub.client.outbox``) and the
    tables
    the hub serves (``GET``: a console of another table learns at once that nobody serves it)."""
    names = Channels(tournament)
    listen = _channels(names.ack(console), names.errors(table))
    epoch = f"%R~{names.epoch} %R~{names.tables} +get"
    return f"{_BASE} {_LISTEN} {listen} {epoch} (+publish {_channels(names.console(table))})"


def ingest_rules(tournament: str) -> str:
    """The writer: every key and channel of the tournament (``dup:{t}:console:*`` listed as
    is for its PSUBSCRIBE), only the commands the bus sends."""
    names = Channels(tournament)
    prefix = names.prefix
    commands = (
        f"{_LISTEN} +publish {_SCRIPTS} +xadd +xrange +xrevrange +xread +xlen "
        "+hset +hget +hgetall +hmget +hdel +del +exists +get +set +incr +pexpire"
    )
    allowed = _channels(f"{prefix}:*", names.consoles_pattern)
    return f"{_BASE} ~{prefix}:* {allowed} {commands}"


def projector_rules(tournament: str) -> str:
    """The feed's publisher: reads what the ingest wrote, writes only the topic hashes and
    its lease (its scripts), publishes only the feed and the edges' replies."""
    names = Channels(tournament)
    reads = " ".join(f"%R~{key}" for key in (names.journal, names.notes, names.engine))
    lease = names.projector_lease
    writes = " ".join(f"~{key}" for key in (names.topics, names.topic_seqs, lease, f"{lease}:*"))
    listen = _channels(names.control)
    publish = _channels(names.feed, names.reply("*"))
    return (
        f"{_BASE} {reads} {writes} {listen} {_LISTEN} +xrange +xread +hgetall +hset "
        f"({writes} {publish} +publish {_SCRIPTS} +get +set +incr +pexpire +del)"
    )


def edge_rules(tournament: str) -> str:
    """An edge: hears the feed and its replies, reads the topic snapshots, publishes
    (signed) operator commands on the control channel; for the web consoles it holds,
    publishes their signed events on the web channels, hears the ack and error channels and
    reads the event epoch (``GET``: the web consoles' outboxes follow it). Writes no key, and
    no Redis console's channel."""
    names = Channels(tournament)
    errors = f"{names.prefix}:errors:*"
    listen = _channels(names.feed, names.reply("*"), names.ack("*"), errors)
    publish = _channels(names.control, f"{names.web_prefix}*")
    reads = f"%R~{names.topics} %R~{names.epoch} +hgetall +hmget +get"
    return f"{_BASE} {_LISTEN} {listen} {reads} (+publish {publish})"


def export_rules(tournament: str) -> str:
    """``duplicast export --events``: the journal and the event epoch, read only."""
    names = Channels(tournament)
    return f"{_BASE} %R~{names.journal} %R~{names.epoch} +xrange +get"


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

    for user, rules in (
        (INGEST_USER, ingest_rules),
        (PROJECTOR_USER, projector_rules),
        (EDGE_USER, edge_rules),
        (EXPORT_USER, export_rules),
    ):
        add(user, rules(config.id))
    for console, table in sorted(config.consoles.items()):
        if console in (*ROLE_USERS, PROBE_USER, "default"):
            raise ValueError(f"console name {console!r} is reserved for another Redis user")
        add(console, console_rules(config.id, console, table))
    lines.append(f"user {PROBE_USER} on nopass resetkeys resetchannels -@all +ping")
    return "\n".join(lines) + "\n", credentials


def credentials_text(credentials: dict[str, Credential], base: str) -> str:
    """``name redis://user:password@host/0`` per user, at ``base`` (``redis_base``'s): what
    each console and role gets."""
    rows = [f"{user} {cred.at(base)}" for user, cred in credentials.items()]
    head = "# keep secret: one Redis URL per role and console (give it as DUPLICAST_REDIS_URL)\n"
    return head + "\n".join(rows) + "\n"


def console_tokens_text(config: TournamentConfig) -> str:
    """A random web console token for each console of ``[consoles]``: the lines ``CONSOLE
    TABLE TOKEN`` that ``serve`` reads from ``$DUPLICAST_CONSOLE_TOKENS_FILE``."""
    if not config.consoles:
        raise ValueError("the tournament file has no [consoles] section: no console tokens")
    rows = [
        f"{console} {table} {secrets.token_urlsafe(24)}"
        for console, table in sorted(config.consoles.items())
    ]
    head = "# keep secret: one web console token per console (CONSOLE TABLE TOKEN)\n"
    return head + "\n".join(rows) + "\n"


def acl_users(text: str) -> dict[str, bool]:
    """The users an ACL file defines, and whether each is on (what a report should count)."""
    users: dict[str, bool] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "user":
            users[words[1]] = "on" in words[2:]
    return users
