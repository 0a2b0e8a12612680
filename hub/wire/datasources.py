"""Data sources for vMix (docs/vmix.md): a topic's payload as an array of flat rows.

vMix reads a JSON data source as an array of objects (each object a row) and an XML one as the
elements an XPath picks; a title bound to it with Column = *Auto* takes, for each of its
fields, the column of the field's own full name (``Name.Text`` for a text field,
``Flag.Source`` for an image). So each source here is one declaration (``Source``): the topic
family it reads, where its rows are in that family's payload (``rows``), and its columns, each
named as a title field is and read from a row (``Column``). ``flatten`` is the one place a
payload becomes rows; ``to_xml`` and ``to_json`` spell them.

A column reads only what the payload holds: a public or programme payload that has no stack or
hole cards gives an empty cell, so a source never shows more than its topic does to the same
audience. A programme topic held back for a deal not yet released (``{"held": true}``) has no
rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

__all__ = ["SOURCES", "Column", "Source", "flatten", "to_xml"]

Row = Mapping[str, Any]
Cell = Callable[[Row, Mapping[str, Any]], Any]  # (row, whole payload) -> its value


@dataclass(frozen=True, slots=True)
class Column:
    """One column, named as the vMix title field it fills (``Name.Text``, ``Flag.Source``)."""

    name: str
    cell: Cell


@dataclass(frozen=True, slots=True)
class Source:
    """One data source: the topic family it reads, its rows in that family's payload
    (``rows(payload)``), and its columns, in order (vMix's Column = *Auto* falls back to a
    field's index when no column has its name)."""

    name: str
    family: str
    rows: Callable[[Mapping[str, Any]], list[Row]]
    columns: tuple[Column, ...]
    about: str = ""

    def __post_init__(self) -> None:
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: a column named twice")
        for name in names:
            if not FIELD.fullmatch(name):
                raise ValueError(f"{self.name}: {name!r} is not a vMix title field's name")


FIELD = re.compile(r"[A-Za-z][A-Za-z0-9]*\.(Text|Source)")
"""A column name: a title field's name and its suffix (``.Text`` text, ``.Source`` image);
also a valid XML element name, so the XML spells each column as an element of that name."""

MINUS = "\u2212"  # as the overlays print a negative number


def number(value: Any) -> str:
    """A figure as the overlays print it: thousands separated, at most one decimal
    (``92,443``, ``5.5``), a true minus sign; empty for none."""
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, float) and not value.is_integer():
        text = f"{abs(value):,.1f}".removesuffix(".0")
    else:
        text = f"{abs(int(value)):,}"
    return MINUS + text if value < 0 else text


def signed(value: Any) -> str:
    """A swing or a chip-score with its sign (``+1,250``, a minus sign, ``0``)."""
    text = number(value)
    return "+" + text if text and value > 0 else text


def text(value: Any) -> str:
    return "" if value is None else str(value)


def cards(value: Any) -> str:
    """Cards or tiles as their codes, space-separated (``Ah Kd``)."""
    return " ".join(str(c) for c in value) if isinstance(value, list) else ""


def field(name: str, show: Callable[[Any], str] = text) -> Cell:
    """A cell of the row's own field ``name`` (empty when the row lacks it)."""
    return lambda row, doc: show(row.get(name))


def total(row: Row, doc: Mapping[str, Any]) -> str:
    """The scoring format's total (points, IMPs, chips: the payload's ``scoring.column``)."""
    column = (doc.get("scoring") or {}).get("column") or "points"
    return number(row.get(column))


def seat_status(row: Row, doc: Mapping[str, Any]) -> str:
    if row.get("folded"):
        return "Folded"
    if row.get("all_in"):
        return "All-in"
    if row.get("to_act"):
        return "To act"
    return ""


def dealer(row: Row, doc: Mapping[str, Any]) -> str:
    button = doc.get("button")
    return "D" if button is not None and row.get("seat") == button else ""


def last_action(row: Row, doc: Mapping[str, Any]) -> str:
    """A split-screen row's latest action in words (``raise 1,200``, ``fold``)."""
    actions = row.get("actions") or []
    if not actions:
        return ""
    last = actions[-1]
    kind = str(last.get("kind", "")).replace("_", " ")
    amount = last.get("to")
    return f"{kind} {number(amount)}" if amount and kind not in ("fold", "check") else kind


def status(row: Row, doc: Mapping[str, Any]) -> str:
    return text(row.get("status")).replace("_", " ")


