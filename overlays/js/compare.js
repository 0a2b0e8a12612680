// THE split screen: one deal, one seat, 2 to 6 tables side by side. `mode=live` shows every
// table as it stands; `mode=sync` aligns them street by street: every panel shows the streets
// before the cursor's street in full and, on the cursor's street, its actions up to the same
// number within that street. The cursor follows the live table's latest action, so a table
// replayed from history is always on the same street as the live table it follows. With no live
// table the replay starts at the first action and advances by itself (next() steps it by hand),
// ending on the finished results.
import { mountOverlay } from './duplicast.js';
import { BOARD_AT, STREETS, STREET_LABEL, cards, el, fmtInt, fmtPct, fmtSigned, signClass, statusOf, teamStyle } from './ui.js';
import { gameOf, markGame } from './games/index.js';
import { drawShowdown } from './showdown.js';
import { patch, patchCards } from './keyed.js';
import { topic } from './topics.js';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const panelsEl = $('panels');
const SHORT = { fold: 'F', check: 'X', call: 'C', bet: 'B', raise: 'R' };
const STEP_MS = 1600; // automatic replay (no live table): one action every STEP_MS
const FINISHED = ['complete', 'void', 'disputed'];
let manual = null; // replay step set by next()
let auto = null; // replay step of the automatic replay
let autoTimer = null;
let selKey = '';
let sawLive = false; // this selection had a live table (its end shows results, no restart)
let lastSteps = [];
let lastStep = -1;
let boardHigh = 0; // the most board cards the header has shown for this selection
let rerender = () => {};

function selectedRows(c, sel) {
  const rows = (c.rows || []).filter((r) => !sel.tables || sel.tables.includes(r.table));
  if (sel.tables) rows.sort((a, b) => sel.tables.indexOf(a.table) - sel.tables.indexOf(b.table));
  return rows.slice(0, 6);
}

const streetIdx = (s) => STREETS.indexOf(s);

/** A row's actions in order, each with `si` (street index) and `k` (its number on the street). */
function positioned(row) {
  const all = [...(row.actions || [])].sort((a, b) => a.i - b.i);
  const count = new Map();
  return all.map((a) => {
    const k = count.get(a.street) || 0;
    count.set(a.street, k + 1);
    return { ...a, si: Math.max(0, streetIdx(a.street)), k };
  });
}

const before = (a, c) => a.si < c.si || (a.si === c.si && a.k <= c.k);
const later = (x, y) => (x.si !== y.si ? x.si > y.si : x.k > y.k);

/** Where a live row stands: its street (even before anyone acted on it) and its last action there. */
function livePos(row, acts) {
  let si = streetIdx(row.street);
  if (si < 0) si = acts.length ? acts[acts.length - 1].si : 0; // showdown: the last action
  const on = acts.filter((a) => a.si === si);
  return { si, k: on.length ? on[on.length - 1].k : -1 };
}

/** Every replay step: street by street, action number by action number, across the panels. */
function replaySteps(rowsActs) {
  const steps = [];
  for (let si = 0; si < STREETS.length; si += 1) {
    const most = Math.max(0, ...rowsActs.map((acts) => acts.filter((a) => a.si === si).length));
    for (let k = 0; k < most; k += 1) steps.push({ si, k });
  }
  return steps;
}

const BLIND = { small_blind: 'SB', big_blind: 'BB' };
const BETS = ['bet', 'raise', 'big_blind']; // what a call calls

function actionLabel(a, focus) {
  if (focus) {
    const amount = a.kind === 'call' ? a.added : a.kind === 'bet' || a.kind === 'raise' ? a.to : 0;
    const name = BLIND[a.kind] || a.kind.toUpperCase();
    return `${name}${amount ? ` ${fmtInt(amount)}` : ''}`;
  }
  const amount = a.kind === 'bet' || a.kind === 'raise' ? ` ${fmtInt(a.to)}` : '';
  return `S${a.seat} ${SHORT[a.kind] || BLIND[a.kind] || a.kind}${amount}`;
}

