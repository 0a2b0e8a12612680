import random
import tomllib
from pathlib import Path

import pytest

from hub.domain.config import ConfigError, DeckSource, load_config, parse_config
from hub.domain.draw import cyclic_draw, is_cyclic, validate_draw
from hub.domain.schedule import random_deal_orders

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "ifp6.toml"

SMALL = """
[tournament]
id = "t3"
name = "Three"
seats = 3
deals = 4
small_blind = 5
big_blind = 10

[[teams]]
id = "A"
name = "Alpha"
colour = "#112233"
players = ["a1", "a2", "a3"]

[[teams]]
id = "B"
name = "Beta"
code = "BET"
colour = "#445566"
players = ["b1", "b2", "b3"]

[[teams]]
id = "C"
name = "Gamma"
colour = "#778899"
players = ["c1", "c2", "c3"]

[[groups]]
id = "G"
tables = [1, 2, 3]
teams = ["A", "B", "C"]

[draw.tables]
"1" = ["A", "B", "C"]
"2" = ["B", "C", "A"]
"3" = ["C", "A", "B"]
"""


def write(tmp_path, text, name="t.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.file == str(path)
    return str(info.value).removeprefix(f"{path}: ")


def test_sample_loads_with_everything_the_guide_describes():
    config = load_config(SAMPLE)
    assert config.id == "ifp-demo"
    assert [t.code for t in config.teams.values()] == ["ARG", "BRA", "CHN", "DEN", "ECU", "FIN"]
    assert config.teams["BRA"].colour == "#009C3B"
    assert (config.seats, config.deals, config.small_blind, config.big_blind) == (6, 12, 50, 100)
    assert config.cap == 10_000
    assert config.pot_limit
    assert config.tables == (1, 2, 3, 4, 5, 6)
    assert config.decks == DeckSource(rehearsal_seed="ifp-demo")
    assert config.decks.rehearsal
    group = config.groups["A"]
    validate_draw(config.draw, group.teams, group.tables, 6)
    assert is_cyclic(config.draw, config.tables)
    # the guide's example hand: JJ in seat 3 against KK in seat 5
    pairs = [(config.draw[(t, 3)], config.draw[(t, 5)]) for t in config.tables]
    assert pairs == [
        ("CHN", "BRA"),
        ("FIN", "DEN"),
        ("BRA", "ECU"),
        ("DEN", "ARG"),
        ("ECU", "CHN"),
        ("ARG", "FIN"),
    ]
    for order in config.deal_orders.values():
        assert sorted(order) == list(range(1, 13))
    assert config.deal_orders == random_deal_orders(
        config.tables, 12, random.Random("duplicast-schedule:ifp-demo")
    )
    assert config.buttons[1] == 1 and config.buttons[7] == 1 and config.buttons[12] == 6


def test_helpers_find_seats_players_and_groups():
    config = load_config(SAMPLE)
    team, player = config.seat_holder(1, 3)
    assert (team.id, player) == ("CHN", "Wang Lei")  # China's first player: table 1
    team, player = config.seat_holder(4, 5)
    assert (team.id, player) == ("ARG", "C. Romero")
    assert config.group_of(6).id == "A"
    assert config.seat_of(2, "DEN") == 5
    assert config.player_at(3, "BRA") == "F. Oliveira"
    assert config.table_of_player("BRA", "F. Oliveira") == 3
    with pytest.raises(KeyError, match="unknown table 9"):
        config.group_of(9)


def test_small_config_defaults(tmp_path):
    config = load_config(write(tmp_path, SMALL))
    assert config.cap_bb == 100 and config.cap == 1000
    assert config.betting == "pot-limit" and config.release_delay == 0.0
    assert config.teams["A"].code == "A" and config.teams["B"].code == "BET"
    assert config.deal_orders == {1: (1, 2, 3, 4), 2: (1, 2, 3, 4), 3: (1, 2, 3, 4)}
    assert config.buttons == {1: 1, 2: 2, 3: 3, 4: 1}
    assert config.decks is None


def test_generated_draw_and_schedule_are_reproducible():
    text = SMALL.split("[draw.tables]")[0] + (
        '[draw]\nmethod = "cyclic"\nseed = 7\n'
        '[schedule]\nmethod = "random"\nseed = "s"\nbuttons = [3, 3, 2, 1]\n'
        '[decks]\nfile = "decks.enc"\n'
    )
    data = tomllib.loads(text)
    a = parse_config(data, "x.toml")
    b = parse_config(data, "x.toml")
    assert a.draw == b.draw
    assert a.draw == cyclic_draw(["A", "B", "C"], [1, 2, 3], 3, random.Random(7))
    assert a.deal_orders == random_deal_orders([1, 2, 3], 4, random.Random("s"))
    assert a.buttons == {1: 3, 2: 3, 3: 2, 4: 1}
    assert a.decks == DeckSource(file="decks.enc")


def replace(old, new, text=SMALL):
    assert old in text
    return text.replace(old, new, 1)


BAD = [
    (
        replace('colour = "#112233"', 'colour = "blue"'),
        "teams[0].colour: expected a colour like #75AADB, got 'blue'",
    ),
    (replace("seats = 3", 'seats = "3"'), "tournament.seats: expected an integer, got '3'"),
    (replace("seats = 3", "seats = true"), "tournament.seats: expected an integer, got True"),
    (replace("deals = 4\n", ""), "tournament.deals: missing"),
    (
        replace("deals = 4", "deals = 4\ndeal = 5"),
        "tournament.deal: unknown key (did you mean 'deals'?)",
    ),
    (replace("[[groups]]", "[extra]\nx = 1\n[[groups]]"), "extra: unknown key"),
    (
        replace('teams = ["A", "B", "C"]', 'teams = ["A", "B", "X"]'),
        "groups[0].teams[2]: team X is not defined in [[teams]]",
    ),
    (
        replace('players = ["a1", "a2", "a3"]', 'players = ["a1", "a2"]'),
        "teams[0].players: team A plays at 3 tables of group G: expected 3 players, got 2",
    ),
    (
        replace("tables = [1, 2, 3]", "tables = [1, 2, 3, 4]"),
        "groups[0].tables: a group needs as many tables as seats (3), got 4",
    ),
    (
        replace('teams = ["A", "B", "C"]', 'teams = ["A", "B"]'),
        "groups[0].teams: a group needs as many teams as seats (3), got 2",
    ),
    (
        replace('teams = ["A", "B", "C"]', 'teams = ["A", "B", "B"]'),
        "groups[0].teams[2]: team B is already in group G",
    ),
    (
        replace("small_blind = 5", "small_blind = 20"),
        "tournament.small_blind: 20 is more than the big blind 10",
    ),
    (
        replace("small_blind = 5", "small_blind = 0"),
        "tournament.small_blind: must be at least 1, got 0",
    ),
    (
        replace("big_blind = 10", "big_blind = 10\ncap_bb = 1"),
        "tournament.cap_bb: must be at least 2, got 1",
    ),
    (
        replace("big_blind = 10", 'big_blind = 10\nbetting = "limit"'),
        "tournament.betting: expected 'pot-limit' or 'no-limit', got 'limit'",
    ),
    (
        replace("big_blind = 10", "big_blind = 10\nrelease_delay = -1"),
        "tournament.release_delay: expected seconds >= 0, got -1",
    ),
    (
        replace('id = "t3"', 'id = "t:3"'),
        "tournament.id: expected letters, digits, '-', '_' or '.', got 't:3'",
    ),
    (
        replace('"2" = ["B", "C", "A"]', '"2" = ["B", "A", "C"]'),
        "draw.tables: group G: team A twice in seat 2",
    ),
    (
        replace('"2" = ["B", "C", "A"]', '"2" = ["B", "B", "A"]'),
        "draw.tables: group G: team B twice at table 2",
    ),
    (
        replace('"2" = ["B", "C", "A"]', '"2" = ["B", "C"]'),
        "draw.tables.2: expected a team for each of the 3 seats, got 2",
    ),
    (
        replace('"3" = ["C", "A", "B"]', '"7" = ["C", "A", "B"]'),
        "draw.tables.7: table 7 is not in any group",
    ),
    (replace('"3" = ["C", "A", "B"]\n', ""), "draw.tables: group G: seat 1 of table 3 empty"),
    (
        replace('"1" = ["A", "B", "C"]', '"1" = ["A", "B", "Q"]'),
        "draw.tables: group G: unknown team Q at table 1 seat 3",
    ),
    (
        SMALL.split("[draw.tables]")[0] + '[draw]\nmethod = "cyclic"\n',
        "draw.seed: missing (a generated draw must be the same at every read)",
    ),
    (
        SMALL.split("[draw.tables]")[0] + '[draw]\nmethod = "swiss"\nseed = 1\n',
        "draw.method: expected 'random' or 'cyclic', got 'swiss'",
    ),
    (
        SMALL + '[schedule.tables]\n"1" = [1, 2, 3, 4]\n"2" = [4, 3, 2, 1]\n"3" = [1, 2, 2, 4]\n',
        "schedule.tables: table 3: deal 2 twice",
    ),
    (
        SMALL + '[schedule.tables]\n"1" = [1, 2, 3, 4]\n"2" = [4, 3, 2, 1]\n',
        "schedule.tables: table 3 has no deal order",
    ),
    (
        SMALL + '[schedule]\nmethod = "random"\n',
        "schedule.seed: missing (random orders must be the same at every read)",
    ),
    (
        SMALL + "[schedule]\nbuttons = [1, 2, 3, 4, 1]\n",
        "schedule.buttons: expected one button per deal (4), got 5",
    ),
    (
        SMALL + "[schedule]\nbuttons = [1, 2, 4, 1]\n",
        "schedule.buttons: deal 3: button 4 is not a seat of 1..3",
    ),
    (
        SMALL + '[decks]\nfile = "d.enc"\nrehearsal_seed = "x"\n',
        "decks: expected exactly one of file or rehearsal_seed",
    ),
    (SMALL + "[decks]\n", "decks: expected exactly one of file or rehearsal_seed"),
    (
        replace(
            '[[teams]]\nid = "C"',
            '[[teams]]\nid = "D"\nname = "D"\ncolour = "#000000"\n'
            'players = ["d", "d", "d"]\n\n[[teams]]\nid = "C"',
        ),
        "teams[2]: team D is in no group",
    ),
    (replace('id = "B"', 'id = "A"'), "teams[1].id: team A defined twice"),
    ("[tournament\n", None),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_files_name_file_key_and_problem(tmp_path, text, expected):
    message = error_of(tmp_path, text)
    if expected is None:
        assert message.startswith("-: not valid TOML")
    else:
        assert message == expected


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_config(tmp_path / "nope.toml")


def test_parse_config_is_pure_and_names_its_source():
    with pytest.raises(ConfigError) as info:
        parse_config({"tournament": {}}, "memory")
    assert str(info.value) == "memory: teams: missing"
    assert isinstance(info.value, ValueError)
