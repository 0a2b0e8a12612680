"""The overlays' shared pages ask the game module, never a game's name (issue #31 item 2).

What a page draws differently for a game is its module's in ``overlays/js/games/`` to say
(``gameOf(payload).member``, games/index.js). No other module of ``overlays/js`` imports a game
helper module (each game's drawing: tiles, throws, piecepack pieces) or names a game in its code:
the games, their helpers, their payload keys (``s.mahjong``, ``st.throws``, ``dealer_throws``),
a member asked as a game check (``gameOf(s).throws``), a game's refusal code (``bad_throws``) or
a console-pad field kind a game's module draws (``throws``, ``mcr_hand``: its ``padFields``).
Comments may name a game.
"""

from __future__ import annotations

import re
from pathlib import Path

from hub.domain.games import registry

JS = Path(__file__).resolve().parent.parent / "overlays" / "js"
GAMES = JS / "games"
# The game helper modules: only the game modules (games/*.js) and one another import them.
HELPERS = ("mahjong.js", "rps.js", "piecepack.js", "tilepicker.js", "throwpad.js")
# A game named in code: the games (and their short forms: `mj`), a payload key of theirs.
NAMES_A_GAME = re.compile(
    r"(?i)(?<![a-z0-9_])(mcr|mahjong|mj|rps|piecepack)"  # s.mahjong, mahjongCard, 'com-rps-win'
    r"|throws"  # st.throws, s.dealer_throws, gameOf(s).throws, 'throws' (a field kind), bad_throws
)
IMPORTED = re.compile(r"""(?:\bfrom|\bimport\s*\(?)\s*['"`]([^'"`]+)['"`]""")


def code_of(source: str) -> list[str]:
    """The lines of a JS source without its comments (``/* */`` blocks and ``//`` to the line's
    end after a blank or at its start: a URL's ``//`` stays)."""
    source = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), source, flags=re.S)
    return [re.sub(r"(^|\s)//.*", "", line) for line in source.splitlines()]


def shared_modules() -> list[Path]:
    return [
        p
        for p in sorted(JS.rglob("*.js"))
        if GAMES not in p.parents and not (p.parent == JS and p.name in HELPERS)
    ]


def findings(path: Path) -> list[str]:
    where = path.relative_to(JS)
    out = []
    for n, line in enumerate(code_of(path.read_text(encoding="utf-8")), start=1):
        helpers = [m for m in IMPORTED.findall(line) if m.rsplit("/", 1)[-1] in HELPERS]
        if helpers:
            out.append(f"{where}:{n}: imports {', '.join(helpers)}: {line.strip()}")
        elif NAMES_A_GAME.search(line):
            out.append(f"{where}:{n}: names a game: {line.strip()}")
    return out


def test_no_shared_overlay_module_names_a_game_or_imports_its_helpers() -> None:
    found = [f for path in shared_modules() for f in findings(path)]
    assert not found, "\n".join(found)


def test_the_check_sees_a_game_named_and_passes_ordinary_words() -> None:
    for line in (
        "import { ROUND_LABEL, scoreText, throwTiles } from './rps.js';",
        "import { isTile, tile, tileText } from './piecepack.js';",
        "import { mount } from '../tilepicker.js';",
        "    if (live && s.mahjong) return mahjongCard(t, s, ld, sw);",
        "  const rps = gameOf(t).throws;",
        "  if ((t.throws_awaited || []).length) {",
        "throwTiles(row.dealer_throws, 'sm', 'panel-dealer')",
        "  mcr_hand: tileText,",
        "el('span', { dataset: { testid: 'com-mj-hand' } })",
        "  throws(s, o, f, value, set) {",  # the pad's throws widget, once the page's own
        "    if (given && f.kind === 'throws' && count) {",
        "  bad_throws: 'Wrong throws',",
        "import { mount } from './throwpad.js';",
    ):
        assert NAMES_A_GAME.search(line) or IMPORTED.search(line), line
    ordinary = (
        "const n = p.tables && p.tables.length === 1 ? p.tables[0] : null;",
        "  if (!STREETS.includes(x)) throw new Refusal('hand_over', 'no more actions');",
        "const r = await fetch(url, { signal: abort.signal, cache: 'no-store' });",
        "import { el, fmtInt } from './ui.js';",
    )
    for line in ordinary:
        assert not NAMES_A_GAME.search(line), line
    assert code_of("a(); // mahjong has its own rows\n/* rps\n */ b('http://x');") == [
        "a();",
        "",
        " b('http://x');",
    ]


