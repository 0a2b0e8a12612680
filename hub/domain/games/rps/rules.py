"""RPS Poker (seed 001): throws chosen round by round, scored against the dealer's.

Each round the dealer's throws are turned over and the players bet; the rounds are the gambit
(3 throws), the flop (1), the turn (2) and the river (3), nine throws in all. At the showdown
each remaining player's nine throws meet the dealer's, position by position: a win is +1, a loss
-1. The best points difference wins, then the most wins ("6-3 beats 5-2"); the dealer, if still
in, scores 0-0 and wins every tie with him (a player must *beat* the dealer). Players still tied
play an RPS play-off at the table, whose winner the console declares.

Betting is hold'em's: an `RpsHand` holds a ``holdem.Hand`` with ``order="rps"`` (blinds the
two seats right of the dealer, the seat left of the dealer first in every round, the dealer
last); a round's betting opens only once its throws are in: every player still in has thrown,
and the dealer's throws are revealed. In a duplicate event the dealer's throws are not chosen
but read from the deal's deck order (``dealer_sequence``), the same at every table
(docs/rps-poker.md says why).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hub.domain.cards import FULL_DECK
from hub.domain.deck import DeckOrder
from hub.domain.errors import Rejection
from hub.domain.games.holdem import hand as holdem
from hub.domain.games.holdem.hand import STREETS
from hub.domain.games.records import ActionRecord, Legal, Pot
from hub.domain.games.spec import HandSpec

# The dealer: his throws read from the deal's deck order (duplicate), or chosen at the table and
# revealed through the console (a plain game); docs/rps-poker.md.
DEALERS = ("sequence", "chosen")


@dataclass(frozen=True)
class RpsRules:
    """RPS Poker's own rules, from ``[rps]`` (``TournamentConfig.game_rules``): its dealer."""

    dealer: str = "sequence"  # one of DEALERS


THROWS = "RPS"
ROUNDS = ("gambit", "flop", "turn", "river")
ROUND_THROWS = (3, 1, 2, 3)
TOTAL_THROWS = sum(ROUND_THROWS)
DEALER_MODES = ("sequence", "chosen")
# Deck positions whose card is chosen among a multiple of 3 remaining cards (52 - p), so that
# its rank among them, mod 3, is uniform and independent of the cards before (Lehmer code).
_SEQUENCE_POSITIONS = tuple(p for p in range(52) if (52 - p) % 3 == 0)[:TOTAL_THROWS]
_BEATS = {("R", "S"), ("S", "P"), ("P", "R")}


def outcome(player: str, dealer: str) -> int:
    """+1 when the player's throw beats the dealer's, -1 when it loses, 0 for a draw."""
    if player == dealer:
        return 0
    return 1 if (player, dealer) in _BEATS else -1


@dataclass(frozen=True, order=True)
class Score:
    """A player's throws against the dealer's: points difference, then wins."""

    diff: int
    wins: int
    losses: int = 0

    def __str__(self) -> str:
        return f"{self.wins}-{self.losses}"


def score(player: str, dealer: str) -> Score:
    """Throws against throws, position by position, over the positions both have."""
    results = [outcome(p, d) for p, d in zip(player, dealer, strict=False)]
    wins, losses = results.count(1), results.count(-1)
    return Score(wins - losses, wins, losses)


def best(scores: Mapping[int, Score], dealer: int | None) -> frozenset[int]:
    """The seats that share the best showdown: the highest points difference, then the most
    wins. ``dealer`` (his score 0-0 is in ``scores``, or None if he folded) wins every tie with
    him: a player beats the dealer only with a positive points difference."""

    def key(seat: int) -> tuple[int, float]:
        s = scores[seat]
        return (s.diff, float("inf") if seat == dealer else s.wins)

    top = max(key(s) for s in scores)
    return frozenset(s for s in scores if key(s) == top)


