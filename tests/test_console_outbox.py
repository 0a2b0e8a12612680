"""The table console's own logic in Chromium: the outbox (overlays/js/outbox.js) never reuses a
seq whatever happens to it (answers in any order, the hub's last_seq, reloads, seq gaps), and the
amounts on the pad (overlays/js/amounts.js) say why an amount cannot be sent.

The modules are loaded from the pages' own server (the fake feed serves `overlays/`); the
page itself against the real hub is tests/test_console_page.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from playwright.sync_api import Browser, Page

from tests.browser import new_page
from tests.fake_feed import FakeFeed

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def modules(browser: Browser) -> Iterator[Page]:
    feed = FakeFeed().start()
    errors: list[str] = []
    page = new_page(browser, 800, 600, errors)
    page.goto(f"{feed.url}/overlays/")
    yield page
    page.context.close()
    feed.stop()
    assert errors == []


RUN = """async (ops) => {
  const { Outbox } = await import('./js/outbox.js');
  const mem = new Map();
  const storage = { getItem: (k) => mem.get(k) ?? null, setItem: (k, v) => mem.set(k, v) };
  let box = new Outbox(storage, 'k');
  let hubLast = 0; // the hub's last_seq: it takes what arrives in seq order
  const given = [];
  const trace = [];
  for (const [op, arg] of ops) {
    if (op === 'add') given.push(box.add({ type: 'check', seat: arg }).seq);
    else if (op === 'deliver') {
      // the hub handles the oldest waiting entry, if it is the next one; the answer may be lost
      const first = box.waiting()[0];
      if (first && first.seq === hubLast + 1) {
        hubLast = first.seq;
        if (arg) box.answered(first.seq);
      } else if (first && first.seq > hubLast + 1) box.gap(hubLast + 1);
      else if (first) box.answered(first.seq); // a duplicate: answered again
    } else if (op === 'reload') box = new Outbox(storage, 'k');
    else if (op === 'state') box.floor(hubLast);
    trace.push(box.waiting().map((e) => e.seq));
  }
  return { given, trace, maxSeq: box.maxSeq, hubLast };
}"""

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(1, 6)),
        st.tuples(st.just("deliver"), st.booleans()),
        st.tuples(st.just("reload"), st.none()),
        st.tuples(st.just("state"), st.none()),
    ),
    max_size=40,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_a_seq_is_never_reused_and_waits_in_order(modules: Page, ops: list[Any]) -> None:
    out = modules.evaluate(RUN, [list(op) for op in ops])
    given_seqs = out["given"]
    assert given_seqs == sorted(set(given_seqs)), "a seq given twice or out of order"
    assert all(s > 0 for s in given_seqs)
    for waiting in out["trace"]:
        assert waiting == sorted(set(waiting))  # resent in seq order, none twice
    assert out["maxSeq"] >= max(given_seqs, default=0)
    assert out["maxSeq"] >= out["hubLast"]


def test_a_gap_renumbers_what_the_hub_never_recorded(modules: Page) -> None:
    out = modules.evaluate(
        """async () => {
      const { Outbox } = await import('./js/outbox.js');
      const mem = new Map();
      const storage = { getItem: (k) => mem.get(k) ?? null, setItem: (k, v) => mem.set(k, v) };
      const box = new Outbox(storage, 'k');
      box.floor(9); // an outbox that believes the hub is at 9; the hub expects 4
      box.add({ type: 'fold', seat: 1 });
      box.add({ type: 'fold', seat: 2 });
      box.gap(4);
      const again = new Outbox(storage, 'k');
      return { seqs: again.waiting().map((e) => [e.seq, e.event.seat]), next: again.add({}).seq };
    }"""
    )
    assert out == {"seqs": [[4, 1], [5, 2]], "next": 6}


AMOUNTS = """async () => {
  const a = await import('./js/amounts.js');
  const seat = { seat: 3, stack: 900, bet: 100 };
  const range = { min: 400, max: 1000 };
  return {
    presets: a.presets(range, seat),
    short: a.presets({ min: 400, max: 2000 }, { seat: 2, stack: 5000, bet: 0 }),
    below: a.amountProblem(300, range, seat),
    over: a.amountProblem(1100, { min: 400, max: 1000 }, { seat: 3, stack: 5000, bet: 0 }),
    allIn: a.amountProblem(1100, range, seat),
    fine: a.amountProblem(1000, range, seat),
    none: a.amountProblem(null, range, seat, 'bet'),
    keys: ['1', '0', '0', 'back', '5', '0'].reduce(a.keyIn, ''),
    zero: ['0', '0', '7'].reduce(a.keyIn, ''),
    long: '1234567890'.split('').reduce(a.keyIn, ''),
  };
}"""


def test_amounts_say_why_they_cannot_be_sent(modules: Page) -> None:
    out = modules.evaluate(AMOUNTS)
    assert out["presets"] == {"min": 400, "pot": 1000, "allIn": 1000}
    assert out["short"] == {"min": 400, "pot": 2000, "allIn": None}  # over the pot limit
    assert out["below"] == "below the minimum: a raise must reach at least 400"
    assert out["over"] == "over the pot limit: at most 1,000"
    assert out["allIn"] == "more than seat 3 has: all-in is 1,000"
    assert out["fine"] is None
    assert out["none"] == "key in the total the bet reaches"
    assert (out["keys"], out["zero"], out["long"]) == ("1050", "7", "123456789")
