// Statistics overlay (1920x1080, transparent): the players' betting (VPIP, PFR, AF, WTSD, swing
// against the field) from the `stats` topic, or with `deal=D` one deal's seats (how many tables
// folded / called / raised preflop, the field average, the best result) from `dealstats:D`.
// Without a token it reads the public topics: released deals only. With `feed=program` (what
// goes to air when a [broadcast] delay is set) the programme's: the players' statistics as the
// delayed standings count them, a deal's seats held ("Hand in progress · deal D") until it is
// released, then moving with the delayed play. `team=CODE` keeps one team's players;
// `players=ARG-1,BRA-2` names them; `top=N` (default 8) the rows, ranked by swing (`team`,
// `top`, `deal`, `seat` are also a playout template's fields). `slot=stats` follows an on-air
// slot of that name when the desk has one.
import { mountOverlay } from './duplicast.js';
import { el, fmtSigned, setText, signClass, teamStyle } from './ui.js';
import { topic } from './topics.js';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const gfx = $('gfx');

const pct = (v) => (v === null || v === undefined ? '\u2013' : `${Math.round(v)}%`);
const num = (v, digits = 1) => (v === null || v === undefined ? '\u2013' : Number(v).toFixed(digits));
const list = (v) => (Array.isArray(v) ? v : String(v || '').split(',')).map((x) => String(x).trim()).filter(Boolean);

function heading(names) {
  $('stats-cols').replaceChildren(...names.map((n) => el('span', {}, n)));
}

function teamRow(colour, testid, id, ...cells) {
  const row = el('div', { class: 'st-row', dataset: { testid, id: String(id) } }, ...cells);
  for (const [k, v] of Object.entries(teamStyle(colour))) row.style.setProperty(k, v);
  return row;
}

/** The players shown: the URL's `players`, else one team's, else the top by swing. */
export function pickPlayers(players, sel) {
  const named = list(sel.players);
  if (named.length) return named.map((id) => players.find((p) => p.id === id)).filter(Boolean);
  let out = [...players].filter((p) => p.hands > 0);
  if (sel.team) out = out.filter((p) => p.team === String(sel.team));
  out.sort((a, b) => b.swing - a.swing || a.id.localeCompare(b.id));
  return out.slice(0, Number(sel.top) || 8);
}

function drawPlayers(s, sel) {
  gfx.dataset.mode = 'players';
  const poker = s.poker !== false;
  setText($('stats-title'), sel.team ? `${sel.team} \u00b7 player statistics` : 'Player statistics');
  setText($('stats-sub'), s.deals.length ? `after ${s.deals.length} deal${s.deals.length === 1 ? '' : 's'}` : 'no deal yet');
  heading(['Team', 'Player', 'Hands', poker ? 'VPIP' : '', poker ? 'PFR' : '', poker ? 'AF' : '', poker ? 'WTSD' : '', 'Swing']);
  const rows = pickPlayers(s.players || [], sel).map((p) => teamRow(p.colour, 'stats-player', p.id,
    el('span', {}, el('span', { class: 'chip' }, p.team)),
    el('span', { class: 'name' }, `${p.name || p.id}`, el('small', { class: 'zero' }, `  seat ${p.seat}`)),
    el('span', { class: 'v num' }, String(p.hands)),
    el('span', { class: 'v num', dataset: { testid: 'stats-vpip' } }, poker ? pct(p.vpip) : ''),
    el('span', { class: 'v num', dataset: { testid: 'stats-pfr' } }, poker ? pct(p.pfr) : ''),
    el('span', { class: 'v num', dataset: { testid: 'stats-af' } }, poker ? num(p.af) : ''),
    el('span', { class: 'v num', dataset: { testid: 'stats-wtsd' } }, poker ? pct(p.wtsd) : ''),
    el('span', { class: `v num ${signClass(p.swing)}`, dataset: { testid: 'stats-swing' } }, fmtSigned(Math.round(p.swing)))));
  $('stats-rows').replaceChildren(...rows);
  setText($('stats-foot'), poker ? 'VPIP: chips put in voluntarily preflop \u00b7 PFR: raised preflop \u00b7 AF: bets and raises per call after the flop \u00b7 WTSD: showdowns of flops seen' : '');
  return rows.length > 0;
}

/** A seat's preflop in words and bars: "F 4 C 1 R 1" (the tables that folded, called, raised). */
function preflopCell(pf) {
  const parts = [['raise', 'R'], ['call', 'C'], ['fold', 'F'], ['check', 'X']]
    .filter(([k]) => pf[k]).map(([k, l]) => el('b', { class: k }, `${l} ${pf[k]}`));
  return el('span', { class: 'pf', dataset: { testid: 'stats-preflop' } }, ...parts);
}

function drawDeal(d, sel) {
  gfx.dataset.mode = 'deal';
  setText($('stats-title'), `Deal ${d.deal} \u00b7 seat by seat`);
  const played = Math.max(0, ...d.seats.map((s) => s.tables));
  setText($('stats-sub'), `${played} table${played === 1 ? '' : 's'}`);
  heading(['Seat', 'Best at the seat', d.poker ? 'Preflop' : '', 'Field avg', 'Best result']);
  const rows = d.seats.filter((s) => s.tables > 0 && (!sel.seat || s.seat === Number(sel.seat))).map((s) => {
    const best = s.best ? s.rows.find((r) => r.table === s.best.table) : null;
    return teamRow(best && best.colour, 'stats-seat', s.seat,
      el('span', { class: 'num' }, `S${s.seat}`),
      el('span', { class: 'name' }, best ? `${best.team || ''} ${best.name || ''}` : ''),
      d.poker ? preflopCell(s.preflop) : el('span'),
      el('span', { class: `v num ${signClass(s.field_avg)}` }, fmtSigned(Math.round(s.field_avg))),
      el('span', { class: `v num ${signClass(s.best && s.best.chips)}`, dataset: { testid: 'stats-best' } },
        s.best ? `T${s.best.table} ${fmtSigned(s.best.chips)}` : '\u2013'));
  });
  $('stats-rows').replaceChildren(...rows);
  setText($('stats-foot'), (d.summary || []).slice(0, 2).join(' \u00b7 '));
  return rows.length > 0;
}

// The page's own choices (``params`` keeps the hub's common ones).
const OWN = Object.fromEntries(new URLSearchParams(globalThis.location ? location.search : ''));

function render({ sel: common, states }) {
  const sel = { team: OWN.team, players: OWN.players, top: OWN.top, ...common };
  if (sel.deal) {
    // (a deal not released yet: the hub answers an empty document until it is)
    const d = states.get(topic('dealstats', Number(sel.deal)));
    return d && Array.isArray(d.seats) ? drawDeal(d, sel) : false;
  }
  const s = states.get(topic('stats'));
  return s && Array.isArray(s.players) ? drawPlayers(s, sel) : false;
}

mountOverlay({
  slot: 'stats',
  topics: (sel) => [sel.deal ? topic('dealstats', Number(sel.deal)) : topic('stats')],
  render,
});