/** Board cards a row has dealt (its own visible board when the hub sends it). */
function boardOf(row, acts) {
  if (Array.isArray(row.board)) return row.board.length;
  return Math.max(0, BOARD_AT[row.street] ?? 0, ...acts.map((a) => BOARD_AT[a.street] ?? 0));
}

/**
 * The focus seat's chance to win on a panel: now on a live table; the odds of an all-in once
 * its board was run out (labelled "All-in": the odds when the money went in, the story of the
 * run-out); else as the cards of the panel's street came (in a replay the cursor's street:
 * every panel on the same street). '' when the seat had folded or the table never reached
 * that street, and on a finished hand shown whole: the hand is over, its chip-score is the
 * figure (a chance there would read 100/0, or as a live figure beside a live table).
 */
export function panelEquity(row, live, whole, street) {
  const e = row.equity;
  if (!e) return '';
  if ((live || whole) && e.runout) return `All-in ${fmtPct(e.runout.win)}`;
  if (whole && FINISHED.includes(statusOf(row.status))) return '';
  if (live) return e.now ? fmtPct(e.now.win) : '';
  const f = e.streets && e.streets[street];
  return f ? fmtPct(f.win) : '';
}

/** The panel's showdown line: how its table's pots went, and the hands shown there. */
function showdownBox(row, c) {
  const box = el('div', { class: 'showdown', dataset: { testid: 'panel-showdown' } });
  drawShowdown(box, row.showdown, (seat) => (seat === c.seat && row.code ? `${row.code} S${seat}` : `S${seat}`));
  return box;
}

function panel(row, acts, c, cursor) {
  const status = statusOf(row.status);
  const live = status === 'in progress';
  const shown = cursor === null || live ? acts : acts.filter((a) => before(a, cursor));
  const hiddenAdded = acts.filter((a) => !shown.includes(a)).reduce((s, a) => s + (a.added || 0), 0);
  const whole = shown.length === acts.length;
  const finished = whole && FINISHED.includes(status);
  const pot = (row.pot ?? 0) - hiddenAdded;
  const shownStatus = cursor !== null && !whole && status !== 'waiting' ? 'in progress' : status;
  let street;
  if (live) street = livePos(row, acts).si;
  else if (!whole) street = cursor.si;
  else street = shown.length ? shown[shown.length - 1].si : 0;
  // Board cards this panel has reached: never beyond the cursor's street in a replay.
  const cursorBoard = cursor === null || cursor.si >= STREETS.length ? Infinity : BOARD_AT[STREETS[cursor.si]];
  const board = live ? boardOf(row, acts) : Math.min(boardOf(row, acts), cursorBoard);
  const nowAt = cursor && !live ? cursor : null;
  const game = gameOf(row); // its streets' names, and what it shows in place of the hole cards
  const streets = STREETS.map((st) => {
    const list = shown.filter((a) => a.street === st);
    if (!list.length) return null;
    return el('div', { class: 'street', dataset: { street: st } },
      el('span', { class: 'lbl' }, (game.shortLabels || {})[st] || (st === 'preflop' ? 'Pre' : STREET_LABEL[st])),
      el('span', { class: 'acts' }, list.map((a) => {
        const focus = a.seat === c.seat;
        const now = nowAt ? a.si === nowAt.si && a.k === nowAt.k : false;
        return el('span', {
          class: `act${focus ? ' focus' : ''}${now ? ' now' : ''}`,
          dataset: { testid: focus ? 'focus-action' : 'action', i: String(a.i), street: a.street, k: String(a.k), kind: a.kind },
        }, actionLabel(a, focus));
      })));
  });
  const chips = finished || (cursor === null && row.chips !== null && row.chips !== undefined) ? row.chips : null;
  const streetName = STREETS[street];
  const own = game.panelParts ? game.panelParts(row) : null;
  const node = el('article', {
    class: 'panel',
    dataset: { testid: 'compare-panel', table: String(row.table), team: String(row.team), status: shownStatus, street: streetName },
  },
  el('div', { class: 'phead' }, el('span', { class: 'code' }, row.code || String(row.team)),
    el('span', { class: 'tname' }, row.name || ''), el('span', { class: 'tno' }, `Table ${row.table}`)),
  el('div', { class: 'who' }, el('span', { class: 'player', dataset: { testid: 'panel-player' } }, row.player || ''),
    el('span', { class: 'holecards' }, own ? own.hole : cards(c.hole, 0, 'sm')),
    own ? own.score : null,
    el('span', { class: 'peq num', dataset: { testid: 'panel-equity', street: streetName } }, panelEquity(row, live, whole, streetName)),
    el('span', { class: 'badge', dataset: { testid: 'panel-status', status: shownStatus } }, shownStatus)),
  own ? own.line : null,
  el('div', { class: 'streets', dataset: { testid: 'panel-actions', scrolls: '' } }, el('div', { class: 'scroll' }, streets,
    shown.length === 0 ? el('div', { class: 'empty' }, status === 'waiting' ? 'Not yet played' : 'Cards dealt') : null)),
  finished && row.showdown ? showdownBox(row, c) : null,
  el('div', { class: 'pfoot' },
    el('span', { class: 'pstreet', dataset: { testid: 'panel-street', street: streetName } }, status === 'waiting' ? '' : game.streetLabel({ street: streetName })),
    'Pot', el('span', { class: 'num', dataset: { testid: 'panel-pot' } }, fmtInt(pot)),
    el('span', { class: 'score' }, 'Chip-score ', el('span', {
      class: `num ${chips === null ? '' : signClass(chips)}`, dataset: { testid: 'panel-chips' },
    }, chips === null ? '–' : fmtSigned(chips)))));
  for (const [k, v] of Object.entries(teamStyle(row.colour))) node.style.setProperty(k, v);
  return { node, shown, board: status === 'waiting' ? 0 : board };
}

