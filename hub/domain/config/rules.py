"""The rules of the tournament file that span fields: what `shape` cannot say about one value.

Each section is first converted by its shape (``c.convert``), then checked against the rest of
the file in the order the sections depend on each other: the game (it decides the shape of
``[tournament]``), the tournament, the teams, the groups, the stages and sessions, the draw, the
schedule, the decks, the consoles, the clock, the scoring, the broadcast cameras. Messages and
keys are those of hub.domain.config.model's docstring.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import UNSET

from hub.domain.clock import ClockSpec, Level
from hub.domain.config import formats, shape
from hub.domain.config.broadcast import camera_clocks, program_delay, program_outputs
from hub.domain.config.model import (
    BETTING,
    ID,
    MAX_SEATS,
    RESERVED_CONSOLES,
    DeckSource,
    Group,
    Team,
    TournamentConfig,
)
from hub.domain.config.shape import Checker, check_name, name_key, show
from hub.domain.config.stages import event_plan, table_number, written_draw
from hub.domain.draw import Draw, make_draw
from hub.domain.event import EventPlan
from hub.domain.games.base import ConfigSection, Game
from hub.domain.games.registry import games, section_hint
from hub.domain.numbers import MAX_TOML_INT, find_bad_number
from hub.domain.schedule import (
    ScheduleError,
    block_deal_orders,
    clash_text,
    deal_clashes,
    default_buttons,
    random_deal_orders,
    sequential_deal_orders,
    session_deal_orders,
    stage_block_orders,
    validate_buttons,
    validate_deal_orders,
    validate_session_orders,
)
from hub.domain.scoring import DEFAULT_SCORING

Orders = dict[int, tuple[int, ...]]
SAME_TIME = "the same cards at the same time, noise from one table tells the others"
CLASHES_SHOWN = 5  # clashes of a written schedule named one by one in the warnings


def _sections() -> tuple[str, ...]:
    """The games' own sections ([mahjong], [rps]): known keys of the file, each its game's
    alone; read at each check, as a game registered at start-up brings its own."""
    return tuple(g.section for g in games.values() if g.section is not None)


def parse(c: Checker, data: Mapping[str, Any]) -> TournamentConfig:
    """The configuration of ``data`` (parsed TOML), or the `ConfigError` of its first fault."""
    # TOML has `inf` and `nan` literals and unbounded integers: refused wherever they
    # stand, before any key's own check (a NaN passes every `<` and `>` test).
    bad = find_bad_number(data, max_int=MAX_TOML_INT)
    if bad is not None:
        c.fail(*bad)
    root: shape.Root = c.convert(dict(data), shape.root_shape(_sections()), "")
    game = _game(c, root.tournament)
    t: shape.Tournament = c.convert(root.tournament, game.tournament_shape(), "tournament")
    own = _tournament(c, t, game, data)
    teams = _teams(c, root.teams)
    phased = root.stages is not UNSET or root.sessions is not UNSET
    groups = _groups(c, root.groups, teams, t.seats, phased)
    event = event_plan(c, root.stages, root.sessions, groups, teams, t.deals) if phased else None
    fixed = {g: group for g, group in groups.items() if group.teams}
    draw = _draw(c, root.draw, fixed, t.seats)
    tables = sorted(t for g in groups.values() for t in g.tables)
    ranges = _ranges(event, groups)
    orders, buttons = _schedule(c, root.schedule, groups, t.deals, t.seats, ranges)
    decks = _decks(c, root.decks) if root.decks is not UNSET else None
    consoles = _consoles(c, root.consoles, tables) if root.consoles is not UNSET else None
    clock = _clock(c, root.clock) if root.clock is not UNSET else None
    scoring, scored_rules = formats.scoring_and_rules(c, root, game, t.big_blind, t.deals, event)
    game_rules = own.pop("game_rules", None) if scored_rules is None else scored_rules
    broadcast = None if root.broadcast is UNSET else camera_clocks(c, root.broadcast, tables)
    delay = None if root.broadcast is UNSET else program_delay(c, root.broadcast)
    outputs = {} if root.broadcast is UNSET else program_outputs(c, root.broadcast)
    return TournamentConfig(
        id=t.id,
        name=t.name,
        teams=teams,
        groups=groups,
        seats=t.seats,
        deals=t.deals,
        small_blind=t.small_blind,
        big_blind=t.big_blind,
        cap_bb=t.cap_bb,
        betting=t.betting,
        game=game.name,
        draw=draw,
        deal_orders=orders,
        buttons=buttons,
        decks=decks,
        release_delay=float(t.release_delay),
        consoles=consoles,
        clock=clock,
        scoring=scoring or DEFAULT_SCORING,
        event=event,
        game_rules=game_rules,
        repr_slots=_repr_slots(game, game_rules),
        warnings=tuple(c.warnings),
        broadcast=broadcast,
        program_delay=delay,
        program_outputs=outputs,
        **own,
    )


def _repr_slots(game: ConfigSection, rules: Any) -> tuple[tuple[str, str, Any], ...]:
    """Every game's ``repr_slots`` (``TournamentConfig.repr_slots``): the value of the
    tournament's game's own rules, every other game's default."""
    return tuple(
        (slot.after, slot.name, slot.read(rules) if g is game else slot.default)
        for g in games.values()
        for slot in getattr(g, "repr_slots", ())
    )


