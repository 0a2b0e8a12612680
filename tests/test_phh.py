"""PHH in and out: ``duplicast phh-check`` on real and never-seen hands, the export (CLI and
``/api/export/phh``) loaded back by PokerKit, and PHH hands played through the hub on Redis."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import tomllib
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from pokerkit import (
    Automation,
    BettingStructure,
    HandHistory,
    NoLimitTexasHoldem,
    PotLimitPokerMixin,
    TexasHoldemMixin,
    UnfixedLimitHoldem,
)

from hub.cli.main import main
from hub.domain.phh import BETTING_FIELD, finishing_stacks, read_phh, replay
from hub.engine.core import Engine
from hub.engine.phh_export import bundle, collect, render
from hub.files.phh import check_folder, console_events
from hub.serve.http import create_app
from tests.hubharness import (
    OPERATOR,
    SAMPLE,
    SESSION,
    auth,
    ingest_hub,
    offline,
    session_events,
    unique_tournament,
)

DATA = Path(__file__).resolve().parent / "data" / "phh"
PLURIBUS = DATA / "pluribus"
FAMOUS = DATA / "famous"
FULL_DECK = [r + s for r in "23456789TJQKA" for s in "cdhs"]


def run_cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


# ------------------------------------------------------------------ phh-check on real hands


def test_phh_check_replays_every_pluribus_hand_to_the_chip(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = run_cli("phh-check", str(PLURIBUS), capsys=capsys)
    lines = out.splitlines()
    assert lines[-1] == "488 hands, 0 mismatches" and code == 0
    # The one file that splits a pot into half chips is named, not passed over in silence.
    assert lines[0].startswith("finishing_stacks in fractions of a chip") and "32/23.phh" in out


def test_famous_hands_replay_to_the_chip_and_the_other_variants_are_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Dwan v Ivey (antes, one unknown hand that folds): the file has no finishing_stacks, so
    # the chips are set against PokerKit's replay of the same file, and the televised outcome.
    text = (FAMOUS / "dwan-ivey-2009.phh").read_text()
    hand = replay(read_phh(tomllib.loads(text)))
    state = list(HandHistory.loads(text))[-1]
    assert finishing_stacks(hand) == list(state.stacks) == [572100, 1997500, 1109500]
    code, out = run_cli("phh-check", str(FAMOUS), capsys=capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("cannot replay 4 hands: ")
    for name, variant in [
        ("alice-carol-wikipedia.phh", "FB"),
        ("antonius-blom-2009.phh", "PO"),
        ("arieh-yockey-2019.phh", "F2L3D"),
        ("phua-xuan-2019.phh", "NS"),
    ]:
        assert f"{name} (variant '{variant}'" in lines[0]
    assert lines[1] == "replayed, but no finishing_stacks to check, 1 hands: dwan-ivey-2009.phh"
    assert lines[-1] == "0 hands, 0 mismatches"


def test_mismatches_are_listed_and_make_the_exit_code_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = (PLURIBUS / "30" / "0.phh").read_text()
    (tmp_path / "good.phh").write_text(good)
    data = tomllib.loads(good)
    stacks = data["finishing_stacks"]
    (tmp_path / "chips.phh").write_text(
        good.replace(str(stacks).replace("'", ""), str([stacks[0] + 1, *stacks[1:]]))
    )
    (tmp_path / "refused.phh").write_text(good.replace("'p5 cbr 225'", "'p5 cbr 150'"))
    unknown = (FAMOUS / "dwan-ivey-2009.phh").read_text().replace("Ac2d", "????")
    (tmp_path / "unknown.phh").write_text(unknown)
    (tmp_path / "broken.phh").write_text("variant = ")
    code, out = run_cli("phh-check", str(tmp_path), capsys=capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "MISMATCH chips.phh: p1 ends with 9950, the file says 9951"
    assert lines[1].startswith(
        "MISMATCH refused.phh: action 3 (p5 cbr 150) refused: raise to 150 is below"
    )
    assert lines[2].startswith("cannot replay 2 hands: broken.phh (cannot read")
    assert "unknown.phh (hole cards of p1 unknown at showdown)" in lines[2]
    assert lines[-1] == "3 hands, 2 mismatches"


# ------------------------------------------------------------------ hands never seen before


class PotLimitTexasHoldem(PotLimitPokerMixin, TexasHoldemMixin, UnfixedLimitHoldem):
    betting_structure: ClassVar[BettingStructure] = BettingStructure.POT_LIMIT


AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)


def pokerkit_hand(rng: random.Random) -> str:
    """A random hand played and written as PHH by PokerKit alone: 2-9 players, random stacks,
    blinds and antes, no-limit or pot-limit (written as NT with ``_betting``)."""
    while True:
        try:
            return _pokerkit_hand(rng)
        except AssertionError:  # PokerKit trips on its own assertions in a few odd spots
            continue


def _pokerkit_hand(rng: random.Random) -> str:
    n = rng.randint(2, 9)
    bb = rng.choice([2, 20, 100, 400, 1000])
    sb = rng.randint(1, bb)
    ante = rng.choice([0, 0, 1, bb // 4 or 1, bb])
    trimming = rng.random() < 0.5
    antes = (
        [ante] * n if rng.random() < 0.5 else [ante if rng.random() < 0.5 else 0 for _ in range(n)]
    )
    stacks = [rng.randint(1, rng.choice([5, 40, 200]) * bb) for _ in range(n)]
    pot_limit = rng.random() < 0.5
    args = (AUTOMATIONS, trimming, antes, (sb, bb), bb)
    game: Any = (PotLimitTexasHoldem if pot_limit else NoLimitTexasHoldem)(*args)
    state = game(stacks, n)
    deck = FULL_DECK[:]
    rng.shuffle(deck)
    while state.status:
        if state.can_burn_card():
            state.burn_card("??")
        elif state.can_deal_hole():
            state.deal_hole(deck.pop() + deck.pop())
        elif state.can_deal_board():
            state.deal_board("".join(deck.pop() for _ in range(state.board_dealing_count or 0)))
        elif state.actor_index is not None:
            call = state.checking_or_calling_amount or 0
            roll = rng.random()
            if call and roll < 0.25:
                state.fold()
            elif state.can_complete_bet_or_raise_to() and roll > 0.6:
                low = state.min_completion_betting_or_raising_to_amount
                high = state.max_completion_betting_or_raising_to_amount
                assert low is not None and high is not None
                state.complete_bet_or_raise_to(rng.choice([low, high, rng.randint(low, high)]))
            else:
                state.check_or_call()
        else:
            break
    fields: dict[str, Any] = {
        "ante_trimming_status": trimming,  # from_game_state does not take it from the game
        "finishing_stacks": list(state.stacks),
    }
    if pot_limit:
        fields[BETTING_FIELD] = "pot-limit"
    return str(HandHistory.from_game_state(NoLimitTexasHoldem(*args), state, **fields).dumps())


def test_phh_check_on_hands_pokerkit_made_up_finds_no_mismatch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(20261123)
    burned = 0
    for i in range(300):
        while True:
            text = pokerkit_hand(rng)
            data = tomllib.loads(text)
            if sum(data["finishing_stacks"]) == sum(data["starting_stacks"]):
                break
            # PokerKit burns a side pot whose every player folded: that file loses chips, and
            # phh-check rightly reports it. Keep such hands out of the 300 (and count them).
            burned += 1
            assert check_hand_mismatches(text)
        (tmp_path / f"{i:03d}.phh").write_text(text)
    assert burned < 15
    report = check_folder(tmp_path)
    assert report.unreplayable == [] and report.unchecked == [] and report.fractional == []
    assert report.mismatches == []
    code, out = run_cli("phh-check", str(tmp_path), capsys=capsys)
    assert (code, out) == (0, "300 hands, 0 mismatches\n")


# ------------------------------------------------------------------ export


def check_hand_mismatches(text: str) -> list[str]:
    from hub.files.phh import CheckReport, check_hand

    report = CheckReport()
    check_hand("burned.phh", tomllib.loads(text), report)
    return report.mismatches


def _session_engine(events: list[dict[str, Any]] | None = None) -> Engine:
    config, decks = unique_tournament("phh")
    return offline(config, decks, events if events is not None else session_events(config.id))


def _pokerkit_stacks(text: str) -> list[int]:
    state = list(HandHistory.loads(text))[-1]
    return [int(s) for s in state.stacks]


def test_export_every_completed_hand_and_pokerkit_replays_it_to_the_same_stacks() -> None:
    engine = _session_engine()
    hands = collect(engine.state)
    expected = sum(
        1 for t in engine.state.tables.values() for h in t.hands.values() if h.status == "complete"
    )
    assert len(hands) == expected > 60
    rendered = render(hands, engine.state.config.name)
    assert rendered.skipped == []
    for h, text in rendered.hands:
        data = tomllib.loads(text)
        assert (data["table"], data["hand"]) == (h.table, h.deal)
        assert data["variant"] == "NT" and data[BETTING_FIELD] == "pot-limit"
        n = h.spec.seats
        order = [(h.spec.button + i) % n + 1 for i in range(n)]
        assert data["seats"] == order
        assert data["players"] == [h.players[s - 1] for s in order]
        ours = [h.spec.cap + h.result[s] for s in order]
        assert data["finishing_stacks"] == ours == _pokerkit_stacks(text)
        # and our own reader replays our file under the pot limit to the same chips
        phh = read_phh(data)
        assert phh.spec.pot_limit and finishing_stacks(replay(phh)) == ours
    everything = list(HandHistory.loads_all(bundle(rendered)))
    assert len(everything) == len(hands)


# Names a venue meets, some of which PokerKit's TOML literal strings cannot hold: three
# apostrophes in a row, a control character (a tab pasted from a spreadsheet, a newline).
AWKWARD_NAMES = (
    "O'Brien",
    "''' triple",
    'Jean "JJ" Dupont',
    "back\\slash",
    "tab\there",
    "two\nlines",
    "\u0645\u062d\u0645\u062f \u0639\u0644\u064a",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "Jones'",
    "'Quoted'",
)


def test_export_writes_any_name_as_toml_that_reads_back_to_the_same_text() -> None:
    """A PHH file is TOML: a player or event name holding ''' or a control character made
    PokerKit's writer emit a file no reader loads (the export and the .phhs bundle unreadable)."""
    engine = _session_engine()
    hands = collect(engine.state)[:4]
    n = len(AWKWARD_NAMES)
    hands = [
        dataclasses.replace(h, players=tuple(AWKWARD_NAMES[(i + k) % n] for k in range(6)))
        for i, h in enumerate(hands)
    ]
    event = "IFP \"Names\" '''26''' \\ \t test"
    rendered = render(hands, event)
    assert rendered.skipped == []
    for h, text in rendered.hands:
        data = tomllib.loads(text)
        order = [(h.spec.button + i) % h.spec.seats + 1 for i in range(h.spec.seats)]
        assert data["players"] == [h.players[s - 1] for s in order]
        assert data["event"] == event
        assert read_phh(data).players == tuple(data["players"])
        assert data["finishing_stacks"] == _pokerkit_stacks(text)
    loaded = list(HandHistory.loads_all(bundle(rendered)))
    assert [h.players for h in loaded] == [tomllib.loads(t)["players"] for _, t in rendered.hands]
    # an ordinary name is written as PokerKit writes it (files exported before do not change)
    assert any("'''O'Brien'''" in text for _, text in rendered.hands)


