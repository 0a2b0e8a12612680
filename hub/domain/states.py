"""The named states of the hub, one definition each: streets, hand statuses, audiences, client
roles and process roles.

Each is a ``StrEnum``: a member *is* its wire string (``Street.FLOP == "flop"``, hashes the
same, encodes as the same JSON and msgpack string), so payloads, logs and the protocol are
unchanged while the code names a state instead of spelling it. Pure: imports nothing.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "AUDIENCES",
    "BETTING_STREETS",
    "ROLES",
    "Audience",
    "HandStatus",
    "ProcessRole",
    "Role",
    "Street",
]


class Street(StrEnum):
    """Where a hold'em hand stands (``Hand.street``); the board has 0, 3, 4, 5 cards."""

    PREFLOP = "preflop"
    FLOP = "flop"
    TURN = "turn"
    RIVER = "river"
    SHOWDOWN = "showdown"  # betting over, winners to be declared
    COMPLETE = "complete"  # settled


BETTING_STREETS = (Street.PREFLOP, Street.FLOP, Street.TURN, Street.RIVER)
"""The streets with a betting round, in order."""


class HandStatus(StrEnum):
    """A hand's status as consoles, overlays and the comparison show it."""

    IN_PROGRESS = "in_progress"
    SHOWDOWN = "showdown"
    COMPLETE = "complete"
    VOID = "void"
    DISPUTED = "disputed"


class Audience(StrEnum):
    """Who a topic's payload is for: ``live`` serves commentators and operators, ``program``
    the delayed program feed any role may take (``hub.engine.program``)."""

    PUBLIC = "public"
    LIVE = "live"
    PROGRAM = "program"


AUDIENCES = (Audience.PUBLIC, Audience.LIVE)
"""The audiences the engine builds itself; ``program`` is its delayed engine's, filtered."""


class Role(StrEnum):
    """A client's role, from its token (DESIGN §4)."""

    PUBLIC = "public"
    COMMENTATOR = "commentator"
    OPERATOR = "operator"
    CONSOLE = "console"  # a table's web console: its own table's console state, public topics


ROLES = (Role.PUBLIC, Role.COMMENTATOR, Role.OPERATOR)
"""In order of what they may see (a console stands apart: bound to one table)."""


class ProcessRole(StrEnum):
    """What a ``duplicast serve`` process does (``--role``)."""

    ALL = "all"
    INGEST = "ingest"
    EDGE = "edge"
    PROJECTOR = "projector"
