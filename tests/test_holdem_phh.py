"""Replay the real Pluribus hands (PHH) through ``Hand`` and compare every chip-score.

The files' ``finishing_stacks`` were written by the PokerKit authors, not by us: a ground truth.
Seats map so that ``p1`` (the small blind) is seat 1 and the button is the last seat. These
tests play the hands by the tournament's rules; ``tests/test_phh.py`` checks the same folder
through ``duplicast phh-check`` (PokerKit's conventions).
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

import pytest

from hub.domain.games.holdem.hand import Hand
from hub.domain.phh import read_phh, replay

PHH_DIR = Path(__file__).resolve().parent / "data" / "phh" / "pluribus"  # see its README


def replay_phh(data: dict[str, Any]) -> tuple[Hand, list[int]]:
    """Play one PHH hand by the tournament's own (standard) rules through ``hub.domain.phh``'s
    reader; returns the hand (settled) and the expected chip-scores per seat."""
    phh = read_phh(data)
    assert phh.spec.antes is None and not phh.spec.pot_limit
    hand = replay(dataclasses.replace(phh, spec=dataclasses.replace(phh.spec, rules="standard")))
    n = phh.spec.seats
    expected = [data["finishing_stacks"][i] - data["starting_stacks"][i] for i in range(n)]
    return hand, expected


def _files() -> list[Path]:
    return sorted(PHH_DIR.glob("*/*.phh"))


def test_all_pluribus_hands_match_their_finishing_stacks() -> None:
    files = _files()
    assert len(files) >= 480  # 488 hands in the shared copy
    failures = []
    fractional = []
    for path in files:
        data = tomllib.loads(path.read_text())
        hand, expected = replay_phh(data)
        assert hand.result is not None, path
        got = [hand.result[s] for s in range(1, len(expected) + 1)]
        if any(x != int(x) for x in expected):
            # The file splits an odd pot into half chips; we keep whole chips and give the odd
            # one to the first winner left of the button.
            fractional.append(path.name)
            assert all(abs(g - x) <= 0.5 for g, x in zip(got, expected, strict=True)), path
            assert sum(got) == 0
        elif got != expected:
            failures.append((path.parent.name + "/" + path.name, got, expected))
    assert failures == [], f"{len(failures)} of {len(files)} hands differ: {failures[:5]}"
    assert fractional == ["23.phh"]


def test_an_odd_chip_goes_to_the_first_winner_left_of_the_button() -> None:
    # pluribus 32/23: seats 3 and 6 split 775 more than they put in; the file writes 387.5 each.
    hand, _ = replay_phh(tomllib.loads((PHH_DIR / "32" / "23.phh").read_text()))
    assert hand.result == {1: -50, 2: -725, 3: 388, 4: 0, 5: 0, 6: 387}


@pytest.mark.parametrize("name", ["30/0.phh"])
def test_a_fold_out_hand_pays_the_raiser_the_blinds(name: str) -> None:
    hand, expected = replay_phh(tomllib.loads((PHH_DIR / name).read_text()))
    assert hand.street == "complete"
    assert (
        hand.result
        == {1: -50, 2: -100, 3: 0, 4: 0, 5: 150, 6: 0}
        == dict(enumerate(expected, start=1))
    )
