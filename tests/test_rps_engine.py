"""RPS Poker through the whole hub: consoles' events, release and secrecy, replay of the sample."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from hub.domain.config import ConfigError, TournamentConfig, parse_config
from hub.domain.games.rps.rules import RpsHand, RpsRules, dealer_sequence, split_rounds
from hub.engine.core import Engine
from hub.engine.simulate import simulate_session
from hub.files.config import load_config
from hub.files.decks import load_decks

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "rps-poker.toml"
SESSION = ROOT / "samples" / "rps-poker-session.jsonl"


def sample(text_edit: tuple[str, str] | None = None) -> TournamentConfig:
    text = SAMPLE.read_text(encoding="utf-8")
    if text_edit is not None:
        assert text_edit[0] in text
        text = text.replace(*text_edit)
    return parse_config(tomllib.loads(text), str(SAMPLE), text)


def session() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SESSION.read_text(encoding="utf-8").splitlines()]


class Console:
    def __init__(self, engine: Engine, table: int) -> None:
        self.engine, self.table, self.seq = engine, table, 0

    def send(self, kind: str, **fields: Any) -> Any:
        self.seq += 1
        event = {
            "v": 1,
            "tournament": "rps-demo",
            "table": self.table,
            "console": f"table{self.table}",
            "seq": self.seq,
            "type": kind,
            **fields,
        }
        return self.engine.submit(event, float(self.seq))

    def ok(self, kind: str, **fields: Any) -> Any:
        out = self.send(kind, **fields)
        assert out.ok, out.ack
        return out

    def code(self, kind: str, **fields: Any) -> str:
        out = self.send(kind, **fields)
        assert not out.ok
        return str(out.code)


# ------------------------------------------------------------------ configuration


def test_the_game_and_its_options_are_configuration() -> None:
    config = sample()
    assert (config.game, config.game_rules, config.betting) == (
        "rps-poker",
        RpsRules(dealer="sequence"),
        "pot-limit",
    )
    chosen = sample(('dealer = "sequence"', 'dealer = "chosen"'))
    assert chosen.rules_of(RpsRules) == RpsRules(dealer="chosen")
    assert "betting='pot-limit', rps_dealer='chosen', decks=" in repr(chosen)  # its old digest
    assert sample(('betting = "pot-limit"', 'betting = "limit"')).betting == "limit"
    with pytest.raises(ConfigError, match=r"rps-poker.toml:\d+: rps.dealer: expected"):
        sample(('dealer = "sequence"', 'dealer = "dealer"'))
    with pytest.raises(
        ConfigError, match=r"tournament\.game: expected one of .*'rps-poker', got 'rps'"
    ):
        sample(('game = "rps-poker"', 'game = "rps"'))
    with pytest.raises(ConfigError, match=r"rps: an \[rps\] section needs game"):
        sample(('game = "rps-poker"', 'game = "holdem"'))
    # Limit betting is RPS Poker's only (the hold'em views and PHH were not made for it).
    holdem = (ROOT / "samples" / "ifp6.toml").read_text(encoding="utf-8")
    limit = holdem.replace('betting = "pot-limit"', 'betting = "limit"')
    with pytest.raises(ConfigError, match=r"tournament\.betting"):
        parse_config(tomllib.loads(limit), "ifp6.toml", limit)


# ------------------------------------------------------------------ one table by hand


def _first_deal(engine: Engine, table: int) -> tuple[int, int]:
    deal = engine.state.config.deal_orders[table][0]
    return deal, engine.state.config.buttons[deal]


def test_console_events_and_their_rejections() -> None:
    config = sample()
    engine = Engine(config, load_decks(config, SAMPLE.parent, {}))
    c = Console(engine, 1)
    deal, dealer = _first_deal(engine, 1)
    assert c.code("throws", seat=1, throws="RPS") == "hand_not_started"
    c.ok("start", deal=deal)
    first = dealer % 4 + 1  # left of the dealer
    players = [first, first % 4 + 1, (first + 1) % 4 + 1]
    assert c.code("call", seat=first) == "throws_pending"
    assert c.code("throws", seat=first, throws="RP") == "bad_throws"
    assert c.code("throws", seat=first, throws="RPX") == "bad_throws"
    assert c.code("throws", seat=first, throws=7) == "bad_schema"
    assert c.code("throws", seat=dealer, throws="RRR") == "not_allowed"
    assert c.code("reveal", throws="RRR") == "not_allowed"  # sequence: nothing to reveal
    assert c.code("exposed", seat=first, card=1) == "not_allowed"  # no cards in RPS Poker
    for seat in players[:2]:
        c.ok("throws", seat=seat, throws="rps")  # letters in any case
    live = engine.payload(("live", "table:1"))
    assert live is not None and live["dealer_throws"] == [] and live["round"] == "gambit"
    # While a throw is awaited no one is to act: the overlays say who must still throw.
    assert live["to_act"] is None and live["throws_awaited"] == [players[2]]
    assert not any(s["to_act"] for s in live["seats"])
    c.ok("throws", seat=players[2], throws="SSS")
    live = engine.payload(("live", "table:1"))
    assert live is not None
    gambit = split_rounds(dealer_sequence(engine.state.decks[deal]))[0]  # type: ignore[index]
    assert live["dealer_throws"] == [gambit]  # turned over once the last player threw
    assert live["to_act"] == first and live["throws_awaited"] == []
    by_seat = {s["seat"]: s for s in live["seats"]}
    assert by_seat[players[0]]["throws"] == ["RPS"] and by_seat[players[2]]["throws"] == ["SSS"]
    c.ok("undo")  # the last throw taken back: the dealer's gambit is face down again
    live = engine.payload(("live", "table:1"))
    assert live is not None and live["dealer_throws"] == []
    assert c.code("call", seat=first) == "throws_pending"
    c.ok("throws", seat=players[2], throws="PPP")
    c.ok("call", seat=first)
    assert c.code("win", seats=[first]) == "not_allowed"  # betting is not over


def _play_to_showdown(c: Console, dealer: int, throws: dict[int, str], reveal: str | None) -> None:
    """Every player calls or checks through; ``throws``: each player's nine."""
    order = [(dealer + i - 1) % 4 + 1 for i in range(1, 5)]  # left of the dealer ... dealer
    for a, b in [(0, 3), (3, 4), (4, 6), (6, 9)]:
        for seat, t in throws.items():
            c.ok("throws", seat=seat, throws=t[a:b])
        if reveal is not None:
            c.ok("reveal", throws=reveal[a:b])
        for seat in order:
            hand = c.engine.state.tables[c.table].current
            assert hand is not None
            legal = hand.hand.legal(seat)
            c.ok("call" if legal.call else "check", seat=seat)


