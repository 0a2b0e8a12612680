"""The table console page in Chromium against the real hub (ingest and edge on the embedded bus),
after a played session at the other tables: two tablets on one console link (issue #30 item 6)
and a tablet carried from a rehearsal into the event (item 11).

- A tap made on a screen that had just changed (another tablet's entry moved the table) is sent
  with the table's `moves` it was aimed at and refused `stale`: nothing is entered for the next
  seat, the page says so and that another tablet uses this console.
- An entry kept on the tablet while the rehearsal's hub was down is set aside when the tablet
  reaches a hub of another event epoch on the same address: shown, never sent; the page then
  enters the event's first hand at seq 1.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from hub.bus.memory import MemoryBus
from tests.test_console_page import (
    LANDSCAPE,
    TAP_TIMEOUT,
    ConsoleHub,
    Opener,
    accepted,
    essence,
    opened,
    play,
    settled,
    shot,
    tap,
    tid,
)

pytestmark = pytest.mark.browser
__all__ = ["opened"]  # the fixture, shared with test_console_page


@pytest.fixture
def hub() -> Iterator[ConsoleHub]:
    """The hub after a played session: the other tables' first 300 events of the sample."""
    h = ConsoleHub("tablets")
    h.start()
    h.play([e for e in h.events[:300] if e["table"] != 1])
    yield h
    h.stop()


def test_a_tap_on_a_screen_that_just_changed_is_refused_stale(
    hub: ConsoleHub, opened: Opener
) -> None:
    first, _, hand = opened(LANDSCAPE)
    second, link2, _ = opened(LANDSCAPE)
    second.wait_for_timeout(1200)  # open a while: past the first second's catching up
    play(first, hand[:2])
    expect(tid(second, "to-act")).to_contain_text(f"Seat {hand[2]['seat']} ")
    # the second tablet sees entries it did not make under its console's name
    expect(tid(second, "other-tablet")).to_contain_text("Another tablet uses this console")
    tid(second, "other-ok").click()
    # The first tablet enters the seat's action; on the second, the official's finger lands
    # just as its screen changes to the next seat: the tap was meant for the seat before.
    tap(first, hand[2])
    expect(tid(second, "to-act")).to_contain_text(f"Seat {hand[3]['seat']} ", timeout=TAP_TIMEOUT)
    tid(second, "fold").click()
    expect(tid(second, "refusal")).to_contain_text("The screen had changed", timeout=TAP_TIMEOUT)
    expect(tid(second, "refusal")).to_contain_text("NOT entered")
    assert tid(second, "refusal").get_attribute("data-code") == "stale"
    expect(tid(second, "other-tablet")).to_contain_text("Another tablet uses this console")
    shot(second, "stale")
    fold = [e for e in link2.sent if e["type"] == "fold"]
    assert len(fold) == 1 and fold[0]["seat"] == hand[3]["seat"]
    assert fold[0]["after"] == 2  # the screen before the first tablet's entry: two moves in
    settled(second)
    # nothing was entered for the next seat; the first tablet hears of the refused seq too
    assert accepted(hub.journal()) == essence(hand[:3])
    expect(tid(first, "other-tablet")).to_contain_text("Another tablet uses this console")
    tid(second, "refusal-ok").click()
    tid(second, "other-ok").click()
    play(second, hand[3:5])  # the second tablet goes on from the screen it now shows
    assert accepted(hub.journal()) == essence(hand[:3]) + [
        {k: v for k, v in e.items() if k != "seq"} | {"seq": s}
        for e, s in zip(essence(hand[3:5]), (5, 6), strict=True)
    ]


