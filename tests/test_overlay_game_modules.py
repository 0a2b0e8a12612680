"""The overlays' shared pages ask the game module, never a game's name (issue #31 item 2).

What a page draws differently for a game is its module's in ``overlays/js/games/`` to say
(``gameOf(payload).member``, games/index.js). No other module of ``overlays/js`` imports a game
helper module (each game's drawing: tiles, throws, piecepack pieces) or names a game in its code:
the games, their helpers, their payload keys (``s.mahjong``, ``st.throws``, ``dealer_throws``)
or a member asked as a game check (``gameOf(s).throws``). Comments may name a game.
"""

from __future__ import annotations

import re
from pathlib import Path

JS = Path(__file__).resolve().parent.parent / "overlays" / "js"
GAMES = JS / "games"
# The game helper modules: only the game modules (games/*.js) and one another import them.
HELPERS = ("mahjong.js", "rps.js", "piecepack.js", "tilepicker.js")
# A game named in code: the games (and their short forms: `mj`), a payload key of theirs.
NAMES_A_GAME = re.compile(
    r"(?i)(?<![a-z0-9_])(mcr|mahjong|mj|rps|piecepack)"  # s.mahjong, mahjongCard, 'com-rps-win'
    r"|\.\w*throws\w*\b"  # st.throws, s.dealer_throws, t.throws_awaited, gameOf(s).throws
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
    ):
        assert NAMES_A_GAME.search(line) or IMPORTED.search(line), line
    ordinary = (
        "const n = p.tables && p.tables.length === 1 ? p.tables[0] : null;",
        "  throws(s, o, f, value, set) {",
        "    if (given && f.kind === 'throws' && count) {",
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
