"""The program feed's delay accuracy, for ``bench/e2e_latency.py --program-delay`` (issue #23.6).

With ``[broadcast] delay`` the hub replays the commentators' live table ``delay`` seconds late
on the ``program`` audience and holds a deal's moments until the deal is released
(docs/protocol.md 2.8). A share of the spectators (``bench/wsclients.c -s``, ``?feed=program``)
watch ``table:{t}`` there; each action row they receive, in a delta or in the snapshot a release
sends, is matched to the publish that made it: the latest publish of that row at or before the
receive time minus the delay. Its **lateness** is receive time - (publish + delay), reported
apart for

- rows whose deal was released before they were due (``released_before_due``): the delay's
  accuracy, which the ingest's queue, the program's tick (every 0.25 s) and the fan-out make;
- rows held because their deal was not yet released when they were due (``held``: the hold's
  length; ``held_after_release``, receive time - the ack of the event that released the deal).

A deal is released when every table has completed it (docs/rules.md, Release: every table of
every group, not only of its own), here with no release delay. So in a run of a minute, deals
are released only with the **sequential** schedule (every table plays deal r in round r; it
warns at load that tables share deals in a round, which the bench does not mind): deal r is
released when the slowest table finishes its r-th hand. With the bench's blocks (6 deals of a
block played in 6 rounds at all 60 tables) the first release comes after a block, about
six hands of ~22 s at one action a second. The groups stay 6 tables x 6 seats, so the live load
(payloads, equity) is the same as without the program.

Which rows the program should show (the model ``program_rows`` makes from the publishes and
acks): a table's hand is on its delayed table from its start + delay until the next start +
delay; a row of it is shown at max(due, release) if its deal is released before the delayed
table leaves the hand, never otherwise (a hand held until then is skipped, as on air). A row
is expected at every program client watching its table once its deal is released and its
showing falls a second before the clients stop. The release is taken at the ack of the event
that completes the deal; the hub releases it at its next tick, so a row due in between counts
as released before due (its lateness then includes that wait), and a hand that leaves the
delayed table within -0.1/+0.6 s of the ack is ``ambiguous`` and not counted either way.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SCHEDULE = {"method": "sequential"}  # every table plays deal r in round r: the earliest release
INF = 1 << 62
MARGIN_NS = 1_000_000_000  # a row shown this close to the clients' stop is not expected
# The hub releases a deal at its next tick (every 0.25 s) after the event that completes it,
# and the delayed table leaves a hand at a tick too: a hand that leaves within this window
# around its deal's release ack may be shown or not (``ambiguous``: neither expected nor
# counted).
AMBIGUOUS_NS = (-100_000_000, 600_000_000)


@dataclass(frozen=True, slots=True)
class Row:
    """One action row of a table's hand as the program should show it (ns, CLOCK_MONOTONIC)."""

    pub: int  # the publish of the event that made it
    due: int  # pub + delay
    release: int  # the ack of the event that released its deal (INF: not in this run)
    shown: bool  # its deal is released while the delayed table still shows its hand
    ambiguous: bool = False  # the hand leaves the delayed table about when it is released

    @property
    def counted(self) -> bool:
        """Expected and counted: shown, and not ambiguous."""
        return self.shown and not self.ambiguous

    @property
    def at(self) -> int:
        """When the program should show it."""
        return max(self.due, self.release)


def hands(full: list[dict[str, Any]], published: int) -> list[tuple[int, int, int]]:
    """A table's hands that started among its first ``published`` events: (start index, index
    of the event that completes it (``published`` or more: not in this run), deal)."""
    starts = [k for k, e in enumerate(full) if e["type"] == "start"]
    ends = [k - 1 for k in starts[1:]] + [len(full) - 1]
    return [(s, e, full[s]["deal"]) for s, e in zip(starts, ends, strict=True) if s < published]


def release_times(
    full: dict[int, list[dict[str, Any]]], published: int, acks: dict[tuple[int, int], int]
) -> dict[int, int]:
    """Each deal's release: the last ack of the event completing it at a table (INF: a table
    has not completed it in this run)."""
    done: dict[int, list[int]] = {}
    for t, events in full.items():
        for _, end, deal in hands(events, published):
            ack = acks.get((t, end), -1) if end < published else -1
            done.setdefault(deal, []).append(ack if ack >= 0 else INF)
    return {d: max(v) if len(v) == len(full) else INF for d, v in done.items()}