def _game(c: Checker, tournament: Any) -> Game:
    game = tournament.get("game", "holdem") if isinstance(tournament, Mapping) else "holdem"
    if not isinstance(game, str) or game not in games:  # one of the registry's games
        expected = ", ".join(repr(g) for g in games)
        c.fail("tournament.game", f"expected one of {expected}, got {show(game)}")
    return games[str(game)]


def _tournament(
    c: Checker, t: shape.Tournament, game: ConfigSection, data: Mapping[str, Any]
) -> dict[str, Any]:
    """The rules of ``[tournament]``, the game's among them (``Game.check_config``, in the
    order a file's first fault is reported), and whose own sections the file has; the fields
    the game reads from its own section (``Game.section_config``)."""
    if t.seats > MAX_SEATS:
        c.fail("tournament.seats", f"at most {MAX_SEATS} seats, got {t.seats}")
    game.check_config(c, t, data, early=True)
    if t.small_blind > t.big_blind:
        c.fail(
            "tournament.small_blind", f"{t.small_blind} is more than the big blind {t.big_blind}"
        )
    if t.betting not in BETTING and not game.betting_allowed(t.betting):
        c.fail("tournament.betting", f"expected 'pot-limit' or 'no-limit', got {show(t.betting)}")
    game.check_config(c, t, data, early=False)
    for section in _sections():
        if section in data and section != game.section:
            c.fail(section, section_hint(section) or "")
    return game.section_config(c, data)


def _teams(c: Checker, value: Any) -> dict[str, Team]:
    entries: list[shape.Team] = c.convert(value, list[shape.Team], "teams")
    if not entries:
        c.fail("teams", "no teams")
    teams: dict[str, Team] = {}
    for i, e in enumerate(entries):
        if e.id in teams:
            c.fail(f"teams[{i}].id", f"team {e.id} defined twice")
        _names(c, f"teams[{i}]", e)
        code = e.id if e.code is UNSET else e.code
        teams[e.id] = Team(
            id=e.id, name=e.name, code=code, colour=e.colour, players=tuple(e.players)
        )
    return teams


