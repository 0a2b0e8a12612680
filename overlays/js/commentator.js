// Commentator desk (commentator token): every table's hand with hole cards, how the tables that
// already played the deal on air did (swing against the seat average), and running vs
// like-for-like standings with the chips still at stake, and the running standings "if every
// hand in progress ended now" (the hub deals the known board out and awards the pots).
import { connect, holdText, params } from './duplicast.js';
import { STREET_LABEL, cardText, cards, el, equityText, fitDesk, fmtInt, fmtPct, fmtPoints, fmtSigned, signClass, statusOf, teamStyle } from './ui.js';
import { gameOf, markGame } from './games/index.js';
import { patch } from './keyed.js';
import { drawShowdown } from './showdown.js';
import { deskColumns, fitSection } from './deskfit.js';
import { FAMILIES, family, parseTopic, topic } from './topics.js';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const p = params();
fitDesk();
// The statistics panel folds (the desk fits 1080 px with it shut): open when the commentator
// last left it open on this machine, or when the URL asks (`stats=1`).
const STATS_KEY = 'duplicast.desk.stats';
const statsPanel = $('stats-panel');
try { // (only ever opened here: a click that came before this script stays)
  if (new URLSearchParams(location.search).get('stats') === '1' || localStorage.getItem(STATS_KEY) === 'open') statsPanel.open = true;
} catch { /* storage refused: as the page has it */ }
statsPanel.addEventListener('toggle', () => {
  try { localStorage.setItem(STATS_KEY, statsPanel.open ? 'open' : 'shut'); } catch { /* storage refused */ }
});
// The tables: the URL's `tables=` when given (a list, or N for 1..N), else the hub's list (the
// standings payload's `tables`), else 1..6 until the standings arrive.
const n = p.tables && p.tables.length === 1 ? p.tables[0] : null;
const URL_TABLES = p.tables ? (p.tables.length > 1 ? p.tables : Array.from({ length: n }, (_, i) => i + 1)) : null;
let TABLES = URL_TABLES || [1, 2, 3, 4, 5, 6];
const tables = new Map();
const tableSubs = new Map();
const lastDeal = new Map(); // table -> the deal it last finished (seen while this desk is open)
const dealSubs = new Map(); // deal -> unsubscribe
const deals = new Map(); // deal -> deal payload
let standings = null;
let onair = null;
let compareTopic = null;
let compare = null;
let projection = null;
let dealStatsTopic = null;
let dealStats = null;
let stats = null;

const client = connect({
  url: p.ws,
  token: p.token,
  tournament: p.tournament,
  feed: p.feed, // 'program': the secure-delay program feed (held deals say so in words)
  output: p.output, // with feed=program: which program output (each its own delay)
  onStatus: (s) => {
    $('link').dataset.state = s.state;
    $('link').textContent = s.state === 'open' ? `live · ${s.role}` : s.state;
  },
  onError: (f) => {
    const text = `${f.code}: ${f.message || ''}`;
    if (!staleTableError(text)) $('com-error').textContent = text;
  },
  onHello: () => {
    if (!client.mismatch && $('com-error').textContent.startsWith('wrong_tournament')) $('com-error').textContent = '';
  },
});

/** Each seat's chips at `table` in `deal` against the seat's average over the tables that
 * finished the deal (as the hub's comparison rows' `swing`). */
export function seatSwings(dealPayload, table) {
  const rows = ((dealPayload && dealPayload.tables) || []).filter((r) => r.result);
  const mine = rows.find((r) => r.table === table);
  if (!mine || rows.length < 1) return new Map();
  const out = new Map();
  for (const seat of Object.keys(mine.result)) {
    const all = rows.map((r) => r.result[seat] ?? 0);
    const avg = all.reduce((a, b) => a + b, 0) / all.length;
    out.set(Number(seat), Math.round((mine.result[seat] ?? 0) - avg));
  }
  return out;
}