def test_a_rehearsal_entry_is_set_aside_and_never_sent_to_the_event(
    hub: ConsoleHub, opened: Opener
) -> None:
    page, link, hand = opened(LANDSCAPE)
    play(page, hand[:2])
    # The rehearsal's hub goes down while the official taps one more entry: it is kept.
    link.cut()
    expect(tid(page, "link")).to_have_attribute("data-state", "offline", timeout=TAP_TIMEOUT)
    tap(page, hand[2], wait=False)
    expect(tid(page, "link")).to_have_attribute("data-waiting", "1")
    # The event's hub starts on the same address, on a fresh database: another event epoch.
    hub.run(hub._stop())
    hub.bus = MemoryBus()
    hub.run(hub.bus.connect())
    hub.run(hub._start())
    link.restore()
    aside = tid(page, "set-aside")
    expect(aside).to_contain_text("1 entry of another session set aside", timeout=TAP_TIMEOUT)
    expect(aside).to_contain_text("NOT sent to this event")
    expect(tid(page, "link")).to_have_attribute("data-waiting", "0", timeout=TAP_TIMEOUT)
    expect(tid(page, "link")).to_have_attribute("data-state", "open")
    shot(page, "set-aside")
    assert [e["seq"] for e in link.sent] == [1, 2]  # the kept entry never left the tablet
    assert hub.journal() == []
    # the event's first hand goes in from seq 1
    first = hub.config.deal_orders[1][0]
    tap(page, {"type": "start", "deal": first})
    assert [(e["seq"], e["type"]) for e in link.sent[2:]] == [(1, "start")]
    assert [r["type"] for r in hub.journal()] == ["start"]
    expect(aside).to_contain_text("set aside")  # still shown: it is the official's to check


def test_offline_entries_after_a_refused_one_are_refused_with_it_and_shown(
    hub: ConsoleHub, opened: Opener
) -> None:
    """Item 5: queued entries go in order on reconnect, each once the one before is accepted,
    and any refusal is shown. The director's penalty moved the table while the tablet was
    offline: the first waiting entry is refused `stale`; the entries worked out after it are
    withdrawn, never sent, and the page says how many."""
    page, link, hand = opened(LANDSCAPE)
    play(page, hand[:2])
    link.cut()
    expect(tid(page, "link")).to_have_attribute("data-state", "offline", timeout=TAP_TIMEOUT)
    for event in hand[2:5]:
        tap(page, event, wait=False)
    expect(tid(page, "link")).to_have_attribute("data-waiting", "3")
    penalty = {"op": "penalty", "table": 1, "seat": 1, "chips": 25, "by": "Chief TD"}
    answer = hub.run(hub.source.control({**penalty, "reason": "slow play"}))
    assert answer.get("ok"), answer
    link.restore()
    refusal = tid(page, "refusal")
    expect(refusal).to_contain_text("The screen had changed", timeout=TAP_TIMEOUT)
    expect(tid(page, "refusal-later")).to_contain_text(
        "2 later entries, made after it, were NOT sent", timeout=TAP_TIMEOUT
    )
    settled(page)
    assert {e["seq"] for e in link.sent[2:]} == {3}  # the first; the two after it withdrawn
    assert {a["code"] for a in link.acks[2:]} == {"stale"}
    assert accepted(hub.journal()) == essence(hand[:2])
    tid(page, "refusal-ok").click()
    play(page, hand[2:5])  # entered again from the hub's table: accepted (after a seq_gap)
    assert [e["type"] for e in accepted(hub.journal())] == [e["type"] for e in hand[:5]]


def test_a_fresh_tablet_on_a_console_with_history_sees_no_other_tablet(
    hub: ConsoleHub, opened: Opener
) -> None:
    """Entries made under the console's name before this tablet ever entered anything are the
    console's history (a tablet replaced, the rehearsal's bots), not another tablet's."""
    table1 = [e for e in hub.events[:300] if e["table"] == 1]
    hub.play(table1)
    page, _, _ = opened(LANDSCAPE)
    page.wait_for_timeout(1500)
    expect(tid(page, "other-tablet")).to_be_hidden()
    expect(tid(page, "link")).to_have_attribute("data-state", "open")
