"""The tournament director in the operator panel (issue #22.2, #22.5), in Debian's Chromium
against a real hub (role all, the embedded bus, the sample session through console clients):
a void with its official and reason shows in the corrections box (who, what, why); a ruling
without an official is refused on screen and changes nothing; a refusal raises an alert that
stays until acknowledged; a roster fix shows on the leaderboard overlay."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from hub.client.logreplay import replay_log
from tests.browser import SHOTS, open_overlay
from tests.hubharness import OPERATOR
from tests.test_overlays_hub import HubThread

pytestmark = pytest.mark.browser

PRELOAD = 400  # events of the sample session: some deals played at every table
FAST = 2000


@pytest.fixture(scope="module")
def hub() -> Iterator[HubThread]:
    h = HubThread("td")
    h.start()
    h.preload(PRELOAD)
    yield h
    h.stop()


def open_panel(page: Page, hub: HubThread) -> None:
    page.goto(f"{hub.url}/overlays/operator.html?token={OPERATOR}")
    expect(page.locator('[data-testid="console-row"]')).to_have_count(6, timeout=5000)


def rule(page: Page, op: str, sure: bool = True, **values: Any) -> None:
    """Fill a ruling's form and send it; ``sure``: answer the confirmation with "Yes, send"."""
    form = page.locator(f'[data-testid="td-{op}"]')
    for name, value in values.items():
        form.locator(f'input[name="{name}"]').fill(str(value))
    form.locator(f'[data-testid="td-{op}-send"]').click()
    if sure:
        page.locator('[data-testid="td-ask-yes"]').click()


def finished_deal(hub: HubThread, table: int) -> int:
    played = hub.rest(f"/api/tables/{table}", OPERATOR)
    order = hub.config.deal_orders[table]
    assert played["completed"] >= 2, played["completed"]
    return int(order[0])


def test_a_void_names_its_official_and_shows_in_the_corrections_box(
    page: Page, hub: HubThread
) -> None:
    open_panel(page, hub)
    status = page.locator('[data-testid="td-status"]')
    deal = finished_deal(hub, 1)
    before = hub.ops()["corrections"]
    # no official: a clear message, nothing sent, nothing changed
    rule(page, "void", False, table=1, deal=deal, reason="a foreign card in the deck")
    expect(status).to_have_text("Enter the official's name first: every ruling says who made it.")
    expect(status).to_have_attribute("data-state", "error")
    page.locator('[data-testid="td-by"]').fill("TD Ana Ruiz")
    rule(page, "void", False, table=1, deal=deal, reason="")  # no reason: refused on screen
    expect(status).to_have_text("A void needs a reason.")
    page.wait_for_timeout(300)
    assert hub.ops()["corrections"] == before
    rule(page, "void", table=1, deal=deal, reason="a foreign card in the deck")
    expect(status).to_have_text("Void: done.", timeout=FAST)
    row = page.locator('[data-testid="correction-row"]').first
    expect(row).to_have_attribute("data-type", "void")
    expect(row).to_contain_text(f"T1 · D{deal}")
    expect(row.locator('[data-testid="correction-who"]')).to_have_text("TD Ana Ruiz")
    expect(row.locator('[data-testid="correction-why"]')).to_have_text("a foreign card in the deck")
    entry = hub.ops()["corrections"][-1]
    assert (entry["type"], entry["by"], entry["reason"]) == (
        "void",
        "TD Ana Ruiz",
        "a foreign card in the deck",
    )
    # the hub's own refusal, in words, on the panel
    rule(page, "void", table=1, deal=deal, reason="again")
    expect(status).to_contain_text("Void refused — not allowed:", timeout=FAST)
    expect(status).to_contain_text("already void")
    # a penalty: who, what, why, newest first
    rule(page, "penalty", table=2, seat=3, chips=50, points="", reason="slow play")
    expect(status).to_have_text("Penalty: done.", timeout=FAST)
    first = page.locator('[data-testid="correction-row"]').first
    expect(first.locator('[data-testid="correction-what"]')).to_have_text(
        "penalty #1 S3 \u221250 chips"
    )
    expect(first.locator('[data-testid="correction-who"]')).to_have_text("TD Ana Ruiz")
    page.wait_for_timeout(300)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "hub-operator-td.png"), full_page=True)
    # the official is remembered for the browser session
    page.reload()
    expect(page.locator('[data-testid="td-by"]')).to_have_value("TD Ana Ruiz")