def parse_throws(text: object, round_index: int) -> str:
    """A round's throws as the console sends them ("RPS", case-insensitive); ``bad_throws``
    for a wrong count or an unknown letter."""
    name, count = ROUNDS[round_index], ROUND_THROWS[round_index]
    if not isinstance(text, str):
        raise Rejection("bad_throws", f"throws are a string of R, P and S, not {text!r}")
    throws = text.strip().upper()
    bad = sorted({c for c in throws if c not in THROWS})
    if bad:
        raise Rejection(
            "bad_throws", f"unknown throw {bad[0]!r}: use R (rock), P (paper), S (scissors)"
        )
    if len(throws) != count:
        raise Rejection(
            "bad_throws", f"the {name} is {count} throw{'s' * (count > 1)}, got {len(throws)}"
        )
    return throws


def dealer_sequence(order: DeckOrder) -> str:
    """The dealer's nine throws of a deal, read from its deck order: the card at position p is
    one of the 52 - p cards not yet used, its rank among them (in ``FULL_DECK`` order) uniform
    on 0..51 - p and independent of the cards before; where 52 - p is a multiple of 3, that
    rank mod 3 is a uniform, independent throw. Every table of a group faces the same throws,
    as it holds the same cards, and the deck's commitment and encryption cover them."""
    left = list(FULL_DECK)
    out: list[str] = []
    for p, card in enumerate(order.cards):
        if len(out) == TOTAL_THROWS:
            break
        rank = left.index(card)
        del left[rank]
        if p in _SEQUENCE_POSITIONS:
            out.append(THROWS[rank % 3])
    return "".join(out)


def split_rounds(throws: str) -> list[str]:
    """Nine throws as the four rounds' strings (fewer when fewer are given)."""
    out: list[str] = []
    at = 0
    for n in ROUND_THROWS:
        if at >= len(throws):
            break
        out.append(throws[at : at + n])
        at += n
    return out


def dealer_slips(decks: Mapping[int, DeckOrder], dealers: Mapping[int, int]) -> str:
    """Each deal's dealer's throws, one line a deal: what the dealer of every table turns over
    in a duplicate event, printed on slips (the seed's "Gambit", "Flop", "Turn", "River")."""
    lines = []
    for deal in sorted(decks):
        rounds = split_rounds(dealer_sequence(decks[deal]))
        cells = "  ".join(f"{name} {r}" for name, r in zip(ROUNDS, rounds, strict=True))
        lines.append(f"deal {deal} (dealer seat {dealers[deal]}): {cells}\n")
    return "".join(lines)


