"""Games are plug-ins: one folder each under hub/domain/games, behind one `Game` protocol.

Nothing outside those folders asks which game is played, and a new game is one folder and one
line of the registry: the config accepts it, the engine plays it, the views carry its fields.
"""

from __future__ import annotations

import random
import re
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest

from hub.domain.config import ConfigError, parse_config
from hub.domain.dealing import Dealt
from hub.domain.games import base, registry
from hub.domain.games.base import DealtPieces
from hub.domain.games.holdem.game import PokerGame, holdem_cards
from hub.domain.games.holdem.hand import Hand
from hub.domain.games.mahjong.hand import MahjongDeal, MahjongHand, mahjong_spec
from hub.domain.games.mahjong.rules import PaymentRule
from hub.domain.games.rps.rules import RpsHand
from hub.domain.games.spec import HandSpec
from hub.domain.pieces import CARDS
from hub.engine.core import Engine
from hub.engine.families.hands import table_payload
from hub.engine.simulate import simulate_session
from tests.factories import config_data
from tests.toygame.game import HIGHCARD

HUB = Path(__file__).resolve().parent.parent / "hub"
GAMES = HUB / "domain" / "games"
# What a module asks when it branches on the game instead of asking the game.
GAME_CHECK = re.compile(
    r"""game\s*[!=]=|mahjong\s+is\s+(not\s+)?None|game\s+(not\s+)?in\s*\(|"""
    r"""["'](holdem|piecepack-holdem|mcr|rps-poker)["']\s*(==|!=|in\b)"""
)


def test_no_module_outside_the_game_folders_asks_which_game_is_played() -> None:
    found = [
        f"{path.relative_to(HUB.parent)}:{n}: {line.strip()}"
        for path in sorted(HUB.rglob("*.py"))
        if GAMES not in path.parents
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if GAME_CHECK.search(line)
    ]
    assert not found, "\n".join(found)


def test_the_config_and_the_piece_sets_import_no_games_folder() -> None:
    """A game's section, rules and pieces are its folder's (``TournamentConfig.game_rules``,
    ``pieces.register``): the config package and the piece sets read the registry, not a game."""
    import ast

    shared = [*(HUB / "domain" / "config").glob("*.py"), HUB / "domain" / "pieces.py"]
    found = []
    for path in shared:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                parts = name.split(".")
                if parts[:3] == ["hub", "domain", "games"] and parts[3:4] not in (
                    ["base"],
                    ["registry"],
                ):
                    found.append(f"{path.name}: {name}")
    assert not found, found


def test_the_deck_orders_load_no_game_and_the_registry_makes_each_games_pieces_known() -> None:
    """Which piece sets exist is the registry's to say (issue #31): ``hub.domain.deck`` once
    imported piecepack's tiles so that an order of them was told from cards. An order is told
    its set now, and a game that brings its own (a third party's) needs no more than naming it
    as its ``pieces``: the registry makes it known, and a deck file's line of it is read."""
    import dataclasses
    import subprocess
    import sys

    from hub.domain import pieces
    from hub.domain.deck import DeckOrder

    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, hub.domain.deck; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=HUB.parent,
    ).stdout
    assert "hub.domain.deck" in loaded and "hub.domain.games." not in loaded
    upper = dataclasses.replace(
        CARDS,
        game="upper-cards",
        pieces=tuple(c.upper() for c in CARDS.pieces),
        parse_order=lambda text: tuple(str(text)[i : i + 2] for i in range(0, len(text), 2)),
        is_piece=lambda code: len(code) >= 2 and code[:2].isupper() and code[:2] in upper.pieces,
        described="52 upper cards",
    )
    toy = PokerGame("upper-holdem", upper)  # hold'em dealt with a set of its own
    text = "".join(upper.pieces)
    assert "upper-cards" not in pieces.PIECE_SETS
    with pytest.raises(ValueError, match=r"not a permutation of the 52 cards or of .*52 upper"):
        DeckOrder(upper.pieces[:-1], pieces=upper)
    registry.register(toy)
    try:
        assert pieces.PIECE_SETS["upper-cards"] is upper
        assert registry.order_from_text(text) == DeckOrder(upper.pieces, pieces=upper)
        assert registry.order_from_text("".join(CARDS.pieces)).cards == CARDS.pieces
    finally:
        del registry.games[toy.name], pieces.PIECE_SETS[upper.game]
        registry._refresh()


