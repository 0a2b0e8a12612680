// Commentator desk (commentator token): every table's hand with hole cards, how the tables that
// already played the deal on air did (swing against the seat average), and running vs
// like-for-like standings with the chips still at stake, and the running standings "if every
// hand in progress ended now" (the hub deals the known board out and awards the pots).
import { connect, params } from './duplicast.js';
import { STREET_LABEL, cards, el, fmtInt, fmtPoints, fmtSigned, signClass, statusOf, teamStyle } from './ui.js';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const p = params();
const n = p.tables && p.tables.length === 1 ? p.tables[0] : null;
const TABLES = p.tables && p.tables.length > 1 ? p.tables : Array.from({ length: n || 6 }, (_, i) => i + 1);
const tables = new Map();
let standings = null;
let onair = null;
let compareTopic = null;
let compare = null;
let projection = null;

const client = connect({
  url: p.ws,
  token: p.token,
  onStatus: (s) => {
    $('link').dataset.state = s.state;
    $('link').textContent = s.state === 'open' ? `live · ${s.role}` : s.state;
  },
  onError: (f) => {
    $('com-error').textContent = `${f.code}: ${f.message || ''}`;
  },
});

function code(row) {
  const c = el('span', { class: 'tcode' }, row.code || String(row.team ?? ''));
  for (const [k, v] of Object.entries(teamStyle(row.colour))) c.style.setProperty(k, v);
  return c;
}

function drawTables() {
  $('tables').replaceChildren(...TABLES.map((t) => {
    const s = tables.get(t) || {};
    const live = 'status' in s;
    return el('div', { class: 'card-box', dataset: { testid: 'com-table', table: String(t) } },
      el('h2', {}, `Table ${t}`, live && s.deal ? ` · deal ${s.deal} · ${STREET_LABEL[s.street] || s.street || ''}` : ''),
      live ? el('div', { style: { display: 'flex', gap: '16px', alignItems: 'center' } },
        el('span', { class: 'mini', dataset: { testid: 'com-board' } }, cards(s.board, 5, 'sm')),
        el('span', {}, 'Pot ', el('b', { class: 'num', dataset: { testid: 'com-pot' } }, fmtInt(s.pot ?? 0))),
        el('span', {}, statusOf(s.status))) : el('p', {}, s.seats ? 'No live details for this token' : 'waiting for data'),
      el('table', { class: 't' }, el('tbody', {}, (s.seats || []).map((st) =>
        el('tr', { class: `${st.folded ? 'folded' : ''} ${s.to_act === st.seat ? 'acting' : ''}`, dataset: { testid: 'com-seat', seat: String(st.seat) } },
          el('td', {}, `S${st.seat}${s.button === st.seat ? ' D' : ''}`), el('td', {}, code(st)), el('td', {}, st.player || ''),
          el('td', {}, st.hole ? el('span', { class: 'mini', dataset: { testid: 'com-hole' } }, cards(st.hole, 0, 'sm')) : ''),
          el('td', { class: 'r num' }, live ? fmtInt(st.committed) : ''),
          el('td', {}, st.all_in ? 'ALL-IN' : ''))))));
  }));
  const stake = TABLES.map((t) => [t, tables.get(t)]).filter(([, s]) => s && statusOf(s.status) === 'in progress');
  $('at-stake').replaceChildren(...stake.map(([t, s]) => el('tr', { dataset: { testid: 'stake-row', table: String(t) } },
    el('td', {}, `Table ${t}`), el('td', {}, `deal ${s.deal}`), el('td', { class: 'r num' }, `${fmtInt(s.pot)} at stake`))));
}

/** Each completed row's chips against the average of the completed rows (same deal, same seat). */
export function swings(rows) {
  const done = rows.filter((r) => statusOf(r.status) === 'complete' && typeof r.chips === 'number');
  const avg = done.length ? done.reduce((s, r) => s + r.chips, 0) / done.length : null;
  return rows.map((r) => ({ row: r, swing: avg !== null && done.includes(r) ? Math.round(r.chips - avg) : null }));
}

