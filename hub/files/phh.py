"""PHH files on disk: ``duplicast phh-check`` (a folder of hands replayed through our engine),
``duplicast export --phh`` (a tournament's hands written out) and the console events of
``duplicast console replay --phh`` (a real hand played through the hub). docs/phh.md.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from hub.domain.config import TournamentConfig
from hub.domain.games.holdem.hand import Hand
from hub.domain.games.spec import HandSpec
from hub.domain.phh import (
    Mismatch,
    PhhCards,
    PhhHand,
    Unreplayable,
    finishing_stacks,
    player_seat,
    read_phh,
    replay,
)
from hub.engine.phh_export import Rendered


def hands_in(path: Path) -> Iterator[tuple[str, Mapping[str, Any] | str]]:
    """Each hand of a ``.phh`` file, or of each table of a ``.phhs`` bundle, by name; a file that
    is not TOML gives the reason instead of the hand."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except RecursionError:  # arrays or tables nested too deep for the TOML parser
        yield str(path), "cannot read: nested too deeply"
        return
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # TOMLDecodeError is one
        yield str(path), f"cannot read: {_one_line(exc)}"
        return
    if path.suffix == ".phhs":
        for key, hand in data.items():
            yield f"{path}[{key}]", hand if isinstance(hand, dict) else f"[{key}] is no hand"
    else:
        yield str(path), data


