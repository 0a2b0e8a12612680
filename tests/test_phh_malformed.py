"""PHH files from elsewhere are input: every one, however malformed, gets a one-line reason from
`duplicast phh-check` and `duplicast console replay --phh`, or replays; never a traceback.

A generated corpus holds every kind of malformed file found crashing them (``inf``/``1e400``
where chips go, scalars and nested lists where arrays go, nesting deeper than the TOML parser
recurses, integers past any chip count) beside two legal hands the engine used to refuse: an
``inf`` (unlimited) stack, as PokerKit writes cash games, and a cash-game fold when checking
was free. PokerKit is the oracle for those two. Hypothesis then fuzzes the parser itself."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pokerkit import HandHistory

from hub.domain.config import parse_config
from hub.domain.phh import Mismatch, Unreplayable, read_phh, replay
from hub.files.phh import CheckReport, check_folder, check_hand, console_events, hands_in
from tests.factories import config_data
from tests.hubharness import SAMPLE

GOOD = """variant = "NT"
ante_trimming_status = true
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [200, 200, 200]
actions = ["d dh p1 AhKh", "d dh p2 QsQd", "d dh p3 7c2d", "p3 f", "p1 cbr 6", "p2 cc",
  "d db 2c3c4c", "p1 cbr 10", "p2 f"]
finishing_stacks = [206, 194, 200]
"""

# Legal PHH our engine must replay (the expected stacks are PokerKit's, checked below).
LEGAL = {
    "inf-stacks.phh": GOOD.replace("[200, 200, 200]", "[inf, 200, 300]")
    .replace('"p3 f", "p1 cbr 6", "p2 cc",', '"p3 cbr 6", "p1 f", "p2 cc",')
    .replace('"p1 cbr 10", "p2 f"]', '"p2 cc", "p3 cbr 10", "p2 f"]')
    .replace("[206, 194, 200]", "[inf, 194, 307]"),
    "inf-stacks-unchecked.phh": GOOD.replace("[200, 200, 200]", "[inf, inf, inf]").replace(
        "finishing_stacks = [206, 194, 200]\n", ""
    ),
    "free-fold.phh": GOOD.replace(
        '"p3 f", "p1 cbr 6", "p2 cc",\n  "d db 2c3c4c", "p1 cbr 10", "p2 f"]',
        '"p3 cc", "p1 cc", "p2 cc",\n  "d db 2c3c4c", "p1 f", "p2 cc", "p3 cbr 4", "p2 f"]',
    ).replace("[206, 194, 200]", "[198, 198, 204]"),
}


def field(name: str, value: str) -> str:
    """GOOD with one field's value replaced (or added)."""
    lines = [line for line in GOOD.split("\n") if not line.startswith(f"{name} =")]
    text = "\n".join(lines)
    if name == "actions":  # a multi-line array: drop its continuation line too
        text = "\n".join(line for line in text.split("\n") if not line.startswith("  "))
    return f"{name} = {value}\n" + text