class RpsHand:
    """One hand of RPS Poker (the hub's `Hand` protocol): the throws, and a hold'em betting
    round (``betting``, ``spec.order == "rps"``) that each round's throws gate.

    ``street`` stays the betting's (``preflop`` is the gambit's betting). ``sequence``: the
    dealer's nine throws in a duplicate deal (None: chosen at the table, or unknown)."""

    def __init__(self, spec: HandSpec, *, mode: str = "sequence", sequence: str | None = None):
        if spec.order != "rps":
            raise ValueError("an RPS Poker hand needs HandSpec(order='rps')")
        self.spec = spec
        self.mode = mode
        self.sequence = sequence
        self.throws: dict[int, list[str]] = {}  # seat -> its throws, round by round
        self.revealed: list[str] = []  # the dealer's throws, round by round (mode "chosen")
        self.betting = holdem.Hand(spec)

    @property
    def dealer(self) -> int:
        return self.spec.button

    # ----------------------------------------------------------------- the betting's state
    @property
    def street(self) -> str:
        return self.betting.street

    @property
    def to_act(self) -> int | None:
        return self.betting.to_act

    @property
    def committed(self) -> dict[int, int]:
        return self.betting.committed

    @property
    def street_bet(self) -> dict[int, int]:
        return self.betting.street_bet

    @property
    def folded(self) -> frozenset[int]:
        return self.betting.folded

    @property
    def all_in(self) -> frozenset[int]:
        return self.betting.all_in

    @property
    def actions(self) -> list[ActionRecord]:
        return self.betting.actions

    @property
    def result(self) -> dict[int, int] | None:
        return self.betting.result

    @property
    def pot(self) -> int:
        return self.betting.pot

    @property
    def high_bet(self) -> int:
        return self.betting.high_bet

    def stack(self, seat: int) -> int:
        return self.betting.stack(seat)

    def board_visible(self) -> tuple[str, ...]:
        return self.betting.board_visible()

    def legal(self, seat: int) -> Legal:
        return self.betting.legal(seat)

    def pots(self) -> list[Pot]:
        return self.betting.pots()

    # ----------------------------------------------------------------- reading
    def round_index(self) -> int | None:
        """The round whose throws are being made or bet on (4: all in; None: hand over)."""
        if self.street == "complete":
            return None
        if self.street in STREETS:
            return STREETS.index(self.street)
        for r in range(len(ROUNDS)):
            if not self.is_revealed(r):
                return r
        return len(ROUNDS)

    def players_in(self) -> list[int]:
        """Seats still in that throw (the dealer's throws are his own kind)."""
        return [s for s in sorted(self.committed) if s not in self.folded and s != self.dealer]

    def missing(self, r: int) -> list[int]:
        """Players still in who have not thrown for round ``r``."""
        return [s for s in self.players_in() if len(self.throws.get(s, [])) <= r]

    def is_revealed(self, r: int) -> bool:
        """Are the dealer's throws of round ``r`` turned over?"""
        if self.mode == "chosen":
            return r < len(self.revealed)
        return not self.missing(r)  # a sequence is turned over once every player has thrown

    def dealer_throws(self) -> list[str] | None:
        """The dealer's throws turned over so far, round by round (None: unknown to the hub)."""
        if self.mode == "chosen":
            return list(self.revealed)
        if self.sequence is None:
            return None
        return split_rounds(self.sequence)[: self._rounds_shown()]

    def _rounds_shown(self) -> int:
        """How many of a sequence's rounds the table has seen turned over."""
        r = self.round_index()
        if r is None:  # over: the rounds its betting reached, and those thrown to the end
            bet_on = 1 + max(STREETS.index(a.street) for a in self.actions)
            players = self.players_in()
            thrown = min((len(self.throws.get(s, [])) for s in players), default=0)
            return max(bet_on, thrown)
        return r + (1 if r < len(ROUNDS) and self.is_revealed(r) else 0)

    def seat_score(self, seat: int) -> Score | None:
        """The seat's score against the dealer's throws turned over so far (None: unknown)."""
        shown = self.dealer_throws()
        if shown is None:
            return None
        if seat == self.dealer:
            return Score(0, 0)
        mine = self.throws.get(seat, [])
        n = min(len(mine), len(shown))
        return score("".join(mine[:n]), "".join(shown[:n]))

    def throws_complete(self) -> bool:
        return self.round_index() in (None, len(ROUNDS))

    # ----------------------------------------------------------------- throwing
    def throw(self, seat: int, text: object) -> str:
        """Record a player's throws for the current round (again, to change them, until the
        dealer's are turned over)."""
        r = self._open_round()
        if not 1 <= seat <= self.spec.seats:
            raise Rejection("unknown_seat", f"seat {seat} is not a seat of 1..{self.spec.seats}")
        if seat == self.dealer:
            how = "reveal them with 'reveal'" if self.mode == "chosen" else "come from the deal"
            raise Rejection("not_allowed", f"seat {seat} is the dealer: the dealer's throws {how}")
        if seat in self.folded:
            raise Rejection("not_allowed", f"seat {seat} has folded and throws no more")
        throws = parse_throws(text, r)
        mine = self.throws.setdefault(seat, [])
        if len(mine) > r:
            mine[r] = throws
        else:
            mine.append(throws)
        return throws

    def reveal(self, text: object) -> str:
        """The dealer turns over the round's throws (mode "chosen"), after every player's."""
        if self.mode != "chosen":
            raise Rejection(
                "not_allowed", "the dealer's throws come from the deal's sequence: no 'reveal'"
            )
        r = self._open_round()
        missing = self.missing(r)
        if missing:
            raise Rejection(
                "throws_pending",
                f"seat{'s' * (len(missing) > 1)} {', '.join(map(str, missing))} "
                f"{'have' if len(missing) > 1 else 'has'} not thrown for the {ROUNDS[r]}: "
                "the dealer reveals after every player",
            )
        throws = parse_throws(text, r)
        self.revealed.append(throws)
        return throws

    def _open_round(self) -> int:
        r = self.round_index()
        if r is None:
            raise Rejection("hand_over", "the hand is over: no more throws")
        if r == len(ROUNDS):
            raise Rejection("not_allowed", "all nine throws are in: the hand is at its showdown")
        if self.is_revealed(r):
            raise Rejection(
                "not_allowed",
                f"the dealer's {ROUNDS[r]} is turned over: its throws can no longer change",
            )
        return r

    # ----------------------------------------------------------------- betting
    def verify(self, seat: int, kind: str, amount: int | None = None) -> None:
        """Raise the ``Rejection`` that ``act`` would raise; change nothing."""
        self._gate()
        self.betting.verify(seat, kind, amount)

    def can_act(self, seat: int, kind: str, amount: int | None = None) -> bool:
        try:
            self.verify(seat, kind, amount)
        except Rejection:
            return False
        return True

    def act(self, seat: int, kind: str, amount: int | None = None) -> ActionRecord:
        """A betting action, once the round's throws are in."""
        self._gate()
        return self.betting.act(seat, kind, amount)

    def _gate(self) -> None:
        """Refuse betting on a round whose throws are not all in (``throws_pending``)."""
        r = self.round_index()
        if r is not None and r < len(ROUNDS) and self.street in STREETS and not self.is_revealed(r):
            missing = self.missing(r)
            who = (
                f"seats {', '.join(map(str, missing))} to throw"
                if missing
                else "the dealer's throws"
            )
            raise Rejection(
                "throws_pending", f"the {ROUNDS[r]} betting opens once its throws are in: {who}"
            )

    def copy(self) -> RpsHand:
        clone = object.__new__(RpsHand)
        clone.__dict__.update(self.__dict__)
        clone.betting = self.betting.copy()
        clone.throws = {s: list(t) for s, t in self.throws.items()}
        clone.revealed = list(self.revealed)
        return clone

    def if_ended_now(self) -> dict[int, int] | None:
        """The result if the hand ended now (hold'em's: None without cards, as RPS deals)."""
        if self.result is not None:
            return dict(self.result)
        if self.spec.cards is None:
            return None
        clone = self.copy()
        clone.betting.street = "showdown"
        return clone.settle(None)

    # ----------------------------------------------------------------- showdown
    def _scores(self, pot: Pot) -> dict[int, Score] | None:
        shown = self.dealer_throws()
        if shown is None or len(shown) < len(ROUNDS):
            return None
        dealer = "".join(shown)
        return {
            s: Score(0, 0) if s == self.dealer else score("".join(self.throws[s]), dealer)
            for s in pot.eligible
        }

    def pot_leaders(self) -> list[tuple[Pot, frozenset[int]]] | None:
        """Each pot and the seats tied best for it (one seat: its winner; several: a
        play-off); None while the throws are not all known."""
        if self.street != "showdown" or not self.throws_complete():
            return None
        out = []
        for pot in self.pots():
            scores = self._scores(pot)
            if scores is None:
                return None
            dealer = self.dealer if self.dealer in pot.eligible else None
            out.append((pot, best(scores, dealer)))
        return out

    def awards(self, declared: Iterable[int] | None = None) -> list[tuple[Pot, tuple[int, ...]]]:
        """How a settled hand's pots went by the throws (a tied pot: to the declared play-off
        winner); as declared when the dealer's throws are not all known."""
        live = [s for s in self.committed if s not in self.folded]
        if len(live) < 2 or self._scores(self.pots()[0]) is None:
            return self.betting.awards(declared)
        chosen = frozenset(declared or ())
        out = []
        for pot in self.pots():
            scores = self._scores(pot)
            assert scores is not None
            tied = best(scores, self.dealer if self.dealer in pot.eligible else None)
            out.append((pot, tuple(sorted(tied if len(tied) == 1 else tied & chosen or tied))))
        return out

    def seat_name(self, seat: int) -> str | None:
        """A seat's throws against the dealer's at showdown: "PPPPSSRRR against the dealer:
        4-2" (the dealer's own: "RRRRRRRRR, the dealer's"); None while they are not all known."""
        shown = self.dealer_throws()
        if shown is None or len(shown) < len(ROUNDS):
            return None
        if seat == self.dealer:
            return f"{''.join(shown)}, the dealer's"
        mine = "".join(self.throws.get(seat, []))
        return f"{mine} against the dealer: {score(mine, ''.join(shown))}"

    def computed_winners(self) -> frozenset[int] | None:
        """The winners by the throws; None when unknown or when a play-off must decide."""
        leaders = self.pot_leaders()
        if leaders is None or any(len(ws) > 1 for _, ws in leaders):
            return None
        return frozenset(s for pot, ws in leaders if len(pot.eligible) > 1 for s in ws)

    def settle(self, winners: Iterable[int] | None = None) -> dict[int, int]:
        """Award every pot: by the throws, a tied pot to the declared play-off winner (one of
        the tied seats); without the dealer's throws known, as declared."""
        if self.street == "showdown" and not self.throws_complete():
            r = self.round_index()
            assert r is not None
            raise Rejection("throws_pending", f"the {ROUNDS[r]} throws are not all in yet")
        leaders = self.pot_leaders()
        if leaders is None:
            return self.betting.settle(winners)
        declared = None if winners is None else frozenset(winners)
        won = {s: 0 for s in self.committed}
        used: set[int] = set()
        for pot, tied in leaders:
            if len(tied) == 1:
                (seat,) = tied
            else:
                chosen = (declared or frozenset()) & tied
                if len(chosen) != 1:
                    raise Rejection(
                        "bad_winner",
                        f"seats {', '.join(map(str, sorted(tied)))} tie for a pot of "
                        f"{pot.amount}: declare the play-off winner, one of them",
                    )
                (seat,) = chosen
            won[seat] += pot.amount
            if len(pot.eligible) > 1:
                used.add(seat)
        if declared is not None and declared != used:
            raise Rejection("bad_winner", _misdeclared(used, declared))
        if self.street == "complete":
            raise Rejection("hand_over", "the hand is already complete")
        return self.betting.award(won)