def program_rows(
    full: dict[int, list[dict[str, Any]]],
    sent: list[list[Any]],
    markers: Callable[[list[dict[str, Any]]], list[tuple[int, ...]]],
    delay_ns: int,
) -> tuple[dict[tuple[int, int], list[tuple[int, Row]]], dict[int, int]]:
    """Every published action row, by (table, row index), in publish order; and the releases."""
    pubs = {(t, k): pub for t, k, pub, _, _ in sent}
    acks = {(t, k): ack for t, k, _, ack, _ in sent}
    published = 1 + max(k for _, k, _, _, _ in sent)
    released = release_times(full, published, acks)
    rows: dict[tuple[int, int], list[tuple[int, Row]]] = {}
    for t, events in full.items():
        made = markers(events[:published])
        table_hands = hands(events, published)
        for n, (start, _, deal) in enumerate(table_hands):
            nxt = table_hands[n + 1][0] if n + 1 < len(table_hands) else None
            leaves = pubs[(t, nxt)] + delay_ns if nxt is not None else INF
            release = released[deal]
            for k in range(start, nxt if nxt is not None else published):
                pub = pubs[(t, k)]
                near = release + AMBIGUOUS_NS[0] <= leaves <= release + AMBIGUOUS_NS[1]
                row = Row(pub, pub + delay_ns, release, release < leaves, near)
                for i in made[k]:
                    rows.setdefault((t, i), []).append((pub, row))
    return rows, released


def program_figures(
    full: dict[int, list[dict[str, Any]]],
    sent: list[list[Any]],
    marks: array[int],
    clients: int,
    delay: float,
    counted: int,
    stop_ns: int,
    markers: Callable[[list[dict[str, Any]]], list[tuple[int, ...]]],
    stats: Callable[[Any], dict[str, float]],
) -> dict[str, Any]:
    """The program's figures (module docstring) from the clients' quadruples (client, table,
    row, receive ns); ``counted``: rows published before it (the warm-up) are not counted."""
    delay_ns = int(delay * 1e9)
    rows, released = program_rows(full, sent, markers, delay_ns)
    tables = len(full)
    on_time, held, after, seen = [], [], [], set()
    unmatched = duplicate = unexpected = delivered = 0
    for n in range(0, len(marks), 4):
        client, table, i, received = marks[n], marks[n + 1], marks[n + 2], marks[n + 3]
        candidates = rows.get((table, i), [])
        at = bisect.bisect_right(candidates, received - delay_ns, key=lambda c: c[0]) - 1
        if at < 0:
            unmatched += 1
            continue
        pub, row = candidates[at]
        if pub < counted:
            continue
        if (client, table, i, pub) in seen:
            duplicate += 1
            continue
        seen.add((client, table, i, pub))
        unexpected += not row.shown and not row.ambiguous
        delivered += row.counted and row.at <= stop_ns - MARGIN_NS
        if row.release <= row.due:
            on_time.append(received - row.due)
        else:
            held.append(received - row.due)
            after.append(received - row.release)
    watchers = {t: sum(1 for c in range(clients) if c % tables + 1 == t) for t in full}
    expected = ambiguous = 0
    for (t, _), candidates in rows.items():
        for pub, row in candidates:
            if pub >= counted and row.counted and row.at <= stop_ns - MARGIN_NS:
                expected += watchers[t]
            ambiguous += watchers[t] if pub >= counted and row.ambiguous else 0
    return {
        "delay_s": delay,
        "clients": clients,
        "schedule": SCHEDULE["method"],
        "deals_released": sum(1 for r in released.values() if r < INF),
        "rows_expected": expected,
        "rows_delivered": delivered,  # of the rows expected (a row a client got twice once)
        "delivered_pct": round(100 * delivered / max(expected, 1), 2),
        "rows_received": len(marks) // 4,
        "rows_duplicate": duplicate,
        "rows_unmatched": unmatched,
        "rows_unexpected": unexpected,  # matched to a row the model says is never shown
        "rows_ambiguous": ambiguous,  # not expected: the hand leaves about at the release
        "released_before_due": stats(on_time),  # lateness: the delay's accuracy
        "held": stats(held),  # lateness of rows held until their deal's release
        "held_after_release": stats(after),
    }