def deep(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


MALFORMED = {
    # inf / 1e400 / nan where chips go (OverflowError, ValueError before)
    "stack-1e400.phh": field("starting_stacks", "[1e400, 200, 200]"),
    "stack-nan.phh": field("starting_stacks", "[nan, 200, 200]"),
    "stack-minus-inf.phh": field("starting_stacks", "[-inf, 200, 200]"),
    "stack-1e300.phh": field("starting_stacks", "[1e300, 200, 200]"),
    "stack-huge-int.phh": field("starting_stacks", f"[{10**40}, 200, 200]"),
    "stack-5000-digits.phh": field("starting_stacks", f"[{'9' * 5000}, 200, 200]"),
    "stack-bool.phh": field("starting_stacks", "[true, true, true]"),
    "ante-inf.phh": field("antes", "[inf, 0, 0]"),
    "ante-1e400-scalar.phh": field("antes", "1e400"),
    "ante-negative.phh": field("antes", "[-5, 0, 0]"),
    "blind-inf.phh": field("blinds_or_straddles", "[1, inf, 0]"),
    "min-bet-nan.phh": field("min_bet", "nan"),
    "amount-1e400.phh": GOOD.replace("p1 cbr 6", "p1 cbr 1e400"),
    "amount-inf.phh": GOOD.replace("p1 cbr 6", "p1 cbr inf"),
    "amount-nan.phh": GOOD.replace("p1 cbr 6", "p1 cbr nan"),
    "amount-text.phh": GOOD.replace("p1 cbr 6", "p1 cbr six"),
    "amount-negative.phh": GOOD.replace("p1 cbr 6", "p1 cbr -6"),
    "finishing-1e400.phh": field("finishing_stacks", "[1e400, 194, 200]"),
    "finishing-nan.phh": field("finishing_stacks", "[nan, 194, 200]"),
    "finishing-text.phh": field("finishing_stacks", '["a", 194, 200]'),
    # scalars, tables and nested lists where arrays go (TypeError before)
    "stacks-scalar.phh": field("starting_stacks", "200"),
    "stacks-table.phh": field("starting_stacks", "{ a = 1 }"),
    "stacks-nested.phh": field("starting_stacks", "[[200, 200], [200]]"),
    "actions-scalar.phh": field("actions", "5"),
    "actions-string.phh": field("actions", '"p1 f"'),
    "actions-nested.phh": field("actions", '[["d dh p1 AhKh"], ["p1 f"]]'),
    "actions-numbers.phh": field("actions", "[1, 2.5, true]"),
    "finishing-scalar.phh": field("finishing_stacks", "5"),
    "finishing-nested.phh": field("finishing_stacks", "[[206], [194], [200]]"),
    "antes-nested.phh": field("antes", "[[1], [1], [1]]"),
    "blinds-nested.phh": field("blinds_or_straddles", "[[1], [2], [0]]"),
    "blinds-table.phh": field("blinds_or_straddles", "{ small = 1 }"),
    "blinds-missing.phh": GOOD.replace("blinds_or_straddles = [1, 2, 0]\n", ""),
    # nesting: deeper than tomllib recurses (RecursionError before), and just parseable
    "deep-actions.phh": field("actions", deep(5000)),
    "deep-stacks.phh": field("starting_stacks", deep(5000)),
    "nested-actions.phh": field("actions", deep(60)),
    "deep-tables.phh": "a = " + "{ b = " * 3000 + "1" + " }" * 3000 + "\n" + GOOD,
    # cards, players, board, shape
    "bad-cards.phh": GOOD.replace("AhKh", "XxYy"),
    "odd-cards.phh": GOOD.replace("AhKh", "AhK"),
    "same-card-twice.phh": GOOD.replace("QsQd", "AhQd"),
    "unknown-player.phh": GOOD.replace('"p2 f"', '"p9 f"'),
    "six-board-cards.phh": GOOD.replace("2c3c4c", "2c3c4c5c6c7c"),
    "unknown-action.phh": GOOD.replace('"p2 f"', '"p2 xx 1 2 3"'),
    "one-player.phh": field("starting_stacks", "[200]"),
    "no-variant.phh": GOOD.replace('variant = "NT"\n', ""),
    "variant-list.phh": field("variant", '["NT"]'),
    "betting-number.phh": field("_betting", "5"),
    "empty.phh": "",
    "not-toml.phh": "variant = \n[[[",
    "bad-utf8.phh": b'variant = "\xff\xfe"\n',
    "bundle.phhs": "[1]\n" + GOOD + "\n[2]\nvariant = 5\n\nx = 1\n",
}


def write(folder: Path, files: dict[str, Any]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in files.items():
        path = folder / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def report_of(path: Path) -> CheckReport:
    report = CheckReport()
    for name, data in hands_in(path):
        check_hand(name, data, report)
    return report


def test_the_legal_hands_agree_with_pokerkit() -> None:
    """PokerKit is the oracle: ``inf`` stacks stay ``inf``; the free fold is played (with its
    cash-game warning) to the stacks the files say."""
    for name, text in {"good.phh": GOOD, **LEGAL}.items():
        history = HandHistory.loads(text)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            *_, state = iter(history)
        data = tomllib.loads(text)
        if "finishing_stacks" in data:
            assert [float(s) for s in state.stacks] == data["finishing_stacks"], name


@pytest.mark.parametrize("name", sorted({"good.phh", *LEGAL}))
def test_legal_phh_replays(tmp_path: Path, name: str) -> None:
    (path,) = write(tmp_path, {name: {"good.phh": GOOD, **LEGAL}[name]})
    report = report_of(path)
    assert not report.unreplayable and not report.mismatches, report
    assert report.hands + len(report.unchecked) == 1


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_every_malformed_file_gets_one_line(tmp_path: Path, name: str) -> None:
    (path,) = write(tmp_path, {name: MALFORMED[name]})
    report = report_of(path)
    lines = report.unreplayable + report.mismatches + report.unchecked
    assert lines, report
    for line in lines:
        assert "\n" not in line and len(line) < 400, line
    assert len(report.unreplayable) + len(report.mismatches) >= 1  # none passes as good


def test_phh_check_on_the_corpus_exits_with_a_status_never_a_traceback(tmp_path: Path) -> None:
    write(tmp_path / "corpus", {**MALFORMED, **LEGAL})
    run = subprocess.run(
        [sys.executable, "-m", "hub", "phh-check", str(tmp_path / "corpus")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in run.stderr and run.stderr == "", run.stderr
    assert run.returncode == 1  # some malformed files are mismatches (a refused action)
    report = check_folder(tmp_path / "corpus")
    named = " ".join(report.unreplayable + report.mismatches + report.unchecked)
    for name in MALFORMED:
        assert name in named, name
    assert all(name not in " ".join(report.unreplayable + report.mismatches) for name in LEGAL)
    summary = f"{report.hands} hands, {len(report.mismatches)} mismatches"
    assert run.stdout.splitlines()[-1] == summary


def import_config() -> Any:
    import dataclasses

    from hub.files.config import load_config

    config = load_config(SAMPLE)
    return dataclasses.replace(config, betting="no-limit", decks=None)


@pytest.mark.parametrize("name", sorted({**MALFORMED, **LEGAL}))
def test_console_replay_phh_refuses_in_one_line(tmp_path: Path, name: str) -> None:
    """The path `console replay --phh` takes before it sends anything: every file either
    becomes console events or is refused with one line naming the file (the legal cash-game
    hands do not fit a capped tournament of six: refused, by name)."""
    from hub.cli.console import phh_events

    (path,) = write(tmp_path, {name: {**MALFORMED, **LEGAL}[name]})
    with pytest.raises(SystemExit) as info:
        phh_events(import_config(), [path], 1, None, None)
    message = str(info.value.code)
    assert message.startswith("console replay: ") and "\n" not in message, message
    assert name in message


def test_console_replay_phh_cli_says_why_in_one_line(tmp_path: Path) -> None:
    """The command itself, as run: exit status 1 and one line on stderr naming the file, said
    before Redis is asked (none listens on port 1)."""
    paths = write(tmp_path, {k: MALFORMED[k] for k in ("stack-1e400.phh", "deep-actions.phh")})
    paths += write(tmp_path, {"inf-stacks.phh": LEGAL["inf-stacks.phh"]})
    for path in paths:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "hub",
                "console",
                "--redis",
                "redis://127.0.0.1:1/0",
                "replay",
                "--phh",
                str(path),
                "--config",
                str(SAMPLE),
                "--table",
                "1",
                "--no-outbox",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert run.stderr.startswith(f"console replay: {path}: "), run.stderr


def test_an_unlimited_stack_is_refused_for_the_hub_by_name() -> None:
    with pytest.raises(ValueError, match=r"unlimited \(inf\) starting stacks"):
        console_events(
            import_config(),
            read_phh(tomllib.loads(LEGAL["inf-stacks.phh"].replace("[0, 0, 0]", "0"))),
            table=1,
            deal=1,
            console="c1",
        )


def test_a_free_fold_replays_from_phh_but_a_tournament_console_is_refused() -> None:
    phh = read_phh(tomllib.loads(LEGAL["free-fold.phh"]))
    assert [float(s) for s in replay_stacks(phh)] == [198, 198, 204]
    # The same hand in a 3-seat 50/100 tournament's chips: the hub's rules refuse the fold.
    scaled = (
        LEGAL["free-fold.phh"]
        .replace("[1, 2, 0]", "[50, 100, 0]")
        .replace("min_bet = 2", "min_bet = 100")
        .replace("[200, 200, 200]", "[10000, 10000, 10000]")
        .replace("p3 cbr 4", "p3 cbr 200")
    )
    config = parse_config(config_data(seats=3, betting="no-limit", rehearsal_seed=None), "<t>")
    with pytest.raises(ValueError, match="refused: nothing to call: check instead of folding"):
        console_events(config, read_phh(tomllib.loads(scaled)), table=1, deal=1, console="c1")


def replay_stacks(phh: Any) -> list[float]:
    from hub.domain.phh import finishing_stacks

    return finishing_stacks(replay(phh), phh.unbounded)


# -- hypothesis: the parser takes anything TOML can hold --------------------------------------

SCALARS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=8),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=12,
)
TOKENS = st.sampled_from(
    ["p1", "p2", "p3", "p9", "d", "dh", "db", "f", "cc", "cbr", "sm", "-", "AhKh", "????",
     "2c3c4c", "5d", "6", "1e400", "inf", "nan", "-3", "XxYy", "#"]
)  # fmt: skip
ACTION = st.lists(TOKENS, min_size=0, max_size=4).map(" ".join)
FIELDS = {
    "variant": st.sampled_from(["NT", "FB"]) | VALUES,
    "starting_stacks": st.lists(st.sampled_from([200, 1e400, 0, -1, 2.5]) | SCALARS, max_size=4)
    | VALUES,
    "antes": st.sampled_from([0, [0, 0, 0], [1, 1, 1]]) | VALUES,
    "blinds_or_straddles": st.sampled_from([[1, 2, 0], [1, 2], [2, 1, 0]]) | VALUES,
    "min_bet": st.sampled_from([2, 0]) | VALUES,
    "actions": st.lists(ACTION | VALUES, max_size=12),
    "finishing_stacks": st.lists(SCALARS, max_size=4) | VALUES,
    "ante_trimming_status": VALUES,
    "_betting": st.sampled_from(["no-limit", "pot-limit"]) | VALUES,
    "players": VALUES,
}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({}, optional=FIELDS))
def test_fuzzed_phh_data_reads_replays_or_gives_one_line(data: dict[str, Any]) -> None:
    try:
        phh = read_phh(data)
        replay(phh)
    except (Unreplayable, Mismatch) as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 400
    report = CheckReport()
    check_hand("fuzz.phh", data, report)  # never raises


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=300))
def test_fuzzed_phh_bytes_never_crash_the_reader(tmp_path_factory: Any, blob: Any) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "hand.phh"
    if isinstance(blob, str):
        path.write_text(blob, encoding="utf-8")
    else:
        path.write_bytes(blob)
    report = report_of(path)
    assert len(report.unreplayable + report.mismatches + report.unchecked) + report.hands >= 1