function drawCompare() {
  const c = compare || {};
  $('onair-deal').textContent = compareTopic ? `Deal ${c.deal ?? '?'} · seat ${c.seat ?? '?'} (on air)` : 'No deal on air';
  $('swings').replaceChildren(...swings(c.rows || []).map(({ row, swing }) =>
    el('tr', { dataset: { testid: 'swing-row', table: String(row.table) } },
      el('td', {}, `T${row.table}`), el('td', {}, code(row)), el('td', {}, row.player || ''), el('td', {}, statusOf(row.status)),
      el('td', { class: 'r num' }, fmtInt(row.pot)),
      el('td', { class: `r num ${signClass(row.chips)}`, dataset: { testid: 'swing-chips' } }, row.chips === null || row.chips === undefined ? '–' : fmtSigned(row.chips)),
      el('td', { class: `r num ${swing === null ? '' : signClass(swing)}`, dataset: { testid: 'swing' } }, swing === null ? '–' : fmtSigned(swing)))));
}

function drawStandings() {
  const l4l = (standings && standings.like_for_like && standings.like_for_like.teams) || [];
  const run = new Map(((standings && standings.running && standings.running.teams) || []).map((t) => [`${t.group}|${t.team}`, t]));
  $('standings').replaceChildren(...[...l4l].sort((a, b) => a.rank - b.rank).map((t) => {
    const r = run.get(`${t.group}|${t.team}`) || {};
    return el('tr', { dataset: { testid: 'com-team', team: String(t.team) } },
      el('td', {}, code(t), ` ${t.name || ''}`),
      el('td', { class: 'r num', dataset: { testid: 'l4l-points' } }, fmtPoints(t.points)),
      el('td', { class: `r num ${signClass(t.chips)}` }, fmtSigned(t.chips)),
      el('td', { class: 'r num', dataset: { testid: 'running-points' } }, fmtPoints(r.points)),
      el('td', { class: `r num ${signClass(r.chips)}` }, fmtSigned(r.chips)));
  }));
}

/** Projected team rows with the move against the running standings (points and places). */
export function projectionRows(proj, stand) {
  const now = new Map(((stand && stand.running && stand.running.teams) || []).map((t) => [`${t.group}|${t.team}`, t]));
  return [...((proj && proj.teams) || [])].sort((a, b) => a.rank - b.rank).map((t) => {
    const cur = now.get(`${t.group}|${t.team}`);
    return { team: t, current: cur || null, points: cur ? t.points - cur.points : null, places: cur ? cur.rank - t.rank : null };
  });
}

function drawProjection() {
  const hands = (projection && projection.hands) || [];
  $('proj-hands').textContent = hands.length
    ? hands.map((h) => `T${h.table} deal ${h.deal} ${STREET_LABEL[h.street] || h.street} · pot ${fmtInt(h.pot)}`).join('   ')
    : 'no hand in progress: projection equals the running standings';
  $('proj-teams').replaceChildren(...projectionRows(projection, standings).map(({ team, current, points, places }) =>
    el('tr', { dataset: { testid: 'proj-team', team: String(team.team) } },
      el('td', {}, String(team.rank)),
      el('td', {}, code(team), ` ${team.name || ''}`),
      el('td', { class: 'r num' }, current ? fmtPoints(current.points) : '–'),
      el('td', { class: 'r num', dataset: { testid: 'proj-points' } }, fmtPoints(team.points)),
      el('td', { class: `r num ${places ? signClass(places) : ''}`, dataset: { testid: 'proj-move' } },
        places === null ? '–' : places > 0 ? `▲${places}` : places < 0 ? `▼${-places}` : '='),
      el('td', { class: `r num ${signClass(team.chips)}` }, fmtSigned(team.chips)))));
}

function followCompare() {
  const slot = onair && onair.slots && onair.slots.compare;
  const deal = (slot && slot.deal) ?? p.deal;
  const seat = (slot && slot.seat) ?? p.seat;
  const topic = deal && seat ? `compare:${deal}:${seat}` : null;
  if (topic === compareTopic) return;
  if (compareTopic) client.unsubscribe(compareTopic);
  compareTopic = topic;
  compare = null;
  if (topic) client.subscribe(topic, (s) => { compare = s; drawCompare(); });
  drawCompare();
}

for (const t of TABLES) client.subscribe(`table:${t}`, (s) => { tables.set(t, s); drawTables(); });
client.subscribe('standings', (s) => { standings = s; drawStandings(); drawProjection(); });
client.subscribe('projection', (s) => { projection = s; drawProjection(); });
client.subscribe('onair', (s) => { onair = s; followCompare(); });
drawTables();
followCompare();
