"""The table console's rules module (overlays/js/rules.js, issue #30 item 5) against the hub's
`Hand` (hub/domain/games/holdem/hand.py): on random hands driven by hypothesis, after every
action, node's copy offers the same legal actions, with the same call and the same bet or raise
bounds, the same pad entries legal now (`pokerPad` against `PokerGame.pad_now`), names the
same seat to act on the same street with the same pot and chips in; and it refuses what the
hub refuses with the same code. The page works out a whole hand offline with it, so any
difference would be an entry the hub refuses once the link is back."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.domain.errors import Rejection
from hub.domain.games.holdem.game import PokerGame
from hub.domain.games.holdem.hand import Hand
from hub.domain.games.spec import HandSpec
from hub.domain.pieces import CARDS

WORKER = Path(__file__).resolve().parent / "js" / "rules_worker.mjs"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


class Node:
    """One node process answering a line per hand (started once: thousands of states)."""

    def __init__(self) -> None:
        assert NODE is not None
        self.proc = subprocess.Popen(
            [NODE, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.states = 0

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert "error" not in answer, answer.get("error")
        self.states += len(answer["states"])
        return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def node() -> Iterator[Node]:
    worker = Node()
    yield worker
    worker.close()
    print(f"rules.js compared with Hand on {worker.states} states")
    assert worker.states >= 2000, f"only {worker.states} states compared"


HOLDEM = PokerGame("holdem", CARDS)


def legal_of(hand: Hand) -> dict[str, Any]:
    """`Hand.legal` in console:{t}'s shape (hub/engine/console_view.py `legal_block`)."""
    seat = hand.to_act
    if seat is None:
        return {"fold": False, "check": False, "call": None, "bet": None, "raise": None}
    legal = hand.legal(seat)
    span = None
    if legal.min_to is not None and legal.max_to is not None:
        span = {"min": legal.min_to, "max": legal.max_to}
    opened = hand.high_bet > 0
    return {
        "fold": legal.fold,
        "check": legal.check,
        "call": legal.call,
        "bet": None if opened else span,
        "raise": span if opened else None,
    }


def seen(hand: Hand) -> dict[str, Any]:
    return {
        "to_act": hand.to_act,
        "street": hand.street,
        "pot": hand.pot,
        "committed": [hand.committed[s] for s in sorted(hand.committed)],
        "legal": legal_of(hand),
        "pad": HOLDEM.pad_now(hand),  # the pad's entries legal now (console:{t}'s `pad`)
    }


def choices(hand: Hand) -> list[tuple[str, int | None]]:
    legal = legal_of(hand)
    out: list[tuple[str, int | None]] = []
    if legal["fold"]:
        out.append(("fold", None))
    if legal["check"]:
        out.append(("check", None))
    if legal["call"] is not None:
        out.append(("call", None))
    for kind in ("bet", "raise"):
        if legal[kind] is not None:
            out.append((kind, -1))  # an amount drawn in the range
    return out


def probes(hand: Hand) -> list[list[Any]]:
    """Entries around the edges of what is legal now (each either accepted or refused)."""
    seat = hand.to_act or 1
    legal = legal_of(hand)
    out: list[list[Any]] = [[seat % hand.spec.seats + 1, "check", None], [seat, "fold", None]]
    out += [[seat, "check", None], [seat, "call", (legal["call"] or 0) + 1]]
    for kind in ("bet", "raise"):
        span = legal[kind] or {"min": 100, "max": 100}
        out += [[seat, kind, span["min"] - 1], [seat, kind, span["max"] + 1], [seat, kind, 0]]
    return out


def hub_code(hand: Hand, seat: int, kind: str, amount: int | None) -> str | None:
    try:
        hand.verify(seat, kind, amount)
    except Rejection as exc:
        return exc.code
    return None


SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    seats=st.integers(2, 9),
    data=st.data(),
    blinds=st.sampled_from([(50, 100), (25, 50), (100, 200), (1, 2)]),
    cap=st.sampled_from([300, 1_000, 2_550, 10_000, 20_000]),
    pot_limit=st.booleans(),
)
def test_the_page_rules_match_the_hubs_after_every_action(
    node: Node,
    seats: int,
    data: st.DataObject,
    blinds: tuple[int, int],
    cap: int,
    pot_limit: bool,
) -> None:
    button = data.draw(st.integers(1, seats))
    small, big = blinds
    spec = HandSpec(
        seats=seats, button=button, small_blind=small, big_blind=big, cap=cap, pot_limit=pot_limit
    )
    hand = Hand(spec)
    expected = [seen(hand)]
    actions: list[list[Any]] = []
    while hand.to_act is not None and len(actions) < 60:
        kind, amount = data.draw(st.sampled_from(choices(hand)))
        if amount == -1:
            span = legal_of(hand)[kind]
            amount = data.draw(
                st.one_of(
                    st.sampled_from([span["min"], span["max"]]),
                    st.integers(span["min"], span["max"]),
                )
            )
        seat = hand.to_act
        hand.act(seat, kind, amount)
        actions.append([seat, kind, amount])
        expected.append(seen(hand))
    asked = probes(hand) if hand.to_act is not None else []
    js_spec = {
        "seats": seats,
        "button": button,
        "small_blind": small,
        "big_blind": big,
        "cap": cap,
        "pot_limit": pot_limit,
    }
    answer = node.ask({"spec": js_spec, "actions": actions, "probes": asked})
    for i, (ours, theirs) in enumerate(zip(expected, answer["states"], strict=True)):
        assert theirs == ours, (i, actions[:i])
    assert answer["refused"] == [hub_code(hand, *p) for p in asked], asked
