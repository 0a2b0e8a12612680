import argparse
import re
import tomllib
from pathlib import Path

import pytest

from hub.cli.offline import run_decks, run_draw
from hub.domain.config import parse_config
from hub.domain.deck import commitment, seeded_deck_orders
from hub.domain.draw import is_cyclic
from hub.files.config import load_config
from hub.files.decks import KEY_ENV, generate_key, read_deck_file

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "ifp6.toml"


@pytest.fixture
def unprepared(tmp_path):
    """The sample tournament before the draw and the schedule are made."""
    text = SAMPLE.read_text("utf-8")
    text = text[: text.index("# The cyclic draw")] + text[text.index("# Rehearsal deck orders") :]
    assert "[draw" not in text and "[schedule" not in text
    path = tmp_path / "event.toml"
    path.write_text(text, "utf-8")
    return path


def draw_args(config, **overrides):
    values = {"config": config, "method": "cyclic", "seed": None, "out": None}
    values.update(overrides)
    return argparse.Namespace(**values)


def decks_args(config, **overrides):
    values = {
        "config": config,
        "deals": None,
        "out": None,
        "orders_out": None,
        "seed": None,
        "plain_out": None,
        "new_key": False,
    }
    values.update(overrides)
    return argparse.Namespace(**values)


def with_fragment(path, fragment):
    data = tomllib.loads(path.read_text("utf-8") + "\n" + fragment)
    return parse_config(data, "joined")


@pytest.mark.parametrize("method", ["cyclic", "random"])
def test_draw_writes_a_fragment_the_config_accepts(unprepared, tmp_path, method):
    out = tmp_path / "draw.toml"
    assert run_draw(draw_args(unprepared, method=method, seed=7, out=str(out))) == 0
    fragment = out.read_text("utf-8")
    assert fragment.startswith("# Seat draw for ifp-demo: " + method)
    config = with_fragment(unprepared, fragment)
    assert len(config.draw) == 36
    if method == "cyclic":
        assert is_cyclic(config.draw, config.tables)


def test_draw_from_a_seed_is_reproducible_and_goes_to_stdout(unprepared, capsys):
    assert run_draw(draw_args(unprepared, seed=3)) == 0
    first = capsys.readouterr().out
    assert run_draw(draw_args(unprepared, seed=3)) == 0
    assert capsys.readouterr().out == first
    assert "seed 3 (reproducible)" in first


def test_draw_without_seed_uses_the_csprng(unprepared, capsys):
    assert run_draw(draw_args(unprepared, method="random")) == 0
    out = capsys.readouterr().out
    assert "system CSPRNG" in out
    with_fragment(unprepared, out)


