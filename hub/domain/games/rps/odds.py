"""RPS Poker: each player's chance to win the hand from here, for commentators.

As hold'em equity counts every run-out of the board still to come, this counts every way the
throws still to come can fall. A throw not yet turned over wins, draws or loses a third of the
time whoever makes it (the dealer's throw is unknown, and uniform in a duplicate deal; a
player's own choice makes no difference against it), and independently of the other players'
(given the dealer's throw, each player's outcome is still a third each). So each player's final
score is their score now plus k independent steps of +1 (a win), 0 or -1, and the chances follow
exactly: the best points difference, then wins; the dealer (0-0) wins every tie with him; a tie
among players is a play-off, each tied player winning it equally often.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import factorial

from hub.domain.games.rps.rules import TOTAL_THROWS, RpsHand, Score

Key = tuple[int, int]


def outcomes(now: Score, k: int) -> dict[Key, float]:
    """Final (points difference, wins) and their chances after ``k`` more throws."""
    out: dict[Key, float] = {}
    for w in range(k + 1):
        for d in range(k - w + 1):
            lose = k - w - d
            p = factorial(k) / (factorial(w) * factorial(d) * factorial(lose)) / 3**k
            key = (now.diff + w - lose, now.wins + w)
            out[key] = out.get(key, 0.0) + p
    return out


def chances(scores: Mapping[int, Score], dealer: int | None, k: int) -> dict[int, float]:
    """Each seat's chance to win with ``k`` throws to come; ``dealer``: his seat if he is in."""
    players = [s for s in scores if s != dealer]
    dist = {s: outcomes(scores[s], k) for s in players}
    out: dict[int, float] = {}
    for i in players:
        total = 0.0
        for v, p in dist[i].items():
            if dealer is not None and v[0] <= 0:
                continue  # the dealer wins every tie with him: a player must beat 0
            ties = [1.0]  # polynomial in x: the chance of t other players tied at v
            for j in players:
                if j == i:
                    continue
                below = sum(q for u, q in dist[j].items() if u < v)
                equal = dist[j].get(v, 0.0)
                grown = [0.0] * (len(ties) + 1)
                for t, c in enumerate(ties):
                    grown[t] += c * below
                    grown[t + 1] += c * equal
                ties = grown
            total += p * sum(c / (t + 1) for t, c in enumerate(ties))
        out[i] = total
    if dealer is not None:
        lose_all = 1.0
        for j in players:
            lose_all *= sum(q for u, q in dist[j].items() if u[0] <= 0)
        out[dealer] = lose_all
    return out


def hand_chances(hand: RpsHand) -> dict[int, float] | None:
    """The chances of the seats still in (None: the dealer's throws unknown, or one left)."""
    shown = hand.dealer_throws()
    if shown is None or hand.street == "complete":
        return None
    k = TOTAL_THROWS - sum(len(r) for r in shown)
    dealer = None if hand.dealer in hand.folded else hand.dealer
    seats = hand.players_in() + ([dealer] if dealer is not None else [])
    scores = {s: hand.seat_score(s) or Score(0, 0) for s in seats}
    return chances(scores, dealer, k)
