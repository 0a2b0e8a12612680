"""Roles, tokens and who may see or change which topic (DESIGN §4).

Four roles: *public* (no token), *commentator* and *operator* (tokens from configuration or
the environment), and *console*: a table's web console, one token per console of
``[consoles]`` (``duplicast acl --console-tokens-out``, read by ``serve`` from the file
``$DUPLICAST_CONSOLE_TOKENS_FILE``), bound to that console's name and table. Tokens are
compared in constant time. Commentators and operators read the ``live`` audience; everyone
else reads ``public`` (a console also reads its own table's ``console:{table}``).

A client may show its token or the token's *session proof* (``hub.wire.signing``: what the
pages, ``duplicast td`` and the curl recipes send, so the token itself never reaches an edge),
and each configured value may be a token or a proof: an edge is configured with proofs only
(``duplicast proofs``), so it can check who connects but cannot derive the signing keys that
the ingest checks commands and console events with (docs/security.md).
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from hub.domain.states import Audience, Role
from hub.engine.families import FAMILIES
from hub.wire.signing import is_proof, session_proof, signing_key
from hub.wire.topics import parse_topic, refusal

__all__ = [
    "COMMENTATOR",
    "CONSOLE",
    "CONSOLE_TOKENS_ENV",
    "OPERATOR",
    "PLAYOUT_KEY_ENV",
    "PUBLIC",
    "TALLY_TOKEN_ENV",
    "Auth",
    "ConsoleSeat",
    "Keyring",
    "Role",
    "audience_for",
    "check_topic",
    "console_token_problems",
    "is_topic",
    "may_control",
    "may_subscribe",
    "parse_console_tokens",
]

PUBLIC = Role.PUBLIC
COMMENTATOR = Role.COMMENTATOR
OPERATOR = Role.OPERATOR
CONSOLE = Role.CONSOLE
CONSOLE_TOKENS_ENV = "DUPLICAST_CONSOLE_TOKENS_FILE"
TALLY_TOKEN_ENV = "DUPLICAST_TALLY_TOKEN"
PLAYOUT_KEY_ENV = "DUPLICAST_PLAYOUT_KEY"


@dataclass(frozen=True, slots=True)
class ConsoleSeat:
    """A web console's token and what it binds: the console's name and its table."""

    console: str
    table: int
    token: str = field(repr=False)

    @property
    def role(self) -> Role:
        return CONSOLE


@dataclass(frozen=True, slots=True)
class Auth:
    """The configured tokens; an empty or missing token disables that role."""

    commentator_token: str | None = None
    operator_token: str | None = None
    consoles: tuple[ConsoleSeat, ...] = ()
    # A read-only key that reads the control surfaces' state alone (``GET /api/control``,
    # docs/companion.md): a Stream Deck's tally polls with it, never with the operator token.
    tally_token: str | None = None
    # A key that can only report what a playout (CasparCG, SPX, an OGraf renderer) has on air
    # (``POST /api/playout``, docs/overlays.md): it reads nothing and changes no slot.
    playout_key: str | None = None

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, consoles: tuple[ConsoleSeat, ...] = ()
    ) -> Auth:
        env = os.environ if environ is None else environ
        return cls(
            env.get("DUPLICAST_COMMENTATOR_TOKEN") or None,
            env.get("DUPLICAST_OPERATOR_TOKEN") or None,
            consoles,
            env.get(TALLY_TOKEN_ENV) or None,
            env.get(PLAYOUT_KEY_ENV) or None,
        )

    def grant(self, token: str | None) -> Role | ConsoleSeat | None:
        """What a token grants: a role, or a console's seat (role ``console``, its name and
        table); public without a token; None for a token nobody was given (refuse the request
        rather than silently downgrade a mistyped operator token)."""
        if not token:
            return PUBLIC
        given = token.encode()
        # Check them all so the time taken does not tell which one a guess came close to.
        operator = _same(given, self.operator_token)
        commentator = _same(given, self.commentator_token)
        seat = None
        for candidate in self.consoles:
            if _same(given, candidate.token):
                seat = candidate
        if operator:
            return OPERATOR
        if commentator:
            return COMMENTATOR
        return seat

    def tally(self, token: str | None) -> bool:
        """Is this the tally key (it opens ``GET /api/control`` and nothing else)?"""
        return bool(token) and _same(str(token).encode(), self.tally_token)

    def playout(self, token: str | None) -> bool:
        """Is this the playout key (it opens ``POST /api/playout`` and nothing else)?"""
        return bool(token) and _same(str(token).encode(), self.playout_key)

    def role_for(self, token: str | None) -> Role | None:
        """The role a token grants (``grant`` without the console's seat)."""
        granted = self.grant(token)
        return granted.role if isinstance(granted, ConsoleSeat) else granted

    def keyring(self) -> Keyring:
        """The signing keys of the configured tokens (what the ingest verifies with); a value
        configured as a proof gives no key."""
        operator = self.operator_token
        op_key = signing_key(operator) if operator and not is_proof(operator) else None
        consoles = {
            seat.console: (seat.table, signing_key(seat.token))
            for seat in self.consoles
            if not is_proof(seat.token)
        }
        return Keyring(op_key, consoles)

    def proofs_only(self) -> bool:
        """Is every configured value a proof (what an edge should be given)?"""
        values = [self.operator_token, self.commentator_token, *(s.token for s in self.consoles)]
        return all(is_proof(v) for v in values if v)


@dataclass(frozen=True, slots=True)
class Keyring:
    """The keys signed operator commands and web console events are verified with: the
    operator's, and each console's (its table, its key)."""

    operator: bytes | None = field(default=None, repr=False)
    consoles: Mapping[str, tuple[int, bytes]] = field(default_factory=dict, repr=False)


@lru_cache(maxsize=1024)
def _verifier(value: str) -> bytes:
    """The proof a configured token or proof accepts (a proof is its own)."""
    return (value if is_proof(value) else session_proof(value)).encode()


def _same(given: bytes, expected: str | None) -> bool:
    """Does the token or proof ``given`` open what ``expected`` (a token or a proof)
    guards? The proof shown is compared with the expected proof; a token shown is also
    taken (its proof is compared), for clients that send it (never to an edge)."""
    if expected is None:
        return False
    verifier = _verifier(expected)
    if hmac.compare_digest(given, verifier):
        return True
    try:
        shown = given.decode()
    except UnicodeDecodeError:
        return False
    return not is_proof(shown) and hmac.compare_digest(_verifier(shown), verifier)


FEEDS = (Audience.PROGRAM.value,)
"""What a client may ask for by ``feed=`` (websocket URL, REST query) beside its role's own."""


def audience_for(role: Role | str, feed: str | None = None) -> Audience:
    """The audience a client reads: the program feed if it asked for it (any role may: its
    content is a subset of what the public sees once released), else its role's. A console
    reads ``public`` (and its own ``console:{table}``, ``topics.key_for``)."""
    if feed == "program":
        return Audience.PROGRAM
    return Audience.LIVE if role in (COMMENTATOR, OPERATOR) else Audience.PUBLIC


def program_topic(topic: object) -> bool:
    """Does the program feed have this topic (its family's audiences)?"""
    found = parse_topic(topic, FAMILIES)
    return found is not None and Audience.PROGRAM in found.family.audiences


def is_topic(topic: object) -> bool:
    """Is this the name of a topic of some tournament (a family and whole-number parameters)?
    A running hub checks names against its tournament's ``TopicSpace`` instead."""
    return parse_topic(topic, FAMILIES) is not None


def check_topic(role: Role | str, topic: object, table: int | None = None) -> str | None:
    """The error code refusing a subscription (``unknown_topic``, ``forbidden``), or None: the
    same check as ``TopicSpace.check``, on a name of any tournament."""
    return refusal(role, parse_topic(topic, FAMILIES), table)


def may_subscribe(role: Role | str, topic: object) -> bool:
    return check_topic(role, topic) is None


def may_control(role: Role | str) -> bool:
    """Only operators change what is on air or settle disputes."""
    return role == OPERATOR


MIN_TOKEN_LENGTH = 16
_KNOWN_WEAK = {
    "admin",
    "changeme",
    "change-me",
    "commentator",
    "default",
    "letmein",
    "operator",
    "password",
    "secret",
    "test",
    "token",
}


def weak_token(token: str) -> str | None:
    """Why ``token`` must not guard a role (a placeholder, a known default, too short or too
    uniform to resist guessing), or None. ``duplicast serve`` refuses to start with one."""
    lowered = token.strip().lower()
    if lowered in _KNOWN_WEAK or lowered.startswith(("change-me", "changeme", "replace-me")):
        return "is a placeholder or a well-known default"
    if len(token) < MIN_TOKEN_LENGTH:
        return f"is shorter than {MIN_TOKEN_LENGTH} characters"
    if len(set(token)) < 8:
        return "has fewer than 8 distinct characters"
    return None


def weak_tokens(auth: Auth) -> list[str]:
    """One sentence per configured token that is weak (empty: every configured token is fine;
    a role without a token is disabled, which is not weak)."""
    problems = []
    for name, token in (
        ("DUPLICAST_COMMENTATOR_TOKEN", auth.commentator_token),
        ("DUPLICAST_OPERATOR_TOKEN", auth.operator_token),
        (TALLY_TOKEN_ENV, auth.tally_token),
        (PLAYOUT_KEY_ENV, auth.playout_key),
    ):
        reason = None if token is None else weak_token(token)
        if reason is not None:
            problems.append(f"{name} {reason}")
    if auth.commentator_token and auth.commentator_token == auth.operator_token:
        problems.append("DUPLICAST_COMMENTATOR_TOKEN and DUPLICAST_OPERATOR_TOKEN are the same")
    if auth.tally_token and auth.tally_token in (auth.commentator_token, auth.operator_token):
        problems.append(f"{TALLY_TOKEN_ENV} is another role's token too")
    roles = (auth.commentator_token, auth.operator_token, auth.tally_token)
    if auth.playout_key and auth.playout_key in roles:
        problems.append(f"{PLAYOUT_KEY_ENV} is another role's token too")
    others = {*roles, auth.playout_key}
    seen: set[str] = set()
    for seat in auth.consoles:
        reason = weak_token(seat.token)
        if reason is not None:
            problems.append(f"the console token of {seat.console} {reason}")
        elif seat.token in others or seat.token in seen:
            problems.append(f"the console token of {seat.console} is another's token too")
        seen.add(seat.token)
    return problems


def parse_console_tokens(text: str, source: str = "console tokens") -> tuple[ConsoleSeat, ...]:
    """The lines ``CONSOLE TABLE TOKEN`` of a console tokens file (``duplicast acl
    --console-tokens-out``; ``#`` comments and blank lines skipped); ``ValueError`` naming the
    line of anything else."""
    seats = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) != 3 or not words[1].isdigit():
            raise ValueError(f"{source}:{number}: expected 'CONSOLE TABLE TOKEN'")
        seats.append(ConsoleSeat(words[0], int(words[1]), words[2]))
    names = [seat.console for seat in seats]
    for name in names:
        if names.count(name) > 1:
            raise ValueError(f"{source}: console {name} has more than one line")
    return tuple(seats)


def console_token_problems(
    seats: tuple[ConsoleSeat, ...], consoles: Mapping[str, int] | None
) -> list[str]:
    """One sentence per console token that disagrees with the tournament's ``[consoles]``
    (a console it does not list, or another table than it gives)."""
    problems = []
    for seat in seats:
        table = None if consoles is None else consoles.get(seat.console)
        if table is None:
            problems.append(f"console {seat.console} is not in the tournament's [consoles]")
        elif table != seat.table:
            problems.append(
                f"console {seat.console} writes table {table} in [consoles], "
                f"not table {seat.table} as its token line says"
            )
    return problems