@dataclass
class CheckReport:
    hands: int = 0  # replayed and set against the file's finishing_stacks
    mismatches: list[str] = field(default_factory=list)
    unreplayable: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)  # replayed; the file gives no stacks
    fractional: list[str] = field(default_factory=list)  # file splits chips; ours within 1

    def write(self, out: TextIO) -> None:
        for line in self.mismatches:
            out.write(f"MISMATCH {line}\n")
        if self.unreplayable:
            out.write(
                f"cannot replay {len(self.unreplayable)} hands: "
                + "; ".join(self.unreplayable)
                + "\n"
            )
        if self.unchecked:
            out.write(
                f"replayed, but no finishing_stacks to check, {len(self.unchecked)} hands: "
                + "; ".join(self.unchecked)
                + "\n"
            )
        if self.fractional:
            out.write(
                f"finishing_stacks in fractions of a chip, ours within a chip and the same "
                f"total, {len(self.fractional)} hands: " + "; ".join(self.fractional) + "\n"
            )
        out.write(f"{self.hands} hands, {len(self.mismatches)} mismatches\n")


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (TOML errors name the line and column)."""
    return " ".join(str(exc).split())


def check_hand(name: str, data: Mapping[str, Any] | str, report: CheckReport) -> None:
    if isinstance(data, str):
        report.unreplayable.append(f"{name} ({data})")
        return
    try:
        phh = read_phh(data)
        hand = replay(phh)
    except Mismatch as exc:
        report.hands += 1
        report.mismatches.append(f"{name}: {_one_line(exc)}")
        return
    except Unreplayable as exc:
        report.unreplayable.append(f"{name} ({_one_line(exc)})")
        return
    ours = finishing_stacks(hand, phh.unbounded)
    theirs = phh.finishing_stacks
    if theirs is None:
        report.unchecked.append(name)
        return
    report.hands += 1
    if len(theirs) != len(ours):
        report.mismatches.append(f"{name}: {len(theirs)} finishing stacks for {len(ours)} players")
        return
    if list(map(float, ours)) == list(theirs):
        return
    fractional = any(not _whole(t) for t in theirs) and sum(ours) == sum(theirs)
    if fractional and all(abs(o - t) < 1 for o, t in zip(ours, theirs, strict=True)):
        report.fractional.append(name)
        return
    diffs = [
        f"p{i} ends with {o}, the file says {_num(t)}"
        for i, (o, t) in enumerate(zip(ours, theirs, strict=True), 1)
        if o != t
    ]
    report.mismatches.append(f"{name}: " + "; ".join(diffs))


def _whole(value: float) -> bool:
    return math.isfinite(value) and value == int(value)


def _num(value: float) -> str:
    return str(int(value)) if _whole(value) else str(value)


def check_folder(folder: Path) -> CheckReport:
    """Replay every ``.phh``/``.phhs`` file under ``folder`` (sorted by path)."""
    report = CheckReport()
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".phh", ".phhs") and p.is_file())
    for path in files:
        for name, data in hands_in(path):
            shown = str(Path(name).relative_to(folder)) if name.startswith(str(folder)) else name
            check_hand(shown, data, report)
    return report


# ------------------------------------------------------------------------------- export


def write_export(rendered: Rendered, out: Path) -> str:
    """A ``.phhs`` path gets one bundle, anything else is a folder of one file per hand."""
    from hub.engine.phh_export import bundle

    if out.suffix == ".phhs":
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(bundle(rendered), encoding="utf-8")
        where = str(out)
    else:
        out.mkdir(parents=True, exist_ok=True)
        for hand, text in rendered.hands:
            (out / hand.name).write_text(text, encoding="utf-8")
        where = f"{out}/"
    line = f"{len(rendered.hands)} hands written to {where}"
    if rendered.skipped:
        line += f"; {len(rendered.skipped)} not written: " + "; ".join(
            f"{h.name} ({why})" for h, why in rendered.skipped
        )
    return line


# ------------------------------------------------------------------------------- import


class ImportRefused(ValueError):
    """A PHH hand the tournament cannot play as it stands (another table size, blinds...)."""


def console_events(
    config: TournamentConfig,
    phh: PhhHand,
    *,
    table: int,
    deal: int,
    console: str,
) -> list[dict[str, Any]]:
    """The console events that play ``phh`` as ``deal`` at ``table``: ``start``, every action,
    and at a showdown a ``win`` naming the seats the file's cards give each pot (the hub
    checks them against its own deck order, when it has one). The hand must fit the tournament:
    same number of players, blinds, every stack the cap, no antes, actions its betting allows."""
    spec = phh.spec
    n, button = config.seats, config.buttons[deal]
    problems = []
    if spec.seats != n:
        problems.append(f"{spec.seats} players, the tournament seats {n}")
    if (spec.small_blind, spec.big_blind) != (config.small_blind, config.big_blind):
        problems.append(
            f"blinds {spec.small_blind}/{spec.big_blind}, the tournament's are "
            f"{config.small_blind}/{config.big_blind}"
        )
    if spec.antes is not None:
        problems.append("antes (the tournament has none)")
    if phh.unbounded:
        problems.append(f"unlimited (inf) starting stacks, the tournament's cap is {config.cap}")
    elif spec.stacks is not None and set(spec.stacks) != {config.cap}:
        problems.append(
            f"starting stacks {list(spec.stacks)}, the tournament's cap is {config.cap}"
        )
    if problems:
        raise ImportRefused("; ".join(problems))
    seat_of = {p: player_seat(p - 1, button, n) for p in range(1, n + 1)}
    cards = spec.cards
    assert cards is not None
    ours = HandSpec(
        seats=n,
        button=button,
        small_blind=config.small_blind,
        big_blind=config.big_blind,
        cap=config.cap,
        pot_limit=config.pot_limit,
        cards=PhhCards({seat_of[p]: c for p, c in cards.hole.items()}, cards.board),
    )
    try:
        hand = replay(PhhHand(ours, tuple((seat_of[p], m, a) for p, m, a in phh.moves), None))
    except (Mismatch, Unreplayable) as exc:
        raise ImportRefused(f"under the tournament's rules: {exc}") from None
    base = {"v": 1, "tournament": config.id, "table": table, "console": console}
    events: list[dict[str, Any]] = [{**base, "type": "start", "deal": deal}]
    for record in hand.actions:
        if record.kind in ("small_blind", "big_blind", "ante"):
            continue
        event = {**base, "type": record.kind, "seat": record.seat, "deal": deal}
        if record.kind in ("bet", "raise"):
            event["amount"] = record.to
        events.append(event)
    winners = _showdown_winners(hand)
    if winners:
        events.append({**base, "type": "win", "deal": deal, "seats": winners})
    return events


def _showdown_winners(hand: Hand) -> list[int]:
    """Seats that won chips at a showdown (none for a fold-out)."""
    if len([s for s in hand.committed if s not in hand.folded]) < 2:
        return []
    rebuilt = Hand.replay(
        hand.spec,
        [
            (a.seat, a.kind, a.to if a.kind in ("bet", "raise") else None)
            for a in hand.actions
            if a.kind not in ("small_blind", "big_blind", "ante")
        ],
    )
    won = rebuilt.computed_winners()
    return sorted(won) if won else []
