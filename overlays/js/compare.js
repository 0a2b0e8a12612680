// THE split screen: one deal, one seat, 2 to 6 tables side by side. `mode=live` shows every
// table as it stands; `mode=sync` aligns them action by action: every panel shows the actions up
// to the same index, which follows the live table's latest action (or next() when none is live).
import { mountOverlay } from './duplicast.js';
import { BOARD_AT, STREETS, STREET_LABEL, cards, el, fmtInt, fmtSigned, signClass, statusOf, teamStyle } from './ui.js';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const panelsEl = $('panels');
const SHORT = { fold: 'F', check: 'X', call: 'C', bet: 'B', raise: 'R' };
let manual = null; // cursor set by next()
let selKey = '';
let lastCursorMax = -1;
let lastCursorShown = -1;

function selectedRows(c, sel) {
  const rows = (c.rows || []).filter((r) => !sel.tables || sel.tables.includes(r.table));
  if (sel.tables) rows.sort((a, b) => sel.tables.indexOf(a.table) - sel.tables.indexOf(b.table));
  return rows.slice(0, 6);
}

function lastIndex(row) {
  const acts = row.actions || [];
  return acts.length ? Math.max(...acts.map((a) => a.i)) : -1;
}

/** The action index every panel shows; null = everything (live mode). */
function cursorOf(rows, sel) {
  if (sel.mode !== 'sync') return null;
  const live = rows.filter((r) => statusOf(r.status) === 'in progress');
  const liveIdx = live.length ? Math.max(...live.map(lastIndex)) : -1;
  return Math.max(liveIdx, manual ?? -1);
}

const BLIND = { small_blind: 'SB', big_blind: 'BB' };

function actionLabel(a, focus) {
  if (focus) {
    const amount = a.kind === 'call' ? a.added : a.kind === 'bet' || a.kind === 'raise' ? a.to : 0;
    const name = BLIND[a.kind] || a.kind.toUpperCase();
    return `${name}${amount ? ` ${fmtInt(amount)}` : ''}`;
  }
  const amount = a.kind === 'bet' || a.kind === 'raise' ? ` ${fmtInt(a.to)}` : '';
  return `S${a.seat} ${SHORT[a.kind] || BLIND[a.kind] || a.kind}${amount}`;
}

function panel(row, c, cursor) {
  const status = statusOf(row.status);
  const all = [...(row.actions || [])].sort((a, b) => a.i - b.i);
  const shown = cursor === null ? all : all.filter((a) => a.i <= cursor);
  const hiddenAdded = all.filter((a) => !shown.includes(a)).reduce((s, a) => s + (a.added || 0), 0);
  const finished = shown.length === all.length && ['complete', 'void', 'disputed'].includes(status);
  const pot = (row.pot ?? 0) - hiddenAdded;
  const shownStatus = cursor !== null && !finished && status !== 'waiting' ? 'in progress' : status;
  const streets = STREETS.map((st) => {
    const acts = shown.filter((a) => a.street === st);
    if (!acts.length) return null;
    return el('div', { class: 'street', dataset: { street: st } },
      el('span', { class: 'lbl' }, st === 'preflop' ? 'Pre' : STREET_LABEL[st]),
      el('span', { class: 'acts' }, acts.map((a) => {
        const focus = a.seat === c.seat;
        return el('span', {
          class: `act${focus ? ' focus' : ''}${cursor !== null && a.i === cursor ? ' now' : ''}`,
          dataset: { testid: focus ? 'focus-action' : 'action', i: String(a.i) },
        }, actionLabel(a, focus));
      })));
  });
  const chips = finished || (cursor === null && row.chips !== null && row.chips !== undefined) ? row.chips : null;
  const node = el('article', {
    class: 'panel', dataset: { testid: 'compare-panel', table: String(row.table), team: String(row.team), status: shownStatus },
  },
  el('div', { class: 'phead' }, el('span', { class: 'code' }, row.code || String(row.team)),
    el('span', { class: 'tname' }, row.name || ''), el('span', { class: 'tno' }, `Table ${row.table}`)),
  el('div', { class: 'who' }, el('span', { class: 'player', dataset: { testid: 'panel-player' } }, row.player || ''),
    el('span', { class: 'holecards' }, cards(c.hole, 0, 'sm')),
    el('span', { class: 'badge', dataset: { testid: 'panel-status', status: shownStatus } }, shownStatus)),
  el('div', { class: 'streets', dataset: { testid: 'panel-actions' } }, streets,
    shown.length === 0 ? el('div', { class: 'empty' }, status === 'waiting' ? 'Not yet played' : 'Cards dealt') : null),
  el('div', { class: 'pfoot' }, 'Pot', el('span', { class: 'num', dataset: { testid: 'panel-pot' } }, fmtInt(pot)),
    el('span', { class: 'score' }, 'Chip-score ', el('span', {
      class: `num ${chips === null ? '' : signClass(chips)}`, dataset: { testid: 'panel-chips' },
    }, chips === null ? '–' : fmtSigned(chips)))));
  for (const [k, v] of Object.entries(teamStyle(row.colour))) node.style.setProperty(k, v);
  return { node, shown };
}

