"""What a hand reports, whatever the game (the `Hand` protocol's types, ``base.py``): the record
of an action, what the seat to act may do, a pot."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """One thing that happened: ``added`` chips put in, ``to`` the seat's street bet after it."""

    seat: int
    kind: str
    added: int
    to: int
    street: str


@dataclass(frozen=True)
class Legal:
    """What the seat to act may do: ``call`` is the chips a call adds; ``min_to``/``max_to``
    bound a bet or raise (``None``: no bet or raise allowed)."""

    fold: bool
    check: bool
    call: int | None
    min_to: int | None
    max_to: int | None


@dataclass(frozen=True)
class Pot:
    amount: int
    eligible: frozenset[int]


NOTHING = Legal(False, False, None, None, None)
"""What a seat may do when it is not its turn (or the betting is over)."""
