import functools
import json
import random
import tomllib
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import hub.domain.schedule as schedule_module
from hub.domain.config import ConfigError, DeckSource, KeyLines, key_path, parse_config
from hub.domain.draw import cyclic_draw, is_cyclic, validate_draw
from hub.domain.imp import WBF
from hub.domain.schedule import block_deal_orders, deal_clashes, random_deal_orders
from hub.domain.scoring import ScoringFormat
from hub.engine.core import Engine
from hub.files.config import load_config
from tests import config_corpus
from tests.factories import config_data, make_decks

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
    return str(info.value).removeprefix(f"{path}:")


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
    # as `duplicast decks --seed ifp-demo --orders-out` writes it: release-aware blocks
    assert config.deal_orders == block_deal_orders(
        [config.tables], [range(1, 13)], random.Random("duplicast-schedule:ifp-demo")
    )
    assert deal_clashes(config.deal_orders, [config.tables]) == [] and not config.warnings
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


def test_a_written_schedule_with_two_tables_on_one_deal_in_a_round_loads_with_a_warning(
    tmp_path, capsys
):
    clashing = '[schedule.tables]\n"1" = [1, 2, 3, 4]\n"2" = [2, 1, 3, 4]\n"3" = [3, 4, 1, 2]\n'
    path = write(tmp_path, SMALL + clashing)
    config = load_config(path)
    assert config.deal_orders[2] == (2, 1, 3, 4)  # loads as written
    same_time = "the same cards at the same time, noise from one table tells the others"
    assert config.warnings == (
        f"{path}:38: schedule.tables: tables 1 and 2 both play deal 3 in round 3: {same_time}",
        f"{path}:38: schedule.tables: tables 1 and 2 both play deal 4 in round 4: {same_time}",
        f"{path}:38: schedule.tables: `duplicast decks --orders-out` writes orders without "
        "any (docs/rules.md)",
    )
    assert capsys.readouterr().err.splitlines() == [f"warning: {w}" for w in config.warnings]
    latin = '[schedule.tables]\n"1" = [1, 2, 3, 4]\n"2" = [2, 3, 1, 4]\n"3" = [3, 1, 2, 4]\n'
    assert load_config(write(tmp_path, SMALL + latin)).warnings == (
        f"{path}:38: schedule.tables: tables 1, 2 and 3 all play deal 4 in round 4: {same_time}",
        f"{path}:38: schedule.tables: `duplicast decks --orders-out` writes orders without "
        "any (docs/rules.md)",
    )
    capsys.readouterr()
    blocks = '[schedule.tables]\n"1" = [1, 2, 3, 4]\n"2" = [2, 3, 4, 1]\n"3" = [3, 4, 1, 2]\n'
    assert load_config(write(tmp_path, SMALL + blocks)).warnings == ()
    assert capsys.readouterr().err == ""


def test_generated_schedules_with_clashes_load_with_one_warning(tmp_path, capsys):
    """The default schedule (no [schedule], or `method = "sequential"`) puts every table of a
    group on deal r in round r, independent random orders most often somewhere: one warning
    says so (issue #23.1); `method = "blocks"` has none."""
    same_time = "the same cards at the same time, noise from one table tells the others"
    hint = (
        '[schedule] method = "blocks" (with a seed) or `duplicast decks --orders-out` plays '
        "the deals in blocks without any (docs/rules.md)"
    )
    path = write(tmp_path, SMALL)
    config = load_config(path)
    assert config.deal_orders[3] == (1, 2, 3, 4)  # loads, in order
    assert config.warnings == (
        f"{path}: schedule: the sequential schedule: tables 1, 2 and 3 all play deal 1 in "
        f"round 1 (and 3 more such clashes): {same_time}; {hint}",
    )
    assert capsys.readouterr().err.splitlines() == [f"warning: {config.warnings[0]}"]
    written = SMALL + '[schedule]\nmethod = "sequential"\n'
    warnings = parse_config(tomllib.loads(written), "f", written).warnings
    line = written.splitlines().index('method = "sequential"') + 1
    assert warnings == (
        f"f:{line}: schedule.method: the sequential schedule: tables 1, 2 and 3 all play deal 1 "
        f"in round 1 (and 3 more such clashes): {same_time}; {hint}",
    )
    seeded = SMALL + '[schedule]\nmethod = "random"\nseed = 5\n'
    config = parse_config(tomllib.loads(seeded), "f")
    clashes = deal_clashes(config.deal_orders, [[1, 2, 3]])
    assert clashes  # seed 5: two tables meet
    first = f"tables {' and '.join(map(str, clashes[0][2]))}"
    assert config.warnings == (
        f"f: schedule.method: the random schedule: {first} both play deal {clashes[0][1]} in "
        f"round {clashes[0][0]}"
        + (f" (and {len(clashes) - 1} more such clashes)" if len(clashes) > 1 else "")
        + f": {same_time}; {hint}",
    )
    blocks = SMALL + '[schedule]\nmethod = "blocks"\nseed = 4\n'
    assert parse_config(tomllib.loads(blocks), "f").warnings == ()