def test_export_cli_writes_a_folder_or_a_bundle_that_phh_check_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run_cli(
        "export", "--phh", "--config", str(SAMPLE), str(SESSION), "--out", str(tmp_path / "d"),
        capsys=capsys,
    )  # fmt: skip
    assert code == 0 and out.startswith(f"{len(list((tmp_path / 'd').glob('*.phh')))} hands")
    assert (tmp_path / "d" / "table-01-deal-01.phh").exists()
    code, out = run_cli(
        "export", "--phh", "--config", str(SAMPLE), str(SESSION), "--out", str(tmp_path / "b.phhs"),
        capsys=capsys,
    )  # fmt: skip
    assert code == 0
    folder_hands = len(list((tmp_path / "d").glob("*.phh")))
    assert len(list(HandHistory.loads_all((tmp_path / "b.phhs").read_text()))) == folder_hands
    code, out = run_cli("phh-check", str(tmp_path), capsys=capsys)
    assert out.splitlines()[-1] == f"{2 * folder_hands} hands, 0 mismatches" and code == 0


class _EngineSource:
    """Enough of a FeedSource to serve the export: the ingest's engine and nothing else."""

    def __init__(self, engine: Engine | None) -> None:
        from hub.serve.fanout import Fanout
        from hub.serve.feed import IngestFeed

        if engine is not None:
            self.engine = engine
        self.tournament = "phh-test"
        self.store = IngestFeed()
        self.fanout = Fanout(self.store)

    def ready(self) -> bool:
        return True

    def check_topic(self, role: str, topic: object) -> str | None:
        return None

    async def control(self, command: dict[str, Any]) -> dict[str, Any]:
        return {"ok": False}

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def _get(source: _EngineSource, token: str | None) -> httpx.Response:
    app = create_app(source, auth=auth(), manage_source=False)  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=app)
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(transport=transport, base_url="http://hub") as client:
        return await client.get("/api/export/phh", headers=headers)