function followDeals() {
  const want = new Set(lastDeal.values());
  for (const [d, off] of dealSubs) if (!want.has(d)) { off(); dealSubs.delete(d); deals.delete(d); }
  for (const d of want) {
    if (!dealSubs.has(d)) dealSubs.set(d, client.subscribe(topic('deal', d), (s) => { deals.set(d, s); drawTables(); }));
  }
}

function onTable(t, s) {
  const prev = tables.get(t);
  // A hand the table was playing is over once the table moves to another deal or goes idle.
  if (prev && prev.deal && prev.deal !== s.deal) lastDeal.set(t, prev.deal);
  if (s.deal && ['complete', 'void', 'disputed'].includes(statusOf(s.status))) lastDeal.set(t, s.deal);
  tables.set(t, s);
  markGame(s);
  followDeals();
  drawTables();
}

/** The refusal of a table topic the tournament does not have (the desk follows tables 1..6
 * until the standings name them: a tournament of 4 tables refuses table:5 and table:6). */
function staleTableError(text) {
  const m = /^unknown_topic: no topic named '([^']*)'/.exec(text);
  const named = m === null ? null : parseTopic('table', m[1]);
  return named !== null && !TABLES.includes(named.table);
}

function setTables(list) {
  const next = [...new Set(list)].filter(Number.isFinite);
  if (!next.length || next.join(',') === TABLES.join(',') && tableSubs.size) return;
  TABLES = next;
  if (staleTableError($('com-error').textContent)) $('com-error').textContent = '';
  for (const [t, off] of tableSubs) if (!TABLES.includes(t)) { off(); tableSubs.delete(t); tables.delete(t); }
  for (const t of TABLES) if (!tableSubs.has(t)) tableSubs.set(t, client.subscribe(topic('table', t), (s) => onTable(t, s)));
  drawTables();
}

function code(row) {
  const c = el('span', { class: 'tcode' }, row.code || String(row.team ?? ''));
  for (const [k, v] of Object.entries(teamStyle(row.colour))) c.style.setProperty(k, v);
  return c;
}

/** `node` with the team colour's variables (a dense desk marks the player's cell with it). */
function withTeam(node, colour) {
  for (const [k, v] of Object.entries(teamStyle(colour))) node.style.setProperty(k, v);
  return node;
}

const SHORT_STREET = { preflop: 'PF', flop: 'F', turn: 'T', river: 'R' };

/** A seat's chance to win street by street as the cards came ("PF 36 · F 95"), and at the
 * all-in before a run-out. */
export function equityTrail(block, seat) {
  if (!block) return '';
  const key = String(seat);
  const parts = (block.streets || []).filter((e) => e.seats[key])
    .map((e) => `${SHORT_STREET[e.street] || e.street} ${Math.round(e.seats[key].win * 100)}`);
  const allIn = block.runout && block.runout.seats[key];
  if (allIn) parts.push(`all-in ${fmtPct(allIn.win)}`);
  return parts.length > 1 || allIn ? parts.join(' · ') : '';
}

// Up to OUTS_SHOWN outs as cards, then "+N": six tables share one 1920x1080 screen (the live
// table page shows every out); the whole list is in the cell's tooltip.
const OUTS_SHOWN = 4;
function outsCell(outs) {
  if (!outs.length) return el('td', { class: 'outs', dataset: { testid: 'com-outs' } }, '');
  const shown = outs.slice(0, OUTS_SHOWN).map(cardText).join(' ');
  const more = outs.length > OUTS_SHOWN ? ` +${outs.length - OUTS_SHOWN}` : '';
  return el('td', { class: 'outs', title: outs.map(cardText).join(' '), dataset: { testid: 'com-outs' } },
    el('span', { class: 'clip' }, `${outs.length}: ${shown}${more}`)); // cut short on a tight desk
}

/** `equityText` in two parts, the tie apart (a tight desk leaves it out: panel.css). */
function winParts(e) {
  const text = equityText(e);
  const cut = text.indexOf(' (tie ');
  return cut < 0 ? [text] : [text.slice(0, cut), el('span', { class: 'tie' }, text.slice(cut))];
}