def doc_field(name: str, show: Callable[[Any], str] = text) -> Cell:
    """A cell of the payload's own field ``name``, the same in every row."""
    return lambda row, doc: show(doc.get(name))


def _like_for_like(key: str) -> Callable[[Mapping[str, Any]], list[Row]]:
    """The like-for-like rows of a standings or seat payload (the only view public and
    programme payloads carry: the fair in-running comparison)."""
    return lambda doc: list((doc.get("like_for_like") or {}).get(key) or [])


def _member(key: str) -> Callable[[Mapping[str, Any]], list[Row]]:
    return lambda doc: list(doc.get(key) or [])


TEAM = (
    Column("Name.Text", field("name")),
    Column("Code.Text", field("code")),
    Column("Colour.Text", field("colour")),
    Column("Flag.Source", field("flag")),  # (the swatch URL the route puts in: flag_url)
)

SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source(
            "leaderboard",
            "standings",
            _like_for_like("teams"),
            (
                Column("Rank.Text", field("rank")),
                *TEAM,
                Column("Points.Text", total),
                Column("Chips.Text", field("chips", number)),
                Column("Group.Text", field("group")),
            ),
            "team standings, like-for-like, ranked (the leaderboard's rows)",
        ),
        Source(
            "seat",
            "seat",
            _like_for_like("rows"),
            (
                Column("Rank.Text", field("rank")),
                Column("Player.Text", field("player")),
                Column("Team.Text", field("team")),
                Column("Table.Text", field("table")),
                Column("Points.Text", total),
                Column("Chips.Text", field("chips", number)),
                Column("Group.Text", field("group")),
            ),
            "one seat position across every table, ranked",
        ),
        Source(
            "table",
            "table",
            _member("seats"),
            (
                Column("Seat.Text", field("seat")),
                Column("Player.Text", field("player")),
                *TEAM,
                Column("Stack.Text", field("stack", number)),
                Column("Bet.Text", field("street_bet", number)),
                Column("Cards.Text", field("hole", cards)),
                Column("Status.Text", seat_status),
                Column("Dealer.Text", dealer),
                Column("Board.Text", doc_field("board", cards)),
                Column("Pot.Text", doc_field("pot", number)),
            ),
            "a table's seats, one row each (stacks and cards only where the feed has them)",
        ),
        Source(
            "compare",
            "compare",
            _member("rows"),
            (
                Column("Table.Text", field("table")),
                Column("Player.Text", field("player")),
                *TEAM,
                Column("Cards.Text", doc_field("hole", cards)),
                Column("Board.Text", field("board", cards)),
                Column("Action.Text", last_action),
                Column("Pot.Text", field("pot", number)),
                Column("Result.Text", field("chips", signed)),
                Column("Swing.Text", field("swing", signed)),
                Column("Status.Text", status),
                Column("Deal.Text", doc_field("deal")),
            ),
            "the split screen: one row per table of a deal from one seat",
        ),
        Source(
            "ticker",
            "ticker",
            _member("items"),
            (
                Column("Headline.Text", field("text")),
                Column("Kind.Text", field("kind")),
                Column("Table.Text", field("table")),
                Column("Deal.Text", field("deal")),
            ),
            "the ticker's lines, newest first",
        ),
    )
}


def flatten(
    source: Source, payload: Mapping[str, Any] | None, flag_url: Callable[[str], str] | None = None
) -> list[dict[str, str]]:
    """The rows of ``payload`` as ``source`` declares them: one flat object per row, every
    column present, every value a string. None, or a programme topic held back for a deal
    not yet released, has none. ``flag_url``: the image a team's colour is shown by (the
    ``Flag.Source`` column), from its colour."""
    if payload is None or payload.get("held"):
        return []
    out = []
    for row in source.rows(payload):
        if flag_url is not None and row.get("colour"):
            row = {**row, "flag": flag_url(str(row["colour"]))}
        out.append({c.name: c.cell(row, payload) for c in source.columns})
    return out


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def to_xml(source: Source, rows: list[dict[str, str]]) -> bytes:
    """``<data source="NAME"><row><Name.Text>…</Name.Text>…</row>…</data>``: in vMix, XPath
    ``/data/row`` picks the rows and each child element is a column of its name."""
    root = ElementTree.Element("data", source=source.name)
    for row in rows:
        element = ElementTree.SubElement(root, "row")
        for name, value in row.items():
            ElementTree.SubElement(element, name).text = _NOT_XML.sub("", value)
    ElementTree.indent(root)
    body: bytes = ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
    return body + b"\n"
