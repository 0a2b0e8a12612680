// The multi-table replayer (/site/replay/{d}/?tables=1,2,3): one released deal at two to six
// tables side by side, stepped action by action or played, aligned street by street as the
// split screen aligns them (compare.js): step j shows, at every table, the streets before the
// cursor's street in full and, on its street, the actions up to the same number there. Phones
// (narrow windows) stack the tables and show one street at a time.
//
// Data: the deal's document `../../data/deal/{d}.json` (the site's data URL, the static
// export's file: {deal, traveller: public deal:{d}, compare: {seat: public compare:{d}:{s}}}).
// On a hub (the page served under /site/ with /api/topics answering) the public websocket feed
// keeps the same document live: deal:{d} and every compare:{d}:{s}.
import { STREETS, STREET_LABEL, BOARD_AT, actionText, card, el, fmtInt, fmtSigned, signClass } from '../ui.js';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const STEP_MS = 1400;
const RANKS = { A: 'Ace', K: 'King', Q: 'Queen', J: 'Jack', T: 'Ten', 9: 'Nine', 8: 'Eight', 7: 'Seven', 6: 'Six', 5: 'Five', 4: 'Four', 3: 'Three', 2: 'Two' };
const SUITS = { s: 'spades', h: 'hearts', d: 'diamonds', c: 'clubs' };
const narrowQuery = window.matchMedia('(max-width: 700px)');

const deal = dealOfPage();
const wanted = tablesOfPage();
let doc = null; // the deal's document (data file, then the live feed)
let view = null; // what `build` made of it: tables, steps
let pos = 0; // 0: dealt, nothing acted; j: steps[j - 1] shown; view.steps.length: the end
let timer = null;

function dealOfPage() {
  const m = location.pathname.match(/\/replay\/([1-9][0-9]{0,5})\/?$/);
  const q = new URLSearchParams(location.search).get('deal');
  return Number(m ? m[1] : q) || null;
}

function tablesOfPage() {
  const raw = new URLSearchParams(location.search).get('tables') || '';
  const list = raw.split(',').map((x) => Number(x.trim())).filter((n) => Number.isInteger(n) && n > 0);
  return [...new Set(list)];
}

/** A card with its name for assistive technology ("Ace of hearts"): its suit is a glyph, never
 * colour alone. */
function namedCard(code, size = 'sm') {
  const node = card(code, size);
  node.classList.remove('enter');
  if (code && code.length === 2 && RANKS[code[0]] && SUITS[code[1]]) {
    node.setAttribute('role', 'img');
    node.setAttribute('aria-label', `${RANKS[code[0]]} of ${SUITS[code[1]]}`);
  }
  return node;
}

const streetIdx = (s) => Math.max(0, STREETS.indexOf(s));

/** A row's actions in order, each with `si` (street index) and `k` (its number on the street). */
function positioned(actions) {
  const count = new Map();
  return [...(actions || [])].sort((a, b) => a.i - b.i).map((a) => {
    const si = streetIdx(a.street);
    const k = count.get(si) || 0;
    count.set(si, k + 1);
    return { ...a, si, k };
  });
}

const before = (a, c) => a.si < c.si || (a.si === c.si && a.k <= c.k);

/** The document made into what the page draws: the tables chosen, their seats and actions, and
 * the steps (street by street, action number by action number, across the tables). */
