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
Likewise ``_odd_chips = "one-at-a-time"``: the hand's split pots were paid by the tournament's
rule (each pot's odd chips one at a time from the left of the button), not PokerKit's (all to
the first winner), so its finishing stacks replay to the chip (docs/phh.md).
"""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hub.domain.cards import parse_card
from hub.domain.errors import Rejection
from hub.domain.games.holdem.hand import Hand
from hub.domain.games.spec import ODD_CHIPS, HandSpec
from hub.domain.numbers import MAX_SAFE_INT

BETTING_FIELD = "_betting"
"""User-defined PHH field (PHH's own fields never start with ``_``): ``"pot-limit"`` on an
``NT`` hand means pot-limit hold'em."""

ODD_CHIPS_FIELD = "_odd_chips"
"""User-defined PHH field: how the file's split pots were paid (``ODD_CHIPS``); absent, by
PokerKit's rule ("all-to-first"), as PHH files from elsewhere are."""


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
    unbounded: frozenset[int] = frozenset()  # seats whose stack is ``inf`` (unlimited)


def _show(value: Any) -> str:
    """A value from the file, shown in one short line whatever its size or depth."""
    return _REPR.repr(value)


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxstring, _REPR.maxother = 2, 4, 40, 40


def _chips(value: Any, what: str) -> int:
    """A whole, finite number of chips of at most 2^53 - 1 (what every client holds exactly)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:  # NaN
        raise Unreplayable(f"{what} {_show(value)} is not a number of chips")
    if not math.isfinite(value) or abs(value) > MAX_SAFE_INT:
        raise Unreplayable(f"{what} {_show(value)} is out of range (at most 2^53 - 1 chips)")
    if value != int(value):
        raise Unreplayable(f"{what} {value} is not a whole number of chips")
    return int(value)


def _stack(value: Any) -> int | None:
    """A starting stack; None for ``inf``, PHH's unlimited (or unrecorded) cash-game stack."""
    if isinstance(value, float) and value == math.inf:
        return None
    return _chips(value, "starting stack")


def _amount(token: str) -> int:
    try:
        value = float(token)
    except ValueError:
        raise Unreplayable(f"amount {_show(token)} is not a number") from None
    return _chips(value, "amount")


def _list(data: Mapping[str, Any], key: str, default: list[Any] | None = None) -> list[Any]:
    """A field PHH gives as an array: a scalar, a table or a missing field is named."""
    value = data.get(key, default)
    if value is None:
        raise Unreplayable(f"missing field {key!r}")
    if not isinstance(value, list):
        raise Unreplayable(f"{key} {_show(value)} is not a list")
    return value


def _split(cards: str) -> list[str]:
    return [cards[i : i + 2] for i in range(0, len(cards), 2)]


def _cards(text: str, raw: str) -> list[str]:
    try:
        return [parse_card(c) for c in _split(text)]
    except ValueError:
        raise Unreplayable(f"{_show(raw)}: {_show(text)} are not cards") from None


def _player(token: str, n: int) -> int:
    if not (token.startswith("p") and token[1:].isdigit() and 1 <= int(token[1:]) <= n):
        raise Unreplayable(f"unknown player {_show(token)}")
    return int(token[1:])


def read_phh(data: Mapping[str, Any]) -> PhhHand:
    """One PHH hand (its TOML already parsed) as a hand our engine can replay. Whatever the
    file holds, the only exception is ``Unreplayable`` with a one-line reason: a file from
    elsewhere is input, and `phh-check` reports on folders of them."""
    if not isinstance(data, Mapping):
        raise Unreplayable(f"{_show(data)} is not a PHH hand (a table of fields)")
    variant = data.get("variant")
    if variant != "NT":
        raise Unreplayable(f"variant {_show(variant)}: only no-limit and pot-limit hold'em (NT)")
    betting = data.get(BETTING_FIELD, "no-limit")
    if betting not in ("no-limit", "pot-limit"):
        raise Unreplayable(f"{BETTING_FIELD} {_show(betting)}: expected 'no-limit' or 'pot-limit'")
    odd_chips = data.get(ODD_CHIPS_FIELD)
    if odd_chips is not None and odd_chips not in ODD_CHIPS:
        expected = " or ".join(repr(rule) for rule in ODD_CHIPS)
        raise Unreplayable(f"{ODD_CHIPS_FIELD} {_show(odd_chips)}: expected {expected}")
    given = [_stack(s) for s in _list(data, "starting_stacks", [])]
    n = len(given)
    if not 2 <= n <= 23:
        raise Unreplayable(f"{n} players: hold'em needs 2 to 23")
    if min((s for s in given if s is not None), default=1) <= 0:
        raise Unreplayable("a starting stack of 0 chips")
    antes = [_chips(a, "ante") for a in _per_player(data.get("antes", 0), n, "antes")]
    if min(antes) < 0:
        raise Unreplayable(f"antes {_show(antes)}: an ante below 0")
    blinds = [_chips(b, "blind") for b in _per_player(_blinds(data), n, "blinds")]
    if any(blinds[2:]) or not 0 < blinds[0] <= blinds[1]:
        raise Unreplayable(
            f"blinds_or_straddles {_show(blinds)}: only a small and a big blind (0 < small <= big)"
        )
    if n == 2:
        antes.reverse()  # by position: the first entry is the button's (p2's)
    min_bet = _chips(data.get("min_bet", blinds[1]), "min_bet")
    if min_bet <= 0:
        raise Unreplayable(f"min_bet {min_bet}")
    hole, board, moves = _actions(_list(data, "actions", []), n)
    # An unlimited stack plays as one no action of the file can reach: deeper than everything
    # put in by anyone (PokerKit's rules look at stacks only to cap bets and find all-ins).
    deep = max((s for s in given if s is not None), default=0) + sum(antes) + sum(blinds)
    deep += sum(a for _, _, a in moves if a is not None) + 1
    stacks = tuple(deep if s is None else s for s in given)
    try:
        spec = HandSpec(
            seats=n,
            button=n,
            small_blind=blinds[0],
            big_blind=blinds[1],
            cap=max(stacks),
            pot_limit=betting == "pot-limit",
            cards=PhhCards(hole, tuple(board)),
            stacks=stacks,
            antes=tuple(antes) if any(antes) else None,
            dead_antes=not data.get("ante_trimming_status", False),
            min_bet=min_bet,
            rules="pokerkit",
            odd_chips=odd_chips,
            free_fold=True,  # a cash game's fold with checking free (PokerKit warns, plays it)
        )
    except ValueError as exc:  # a card dealt twice
        raise Unreplayable(str(exc)) from None
    players = data.get("players")
    return PhhHand(
        spec=spec,
        moves=tuple(moves),
        finishing_stacks=_finishing(data),
        players=tuple(str(p) for p in players) if isinstance(players, list) else None,
        unbounded=frozenset(i for i, s in enumerate(given, 1) if s is None),
    )


def _blinds(data: Mapping[str, Any]) -> Any:
    if "blinds_or_straddles" not in data:
        raise Unreplayable("missing field 'blinds_or_straddles'")
    return data["blinds_or_straddles"]


def _finishing(data: Mapping[str, Any]) -> tuple[float, ...] | None:
    """The file's finishing stacks: numbers, ``inf`` for an unlimited stack."""
    if data.get("finishing_stacks") is None:
        return None
    out = []
    for x in _list(data, "finishing_stacks"):
        if isinstance(x, bool) or not isinstance(x, int | float) or math.isnan(x):
            raise Unreplayable(f"finishing stack {_show(x)} is not a number of chips")
        if math.isfinite(x) and abs(x) > MAX_SAFE_INT:
            raise Unreplayable(f"finishing stack {_show(x)} is out of range")
        out.append(float(x))
    return tuple(out)


Moves = list[tuple[int, str, int | None]]


def _actions(lines: list[Any], n: int) -> tuple[dict[int, tuple[str, str]], list[str], Moves]:
    """Hole cards, board and the players' moves of the ``actions`` lines."""
    hole: dict[int, tuple[str, str]] = {}
    board: list[str] = []
    moves: Moves = []
    for raw in lines:
        if not isinstance(raw, str):
            raise Unreplayable(f"action {_show(raw)} is not a string")
        line = raw.split("#", 1)[0].split()
        if not line:
            continue
        if line[0] == "d" and len(line) >= 3 and line[1] == "dh":
            cards = _split(line[3]) if len(line) > 3 else []
            if len(cards) != 2:
                raise Unreplayable(f"{_show(raw)}: hold'em deals two hole cards")
            if "??" not in cards:
                first, second = _cards(line[3], raw)
                hole[_player(line[2], n)] = (first, second)
        elif line[:2] == ["d", "db"] and len(line) == 3:
            if "??" in _split(line[2]):
                raise Unreplayable(f"{_show(raw)}: a board card is unknown")
            board.extend(_cards(line[2], raw))
            if len(board) > 5:
                raise Unreplayable(f"{len(board)} board cards")
        elif len(line) == 2 and line[1] in ("f", "cc"):
            moves.append((_player(line[0], n), line[1], None))
        elif len(line) == 3 and line[1] == "cbr":
            moves.append((_player(line[0], n), "cbr", _amount(line[2])))
        elif len(line) >= 2 and line[1] == "sm":
            seat = _player(line[0], n)
            shown = _split(line[2]) if len(line) > 2 and line[2] != "-" else []
            if len(shown) == 2 and "??" not in shown:
                first, second = _cards(line[2], raw)
                hole[seat] = (first, second)
        else:
            raise Unreplayable(f"action {_show(raw)} is not one of hold'em")
    return hole, board, moves


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
        who = f"p{hand.to_act} to act" if hand.to_act is not None else f"at the {hand.street}"
        raise Mismatch(f"the hand is not over after the last action ({who})")
    return hand


def finishing_stacks(hand: Hand, unbounded: Collection[int] = ()) -> list[float]:
    """Chips each seat ends with, seat 1 (p1) first; ``inf`` for an unlimited stack."""
    assert hand.result is not None
    return [
        math.inf if s in unbounded else hand.spec.starting_stack(s) + hand.result[s]
        for s in range(1, hand.spec.seats + 1)
    ]


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
    fields = _fields(spec, order, result, players, seats)
    fields.update(extra or {})
    fields, quoted = _placeholders(fields)
    text = str(HandHistory.from_game_state(game, state, **fields).dumps())
    for token, value in quoted.items():
        text = text.replace(f"'{token}'", value)
    return text + "\n"


# What PokerKit's writer cannot put in its TOML literal strings ('...', or '''...''' when the
# text holds an apostrophe): a control character, or three apostrophes in a row.
_UNQUOTABLE = re.compile("[\x00-\x1f\x7f]|'''")
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string: quotes, backslashes and control characters escaped."""
    return (
        '"'
        + "".join(
            _ESCAPES.get(c, f"\\u{ord(c):04x}" if c < " " or c == "\x7f" else c) for c in text
        )
        + '"'
    )


def _placeholders(fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``fields`` with each text PokerKit would write as broken TOML (a name holding ''' or a
    control character) swapped for a plain token, and each token's own TOML string."""
    quoted: dict[str, str] = {}

    def swap(value: Any) -> Any:
        if isinstance(value, list):
            return [swap(v) for v in value]
        if isinstance(value, str) and _UNQUOTABLE.search(value):
            token = f"duplicast-phh-text-{len(quoted)}"
            quoted[token] = _toml_string(value)
            return token
        return value

    return {k: swap(v) for k, v in fields.items()}, quoted


def _fields(
    spec: HandSpec,
    order: Sequence[int],
    result: Mapping[int, int],
    players: Sequence[str] | None,
    seats: Sequence[int] | None,
) -> dict[str, Any]:
    """The fields PokerKit's state does not give: ours, in PHH's player order (``order``)."""
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
    if spec.odd_chip_rule != "all-to-first":  # PokerKit's, what a PHH reader assumes
        fields[ODD_CHIPS_FIELD] = spec.odd_chip_rule
    return fields