def bad_reopens(hub: HubThread, table: int, count: int) -> list[dict[str, Any]]:
    """``count`` events of the table's console the hub refuses (reopens of its last deal)."""
    event = next(e for e in hub.events[hub.sent :] if e["table"] == table)
    bad = {k: event[k] for k in ("v", "tournament", "table", "console", "seq")}
    last = hub.config.deal_orders[table][-1]
    return [{**bad, "seq": bad["seq"] + i, "type": "reopen", "deal": last} for i in range(count)]


def refuse(hub: HubThread, events: list[dict[str, Any]]) -> list[str]:
    """Send ``events`` as their console would: what the hub refused."""
    refused: list[str] = []
    hub.run(replay_log(hub.bus, hub.config.id, events, on_reject=refused.append))
    return refused


def test_a_refusal_raises_an_alert_until_acknowledged(page: Page, hub: HubThread) -> None:
    open_panel(page, hub)
    sound = page.locator('[data-testid="td-sound"]')
    expect(sound).not_to_be_checked()  # off by default
    sound.check()
    assert page.evaluate("localStorage.getItem('duplicast.td.sound')") == "on"
    page.wait_for_timeout(500)  # the ops snapshot is in: what was there raises no alert
    alerts = page.locator('[data-testid="td-alert"]')
    expect(alerts).to_have_count(0)
    first, *more = bad_reopens(hub, 2, 41)
    refused = refuse(hub, [first])
    assert refused
    expect(alerts).to_have_count(1, timeout=FAST)
    expect(alerts.first).to_have_attribute("data-kind", "refusal")
    expect(alerts.first).to_contain_text("Refused at table 2")
    page.wait_for_timeout(1500)
    expect(alerts).to_have_count(1)  # it stays
    # issue #30 item 12: one console refused again and again for one cause is one alert with
    # a count, acknowledged once (3,000 refusals stacked 2,950 alerts before)
    refused += refuse(hub, more)
    assert len(refused) == 41
    count = alerts.first.locator('[data-testid="td-alert-count"]')
    expect(count).to_have_text("\u00d741", timeout=FAST)
    expect(alerts).to_have_count(1)
    alerts.first.locator('[data-testid="td-ack"]').click()
    expect(alerts).to_have_count(0)
    page.reload()
    expect(page.locator('[data-testid="td-sound"]')).to_be_checked()  # remembered


def test_a_roster_fix_from_the_panel_shows_on_the_leaderboard(
    browser: Browser, hub: HubThread
) -> None:
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        board = context.new_page()
        open_overlay(board, hub.url, "leaderboard.html?slot=0")
        row = board.locator('[data-testid="team-row"][data-team="BRA"]')
        expect(row.locator('[data-testid="team-name"]')).to_have_text("Brazil")
        panel = context.new_page()
        open_panel(panel, hub)
        panel.locator('[data-testid="td-by"]').fill("TD Ana Ruiz")
        rule(panel, "roster", team="BRA", team_name="Brasil", colour="#112233")
        expect(panel.locator('[data-testid="td-status"]')).to_have_text(
            "Fix roster: done.", timeout=FAST
        )
        expect(row.locator('[data-testid="team-name"]')).to_have_text("Brasil", timeout=FAST)
        assert row.evaluate("r => r.style.getPropertyValue('--team')") == "#112233"
        first = panel.locator('[data-testid="correction-row"]').first
        expect(first).to_have_attribute("data-type", "roster")
        expect(first.locator('[data-testid="correction-what"]')).to_contain_text("BRA")
        # a player's name, by seat: the live table overlay shows it
        table, seat = 3, 2
        team = hub.rest(f"/api/tables/{table}", OPERATOR)["seats"][seat - 1]["team"]
        tbl = context.new_page()
        tbl.goto(f"{hub.url}/overlays/commentator.html?token={OPERATOR}")
        rule(panel, "roster", team=team, seat=seat, name="Zoë Substitute")
        expect(panel.locator('[data-testid="td-status"]')).to_have_text(
            "Fix roster: done.", timeout=FAST
        )
        expect(tbl.get_by_text("Zoë Substitute").first).to_be_visible(timeout=FAST)
        # refused by the hub: an unknown team, in words
        rule(panel, "roster", team="XXX", colour="#000000")
        expect(panel.locator('[data-testid="td-status"]')).to_contain_text(
            "Fix roster refused — bad request", timeout=FAST
        )
    finally:
        context.close()


