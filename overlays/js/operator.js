// Operator panel (operator token): console health, rejections, what is on air, dispute
// confirmation, corrections and the release state of every deal.
import { connect, params } from './duplicast.js';
import { mountMixer } from './mixer.js';
import { correctionLog, drawCorrections, mountTd } from './td.js';
import { el, fitDesk, fmtInt, keepChildren, teamStyle } from './ui.js';
import { mountSuggested } from './suggested.js';
import { guardedTake, isUnreleased, unreleasedDeal } from './airguard.js';
import { takeValue } from './mixer.js';
import { topic } from './topics.js';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const p = params();
const refit = fitDesk(1920, 1080, { content: true });
export const SILENT_AFTER_S = 60;
const SLOTS = {
  leaderboard: [['view', 'select', ['like_for_like', 'running']], ['group', 'text'], ['scope', 'text'], ['stage', 'text'], ['session', 'text']],
  seat: [['seat', 'number'], ['view', 'select', ['like_for_like', 'running']]],
  table: [['table', 'number']],
  compare: [['deal', 'number'], ['seat', 'number'], ['tables', 'text'], ['mode', 'select', ['live', 'sync']]],
  ticker: [],
};
let ops = {};
let onair = { slots: {} };
let mixer = null;

const client = connect({
  url: p.ws,
  token: p.token,
  tournament: p.tournament,
  onStatus: (s) => {
    $('link').dataset.state = s.state;
    $('link').textContent = s.state === 'open' ? `live · ${s.role}` : s.state;
  },
  onError: (f) => {
    if (!td.reply(f)) $('op-error').textContent = `${f.code}: ${f.message || ''}`;
    window.dispatchEvent(new CustomEvent('duplicast:error', { detail: f }));
  },
  onOk: (f) => {
    td.reply(f);
    if (mixer) mixer.answered(f); // (its preview commands)
  },
  onHello: () => {
    if (!client.mismatch && $('op-error').textContent.startsWith('wrong_tournament')) $('op-error').textContent = '';
  },
});

/**
 * A console's link from the hub's ops row: `connected` null with no console seen yet -> none,
 * null for a console the hub knows (no ack since the hub restarted) -> unknown,
 * false (its last ack went to nobody) -> down, true but no event for SILENT_AFTER_S -> silent.
 */
export function linkState(t, now = Date.now() / 1000) {
  if (t.connected === null || t.connected === undefined) return t.console ? 'unknown' : 'none';
  if (t.connected === false) return 'down';
  if (t.last_event_at && now - t.last_event_at > SILENT_AFTER_S) return 'silent';
  return 'ok';
}
export const LINK_LABEL = {
  none: 'no console', unknown: 'not heard yet', down: 'down', silent: 'silent', ok: 'connected',
};

/** "in_progress" -> "in progress". */
export function words(s) {
  return s === undefined || s === null ? '' : String(s).replace(/_/g, ' ');
}

function code(p) {
  const c = el('span', { class: 'tcode' }, p.code || String(p.team ?? ''));
  for (const [k, v] of Object.entries(teamStyle(p.colour))) c.style.setProperty(k, v);
  return c;
}

/** The seats of a dispute with their team and player: "S3 DEN A. Jensen". */
function seatList(seats, players) {
  const bySeat = new Map((players || []).map((x) => [x.seat, x]));
  const list = seats || [];
  if (!list.length) return '–';
  return el('span', { class: 'seats' }, list.map((s) => {
    const pl = bySeat.get(s);
    return el('span', { class: 'who', dataset: { seat: String(s) } }, `S${s} `, pl ? code(pl) : null, pl ? ` ${pl.player || ''}` : '');
  }));
}

function ago(at) {
  if (!at) return '–';
  const s = Math.max(0, Date.now() / 1000 - at);
  return s < 90 ? `${Math.round(s)} s ago` : s < 5400 ? `${Math.round(s / 60)} min ago` : new Date(at * 1000).toLocaleTimeString();
}

const LOG_ROWS = 8; // newest rejections and corrections shown: the desk fits one screen

/** "+ 4 earlier" under a log that shows only its newest LOG_ROWS lines (nothing when all show). */
function earlier(total) {
  return total > LOG_ROWS ? [el('tr', { class: 'note' }, el('td', { colspan: 5 }, `+ ${total - LOG_ROWS} earlier`))] : [];
}