function equityCells(s, st) {
  const trail = equityTrail(s.equity, st.seat);
  return [
    el('td', { class: 'r num win', title: equityText(st.equity) }, el('div', { dataset: { testid: 'com-equity' } }, ...winParts(st.equity)),
      trail ? el('div', { class: 'trail', dataset: { testid: 'com-equity-streets' } }, trail) : null),
    outsCell(st.equity ? st.equity.outs : []),
  ];
}

/** A table box's showdown block: the last hand's pots, hands shown and run-out. */
function showdownBox(s) {
  const box = el('div', { class: 'showdown', dataset: { testid: 'com-showdown' } });
  const who = (seat) => {
    const st = (s.seats || []).find((x) => x.seat === seat);
    return st && st.code ? `${st.code} S${seat}` : `S${seat}`;
  };
  drawShowdown(box, s.showdown, who);
  return box;
}

function drawTables() {
  $('tables').style.setProperty('--cols', String(deskColumns(TABLES.length)));
  $('tables').dataset.dense = String(TABLES.length > 6); // smaller cards: see panel.css
  // Keyed by table (keyed.js): a box and its cards stay the same nodes across updates.
  patch($('tables'), TABLES.map((t) => {
    const s = tables.get(t) || {};
    const live = 'status' in s;
    const ld = lastDeal.get(t);
    const sw = ld ? seatSwings(deals.get(ld), t) : new Map();
    const own = live ? gameOf(s).renderDeskCard?.(t, s, { last: ld, swings: sw, team: code }) : null;
    if (own) return own; // a game's own card (mahjong's)
    if (s.held) {
      return el('div', { class: 'card-box', dataset: { testid: 'com-table', table: String(t) } },
        el('h2', {}, `Table ${t}`), el('p', { dataset: { testid: 'com-held' } }, holdText(s)));
    }
    const game = gameOf(s); // what it draws in place of the board, hole cards and chances
    const street = game.streetLabel(s) || s.street || '';
    return el('div', { class: 'card-box', dataset: { testid: 'com-table', table: String(t) } },
      el('h2', {}, `Table ${t}`, live && s.deal ? ` · deal ${s.deal} · ${street}` : live ? ' · between hands' : ''),
      live ? el('div', { class: 'tline' },
        el('span', { class: 'mini', dataset: { testid: 'com-board' } }, game.deskBoard ? game.deskBoard(s) : cards(s.board, 5, 'sm')),
        el('span', {}, 'Pot ', el('b', { class: 'num', dataset: { testid: 'com-pot' } }, fmtInt(s.pot ?? 0))),
        el('span', {}, statusOf(s.status)),
        s.equity && s.equity.runout ? el('span', { class: 'warn', dataset: { testid: 'com-runout' } },
          `all-in ${STREET_LABEL[s.equity.runout.street] || ''}, board run out`) : null) : el('p', {}, s.seats ? 'No live details for this token' : 'waiting for data'),
      live && s.showdown ? showdownBox(s) : null,
      el('table', { class: 't' },
        el('thead', {}, el('tr', {}, el('th', {}, 'Seat'), el('th', {}, 'Team'), el('th', {}, 'Player'), el('th', {}, 'Hole'),
          el('th', { class: 'r' }, 'In'), el('th', { class: 'r' }, 'Win'), el('th', {}, 'Outs'),
          el('th', { class: 'r', dataset: { testid: 'last-hand' }, title: 'chips in the last finished hand against the seat average' },
            ld ? `D${ld} swing` : 'Last swing'))),
        el('tbody', {}, (s.seats || []).map((st) =>
          withTeam(el('tr', { class: `${st.folded ? 'folded' : ''} ${s.to_act === st.seat ? 'acting' : ''}`, dataset: { testid: 'com-seat', seat: String(st.seat) } },
            el('td', {}, `S${st.seat}${s.button === st.seat ? ' D' : ''}`), el('td', {}, code(st)), el('td', { class: 'player', title: st.player || '' }, el('span', { class: 'clip' }, st.player || '')),
            el('td', {}, st.hole ? el('span', { class: 'mini', dataset: { testid: 'com-hole' } }, cards(st.hole, 0, 'sm'))
              : game.deskHole ? game.deskHole(st, s) : ''),
            el('td', { class: 'r num' }, st.all_in ? el('span', { class: 'warn' }, 'ALL-IN ') : '', live ? fmtInt(st.committed) : ''),
            live ? (game.deskChances ? game.deskChances(s, st) : equityCells(s, st)) : [el('td', {}), el('td', {})],
            el('td', { class: `r num ${sw.has(st.seat) ? signClass(sw.get(st.seat)) : ''}`, dataset: { testid: 'last-swing' } },
              sw.has(st.seat) ? fmtSigned(sw.get(st.seat)) : '–')), st.colour)))));
  }), (node) => node.dataset.table);
  const stake = TABLES.map((t) => [t, tables.get(t)]).filter(([, s]) => s && statusOf(s.status) === 'in progress');
  $('at-stake').replaceChildren(stake.length ? 'At stake: ' : 'Nothing at stake: no hand in progress',
    ...stake.map(([t, s]) => el('span', { dataset: { testid: 'stake-row', table: String(t) } },
      `T${t} deal ${s.deal} `, el('b', { class: 'num' }, fmtInt(s.pot)))));
  fitDeskSections();
}

