// One seat position across every table: the players who got the same cards, ranked by
// chip-score. Team names and colours come from the standings payload; a tournament director's
// penalty (a row's `penalty` in the seat topic, already in its chips and points) is marked
// beside the player, as the leaderboard marks a team's.
import { mountOverlay } from './duplicast.js';
import { el, flip, fmtPoints, fmtSigned, setText, signClass, teamStyle, unscored } from './ui.js';
import { topic } from './topics.js';
import { gameOf, markGame } from './games/index.js';

const list = document.querySelector('[data-testid="seat-rows"]');
const title = document.querySelector('[data-testid="seat-title"]');
const viewLabel = document.querySelector('[data-testid="view-label"]');
const afterEl = document.querySelector('[data-testid="after-deals"]');
const headingEl = document.querySelector('[data-testid="score-heading"]');
const nodes = new Map();

function teamsOf(standings) {
  const out = new Map();
  for (const view of ['like_for_like', 'running']) {
    for (const t of (standings && standings[view] && standings[view].teams) || []) out.set(String(t.team), t);
  }
  return out;
}

function rowFor(r, team, column, open) {
  const key = `${r.table}|${r.team}`;
  let row = nodes.get(key);
  if (!row) {
    row = el('div', { class: 'team-row', dataset: { testid: 'seat-row', table: String(r.table), team: String(r.team), key } },
      el('span', { class: 'rank num', dataset: { testid: 'seat-rank' } }),
      el('span', { class: 'chip', dataset: { testid: 'team-code' } }),
      el('span', { class: 'who' }, el('span', { class: 'player', dataset: { testid: 'player' } }),
        el('span', { class: 'tname' }), el('span', { class: 'penalty', hidden: true, dataset: { testid: 'seat-penalty' } })),
      el('span', { class: 'table-no num' }),
      el('span', { class: 'chips num', dataset: { testid: 'seat-chips' } }),
      el('span', { class: 'points num', dataset: { testid: 'seat-points' } }));
    nodes.set(key, row);
  }
  for (const [k, v] of Object.entries(teamStyle(team && team.colour))) row.style.setProperty(k, v);
  row.dataset.unranked = String(open);
  row.querySelector('.rank').textContent = open ? '\u2013' : r.rank ?? '';
  row.querySelector('.chip').textContent = (team && team.code) || String(r.team);
  row.querySelector('.player').textContent = r.player || '';
  row.querySelector('.tname').textContent = team && team.name ? team.name : '';
  row.querySelector('.table-no').textContent = `T${r.table}`;
  const chips = row.querySelector('.chips');
  setText(chips, fmtSigned(r.chips));
  chips.className = `chips num ${signClass(r.chips)}`;
  setText(row.querySelector('.points'), open ? '\u2013' : column === 'points' ? fmtPoints(r.points) : fmtSigned(r[column]));
  const pen = r.penalty || {};
  const parts = [];
  if (pen.points) parts.push(`\u2212${fmtPoints(pen.points)} ${column === 'imps' ? 'IMP' : 'pt'}`);
  if (pen.chips) parts.push(`\u2212${pen.chips.toLocaleString('en-US')}`);
  const penalty = row.querySelector('.penalty');
  penalty.textContent = parts.length ? `penalty ${parts.join(' \u00b7 ')}` : '';
  penalty.hidden = parts.length === 0;
  row.dataset.penalty = String(parts.length > 0);
  return row;
}

function render({ sel, states }) {
  if (sel.seat === null) return false;
  const s = states.get(topic('seat', sel.seat));
  if (!s) return false;
  const running = sel.view === 'running' && s.running && s.running.rows;
  const rows = [...((running ? s.running : s.like_for_like || {}).rows || [])];
  const open = unscored(rows); // before any deal: unranked, by table
  rows.sort((a, b) => (open ? 0 : a.rank - b.rank) || a.table - b.table);
  const teams = teamsOf(states.get(topic('standings')));
  const scoring = s.scoring || { column: 'points', heading: 'Pts' }; // the scoring format's column
  if (headingEl.textContent !== scoring.heading) headingEl.textContent = scoring.heading;
  const game = (states.get(topic('standings')) || {}).game;
  const chipsEl = document.querySelector('.c-chips');
  const unit = gameOf({ game }).unit;
  if (chipsEl && chipsEl.textContent !== unit) chipsEl.textContent = unit;
  title.textContent = `Seat ${sel.seat}`;
  viewLabel.textContent = running ? 'Running · all hands' : 'Like-for-like';
  const keep = new Set(rows.map((r) => `${r.table}|${r.team}`));
  flip(list, (n) => n.dataset.key, () => {
    for (const r of rows) list.append(rowFor(r, teams.get(String(r.team)), scoring.column, open));
    for (const n of [...list.children]) if (!keep.has(n.dataset.key)) { n.remove(); nodes.delete(n.dataset.key); }
  });
  const st = states.get(topic('standings'));
  const complete = (st && st.deals && st.deals.complete) || {};
  const counts = Object.values(complete).map((d) => d.length);
  markGame(st);
  const same = `Same ${gameOf(st).pieces}, same seat`;
  afterEl.textContent = running ? 'All completed hands' : counts.length ? `${same} · after ${Math.min(...counts)} deal${Math.min(...counts) === 1 ? '' : 's'}` : same;
  return rows.length > 0;
}

mountOverlay({ slot: 'seat', topics: (sel) => (sel.seat === null ? [] : [topic('seat', sel.seat), topic('standings')]), render });