function drawOps() {
  const now = Date.now() / 1000;
  $('consoles').replaceChildren(...(ops.tables || []).map((t) => {
    const state = linkState(t, now);
    return el('tr', { dataset: { testid: 'console-row', table: String(t.table), state } },
      el('td', {}, `T${t.table}`), el('td', {}, t.console || '–'),
      el('td', { dataset: { testid: 'console-link' } }, el('span', { class: `dot ${state}` }), LINK_LABEL[state]),
      el('td', {}, ago(t.last_event_at)), el('td', { class: 'r', dataset: { testid: 'console-seq' } }, t.last_seq ?? ''),
      el('td', { class: 'r', dataset: { testid: 'console-deal' } }, t.deal ?? '–'),
      el('td', { class: t.status === 'disputed' ? 'warn' : '', dataset: { testid: 'console-status' } }, words(t.status)),
      el('td', { class: `r ${t.rejections ? 'warn' : ''}`, dataset: { testid: 'console-rejections' } }, t.rejections ?? 0));
  }));
  const rejections = ops.rejections || [];
  $('rejections').replaceChildren(...rejections.slice(-LOG_ROWS).reverse().map((r) =>
    el('tr', { dataset: { testid: 'rejection-row' } }, el('td', {}, `T${r.table}`), el('td', {}, `${r.console} #${r.seq}`),
      el('td', { class: 'warn' }, words(r.code)), el('td', {}, r.message || ''), el('td', {}, ago(r.at)))),
  ...earlier(rejections.length));
  // A dispute's row stays while it is unchanged (every update redraws the panel): the winning
  // seats the TD types in it are theirs until Confirm sends them, focused or not (a row drawn
  // anew, its dispute changed, keeps the typed seats too).
  const typed = new Map([...$('disputes').children].map((r) => [`${r.dataset.table}:${r.dataset.deal}`, r.querySelector('input').value]));
  keepChildren($('disputes'), (ops.disputes || []).map((d) => {
    const seats = el('input', { placeholder: 'hub', title: 'winning seats, comma separated; empty: the hub\'s' });
    seats.value = typed.get(`${d.table}:${d.deal}`) || ''; // (a property: the row compares equal)
    return el('tr', { dataset: { testid: 'dispute-row', table: String(d.table), deal: String(d.deal) } },
      el('td', {}, `T${d.table}`), el('td', {}, d.deal),
      el('td', { class: 'r num', dataset: { testid: 'dispute-pot' } }, d.pot == null ? '–' : fmtInt(d.pot)),
      el('td', { dataset: { testid: 'dispute-declared' } }, seatList(d.declared, d.players)),
      el('td', { dataset: { testid: 'dispute-computed' } }, seatList(d.computed, d.players),
        d.reason ? el('div', { class: 'note', dataset: { testid: 'dispute-reason' } }, d.reason) : null), el('td', {}, seats),
      el('td', {}, el('button', {
        class: 'primary', dataset: { testid: 'confirm' },
        onclick: () => td.rule('confirm', { table: d.table, deal: d.deal, seats: seats.value }),
      }, 'Confirm')));
  }));
  const corrections = correctionLog(ops); // who, what, why: newest first (td.js)
  drawCorrections($('corrections'), corrections.slice(0, LOG_ROWS), ago, td.withdraw, earlier(corrections.length));
  const groups = [...new Set((ops.release || []).map((r) => String(r.group)))];
  $('release').replaceChildren(...groups.map((g) => {
    const rows = (ops.release || []).filter((r) => String(r.group) === g).sort((a, b) => a.deal - b.deal);
    return el('table', { class: 't release' },
      el('thead', {}, el('tr', {}, el('th', {}, `Group ${g}`), ...rows.map((r) => el('th', { class: 'r' }, `D${r.deal}`)))),
      el('tbody', {},
        el('tr', {}, el('td', {}, 'Done'), ...rows.map((r) => el('td', {
          class: `r ${r.tables_complete === r.tables ? 'done' : ''}`, dataset: { testid: 'release-cell', deal: String(r.deal) },
        }, `${r.tables_complete}/${r.tables}`))),
        el('tr', {}, el('td', {}, 'Released'), ...rows.map((r) => el('td', {
          class: `r ${r.released ? 'rel' : ''}`, dataset: { testid: 'released-cell', deal: String(r.deal) },
        }, r.released ? 'yes' : '–')))));
  }));
}

