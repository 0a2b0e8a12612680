"""The one exception for refused input, carrying a stable machine code and a sentence."""

from __future__ import annotations


class Rejection(Exception):
    """Input refused with a stable ``code`` (for machines) and a ``message`` (for officials).

    Raised before anything changes: whoever catches it can rely on the state being untouched.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"Rejection({self.code!r}, {self.message!r})"
