// Team standings overlay: like-for-like by default (the only view public feeds carry),
// `view=running` for commentator/operator tokens. Rows reorder with FLIP; movement arrows
// compare each team's rank with the previous update. An event with stages and sessions shows
// one block of its standings: `scope` = stage (default) | session | across | overall, with
// `stage`, `session` and `group` (the same choice as GET /api/standings?scope=…). The last column is
// the scoring format's total (`standings.scoring`: IFP points, IMPs, or chips alone).
import { mountOverlay } from './duplicast.js';
import { el, flip, fmtPoints, fmtSigned, setText, signClass, teamStyle, unscored } from './ui.js';
import { topic } from './topics.js';
import { gameOf } from './games/index.js';

const groupsEl = document.querySelector('[data-testid="groups"]');
const viewLabel = document.querySelector('[data-testid="view-label"]');
const afterEl = document.querySelector('[data-testid="after-deals"]');
const gfx = document.querySelector('[data-testid="gfx"]');
const headingEl = document.querySelector('[data-testid="score-heading"]');
const rows = new Map(); // key -> row element
const sections = new Map(); // group -> list element
let prevRanks = new Map();
let prevView = null;
let movement = new Map();

function keyOf(t) {
  return `${t.section}|${t.team}`;
}

/** A team's row; `open`: its group has no scores yet (no rank, no points, shown as "–"). */
function rowFor(t, column, open) {
  const key = keyOf(t);
  let row = rows.get(key);
  if (!row) {
    row = el('div', { class: 'team-row', dataset: { testid: 'team-row', team: String(t.team), key } },
      el('span', { class: 'rank num', dataset: { testid: 'team-rank' } }),
      el('span', { class: 'move', dataset: { testid: 'team-move' } }),
      el('span', { class: 'who' },
        el('span', { class: 'chip', dataset: { testid: 'team-code' } }),
        el('span', { class: 'name', dataset: { testid: 'team-name' } }),
        el('span', { class: 'penalty', dataset: { testid: 'team-penalty' } })),
      el('span', { class: 'chips num', dataset: { testid: 'team-chips' } }),
      el('span', { class: 'points num', dataset: { testid: 'team-points' } }));
    rows.set(key, row);
  }
  for (const [k, v] of Object.entries(teamStyle(t.colour))) row.style.setProperty(k, v);
  row.dataset.unranked = String(open);
  row.querySelector('.rank').textContent = open ? '\u2013' : t.rank ?? '';
  const mv = movement.get(key) || 0;
  const move = row.querySelector('.move');
  move.textContent = mv > 0 ? `\u25B2${mv}` : mv < 0 ? `\u25BC${-mv}` : '\u2013';
  move.className = `move ${mv > 0 ? 'up' : mv < 0 ? 'down' : 'same'}`;
  row.querySelector('.chip').textContent = t.code || String(t.team);
  row.querySelector('.name').textContent = t.name || t.code || String(t.team);
  const chips = row.querySelector('.chips');
  setText(chips, fmtSigned(t.chips));
  chips.className = `chips num ${signClass(t.chips)}`;
  setText(row.querySelector('.points'), open ? '\u2013' : column === 'points' ? fmtPoints(t.points) : fmtSigned(t[column]));
  // A tournament director's penalty (already in the chips and points): shown beside the name.
  const pen = t.penalty || {};
  const parts = [];
  if (pen.points) parts.push(`\u2212${fmtPoints(pen.points)} ${column === 'imps' ? 'IMP' : 'pt'}`);
  if (pen.chips) parts.push(`\u2212${pen.chips.toLocaleString('en-US')}`);
  const penalty = row.querySelector('.penalty');
  penalty.textContent = parts.length ? `penalty ${parts.join(' \u00b7 ')}` : '';
  penalty.hidden = parts.length === 0;
  return row;
}

/**
 * The block of the standings to show (as hub/engine/standings_select.py): rows, each with its
 * `section` (the group; one section across groups and overall), the title and the deals that
 * count (for the footer). Null when the selection names nothing in this payload.
 */
export function pick(s, view, sel) {
  const block = s[view] || {};
  const event = s.event;
  if (!event) return { teams: (block.teams || []).map((t) => ({ ...t, section: String(t.group) })), title: null, deals: null };
  const sessions = new Map(event.sessions.map((x) => [x.id, x]));
  const stages = new Map(event.stages.map((x) => [x.id, x]));
  const scope = sel.scope || (sel.session ? 'session' : 'stage');
  const session = scope === 'session' ? (sel.session || event.current.session) : null;
  if (session !== null && !sessions.has(session)) return null;
  const stage = session !== null ? sessions.get(session).stage : (sel.stage || event.current.stage);
  if (!stages.has(stage)) return null;
  const st = stages.get(stage);
  const spans = (session !== null ? [sessions.get(session)] : event.sessions.filter((x) => x.stage === stage)).map((x) => x.deals);
  const deals = { total: spans.reduce((n, [a, b]) => n + b - a + 1, 0), inside: (d) => spans.some(([a, b]) => d >= a && d <= b) };
  let teams;
  let title;
  if (scope === 'session') {
    teams = ((block.sessions || {})[session] || {}).teams || [];
    title = sessions.get(session).name;
  } else if (scope === 'across') {
    teams = (((block.stages || {})[stage] || {}).across || []).map((t) => ({ ...t, section: '*' }));
    title = `${st.name} · all groups`;
  } else if (scope === 'overall') {
    teams = (block.overall || []).map((t) => ({ ...t, section: '*' }));
    title = 'Overall';
  } else {
    teams = ((block.stages || {})[stage] || {}).teams || [];
    title = st.name;
  }
  teams = teams.map((t) => ({ section: String(t.group), ...t }));
  return { teams, title, deals: scope === 'overall' ? null : deals };
}