def test_many_clashes_are_named_up_to_five(tmp_path):
    rows = "".join(f'"{t}" = [1, 2, 3, 4]\n' for t in (1, 2, 3))
    warnings = parse_config(tomllib.loads(SMALL + "[schedule.tables]\n" + rows), "f").warnings
    assert len(warnings) == 4 + 1  # one a round (all three tables), the hint
    assert warnings[0] == (
        "f: schedule.tables: tables 1, 2 and 3 all play deal 1 in round 1: the same cards at "
        "the same time, noise from one table tells the others"
    )
    more = (
        SMALL.replace("deals = 4", "deals = 7")
        + "[schedule.tables]\n"
        + rows.replace("4]", "4, 5, 6, 7]")
    )
    warnings = parse_config(tomllib.loads(more), "f").warnings
    assert warnings[5] == "f: schedule.tables: ... and 2 more such clashes" and len(warnings) == 7


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
    # `method = "blocks"` makes release-aware blocks, as `decks --orders-out` does (#23.1)
    blocks = parse_config(tomllib.loads(text.replace('"random"', '"blocks"')), "x.toml")
    assert blocks.deal_orders == block_deal_orders([[1, 2, 3]], [range(1, 5)], random.Random("s"))
    assert deal_clashes(blocks.deal_orders, [[1, 2, 3]]) == [] and not blocks.warnings
    assert a.buttons == {1: 3, 2: 3, 3: 2, 4: 1}
    assert a.decks == DeckSource(file="decks.enc")


def replace(old, new, text=SMALL):
    assert old in text
    return text.replace(old, new, 1)


