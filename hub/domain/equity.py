"""Each remaining player's chance to win, and the outs: the numbers poker television shows.

``equity(holes, board, dead)`` ranks every way the board can still run out (exact) when there
are at most ``samples`` of them, as from the flop on (at most C(47, 2) = 1,081); otherwise
(before the flop: C(40, 5) = 658,008 for six players) it ranks ``samples`` run-outs drawn at
random, and says how far off the figures may be: ``error`` bounds each probability at 99 %
confidence (2.576 standard errors at worst, p = 1/2: ±0.41 % for 100,000 samples). The draws
come from a generator seeded with ``seed``, so the same cards always give the same figures
(replaying a journal rebuilds the same payloads).

``win`` is the share of run-outs a player wins alone, ``tie`` the share where he splits the
best hand. ``dead`` are cards known to be out of the deck (the hub passes the folded players'
hole cards: the viewers saw them too). ``outs`` (flop and turn only): for each player who is
behind now, the cards of the next street that would put him ahead of every other player alone,
as a broadcast lists them; on the turn they are exactly his winning rivers.

Hands are ranked by ``strength_tables`` (phevaluator's ranks, numpy lookups for the batch),
outs by ``evaluation.strength`` (a few hundred hands).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hub.domain import strength_tables
from hub.domain.cards import RANKS, SUITS, Card
from hub.domain.evaluation import strength
from hub.domain.strength_tables import CARD_BITS, CARD_KEYS, card_ids, strengths

__all__ = ["SAMPLES", "SEED", "Equity", "Runouts", "equity", "outs", "prepare", "tally"]

SAMPLES = 100_000
SEED = 11  # any fixed seed: the figures depend only on the cards
Z99 = 2.576  # standard errors for 99 % confidence (two-sided, normal approximation)
_ORDER = {r + s: (-i, j) for i, r in enumerate(RANKS) for j, s in enumerate(SUITS)}
_DECK_ORDER = sorted(_ORDER, key=_ORDER.__getitem__)  # outs listed high rank first: As, Ah, ...


@dataclass(frozen=True)
class Equity:
    """The chances of every player still in, on one board."""

    board: tuple[Card, ...]
    win: Mapping[int, float]
    tie: Mapping[int, float]
    outs: Mapping[int, tuple[Card, ...]]  # flop and turn: players behind only; else empty
    exact: bool  # every run-out ranked (else ``runouts`` sampled ones)
    runouts: int
    error: float  # bound on each probability at 99 % confidence (0.0 when exact)


def prepare(players: int, *, samples: int = SAMPLES, seed: int = SEED) -> None:
    """Make now what the first figures of a deal of ``players`` hands would make (the strength
    tables, ~0.2 s, and the preflop run-out draws, ~0.1 s), so the first hand does not wait."""
    strength_tables.tables()
    unseen = 52 - 2 * players
    if unseen >= 5 and math.comb(unseen, 5) > samples:
        _sampled_picks(unseen, 5, samples, seed)


def error_bound(samples: int) -> float:
    """The 99 % bound on a probability estimated from ``samples`` independent run-outs."""
    return Z99 * 0.5 / math.sqrt(samples)


def equity(
    holes: Mapping[int, tuple[Card, Card]],
    board: Sequence[Card] = (),
    dead: Iterable[Card] = (),
    *,
    samples: int = SAMPLES,
    seed: int = SEED,
) -> Equity:
    """Win and tie probability of each player of ``holes`` (those still in) on ``board`` (0 to
    5 cards), with ``dead`` cards out of the deck. ``ValueError`` for a card that is not one or
    is seen twice."""
    return Runouts(holes, board, dead, samples=samples, seed=seed).equity()


class Runouts:
    """Every player's hand on each way the board can still run out (or on ``samples`` drawn
    ones): ranked once and tallied for every group of these players (``tally``), so the chances
    of any group are a lookup.

    Why: when a player folds, his cards become dead and the others' deck is the same as
    before (every card of the deal is still out of it), so the run-outs and the ranks of the
    players still in do not change; only who is compared does. The hub keeps one per deal and
    board, and each fold costs a lookup instead of a new ranking (``hub.engine.equities``). What
    it keeps is a few KB whatever the number of run-outs (the ranks are dropped once tallied).
    """

    def __init__(
        self,
        holes: Mapping[int, tuple[Card, Card]],
        board: Sequence[Card] = (),
        dead: Iterable[Card] = (),
        *,
        samples: int = SAMPLES,
        seed: int = SEED,
    ) -> None:
        self.players = sorted(holes)
        self.holes = {p: (holes[p][0], holes[p][1]) for p in self.players}
        self.board = tuple(board)
        self.dead = tuple(dead)
        if not self.players:
            raise ValueError("equity needs at least one player")
        if len(self.board) > 5:
            raise ValueError(f"a board has at most 5 cards, not {len(self.board)}")
        known = [*self.board, *(c for p in self.players for c in self.holes[p]), *self.dead]
        ids = card_ids(known)
        if len(set(ids)) != len(ids):
            raise ValueError(f"a card is seen twice among {known}")
        self._deck = np.array(sorted(set(range(52)) - set(ids)), np.int64)
        missing = 5 - len(self.board)
        self.exact = math.comb(len(self._deck), missing) <= samples
        self._samples, self._seed = samples, seed
        self._tallies: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int] | None = None

    def _rank(self) -> npt.NDArray[np.uint16]:
        """Each player's strength on each run-out (one row per player)."""
        n, missing = len(self._deck), 5 - len(self.board)
        if self.exact:
            picks = _all_picks(n, missing)
        else:
            picks = _sampled_picks(n, missing, self._samples, self._seed)
        runouts = self._deck[picks]
        board_ids = card_ids(self.board)
        bits = CARD_BITS[runouts].sum(axis=1) + CARD_BITS[board_ids].sum()
        keys = CARD_KEYS[runouts].sum(axis=1) + CARD_KEYS[board_ids].sum()
        ranked = np.empty((len(self.players), len(runouts)), np.uint16)
        for row, player in enumerate(self.players):
            hole = card_ids(self.holes[player])
            ranked[row] = strengths(bits + CARD_BITS[hole].sum(), keys + CARD_KEYS[hole].sum())
        return ranked

    def _tally(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
        """Wins and ties of every player against every group of the others, made on first
        use: ``wins[i, S]`` counts the run-outs where player ``i`` (of ``players``) is best
        alone among the players of the bit set ``S``, ``ties[i, S]`` those where he shares the
        best hand; and the number of run-outs. The ranks (1.2 MB before the flop) are dropped."""
        if self._tallies is None:
            ranked = self._rank()
            wins, ties = tally(ranked)
            self._tallies = (wins, ties, ranked.shape[1])
        return self._tallies

    def equity(self, live: Iterable[int] | None = None) -> Equity:
        """The chances of the players in ``live`` (default: all), the others' cards dead."""
        players = self.players if live is None else sorted(live)
        if not players or not set(players) <= set(self.players):
            raise ValueError(f"players {players} are not among {self.players}")
        holes = {p: self.holes[p] for p in players}
        dead = [*self.dead, *(c for p in self.players if p not in holes for c in self.holes[p])]
        if len(players) == 1:
            only = players[0]
            return Equity(self.board, {only: 1.0}, {only: 0.0}, {only: ()}, True, 1, 0.0)
        wins, ties, n = self._tally()
        rows = [self.players.index(p) for p in players]
        group = sum(1 << i for i in rows)
        return Equity(
            board=self.board,
            win={p: float(wins[i, group] / n) for p, i in zip(players, rows, strict=True)},
            tie={p: float(ties[i, group] / n) for p, i in zip(players, rows, strict=True)},
            outs=outs(holes, self.board, dead),
            exact=self.exact,
            runouts=n,
            error=0.0 if self.exact else error_bound(n),
        )


def tally(
    ranked: npt.NDArray[np.uint16],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """From each player's strength on each run-out (``ranked``: one row per player, lower is
    stronger), every player's wins alone and shared wins against every group of players: in
    the returned ``wins[i, S]`` and ``ties[i, S]``, ``S`` is a bit set of rows that holds ``i``.

    Why: a fold changes only who is compared, so the figures of every group are made at once,
    and a fold is a lookup. Per run-out and player ``i``, ``better`` is the bit set of players
    strictly stronger, ``level`` of the others as strong. ``i`` wins alone among ``S`` when
    neither meets ``S``, and shares the best hand when only ``level`` does. Counting run-outs
    by those bit sets, then summing the counts over subsets (a zeta transform), counts for
    every ``S`` the run-outs whose sets miss it: n comparisons of the rows, 2n bincounts.
    """
    n = ranked.shape[0]
    size = 1 << n
    dtype = np.uint8 if n <= 8 else np.uint16 if n <= 16 else np.uint32
    better = np.zeros(ranked.shape, dtype)
    equal = np.zeros(ranked.shape, dtype)
    for q in range(n):  # bit q: player q is stronger than (as strong as) the row's player
        row = ranked[q]
        better |= (row < ranked).astype(dtype) << dtype(q)
        equal |= (row == ranked).astype(dtype) << dtype(q)
    index = np.arange(size)
    with_bit = [index[index & (1 << b) != 0] for b in range(n)]
    outside = (size - 1) ^ index  # the players not in S
    wins = np.empty((n, size), np.int64)
    ties = np.empty((n, size), np.int64)
    for i in range(n):
        level = equal[i] & dtype((size - 1) ^ (1 << i))
        beaten_or_tied = np.bincount(better[i] | level, minlength=size)
        beaten = np.bincount(better[i], minlength=size)
        for b, rows in enumerate(with_bit):  # counts of every subset of each mask
            beaten_or_tied[rows] += beaten_or_tied[rows ^ (1 << b)]
            beaten[rows] += beaten[rows ^ (1 << b)]
        wins[i] = beaten_or_tied[outside]
        ties[i] = beaten[outside] - beaten_or_tied[outside]
    return wins, ties


def outs(
    holes: Mapping[int, tuple[Card, Card]], board: Sequence[Card], dead: Iterable[Card] = ()
) -> dict[int, tuple[Card, ...]]:
    """For each player behind on the flop or turn, the next cards that put him ahead alone
    (strongest rank first); empty for the others and on other streets."""
    players = sorted(holes)
    found: dict[int, list[Card]] = {p: [] for p in players}
    if len(board) not in (3, 4) or len(players) < 2:
        return {p: () for p in players}
    now = {p: strength(holes[p], board) for p in players}
    leader = min(now.values())
    behind = {p for p in players if now[p] > leader}
    seen = {*board, *dead, *(c for p in players for c in holes[p])}
    for card in _DECK_ORDER:
        if card in seen:
            continue
        after = {p: strength(holes[p], (*board, card)) for p in players}
        top = min(after.values())
        ahead = [p for p in players if after[p] == top]
        if len(ahead) == 1 and ahead[0] in behind:
            found[ahead[0]].append(card)
    return {p: tuple(cards) for p, cards in found.items()}


@functools.lru_cache(maxsize=16)
def _all_picks(n: int, k: int) -> npt.NDArray[np.intp]:
    """Every way to pick ``k`` of ``n`` cards, as index rows."""
    rows = np.array(list(itertools.combinations(range(n), k)), np.intp).reshape(math.comb(n, k), k)
    rows.setflags(write=False)
    return rows


@functools.lru_cache(maxsize=16)
def _sampled_picks(n: int, k: int, samples: int, seed: int) -> npt.NDArray[np.intp]:
    """``samples`` random picks of ``k`` distinct of ``n`` cards (uniform over subsets), drawn
    once per deck size and seed: any spot with that many unseen cards maps them onto its deck."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(samples, k), dtype=np.intp)
    while True:
        ordered = np.sort(picks, axis=1)
        repeated = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if not repeated.size:
            picks.setflags(write=False)
            return picks
        picks[repeated] = rng.integers(0, n, size=(repeated.size, k), dtype=np.intp)
