"""Settling a hand: main and side pots layered by what each seat committed, awarded by the
cards or by the winners an official declares, odd chips left of the button."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hub.domain.errors import Rejection
from hub.domain.games.holdem.state import BettingState
from hub.domain.games.records import Pot


class Settlement(BettingState):
    """The pots of a hand and their award at showdown."""

    def pots(self) -> list[Pot]:
        """Main pot then side pots, layered by committed amounts; folded chips stay in.
        Dead antes start the main pot, which every player still in may win."""
        if self.street == "showdown" and self._final_pots is not None:
            return list(self._final_pots)
        return self._layered_pots()

    def _layered_pots(self) -> list[Pot]:
        live = [s for s in self.committed if s not in self.folded]
        layered = self.committed
        pots: list[Pot] = []
        if self._dead:
            layered = {s: c - self._ante_paid(s) for s, c in self.committed.items()}
            pots.append(Pot(self._dead, frozenset(live)))
        # Every layer runs from one committed amount to the next, so each seat with chips past
        # the layer's floor has the whole layer in: (level - previous) x those seats.
        amounts = sorted(c for c in layered.values() if c > 0)
        previous = 0
        for i, level in enumerate(amounts):
            if level == previous:
                continue
            amount = (level - previous) * (len(amounts) - i)
            eligible = frozenset(s for s in live if layered[s] >= level)
            previous = level
            if pots and (not eligible or pots[-1].eligible == eligible):
                pots[-1] = Pot(pots[-1].amount + amount, pots[-1].eligible)
            else:
                pots.append(Pot(amount, eligible))
        return pots

    def computed_winners(self) -> frozenset[int] | None:
        """Seats that win chips of a contested pot by the known cards (``None``: cards unknown)."""
        if self.spec.cards is None or self.street != "showdown":
            return None
        return frozenset(s for pot, ws in self._card_awards() if len(pot.eligible) > 1 for s in ws)

    def settle(self, winners: Iterable[int] | None = None) -> dict[int, int]:
        """Award every pot at showdown (``None``: by the known cards); returns the result."""
        if self.street == "complete":
            raise Rejection("hand_over", "the hand is already complete")
        if self.street != "showdown":
            raise Rejection("hand_in_progress", "betting is not finished: no showdown yet")
        if winners is None:
            if self.spec.cards is None:
                raise Rejection("bad_winner", "no cards known: declare the winners")
            awards = self._card_awards()
        else:
            awards = self._declared_awards(frozenset(winners))
        self._complete(self._won(awards))
        assert self.result is not None
        return dict(self.result)

    def _won(self, awards: list[tuple[Pot, tuple[int, ...]]]) -> dict[int, int]:
        """The chips each seat wins by ``awards`` (each pot split among its winners)."""
        won = {s: 0 for s in self.committed}
        all_to_first = self.spec.odd_chip_rule == "all-to-first"
        if all_to_first:
            awards = _merge_after_killing(awards)
        for pot, ordered in awards:
            for s, chips in split(pot.amount, ordered, all_to_first=all_to_first).items():
                won[s] += chips
        return won

    def awards(self, declared: Iterable[int] | None = None) -> list[tuple[Pot, tuple[int, ...]]]:
        """How a settled hand's pots went: each pot and its winners in odd-chip order, by the
        known cards (``declared`` None) or as an official declared them; a fold-out is one pot
        to the player left. What the showdown package shows (``holdem.showdown``)."""
        live = tuple(s for s in sorted(self.committed) if s not in self.folded)
        if len(live) == 1:
            return [(Pot(self.pot, frozenset(live)), live)]
        if declared is None:
            awards = self._card_awards()
        else:
            awards = self._declared_awards(frozenset(declared))
        if self.spec.odd_chip_rule == "all-to-first":
            awards = _merge_after_killing(awards)
        return awards

    def award(self, won: Mapping[int, int]) -> dict[int, int]:
        """End the hand with the chips each seat won, awarded by a game's own rules (RPS
        Poker's throws); returns the result."""
        self._complete(won)
        assert self.result is not None
        return dict(self.result)

    def _complete(self, won: Mapping[int, int]) -> None:
        self.street = "complete"
        self.to_act = None
        self.result = {s: won[s] - self.committed[s] for s in sorted(self.committed)}

    def _odd_chip_order(self, seats: Iterable[int]) -> tuple[int, ...]:
        chosen = set(seats)
        return tuple(s for s in self._order_from(self._left(self.spec.button)) if s in chosen)

    def _card_awards(self, pots: list[Pot] | None = None) -> list[tuple[Pot, tuple[int, ...]]]:
        """Each of the ``pots`` (None: ``pots()``) and its winners by the cards."""
        cards = self.spec.cards
        assert cards is not None
        if pots is None:
            pots = self.pots()
        winners = self.spec.pieces.winners_by_pot(
            pots, cards.hole, cards.board, self.spec.button, self.spec.seats
        )
        return list(zip(pots, winners, strict=True))

    def _declared_awards(self, declared: frozenset[int]) -> list[tuple[Pot, tuple[int, ...]]]:
        if not declared:
            raise Rejection("bad_winner", "declare at least one winner")
        for s in sorted(declared):
            if not isinstance(s, int) or not 1 <= s <= self.spec.seats:
                raise Rejection("bad_winner", f"seat {s} is not a seat of 1..{self.spec.seats}")
            if s in self.folded:
                raise Rejection("bad_winner", f"seat {s} folded and cannot win a pot")
        awards = []
        for i, pot in enumerate(self.pots()):
            chosen = declared & pot.eligible
            if not chosen:
                if len(pot.eligible) != 1:
                    name = "main pot" if i == 0 else "side pot"
                    raise Rejection(
                        "bad_winner",
                        f"{name} of {pot.amount} between seats {_seat_list(pot.eligible)}"
                        " has no declared winner",
                    )
                chosen = pot.eligible
            awards.append((pot, self._odd_chip_order(chosen)))
        return awards


def split(amount: int, ordered: tuple[int, ...], *, all_to_first: bool = False) -> dict[int, int]:
    """A pot shared by ``ordered`` (odd-chip order): equal shares, the odd chips one at a time
    from the first (or all to the first, PokerKit's rule)."""
    share, odd = divmod(amount, len(ordered))
    if all_to_first:
        return {s: share + (odd if i == 0 else 0) for i, s in enumerate(ordered)}
    return {s: share + (1 if i < odd else 0) for i, s in enumerate(ordered)}


def _merge_after_killing(
    awards: list[tuple[Pot, tuple[int, ...]]],
) -> list[tuple[Pot, tuple[int, ...]]]:
    """PokerKit kills every hand that wins nothing before it pays, so pots next to each other
    whose remaining players are the same become one pot (and one set of odd chips). A merged
    pot keeps every seat that was eligible for a part of it (who contested it)."""
    alive = {s for _, winners in awards for s in winners}
    merged: list[tuple[Pot, tuple[int, ...]]] = []
    lefts: list[frozenset[int]] = []
    for pot, winners in awards:
        left = pot.eligible & alive
        if merged and lefts[-1] == left:
            before = merged[-1][0]
            merged[-1] = (Pot(before.amount + pot.amount, before.eligible | pot.eligible), winners)
        else:
            merged.append((pot, winners))
            lefts.append(left)
    return merged


def _seat_list(seats: Iterable[int]) -> str:
    """``"2 and 5"``, ``"1, 2 and 5"``: seats as officials say them."""
    ordered = [str(s) for s in sorted(seats)]
    return ordered[0] if len(ordered) == 1 else ", ".join(ordered[:-1]) + " and " + ordered[-1]
