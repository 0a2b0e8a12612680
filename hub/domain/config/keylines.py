"""Where each key of a TOML text is defined, to put the line in a configuration error.

tomllib gives values without positions, so errors find their line in the text itself. The
locator below is not a TOML parser: it trusts that the text is valid TOML (tomllib accepted it)
and only follows headers, keys and the extent of values (strings, multi-line arrays, inline
tables, comments) to know which line defines which key path. No library gives TOML positions,
so this stays hand-written (issue #21).
"""

from __future__ import annotations

import re

KeyPath = tuple[str | int, ...]
_KEY_TOKEN = re.compile(r"\[(\d+)\]|([^.\[\]]+)")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "e": "\x1b", '"': '"'}
_ESCAPES["\\"] = "\\"


def key_path(key: str) -> KeyPath:
    """``teams[2].players[0]`` -> ``("teams", 2, "players", 0)``; ``"-"`` (the file) -> ``()``."""
    if key in ("", "-"):
        return ()
    path: list[str | int] = []
    for match in _KEY_TOKEN.finditer(key):
        index, name = match.groups()
        path.append(int(index) if index is not None else name)
    return tuple(path)


class KeyLines:
    """Where each key path of a TOML text is defined: ``find(("teams", 2, "colour"))`` -> 31.

    Paths are as tomllib builds them: ``[[teams]]`` blocks are indexed from 0, keys of
    ``[a.b]`` and dotted keys ``a.b = 1`` nest, quoted keys are unquoted. A header also
    defines the tables it implies (``[draw.tables]`` defines ``draw`` unless ``[draw]`` does).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines: dict[KeyPath, int] = {}
        self.implied: dict[KeyPath, int] = {}
        self._arrays: dict[KeyPath, int] = {}  # array-of-tables path -> blocks seen so far
        self._pos = 0
        self._line = 1
        try:
            self._scan()
        except (IndexError, ValueError):  # not the TOML it should be: keep what was found
            pass

    def find(self, path: KeyPath) -> int | None:
        """The line of ``path``, else of its closest enclosing key or table; None if none."""
        for end in range(len(path), 0, -1):
            part = path[:end]
            if part in self.lines:
                return self.lines[part]
            if part in self.implied:
                return self.implied[part]
        return None

    # -- scanning ---------------------------------------------------------------------------

    def _peek(self, n: int = 1) -> str:
        return self.text[self._pos : self._pos + n]

    def _advance(self, n: int = 1) -> None:
        self._line += self.text.count("\n", self._pos, self._pos + n)
        self._pos += n

    def _skip_blanks(self) -> None:
        while self._peek() in (" ", "\t"):
            self._pos += 1

    def _skip_to_line_end(self) -> None:
        end = self.text.find("\n", self._pos)
        self._pos = len(self.text) if end < 0 else end

    def _scan(self) -> None:
        table: KeyPath = ()
        while self._pos < len(self.text):
            self._skip_blanks()
            char = self._peek()
            if char in ("\n", "\r"):
                self._advance()
            elif char == "#":
                self._skip_to_line_end()
            elif char == "[":
                table = self._header()
            else:
                line = self._line
                keys = self._key()
                self._skip_blanks()
                if self._peek() != "=":
                    raise ValueError("expected '='")
                self._advance()
                for end in range(1, len(keys)):
                    self.implied.setdefault(table + keys[:end], line)
                self.lines[table + keys] = line
                self._value()

    def _header(self) -> KeyPath:
        line = self._line
        array = self._peek(2) == "[["
        self._advance(2 if array else 1)
        self._skip_blanks()
        keys = self._key()
        self._skip_blanks()
        self._advance(2 if array else 1)  # "]]" or "]"
        path: list[str | int] = []
        for i, name in enumerate(keys):
            path.append(name)
            if array and i == len(keys) - 1:
                here = tuple(path)
                count = self._arrays.get(here, 0)
                self._arrays[here] = count + 1
                self.lines.setdefault(here, line)
                path.append(count)
            elif tuple(path) in self._arrays:
                path.append(self._arrays[tuple(path)] - 1)  # inside the latest block
            elif i < len(keys) - 1:
                self.implied.setdefault(tuple(path), line)
        self.lines[tuple(path)] = line
        return tuple(path)

    def _key(self) -> tuple[str, ...]:
        keys: list[str] = []
        while True:
            self._skip_blanks()
            char = self._peek()
            if char == '"':
                keys.append(self._basic_string())
            elif char == "'":
                end = self.text.index("'", self._pos + 1)
                keys.append(self.text[self._pos + 1 : end])
                self._pos = end + 1
            else:
                match = _BARE.match(self.text, self._pos)
                if match is None:
                    raise ValueError("expected a key")
                keys.append(match.group())
                self._pos = match.end()
            self._skip_blanks()
            if self._peek() != ".":
                return tuple(keys)
            self._pos += 1

    def _basic_string(self) -> str:
        """A one-line "..." string at the cursor, unescaped; the cursor moves past it."""
        out: list[str] = []
        pos = self._pos + 1
        while self.text[pos] != '"':
            char = self.text[pos]
            if char == "\\":
                code = self.text[pos + 1]
                if code in ("u", "U"):
                    size = 4 if code == "u" else 8
                    out.append(chr(int(self.text[pos + 2 : pos + 2 + size], 16)))
                    pos += 2 + size
                    continue
                out.append(_ESCAPES.get(code, code))
                pos += 2
                continue
            out.append(char)
            pos += 1
        self._pos = pos + 1
        return "".join(out)

    def _value(self) -> None:
        """Move past the value at the cursor, to the end of the line where it ends."""
        depth = 0
        while self._pos < len(self.text):
            char = self._peek()
            if char == "\n":
                if depth == 0:
                    return
                self._advance()
            elif char == "#":
                self._skip_to_line_end()
            elif self._peek(3) in ('"""', "'''"):
                quote = self._peek(3)
                start = self._pos + 3
                end = self._closing(quote, start)
                while self.text[end + 3 : end + 4] == quote[0]:  # up to two quotes inside
                    end += 1
                self._advance(end + 3 - self._pos)
            elif char == '"':
                self._advance(self._closing('"', self._pos + 1) + 1 - self._pos)
            elif char == "'":
                self._advance(self.text.index("'", self._pos + 1) + 1 - self._pos)
            else:
                if char in "[{":
                    depth += 1
                elif char in "]}":
                    depth -= 1
                self._pos += 1

    def _closing(self, quote: str, pos: int) -> int:
        """Where ``quote`` closes a string whose content starts at ``pos``."""
        if quote.startswith("'"):
            return self.text.index(quote, pos)
        while True:
            if self.text[pos] == "\\":
                pos += 2
            elif self.text.startswith(quote, pos):
                return pos
            else:
                pos += 1
