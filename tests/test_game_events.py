"""Each game declares its console events in its own folder, and the engine's union, decoders and
handlers are built from those declarations (hub.domain.games.registry)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Literal

import pytest

from hub.domain.console_event import SHARED_EVENTS, SHARED_HANDLERS, ConsoleEvent, Positive
from hub.domain.errors import Rejection
from hub.domain.games import registry
from hub.engine import events as engine_events
from hub.engine.tournament import HANDLERS


@pytest.mark.parametrize("name", sorted(registry.games))
def test_a_game_plays_exactly_the_events_it_declares(name: str) -> None:
    """A type a game does not declare is refused by it (``Game.refusal``), word for word as
    before; one it declares it plays, with a handler."""
    game = registry.games[name]
    declared = {cls.type for cls in game.events}
    assert set(game.handlers) == declared
    assert {cls.type for cls in SHARED_EVENTS} <= declared
    for kind in registry.EVENT_CLASSES:
        assert (registry.refusal(game, kind) is None) == (kind in declared), (name, kind)


MCR_BETTING = ("fold", "check", "call", "bet", "raise", "win")
# Each game's refusal of another game's event, word for word as the games once spelled them
# (now derived from the registry: the declaring game's `foreign` and `title`).
REFUSALS = {
    ("holdem", "result"): "'result' is a mahjong event: this tournament plays poker",
    ("holdem", "throws"): "'throws' belongs to RPS Poker, not this game",
    ("holdem", "reveal"): "'reveal' belongs to RPS Poker, not this game",
    ("piecepack-holdem", "result"): "'result' is a mahjong event: this tournament plays poker",
    ("piecepack-holdem", "throws"): "'throws' belongs to RPS Poker, not this game",
    ("piecepack-holdem", "reveal"): "'reveal' belongs to RPS Poker, not this game",
    # a poker event at a mahjong table: MCR plays only the shared events and its result (it
    # once declared hold'em's, whose betting its hand refused in the first of these sentences)
    **{("mcr", k): f"mahjong has no betting: send a 'result', not '{k}'" for k in MCR_BETTING},
    ("mcr", "exposed"): "'exposed' is a card error: mahjong has none",
    ("mcr", "early"): "'early' is a card error: mahjong has none",
    ("mcr", "throws"): "'throws' belongs to RPS Poker, not this game",
    ("mcr", "reveal"): "'reveal' belongs to RPS Poker, not this game",
    ("rps-poker", "exposed"): "'exposed' is a card error: RPS Poker has none",
    ("rps-poker", "early"): "'early' is a card error: RPS Poker has none",
    ("rps-poker", "result"): "'result' is a mahjong event: this tournament plays poker",
}


def test_a_games_refusals_are_worded_as_they_always_were() -> None:
    own = {"holdem", "piecepack-holdem", "mcr", "rps-poker"}
    got = {
        (name, kind): words
        for name, game in registry.games.items()
        if name in own
        for kind in registry.EVENT_CLASSES
        if (words := registry.refusal(game, kind)) is not None
        and kind in {k for g in own for k in registry.games[g].handlers}
    }
    assert got == REFUSALS


def test_a_games_own_events_live_in_its_folder() -> None:
    owners = {"result": "mahjong", "throws": "rps", "reveal": "rps", "win": "holdem"}
    for kind, folder in owners.items():
        module = registry.EVENT_CLASSES[kind].__module__
        assert module == f"hub.domain.games.{folder}.events", kind
    for cls in SHARED_EVENTS:
        assert cls.__module__ == "hub.domain.console_event"


def test_the_engine_reads_the_registry() -> None:
    assert set(HANDLERS) == set(registry.EVENT_CLASSES) == engine_events.EVENT_TYPES
    assert {"fold", "check", "call", "bet", "raise"} == engine_events.ACTION_TYPES
    assert {"exposed", "early"} == engine_events.DEALER_ERRORS
    assert all(issubclass(c, ConsoleEvent) for c in registry.EVENT_CLASSES.values())


def test_two_games_cannot_apply_one_type_two_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    rps = registry.games["rps-poker"]
    monkeypatch.setattr(rps, "handlers", {**rps.handlers, "fold": "win"})
    with pytest.raises(TypeError, match="'fold' applied two ways"):
        registry._events()


class Flip(ConsoleEvent, tag="flip", frozen=True, kw_only=True):
    """A toy game's own event."""

    seat: Positive
    side: Literal["heads", "tails"] = "heads"


def test_a_game_added_later_brings_its_events_to_the_decoders_and_handlers() -> None:
    import msgpack

    from hub.engine.events import decode_event, parse_event

    toy = SimpleNamespace(
        name="toy-flip",
        events=(*SHARED_EVENTS, Flip),
        handlers={**SHARED_HANDLERS, "flip": "game_input"},
    )
    head = {"v": 1, "tournament": "t", "table": 1, "console": "c", "seq": 1}
    raw = {**head, "type": "flip"}
    with pytest.raises(Rejection, match="unknown event type 'flip'"):
        parse_event({**raw, "seat": 2})
    registry.register(toy)  # type: ignore[arg-type]
    try:
        assert parse_event({**raw, "seat": 2}) == Flip(**head, seat=2)  # type: ignore[arg-type]
        assert decode_event(msgpack.packb({**raw, "seat": 2})) == parse_event({**raw, "seat": 2})
        with pytest.raises(Rejection, match="a 'flip' event needs field 'seat'"):
            parse_event(raw)
        with pytest.raises(Rejection) as refused:
            parse_event({**raw, "seat": 2, "side": "edge"})
        assert refused.value.message == (
            "a 'flip' event is malformed: Invalid enum value 'edge' - at `$.side`"
        )
        with pytest.raises(Rejection, match="field 'fan' belongs to a 'result' event"):
            parse_event({**raw, "seat": 2, "fan": 8})
        assert HANDLERS["flip"] is HANDLERS["throws"]
    finally:
        del registry.games["toy-flip"]
        registry._refresh()
    assert "flip" not in HANDLERS and "flip" not in engine_events.EVENT_TYPES


def test_an_events_type_is_its_tag_declared_once() -> None:
    """``type`` is derived from the class's tag (``tag="bet"``), never written beside it: a
    class body that sets it again could disagree with the wire."""
    import ast
    import inspect

    for kind, cls in registry.EVENT_CLASSES.items():
        assert cls.type == kind == cls.__struct_config__.tag
        tree = ast.parse(inspect.getsource(cls))
        body = tree.body[0]
        assert isinstance(body, ast.ClassDef)
        own = [n for n in body.body if isinstance(n, ast.Assign | ast.AnnAssign)]
        each = [t for n in own for t in (n.targets if isinstance(n, ast.Assign) else [n.target])]
        targets = {t.id for t in each if isinstance(t, ast.Name)}
        assert "type" not in targets, cls
    assert (
        Flip.type == "flip"
        and Flip(v=1, tournament="t", table=1, console="c", seq=1, seat=1).type == "flip"
    )