function render({ sel, states }) {
  if (sel.deal === null || sel.seat === null) return false;
  const key = `${sel.deal}:${sel.seat}`;
  if (key !== selKey) {
    manual = null;
    selKey = key;
  }
  const c = states.get(`compare:${key}`);
  if (!c || !c.rows) return false;
  const rows = selectedRows(c, sel);
  if (!rows.length) return false;
  const cursor = cursorOf(rows, sel);
  lastCursorMax = Math.max(-1, ...rows.map(lastIndex));
  lastCursorShown = cursor ?? -1;
  const built = rows.map((r) => panel(r, c, cursor));
  const n = built.length;
  panelsEl.style.setProperty('--cols', String(n <= 3 ? n : n === 4 ? 2 : 3));
  panelsEl.dataset.many = String(n > 3);
  // keep existing panels of the same table (no re-entry animation) by swapping their content
  const old = new Map([...panelsEl.children].map((p) => [p.dataset.table, p]));
  panelsEl.replaceChildren(...built.map(({ node }) => {
    const prev = old.get(node.dataset.table);
    if (prev) node.style.animation = 'none';
    return node;
  }));
  // A long hand overflows its panel: keep the latest street in view (the newest action is news).
  for (const box of panelsEl.querySelectorAll('.streets')) box.scrollTop = box.scrollHeight;

  $('compare-title').textContent = `Deal ${c.deal ?? sel.deal} · Seat ${c.seat ?? sel.seat}`;
  const hole = $('hole');
  const holeKey = (c.hole || []).join(' ');
  if (hole.dataset.cards !== holeKey) {
    hole.replaceChildren(...cards(c.hole, 0));
    hole.dataset.cards = holeKey;
  }
  const anyLive = rows.some((r) => statusOf(r.status) === 'in progress');
  let streetsSeen;
  if (cursor !== null) streetsSeen = built.flatMap((b) => b.shown.map((a) => a.street));
  else if (anyLive) streetsSeen = rows.filter((r) => statusOf(r.status) === 'in progress').flatMap((r) => (r.actions || []).map((a) => a.street));
  else streetsSeen = ['river'];
  const boardCount = Math.max(0, ...streetsSeen.map((s) => BOARD_AT[s] ?? 0));
  const board = $('board');
  const boardKey = (c.board || []).slice(0, boardCount).join(' ');
  if (board.dataset.cards !== boardKey) {
    board.replaceChildren(...cards((c.board || []).slice(0, boardCount), 0));
    board.dataset.cards = boardKey;
  }
  const cur = $('cursor');
  cur.dataset.index = cursor === null ? '' : String(cursor);
  cur.textContent = cursor === null ? (anyLive ? 'Live' : 'All tables') : anyLive ? `In sync · action ${cursor + 1}` : `Replay · action ${cursor + 1}`;
  return true;
}

function next(ctx) {
  if (ctx.sel.mode !== 'sync') {
    ctx.update({ mode: 'sync' }); // stepping starts a replay from the first action
    manual = 0;
    return;
  }
  manual = Math.min((manual ?? lastCursorShown) + 1, lastCursorMax);
}

mountOverlay({
  slot: 'compare',
  topics: (sel) => (sel.deal === null || sel.seat === null ? [] : [`compare:${sel.deal}:${sel.seat}`]),
  render,
  next,
});