# A game, its pieces or its own fields named in the code (names and strings, not comments or
# docstrings) of a module outside the game folders.
NAMES_A_GAME = re.compile(r"(?i)(?<![a-z])(rps|mcr|mahjong|piecepack|throws|tiles)(?![a-z])")
# Known and kept (issue #31 item 2: each is more than a sentence to move): protocol v1 lets any
# event carry ``throws`` (tests/data/console_events_golden.json), so the envelope declares it;
# the deck file's refusal names its tiles. (The deck orders once imported piecepack's tiles to
# register them: the registry makes each game's pieces known now.)
NAMED_STILL = {
    "hub/domain/console_event.py": {"throws", '"throws"'},
}
DOCSTRING = ('"""', "'''")


def test_no_module_outside_the_game_folders_names_a_game_in_its_code() -> None:
    """A game's words are its folder's (a field's refusal: `ConsoleEvent.sentences`, RPS
    Poker's ``throws``): a shared module's code names none but those known (`NAMED_STILL`)."""
    import io
    import tokenize

    found = []
    for path in sorted(HUB.rglob("*.py")):
        if GAMES in path.parents:
            continue
        where = str(path.relative_to(HUB.parent))
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text("utf-8")).readline):
            text = tok.string
            if tok.type not in (tokenize.NAME, tokenize.STRING) or text.startswith(DOCSTRING):
                continue
            if NAMES_A_GAME.search(text) and text not in NAMED_STILL.get(where, ()):
                found.append(f"{where}:{tok.start[0]}: {text[:100]}")
    assert not found, "\n".join(found)


def test_the_check_sees_a_game_check() -> None:
    for line in (
        'if config.game == "mcr":',
        "if self.config.mahjong is not None:",
        'elif game != "rps-poker"',
    ):
        assert GAME_CHECK.search(line), line


def test_every_game_has_its_folder_and_its_registry_line() -> None:
    folders = sorted(p.name for p in GAMES.iterdir() if (p / "game.py").is_file())
    assert folders == ["holdem", "mahjong", "piecepack", "rps"]
    assert list(registry.games) == ["holdem", "piecepack-holdem", "mcr", "rps-poker"]
    members = game_members()
    for name, game in registry.games.items():
        assert game.name == name
        for member in members:
            assert hasattr(game, member), f"{name} lacks {member}"


def protocol_members(protocol: type) -> list[str]:
    """What a protocol declares itself: its methods and its annotated attributes."""
    own = [n for n, v in vars(protocol).items() if not n.startswith("_") and callable(v)]
    return own + list(vars(protocol).get("__annotations__", {}))


def game_members() -> list[str]:
    """What `base.Game` asks: the members of every capability protocol it composes."""
    return [m for cap in base.CAPABILITIES for m in protocol_members(cap)]


def test_the_game_protocol_is_small_capabilities_composed() -> None:
    """`Game` is the capabilities (deck orders, hands, rules, views, showdown, bots, config
    section, console) and nothing of its own; each is small, and no member is asked twice."""
    assert set(base.CAPABILITIES) == {c for c in base.Game.__mro__ if c in base.CAPABILITIES}
    assert protocol_members(base.Game) == []  # every member is a capability's
    members = game_members()
    assert len(members) == len(set(members)) >= 30
    for cap in base.CAPABILITIES:
        assert 1 <= len(protocol_members(cap)) <= 8, (cap.__name__, protocol_members(cap))
    assert base.Views in type.mro(base.Game) and isinstance(registry.games["holdem"], object)


def test_the_domain_reads_no_installed_distribution() -> None:
    """Finding installed games (entry points) is I/O: the ``duplicast`` command does it at
    start-up and registers each (tests/test_toygame.py plays one), not the pure domain."""
    readers = [
        str(p.relative_to(HUB))
        for p in (HUB / "domain").rglob("*.py")
        if re.search(r"importlib\.metadata|entry_points\(", p.read_text())
    ]
    assert readers == []


def test_each_game_names_its_overlay_module_and_the_hub_serves_the_list() -> None:
    """The overlays import the game modules the hub lists (``registry.overlays``, served with
    the topics), not a list of their own: each hub game names its module, which exists and
    is that game's, and no module of overlays/js/games/ is left out."""
    folder = HUB.parent / "overlays" / "js" / "games"
    served = registry.overlays()
    assert sorted(served) == sorted(registry.games)
    for name, path in served.items():
        assert f"name: '{name}'" in (folder / path).read_text(), (name, path)
    listed = {*served.values(), "index.js"}
    assert sorted(p.name for p in folder.glob("*.js")) == sorted(listed)
    index = (folder / "index.js").read_text()
    assert "import(" in index and "mcr.js" not in index  # loaded from the list, not named