def _seats(seats: Iterable[int]) -> str:
    """``seat 3`` or ``seats 1, 3``: an official reads these words."""
    ordered = sorted(seats)
    return ("seat " if len(ordered) == 1 else "seats ") + ", ".join(map(str, ordered))


def _misdeclared(used: frozenset[int] | set[int], declared: frozenset[int]) -> str:
    """Name the seats the throws give the pots to, then exactly which declared seats win
    nothing and which winners were left out (not the two lists mixed together)."""
    parts = []
    if wrongly := declared - used:
        verb = "wins" if len(wrongly) == 1 else "win"
        parts.append(f"{_seats(wrongly)} declared but {verb} nothing")
    if missed := used - declared:
        verb = "wins but was" if len(missed) == 1 else "win but were"
        parts.append(f"{_seats(missed)} {verb} not declared")
    return f"by the throws the pots go to {_seats(used)}: {'; '.join(parts)}"


def replay(
    spec: HandSpec,
    inputs: Iterable[tuple[int, str, int | str | None]],
    *,
    mode: str,
    sequence: str | None,
) -> RpsHand:
    """Rebuild a hand from its inputs: betting actions, ``throws`` and ``reveal``."""
    hand = RpsHand(spec, mode=mode, sequence=sequence)
    for seat, kind, value in inputs:
        if kind == "throws":
            hand.throw(seat, value)
        elif kind == "reveal":
            hand.reveal(value)
        else:
            assert not isinstance(value, str)
            hand.act(seat, kind, value)
    return hand