/** Both columns inside the window (deskfit.js): the tables' grid and the side boxes; once a
 * frame, however many updates came in it (a fit measures the layout a few times). */
let fitPending = false;
function fitDeskSections() {
  if (fitPending) return;
  fitPending = true;
  requestAnimationFrame(() => {
    fitPending = false;
    // getBoundingClientRect is in window px, body zoom included; the body's padding stays below
    const bottom = window.innerHeight - Math.max(12, parseFloat(getComputedStyle(document.body).paddingBottom) || 0);
    fitSection($('tables'), bottom);
    fitSection(document.querySelector('.com-side'), bottom);
  });
}
window.addEventListener('resize', fitDeskSections);

/** Each finished row's swing against the seat average: the hub's `swing` when the row carries
 * it, else chips minus the mean of the completed rows. */
export function swings(rows) {
  if (rows.some((r) => 'swing' in r)) {
    return rows.map((r) => ({ row: r, swing: typeof r.swing === 'number' ? Math.round(r.swing) : null }));
  }
  const done = rows.filter((r) => statusOf(r.status) === 'complete' && typeof r.chips === 'number');
  const avg = done.length ? done.reduce((s, r) => s + r.chips, 0) / done.length : null;
  return rows.map((r) => ({ row: r, swing: avg !== null && done.includes(r) ? Math.round(r.chips - avg) : null }));
}

function drawCompare() {
  const c = compare || {};
  const where = p.deal && p.seat ? '' : ' (on air)';
  $('onair-deal').textContent = compareTopic ? `Deal ${c.deal ?? '?'} · seat ${c.seat ?? '?'}${where}${c.held ? ` · ${holdText(c)}` : ''}` : 'No deal on air';
  $('swings').replaceChildren(...swings(c.rows || []).map(({ row, swing }) =>
    el('tr', { dataset: { testid: 'swing-row', table: String(row.table) } },
      el('td', {}, `T${row.table}`), el('td', {}, code(row)), el('td', {}, row.player || ''), el('td', {}, statusOf(row.status)),
      el('td', { class: 'r num' }, fmtInt(row.pot)),
      el('td', { class: `r num ${signClass(row.chips)}`, dataset: { testid: 'swing-chips' } }, row.chips === null || row.chips === undefined ? '–' : fmtSigned(row.chips)),
      el('td', { class: `r num ${swing === null ? '' : signClass(swing)}`, dataset: { testid: 'swing' } }, swing === null ? '–' : fmtSigned(swing)))));
  fitDeskSections();
}

