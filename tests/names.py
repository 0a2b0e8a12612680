"""Team and player names a venue really meets, in the sample event (samples/ifp6.toml, whose
session samples/ifp6-session.jsonl plays them): apostrophes, quotes, ampersands and angle
brackets, commas and semicolons, Arabic and Hebrew, Chinese, a combining accent beside a
precomposed one, emoji with ZWJ sequences and a flag, 60 characters, markup that must show as
text, and cells a spreadsheet would run as formulas."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.hubharness import SAMPLE

XSS = "<img src=x onerror=alert(1)>"
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # man, woman, girl joined by ZWJ
FLAG = "\U0001f1e6\U0001f1f7"  # Argentina's flag (two regional indicators)
ARABIC = "\u0645\u062d\u0645\u062f \u0639\u0644\u064a"
HEBREW = "\u05d3\u05d5\u05d3 \u05dc\u05d5\u05d9"
TEAMS = {
    "ARG": (
        "O'Brien & Sons <Pro>",
        ["O'Brien", "N'Diaye", 'Jean "JJ" Dupont', "Smith & Sons <Pro>", "Lee, K.", "a;b \\ c"],
    ),
    "BRA": ('Jean "JJ" Team', [ARABIC, HEBREW, "\u738b\u78ca", "Jose\u0301", "Jos\u00e9s", XSS]),
    "CHN": ("Lee, K.; Co", [FAMILY, f"{FLAG} Arg", "A" * 30 + "B" * 30, "Ana", "ana", "M."]),
    "DEN": (
        "\u0645\u062d\u0645\u062f \u0648\u0641\u0631\u064a\u0642\u0647",
        ["''' triple", "Jones'", "'Quoted'", '=HYPERLINK("x")', "-5", "@sum"],
    ),
    "ECU": (XSS, ["D. Vera", "A. Cede\u00f1o", "M. Zambrano", "J. Mendoza", "P. Cevallos", "R. I"]),
    "FIN": (f"{FAMILY} {FLAG} Family", ["A. K", "J. V", "M. M\u00e4kinen", "T. N", "E. L", "H. H"]),
}
EVENT = 'IFP "Names" & <Co> \'26 \\ test'


def names_file(folder: Path) -> Path:
    """The sample event with the names above, written in ``folder`` (its rehearsal decks and
    the sample session play it as they play the sample)."""
    text = SAMPLE.read_text(encoding="utf-8")
    for tid, (name, players) in TEAMS.items():
        quoted = json.dumps(name, ensure_ascii=False)
        text = re.sub(rf'(id = "{tid}"\nname = )"[^"\n]*"', lambda m, q=quoted: m[1] + q, text)
        listed = "[" + ", ".join(json.dumps(p, ensure_ascii=False) for p in players) + "]"
        text = re.sub(
            rf'(code = "{tid}"\ncolour = "[^"]*"\nplayers = )\[[^\n]*\]',
            lambda m, q=listed: m[1] + q,
            text,
        )
    text = re.sub(
        r'(\[tournament\]\nid = "[^"]*"\nname = )"[^"\n]*"',
        lambda m: m[1] + json.dumps(EVENT),
        text,
    )
    path = folder / "names.toml"
    path.write_text(text, encoding="utf-8")
    return path