async def test_export_route_gives_the_public_released_deals_and_the_operator_everything() -> None:
    config, decks = unique_tournament("phh")
    events = session_events(config.id)
    engine = Engine(config, decks)
    for event in events[: len(events) // 2]:  # half the session: some deals not yet released
        assert engine.submit(event, 0.0).ok
    engine.tick(float("inf"))
    source = _EngineSource(engine)
    everything = await _get(source, OPERATOR)
    public = await _get(source, None)
    assert everything.status_code == public.status_code == 200
    assert everything.headers["content-disposition"] == 'attachment; filename="phh-test.phhs"'
    completed = collect(engine.state)
    released = [h for h in completed if engine.release.released(h.group, h.deal)]
    assert 0 < len(released) < len(completed)
    op_hands = list(HandHistory.loads_all(everything.text))
    public_hands = list(HandHistory.loads_all(public.text))
    assert len(op_hands) == len(completed) and len(public_hands) == len(released)
    assert {(h.table, h.hand) for h in public_hands} == {(h.table, h.deal) for h in released}
    assert (await _get(source, "wrong")).status_code == 401
    on_an_edge = await _get(_EngineSource(None), OPERATOR)
    assert on_an_edge.status_code == 404 and "ingest" in on_an_edge.json()["message"]


# ------------------------------------------------------------------ import through the hub


def test_a_phh_hand_becomes_the_console_events_that_replay_it() -> None:
    config, _ = unique_tournament("phh")
    config = dataclasses.replace(config, betting="no-limit", decks=None)
    data = tomllib.loads((PLURIBUS / "30" / "12.phh").read_text())  # goes to showdown
    deal = config.deal_orders[2][0]
    events = console_events(config, read_phh(data), table=2, deal=deal, console="table2")
    assert [e["type"] for e in events][:2] == ["start", "fold"] and events[-1]["type"] == "win"
    for seq, event in enumerate(events, 1):
        event["seq"] = seq
    engine = offline(config, None, events)
    hand = engine.state.hand(2, deal)
    assert hand is not None and hand.status == "complete"
    button = config.buttons[deal]
    expected = {
        (button + i) % 6 + 1: data["finishing_stacks"][i] - data["starting_stacks"][i]
        for i in range(6)
    }
    assert hand.result == expected


def test_an_import_that_does_not_fit_the_tournament_is_refused() -> None:
    from hub.files.phh import ImportRefused

    config, _ = unique_tournament("phh")  # pot-limit: Pluribus's no-limit raises do not fit
    data = tomllib.loads((PLURIBUS / "30" / "10.phh").read_text())
    with pytest.raises(ImportRefused, match="over the pot limit"):
        console_events(config, read_phh(data), table=1, deal=1, console="c1")
    dwan = tomllib.loads((FAMOUS / "dwan-ivey-2009.phh").read_text())
    with pytest.raises(ImportRefused, match="3 players, the tournament seats 6"):
        console_events(config, read_phh(dwan), table=1, deal=1, console="c1")


@pytest.mark.redis
async def test_console_replay_phh_plays_real_hands_through_the_hub_on_redis(
    redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hub.bus.redis import RedisBus

    config, _ = unique_tournament("phh")
    config = dataclasses.replace(config, betting="no-limit", decks=None)
    text = SAMPLE.read_text().replace('id = "ifp-demo"', f'id = "{config.id}"')
    text = text.replace('betting = "pot-limit"', 'betting = "no-limit"')
    config_path = tmp_path / "event.toml"
    config_path.write_text(text.split("[decks]")[0])
    files = [PLURIBUS / "30" / "12.phh", PLURIBUS / "30" / "0.phh"]
    bus = RedisBus(redis_url)
    await bus.connect()
    try:
        async with ingest_hub(bus, config, None) as (source, server):
            for _ in range(100):
                if source.ready():
                    break
                await asyncio.sleep(0.05)
            argv = ["console", "--redis", redis_url, "replay", "--phh", *map(str, files)]
            argv += ["--config", str(config_path), "--table", "3", "--no-outbox"]
            code = await asyncio.to_thread(main, argv)
            assert code == 0
            assert "0 rejected" in capsys.readouterr().out
            order = config.deal_orders[3]
            async with httpx.AsyncClient(base_url=server.url) as client:
                headers = {"authorization": f"Bearer {OPERATOR}"}
                table = (await client.get("/api/tables/3", headers=headers)).json()["data"]
                assert table["completed"] == 2 and table["last_deal"] == order[1]
                deal = (await client.get(f"/api/deals/{order[0]}", headers=headers)).json()
            row = next(r for r in deal["data"]["tables"] if r["table"] == 3)
            data = tomllib.loads(files[0].read_text())
            button = config.buttons[order[0]]
            assert row["status"] == "complete"
            assert row["result"] == {
                str((button + i) % 6 + 1): data["finishing_stacks"][i] - data["starting_stacks"][i]
                for i in range(6)
            }
    finally:
        with contextlib.suppress(Exception):
            names = ("journal", "topics", "consoles", "rejected", "ingest", "ingest:token")
            await bus.delete(*[f"dup:{config.id}:{n}" for n in names])
        await bus.close()