BAD = [
    (
        replace('colour = "#112233"', 'colour = "blue"'),
        "13: teams[0].colour: expected a colour like #75AADB, got 'blue'",
    ),
    (replace("seats = 3", 'seats = "3"'), "5: tournament.seats: expected an integer, got '3'"),
    (replace("seats = 3", "seats = true"), "5: tournament.seats: expected an integer, got True"),
    (replace("deals = 4\n", ""), "2: tournament.deals: missing"),
    (
        replace("deals = 4", "deals = 4\ndeal = 5"),
        "7: tournament.deal: unknown key (did you mean 'deals'?)",
    ),
    (replace("[[groups]]", "[extra]\nx = 1\n[[groups]]"), "29: extra: unknown key"),
    (
        replace('teams = ["A", "B", "C"]', 'teams = ["A", "B", "X"]'),
        "32: groups[0].teams[2]: team X is not defined in [[teams]]",
    ),
    (
        replace('players = ["a1", "a2", "a3"]', 'players = ["a1", "a2"]'),
        "14: teams[0].players: team A plays at 3 tables of group G: expected 3 players, got 2",
    ),
    (
        replace("tables = [1, 2, 3]", "tables = [1, 2, 3, 4]"),
        "31: groups[0].tables: a group needs as many tables as seats (3), got 4",
    ),
    (
        replace('teams = ["A", "B", "C"]', 'teams = ["A", "B"]'),
        "32: groups[0].teams: a group needs as many teams as seats (3), got 2",
    ),
    (
        replace('teams = ["A", "B", "C"]', 'teams = ["A", "B", "B"]'),
        "32: groups[0].teams[2]: team B is already in group G",
    ),
    (
        replace("small_blind = 5", "small_blind = 20"),
        "7: tournament.small_blind: 20 is more than the big blind 10",
    ),
    (
        replace("small_blind = 5", "small_blind = 0"),
        "7: tournament.small_blind: must be at least 1, got 0",
    ),
    (
        replace("big_blind = 10", "big_blind = 10\ncap_bb = 1"),
        "9: tournament.cap_bb: must be at least 2, got 1",
    ),
    (
        replace("big_blind = 10", 'big_blind = 10\nbetting = "limit"'),
        "9: tournament.betting: expected 'pot-limit' or 'no-limit', got 'limit'",
    ),
    (
        replace("big_blind = 10", "big_blind = 10\nrelease_delay = -1"),
        "9: tournament.release_delay: expected seconds >= 0, got -1",
    ),
    (
        replace('id = "t3"', 'id = "t:3"'),
        "3: tournament.id: expected letters, digits, '-', '_' or '.', got 't:3'",
    ),
    (
        replace('"2" = ["B", "C", "A"]', '"2" = ["B", "A", "C"]'),
        "34: draw.tables: group G: team A twice in seat 2",
    ),
    (
        replace('"2" = ["B", "C", "A"]', '"2" = ["B", "B", "A"]'),
        "34: draw.tables: group G: team B twice at table 2",
    ),
    (
        replace('"2" = ["B", "C", "A"]', '"2" = ["B", "C"]'),
        "36: draw.tables.2: expected a team for each of the 3 seats, got 2",
    ),
    (
        replace('"3" = ["C", "A", "B"]', '"7" = ["C", "A", "B"]'),
        "37: draw.tables.7: table 7 is not in any group",
    ),
    (replace('"3" = ["C", "A", "B"]\n', ""), "34: draw.tables: group G: seat 1 of table 3 empty"),
    (
        replace('"1" = ["A", "B", "C"]', '"1" = ["A", "B", "Q"]'),
        "34: draw.tables: group G: unknown team Q at table 1 seat 3",
    ),
    (
        SMALL.split("[draw.tables]")[0] + '[draw]\nmethod = "cyclic"\n',
        "34: draw.seed: missing (a generated draw must be the same at every read)",
    ),
    (
        SMALL.split("[draw.tables]")[0] + '[draw]\nmethod = "swiss"\nseed = 1\n',
        "35: draw.method: expected 'random' or 'cyclic', got 'swiss'",
    ),
    (
        SMALL + '[schedule.tables]\n"1" = [1, 2, 3, 4]\n"2" = [4, 3, 2, 1]\n"3" = [1, 2, 2, 4]\n',
        "38: schedule.tables: table 3: deal 2 twice",
    ),
    (
        SMALL + '[schedule.tables]\n"1" = [1, 2, 3, 4]\n"2" = [4, 3, 2, 1]\n',
        "38: schedule.tables: table 3 has no deal order",
    ),
    (
        SMALL + '[schedule]\nmethod = "random"\n',
        "38: schedule.seed: missing (random orders must be the same at every read)",
    ),
    (
        SMALL + "[schedule]\nbuttons = [1, 2, 3, 4, 1]\n",
        "39: schedule.buttons: expected one button per deal (4), got 5",
    ),
    (
        SMALL + "[schedule]\nbuttons = [1, 2, 4, 1]\n",
        "39: schedule.buttons: deal 3: button 4 is not a seat of 1..3",
    ),
    (
        SMALL + '[decks]\nfile = "d.enc"\nrehearsal_seed = "x"\n',
        "38: decks: expected exactly one of file or rehearsal_seed",
    ),
    (SMALL + "[decks]\n", "38: decks: expected exactly one of file or rehearsal_seed"),
    (
        replace(
            '[[teams]]\nid = "C"',
            '[[teams]]\nid = "D"\nname = "D"\ncolour = "#000000"\n'
            'players = ["d1", "d2", "d3"]\n\n[[teams]]\nid = "C"',
        ),
        "23: teams[2]: team D is in no group",
    ),
    (replace('id = "B"', 'id = "A"'), "17: teams[1].id: team A defined twice"),
    ("[tournament\n", None),
]