def shared_lines_naming(words: set[str]) -> list[str]:
    """The lines of shared modules' code that name one of ``words`` (a word of its own)."""
    word = re.compile(rf"(?<![\w-])({'|'.join(sorted(words))})(?![\w-])")
    return [
        f"{path.relative_to(JS)}:{n}: {line.strip()}"
        for path in shared_modules()
        for n, line in enumerate(code_of(path.read_text(encoding="utf-8")), start=1)
        if word.search(line)
    ]


PAD = JS / "consolepad.js"
# consolepad.js's own field kinds: `FIELDS` (drawn afresh) and `MOUNTED` (kept across redraws).
OWN_KIND = re.compile(r"^  (\w+)\((?:s, o, f, value, set|box, ctx)\) \{$", re.M)
PAD_FIELDS = re.compile(r"padFields:\s*\{([^}]*)\}")


def module_kinds(overlay: str) -> set[str]:
    """The field kinds a game's overlay module draws itself (the keys of its `padFields`)."""
    found = PAD_FIELDS.search("\n".join(code_of((GAMES / overlay).read_text(encoding="utf-8"))))
    return set(re.findall(r"(\w+)\s*:", found[1])) if found else set()


def test_each_pad_field_kind_is_drawn_by_the_page_or_by_its_games_module() -> None:
    """Every field kind a game's console pad declares is the page's own (a seat, an amount:
    every game's) or its game's module's (`padFields`), never both; and a kind a game's module
    draws is named by no shared module (the page asks the module, it knows no such kind)."""
    own = set(OWN_KIND.findall(PAD.read_text(encoding="utf-8")))
    assert {"seat", "seats", "amount", "text"} <= own
    theirs: set[str] = set()
    for name, game in registry.games.items():
        kinds = {f.kind for entry in game.pad for f in entry.fields}
        brought = module_kinds(game.overlay) if game.overlay else set()
        assert not brought & own, f"{name}: the page and its module both draw {brought & own}"
        assert kinds <= own | brought, f"{name}: nothing draws {kinds - own - brought}"
        theirs |= brought
    assert {"throws", "mcr_hand"} <= theirs
    assert not shared_lines_naming(theirs), "\n".join(shared_lines_naming(theirs))


HUB = JS.parent.parent / "hub"
RAISED = re.compile(r'Rejection\(\s*"(\w+)"')


def own_refusal_codes() -> dict[str, set[str]]:
    """By game folder (hub/domain/games/<folder>): the refusal codes only that folder raises,
    hold'em's aside (its are the page's: hold'em is every page's default)."""
    raised: dict[str, set[str]] = {}
    for path in HUB.rglob("*.py"):
        parts = path.relative_to(HUB).parts
        where = parts[2] if parts[:2] == ("domain", "games") and len(parts) > 3 else "shared"
        for code in RAISED.findall(path.read_text(encoding="utf-8")):
            raised.setdefault(code, set()).add(where)
    out: dict[str, set[str]] = {}
    for code, where in raised.items():
        if len(where) == 1 and not where & {"shared", "holdem"}:
            out.setdefault(where.pop(), set()).add(code)
    return out


def test_a_games_own_refusal_codes_are_headed_by_its_module() -> None:
    """The console heads a refusal code only a game raises ("Wrong throws") in its module's
    words (`refusalTitles`), never in a shared module's."""
    own = own_refusal_codes()
    assert {"bad_throws", "throws_pending"} <= own["rps"]
    assert {"impossible_hand", "not_winning", "below_minimum"} <= own["mahjong"]
    every = set().union(*own.values())
    assert not shared_lines_naming(every), "\n".join(shared_lines_naming(every))
    for game in registry.games.values():
        folder = type(game).__module__.split(".")[3]
        module = "\n".join(code_of((GAMES / game.overlay).read_text(encoding="utf-8")))
        titles = re.search(r"refusalTitles:\s*\{([^}]*)\}", module)
        headed = set(re.findall(r"(\w+)\s*:", titles[1])) if titles else set()
        assert own.get(folder, set()) <= headed, (
            f"{game.overlay}: no heading of {own[folder] - headed}"
        )
