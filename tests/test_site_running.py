"""The results site's running view (``hub.serve.site_running``, docs/site.md): the ranking as it
ran, deal by deal, from the public compare rows of the released deals. Its last step is the
like-for-like standings of the moment (every format: IFP points ranked again after each deal,
IMPs, chips), at every moment of random sessions (a hypothesis property) and at the end of
every sample event (an event of sessions: each session's; duplicate mahjong's teams, scored on
their totals, by their results); it names no unreleased deal, and its CSV holds the same
steps."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.domain.config import parse_config
from hub.engine.core import Engine
from hub.roles.embedded import OVERLAYS
from hub.serve.site import SiteBuilder, engine_reader
from tests.factories import config_data, make_decks
from tests.test_site import deals_named, play_and_check, sample_engine


def standing_blocks(standings: dict[str, Any]) -> dict[str | None, dict[str, Any]]:
    """The like-for-like standings of each running block: each session's, else the one."""
    view = standings["like_for_like"]
    return {None: view, **(view.get("sessions") or {})}


def check_running(builder: SiteBuilder) -> int:
    """The running view's last step of every team and player is its like-for-like standing
    (score, chips, rank); the steps are the released deals in deal order; returns the steps."""
    standings = builder.standings()
    view = builder.running()
    released = builder.event()["released"]
    assert view["released"] == released
    assert deals_named(view) <= set(released)
    by = view["by"]
    blocks = standing_blocks(standings)
    steps = 0
    for block in view["blocks"]:
        want = blocks[block["session"]] if block["session"] is not None else blocks[None]
        assert block["deals"] == sorted(block["deals"])
        teams = {(t["group"], t["team"]): t for t in want["teams"]}
        seats = {(b["group"], b["seat"], r["table"]): r for b in want["seats"] for r in b["rows"]}
        for g in block["groups"]:
            assert g["deals"] == block["deals"]  # (a deal is public for every group or none)
            ranks = []
            for t in g["teams"]:
                assert [s["deal"] for s in t["steps"]] == g["deals"]
                row = teams[(g["group"], t["team"])]
                last = t["steps"][-1]
                assert (last["score"], last["chips"]) == (row[by["teams"]], row["chips"])
                if by["teams"] == view["scoring"]["column"]:  # (else by chips: its own ranks)
                    assert last["rank"] == row["rank"], (g["group"], t["team"])
                moves = [s["move"] for s in t["steps"]]
                assert moves[0] is None
                ranks.append(last["rank"])
                steps += len(t["steps"])
            assert ranks == sorted(ranks)  # (listed by the last rank)
            assert len(g["teams"]) == len({t for (grp, t) in teams if grp == g["group"]})
            for b in g["seats"]:
                for p in b["players"]:
                    row = seats[(g["group"], b["seat"], p["table"])]
                    last = p["steps"][-1]
                    assert (last["score"], last["chips"], last["rank"]) == (
                        row[by["players"]],
                        row["chips"],
                        row["rank"],
                    ), (g["group"], b["seat"], p["table"])
                    assert p["player"] == row["player"]
    # the CSV: the same steps, a line each
    lines = list(csv.DictReader(io.StringIO(builder.running_csv().decode("utf-8-sig"))))
    teams_csv = [r for r in lines if r["kind"] == "team"]
    assert len(teams_csv) == steps
    assert {int(r["deal"]) for r in lines} <= set(released)
    return steps


FORMATS: list[dict[str, Any]] = [
    {},  # ifp-points
    {"format": "imp"},
    {"format": "chips"},
]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from(range(len(FORMATS))), st.sampled_from([1, 2]))
def test_the_last_step_is_the_like_for_like_standings_at_every_moment(
    seed: int, fmt: int, groups: int
) -> None:
    data = config_data(seats=3, deals=4, groups=groups)
    if FORMATS[fmt]:
        data["scoring"] = FORMATS[fmt]
    config = parse_config(data, "<test>")
    last: list[SiteBuilder] = []

    def check(_engine: Engine, builder: SiteBuilder) -> int:
        last[:] = [builder]
        return check_running(builder)

    steps = play_and_check(config, make_decks(config), seed, 11, check)
    (builder,) = last
    full = config.deals * config.seats * groups  # (every team's step on every deal)
    assert check_running(builder) == full and steps >= full
    view = builder.running()
    assert view["by"]["teams"] == view["by"]["players"] == config.scoring.column
    assert view["notes"] == []


@pytest.mark.parametrize("sample", ["ifp6", "mcr", "piecepack", "ifp-event"])
def test_every_sample_event_runs_to_its_standings(sample: str) -> None:
    engine = sample_engine(sample)
    builder = SiteBuilder(engine_reader(engine), OVERLAYS)
    assert check_running(builder) > 0
    view = builder.running()
    moved = [
        s["move"]
        for b in view["blocks"]
        for g in b["groups"]
        for t in g["teams"]
        for s in t["steps"]
    ]
    assert any(m for m in moved)  # (the lead changed hands somewhere: not a flat table)
    if sample == "mcr":  # IMPs scored on the team totals (the game's): the teams by chips
        assert view["by"] == {"teams": "chips", "players": "imps"}
        assert any("adds up their results" in n for n in view["notes"])
    if sample == "ifp-event":  # one block per session, each ranked on its own
        assert [b["session"] for b in view["blocks"]] == ["1", "2", "3"]
        assert [b["deals"][0] for b in view["blocks"]] == [1, 7, 13]
        assert [len(b["groups"]) for b in view["blocks"]] == [2, 2, 1]


def test_ifp_points_are_ranked_again_after_each_deal() -> None:
    """Under IFP points a step is not a sum of deals: after each deal every seat position is
    ranked again on its chips so far (6..1 points, ties shared)."""
    engine = sample_engine("ifp6")
    view = SiteBuilder(engine_reader(engine), OVERLAYS).running()
    (block,) = view["blocks"]
    (group,) = block["groups"]
    for k in range(len(block["deals"])):
        for b in group["seats"]:
            points = sorted(p["steps"][k]["score"] for p in b["players"])
            assert sum(points) == 21  # (6+5+4+3+2+1, shared or not)
            chips = {p["table"]: p["steps"][k]["chips"] for p in b["players"]}
            best = max(chips.values())
            top = [p for p in b["players"] if p["steps"][k]["chips"] == best]
            assert all(p["steps"][k]["rank"] == 1 for p in top)
        team_points = sum(t["steps"][k]["score"] for t in group["teams"])
        assert team_points == 21 * len(group["seats"])


def test_a_penalty_stands_apart_and_the_page_says_so() -> None:
    """A penalty is taken off the standings, not off a deal: the running view's last step is
    before it (by exactly its chips), and ``notes`` tells the page to say so."""
    engine = sample_engine("ifp6")
    builder = SiteBuilder(engine_reader(engine), OVERLAYS)
    assert builder.running()["notes"] == []
    penalty = {"op": "penalty", "table": 1, "seat": 3, "chips": 80, "reason": "slow play"}
    assert engine.control({**penalty, "by": "TD"}, 1e9).ok
    team, _ = engine.state.config.seat_holder(1, 3)
    view = builder.running()
    assert any("Penalties" in n for n in view["notes"])
    (block,) = view["blocks"]
    (group,) = block["groups"]
    last = next(t for t in group["teams"] if t["team"] == team.id)["steps"][-1]
    row = next(t for t in builder.standings()["like_for_like"]["teams"] if t["team"] == team.id)
    assert row["penalty"]["chips"] == 80 and last["chips"] == row["chips"] + 80