# Names a venue meets: the file keeps each as written (accents, scripts, emoji, quotes), refuses
# what would be shown wrong or make one player two, and warns of a likely typo.
NAMES = [
    (
        'players = ["a1", "a2 ", "a3"]',
        "14: teams[0].players[1]: 'a2 ' has blanks at its start or end: write 'a2'",
    ),
    (
        'players = ["a1", "Ana\\tLee", "a3"]',
        "14: teams[0].players[1]: 'Ana\\tLee' holds the character U+0009 (a control or bidi "
        "character): plain text only",
    ),
    (
        'players = ["a1", "\\u202eanA", "a3"]',
        "14: teams[0].players[1]: '\\u202eanA' holds the character U+202E (a control or bidi "
        "character): plain text only",
    ),
    (
        'players = ["Jose\\u0301", "a2", "Jos\\u00e9"]',
        "14: teams[0].players[2]: 'Jos\u00e9' reads the same as players[0] ('Jose\u0301'): "
        "give each player of a team a name of their own",
    ),
    (
        'players = ["Ana  Lee", "a2", "Ana Lee"]',
        "14: teams[0].players[2]: 'Ana Lee' reads the same as players[0] ('Ana  Lee'): give "
        "each player of a team a name of their own",
    ),
    ('name = "Alpha"', None),
]


@pytest.mark.parametrize(("line", "expected"), NAMES)
def test_names_are_kept_as_written_and_what_would_show_wrong_is_refused(tmp_path, line, expected):
    """Before: a blank at a name's end, a tab or a bidi override loaded, and two players who
    read the same (an accent typed two ways) were two players a roster change or a
    substitution could not tell apart."""
    if expected is not None:
        assert error_of(tmp_path, replace('players = ["a1", "a2", "a3"]', line)) == expected
        return
    names = [
        "O'Brien",
        'Jean "JJ" Dupont',
        "Smith & Sons <Pro>",
        "\u0645\u062d\u0645\u062f \u0639\u0644\u064a",
        "\u05d3\u05d5\u05d3 \u05dc\u05d5\u05d9",
        "\u738b\u78ca",
        "\U0001f468\u200d\U0001f469\u200d\U0001f467 \U0001f1e6\U0001f1f7",
        "Jose\u0301",
        "Jose",
        "x" * 60,
        "Ana",
        "ana",
    ]
    data = config_data(seats=4)
    for i, team in enumerate(data["teams"][:3]):
        team["players"] = names[4 * i : 4 * i + 4]
        team["name"] = names[i + 1]
    config = parse_config(data, "f")
    shown = [name for t in list(config.teams.values())[:3] for name in t.players]
    assert shown == names  # byte for byte, no normalisation
    assert config.teams["T01"].name == "Smith & Sons <Pro>"
    assert config.warnings[0] == (
        "f: teams[2].players[3]: 'ana' differs from players[2] ('Ana') only by case: the "
        "same player twice?"
    )


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_files_name_file_key_and_problem(tmp_path, text, expected):
    message = error_of(tmp_path, text)
    if expected is None:
        assert message.startswith("1: -: not valid TOML")
    else:
        assert message == expected


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the file") as info:
        load_config(tmp_path / "nope.toml")
    assert info.value.line is None


def test_parse_config_is_pure_and_names_its_source():
    with pytest.raises(ConfigError) as info:
        parse_config({"tournament": {}}, "memory")
    assert str(info.value) == "memory: teams: missing"
    assert info.value.line is None  # no text, no line
    assert isinstance(info.value, ValueError)


# -- line numbers -------------------------------------------------------------------------------