def _names(c: Checker, key: str, e: shape.Team) -> None:
    """The team's name and its players' names shown as written; no two players of a team that
    read the same (a roster change, a substitution names a player of the team by name); two
    that differ only by case load with a warning."""
    check_name(c, f"{key}.name", e.name)
    if e.code is not UNSET:
        check_name(c, f"{key}.code", e.code)
    seen: dict[str, int] = {}
    cased: dict[str, int] = {}
    for j, player in enumerate(e.players):
        check_name(c, f"{key}.players[{j}]", player)
        same = seen.setdefault(name_key(player), j)
        if same != j:
            c.fail(
                f"{key}.players[{j}]",
                f"{show(player)} reads the same as players[{same}] ({show(e.players[same])}): "
                "give each player of a team a name of their own",
            )
        other = cased.setdefault(name_key(player).casefold(), j)
        if other != j:
            c.warn(
                f"{key}.players[{j}]",
                f"{show(player)} differs from players[{other}] ({show(e.players[other])}) "
                "only by case: the same player twice?",
            )


def _groups(
    c: Checker, value: Any, teams: Mapping[str, Team], seats: int, phased: bool
) -> dict[str, Group]:
    entries: list[shape.Group] = c.convert(value, list[shape.Group], "groups")
    if not entries:
        c.fail("groups", "no groups")
    groups: dict[str, Group] = {}
    table_owner: dict[int, str] = {}
    team_owner: dict[str, str] = {}
    for i, e in enumerate(entries):
        key = f"groups[{i}]"
        if e.teams is UNSET and not phased:
            c.fail(f"{key}.teams", "missing")
        if e.id in groups:
            c.fail(f"{key}.id", f"group {e.id} defined twice")
        for j, t in enumerate(e.tables):
            if t in table_owner:
                c.fail(f"{key}.tables[{j}]", f"table {t} is already in group {table_owner[t]}")
            table_owner[t] = e.id
        if len(e.tables) != seats:
            c.fail(
                f"{key}.tables",
                f"a group needs as many tables as seats ({seats}), got {len(e.tables)}",
            )
        members = [] if e.teams is UNSET else e.teams  # none: filled by its stage's advance rule
        for j, team in enumerate(members):
            if team not in teams:
                c.fail(f"{key}.teams[{j}]", f"team {team} is not defined in [[teams]]")
            if team in team_owner:
                c.fail(f"{key}.teams[{j}]", f"team {team} is already in group {team_owner[team]}")
            team_owner[team] = e.id
        if e.teams is not UNSET and len(members) != seats:
            c.fail(
                f"{key}.teams",
                f"a group needs as many teams as seats ({seats}), got {len(members)}",
            )
        groups[e.id] = Group(e.id, tuple(e.tables), tuple(members))
    _lineups(c, teams, groups, team_owner)
    return groups


def _lineups(
    c: Checker,
    teams: Mapping[str, Team],
    groups: Mapping[str, Group],
    team_owner: Mapping[str, str],
) -> None:
    """Every team is in a group and has a player for each of its group's tables."""
    for i, team in enumerate(teams.values()):
        if team.id not in team_owner:
            c.fail(f"teams[{i}]", f"team {team.id} is in no group")
        expected = len(groups[team_owner[team.id]].tables)
        if len(team.players) != expected:
            c.fail(
                f"teams[{i}].players",
                f"team {team.id} plays at {expected} tables of group {team_owner[team.id]}: "
                f"expected {expected} players, got {len(team.players)}",
            )


def _draw(c: Checker, value: Any, groups: Mapping[str, Group], seats: int) -> Draw:
    d: shape.Draw = c.convert(value, shape.Draw, "draw")
    if d.tables is not UNSET:
        if d.method is not UNSET or d.seed is not UNSET:
            c.fail("draw", "give either method and seed, or tables, not both")
        return written_draw(c, d.tables, groups, seats)
    if d.method is UNSET:
        c.fail("draw", "expected method (with seed) or tables")
    if d.method not in ("random", "cyclic"):
        c.fail("draw.method", f"expected 'random' or 'cyclic', got {show(d.method)}")
    if d.seed is UNSET:
        c.fail("draw.seed", "missing (a generated draw must be the same at every read)")
    rng = random.Random(d.seed)
    draw: Draw = {}
    for group in groups.values():
        draw.update(make_draw(d.method, group.teams, group.tables, seats, rng))
    return draw