/** A team's score in the tournament's scoring format: IFP points, or a signed total (IMPs). */
function score(t, column) {
  if (!t || t[column] === undefined || t[column] === null) return '–';
  return column === 'points' ? fmtPoints(t[column]) : fmtSigned(t[column]);
}

function drawStandings() {
  const scoring = (standings && standings.scoring) || { column: 'points', heading: 'Pts' };
  const column = scoring.column || 'points';
  $('l4l-heading').textContent = `L4L ${(scoring.heading || 'pts').toLowerCase()}`;
  $('run-heading').textContent = `Run ${(scoring.heading || 'pts').toLowerCase()}`;
  // The game's unit of a result (chips; a mahjong hand's points), wherever the desk sums results.
  const unit = standings ? gameOf(standings).unit : 'Chips';
  for (const [id, text] of [['swings-unit', unit], ['proj-unit', unit], ['l4l-unit', `L4L ${unit.toLowerCase()}`], ['run-unit', `Run ${unit.toLowerCase()}`]]) {
    if ($(id).textContent !== text) $(id).textContent = text;
  }
  const l4l = (standings && standings.like_for_like && standings.like_for_like.teams) || [];
  const run = new Map(((standings && standings.running && standings.running.teams) || []).map((t) => [`${t.group}|${t.team}`, t]));
  $('standings').replaceChildren(...[...l4l].sort((a, b) => a.rank - b.rank).map((t) => {
    const r = run.get(`${t.group}|${t.team}`) || {};
    return el('tr', { dataset: { testid: 'com-team', team: String(t.team) } },
      el('td', {}, code(t), ` ${t.name || ''}`),
      el('td', { class: 'r num', dataset: { testid: 'l4l-points' } }, score(t, column)),
      el('td', { class: `r num ${signClass(t.chips)}` }, fmtSigned(t.chips)),
      el('td', { class: 'r num', dataset: { testid: 'running-points' } }, score(r, column)),
      el('td', { class: `r num ${signClass(r.chips)}` }, fmtSigned(r.chips)));
  }));
  fitDeskSections();
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
  fitDeskSections();
}

/** The players the statistics panel lists: the shown seat's at each table of the deal (its
 * `dealstats` rows), else every player who has played, best swing first (at most 12). */
export function statsPlayers(all, seatBlock) {
  const players = (all && all.players) || [];
  if (seatBlock && seatBlock.rows && seatBlock.rows.length) {
    const byId = new Map(players.map((pl) => [pl.id, pl]));
    return seatBlock.rows.map((r) => byId.get(r.id)).filter(Boolean);
  }
  return players.filter((pl) => pl.hands > 0).sort((a, b) => b.swing - a.swing).slice(0, 12);
}

// The statistics, where the feed the desk reads has them (the program's: docs/stats.md).
const STATS_ON = ['stats', 'dealstats'].every((f) => FAMILIES[f] && (p.feed !== 'program' || FAMILIES[f].audiences.includes('program')));
const statPct = (v) => (v === null || v === undefined ? '–' : `${Math.round(v)}%`);

/** The statistics panel: the shown deal's seats (how many tables folded, called, raised
 * preflop; the field average; the best result) and the players' betting (docs/stats.md). */