function build(d) {
  const seats = Object.keys(d.compare || {}).map(Number).sort((a, b) => a - b);
  if (!seats.length || !d.traveller) return null;
  const any = d.compare[String(seats[0])].rows || [];
  if (!any.length) return null; // not released (the public's empty snapshot)
  const all = any.map((r) => r.table);
  let chosen = wanted.filter((t) => all.includes(t)).slice(0, 6);
  if (chosen.length < 2) chosen = all.slice(0, 6);
  const results = new Map((d.traveller.tables || []).map((t) => [t.table, t]));
  const tables = chosen.map((t) => {
    const row = any.find((r) => r.table === t);
    const acts = positioned(row.actions);
    return {
      table: t,
      status: row.status,
      board: Array.isArray(row.board) ? row.board : d.traveller.board || [],
      acts,
      result: (results.get(t) || {}).result || null,
      blinds: Object.fromEntries(acts.filter((a) => a.kind === 'small_blind' || a.kind === 'big_blind').map((a) => [a.seat, a.kind === 'small_blind' ? 'SB' : 'BB'])),
      seats: seats.map((s) => {
        const who = (d.compare[String(s)].rows || []).find((r) => r.table === t) || {};
        return { seat: s, code: who.code || who.team || '', name: who.name || '', player: who.player || '', hole: (d.traveller.hole || {})[String(s)] || [] };
      }),
    };
  });
  const steps = [];
  for (let si = 0; si < STREETS.length; si += 1) {
    const most = Math.max(0, ...tables.map((t) => t.acts.filter((a) => a.si === si).length));
    for (let k = 0; k < most; k += 1) steps.push({ si, k });
  }
  return { tables, steps, button: d.traveller.button };
}

const cursor = () => (pos === 0 ? null : view.steps[pos - 1]);
const atEnd = () => pos === view.steps.length;

function seatsTable(t, shown, now, whole) {
  const committed = new Map();
  const folded = new Set();
  for (const a of shown) {
    committed.set(a.seat, (committed.get(a.seat) || 0) + (a.added || 0));
    if (a.kind === 'fold') folded.add(a.seat);
  }
  const acting = new Set(now.map((a) => a.seat));
  const body = t.seats.map((s) => {
    const tags = [];
    if (s.seat === view.button) tags.push('BTN');
    if (t.blinds[s.seat]) tags.push(t.blinds[s.seat]);
    const state = folded.has(s.seat) ? 'Folded' : acting.has(s.seat) ? 'Acting' : '';
    const result = whole && t.result ? t.result[String(s.seat)] : undefined;
    return el('tr', { class: [folded.has(s.seat) ? 'folded' : '', acting.has(s.seat) ? 'acting' : ''].join(' ').trim() || null, dataset: { seat: String(s.seat) } },
      el('th', { scope: 'row' }, `S${s.seat}`, tags.length ? el('span', { class: 'tag' }, ` ${tags.join(' ')}`) : null),
      el('td', { class: 'who' }, el('span', { class: 'code' }, s.code), ' ', el('span', { class: 'player' }, s.player)),
      el('td', { class: 'hole' }, s.hole.map((c) => namedCard(c))),
      el('td', { class: 'num' }, fmtInt(committed.get(s.seat) || 0)),
      el('td', { class: 'state' }, result === undefined ? state : el('span', { class: `num ${signClass(result)}` }, fmtSigned(result))),
    );
  });
  return el('table', { class: 'seats' },
    el('caption', { class: 'sr-only' }, `Table ${t.table}: seats`),
    el('thead', {}, el('tr', {},
      el('th', { scope: 'col' }, 'Seat'), el('th', { scope: 'col' }, 'Player'), el('th', { scope: 'col' }, 'Cards'),
      el('th', { scope: 'col' }, 'In'), el('th', { scope: 'col' }, whole ? 'Result' : 'State'))),
    el('tbody', {}, body));
}

function actionItem(a, isNow) {
  return el('li', { class: `act${isNow ? ' now' : ''}`, 'aria-current': isNow ? 'step' : null, dataset: { testid: 'act', i: String(a.i), street: STREETS[a.si] } },
    el('span', { class: 'seat' }, `S${a.seat}`), ' ', actionText(a));
}