def test_draw_reports_a_bad_config(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[tournament]\nid = "x"\n', "utf-8")
    assert run_draw(draw_args(bad)) == 1
    assert f"{bad}: teams: missing" in capsys.readouterr().err


def test_draw_rejects_an_unknown_method(unprepared, capsys):
    assert run_draw(draw_args(unprepared, method="swiss")) == 2
    assert "unknown draw method" in capsys.readouterr().err


def test_new_key(capsys):
    assert run_decks(decks_args("unused", new_key=True)) == 0
    key = capsys.readouterr().out.strip()
    assert len(key) == 44


def test_decks_without_key_explains_how_to_make_one(unprepared, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(KEY_ENV, raising=False)
    assert run_decks(decks_args(unprepared, out=str(tmp_path / "d.enc"))) == 2
    err = capsys.readouterr().err
    assert "no deck key" in err and "duplicast decks --new-key --key-out" in err
    assert not (tmp_path / "d.enc").exists()


def test_decks_with_a_bad_key(unprepared, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(KEY_ENV, "not-a-key")
    assert run_decks(decks_args(unprepared, out=str(tmp_path / "d.enc"))) == 2
    assert "not a deck key" in capsys.readouterr().err


def test_decks_writes_file_plain_export_orders_and_commitment(
    unprepared, tmp_path, monkeypatch, capsys
):
    key = generate_key()
    monkeypatch.setenv(KEY_ENV, key)
    out, plain, orders_out = tmp_path / "d.enc", tmp_path / "plain.txt", tmp_path / "orders.toml"
    args = decks_args(unprepared, out=str(out), plain_out=str(plain), orders_out=str(orders_out))
    assert run_decks(args) == 0
    captured = capsys.readouterr()
    decks = read_deck_file(out, key)
    assert sorted(decks) == list(range(1, 13))
    assert not any(order.rehearsal for order in decks.values())
    assert f"commitment: sha256:{commitment(decks)}" in captured.out
    assert "REHEARSAL" not in captured.err
    lines = plain.read_text().splitlines()
    assert lines[0] == "1\t" + " ".join(decks[1].cards)
    fragment = orders_out.read_text("utf-8")
    assert "[schedule.tables]" in fragment
    config = with_fragment(
        unprepared,
        fragment.replace(
            "[schedule.tables]", '[draw]\nmethod = "cyclic"\nseed = 1\n[schedule.tables]'
        ),
    )
    assert all(sorted(o) == list(range(1, 13)) for o in config.deal_orders.values())


def test_decks_refuses_to_overwrite(unprepared, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(KEY_ENV, generate_key())
    out = tmp_path / "d.enc"
    out.write_bytes(b"published")
    assert run_decks(decks_args(unprepared, out=str(out))) == 1
    assert "already exists" in capsys.readouterr().err
    assert out.read_bytes() == b"published"


def test_rehearsal_decks_are_loud_and_reproducible(unprepared, tmp_path, capsys):
    orders_out = tmp_path / "orders.toml"
    args = decks_args(unprepared, seed="ifp-demo", orders_out=str(orders_out))
    assert run_decks(args) == 0
    captured = capsys.readouterr()
    assert "REHEARSAL" in captured.err
    expected = commitment(seeded_deck_orders("ifp-demo", 12))
    assert f"commitment: sha256:{expected}" in captured.out
    # the sample's [schedule.tables] was written by exactly this command
    sample = load_config(SAMPLE)
    written = re.findall(r'^"(\d+)" = \[(.*)\]$', orders_out.read_text(), re.M)
    assert {int(t): tuple(int(d) for d in ds.split(", ")) for t, ds in written} == (
        dict(sample.deal_orders)
    )


def test_decks_deals_override(unprepared, tmp_path, monkeypatch, capsys):
    key = generate_key()
    monkeypatch.setenv(KEY_ENV, key)
    out = tmp_path / "d.enc"
    assert run_decks(decks_args(unprepared, out=str(out), deals=3)) == 0
    assert sorted(read_deck_file(out, key)) == [1, 2, 3]
    assert "deals = 12" in capsys.readouterr().err


def test_decks_needs_something_to_write(unprepared, capsys):
    assert run_decks(decks_args(unprepared)) == 2
    assert "nothing to write" in capsys.readouterr().err


def test_draw_command_matches_the_config_method_with_the_same_seed(unprepared, capsys):
    assert run_draw(draw_args(unprepared, method="random", seed=11)) == 0
    written = with_fragment(unprepared, capsys.readouterr().out)
    generated = with_fragment(unprepared, '[draw]\nmethod = "random"\nseed = 11\n')
    assert written.draw == generated.draw


def test_decks_needs_a_config_unless_making_a_key(capsys):
    assert run_decks(decks_args(None)) == 2
    assert "--config is required" in capsys.readouterr().err


def test_decks_orders_are_release_aware_blocks(unprepared, tmp_path, monkeypatch, capsys):
    """Issue #23.1: two blocks of six deals, each a Latin square of tables x rounds."""
    monkeypatch.setenv(KEY_ENV, generate_key())
    orders_out = tmp_path / "orders.toml"
    args = decks_args(unprepared, plain_out=str(tmp_path / "p.txt"), orders_out=str(orders_out))
    assert run_decks(args) == 0
    fragment = orders_out.read_text("utf-8")
    config = with_fragment(
        unprepared,
        fragment.replace(
            "[schedule.tables]", '[draw]\nmethod = "cyclic"\nseed = 1\n[schedule.tables]'
        ),
    )
    assert not config.warnings
    orders = config.deal_orders
    for rounds in (slice(0, 6), slice(6, 12)):
        assert len({frozenset(order[rounds]) for order in orders.values()}) == 1
        for i in range(rounds.start, rounds.stop):
            assert len({order[i] for order in orders.values()}) == 6  # one table a deal a round
    # the event before its orders (no [schedule] yet) is not warned about: this command writes
    # them (issue #30 item 9); the written orders load without any warning
    warned = [w for w in capsys.readouterr().err.splitlines() if w.startswith("warning")]
    assert warned == [], warned


# The sample event plays six deals a session; the same event with sessions of four deals.
SHORT_SESSIONS = {
    "deals = 18 ": "deals = 12 ",
    "deals = [1, 6]": "deals = [1, 4]",
    "deals = [7, 12]": "deals = [5, 8]",
    "deals = [13, 18]": "deals = [9, 12]",
}


@pytest.mark.parametrize(("per_session", "most_on_a_deal"), [(6, 1), (4, 2)])
def test_decks_orders_of_an_event_with_sessions_load(per_session, most_on_a_deal, tmp_path):
    """Each session in turn, in blocks within its group: six deals for six tables, one table a
    deal a round (the sample); four deals, as even as it gets, two tables at most on a deal.
    The file takes them back."""
    text = SAMPLE.with_name("ifp-event.toml").read_text("utf-8")
    if per_session == 4:
        for six, four in SHORT_SESSIONS.items():
            assert six in text
            text = text.replace(six, four)
    sample = tmp_path / "event.toml"
    sample.write_text(text, "utf-8")
    orders_out = tmp_path / "orders.toml"
    assert run_decks(decks_args(sample, seed="s", orders_out=str(orders_out))) == 0
    text = (
        text[: text.index("[schedule]")]
        + orders_out.read_text("utf-8")
        + (text[text.index("[decks]") :])
    )
    config = parse_config(tomllib.loads(text), "joined")
    sessions = [
        list(range(first, first + per_session)) for first in range(1, 3 * per_session, per_session)
    ]
    for table in config.tables:
        order = config.deal_orders[table]
        if table <= 12:  # the group stage: sessions 1 then 2
            assert [sorted(order[:per_session]), sorted(order[per_session:])] == sessions[:2]
        else:
            assert sorted(order) == sessions[2]
    for group in config.groups.values():
        for i in range(len(config.deal_orders[group.tables[0]])):
            deals = [config.deal_orders[t][i] for t in group.tables]
            assert max(deals.count(d) for d in deals) == most_on_a_deal
    assert bool(config.warnings) == (most_on_a_deal > 1)


def test_blocks_in_sessions_shorter_than_the_group_say_what_to_change(tmp_path):
    """`method = "blocks"` with four-deal sessions for groups of six tables cannot keep every
    table on its own deal: the warning says to lengthen the sessions, not to use blocks."""
    text = SAMPLE.with_name("ifp-event.toml").read_text("utf-8")
    assert 'method = "blocks"' in text
    for six, four in SHORT_SESSIONS.items():
        text = text.replace(six, four)
    sample = tmp_path / "event.toml"
    sample.write_text(text, "utf-8")
    (warning,) = load_config(sample).warnings
    assert "the blocks schedule: " in warning and "more such clashes" in warning
    assert warning.endswith(
        "a session needs at least as many deals as its group has tables for blocks to keep "
        "every table on its own deal (docs/rules.md)"
    )
    assert 'method = "blocks" (with a seed)' not in warning