# A file that uses what the locator must follow: comments, a multi-line array holding brackets
# and '=' in strings, a multi-line string, dotted and quoted keys, array tables, sub-tables.
LINED = '''# Lined: a small event
[tournament]
id = "lined"
name = """Lined
[teams]
event"""
seats = 3
deals = 4
small_blind = 5
big_blind = 10

[[teams]]
id = "A"
name = "Alpha [x] = 1"   # not a header
colour = "#112233"
players = [
    "a1",   # table 1
    "a]2",
    "a=3",
]

[[teams]]
id = "B"
name = "Beta"
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

[draw]
tables."1" = ["A", "B", "C"]
tables.'2' = ["B", "C", "A"]
tables."3" = ["C", "A", "B"]
'''


def test_lined_file_loads(tmp_path):
    assert load_config(write(tmp_path, LINED)).teams["A"].players == ("a1", "a]2", "a=3")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # a key in the third [[teams]] block, after a multi-line array and string
        ('colour = "#778899"', 'colour = "grey"', "31: teams[2].colour: expected a colour"),
        # an unknown key: its own line
        ("deals = 4", "deals = 4\ncap_bbb = 3", "9: tournament.cap_bbb: unknown key"),
        # a missing key: the line of its table's header
        ('name = "Beta"\n', "", "22: teams[1].name: missing"),
        ("small_blind = 5\n", "", "2: tournament.small_blind: missing"),
        # an element of a multi-line array: the line of the array's key
        ('"a=3"', '""', "16: teams[0].players[2]: must not be empty"),
        # dotted and quoted keys
        ("tables.'2' = [", "tables.'7' = [", "41: draw.tables.7: table 7 is not in any group"),
        (
            'tables."3" = ["C", "A", "B"]',
            'tables."3" = ["C", "A"]',
            "42: draw.tables.3: expected a team for each of the 3 seats, got 2",
        ),
    ],
)
def test_errors_give_file_line_key_and_problem(tmp_path, old, new, expected):
    path = write(tmp_path, replace(old, new, LINED), "lined.toml")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    line, key, problem = expected.split(": ", 2)
    assert str(info.value).startswith(f"{path}:{line}: {key}: {problem}")
    assert (info.value.line, info.value.key) == (int(line), key)


def test_exact_messages_of_bad_files(tmp_path):
    cases = [
        (
            replace("[draw]\ntables.", '[draw]\nmethod = "cyclic"\ntables.', LINED),
            "39: draw: give either method and seed, or tables, not both",
        ),
        (
            replace('players = ["b1", "b2", "b3"]', 'players = ["b1", "b2", 3]', LINED),
            "26: teams[1].players[2]: expected a string, got 3",
        ),
        (
            SMALL.replace("[draw.tables]", '[draw.tables]\n"x" = ["A", "B", "C"]'),
            "35: draw.tables.x: a table number is expected as key",
        ),
        (
            SMALL + '\n[schedule]\nmethod = "sequential"\n\n[schedule.tables]\n"1" = [1]\n',
            "39: schedule: give either method (and seed), or tables, not both",
        ),
        (
            SMALL + "\n[consoles]\n# the pads\ntable1 = 1\ntable2 = 2\n'table 3' = 3\n",
            "43: consoles.table 3: expected letters, digits, '-', '_' or '.', got 'table 3'",
        ),
        ("[tournament]\nid = 1\nid = 2\n", "3: -: not valid TOML (Cannot overwrite a value"),
        ('\n\n[tournament]\nname = "x\n', "4: -: not valid TOML (Illegal character"),
    ]
    for text, expected in cases:
        path = write(tmp_path, text, "c.toml")
        with pytest.raises(ConfigError) as info:
            load_config(path)
        if "not valid TOML" in expected:  # tomllib's own words, less its line: a prefix
            assert str(info.value).startswith(f"{path}:{expected}"), str(info.value)
            assert "(at column " in str(info.value) and "line" not in info.value.problem
        else:
            assert str(info.value) == f"{path}:{expected}"


def test_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[tournament]\nname = "Se\xf1or"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}:2: -: not UTF-8 text"


