"""Small tournaments built in code, for tests that need a config without a file."""

from __future__ import annotations

from typing import Any

from hub.domain.config import TournamentConfig, parse_config
from hub.domain.deck import DeckOrder, seeded_deck_orders

COLOURS = ["#75AADB", "#009C3B", "#DE2910", "#C60C30", "#FFD100", "#002F6C", "#FF6600", "#6A0DAD"]


def config_data(
    *,
    seats: int = 3,
    deals: int = 4,
    groups: int = 1,
    tid: str = "t-test",
    release_delay: float = 0,
    betting: str = "pot-limit",
    rehearsal_seed: str | None = "test",
    schedule_seed: int | None = 5,
) -> dict[str, Any]:
    teams = []
    group_blocks = []
    table = 0
    for g in range(groups):
        ids = [f"T{g}{i}" for i in range(seats)]
        for i, team in enumerate(ids):
            teams.append(
                {
                    "id": team,
                    "name": f"Team {team}",
                    "colour": COLOURS[i % len(COLOURS)],
                    "players": [f"{team}-p{k + 1}" for k in range(seats)],
                }
            )
        tables = list(range(table + 1, table + seats + 1))
        table += seats
        group_blocks.append({"id": f"G{g}", "tables": tables, "teams": ids})
    data: dict[str, Any] = {
        "tournament": {
            "id": tid,
            "name": "Test event",
            "seats": seats,
            "deals": deals,
            "small_blind": 50,
            "big_blind": 100,
            "betting": betting,
            "release_delay": release_delay,
        },
        "teams": teams,
        "groups": group_blocks,
        "draw": {"method": "cyclic", "seed": 3},
    }
    if schedule_seed is not None:
        data["schedule"] = {"method": "random", "seed": schedule_seed}
    if rehearsal_seed is not None:
        data["decks"] = {"rehearsal_seed": rehearsal_seed}
    return data


def make_config(**kwargs: Any) -> TournamentConfig:
    return parse_config(config_data(**kwargs), "<test>")


def make_decks(config: TournamentConfig, seed: str = "test") -> dict[int, DeckOrder]:
    return seeded_deck_orders(seed, config.deals)


def console_event(
    tournament: str, table: int, seq: int, kind: str, **fields: Any
) -> dict[str, Any]:
    """A console event of the console ``table{table}``."""
    return {
        "v": 1,
        "tournament": tournament,
        "table": table,
        "console": f"table{table}",
        "seq": seq,
        "type": kind,
        **fields,
    }


def without_seqs(payloads: dict[Any, Any]) -> dict[Any, Any]:
    """Topic payloads less what a refusal moves by design: the operator desk (it lists
    refusals) and each console state's ``consoles`` (a refusal uses up its console's seq)."""
    out = {k: v for k, v in payloads.items() if k[-1] != "ops"}
    for key, payload in out.items():
        if key[-1].startswith("console:") and isinstance(payload, dict):
            out[key] = {k: v for k, v in payload.items() if k != "consoles"}
    return out
