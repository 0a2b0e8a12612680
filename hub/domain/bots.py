"""Legal, varied bot actions for simulated sessions and property tests.

Bots exist so that a simulated session shows everything an overlay must draw: folds, checks,
min-raises, pot-size raises, all-ins, showdowns and split pots. They never look at cards, and the
random generator is a parameter (the domain has no global RNG).
"""

from __future__ import annotations

import random

from hub.domain.games.base import Hand

STYLES = ("tight", "loose", "aggressive", "calling-station")

# Per style: chance to fold facing a bet, chance to bet/raise when allowed, chance that a raise
# is all-in (or as big as allowed).
_PROFILE = {
    "tight": (0.55, 0.15, 0.10),
    "loose": (0.20, 0.25, 0.10),
    "aggressive": (0.15, 0.55, 0.30),
    "calling-station": (0.05, 0.05, 0.05),
}


def choose_action(
    hand: Hand, seat: int, rng: random.Random, style: str | None = None
) -> tuple[str, int | None]:
    """A legal ``(kind, amount)`` for ``seat``, the seat to act; ``style=None`` picks one."""
    legal = hand.legal(seat)
    if not (legal.check or legal.fold):
        raise ValueError(f"seat {seat} is not to act")
    fold_p, raise_p, big_p = _PROFILE[style if style is not None else rng.choice(STYLES)]
    if legal.min_to is not None and legal.max_to is not None and rng.random() < raise_p:
        low, high = legal.min_to, legal.max_to
        roll = rng.random()
        if roll < big_p:
            amount = high  # pot-size raise, or all-in when the pot allows it
        elif roll < big_p + 0.35:
            amount = low  # min-raise
        else:
            amount = rng.randint(low, high)
        return ("raise" if hand.high_bet else "bet"), amount
    if legal.fold and rng.random() < fold_p:
        return "fold", None
    if legal.check:
        return "check", None
    return "call", None