/**
 * Keep the newest actions in view with whole rows only: shift the list up to the first row
 * (a street or a wrapped line of actions) that lets the last row fit, never half a row. A street
 * whose first lines scrolled away keeps its label beside its first line still in view.
 */
export function fitRows(box) {
  const inner = box.firstElementChild;
  if (!inner) return;
  inner.style.transform = '';
  for (const lbl of inner.querySelectorAll('.lbl')) { lbl.style.transform = ''; delete lbl.dataset.more; }
  for (const a of inner.querySelectorAll('.act.away')) a.classList.remove('away');
  box.dataset.shift = '0';
  const room = box.clientHeight - (Number.parseFloat(getComputedStyle(box).paddingTop) || 0)
    - (Number.parseFloat(getComputedStyle(box).paddingBottom) || 0);
  let shift = shiftFor(inner, room);
  // A long street: its first actions give way (the label counts them) until the bet being
  // called is in view beside the newest action.
  const called = calledBet(inner);
  if (called && called.bet.offsetTop < shift) {
    let away = 0;
    for (const a of called.acts) {
      if (a === called.bet || called.bet.offsetTop >= shift) break;
      a.classList.add('away');
      away += 1;
      shift = shiftFor(inner, room);
    }
    const gone = called.acts.filter((a) => a.classList.contains('away') || a.offsetTop < shift).length;
    called.street.querySelector('.lbl').dataset.more = `+${gone}`;
  }
  if (shift <= 0) return;
  inner.style.transform = `translateY(${-shift}px)`;
  box.dataset.shift = String(shift);
  for (const street of inner.querySelectorAll('.street')) {
    const top = street.offsetTop;
    if (top < shift && top + street.offsetHeight > shift) {
      const first = [...street.querySelectorAll('.act')].map((a) => a.offsetTop).filter((t) => t >= shift);
      street.querySelector('.lbl').style.transform = `translateY(${(first.length ? Math.min(...first) : shift) - top}px)`;
    }
  }
}