def _ranges(
    event: EventPlan | None, groups: Mapping[str, Group]
) -> Mapping[int, Sequence[range]] | None:
    """Each table's sessions (deal ranges), in an event of several sessions."""
    if event is None:
        return None
    return {
        t: [s.deals for s in event.sessions_of(event.stage_of_group[g.id].id)]
        for g in groups.values()
        for t in g.tables
    }


def _schedule(
    c: Checker,
    value: Any,
    groups: Mapping[str, Group],
    deals: int,
    seats: int,
    ranges: Mapping[int, Sequence[range]] | None,
) -> tuple[Orders, dict[int, int]]:
    """Deal orders and buttons; ``ranges`` (events with sessions): each table's sessions."""
    tables = sorted(t for g in groups.values() for t in g.tables)
    if value is UNSET:
        orders = _in_order(tables, deals, ranges)
        _warn_in_order(c, orders, groups, "schedule", "sequential")
        return orders, default_buttons(deals, seats)
    s: shape.Schedule = c.convert(value, shape.Schedule, "schedule")
    orders = _orders(c, s, tables, deals, ranges, groups)
    if s.tables is not UNSET:
        _warn_clashes(c, orders, groups)
    else:
        which = "sequential" if s.method is UNSET else str(s.method)
        _warn_in_order(c, orders, groups, "schedule.method", which)
    buttons = default_buttons(deals, seats)
    if s.buttons is not UNSET:
        if len(s.buttons) != deals:
            c.fail(
                "schedule.buttons", f"expected one button per deal ({deals}), got {len(s.buttons)}"
            )
        buttons = {deal: b for deal, b in enumerate(s.buttons, start=1)}
        try:
            validate_buttons(buttons, deals, seats)
        except ScheduleError as exc:
            c.fail("schedule.buttons", str(exc))
    return orders, buttons


def _warn_clashes(c: Checker, orders: Orders, groups: Mapping[str, Group]) -> None:
    """A written schedule that puts two tables of a group on one deal in one round loads, with a
    warning per clash (the first few): a player may overhear the hand he is about to play."""
    clashes = deal_clashes(orders, [g.tables for g in groups.values()])
    for round_, deal, tables in clashes[:CLASHES_SHOWN]:
        c.warn("schedule.tables", f"{clash_text(round_, deal, tables)}: {SAME_TIME}")
    if len(clashes) > CLASHES_SHOWN:
        c.warn("schedule.tables", f"... and {len(clashes) - CLASHES_SHOWN} more such clashes")
    if clashes:
        c.warn(
            "schedule.tables",
            "`duplicast decks --orders-out` writes orders without any (docs/rules.md)",
        )


def _warn_in_order(
    c: Checker, orders: Orders, groups: Mapping[str, Group], key: str, which: str
) -> None:
    """A generated schedule that puts two tables of a group on one deal in one round (the
    sequential one, the default, in every round; independent random orders in most events)
    loads, with one warning for all its clashes."""
    clashes = deal_clashes(orders, [g.tables for g in groups.values()])
    if not clashes:  # blocks, or groups of one table
        return
    round_, deal, tables = clashes[0]
    also = f" (and {len(clashes) - 1} more such clashes)" if len(clashes) > 1 else ""
    if which == "blocks":  # only a session of fewer deals than its group has tables
        advice = (
            "a session needs at least as many deals as its group has tables for blocks to "
            "keep every table on its own deal (docs/rules.md)"
        )
    else:
        advice = (
            '[schedule] method = "blocks" (with a seed) or `duplicast decks --orders-out` '
            "plays the deals in blocks without any (docs/rules.md)"
        )
    c.warn(
        key,
        f"the {which} schedule: {clash_text(round_, deal, tables)}{also}: {SAME_TIME}; {advice}",
    )


def _in_order(
    tables: Sequence[int], deals: int, ranges: Mapping[int, Sequence[range]] | None
) -> Orders:
    if ranges is None:
        return sequential_deal_orders(tables, deals)
    return session_deal_orders(ranges, None)