def test_an_unknown_game_is_refused_with_the_registrys_games() -> None:
    data = config_data()
    data["tournament"]["game"] = "piquet"
    with pytest.raises(ConfigError, match="expected one of 'holdem', 'piecepack-holdem', 'mcr'"):
        parse_config(data, "<test>")


class Training(PokerGame):
    """A fifth game for the test: hold'em whose live table says it is a training table."""

    def hand_fields(self, hand: Hand) -> dict[str, Any]:
        return {"training": True}


def test_a_fifth_game_is_one_registry_line(monkeypatch: pytest.MonkeyPatch) -> None:
    data = config_data(seats=3, deals=2)
    data["tournament"]["game"] = "training"
    with pytest.raises(ConfigError):
        parse_config(data, "<test>")
    monkeypatch.setitem(registry.games, "training", Training("training", CARDS))
    config = parse_config(data, "<test>")
    decks = registry.games["training"].seeded_orders("fifth", config.deals)
    events = list(simulate_session(config, decks, random.Random(1)))  # every event accepted
    assert {e["type"] for e in events} >= {"start", "win"}
    engine = Engine(config, decks, release_delay=0.0)
    table = engine.state.tables[1]
    first = table.order[0]
    outcome = engine.submit(
        {"v": 1, "tournament": config.id, "table": 1, "console": "table1", "seq": 1}
        | {"type": "start", "deal": first},
        1.0,
    )
    assert outcome.ok, outcome.ack
    live = table_payload(engine.state, table, live=True)
    assert live["game"] == "training" and live["training"] is True
    assert len(live["seats"][0]["hole"]) == 2  # hold'em's deal, from the game's pieces


def test_only_the_poker_games_are_hold_ems_game_and_mahjong_has_its_own_hand() -> None:
    """Mahjong and RPS Poker answer the `Game` protocol on their own (`GameDefaults`, and RPS
    the deck orders of cards), not as hold'em's `PokerGame` with overrides."""
    poker = sorted(n for n, g in registry.games.items() if isinstance(g, PokerGame))
    assert poker == ["holdem", "piecepack-holdem"]
    assert all(isinstance(g, base.GameDefaults) for g in registry.games.values())
    mahjong = MahjongHand(mahjong_spec(1), PaymentRule())
    assert not isinstance(mahjong, Hand)
    rps = RpsHand(
        HandSpec(seats=4, button=4, small_blind=50, big_blind=100, cap=10000, order="rps")
    )
    assert not isinstance(rps, Hand)  # it holds a betting round; it is not hold'em's hand


def hand_members() -> list[str]:
    names = [n for n in vars(base.Hand) if not n.startswith("_")]
    return sorted(set(names) | set(base.Hand.__annotations__))


def test_every_games_hand_answers_the_hand_protocol() -> None:
    """What the hub reads of a hand (`base.Hand`), every game's hand has: hold'em's, mahjong's,
    RPS Poker's, and a third party's (tests/toygame)."""
    assert len(hand_members()) >= 15  # the protocol read, not an empty class
    config = parse_config(config_data(seats=4, deals=2), "<test>")
    for name, game in [*registry.games.items(), ("highcard", HIGHCARD)]:
        data = config_data(seats=4, deals=2)
        data["tournament"]["game"] = name
        if name != "highcard":
            config = parse_config(data, "<test>")
        decks = game.seeded_orders("hand", 2)
        dealt = game.dealt(config, decks[1], 1)
        spec = game.spec(config, 1, lambda d=dealt: d)
        hand = game.new_hand(config, spec, decks[1])
        missing = [m for m in hand_members() if not hasattr(hand, m)]
        assert not missing, f"{name}'s hand lacks {missing}"


def annotated(cls: type, name: str) -> Any:
    """The type a class declares for ``name``: a field's annotation, or a property's return."""
    member = getattr(cls, name, None)
    if isinstance(member, property):
        return typing.get_type_hints(member.fget)["return"]
    return typing.get_type_hints(cls)[name]


def holds(kind: Any, value: Any) -> bool:
    """Is ``value`` of the tuple type ``kind``: ``tuple[str, str]`` exactly two texts,
    ``tuple[str, ...]`` any number of them?"""
    assert typing.get_origin(kind) is tuple, kind
    args = typing.get_args(kind)
    if not isinstance(value, tuple):
        return False
    if len(args) == 2 and args[1] is Ellipsis:
        return all(isinstance(v, args[0]) for v in value)
    return len(value) == len(args) and all(
        isinstance(v, a) for v, a in zip(value, args, strict=True)
    )


