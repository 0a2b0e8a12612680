"""Simulated sessions: bots at every table, producing the console events an official would enter.

Tables interleave at random, each through its own deal order, so a generated session looks like
a real one to the hub: deals complete at different times at different tables. Every event is
checked by a private `Engine` as it is generated, so the output is legal by construction. The
random generator is a parameter: the same seed gives the same session.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

from hub.domain.bots import choose_action
from hub.domain.config import TournamentConfig
from hub.domain.deck import DeckOrder
from hub.engine.core import Engine
from hub.engine.tournament import IN_PROGRESS, SHOWDOWN, HandState

STYLES = ("tight", "loose", "aggressive", "calling-station")


def console_name(table: int) -> str:
    return f"table{table}"


def simulate_session(
    config: TournamentConfig,
    decks: Mapping[int, DeckOrder] | None,
    rng: random.Random,
    *,
    tables: list[int] | None = None,
    corrections: bool = True,
    mean_gap: float = 4.0,
) -> Iterator[dict[str, Any]]:
    """Yield the events of a whole session (every table plays every deal), in arrival order.
    With stages, a table of a later stage starts once the stage before is complete.

    With `corrections`, a few hands get an `undo` of a mistyped action, one hand is voided as a
    misdeal (after its first action, before the second), and one showdown is first declared
    wrongly and then confirmed by the official.
    """
    engine = Engine(config, decks, release_delay=0.0, program=False)
    game = engine.state.game
    chosen = sorted(tables or engine.state.tables)
    styles = {(t, s): rng.choice(STYLES) for t in chosen for s in range(1, config.seats + 1)}
    seqs = dict.fromkeys(chosen, 0)
    clock = 0.0
    done: set[str] = set()  # the once-per-session corrections made: "void", "dispute"

    def emit(table: int, kind: str, **fields: Any) -> dict[str, Any]:
        seqs[table] += 1
        event = {
            "v": 1,
            "tournament": config.id,
            "table": table,
            "console": console_name(table),
            "seq": seqs[table],
            "type": kind,
            "ts": round(clock, 3),
            **{k: v for k, v in fields.items() if v is not None},
        }
        outcome = engine.submit(event, clock)
        if not outcome.ok:  # pragma: no cover - a bug in the bots or the engine
            raise AssertionError(f"simulated event refused: {event} -> {outcome.ack}")
        return event

    active = list(chosen)
    while active:
        table = rng.choice(active)
        clock += rng.expovariate(1.0 / mean_gap) if mean_gap > 0 else 0.0
        state = engine.state.tables[table]
        current = state.current
        if current is None:
            nxt = state.next_deal()
            if nxt is None:
                active.remove(table)
                continue
            if not engine.state.stage_open(nxt):  # a later stage waits for the one before
                if all(_waiting(engine, t) for t in active):  # pragma: no cover - a bug
                    raise AssertionError(f"every table waits for a stage: {active}")
                continue
            yield emit(table, "start", deal=nxt)
            continue
        own = game.bot_events(config, current, rng, corrections, done)
        if own is not None:  # the game's own bots: mahjong's results, RPS Poker's throws
            for kind, fields in own:
                yield emit(table, kind, **fields)
            continue
        if current.status == SHOWDOWN:
            events = _showdown_events(current, corrections, done)
        else:
            events = _action_events(current, rng, styles, table, corrections, done)
        for kind, fields in events:
            yield emit(table, kind, **fields)


Events = list[tuple[str, dict[str, Any]]]
"""The events one step of a table makes: (type, fields), in the order they are entered."""


def _showdown_events(current: HandState, corrections: bool, done: set[str]) -> Events:
    """The official's ``win`` at a showdown; once a session (``corrections``), a wrong ``win``
    first, then the ``confirm`` of the deal."""
    hand = current.hand
    computed = hand.computed_winners()
    if computed is None:
        # No cards known: the official declares a plausible winner among those left.
        pots = hand.pots()
        winners = sorted({min(p.eligible) for p in pots if p.eligible})
    else:
        winners = sorted(computed)
    if corrections and "dispute" not in done and computed is not None:
        contenders = [s for p in hand.pots() for s in p.eligible if s not in computed]
        if contenders:
            done.add("dispute")
            return [("win", {"seats": [contenders[0]]}), ("confirm", {"deal": current.deal})]
    return [("win", {"seats": winners})]


def _action_events(
    current: HandState,
    rng: random.Random,
    styles: Mapping[tuple[int, int], str],
    table: int,
    corrections: bool,
    done: set[str],
) -> Events:
    """The bot's action of the seat to act; with ``corrections``, once a session a misdeal
    (``void``) after the first action, and now and then a call or check undone."""
    hand = current.hand
    assert current.status == IN_PROGRESS and hand.to_act is not None
    seat = hand.to_act
    if corrections and "void" not in done and len(current.inputs) == 1 and rng.random() < 0.05:
        done.add("void")
        return [("void", {})]
    kind, amount = choose_action(hand, seat, rng, styles[(table, seat)])
    if corrections and rng.random() < 0.01 and kind in ("call", "check"):
        return [(kind, {"seat": seat, "amount": amount if kind == "call" else None}), ("undo", {})]
    return [(kind, {"seat": seat, "amount": amount})]


def _waiting(engine: Engine, table: int) -> bool:
    """Is the table idle before a deal of a stage that is not open yet?"""
    state = engine.state.tables[table]
    nxt = state.next_deal()
    return state.current is None and nxt is not None and not engine.state.stage_open(nxt)
