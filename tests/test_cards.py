import pytest

from hub.domain.cards import (
    FULL_DECK,
    format_card,
    format_cards,
    is_card,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)


def test_full_deck_has_52_distinct_canonical_cards():
    assert len(FULL_DECK) == 52
    assert len(set(FULL_DECK)) == 52
    assert all(is_card(card) for card in FULL_DECK)


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("Ah", "Ah"),
        ("ah", "Ah"),
        (" td ", "Td"),
        ("10h", "Th"),
        ("10H", "Th"),
        ("Q♠", "Qs"),
        ("2♡", "2h"),
        ("kC", "Kc"),
    ],
)
def test_parse_card_accepts_common_spellings(text, card):
    assert parse_card(text) == card


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "expected rank and suit"),
        ("A", "expected rank and suit"),
        ("1h", "rank '1'"),
        ("Ax", "suit 'x'"),
        ("Ahh", "expected rank and suit"),
        ("11h", "expected rank and suit"),
    ],
)
def test_parse_card_rejects_with_a_clear_message(text, reason):
    with pytest.raises(ValueError, match="not a card") as info:
        parse_card(text)
    assert reason in str(info.value)


def test_parse_cards_from_strings_and_lists():
    assert parse_cards("AhKd") == ("Ah", "Kd")
    assert parse_cards("Ah Kd, 10c") == ("Ah", "Kd", "Tc")
    assert parse_cards("10h10d") == ("Th", "Td")
    assert parse_cards(["ah", "10s"]) == ("Ah", "Ts")
    assert parse_cards("") == ()
    with pytest.raises(ValueError):
        parse_cards("AhK")


def test_rank_suit_and_pretty_format():
    assert rank_of("Td") == "T"
    assert suit_of("Td") == "d"
    assert format_card("Ah") == "A♥"
    assert format_card("Td") == "10♦"
    assert format_cards(["2c", "Ks"]) == "2♣ K♠"


def test_is_card_wants_canonical_form():
    assert is_card("Ah")
    assert not is_card("ah")
    assert not is_card("10h")