def test_key_lines_follow_headers_array_tables_dotted_and_quoted_keys():
    text = (
        "top = 1\n"  # 1
        "[a.b]\n"  # 2
        'c.d = "x # not a comment"\n'  # 3
        "[[t]]\n"  # 4
        "[[t]]\n"  # 5
        "k = 1\n"  # 6
        "[t.sub]\n"  # 7
        "'q.r' = [\n"  # 8
        "  1,\n"  # 9
        "]\n"  # 10
        '"\\u0041" = 1\n'  # 11: the key "A"
        "[a]\n"  # 12
    )
    lines = KeyLines(text)
    assert lines.find(("top",)) == 1
    assert lines.find(("a", "b", "c", "d")) == 3
    assert lines.find(("a", "b", "c")) == 3
    assert lines.find(("a",)) == 12  # the [a] header, not the [a.b] that implied it
    assert lines.find(("t",)) == 4
    assert lines.find(("t", 0)) == 4
    assert lines.find(("t", 1, "k")) == 6
    assert lines.find(("t", 1, "sub", "q.r")) == 8
    assert lines.find(("t", 1, "sub", "A")) == 11
    assert lines.find(("t", 1, "missing")) == 5  # the enclosing block
    assert lines.find(("nowhere",)) is None
    assert key_path("teams[2].players[0]") == ("teams", 2, "players", 0)
    assert key_path("draw.tables.3") == ("draw", "tables", "3")
    assert key_path("-") == ()


def test_key_lines_never_raise_on_text_that_is_not_toml():
    assert KeyLines('[a\nb = "unterminated\n').find(("b",)) is None


# -- consoles -----------------------------------------------------------------------------------


def test_sample_lists_the_simulated_consoles():
    from hub.engine.simulate import console_name

    config = load_config(SAMPLE)
    assert config.consoles == {console_name(t): t for t in config.tables}


def test_consoles_are_optional():
    assert parse_config(config_data(), "x").consoles is None


def test_consoles_allow_a_backup_per_table():
    data = config_data()
    data["consoles"] = {"table1": 1, "table1-backup": 1, "table2": 2, "table3": 3}
    config = parse_config(data, "x")
    assert config.consoles == {"table1": 1, "table1-backup": 1, "table2": 2, "table3": 3}


def test_consoles_must_cover_every_table():
    data = config_data()
    data["consoles"] = {"table1": 1, "table3": 3}
    with pytest.raises(ConfigError) as info:
        parse_config(data, "x")
    assert str(info.value) == "x: consoles: table 2 has no console: nothing could be entered there"


@pytest.mark.parametrize(
    ("consoles", "expected"),
    [
        ({"table1": 9}, "x: consoles.table1: table 9 is not in any group"),
        ({"table1": 0}, "x: consoles.table1: must be at least 1, got 0"),
        ({"table1": [1, 2]}, "x: consoles.table1: expected an integer, got [1, 2]"),
        ({"table1": "1"}, "x: consoles.table1: expected an integer, got '1'"),
        (
            {"pad/1": 1},
            "x: consoles.pad/1: expected letters, digits, '-', '_' or '.', got 'pad/1'",
        ),
        ({"operator": 1}, "x: consoles.operator: 'operator' is the hub's own console"),
        ({}, "x: consoles: no consoles (leave the section out to allow any console)"),
        ([], "x: consoles: expected a table, got []"),
    ],
)
def test_bad_consoles(consoles, expected):
    data = config_data()
    data["consoles"] = consoles
    with pytest.raises(ConfigError) as info:
        parse_config(data, "x")
    assert str(info.value) == expected


def test_consoles_error_carries_its_line(tmp_path):
    text = SMALL + '\n[consoles]\ntable1 = 1\n"table-9" = 9\n'
    assert error_of(tmp_path, text) == "41: consoles.table-9: table 9 is not in any group"


def test_engine_refuses_consoles_not_on_the_list():
    data = config_data(seats=3)
    data["consoles"] = {"table1": 1, "table1-backup": 1, "table2": 2, "table3": 3}
    config = parse_config(data, "x")
    engine = Engine(config, make_decks(config))

    def event(table, console, seq=1):
        deal = config.deal_orders[table][0]
        return {
            "v": 1,
            "tournament": config.id,
            "table": table,
            "console": console,
            "seq": seq,
            "type": "start",
            "deal": deal,
        }

    stranger = engine.submit(event(1, "laptop"), 0)
    assert (stranger.ok, stranger.code) == (False, "unknown_console")
    late = engine.submit(event(1, "laptop", seq=7), 0)  # refused as a stranger, not as a gap
    assert (late.ok, late.code) == (False, "unknown_console")
    wrong_table = engine.submit(event(2, "table1"), 0)
    assert (wrong_table.ok, wrong_table.code) == (False, "unknown_console")
    assert engine.submit(event(1, "table1-backup"), 0).ok  # a listed console, its own table
    assert engine.submit(event(2, "table2"), 0).ok


