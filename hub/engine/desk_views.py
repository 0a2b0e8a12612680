"""The desk's payloads: the operator's view (refusals, releases, links, hands in play) and the
session clock. Split from ``hub.engine.views`` (the payloads of hands and standings)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hub.domain.clock import Clock
from hub.domain.config import TournamentConfig
from hub.engine.hands import HandState, TableState
from hub.engine.tournament import TournamentState
from hub.engine.views import roster

__all__ = ["clock_payload", "dispute_row", "ops_payload", "ops_row"]


def ops_payload(
    state: TournamentState,
    rejections: Iterable[dict[str, Any]],
    release: list[dict[str, Any]],
    now: float,
    links: Mapping[str, bool] | None = None,
) -> dict[str, Any]:
    """The operator's desk. ``links``: console -> whether its last acknowledgement reached a
    listener (the console is connected); a table's ``connected`` is None until a console wrote."""
    links = links or {}
    disputed = state.disputes()
    rejections = list(rejections)
    tables = []
    for table in state.tables.values():
        waiting = [h for h in disputed if h.table == table.table]
        refused = sum(1 for r in rejections if r.get("table") == table.table)
        tables.append(ops_row(table, waiting, links, refused))
    return {
        "at": now,
        "tables": tables,
        "rejections": rejections[-50:],
        "disputes": [dispute_row(state, h) for h in disputed],
        "corrections": state.corrections[-50:],
        "penalties": [{"id": n, **p} for n, p in enumerate(state.penalties, 1)][-50:],
        "release": release,
    }


def ops_row(
    table: TableState, waiting: list[HandState], links: Mapping[str, bool], refused: int
) -> dict[str, Any]:
    """A table's row of the operator's desk (``waiting``: its disputed hands; ``refused``:
    how many of the refusals listed name it)."""
    current = table.current
    if current is not None:
        deal_no, status = current.deal, current.status
    elif waiting:
        deal_no, status = waiting[0].deal, waiting[0].status
    else:
        deal_no, status = None, "idle"
    return {
        "table": table.table,
        "group": table.group,
        "console": table.console,
        "connected": links.get(table.console) if table.console else None,
        "last_event_at": table.last_event_at,
        "last_seq": table.last_seq,
        "deal": deal_no,
        "last_deal": table.last_finished,  # what an idle live table still shows
        "status": status,
        "completed": table.completed,
        "rejections": refused,
    }


def dispute_row(state: TournamentState, h: HandState) -> dict[str, Any]:
    """A disputed hand on the operator's desk (with the game's own words, if it has them:
    mahjong's ``reason`` and typed fan against the tiles')."""
    own = state.game.dispute(h) or {}
    return {
        "table": h.table,
        "deal": h.deal,
        "status": h.status,
        "pot": h.hand.pot,
        "declared": list(h.declared or ()),
        "computed": list(h.computed or ()),
        "players": [
            {k: row[k] for k in ("seat", "team", "code", "player")}
            for row in roster(state, h.table, h.deal)
            if row["seat"] not in h.hand.folded
        ],
        **own,
    }


def clock_payload(config: TournamentConfig, clock: Clock | None, at: float) -> dict[str, Any]:
    """The session clock as read at ``at`` (when it last changed). While it runs, what is left
    at any later moment is ``level_left - (now - as_of)`` (wall-clock seconds), so the payload
    changes only when the operator moves the clock or a level ends; overlays count down
    themselves."""
    if clock is None:
        return {"configured": False}
    spec = clock.spec
    reading = clock.read(at)
    names = spec.names()
    i = reading.level
    following = i + 1 if i + 1 < len(spec.levels) else None
    return {
        "configured": True,
        "status": reading.status,
        "level": i + 1,
        "levels": len(spec.levels),
        "name": names[i],
        "break": spec.levels[i].is_break,
        "small_blind": config.small_blind,
        "big_blind": config.big_blind,
        "level_left": round(reading.level_left, 3),
        "session_left": round(reading.session_left, 3),
        "as_of": at,
        "next": None
        if following is None
        else {
            "name": names[following],
            "minutes": round(spec.levels[following].seconds / 60, 2),
            "break": spec.levels[following].is_break,
        },
        "on_time_up": spec.on_time_up,
        "schedule": [
            {"name": n, "minutes": round(lv.seconds / 60, 2), "break": lv.is_break}
            for n, lv in zip(names, spec.levels, strict=True)
        ],
    }