/** How far to shift a list so its last row fits in `room`: to the first whole row (0: it fits). */
function shiftFor(inner, room) {
  const need = inner.scrollHeight - room;
  if (need <= 0) return 0;
  const tops = [...inner.querySelectorAll('.street, .act:not(.away)')].map((n) => n.offsetTop).filter((t) => t >= need);
  return tops.length ? Math.min(...tops) : need;
}

/** The newest street's actions and its last bet or raise (the bet a call calls), if any. */
function calledBet(inner) {
  const streets = inner.querySelectorAll('.street');
  const street = streets[streets.length - 1];
  if (!street) return null;
  const acts = [...street.querySelectorAll('.act')];
  const bets = acts.filter((a) => BETS.includes(a.dataset.kind));
  return bets.length ? { street, acts, bet: bets[bets.length - 1] } : null;
}

// A list box that changes size after its rows were fitted (a panel's equity line or status
// wrapping, the graphic sliding in) is fitted again; so is one whose rows change size without
// the box changing (a font face that arrives after the rows were measured: the faces load when
// first used, after `document.fonts.ready` may have settled). A fit that hides rows changes
// the list's size once; fitted again, it ends the same, so the observer comes to rest.
const refit = typeof ResizeObserver === 'function'
  ? new ResizeObserver((entries) => {
    const boxes = new Set(entries.map((e) => (e.target.classList.contains('streets') ? e.target : e.target.parentElement)));
    for (const box of boxes) if (box && box.isConnected) fitRows(box);
  })
  : null;

function fitAll() {
  for (const box of panelsEl.querySelectorAll('.streets')) {
    fitRows(box);
    if (refit) {
      refit.observe(box);
      if (box.firstElementChild) refit.observe(box.firstElementChild);
    }
  }
}

function stopAuto() {
  clearInterval(autoTimer);
  autoTimer = null;
}

function startAuto() {
  if (autoTimer) return;
  autoTimer = setInterval(() => {
    if (auto === null || auto >= lastSteps.length - 1) {
      stopAuto();
      return;
    }
    auto += 1;
    rerender();
  }, STEP_MS);
}

/**
 * The header's hole cards and board: the board up to the furthest street a `counted` panel has
 * actually reached (in live mode with a table live, only the live tables count: a finished
 * table never spoils the live table's river).
 */
function drawBoard(c, counted) {
  const hole = $('hole');
  const holeKey = (c.hole || []).join(' ');
  if (hole.dataset.cards !== holeKey) {
    hole.replaceChildren(...cards(c.hole, 0));
    hole.dataset.cards = holeKey;
  }
  // Never drops back: once a street is on the header it stays there when the table that reached
  // it finishes and the live table still counted is a street behind.
  const reached = Math.min((c.board || []).length, Math.max(0, ...counted.map((b) => b.board)));
  const boardCount = Math.min((c.board || []).length, Math.max(reached, boardHigh));
  boardHigh = boardCount;
  const board = $('board');
  const boardKey = (c.board || []).slice(0, boardCount).join(' ');
  if (board.dataset.cards !== boardKey) {
    patchCards(board, cards((c.board || []).slice(0, boardCount), 0));
    board.dataset.cards = boardKey;
  }
  board.dataset.count = String(boardCount);
}