# -- [scoring] (issue 12.5) --------------------------------------------------------------------


def test_scoring_defaults_to_ifp_points(tmp_path):
    config = load_config(write(tmp_path, SMALL))
    assert config.scoring == ScoringFormat()
    assert config.scoring.name == "ifp-points"


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ('format = "chips"', ScoringFormat(name="chips")),
        ('format = "imp"', ScoringFormat(name="imp", unit=1, unit_name="chips", scale=WBF)),
        ('format = "imp"\nunit = "chips"', ScoringFormat(name="imp")),
        ('format = "imp"\nunit = "big_blinds"', ScoringFormat("imp", 10, "big blinds")),
        ('format = "imp"\nunit = 25', ScoringFormat("imp", 25, "25 chips")),
        ('format = "ifp-points"', ScoringFormat()),
    ],
)
def test_scoring_section(tmp_path, section, expected):
    assert load_config(write(tmp_path, f"{SMALL}\n[scoring]\n{section}\n")).scoring == expected


def test_imp_scale_file_is_read_relative_to_the_tournament_file(tmp_path):
    (tmp_path / "scales").mkdir()
    (tmp_path / "scales" / "bb.csv").write_text("0.5, 1\n2, 2\n", encoding="utf-8")
    text = f'{SMALL}\n[scoring]\nformat = "imp"\nunit = "big_blinds"\nscale = "scales/bb.csv"\n'
    scoring = load_config(write(tmp_path, text)).scoring
    assert scoring.scale.steps == ((Fraction(1, 2), 1), (Fraction(2), 2))
    assert scoring.scale.name == "scales/bb.csv"
    assert scoring.unit == 10


def test_the_sample_wbf_scale_file_loads_as_the_wbf_scale(tmp_path):
    sample_scale = SAMPLE.parent / "imp-scale-wbf.csv"
    (tmp_path / "wbf.csv").write_text(sample_scale.read_text(encoding="utf-8"), encoding="utf-8")
    text = f'{SMALL}\n[scoring]\nformat = "imp"\nscale = "wbf.csv"\n'
    assert load_config(write(tmp_path, text)).scoring.scale.steps == WBF.steps


SCORING_LINE = SMALL.count("\n") + 2  # the line of "[scoring]" once appended after a blank


@pytest.mark.parametrize(
    ("section", "files", "expected"),
    [
        ('format = "bridge"', {}, "+1: scoring.format: expected one of 'ifp-points', 'imp', "
         "'chips', got 'bridge'"),
        ('format = "chips"\nunit = "chips"', {},
         "+2: scoring.unit: only format 'imp' takes a unit"),
        ('scale = "x.csv"', {}, "+1: scoring.scale: only format 'imp' takes a scale"),
        ('format = "imp"\nunit = "bb"', {}, "+2: scoring.unit: expected 'chips', 'big_blinds' or "
         "a number of chips >= 1, got 'bb'"),
        ('format = "imp"\nunit = 0', {}, "+2: scoring.unit: expected 'chips', 'big_blinds' or "
         "a number of chips >= 1, got 0"),
        ('format = "imp"\nscale = "none.csv"', {}, "+2: scoring.scale: cannot read none.csv "
         "(No such file or directory)"),
        ('format = "imp"\nscale = "bad.csv"', {"bad.csv": "20, 1\n10, 2\n"},
         "+2: scoring.scale: bad.csv: line 2: step 10 does not come after step 20"),
        ('format = "imp"\nscale = "bin.csv"', {"bin.csv": b"\xff\xfe"},
         "+2: scoring.scale: bin.csv is not UTF-8 text"),
        ("formats = 1", {}, "+1: scoring.formats: unknown key (did you mean 'format'?)"),
    ],
)  # fmt: skip
def test_bad_scoring_sections_name_line_key_and_problem(tmp_path, section, files, expected):
    for name, content in files.items():
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    offset, message = expected.split(": ", 1)
    line = SCORING_LINE + int(offset)
    assert error_of(tmp_path, f"{SMALL}\n[scoring]\n{section}\n") == f"{line}: {message}"


