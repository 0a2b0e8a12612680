"""Roles, tokens and who may see or change which topic (DESIGN §4).

Three roles: *public* (no token), *commentator* and *operator* (tokens from configuration or
the environment). Tokens are compared in constant time. Commentators and operators read the
``live`` audience; everyone else reads ``public``.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from hub.engine.topics import FAMILIES

__all__ = [
    "COMMENTATOR",
    "OPERATOR",
    "PUBLIC",
    "Auth",
    "Role",
    "audience_for",
    "check_topic",
    "is_topic",
    "may_control",
    "may_subscribe",
]

Role = Literal["public", "commentator", "operator"]
PUBLIC: Role = "public"
COMMENTATOR: Role = "commentator"
OPERATOR: Role = "operator"


@dataclass(frozen=True, slots=True)
class Auth:
    """The configured tokens; an empty or missing token disables that role."""

    commentator_token: str | None = None
    operator_token: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Auth:
        env = os.environ if environ is None else environ
        return cls(
            env.get("DUPLICAST_COMMENTATOR_TOKEN") or None,
            env.get("DUPLICAST_OPERATOR_TOKEN") or None,
        )

    def role_for(self, token: str | None) -> Role | None:
        """The role a token grants: public without one, None for a token nobody was given
        (refuse the request rather than silently downgrade a mistyped operator token)."""
        if not token:
            return PUBLIC
        given = token.encode()
        # Check both so the time taken does not tell which role a guess came close to.
        operator = _same(given, self.operator_token)
        commentator = _same(given, self.commentator_token)
        if operator:
            return OPERATOR
        if commentator:
            return COMMENTATOR
        return None


def _same(given: bytes, expected: str | None) -> bool:
    return expected is not None and hmac.compare_digest(given, expected.encode())


def audience_for(role: Role | str) -> str:
    return "live" if role in (COMMENTATOR, OPERATOR) else "public"


def is_topic(topic: object) -> bool:
    """Is this the name of a topic of some tournament (a family and whole-number parameters)?
    A running hub checks names against its tournament's ``TopicSpace`` instead."""
    if not isinstance(topic, str) or len(topic) > 40:
        return False
    name, *args = topic.split(":")
    family = FAMILIES.get(name)
    return (
        family is not None
        and len(args) == len(family.params)
        and all(a.isdigit() and a == str(int(a)) and len(a) < 7 for a in args)
    )


def check_topic(role: Role | str, topic: object) -> str | None:
    """The error code refusing a subscription (``unknown_topic``, ``forbidden``), or None."""
    if not is_topic(topic):
        return "unknown_topic"
    assert isinstance(topic, str)
    if not FAMILIES[topic.split(":", 1)[0]].allows(role):
        return "forbidden"
    return None


def may_subscribe(role: Role | str, topic: object) -> bool:
    return check_topic(role, topic) is None


def may_control(role: Role | str) -> bool:
    """Only operators change what is on air or settle disputes."""
    return role == OPERATOR