function panel(t, narrow) {
  const c = cursor();
  const whole = atEnd();
  const shown = c === null ? [] : t.acts.filter((a) => before(a, c));
  const now = c === null ? [] : shown.filter((a) => a.si === c.si && a.k === c.k);
  const si = c === null ? 0 : c.si;
  const last = t.acts.length ? t.acts[t.acts.length - 1].si : 0;
  const boardCount = whole ? t.board.length : Math.min(t.board.length, BOARD_AT[STREETS[si]]);
  const over = c !== null && last < si && shown.length === t.acts.length;
  const streets = [];
  for (let s = 0; s <= (whole ? STREETS.length - 1 : si); s += 1) {
    const on = shown.filter((a) => a.si === s);
    if (!on.length) continue;
    if (narrow && !whole && s < si) {
      streets.push(el('p', { class: 'earlier' }, `${STREET_LABEL[STREETS[s]]}: ${on.length} action${on.length > 1 ? 's' : ''}`));
      continue;
    }
    streets.push(el('div', { class: 'street', dataset: { street: STREETS[s] } },
      el('h4', {}, STREET_LABEL[STREETS[s]]),
      el('ol', { class: 'acts' }, on.map((a) => actionItem(a, now.includes(a))))));
  }
  const note = over ? el('p', { class: 'over', dataset: { testid: 'over' } }, 'Hand over at this table') : null;
  return el('article', { class: 'tbl', dataset: { testid: 'table', table: String(t.table), status: t.status }, 'aria-labelledby': `t${t.table}` },
    el('header', {}, el('h3', { id: `t${t.table}` }, `Table ${t.table}`),
      el('span', { class: 'street-now', dataset: { testid: 'table-street' } }, c === null ? 'Dealt' : STREET_LABEL[STREETS[si]])),
    el('div', { class: 'board', 'aria-label': `Board at table ${t.table}`, role: 'group', dataset: { testid: 'table-board' } },
      boardCount ? t.board.slice(0, boardCount).map((x) => namedCard(x)) : el('span', { class: 'none' }, 'No board yet')),
    seatsTable(t, shown, now, whole),
    el('div', { class: 'log', dataset: { testid: 'log' } }, streets, note));
}

function statusText() {
  const n = view.steps.length;
  if (pos === 0) return `Step 0 of ${n}: cards dealt at ${view.tables.length} tables, no action yet.`;
  const c = cursor();
  const parts = view.tables.map((t) => {
    const a = t.acts.find((x) => x.si === c.si && x.k === c.k);
    if (a) return `Table ${t.table}: seat ${a.seat} ${actionText(a)}`;
    const over = !t.acts.length || t.acts[t.acts.length - 1].si < c.si;
    return `Table ${t.table}: ${over ? 'hand over' : 'no action'}`;
  });
  const end = atEnd() ? ' End of the deal: results shown.' : '';
  return `Step ${pos} of ${n}, ${STREET_LABEL[STREETS[c.si]]} action ${c.k + 1}. ${parts.join('; ')}.${end}`;
}

function render() {
  const box = $('tables');
  if (!view) return;
  const narrow = narrowQuery.matches;
  box.dataset.count = String(view.tables.length);
  box.replaceChildren(...view.tables.map((t) => panel(t, narrow)));
  $('scrub').max = String(view.steps.length);
  $('scrub').value = String(pos);
  $('scrub').setAttribute('aria-valuetext', pos === 0 ? 'dealt' : `step ${pos} of ${view.steps.length}`);
  $('step-status').textContent = statusText();
  const playing = timer !== null;
  $('play').textContent = playing ? 'Pause' : 'Play';
  $('play').setAttribute('aria-pressed', String(playing));
  document.body.dataset.pos = String(pos);
}

function go(p) {
  if (!view) return;
  pos = Math.max(0, Math.min(view.steps.length, p));
  if (atEnd()) stop();
  render();
}