def test_every_games_deal_says_what_it_holds_and_only_holdem_deals_holdems_cards() -> None:
    """A game's deal answers `base.DealtPieces` (what the engine and views read of any game),
    and its type tells the truth of its pieces: every seat's ``hole`` and the ``board`` are of
    the tuple type it declares (mypy and a compiled view trust it). Hold'em's two-card
    `Dealt` is made by hold'em's dealing alone: no game's deal dresses as one (a subclass), so
    what reads two hole cards or a flop (`holdem.game.holdem_cards`) never gets a mahjong deal."""
    dealt_by: dict[str, Any] = {}
    for name, game in [*registry.games.items(), ("highcard", HIGHCARD)]:
        data = config_data(seats=4, deals=2)
        data["tournament"]["game"] = name if name != "highcard" else "holdem"
        config = parse_config(data, "<test>")
        dealt = dealt_by[name] = game.dealt(config, game.seeded_orders("deal", 2)[1], 1)
        if dealt is None:  # RPS Poker deals no cards
            continue
        kind = type(dealt)
        assert isinstance(dealt, DealtPieces), name
        assert not issubclass(kind, Dealt) or kind is Dealt, f"{name}: {kind} dresses as Dealt"
        hole = annotated(kind, "hole")
        assert typing.get_origin(hole) is Mapping, f"{name}: hole is {hole}"
        for seat, pieces in dealt.hole.items():
            assert holds(typing.get_args(hole)[1], pieces), f"{name} seat {seat}: {pieces}"
        assert holds(annotated(kind, "board"), dealt.board), f"{name}: board {dealt.board}"
    assert isinstance(dealt_by["holdem"], Dealt) and dealt_by["rps-poker"] is None
    mahjong = dealt_by["mcr"]
    assert isinstance(mahjong, MahjongDeal) and mahjong.board == ()
    assert [len(tiles) for tiles in mahjong.hole.values()] == [13, 13, 13, 13]
    with pytest.raises(TypeError, match="MahjongDeal"):
        holdem_cards(mahjong)


def event_classes() -> dict[str, Any]:
    """Every console event class by its wire ``type`` (the msgspec tag)."""
    try:
        from hub.domain.console_event import ConsoleEvent  # the schema of #31 item 3
    except ImportError:
        from hub.engine.event_types import ConsoleEvent

    found: dict[str, Any] = {}
    todo = list(ConsoleEvent.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        tag = cls.__struct_config__.tag
        if isinstance(tag, str):
            found[tag] = cls
    return found


def test_every_pad_entry_is_an_event_its_game_plays_with_the_events_fields() -> None:
    classes = event_classes()
    for name, game in registry.games.items():
        assert game.pad, f"{name} offers nothing of its own on the pad"
        for entry in game.pad:
            assert entry.type in classes, f"{name}: {entry.type!r} is no console event"
            assert registry.refusal(game, entry.type) is None, (
                f"{name} refuses its own {entry.type!r}"
            )
            fields = {f.name for f in msgspec.structs.fields(classes[entry.type])}
            named = {f.name for f in entry.fields} | {k for k, _ in entry.fixed}
            assert named <= fields, (name, entry)
            for f in entry.fields:  # an alternative names a field of its entry, naming it back
                assert f.either is None or any(
                    g.name == f.either and g.either == f.name for g in entry.fields
                ), (name, entry.key, f.name)
        keys = [entry.key for entry in game.pad]
        assert len(keys) == len(set(keys)), f"{name}: two pad entries share a key"


def test_a_deck_file_of_another_games_kind_is_refused_in_its_words() -> None:
    """The kind of order a game's deck file holds is the order class's (``described``), so
    the shared deck check names no game: mahjong's walls in a card game's file."""
    walls = registry.games["mcr"].seeded_orders("kind", 2)
    for name in ("holdem", "piecepack-holdem", "rps-poker"):
        problem = registry.games[name].orders_problem(walls, 2)
        assert problem == "holds mahjong walls, not card decks", name
    cards = registry.games["holdem"].seeded_orders("kind", 2)
    assert registry.games["mcr"].orders_problem(cards, 2) == (
        "holds card decks, not mahjong walls (game is 'mcr')"
    )
