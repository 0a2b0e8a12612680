"""`duplicast decks verify` (issue #9): after play, the published SHA-256 commitment checked
against the revealed deck orders, from the encrypted deck file with its key or a plain export."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hub.domain.deck import commitment, deck_order_from_cards, seeded_deck_orders
from hub.files.decks import KEY_ENV, export_plain, generate_key, parse_plain, write_deck_file

ROOT = Path(__file__).resolve().parent.parent
Revealed = tuple[dict[int, Any], Path, Path, dict[str, str]]


def verify(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hub", "decks", "verify", *args],
        cwd=ROOT,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def revealed(tmp_path: Path) -> Revealed:
    orders = seeded_deck_orders("verify-test", 6)
    key = generate_key()
    deck_file = tmp_path / "decks.enc"
    write_deck_file(deck_file, orders, key)
    plain = tmp_path / "decks.txt"
    plain.write_text(export_plain(orders))
    return dict(orders), deck_file, plain, {KEY_ENV: key}


def test_matches_from_the_deck_file_and_from_a_plain_export(revealed: Revealed) -> None:
    orders, deck_file, plain, env = revealed
    published = f"sha256:{commitment(orders)}"
    result = verify("--commitment", published, "--deck-file", str(deck_file), env=env)
    assert result.returncode == 0, result.stderr
    assert "commitment matches" in result.stdout
    bare = published.upper().replace("SHA256:", "")  # the hex alone, any case
    result = verify("--commitment", bare, "--plain", str(plain))
    assert result.returncode == 0 and "commitment matches" in result.stdout


def test_a_swapped_card_is_a_mismatch(revealed: Revealed, tmp_path: Path) -> None:
    orders, _, _, _ = revealed
    published = f"sha256:{commitment(orders)}"
    cards = list(orders[3].cards)
    cards[0], cards[1] = cards[1], cards[0]
    altered = dict(orders) | {3: deck_order_from_cards(cards)}
    plain = tmp_path / "altered.txt"
    plain.write_text(export_plain(altered))
    result = verify("--commitment", published, "--plain", str(plain))
    assert result.returncode == 1
    assert "does NOT match" in result.stderr and commitment(altered) in result.stderr


def test_extra_revealed_deals_are_named(revealed: Revealed) -> None:
    orders, _, plain, _ = revealed
    published = commitment({deal: orders[deal] for deal in (1, 2, 3, 4)})
    result = verify("--commitment", published, "--plain", str(plain))
    assert result.returncode == 1
    assert "matches deals 1-4 only; deals 5-6 were not committed" in result.stderr


def test_missing_deals_and_bad_input(revealed: Revealed) -> None:
    orders, deck_file, plain, _ = revealed
    published = commitment(orders)
    result = verify("--commitment", published, "--plain", str(plain), "--deals", "8")
    assert result.returncode == 1 and "expected deals 1..8" in result.stderr
    assert verify("--commitment", "sha256:abc", "--plain", str(plain)).returncode == 2
    assert verify("--commitment", published).returncode == 2
    wrong = {KEY_ENV: generate_key()}
    result = verify("--commitment", published, "--deck-file", str(deck_file), env=wrong)
    assert result.returncode == 1 and "cannot decrypt" in result.stderr


def test_parse_plain_reads_what_export_plain_writes() -> None:
    orders = seeded_deck_orders("round-trip", 3)
    parsed = parse_plain("# revealed after play\n\n" + export_plain(orders))
    assert {d: o.cards for d, o in parsed.items()} == {d: o.cards for d, o in orders.items()}