function render({ sel, states }) {
  const s = states.get(topic('standings'));
  if (!s) return false;
  const wantRunning = sel.view === 'running' && s.running && s.running.teams;
  const view = wantRunning ? 'running' : 'like_for_like';
  const picked = pick(s, view, sel);
  if (!picked) return false;
  const scoring = s.scoring || { format: 'ifp-points', column: 'points', heading: 'Pts' };
  if (gfx.dataset.scoring !== scoring.format) gfx.dataset.scoring = scoring.format;
  if (headingEl.textContent !== scoring.heading) headingEl.textContent = scoring.heading;
  const chipsEl = document.querySelector('.c-chips');
  const unit = gameOf(s).unit;
  if (chipsEl && chipsEl.textContent !== unit) chipsEl.textContent = unit;
  let teams = [...picked.teams];
  if (sel.group !== null && sel.group !== undefined) teams = teams.filter((t) => String(t.group) === String(sel.group));
  const open = new Set([...new Set(teams.map((t) => t.section))]
    .filter((g) => unscored(teams.filter((t) => t.section === g))));
  // Ranked sections by rank, then code; unranked ones (no scores yet) by name.
  const rankOf = (t) => (open.has(t.section) ? 0 : t.rank);
  const nameOf = (t) => String((open.has(t.section) && t.name) || t.code);
  teams.sort((a, b) => a.section.localeCompare(b.section) || rankOf(a) - rankOf(b)
    || nameOf(a).localeCompare(nameOf(b)));

  if (view !== prevView) {
    prevRanks = new Map();
    movement = new Map();
    prevView = view;
  }
  // Unranked teams have no rank to move from: movement starts with their first ranking.
  const ranks = new Map(teams.filter((t) => !open.has(String(t.group))).map((t) => [keyOf(t), t.rank]));
  const changed = [...ranks].some(([k, r]) => prevRanks.has(k) && prevRanks.get(k) !== r);
  if (changed) movement = new Map([...ranks].map(([k, r]) => [k, prevRanks.has(k) ? prevRanks.get(k) - r : 0]));
  else if (![...ranks.keys()].some((k) => prevRanks.has(k))) movement = new Map();
  prevRanks = ranks;

  const label = view === 'running' ? 'Running · all hands' : 'Like-for-like';
  viewLabel.textContent = picked.title ? `${picked.title} · ${label}` : label;
  gfx.dataset.scope = picked.title === null ? '' : (sel.scope || (sel.session ? 'session' : 'stage'));
  const groups = [...new Set(teams.map((t) => t.section))];
  for (const [g, section] of sections) {
    if (!groups.includes(g)) {
      section.parentElement.remove();
      sections.delete(g);
    }
  }
  for (const g of groups) {
    let list = sections.get(g);
    if (!list) {
      list = el('div', { class: 'team-list' });
      const wrap = el('div', { class: 'group', dataset: { group: g } },
        groups.length > 1 && g !== '*' ? el('div', { class: 'group-title' }, `Group ${g}`) : null, list);
      groupsEl.append(wrap);
      sections.set(g, list);
    }
    const members = teams.filter((t) => t.section === g);
    const keep = new Set(members.map(keyOf));
    flip(list, (n) => n.dataset.key, () => {
      for (const t of members) list.append(rowFor(t, scoring.column, open.has(g)));
      for (const n of [...list.children]) {
        if (!keep.has(n.dataset.key)) {
          n.remove();
          rows.delete(n.dataset.key);
        }
      }
    });
  }

  const complete = (s.deals && s.deals.complete) || {};
  let total = s.deals && typeof s.deals.total === 'number' ? s.deals.total : null;
  if (picked.deals) total = picked.deals.total;
  const counted = (g) => (complete[g] || []).filter((d) => !picked.deals || picked.deals.inside(d)).length;
  const parts = groups.filter((g) => g !== '*').map((g) => {
    const n = counted(g);
    const text = `after ${n}${total ? ` of ${total}` : ''} deal${n === 1 && !total ? '' : 's'}`;
    return groups.length > 1 ? `Group ${g} ${text}` : text;
  });
  if (scoring.unit) parts.push(`IMPs in ${scoring.unit}, ${scoring.scale} scale`);
  afterEl.textContent = view === 'running' ? 'All completed hands · in-running' : parts.join(' · ');
  afterEl.dataset.deals = groups.length === 1 ? String(counted(groups[0])) : '';
  return teams.length > 0;
}

mountOverlay({ slot: 'leaderboard', topics: () => [topic('standings')], render });