function render(ctx) {
  const { sel, states } = ctx;
  rerender = ctx.rerender;
  if (sel.deal === null || sel.seat === null) return false;
  const key = `${sel.deal}:${sel.seat}:${sel.mode}`;
  if (key !== selKey) {
    manual = null;
    auto = null;
    sawLive = false;
    stopAuto();
    boardHigh = 0;
    selKey = key;
  }
  const c = states.get(topic('compare', sel.deal, sel.seat));
  if (!c || !c.rows) return false;
  const rows = selectedRows(c, sel);
  if (!rows.length) return false;
  const own = gameOf(c).renderCompare; // a game's own split screen (mahjong's)
  if (own) {
    panelsEl.replaceChildren(...own($('gfx'), c, rows, $));
    const n = rows.length;
    panelsEl.style.setProperty('--cols', String(n <= 3 ? n : n === 4 ? 2 : 3));
    return true;
  }
  const rowsActs = rows.map(positioned);
  const steps = replaySteps(rowsActs);
  lastSteps = steps;
  const liveRows = rows.map((r, n) => [r, rowsActs[n]]).filter(([r]) => statusOf(r.status) === 'in progress');
  const anyLive = liveRows.length > 0;
  let cursor = null;
  let mode = anyLive ? 'Live' : 'All tables';
  if (sel.mode === 'sync') {
    const fromStep = (n) => (n === null || n < 0 ? null : steps[Math.min(n, steps.length - 1)] || null);
    if (anyLive) {
      sawLive = true;
      stopAuto();
      cursor = liveRows.map(([r, acts]) => livePos(r, acts)).reduce((x, y) => (later(y, x) ? y : x));
      const m = fromStep(manual);
      if (m && later(m, cursor)) cursor = m;
      mode = 'In sync';
    } else if (manual !== null) {
      stopAuto();
      cursor = fromStep(manual) || { si: 0, k: -1 };
      mode = 'Replay';
    } else if (sawLive || !steps.length) {
      cursor = { si: STREETS.length, k: 0 }; // the live table just finished: the results, no restart
      mode = 'Result';
    } else {
      if (auto === null) auto = 0; // no table live: replay from the first action
      if (auto < steps.length - 1) startAuto();
      cursor = steps[Math.min(auto, steps.length - 1)];
      mode = auto >= steps.length - 1 ? 'Result' : 'Replay';
    }
  }
  lastStep = cursor === null ? -1 : steps.findIndex((s) => s.si === cursor.si && s.k === cursor.k);
  const built = rows.map((r, n) => panel(r, rowsActs[n], c, cursor));
  const n = built.length;
  panelsEl.style.setProperty('--cols', String(n <= 3 ? n : n === 4 ? 2 : 3));
  panelsEl.dataset.many = String(n > 3);
  // Keyed by table: a panel, its hole cards and action rows stay the same nodes (keyed.js), so
  // nothing re-enters or fades in on an unrelated update.
  patch(panelsEl, built.map(({ node }) => node), (node) => node.dataset.table);
  fitAll();

  $('compare-title').textContent = `Deal ${c.deal ?? sel.deal} · Seat ${c.seat ?? sel.seat}`;
  markGame(c);
  drawBoard(c, cursor === null && anyLive ? built.filter((b, i) => statusOf(rows[i].status) === 'in progress') : built);
  const cur = $('cursor');
  const onStreet = cursor && cursor.si < STREETS.length ? STREETS[cursor.si] : '';
  cur.dataset.street = onStreet;
  cur.dataset.index = cursor === null || !onStreet ? '' : String(cursor.k);
  cur.dataset.step = String(lastStep);
  cur.dataset.mode = mode;
  cur.textContent = cursor === null || !onStreet ? mode
    : `${mode} · ${STREET_LABEL[onStreet]}${cursor.k >= 0 ? ` · action ${cursor.k + 1}` : ''}`;
  return true;
}

function next(ctx) {
  if (ctx.sel.mode !== 'sync') {
    ctx.update({ mode: 'sync' }); // stepping starts a replay from the first action
    selKey = `${ctx.sel.deal}:${ctx.sel.seat}:sync`;
    manual = 0;
    return;
  }
  stopAuto();
  const from = manual ?? (lastStep >= 0 ? lastStep : auto ?? -1);
  manual = Math.min(from + 1, Math.max(0, lastSteps.length - 1));
}

if (document.fonts) {
  document.fonts.ready.then(fitAll);
  document.fonts.addEventListener('loadingdone', fitAll);  // a face first used later
}
window.addEventListener('resize', fitAll);

mountOverlay({
  slot: 'compare',
  topics: (sel) => (sel.deal === null || sel.seat === null ? [] : [topic('compare', sel.deal, sel.seat)]),
  render,
  next,
});