def test_a_play_off_winner_is_declared_and_checked_and_survives_undo_and_snapshot() -> None:
    config = sample(('dealer = "sequence"', 'dealer = "chosen"'))
    engine = Engine(config, None)
    c = Console(engine, 2)
    deal, dealer = _first_deal(engine, 2)
    c.ok("start", deal=deal)
    players = [s for s in range(1, 5) if s != dealer]
    # Dealer R x9 (revealed by the console). Every player throws PPPPSSRRR: 4-2, +2 each, so
    # the three tie past the points difference and the wins: an RPS play-off decides.
    _play_to_showdown(c, dealer, dict.fromkeys(players, "PPPPSSRRR"), reveal="R" * 9)
    assert c.code("win", seats=[dealer]) == "bad_winner"  # not among the tied
    assert c.code("win", seats=players[:2]) == "bad_winner"  # one play-off winner
    c.ok("win", seats=[players[1]])
    h = engine.state.hand(2, deal)
    assert h is not None and h.status == "complete"
    # Each seat put in the big blind, 100: the play-off winner takes 400, +300.
    assert h.result == {s: (300 if s == players[1] else -100) for s in range(1, 5)}
    fresh = Engine(config, None)
    fresh.restore_snapshot(engine.snapshot())
    assert fresh.payload(("live", "standings")) == engine.payload(("live", "standings"))
    c.ok("reopen", deal=deal)
    c.ok("undo")  # the dealer's last action taken back, then played again
    c.ok("check", seat=dealer)
    c.ok("win", seats=[players[0]])
    h = engine.state.hand(2, deal)
    assert h is not None and h.result is not None and h.result[players[0]] == 300


# ------------------------------------------------------------------ the sample, duplicate


def test_the_sample_session_is_what_the_simulator_plays() -> None:
    config = load_config(SAMPLE)
    decks = load_decks(config, SAMPLE.parent, {})
    made = [
        json.dumps(e, separators=(",", ":"))
        for e in simulate_session(config, decks, random.Random(447))
    ]
    assert made == SESSION.read_text(encoding="utf-8").splitlines()


