import base64
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from hub.domain.config import DeckSource
from hub.domain.deck import random_deck_orders, seeded_deck_orders
from hub.files.config import load_config
from hub.files.decks import (
    KEY_ENV,
    DeckFileError,
    decrypt_orders,
    encrypt_orders,
    export_plain,
    generate_key,
    load_decks,
    parse_key,
    parse_plain,
    read_deck_file,
    write_deck_file,
)

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "ifp6.toml"


@pytest.fixture
def orders():
    return random_deck_orders(12)


def test_generated_key_is_urlsafe_base64_of_32_bytes():
    key = generate_key()
    assert len(base64.urlsafe_b64decode(key)) == 32
    assert parse_key(key) == base64.urlsafe_b64decode(key)
    assert generate_key() != key


@pytest.mark.parametrize(
    "bad", ["", "short", base64.urlsafe_b64encode(b"x" * 16).decode(), "é" * 44]
)
def test_bad_key_is_refused_with_a_hint(bad):
    with pytest.raises(DeckFileError, match=r"not a deck key.*--new-key"):
        parse_key(bad)


def test_round_trip(tmp_path, orders):
    key = generate_key()
    path = tmp_path / "decks.enc"
    write_deck_file(path, orders, key)
    assert read_deck_file(path, key) == orders
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_rehearsal_flag_survives(tmp_path):
    key = generate_key()
    rehearsal = seeded_deck_orders("r", 2)
    write_deck_file(tmp_path / "d", rehearsal, key)
    assert all(o.rehearsal for o in read_deck_file(tmp_path / "d", key).values())


def test_file_holds_no_card_in_plain_text(tmp_path, orders):
    path = tmp_path / "decks.enc"
    write_deck_file(path, orders, generate_key())
    data = path.read_bytes()
    for order in orders.values():
        for i in range(50):
            run = order.cards[i : i + 3]
            assert "".join(run).encode() not in data
            assert " ".join(run).encode() not in data
    assert b"cards" not in data and b"deals" not in data


def test_wrong_key_is_refused(tmp_path, orders):
    path = tmp_path / "decks.enc"
    write_deck_file(path, orders, generate_key())
    with pytest.raises(DeckFileError, match=r"decks\.enc: cannot decrypt: wrong deck key"):
        read_deck_file(path, generate_key())


def test_any_flipped_byte_is_refused(orders):
    key = generate_key()
    data = encrypt_orders(orders, key)
    for position in (0, 8, 20, len(data) // 2, len(data) - 1):
        tampered = bytearray(data)
        tampered[position] ^= 0x01
        with pytest.raises(DeckFileError):
            decrypt_orders(bytes(tampered), key)
    with pytest.raises(DeckFileError, match="not a Duplicast deck file"):
        decrypt_orders(data[:20], key)


def test_same_orders_encrypt_differently_each_time(orders):
    key = generate_key()
    assert encrypt_orders(orders, key) != encrypt_orders(orders, key)


def test_export_plain_for_the_dealing_machine():
    orders = seeded_deck_orders("m", 2)
    lines = export_plain({2: orders[2], 1: orders[1]}).splitlines()
    assert lines[0] == "1\t" + " ".join(orders[1].cards)
    assert lines[1].startswith("2\t")
    assert len(lines[1].split("\t")[1].split(" ")) == 52


def test_load_decks_from_rehearsal_seed():
    config = load_config(SAMPLE)
    decks = load_decks(config, SAMPLE.parent, {})
    assert decks == seeded_deck_orders("ifp-demo", 12)


def test_load_decks_none_without_a_source():
    config = replace(load_config(SAMPLE), decks=None)
    assert load_decks(config, SAMPLE.parent, {}) is None


def test_load_decks_from_file_relative_to_the_config(tmp_path, orders):
    config = replace(load_config(SAMPLE), decks=DeckSource(file="decks.enc"))
    key = generate_key()
    write_deck_file(tmp_path / "decks.enc", orders, key)
    assert load_decks(config, tmp_path, {KEY_ENV: key}) == orders
    with pytest.raises(DeckFileError, match="needs its key; create a key file"):
        load_decks(config, tmp_path, {})
    with pytest.raises(DeckFileError, match="wrong deck key"):
        load_decks(config, tmp_path, {KEY_ENV: generate_key()})


def test_load_decks_refuses_a_file_with_too_few_deals(tmp_path):
    config = replace(load_config(SAMPLE), decks=DeckSource(file="decks.enc"))
    key = generate_key()
    write_deck_file(tmp_path / "decks.enc", random_deck_orders(5), key)
    with pytest.raises(DeckFileError, match="no deck order for deal 6"):
        load_decks(config, tmp_path, {KEY_ENV: key})


def test_missing_file_is_a_deck_file_error(tmp_path):
    with pytest.raises(DeckFileError, match="cannot read the deck file"):
        read_deck_file(tmp_path / "nope", generate_key())


def test_a_bad_line_of_a_plain_export_names_what_a_line_may_hold():
    """The dealing machine's file: a line that is no order says which orders the hub reads,
    every game's (the registry's piece sets and a game's own kind), not a list of its own."""
    with pytest.raises(DeckFileError) as refused:
        parse_plain("1\tAh Kd\n", source="machine.txt")
    said = str(refused.value)
    assert said.startswith("machine.txt:1: not '<deal> <52 cards, "), said
    for kind in ("48 piecepack tiles", " or a wall of 136 tiles>'"):  # (a test's game may be
        assert kind in said, said  # registered too: it is named beside them)