def test_a_scale_file_needs_a_reader():
    data = tomllib.loads(f'{SMALL}\n[scoring]\nformat = "imp"\nscale = "x.csv"\n')
    with pytest.raises(ConfigError, match="a scale file is read only when the tournament file is"):
        parse_config(data, "memory")


def test_the_samples_commented_scoring_block_loads_as_written(tmp_path):
    text = SAMPLE.read_text(encoding="utf-8")
    block = ["[scoring]", 'format = "imp"', 'unit = "big_blinds"', 'scale = "imp-scale-wbf.csv"']
    for line in block:
        assert f"# {line}" in text
        text = text.replace(f"# {line}", line, 1)
    scale = (SAMPLE.parent / "imp-scale-wbf.csv").read_text(encoding="utf-8")
    (tmp_path / "imp-scale-wbf.csv").write_text(scale, encoding="utf-8")
    scoring = load_config(write(tmp_path, text)).scoring
    assert (scoring.name, scoring.unit, scoring.unit_name) == ("imp", 100, "big blinds")
    assert scoring.scale.steps == WBF.steps


CORPUS_SHARDS = 4  # each shard its own test, so each has the whole timeout of a test
# Latin squares the corpus drew: (order, generator state before) -> (square, state after)
SQUARES: dict[tuple[int, object], tuple[list[list[int]], object]] = {}


def draw_each_square_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus's files differ in one place each, most with the same schedule and seed: the
    same Latin squares drawn again and again (Jacobson-Matthews, two thirds of the corpus's
    CPU). The draw is a function of its order and the generator's state: each pair is drawn
    once by the real ``uniform_latin_square``, and a repeat gets that square with the
    generator left where that draw left it, so every outcome is the same, bit for bit (the
    draw itself: tests/test_draw.py)."""
    real = schedule_module.uniform_latin_square

    def drawn_once(n: int, rng: random.Random) -> list[list[int]]:
        key = (n, rng.getstate())
        if key not in SQUARES:
            square = real(n, rng)
            SQUARES[key] = ([row[:] for row in square], rng.getstate())
        square, after = SQUARES[key]
        rng.setstate(after)
        return [row[:] for row in square]

    monkeypatch.setattr(schedule_module, "uniform_latin_square", drawn_once)


@functools.cache
def corpus_cases() -> dict[str, dict[str, Any]]:
    """The corpus's cases, built once for the four shards (a name given twice: its last case,
    as outcomes()); outcome() only reads a case, and each shard reads its own quarter."""
    return dict(config_corpus.cases())


@pytest.mark.parametrize("shard", range(CORPUS_SHARDS))
def test_every_message_of_the_corpus_is_as_recorded(
    shard: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Some 10,000 files broken one way each (tests/config_corpus.py) give exactly the message,
    line and key recorded from the hand-written parser (issue #21), or the same configuration
    (a quarter of them per shard: together, every case of the golden file)."""
    draw_each_square_once(monkeypatch)
    golden = json.loads(config_corpus.GOLDEN.read_text(encoding="utf-8"))
    cases = corpus_cases()
    assert cases.keys() == golden.keys(), "the corpus and its golden file list the same cases"
    got = {
        name: config_corpus.outcome(data)
        for i, (name, data) in enumerate(cases.items())
        if i % CORPUS_SHARDS == shard
    }
    golden = {name: golden[name] for name in got}
    changed = [
        f"{name}\n  was {golden[name]}\n  now {got[name]}"
        for name in golden
        if got[name] != golden[name]
    ]
    assert not changed, f"{len(changed)} outcomes changed:\n" + "\n".join(changed[:20])