function field([name, type, options], value) {
  const v = value === undefined || value === null ? '' : Array.isArray(value) ? value.join(',') : String(value);
  if (type === 'select') {
    const s = el('select', { name }, options.map((o) => el('option', { value: o }, words(o))));
    s.value = v || options[0];
    return s;
  }
  return el('input', { name, type: type === 'number' ? 'number' : 'text', value: v, placeholder: name });
}

function readFields(row, slot) {
  const value = {};
  for (const [name, type] of SLOTS[slot]) {
    const input = row.querySelector(`[name="${name}"]`);
    const raw = input.value.trim();
    if (raw === '') continue;
    if (name === 'tables') value.tables = raw.split(',').map((x) => Number.parseInt(x, 10)).filter(Number.isFinite);
    else value[name] = type === 'number' ? Number.parseInt(raw, 10) : raw;
  }
  return value;
}

function slotValue(slot) {
  return (onair.slots || {})[slot] || {};
}

/** What a slot has on air, in words: "on air · deal 3 · seat 5 · tables 1, 4 · live". */
export function slotSummary(cur) {
  const keys = Object.keys(cur || {});
  if (!keys.length) return 'not set: the overlay follows its URL';
  const parts = [cur.visible === true ? 'on air' : 'hidden'];
  for (const k of ['table', 'deal', 'seat', 'group', 'scope', 'stage', 'session']) if (cur[k] !== undefined && cur[k] !== null) parts.push(`${k} ${cur[k]}`);
  if (Array.isArray(cur.tables) && cur.tables.length) parts.push(`tables ${cur.tables.join(', ')}`);
  if (cur.view) parts.push(words(cur.view));
  if (cur.mode) parts.push(cur.mode === 'sync' ? 'deal-aligned replay' : 'live');
  return parts.join(' · ');
}

function buildSlots() {
  $('slots').replaceChildren(...Object.keys(SLOTS).map((slot) => {
    const row = el('div', { class: 'slot', dataset: { testid: `slot-${slot}`, slot } });
    // Take sends every field (an empty one as null: the overlay's URL decides), as the mixer's
    // Take does; Show keeps the slot's selection. Either asks first for an unreleased deal.
    const put = (value) => client.send({ op: 'onair', slot, value });
    // Sent: the fields are the operator's no longer; the slot's on-air value fills them again.
    const take = async () => {
      if (await guardedTake(slot, takeValue(slot, readFields(row, slot), false), ops, put)) forgetEdits(row);
    };
    const show = (vis) => guardedTake(slot, { visible: vis }, ops, put, slotValue(slot));
    row.append(
      el('span', { class: 'name' }, slot),
      el('span', { class: 'fields' }, SLOTS[slot].map((f) => el('label', {}, `${f[0]} `, field(f, undefined)))),
      el('button', {
        dataset: { testid: 'slot-preview' },
        onclick: () => window.dispatchEvent(new CustomEvent('duplicast:cue', { detail: { slot, value: readFields(row, slot) } })),
      }, 'Preview'),
      el('button', { class: 'primary', dataset: { testid: 'slot-take' }, onclick: take }, 'Take'),
      el('button', { dataset: { testid: 'slot-toggle' }, onclick: () => show(slotValue(slot).visible !== true) }, 'Show'),
      el('span', { class: 'unrel', dataset: { testid: 'slot-unreleased' }, hidden: true }),
      el('span', { class: 'cur', dataset: { testid: 'slot-current' } }));
    // A field the operator typed in is theirs until Take sends it or Escape gives it back: the
    // feed's updates (every event refreshes the panel) never write over it, focused or not; an
    // update landing between the typing and the Take's click would otherwise put the on-air
    // value back and Take would send that (the wrong table on air).
    row.addEventListener('input', (e) => {
      if (e.target.name) e.target.dataset.edited = 'true';
      markSlot(row);
    });
    row.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' || !e.target.dataset || !e.target.dataset.edited) return;
      e.preventDefault();
      forgetEdits(row);
      const cur = slotValue(slot);
      for (const input of row.querySelectorAll('input, select')) if (input.name in cur) fillField(input, cur[input.name]);
      markSlot(row);
    });
    return row;
  }));
}

