"""Bots' throws for simulated RPS Poker sessions (the betting is ``bots.choose_action``'s).

Each round, every player still in throws at random, the dealer's throws follow (chosen at
random when the table's dealer chooses them; read from the deal otherwise), and the betting
opens. At a tied showdown the bots' play-off has a random winner among the tied seats.
"""

from __future__ import annotations

import random
from typing import Any

from hub.domain.games.rps.rules import ROUND_THROWS, ROUNDS, THROWS, RpsHand


def random_throws(rng: random.Random, round_index: int) -> str:
    return "".join(rng.choice(THROWS) for _ in range(ROUND_THROWS[round_index]))


def next_throw(hand: RpsHand, rng: random.Random) -> tuple[str, dict[str, Any]] | None:
    """The next throws event the table owes (``("throws", {seat, throws})`` or ``("reveal",
    {throws})``), or None when the round's betting (or the showdown) may go on."""
    r = hand.round_index()
    if r is None or r == len(ROUNDS) or hand.is_revealed(r):
        return None
    missing = hand.missing(r)
    if missing:
        return "throws", {"seat": rng.choice(missing), "throws": random_throws(rng, r)}
    return "reveal", {"throws": random_throws(rng, r)}


def playoff_winners(hand: RpsHand, rng: random.Random) -> list[int] | None:
    """The seats a table declares at a showdown: by the throws, each tied pot to a random
    play-off winner among its tied seats; None when the throws are not all known."""
    leaders = hand.pot_leaders()
    if leaders is None:
        return None
    won: set[int] = set()
    for pot, tied in leaders:
        if len(pot.eligible) > 1:
            won.add(rng.choice(sorted(tied)))
    return sorted(won)