function drawStats() {
  const d = dealStats && Array.isArray(dealStats.seats) ? dealStats : null;
  const seat = p.deal && p.seat ? p.seat : (compare && compare.seat) || null;
  $('stats-heading').textContent = d ? `Statistics · deal ${d.deal}${seat ? ` · seat ${seat}` : ''}` : 'Statistics';
  // A game with no betting to count (docs/stats.md) shows no betting columns (the `bet` cells).
  const poker = (d || stats || {}).poker !== false;
  $('stats-panel').dataset.poker = String(poker);
  const seats = d ? d.seats.filter((s) => s.tables > 0) : [];
  $('stats-seats').replaceChildren(...seats.map((s) => {
    const best = s.best ? s.rows.find((r) => r.table === s.best.table) : null;
    return el('tr', { dataset: { testid: 'stats-seat', seat: String(s.seat) }, class: s.seat === seat ? 'sel' : '' },
      el('td', {}, `S${s.seat}`),
      ...['fold', 'call', 'raise', 'check'].map((k) => el('td', { class: 'r num bet', dataset: { testid: `pf-${k}` } }, d.poker ? String(s.preflop[k]) : '–')),
      el('td', { class: `r num ${signClass(s.field_avg)}` }, fmtSigned(Math.round(s.field_avg))),
      el('td', {}, best ? `T${best.table} ${best.team || ''} ${fmtSigned(best.chips)}` : '–'));
  }));
  // The shown seat's sentences (every seat's when none is shown); on the program, a deal not
  // yet released holds in words.
  const words = ((d && d.summary) || []).filter((w) => !seat || new RegExp(`seat ${seat}\\b`).test(w));
  $('stats-summary').textContent = dealStats && dealStats.held ? holdText(dealStats) : words.join(' · ');
  const block = d && seat ? d.seats.find((s) => s.seat === seat) : null;
  $('stats-players').replaceChildren(...statsPlayers(stats, block).map((pl) =>
    withTeam(el('tr', { dataset: { testid: 'stats-player', id: pl.id } },
      el('td', {}, code({ code: pl.team, colour: pl.colour })), el('td', {}, pl.name || pl.id),
      el('td', { class: 'r num' }, String(pl.hands)),
      el('td', { class: 'r num bet', dataset: { testid: 'stats-vpip' } }, statPct(pl.vpip)),
      el('td', { class: 'r num bet', dataset: { testid: 'stats-pfr' } }, statPct(pl.pfr)),
      el('td', { class: 'r num bet', dataset: { testid: 'stats-af' } }, pl.af === null ? '–' : pl.af.toFixed(1)),
      el('td', { class: 'r num bet', dataset: { testid: 'stats-wtsd' } }, statPct(pl.wtsd)),
      el('td', { class: 'r num bet' }, pl.stack_bb === null ? '–' : pl.stack_bb.toFixed(1)),
      el('td', { class: `r num ${signClass(pl.swing)}`, dataset: { testid: 'stats-swing' } }, fmtSigned(Math.round(pl.swing)))), pl.colour)));
  fitDeskSections();
}

/** The statistics of the deal shown (the deal the split screen shows). */
function followDealStats(deal) {
  const wanted = deal && STATS_ON ? topic('dealstats', deal) : null;
  if (wanted === dealStatsTopic) return;
  if (dealStatsTopic) client.unsubscribe(dealStatsTopic);
  dealStatsTopic = wanted;
  dealStats = null;
  if (wanted) client.subscribe(wanted, (s) => { dealStats = s; drawStats(); });
  drawStats();
}

/** The deal shown: the URL's `deal` and `seat` when it names them, else the compare slot's. */
function followCompare() {
  const slot = (onair && onair.slots && onair.slots.compare) || {};
  const named = p.deal && p.seat;
  const deal = named ? p.deal : slot.deal;
  const seat = named ? p.seat : slot.seat;
  const wanted = deal && seat ? topic('compare', deal, seat) : null;
  followDealStats(deal || null);
  if (wanted === compareTopic) return;
  if (compareTopic) client.unsubscribe(compareTopic);
  compareTopic = wanted;
  compare = null;
  if (wanted) client.subscribe(wanted, (s) => { compare = s; drawCompare(); drawStats(); });
  drawCompare();
}

client.subscribe(topic('standings'), (s) => {
  standings = s;
  if (!URL_TABLES && Array.isArray(s.tables) && s.tables.length) setTables(s.tables);
  drawStandings();
  drawProjection();
});
// the families the program feed does not have (the projection: live only)
if (p.feed !== 'program' || family('projection').audiences.includes('program')) client.subscribe(topic('projection'), (s) => { projection = s; drawProjection(); });
client.subscribe(topic('onair'), (s) => { onair = s; followCompare(); });
if (STATS_ON) client.subscribe(topic('stats'), (s) => { stats = s; drawStats(); });
setTables(TABLES);
followCompare();
