"""The sentences an official reads at the table or on the operator desk, word for word: each
one must be true of the hand it refuses (no Python ``None``, no seat named for the wrong
reason), and the rule it cites must be the one docs/rules.md states."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from hub.domain.config import ConfigError, parse_config
from hub.domain.errors import Rejection
from hub.engine.core import Engine
from tests.factories import make_config
from tests.test_corrections import Console
from tests.test_event import SMALL, event, run_small
from tests.test_rps import _to_showdown, four

ROOT = Path(__file__).resolve().parent.parent


def refusal(hand: object, winners: list[int]) -> str:
    with pytest.raises(Rejection) as info:
        hand.settle(winners)  # type: ignore[attr-defined]
    assert info.value.code == "bad_winner"
    return info.value.message


def test_rps_wrong_winner_names_who_wins_and_which_declared_seats_are_wrong() -> None:
    hand = four(sequence="R" * 9)  # the dealer throws rock nine times: paper (seat 1) wins
    _to_showdown(hand, {1: "P" * 9, 2: "S" * 9, 3: "R" * 9})
    assert refusal(hand, [2]) == (
        "by the throws the pots go to seat 1: seat 2 declared but wins nothing; "
        "seat 1 wins but was not declared"
    )
    assert refusal(hand, [1, 2]) == (
        "by the throws the pots go to seat 1: seat 2 declared but wins nothing"
    )
    assert refusal(hand, [2, 3]) == (
        "by the throws the pots go to seat 1: seats 2, 3 declared but win nothing; "
        "seat 1 wins but was not declared"
    )


def test_a_start_after_the_tables_last_deal_names_no_none() -> None:
    engine, events = run_small()
    seq = 1 + max(e["seq"] for e in events if e["table"] == 1)
    final_deal = engine.state.config.deal_orders[7][0]  # a deal of the final stage, not table 1's
    out = engine.submit(event(engine.state.config, 1, seq, "start", deal=final_deal), 1e9)
    assert not out.ok and out.code == "wrong_deal"
    assert out.message == f"deal {final_deal} is not one of table 1's deals"


def test_a_console_void_after_a_heads_up_fold_says_the_hand_is_finished() -> None:
    """One fold ends a heads-up hand: the console's void is refused because the hand is over,
    not because "two players have acted" (only one has)."""
    engine = Engine(make_config(seats=2, deals=2, schedule_seed=None), None)
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.ok("fold", seat=c.hand.hand.to_act)
    assert c.refused("void", "not_allowed", deal=1) == (
        "deal 1 at table 1 is finished: a console voids only the hand in progress "
        "(only the operator can void it, with a reason)"
    )


def test_a_void_after_two_actions_cites_the_rule() -> None:
    engine = Engine(make_config(seats=3, deals=2, schedule_seed=None), None)
    c = Console(engine, 1)
    c.ok("start", deal=1)
    c.ok("fold", seat=c.hand.hand.to_act)
    c.ok("void")  # a single fold: still a misdeal
    c.ok("start", deal=2)
    c.ok("fold", seat=c.hand.hand.to_act)
    c.ok("call", seat=c.hand.hand.to_act)
    assert c.refused("void", "not_allowed") == (
        "deal 2 at table 1 has 2 actions after the blinds: too late for a misdeal once two "
        "players have acted, the hand is played out (only the operator can void it, with a "
        "reason)"
    )


@pytest.mark.parametrize("fmt", ["imp", "chips"])
def test_imp_and_chips_with_stages_are_refused_at_load_as_the_rules_say(fmt: str) -> None:
    text = SMALL + f'\n[scoring]\nformat = "{fmt}"\n'
    with pytest.raises(ConfigError) as info:
        parse_config(tomllib.loads(text), "small.toml", text)
    assert info.value.key == "scoring.format"
    assert info.value.problem == (
        f"'{fmt}' scoring with [[stages]]/[[sessions]] is not supported yet: "
        "an event of several sessions or stages is scored in IFP points"
    )
    rules = " ".join((ROOT / "docs" / "rules.md").read_text().split())
    assert (
        "`imp` and `chips` score a **single session** only. A tournament file with "
        '`[[sessions]]` or `[[stages]]` (see below) and `format = "imp"` or `"chips"` is '
        "refused when it is loaded"
    ) in rules