def _orders(
    c: Checker,
    s: shape.Schedule,
    tables: Sequence[int],
    deals: int,
    ranges: Mapping[int, Sequence[range]] | None,
    groups: Mapping[str, Group],
) -> Orders:
    if s.tables is not UNSET:
        if s.method is not UNSET or s.seed is not UNSET:
            c.fail("schedule", "give either method (and seed), or tables, not both")
        orders = _written_orders(c, s.tables)
        try:
            if ranges is None:
                validate_deal_orders(orders, tables, deals)
            else:
                validate_session_orders(orders, ranges)
        except ScheduleError as exc:
            c.fail("schedule.tables", str(exc))
        return orders
    if s.method in ("random", "blocks"):
        if s.seed is UNSET:
            c.fail("schedule.seed", f"missing ({s.method} orders must be the same at every read)")
        rng = random.Random(s.seed)
        if s.method == "blocks":  # release-aware, as `decks --orders-out` writes them
            tables_of = [g.tables for g in groups.values()]
            if ranges is None:
                return block_deal_orders(tables_of, [range(1, deals + 1)], rng)
            return stage_block_orders(tables_of, ranges, rng)
        # independent orders, unchanged: a file's seed gives the same orders at every read,
        # by any version of the hub (docs/rules.md)
        if ranges is None:
            return random_deal_orders(tables, deals, rng)
        return session_deal_orders(ranges, rng)
    if s.method == "sequential" and s.seed is not UNSET:
        c.fail("schedule.seed", "a sequential schedule takes no seed")
    if s.method not in ("sequential", UNSET):
        c.fail(
            "schedule.method",
            f"expected 'blocks', 'random' or 'sequential', got {show(s.method)}",
        )
    return _in_order(tables, deals, ranges)


def _written_orders(c: Checker, rows: Mapping[str, Any]) -> Orders:
    orders: Orders = {}
    for name, row in rows.items():
        key = f"schedule.tables.{name}"
        table = table_number(name)
        if table is None:
            c.fail(key, "a table number is expected as key")
        orders[table] = tuple(c.convert(row, list[int], key))
    return orders


def _decks(c: Checker, value: Any) -> DeckSource:
    d: shape.Decks = c.convert(value, shape.Decks, "decks")
    if (d.file is UNSET) == (d.rehearsal_seed is UNSET):
        c.fail("decks", "expected exactly one of file or rehearsal_seed")
    if d.file is not UNSET:
        return DeckSource(file=d.file)
    return DeckSource(rehearsal_seed=str(d.rehearsal_seed))


def _consoles(c: Checker, value: Any, tables: Sequence[int]) -> dict[str, int]:
    entries: dict[str, Any] = c.convert(value, dict[str, Any], "consoles")
    if not entries:
        c.fail("consoles", "no consoles (leave the section out to allow any console)")
    consoles: dict[str, int] = {}
    for name, table in entries.items():
        key = f"consoles.{name}"
        if not ID.match(name):
            c.fail(key, f"expected letters, digits, '-', '_' or '.', got {show(name)}")
        if name in RESERVED_CONSOLES:
            c.fail(key, f"{name!r} is the hub's own console")
        c.convert(table, shape.at_least(1), key)
        if table not in tables:
            c.fail(key, f"table {table} is not in any group")
        consoles[name] = table
    unwritable = sorted(set(tables) - set(consoles.values()))
    if unwritable:
        c.fail("consoles", f"table {unwritable[0]} has no console: nothing could be entered there")
    return consoles


def _clock(c: Checker, value: Any) -> ClockSpec:
    clock: shape.Clock = c.convert(value, shape.Clock, "clock")
    if not clock.levels:
        c.fail("clock.levels", "no levels")
    levels = tuple(
        Level(float(e.minutes) * 60, e.break_, None if e.name is UNSET else e.name)
        for e in clock.levels
    )
    return ClockSpec(levels, clock.on_time_up)