def test_a_penalty_is_confirmed_in_words_cleared_and_withdrawn(
    page: Page, browser: Browser, hub: HubThread
) -> None:
    """Issue #30 item 7 after a played session: the ruling is repeated before it goes (table,
    seat and team, by whom), the form is empty once the hub took it (no second ruling repeats
    500 chips), a negative amount is refused naming the field the page shows, and the penalty's
    Withdraw button takes it back: the scores return to what they were. The seat ranking
    overlay marks the penalised player's row while the penalty counts."""
    seat_page = browser.new_page(viewport={"width": 1920, "height": 1080})
    open_overlay(seat_page, hub.url, "seat.html?seat=2&slot=0")
    open_panel(page, hub)
    page.locator('[data-testid="td-by"]').fill("TD Ana Ruiz")
    status = page.locator('[data-testid="td-status"]')
    form = page.locator('[data-testid="td-penalty"]')
    table, seat = 3, 2
    team = hub.rest(f"/api/tables/{table}", OPERATOR)["seats"][seat - 1]["team"]
    before = hub.rest("/api/standings", OPERATOR)
    given = len(hub.ops()["penalties"])  # (the module's hub: an earlier test gave one)
    rule(page, "penalty", False, table=table, seat=seat, chips=-500, reason="slow play")
    expect(status).to_have_text("Chips must be a whole number, 0 or more.")
    expect(page.locator('[data-testid="td-ask"]')).to_be_hidden()
    rule(page, "penalty", False, table=table, seat=seat, chips=500, reason="slow play")
    ask = page.locator('[data-testid="td-ask-text"]')
    expect(ask).to_have_text(f"Penalty 500 chips to table 3 seat 2 ({team}), by TD Ana Ruiz?")
    page.locator('[data-testid="td-ask-no"]').click()  # cancelled: nothing sent
    expect(status).to_have_text("Not sent.")
    page.wait_for_timeout(300)
    assert len(hub.ops()["penalties"]) == given
    form.locator('[data-testid="td-penalty-send"]').click()  # the values are still there
    page.locator('[data-testid="td-ask-yes"]').click()
    expect(status).to_have_text("Penalty: done.", timeout=FAST)
    for name in ("table", "seat", "chips", "points", "reason"):  # emptied: nothing repeats
        expect(form.locator(f'input[name="{name}"]')).to_have_value("")
    penalty = hub.ops()["penalties"][-1]
    assert (penalty["table"], penalty["seat"], penalty["chips"]) == (table, seat, 500)
    assert hub.rest("/api/standings", OPERATOR) != before
    marked = seat_page.locator(f'[data-testid="seat-row"][data-table="{table}"]')
    mark = marked.locator('[data-testid="seat-penalty"]')
    expect(mark).to_have_text("penalty \u2212500", timeout=FAST)  # the public board shows it
    expect(marked).to_have_attribute("data-penalty", "true")
    expect(seat_page.locator('[data-penalty="true"]')).to_have_count(1)
    seat_page.screenshot(path=str(SHOTS / "hub-seat-penalty.png"))
    # withdraw it from its row in the corrections box
    number = penalty["id"]
    button = page.locator(f'[data-testid="withdraw-penalty"][data-penalty="{number}"]')
    button.click()
    withdraw = page.locator('[data-testid="td-withdraw"]')
    expect(withdraw.locator('input[name="penalty"]')).to_have_value(str(number))
    withdraw.locator('input[name="reason"]').fill("the wrong seat was penalised")
    withdraw.locator('[data-testid="td-withdraw-send"]').click()
    expect(ask).to_have_text(
        f"Withdraw penalty {number} (500 chips to table 3 seat 2 ({team})), by TD Ana Ruiz?"
    )
    page.locator('[data-testid="td-ask-yes"]').click()
    expect(status).to_have_text("Withdraw: done.", timeout=FAST)
    expect(button).to_have_count(0, timeout=FAST)
    expect(withdraw.locator('input[name="penalty"]')).to_have_value("")
    got = hub.ops()["penalties"][-1]
    assert got["withdrawn"]["by"] == "TD Ana Ruiz"
    assert got["withdrawn"]["reason"] == "the wrong seat was penalised"
    first = page.locator('[data-testid="correction-row"]').first
    expect(first).to_have_attribute("data-type", "withdraw")
    expect(first.locator('[data-testid="correction-who"]')).to_have_text("TD Ana Ruiz")
    after = hub.rest("/api/standings", OPERATOR)
    pick = lambda s: s["running"]["teams"]  # noqa: E731
    assert pick(after) == pick(before)
    expect(mark).to_be_hidden(timeout=FAST)
    expect(seat_page.locator('[data-penalty="true"]')).to_have_count(0)
    seat_page.close()


def table_with_events(hub: HubThread, count: int) -> int:
    """A table with ``count`` events of the session still to send."""
    left = [e["table"] for e in hub.events[hub.sent :] if not e.get("_sent")]
    return next(t for t in range(1, 7) if left.count(t) >= count)