function street(dir) {
  if (!view) return;
  const si = pos === 0 ? -1 : cursor().si;
  if (dir > 0) {
    const j = view.steps.findIndex((s) => s.si > si);
    go(j < 0 ? view.steps.length : j + 1);
  } else {
    const start = view.steps.findIndex((s) => s.si === si);
    const target = pos - 1 > start ? start : view.steps.findIndex((s) => s.si === si - 1);
    go(target < 0 ? 0 : target + 1);
  }
}

function stop() {
  if (timer !== null) clearInterval(timer);
  timer = null;
}

function play() {
  if (timer !== null) { stop(); render(); return; }
  if (atEnd()) pos = 0;
  timer = setInterval(() => go(pos + 1), STEP_MS);
  render();
}

const ACTS = {
  start: () => go(0), prev: () => go(pos - 1), next: () => go(pos + 1), end: () => go(view.steps.length),
  prevstreet: () => street(-1), nextstreet: () => street(1), play: () => play(),
};
const KEYS = { ArrowLeft: 'prev', ArrowRight: 'next', Home: 'start', End: 'end', PageUp: 'prevstreet', PageDown: 'nextstreet', ' ': 'play', k: 'play' };

document.querySelectorAll('[data-act]').forEach((b) => b.addEventListener('click', () => ACTS[b.dataset.act]()));
$('scrub').addEventListener('input', (e) => { stop(); go(Number(e.target.value)); });
document.addEventListener('keydown', (e) => {
  if (e.altKey || e.ctrlKey || e.metaKey) return;
  const tag = e.target && e.target.tagName;
  if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') return;
  if (tag === 'BUTTON' && (e.key === ' ' || e.key === 'Enter')) return; // the button's own
  const act = KEYS[e.key];
  if (!act || !view) return;
  e.preventDefault();
  if (act !== 'play') stop();
  ACTS[act]();
});
narrowQuery.addEventListener('change', render);

function take(d) {
  const first = view === null;
  doc = d;
  const made = build(d);
  if (!made) return;
  view = made;
  pos = first ? 0 : Math.min(pos, view.steps.length);
  $('title').textContent = `Deal ${deal} at ${view.tables.length} tables`;
  document.title = `Deal ${deal} replayer · Duplicast`;
  render();
}

function say(text) {
  $('step-status').textContent = text;
}

async function load() {
  if (!deal) { say('No deal named in the address.'); return; }
  const back = $('deal-link'); // the deal's page of the site (traveller, hand record)
  back.href = `../../deal/${deal}/`;
  back.textContent = `Deal ${deal}: traveller and hand record`;
  back.hidden = false;
  try {
    const r = await fetch(`../../data/deal/${deal}.json`, { cache: 'no-cache' });
    if (r.ok) take(await r.json());
    else say(r.status === 404 ? `Deal ${deal} is not released yet.` : `Deal ${deal} could not be read (${r.status}).`);
  } catch {
    say(`Deal ${deal} could not be read.`);
  }
  live();
}

/** On a hub, the public feed keeps the document live (a group's release adds its tables). */
async function live() {
  if (!location.pathname.startsWith('/site/')) return; // a static copy: no hub behind it
  try {
    const r = await fetch('/api/topics', { cache: 'no-store' });
    if (!r.ok) return;
  } catch {
    return;
  }
  let connect;
  let topic;
  try {
    ({ connect } = await import('../duplicast.js'));
    ({ topic } = await import('../topics.js'));
  } catch {
    return; // the feed's client is not served here: the page stays as its data file made it
  }
  const client = connect({});
  const now = { traveller: doc ? doc.traveller : null, compare: { ...(doc ? doc.compare : {}) } };
  const seats = doc ? Object.keys(doc.compare).length : 6;
  const changed = () => { if (now.traveller) take({ deal, traveller: now.traveller, compare: now.compare }); };
  client.subscribe(topic('deal', deal), (s) => { now.traveller = s; changed(); });
  for (let s = 1; s <= seats; s += 1) client.subscribe(topic('compare', deal, s), (p) => { now.compare[String(s)] = p; changed(); });
}

load();