/** A slot field showing an on-air value (null: "the URL decides", an empty field). */
function fillField(input, v) {
  if (v === null || v === undefined) input.value = input.tagName === 'SELECT' ? input.options[0].value : '';
  else input.value = Array.isArray(v) ? v.join(',') : String(v);
}

/** The row's fields follow the slot's on-air value again. */
function forgetEdits(row) {
  for (const input of row.querySelectorAll('[data-edited]')) delete input.dataset.edited;
}

/** Mark a slot row whose fields (what its Take sends) or on-air value show an unreleased deal. */
function markSlot(row) {
  const slot = row.dataset.slot;
  const fields = unreleasedDeal(slot, readFields(row, slot), ops);
  const cur = slotValue(slot);
  const air = cur.visible === true ? unreleasedDeal(slot, cur, ops) : null;
  const deal = fields ?? air;
  const box = row.querySelector('[data-testid="slot-unreleased"]');
  box.hidden = deal === null;
  box.dataset.deal = deal === null ? '' : String(deal);
  box.textContent = deal === null ? '' : `deal ${deal} not released${air !== null ? ' · on the live feed now' : ''}`;
}

/** Show what is on air; fill a field from it unless the operator is editing that field or
 * typed in it and has not taken it yet (a key the slot holds as null, "the URL decides", leaves
 * the field empty). */
function refreshSlots() {
  for (const row of $('slots').children) {
    const cur = slotValue(row.dataset.slot);
    const visible = cur.visible === true;
    row.dataset.visible = String(visible);
    const toggle = row.querySelector('[data-testid="slot-toggle"]');
    toggle.textContent = visible ? 'Hide' : 'Show';
    toggle.className = visible ? 'on' : '';
    row.querySelector('.cur').textContent = slotSummary(cur);
    for (const input of row.querySelectorAll('input, select')) {
      if (input === document.activeElement || input.dataset.edited || !(input.name in cur)) continue;
      fillField(input, cur[input.name]);
    }
    markSlot(row);
  }
}

// The tournament director's rulings and alerts (td.js), in a section of their own.
const td = mountTd(client, $('td'), $('td-alerts'));
/** What the playouts (CasparCG, SPX, OGraf) report on air: the graphics they control, so the
 * panel is never a second, wrong truth (docs/overlays.md). */
function drawPlayout() {
  const list = $('playout');
  const shown = (ops && ops.playout) || [];
  list.replaceChildren(...shown.map((g) => {
    const item = document.createElement('li');
    item.dataset.testid = 'playout-item';
    item.dataset.tool = g.tool;
    item.dataset.page = g.page;
    item.className = 'live';
    item.textContent = `on air in ${g.name}: ${g.label}`;
    return item;
  }));
}
client.subscribe(topic('ops'), (state) => {
  ops = state;
  drawOps();
  drawPlayout();
  refreshSlots(); // the release marks
  suggested.redraw();
});
client.subscribe(topic('onair'), (state) => {
  onair = state;
  refreshSlots();
});
// The session clock: start (or resume), pause, one minute less or more.
let clockState = null;
function drawClock() {
  const c = clockState;
  const left = !c || c.status !== 'running' ? (c ? c.level_left : 0) : c.level_left - (Date.now() / 1000 - c.as_of);
  const s = Math.max(0, Math.ceil(left));
  $('op-clock-state').textContent = !c || !c.configured
    ? 'no clock configured'
    : `${c.name} · ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} · ${c.status.replace('_', ' ')}`;
}
for (const button of $('op-clock').querySelectorAll('button')) {
  button.addEventListener('click', () => {
    const command = { op: 'clock', action: button.dataset.action };
    if (button.dataset.seconds) command.seconds = Number(button.dataset.seconds);
    client.send(command);
  });
}
client.subscribe(topic('clock'), (state) => {
  clockState = state;
  drawClock();
});
setInterval(drawClock, 1000);
buildSlots();
mixer = mountMixer($('mixer'), client, p);
// Suggested split-screens: a Cue not handled by a listener (the mixer) takes the compare slot.
const suggested = mountSuggested({
  client,
  root: $('suggested'),
  take: (value) => guardedTake('compare', { ...value, visible: true }, ops, (v) => client.send({ op: 'onair', slot: 'compare', value: v })),
  unreleased: (deal) => isUnreleased(ops, deal),
});
setInterval(drawOps, 5000);
setInterval(refit, 1000); // the desk's content grows and shrinks: keep all of it on screen // keep "silent" and "ago" honest between updates
