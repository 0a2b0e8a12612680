"""Hands in PHH, poker's open hand-history format (``phh-std``; PokerKit reads and writes it).

Reading: ``read_phh`` turns one parsed PHH hand into a ``PhhHand`` our engine can replay, or
raises ``Unreplayable`` naming why it cannot (another variant, straddles, hole cards unknown
where they decide a pot). ``replay`` plays it through ``Hand`` by PokerKit's conventions
(``rules="pokerkit"``: PHH files come from PokerKit, the format's reference implementation), so
its finishing stacks can be set against the file's.

Writing: ``write_phh`` plays one of our hands through PokerKit's own state machine and lets
PokerKit's writer order the dealing, showdown and run-out lines, so PokerKit is sure to load
the file; the finishing stacks written are ours (docs/phh.md).

Seats: PHH's players p1..pn sit clockwise from the seat left of the button, so p_i is seat i
with the button on seat n (heads-up, p1 is the big blind and p2 the button, which posts the
small blind). Heads-up, PHH lists antes and blinds by position (small blind first), so p1's
ante is the second entry. PHH has no code for pot-limit hold'em: such a hand is written as
``NT`` (every pot-limit action is also a no-limit one, so any PHH reader replays it to the same
stacks) with the user-defined field ``_betting = "pot-limit"``, which ``read_phh`` honours.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hub.domain.cards import parse_card
from hub.domain.errors import Rejection
from hub.domain.holdem import Hand, HandSpec

BETTING_FIELD = "_betting"
"""User-defined PHH field (PHH's own fields never start with ``_``): ``"pot-limit"`` on an
``NT`` hand means pot-limit hold'em."""


class Unreplayable(ValueError):
    """A hand our hold'em engine cannot replay; the message says why."""


class Mismatch(ValueError):
    """A hand whose actions our engine refuses, or that is not over after its last action."""


@dataclass(frozen=True)
class PhhCards:
    hole: Mapping[int, tuple[str, str]]
    board: tuple[str, ...]


@dataclass(frozen=True)
class PhhHand:
    """One hold'em hand read from PHH, in our seats (p_i is seat i, the button seat n)."""

    spec: HandSpec
    moves: tuple[tuple[int, str, int | None], ...]  # (seat, "f" | "cc" | "cbr", amount)
    finishing_stacks: tuple[float, ...] | None
    players: tuple[str, ...] | None = None


def _chips(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Unreplayable(f"{what} {value!r} is not a number of chips")
    if value != int(value):
        raise Unreplayable(f"{what} {value} is not a whole number of chips")
    return int(value)


def _split(cards: str) -> list[str]:
    return [cards[i : i + 2] for i in range(0, len(cards), 2)]


def _player(token: str, n: int) -> int:
    if not (token.startswith("p") and token[1:].isdigit() and 1 <= int(token[1:]) <= n):
        raise Unreplayable(f"unknown player {token!r}")
    return int(token[1:])


def read_phh(data: Mapping[str, Any]) -> PhhHand:
    """One PHH hand (its TOML already parsed) as a hand our engine can replay."""
    variant = data.get("variant")
    if variant != "NT":
        raise Unreplayable(f"variant {variant!r}: only no-limit and pot-limit hold'em (NT)")
    betting = data.get(BETTING_FIELD, "no-limit")
    if betting not in ("no-limit", "pot-limit"):
        raise Unreplayable(f"{BETTING_FIELD} {betting!r}: expected 'no-limit' or 'pot-limit'")
    stacks = [_chips(s, "starting stack") for s in data.get("starting_stacks", [])]
    n = len(stacks)
    if not 2 <= n <= 23:
        raise Unreplayable(f"{n} players: hold'em needs 2 to 23")
    if min(stacks) <= 0:
        raise Unreplayable("a starting stack of 0 chips")
    antes = [_chips(a, "ante") for a in _per_player(data.get("antes", 0), n, "antes")]
    blinds = [_chips(b, "blind") for b in _per_player(data["blinds_or_straddles"], n, "blinds")]
    if any(blinds[2:]) or not 0 < blinds[0] <= blinds[1]:
        raise Unreplayable(
            f"blinds_or_straddles {blinds}: only a small and a big blind (0 < small <= big)"
        )
    if n == 2:
        antes.reverse()  # by position: the first entry is the button's (p2's)
    min_bet = _chips(data.get("min_bet", blinds[1]), "min_bet")
    if min_bet <= 0:
        raise Unreplayable(f"min_bet {min_bet}")
    hole: dict[int, tuple[str, str]] = {}
    board: list[str] = []
    moves: list[tuple[int, str, int | None]] = []
    for raw in data.get("actions", []):
        line = str(raw).split("#", 1)[0].split()
        if not line:
            continue
        if line[0] == "d" and len(line) >= 3 and line[1] == "dh":
            cards = _split(line[3]) if len(line) > 3 else []
            if len(cards) != 2:
                raise Unreplayable(f"{raw!r}: hold'em deals two hole cards")
            if "??" not in cards:
                hole[_player(line[2], n)] = (parse_card(cards[0]), parse_card(cards[1]))
        elif line[:2] == ["d", "db"] and len(line) == 3:
            if "??" in _split(line[2]):
                raise Unreplayable(f"{raw!r}: a board card is unknown")
            board.extend(parse_card(c) for c in _split(line[2]))
        elif len(line) >= 2 and line[1] in ("f", "cc") and len(line) == 2:
            moves.append((_player(line[0], n), line[1], None))
        elif len(line) == 3 and line[1] == "cbr":
            moves.append((_player(line[0], n), "cbr", _chips(float(line[2]), "amount")))
        elif len(line) >= 2 and line[1] == "sm":
            seat = _player(line[0], n)
            shown = _split(line[2]) if len(line) > 2 and line[2] != "-" else []
            if len(shown) == 2 and "??" not in shown:
                hole[seat] = (parse_card(shown[0]), parse_card(shown[1]))
        else:
            raise Unreplayable(f"action {raw!r} is not one of hold'em")
    if len(board) > 5:
        raise Unreplayable(f"{len(board)} board cards")
    finishing = data.get("finishing_stacks")
    spec = HandSpec(
        seats=n,
        button=n,
        small_blind=blinds[0],
        big_blind=blinds[1],
        cap=max(stacks),
        pot_limit=betting == "pot-limit",
        cards=PhhCards(hole, tuple(board)),
        stacks=tuple(stacks),
        antes=tuple(antes) if any(antes) else None,
        dead_antes=not data.get("ante_trimming_status", False),
        min_bet=min_bet,
        rules="pokerkit",
    )
    players = data.get("players")
    return PhhHand(
        spec=spec,
        moves=tuple(moves),
        finishing_stacks=None if finishing is None else tuple(float(x) for x in finishing),
        players=tuple(str(p) for p in players) if isinstance(players, list) else None,
    )


def _per_player(value: Any, n: int, what: str) -> list[Any]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [value] * n
    if not isinstance(value, list) or len(value) != n:
        raise Unreplayable(f"{what} needs one entry per player ({n})")
    return value


def replay(phh: PhhHand) -> Hand:
    """Play the hand through our engine and settle it; ``Mismatch`` names the first action our
    engine refuses, ``Unreplayable`` a showdown the known cards cannot decide."""
    hand = Hand(phh.spec)
    for number, (seat, move, amount) in enumerate(phh.moves, 1):
        try:
            if move == "f":
                hand.act(seat, "fold")
            elif move == "cc":
                hand.act(seat, "check" if hand.legal(seat).check else "call")
            else:
                hand.act(seat, "raise" if hand.high_bet else "bet", amount)
        except Rejection as exc:
            shown = f"p{seat} {move}" + ("" if amount is None else f" {amount}")
            raise Mismatch(f"action {number} ({shown}) refused: {exc.message}") from None
    if hand.street == "showdown":
        cards = phh.spec.cards
        assert cards is not None
        contested = {s for pot in hand.pots() if len(pot.eligible) > 1 for s in pot.eligible}
        unknown = sorted(s for s in contested if s not in cards.hole)
        if unknown:
            names = ", ".join(f"p{s}" for s in unknown)
            raise Unreplayable(f"hole cards of {names} unknown at showdown")
        if contested and len(cards.board) < 5:
            raise Unreplayable(f"only {len(cards.board)} board cards for a showdown")
        hand.settle(None)
    if hand.street != "complete":
        raise Mismatch(f"the hand is not over after the last action (seat {hand.to_act} to act)")
    return hand


def finishing_stacks(hand: Hand) -> list[int]:
    """Chips each seat ends with, seat 1 (p1) first."""
    assert hand.result is not None
    return [hand.spec.starting_stack(s) + hand.result[s] for s in range(1, hand.spec.seats + 1)]


# ------------------------------------------------------------------------------- writing


def player_seat(index: int, button: int, seats: int) -> int:
    """Our seat of PHH player p{index + 1} at a table whose button is ``button``."""
    return (button + index) % seats + 1


def write_phh(
    spec: HandSpec,
    inputs: Iterable[tuple[int, str, int | None]],
    result: Mapping[int, int],
    *,
    players: Sequence[str] | None = None,
    seats: Sequence[int] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """One finished hand of ours as PHH text. ``inputs`` are its voluntary actions (what
    ``Hand.replay`` takes); ``result`` its chip-score per seat; ``players``/``seats`` (seat 1
    first) and ``extra`` fields (``table``, ``hand``, ``event``...) are written as given."""
    from pokerkit import Automation, HandHistory, NoLimitTexasHoldem

    inputs = list(inputs)
    if spec.cards is None and Hand.replay(spec, inputs).street == "showdown":
        raise ValueError("settled at a showdown whose cards the hub never knew (no deck orders)")
    n, b = spec.seats, spec.button
    order = [player_seat(i, b, n) for i in range(n)]  # our seat of p1, p2, ...
    antes = [spec.ante(s) for s in order]
    if n == 2:
        antes.reverse()
    game = NoLimitTexasHoldem(
        (
            Automation.ANTE_POSTING,
            Automation.BET_COLLECTION,
            Automation.BLIND_OR_STRADDLE_POSTING,
            Automation.HAND_KILLING,
            Automation.CHIPS_PUSHING,
            Automation.CHIPS_PULLING,
        ),
        not spec.dead_antes,
        antes,
        (spec.small_blind, spec.big_blind),
        spec.smallest_bet,
    )
    state = game([spec.starting_stack(s) for s in order], n)
    cards = spec.cards

    def deal() -> None:
        while True:
            if state.can_burn_card():
                state.burn_card("??")
            elif state.can_deal_hole():
                index = state.hole_dealee_index
                assert index is not None
                state.deal_hole("".join(cards.hole[order[index]]) if cards else "????")
            elif cards and state.can_show_or_muck_hole_cards(True):
                state.show_or_muck_hole_cards(True)  # every hand is shown (~15 ms less a hand)
            elif state.can_deal_board():
                count = state.board_dealing_count
                assert count is not None
                dealt = len(state.board_cards)
                state.deal_board(
                    "".join(cards.board[dealt : dealt + count]) if cards else "??" * count
                )
            else:
                return

    deal()
    for _seat, kind, amount in inputs:
        if kind == "fold":
            state.fold()
        elif kind in ("check", "call"):
            state.check_or_call()
        else:
            state.complete_bet_or_raise_to(amount)
        deal()
    fields: dict[str, Any] = {
        "ante_trimming_status": not spec.dead_antes,
        "finishing_stacks": [spec.starting_stack(s) + result[s] for s in order],
    }
    if players is not None:
        fields["players"] = [players[s - 1] for s in order]
    if seats is not None:
        fields["seats"] = [seats[s - 1] for s in order]
    if spec.pot_limit:
        fields[BETTING_FIELD] = "pot-limit"
    fields.update(extra or {})
    return str(HandHistory.from_game_state(game, state, **fields).dumps()) + "\n"