def test_public_feeds_show_no_throw_until_every_table_played_the_deal() -> None:
    config = load_config(SAMPLE)
    decks = load_decks(config, SAMPLE.parent, {})
    engine = Engine(config, decks)
    engine.start_feed()
    done: dict[int, set[int]] = {d: set() for d in range(1, config.deals + 1)}
    released_seen = 0
    for event in session():
        out = engine.submit(event, event["ts"])
        assert out.ok, out.ack
        for t, table in engine.state.tables.items():
            for d, h in table.hands.items():
                if h.counts:
                    done[d].add(t)
        for d in range(1, config.deals + 1):
            public = engine.payload(("public", f"compare:{d}:1"))
            if len(done[d]) < 4:
                assert public is None and engine.payload(("public", f"deal:{d}")) is None
            else:
                assert public is not None
                released_seen += 1
        for t in engine.state.tables:
            text = json.dumps(engine.payload(("public", f"table:{t}")))
            assert "throws" not in text and "score" not in text
    assert released_seen > 0
    # Duplicate: every table faced the same dealer's throws, turned over as far as it played.
    for d in range(1, config.deals + 1):
        sequence = split_rounds(dealer_sequence(decks[d]))  # type: ignore[index]
        for s in range(1, 5):
            payload = engine.payload(("public", f"compare:{d}:{s}"))
            assert payload is not None
            for row in payload["rows"]:
                shown = row["dealer_throws"]
                assert shown == sequence[: len(shown)] and len(shown) >= 1
                assert isinstance(row["throws"], list) and row["score"] is not None


def test_duplicast_replay_scores_the_sample() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "hub", "replay", "--config", str(SAMPLE), str(SESSION)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "refused" not in run.stderr and "contradict" not in run.stderr
    standings = json.loads(run.stdout)
    assert standings["deals"]["complete"]["A"] == list(range(1, 9))
    teams = standings["like_for_like"]["teams"]
    assert len(teams) == 4 and sum(t["chips"] for t in teams) == 0  # zero-sum
    assert sum(t["points"] for t in teams) == 4 * (4 + 3 + 2 + 1)  # seat points 4..1 per seat
    # The same scores from the engine, with the hands the play-offs decided.
    config = load_config(SAMPLE)
    engine = Engine(config, load_decks(config, SAMPLE.parent, {}))
    for event in session():
        assert engine.submit(event, event["ts"]).ok
    playoffs = [
        h
        for t in engine.state.tables.values()
        for h in t.hands.values()
        if h.settled_by == "declared"
    ]
    assert len(playoffs) == 4
    for h in playoffs:
        _, at_showdown = engine.state.replay_hand(h.deal, h.inputs)  # before the `win`
        assert isinstance(at_showdown, RpsHand) and at_showdown.computed_winners() is None
        ties = [tied for _, tied in at_showdown.pot_leaders() or [] if len(tied) > 1]
        assert ties and set(h.winners or ()) <= set().union(*ties)
    assert engine.payload(("public", "standings"))["like_for_like"] == standings["like_for_like"]  # type: ignore[index]


def test_duplicast_rps_slips_prints_each_deals_dealer_throws() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "hub", "rps-slips", "--config", str(SAMPLE)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    lines = run.stdout.splitlines()
    assert len(lines) == 8
    config = load_config(SAMPLE)
    decks = load_decks(config, SAMPLE.parent, {})
    g, f, t, r = split_rounds(dealer_sequence(decks[2]))  # type: ignore[index]
    assert lines[1] == f"deal 2 (dealer seat 2): gambit {g}  flop {f}  turn {t}  river {r}"
    holdem = subprocess.run(
        [sys.executable, "-m", "hub", "rps-slips", "--config", str(ROOT / "samples/ifp6.toml")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert holdem.returncode == 1 and "needs game" in holdem.stderr


def test_feed_patches_rebuild_every_rps_payload_after_every_event() -> None:
    """The projections move the throws, scores and dealer's rounds exactly as the builders
    make them (the RPS fields ride on the hold'em rows and fields)."""
    from tests.test_projections import Client, assert_projected

    config = load_config(SAMPLE)
    engine = Engine(config, load_decks(config, SAMPLE.parent, {}))
    engine.start_feed()
    client = Client()
    client.subscribe_all(engine)
    for i, event in enumerate(session()):
        assert engine.submit(event, event["ts"]).ok
        engine.tick(event["ts"])
        changed = client.take(engine)
        assert_projected(engine, client, None if i % 50 == 0 else changed)
    assert_projected(engine, client)


@pytest.mark.parametrize("cut", [137, 500])
def test_an_engine_snapshot_mid_session_restores_throws_and_all(cut: int) -> None:
    config = load_config(SAMPLE)
    decks = load_decks(config, SAMPLE.parent, {})
    engine = Engine(config, decks)
    events = session()
    for event in events[:cut]:
        assert engine.submit(event, event["ts"]).ok
    fresh = Engine(config, decks)
    fresh.restore_snapshot(engine.snapshot())
    for event in events[cut:]:
        assert engine.submit(event, event["ts"]).ok
        assert fresh.submit(event, event["ts"]).ok
        if event["type"] == "throws":  # compare mid-round, where the throws matter
            key = ("live", f"table:{event['table']}")
            assert fresh.payload(key) == engine.payload(key)
    for key in engine.topic_keys():
        assert fresh.payload(key) == engine.payload(key), key