def test_a_withdraw_pressed_across_a_feed_update_still_clicks(page: Page, hub: HubThread) -> None:
    """The corrections box is redrawn on every ops update and every 5 s, and a row's age ("12 s
    ago") changes every second: the row stays while its correction is unchanged, its age
    written in place, so a Withdraw pressed before an update and released after it is a click
    on it still. (The row was drawn anew: the press and the release fell on two buttons and the
    TD's click was lost.)"""
    open_panel(page, hub)
    page.locator('[data-testid="td-by"]').fill("TD Ana Ruiz")
    rule(page, "penalty", table=4, seat=1, chips=10, reason="phone at the table")
    expect(page.locator('[data-testid="td-status"]')).to_have_text("Penalty: done.", timeout=FAST)
    number = hub.ops()["penalties"][-1]["id"]
    row = page.locator('[data-testid="correction-row"]').first
    button = row.locator(f'[data-testid="withdraw-penalty"][data-penalty="{number}"]')
    expect(button).to_have_count(1, timeout=FAST)
    when = row.locator("td").last
    before = when.text_content()
    table = table_with_events(hub, 1)
    button.hover()  # (the pointer on it, the desk still)
    page.mouse.down()
    page.wait_for_timeout(1100)  # its age is another now
    hub.next_event(table)  # the panel redraws, the correction unchanged
    expect(when).not_to_have_text(before or "", timeout=6000)
    page.mouse.up()
    form = page.locator('[data-testid="td-withdraw"]')
    expect(form.locator('input[name="penalty"]')).to_have_value(str(number), timeout=FAST)


def test_an_acknowledge_pressed_as_an_alert_arrives_takes_the_alert_aimed_at(
    page: Page, hub: HubThread
) -> None:
    """A new alert does not move the ones there (it comes at the bottom of the column, pinned
    at the top of the desk): an Acknowledge pressed before it arrives and released after it
    acknowledges the alert the TD aimed at. (New alerts were put on top: the row under the
    pointer moved down, and the release acknowledged none.)"""
    open_panel(page, hub)
    page.wait_for_timeout(500)  # the ops snapshot is in: what was there raises no alert
    alerts = page.locator('[data-testid="td-alert"]')
    assert refuse(hub, bad_reopens(hub, 5, 1))
    expect(alerts).to_have_count(1, timeout=FAST)
    expect(alerts.first).to_contain_text("Refused at table 5")
    alerts.first.locator('[data-testid="td-ack"]').hover()
    page.mouse.down()
    assert refuse(hub, bad_reopens(hub, 6, 1))  # another console: an alert of its own
    expect(alerts).to_have_count(2, timeout=FAST)
    page.mouse.up()
    expect(alerts).to_have_count(1, timeout=FAST)
    expect(alerts.first).to_contain_text("Refused at table 6")


def test_a_form_typed_in_before_the_hub_answers_keeps_what_was_typed(
    page: Page, hub: HubThread
) -> None:
    """The form a ruling was sent from is emptied when the hub takes it only if it still holds
    what was sent: what the TD typed in it meanwhile (the next ruling) stays. (It was emptied
    whatever it held.)"""
    open_panel(page, hub)
    page.locator('[data-testid="td-by"]').fill("TD Ana Ruiz")
    status = page.locator('[data-testid="td-status"]')
    form = page.locator('[data-testid="td-penalty"]')
    given = len(hub.ops()["penalties"])
    rule(page, "penalty", False, table=4, seat=2, chips=20, reason="late for the deal")
    # "Yes, send", and keys typed in the form in the same moment, before the hub's answer
    # can come in (a websocket message waits for the page's task to end)
    page.evaluate(
        """() => {
          document.querySelector('[data-testid="td-ask-yes"]').click();
          const seat = document.querySelector('[data-testid="td-penalty"] input[name="seat"]');
          seat.value = '3';
          seat.dispatchEvent(new Event('input', { bubbles: true }));
        }"""
    )
    expect(status).to_have_text("Penalty: done.", timeout=FAST)
    assert len(hub.ops()["penalties"]) == given + 1
    assert hub.ops()["penalties"][-1]["seat"] == 2
    values = {"table": "4", "seat": "3", "chips": "20", "reason": "late for the deal"}
    for name, value in values.items():
        expect(form.locator(f'input[name="{name}"]')).to_have_value(value)
    # sent again as it stands, untouched since: emptied
    rule(page, "penalty")
    expect(status).to_have_text("Penalty: done.", timeout=FAST)
    for name in values:
        expect(form.locator(f'input[name="{name}"]')).to_have_value("")
