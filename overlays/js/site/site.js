// The public results site (docs/site.md): one script for every page. It reads the site's JSON
// (data/…, relative to the page, so the static export works from its folder), renders with DOM
// calls (text only, never HTML from data), and, served by a hub, follows the public `released`
// topic (a few bytes: a version, the released deals): each frame of it (a deal released, a
// released result corrected, a penalty, a roster fix) re-reads the page's data over HTTP after
// a random spread of up to SPREAD_MS, so thousands of phones do not ask the edges in the same
// millisecond (issue #34.6), unless the reader paused live updates. Each refresh is announced
// in one line in the page's role=log region (a summary, never the table).

const body = document.body;
const ROOT = body.dataset.root || '';
// (the event's page shows the running view with ?view=running: docs/site.md)
const RUNNING = new URLSearchParams(location.search).get('view') === 'running';
const PAGE = body.dataset.page === 'event' && RUNNING ? 'running' : (body.dataset.page || 'event');
const NUM = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 2 });
const PCT = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 1 });
const SUITS = { s: ['\u2660', 'spades'], h: ['\u2665', 'hearts'], d: ['\u2666', 'diamonds'], c: ['\u2663', 'clubs'] };
const RANKS = { A: 'ace', K: 'king', Q: 'queen', J: 'jack', T: 'ten', 9: 'nine', 8: 'eight', 7: 'seven', 6: 'six', 5: 'five', 4: 'four', 3: 'three', 2: 'two' };
const MAX_LOG = 5;
// The longest a page waits after a frame of the feed before it reads its data again: each page
// picks its own wait in [0, SPREAD_MS), so a release's requests spread over this much time.
const SPREAD_MS = 1500;

/** The id a page is about, from its path (/site/deal/3/ or DIR/deal/3/index.html). */
export function pageId(path, kind) {
  const m = new RegExp(`/${kind}/([^/]+)/(?:index\\.html)?$`).exec(path);
  return m ? decodeURIComponent(m[1]) : null;
}

// -- small DOM helpers --

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'text') node.textContent = v;
    else if (k === 'class') node.className = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function hidden(text) {
  return el('span', { class: 'sr-only', text });
}

/** A signed figure: the sign is text (+ / −), never colour alone; the class only tints it. */
export function signed(value, digits = 2) {
  if (value === null || value === undefined) return el('span', { class: 'none', text: '–' }, hidden('none'));
  const v = Number(value);
  const text = v > 0 ? `+${NUM.format(v)}` : v < 0 ? `\u2212${NUM.format(-v)}` : '0';
  return el('span', { class: v > 0 ? 'pos' : v < 0 ? 'neg' : 'zero', text });
}

function plain(value) {
  return value === null || value === undefined ? '–' : NUM.format(Number(value));
}

/** A card as its rank and suit symbol, with the suit's name for screen readers (a suit is told
 * by its shape, not only its colour). Pieces of other games are shown as their codes. */
export function pieceNode(code, facts) {
  if (facts && facts.cards && typeof code === 'string' && code.length === 2 && SUITS[code[1]]) {
    const [symbol, name] = SUITS[code[1]];
    const rank = code[0] === 'T' ? '10' : code[0];
    return el('span', { class: `card suit-${code[1]}` },
      el('span', { 'aria-hidden': 'true', text: `${rank}${symbol}` }),
      hidden(`${RANKS[code[0]] || code[0]} of ${name}`));
  }
  return el('span', { class: 'piece', text: String(code) });
}

function pieces(list, facts) {
  const span = el('span', { class: 'pieces' });
  if (!list || !list.length) {
    span.append('–');
    return span;
  }
  list.forEach((c, i) => {
    if (i) span.append(' ');
    span.append(pieceNode(c, facts));
  });
  return span;
}

function table(caption, head, rows, { foot = null, cls = '' } = {}) {
  const t = el('table', { class: cls || null },
    el('caption', { text: caption }),
    el('thead', {}, el('tr', {}, head.map((h) => el('th', { scope: 'col', class: h.cls || null }, h.label)))),
    el('tbody', {}, rows));
  if (foot) t.append(el('tfoot', {}, foot));
  // A table wider than the screen scrolls on its own, reachable by keyboard.
  return el('div', { class: 'scroll', role: 'region', tabindex: '0', 'aria-label': `${caption} (table)` }, t);
}

function td(content, cls) {
  return el('td', { class: cls || null }, content);
}

function section(id, title, ...children) {
  return el('section', { id, 'aria-labelledby': `${id}-title` }, el('h2', { id: `${id}-title`, text: title }), ...children);
}

function swatch(colour) {
  return el('span', { class: 'swatch', 'aria-hidden': 'true', style: colour ? `background:${colour}` : null });
}

// -- data --

async function getJson(path) {
  const res = await fetch(ROOT + path, { cache: 'no-cache' });
  if (res.status === 404) return { missing: true, ...(await res.json().catch(() => ({}))) };
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return res.json();
}

// -- pages --

function unitOf(event) {
  return (event.game_facts && event.game_facts.unit) || 'chips';
}

function provisional(event) {
  const n = event.released.length;
  if (event.complete) return el('p', { class: 'badge final' }, el('strong', { text: 'Final' }), ` results: all ${event.deals} deals played and released.`);
  return el('p', { class: 'badge provisional' }, el('strong', { text: 'Provisional' }),
    ` results: ${n} of ${event.deals} deals released. The ranking may change until the event is complete.`);
}

const WIND_NAMES = { E: 'East', S: 'South', W: 'West', N: 'North' };

/** What a hand record says beside a seat: its wind in a game whose seats have winds (MCR's
 * deal record: `winds`), else whether it had the button. */
function seatNote(rec, seat) {
  const wind = rec.winds && rec.winds[String(seat)];
  if (wind) return ` (${WIND_NAMES[wind] || wind})`;
  return rec.button === seat ? ' (button)' : '';
}

/** The players' statistics over the released deals (the public `stats` topic, when the hub
 * has that family): a table, sorted as the topic sorts it. The betting columns are a poker
 * game's (`stats.poker`; docs/stats.md): a game with no betting to count (MCR mahjong) shows
 * each player's hands and swing only, explained in its own words. */
function renderStats(stats) {
  const pct = (v) => (v === null || v === undefined ? '–' : `${PCT.format(v)} %`);
  const poker = stats.poker !== false;
  const rows = stats.players.map((p) => el('tr', {},
    el('th', { scope: 'row' }, el('a', { href: `player/${encodeURIComponent(p.id)}/` }, p.name || p.id)),
    td(String(p.team || '')), td(plain(p.hands), 'num'),
    ...(poker ? [td(pct(p.vpip), 'num'), td(pct(p.pfr), 'num'),
      td(p.af === null || p.af === undefined ? '–' : PCT.format(p.af), 'num'), td(pct(p.wtsd), 'num')] : []),
    td(signed(p.swing, 0), 'num')));
  const deals = `Over the ${(stats.deals || []).length} released deals.`;
  const note = poker
    ? `${deals} VPIP: put money in voluntarily; PFR: raised before the flop; AF: aggression factor; WTSD: went to showdown.`
    : `${deals} Swing: each player's result against the field's average at the same seat of the same deals.`;
  const betting = poker ? [{ label: 'VPIP', cls: 'num' }, { label: 'PFR', cls: 'num' },
    { label: 'AF', cls: 'num' }, { label: 'WTSD', cls: 'num' }] : [];
  return section('stats', 'Player statistics',
    el('p', { class: 'note', text: note }),
    table('Player statistics, released deals', [{ label: 'Player' }, { label: 'Team' }, { label: 'Hands', cls: 'num' },
      ...betting, { label: 'Swing', cls: 'num' }], rows));
}

function renderEvent(event, standings, stats = null) {
  const view = standings.like_for_like || { teams: [], seats: [] };
  const scoring = standings.scoring || { column: 'points', heading: 'Pts' };
  const col = scoring.column;
  const heading = scoring.heading === 'Pts' ? 'Points' : scoring.heading;
  const unit = unitOf(event);
  const teamRow = (t) => el('tr', {},
    td(String(t.rank)),
    el('th', { scope: 'row' }, swatch(t.colour), el('a', { href: `team/${encodeURIComponent(t.code)}/` }, `${t.name} (${t.code})`)),
    td(plain(t[col]), 'num'),
    td(signed(t.chips, 0), 'num'));
  const teamHead = [{ label: 'Rank' }, { label: 'Team' }, { label: heading, cls: 'num' }, { label: unit === 'chips' ? 'Chips' : 'Result', cls: 'num' }];
  const plan = standings.event;
  const current = plan && plan.current ? (plan.sessions || []).find((x) => x.id === plan.current.session) : null;
  const ranking = [
    el('p', { class: 'note', text: 'Like-for-like: over the deals every table of a group has completed (the only view the public sees).' }),
    el('p', { class: 'running-link' }, el('a', { href: '?view=running', 'data-testid': 'running-link' }, 'How the ranking ran, deal by deal')),
  ];
  if (view.overall && view.overall.length) ranking.push(table('Overall ranking, like-for-like', teamHead, view.overall.map(teamRow)));
  ranking.push(table(`Teams${current ? `, ${current.name}` : ''}, like-for-like (${event.released.length} of ${event.deals} deals released)`, teamHead, view.teams.map(teamRow)));
  const out = [provisional(event), section('ranking', 'Ranking', ...ranking)];
  const seats = el('div', { class: 'grid' });
  for (const block of view.seats) {
    seats.append(table(`Seat ${block.seat}${block.group && standingsGroups(view) > 1 ? `, group ${block.group}` : ''}`,
      [{ label: 'Rank' }, { label: 'Player' }, { label: 'Team' }, { label: heading, cls: 'num' }, { label: unit === 'chips' ? 'Chips' : 'Result', cls: 'num' }],
      block.rows.map((r) => el('tr', {},
        td(String(r.rank)),
        el('th', { scope: 'row' }, el('a', { href: `player/${encodeURIComponent(codeOf(event, r.team))}-${block.seat}/` }, r.player || '–')),
        td(codeOf(event, r.team)),
        td(plain(r[col]), 'num'),
        td(signed(r.chips, 0), 'num')))));
  }
  out.push(section('players', 'Players by seat', seats));
  const deals = el('ul', { class: 'deals' });
  for (let d = 1; d <= event.deals; d++) {
    const released = event.released.includes(d);
    deals.append(el('li', {}, released
      ? el('a', { href: `deal/${d}/` }, `Deal ${d}`)
      : el('span', { class: 'pending' }, `Deal ${d}`, el('span', { class: 'tag', text: ' not released' }))));
  }
  out.push(section('deals', 'Deals', el('p', { class: 'note', text: 'A deal opens once every table of its group has played it.' }), deals));
  const teamList = el('ul', { class: 'teams' });
  for (const t of event.teams) {
    teamList.append(el('li', {}, swatch(t.colour),
      el('a', { href: `team/${encodeURIComponent(t.code)}/` }, `${t.name} (${t.code})`),
      el('ul', {}, t.players.map((p) => el('li', {}, el('a', { href: `player/${encodeURIComponent(p.id)}/` }, `Seat ${p.seat}: ${p.name}`))))));
  }
  out.push(section('teams', 'Teams and score cards', teamList));
  if (stats && Array.isArray(stats.players) && stats.players.length) out.push(renderStats(stats));
  out.push(section('downloads', 'Downloads', downloads(event, '')));
  return out;
}

function standingsGroups(view) {
  return new Set(view.teams.map((t) => t.group)).size;
}

function codeOf(event, teamId) {
  const t = event.teams.find((x) => x.team === teamId || x.code === teamId);
  return t ? t.code : String(teamId);
}

function downloads(event, root) {
  const items = [
    ['download/standings.csv', 'Standings (CSV)'],
    ['download/running.csv', 'Running ranking, deal by deal (CSV)'],
    ['download/travellers.csv', 'Travellers of the released deals (CSV)'],
    ['download/scorecards.csv', 'Score cards (CSV)'],
  ];
  if (event.game_facts && event.game_facts.phh) items.push(['download/hands.phh.zip', 'Hand histories of the released deals (PHH, zip)']);
  return el('ul', { class: 'downloads' }, items.map(([href, label]) => el('li', {}, el('a', { href: root + href, download: '' }, label))));
}

function renderDeal(event, data, d) {
  const facts = event.game_facts || {};
  if (data.missing) {
    return [el('p', { class: 'badge provisional' }, el('strong', { text: 'Not public yet' }),
      `: deal ${d} appears here once every table of its group has played it.`)];
  }
  const tr = data.traveller;
  const rec = data.record;
  const seats = Object.keys(data.compare).map(Number).sort((a, b) => a - b);
  const out = [];
  // the traveller: one row per released table, one column per seat
  const trows = tr.tables.map((t) => el('tr', {},
    el('th', { scope: 'row' }, `Table ${t.table}`),
    td(t.status === 'complete' ? 'Played' : t.status.charAt(0).toUpperCase() + t.status.slice(1)),
    seats.map((s) => {
      const row = (data.compare[s].rows || []).find((r) => r.table === t.table);
      return td([row ? row.code : '', ' ', signed(t.result ? t.result[s] : null, 0)], 'num');
    })));
  // the replayer (a game of the 52 cards): the deal at its first three released tables
  const firstTables = tr.tables.slice(0, 3).map((t) => t.table);
  const replay = facts.cards && firstTables.length
    ? el('p', { class: 'replay-link' }, el('a', { href: `../../replay/${d}/?tables=${firstTables.join(',')}`, 'data-testid': 'replay-link' },
      `Replay deal ${d} action by action at table${firstTables.length === 1 ? '' : 's'} ${firstTables.join(', ')}`))
    : null;
  out.push(section('traveller', 'Traveller',
    el('p', { class: 'note', text: `${tr.tables.length} table${tr.tables.length === 1 ? '' : 's'} released: ${(tr.released || []).length ? `group ${tr.released.join(', ')}` : ''}. Each cell: the team in the seat and its result.` }),
    replay,
    table(`Traveller of deal ${d}: result of each seat at each table`,
      [{ label: 'Table' }, { label: 'Status' }, ...seats.map((s) => ({ label: `Seat ${s}`, cls: 'num' }))], trows)));
  // the hand record
  const hasPieces = Object.keys(rec.hole || {}).length > 0;
  if (hasPieces) {
    const pre = (rec.equities && rec.equities.preflop) || {};
    const hrows = Object.keys(rec.hole).map(Number).sort((a, b) => a - b).map((s) => el('tr', {},
      el('th', { scope: 'row' }, `Seat ${s}${seatNote(rec, s)}`),
      td(pieces(rec.hole[s], facts)),
      Object.keys(pre).length ? td(pre[s] ? `${PCT.format(pre[s].win * 100)} %` : '–', 'num') : null));
    const head = [{ label: 'Seat' }, { label: facts.cards ? 'Cards' : 'Pieces' }];
    if (Object.keys(pre).length) head.push({ label: 'Win chance, all in before the flop', cls: 'num' });
    const parts = [table(`Hand record of deal ${d}`, head, hrows)];
    if (rec.prevalent) parts.unshift(el('p', { class: 'note', text: `Prevalent wind: ${WIND_NAMES[rec.prevalent] || rec.prevalent}.` }));
    if (rec.board && rec.board.length) parts.unshift(el('p', { class: 'board' }, el('strong', { text: 'Board: ' }), pieces(rec.board, facts)));
    const runs = (rec.equities && rec.equities.runouts) || [];
    if (runs.length) {
      const rrows = [];
      for (const run of runs) {
        for (const st of run.streets) {
          const eq = Object.entries(st.equity || {}).map(([s, v]) => `seat ${s}: ${PCT.format(v)} %`).join(', ');
          rrows.push(el('tr', {}, el('th', { scope: 'row' }, `Table ${run.table}`), td(st.street), td(eq)));
        }
      }
      parts.push(table(`All-in equities of deal ${d}, street by street`, [{ label: 'Table' }, { label: 'Street' }, { label: 'Chance to win' }], rrows));
    }
    out.push(section('record', 'Hand record', ...parts));
  }
  // each seat's comparison: the same cards at every table
  const per = el('div', { class: 'grid' });
  for (const s of seats) {
    const cmp = data.compare[s];
    const bb = bigBlind(cmp);
    // the hand the seat showed down, as the game names it ("Flush, king high"): none for a fold
    const shown = (r) => (r.showdown && r.showdown.hands && r.showdown.hands[s]) || '';
    const anyShown = (cmp.rows || []).some((r) => shown(r));
    const rows = (cmp.rows || []).map((r) => el('tr', {},
      el('th', { scope: 'row' }, `Table ${r.table}`),
      td(el('a', { href: `../../player/${encodeURIComponent(r.code)}-${s}/` }, `${r.player} (${r.code})`)),
      anyShown ? td(shown(r) || (r.folded ? 'Folded' : '–')) : null,
      td(signed(r.chips, 0), 'num'),
      bb ? td(signed(r.chips === null ? null : r.chips / bb), 'num') : null,
      td(signed(r.swing), 'num')));
    const head = [{ label: 'Table' }, { label: 'Player' }];
    if (anyShown) head.push({ label: 'Showdown' });
    head.push({ label: unitOf(event) === 'chips' ? 'Result' : `Result (${unitOf(event)})`, cls: 'num' });
    if (bb) head.push({ label: 'Big blinds', cls: 'num' });
    head.push({ label: 'Swing against the field', cls: 'num' });
    const cap = `Seat ${s}: field average ${plain(cmp.average)}`;
    per.append(table(cap, head, rows));
  }
  out.push(section('seats', 'Each seat at every table', per));
  out.push(section('downloads', 'Downloads', downloads(event, '../../')));
  return out;
}

function bigBlind(cmp) {
  for (const r of cmp.rows || []) for (const a of r.actions || []) if (a.kind === 'big_blind' && a.to) return a.to;
  return null;
}

function renderCard(event, card, isTeam) {
  if (card.missing) return [el('p', { text: 'No such team or player in this event.' })];
  const rows = card.rows;
  const hasBb = rows.some((r) => r.bb !== null);
  const hasPts = rows.some((r) => r.points !== null);
  const unit = unitOf(event);
  const head = [{ label: 'Deal' }, { label: 'Table', cls: 'num' }, { label: 'Seat', cls: 'num' }];
  if (isTeam) head.push({ label: 'Player' });
  head.push({ label: unit === 'chips' ? 'Result (chips)' : `Result (${unit})`, cls: 'num' });
  if (hasBb) head.push({ label: 'Big blinds', cls: 'num' });
  head.push({ label: 'Field average', cls: 'num' }, { label: 'Swing', cls: 'num' });
  if (hasPts) head.push({ label: (card.scoring && card.scoring.heading) || 'Points', cls: 'num' });
  const body = rows.map((r) => el('tr', {},
    el('th', { scope: 'row' }, el('a', { href: `../../deal/${r.deal}/` }, `Deal ${r.deal}`)),
    td(String(r.table), 'num'), td(String(r.seat), 'num'),
    isTeam ? td(el('a', { href: `../../player/${encodeURIComponent(card.team.code)}-${r.seat}/` }, r.player || '–')) : null,
    td(signed(r.chips, 0), 'num'),
    hasBb ? td(signed(r.bb), 'num') : null,
    td(signed(r.field_avg), 'num'), td(signed(r.swing), 'num'),
    hasPts ? td(plain(r.points), 'num') : null));
  const span = isTeam ? 4 : 3;
  const foot = el('tr', {},
    el('th', { scope: 'row', colspan: String(span) }, 'Total'),
    td(signed(card.total.chips, 0), 'num'),
    hasBb ? td(signed(card.total.bb), 'num') : null,
    td(''), td(signed(card.total.swing), 'num'),
    hasPts ? td(plain(card.total.points), 'num') : null);
  const heading = (card.scoring && card.scoring.heading === 'Pts') ? 'points' : ((card.scoring && card.scoring.heading) || 'points');
  const summary = el('p', { class: 'summary' },
    swatch(card.team.colour),
    isTeam ? `${card.team.name} (${card.team.code})` : el('a', { href: `../../team/${encodeURIComponent(card.team.code)}/` }, `${card.team.name} (${card.team.code})`),
    isTeam ? '' : `, seat ${card.seat} at table ${card.table}`,
    card.total.rank ? `: rank ${card.total.rank}, ${plain(card.total.points)} ${heading} like-for-like.` : '.');
  // Points given per session (IFP), or team IMPs on the team's totals: the hub says so,
  // where the column would be empty or would not add up.
  const note = card.points_note ? el('p', { class: 'note', 'data-testid': 'points-note', text: card.points_note }) : null;
  const out = [provisional(event), summary,
    section('card', 'Score card', note,
      table(`Score card of ${card.name}: every released deal`, head, body, { foot }))];
  if (isTeam) {
    const team = event.teams.find((t) => t.code === card.team.code);
    if (team) out.push(section('team-players', 'Players', el('ul', {}, team.players.map((p) => el('li', {}, el('a', { href: `../../player/${encodeURIComponent(p.id)}/` }, `Seat ${p.seat}: ${p.name}`))))));
  }
  return out;
}

// -- the running view: the ranking after each released deal --

const ORDINAL = new Intl.PluralRules('en-GB', { type: 'ordinal' });
const SUFFIX = { one: 'st', two: 'nd', few: 'rd', other: 'th' };

function ordinal(n) {
  return `${n}${SUFFIX[ORDINAL.select(n)]}`;
}

/** A rank's move since the deal before: an arrow and a number, and the words for screen
 * readers (never colour alone); nothing on the first deal. */
function moveNode(move) {
  if (move === null || move === undefined) return null;
  if (move === 0) return el('span', { class: 'move zero' }, el('span', { 'aria-hidden': 'true', text: ' =' }), hidden(' no change'));
  const up = move > 0;
  return el('span', { class: `move ${up ? 'pos' : 'neg'}` },
    el('span', { 'aria-hidden': 'true', text: ` ${up ? '\u25B2' : '\u25BC'}${Math.abs(move)}` }),
    hidden(` ${up ? 'up' : 'down'} ${Math.abs(move)}`));
}

function byLabel(by, event) {
  if (by === 'imps') return 'IMPs';
  if (by === 'points') return 'points';
  return unitOf(event);
}

function stepCell(step) {
  return td([el('span', { class: 'score' }, plain(step.score)), el('br'),
    el('span', { class: 'rank' }, ordinal(step.rank)), moveNode(step.move)], 'num step');
}

/** Who led after each deal, only where the lead changed: a few lines a phone reads at once. */
function leadChanges(teams, deals) {
  const out = [];
  let before = '';
  deals.forEach((d, k) => {
    const first = teams.filter((t) => t.steps[k] && t.steps[k].rank === 1).map((t) => t.name);
    const now = first.join(' and ');
    if (now && now !== before) out.push(el('li', {}, `After deal ${d}: ${now} ${first.length > 1 ? 'share the lead' : before ? 'takes the lead' : 'leads'}.`));
    before = now;
  });
  return out;
}

function renderRunning(event, view) {
  const out = [provisional(event)];
  const teamsBy = byLabel(view.by.teams, event);
  const playersBy = byLabel(view.by.players, event);
  const how = view.scoring && view.scoring.format === 'ifp-points'
    ? 'IFP points: after each deal each seat position is ranked again on its chips so far; a team has the sum of its seats\u2019 points.'
    : `Each deal adds the seat\u2019s ${playersBy} on it.`;
  // (a team scored on its totals is listed by its results here, not by the ranking's IMPs)
  const last = view.by.teams === (view.scoring && view.scoring.column) ? ' The last column is the ranking now.' : '';
  out.push(el('p', { class: 'note' },
    `The like-for-like ranking after each released deal, in deal order. Each cell: the ${teamsBy} so far, the rank, and the move since the deal before (\u25B2 up, \u25BC down).${last} ${how}`));
  for (const note of view.notes || []) out.push(el('p', { class: 'note', 'data-testid': 'running-note', text: note }));
  const blocks = view.blocks.filter((b) => b.deals.length);
  if (!blocks.length) {
    out.push(el('p', { text: 'No deal has been released yet: the running ranking starts with the first.' }));
    return out;
  }
  const several = view.blocks.length > 1;
  const teamParts = [];
  const playerParts = [];
  for (const block of blocks) {
    const where = several && block.name ? `, ${block.name}` : '';
    if (several && block.name) {
      teamParts.push(el('h3', { text: block.name }));
      playerParts.push(el('h3', { text: block.name }));
    }
    for (const g of block.groups) {
      const grp = block.groups.length > 1 ? `, group ${g.group}` : '';
      const head = [{ label: 'Team' }, ...g.deals.map((d) => ({ label: `Deal ${d}`, cls: 'num' }))];
      const rows = g.teams.map((t) => el('tr', {},
        el('th', { scope: 'row' }, swatch(t.colour), el('a', { href: `team/${encodeURIComponent(t.code)}/` }, t.name)),
        t.steps.map(stepCell)));
      const changes = leadChanges(g.teams, g.deals);
      if (changes.length) teamParts.push(el('p', { class: 'lead-title', text: `How the lead changed${where}${grp}:` }), el('ul', { class: 'lead' }, changes));
      teamParts.push(table(`Teams after each deal${where}${grp}`, head, rows, { cls: 'running' }));
      const seats = el('div', { class: 'grid' });
      for (const b of g.seats) {
        const phead = [{ label: 'Player' }, ...g.deals.map((d) => ({ label: `Deal ${d}`, cls: 'num' }))];
        const prows = b.players.map((p) => el('tr', {},
          el('th', { scope: 'row' }, el('a', { href: `player/${encodeURIComponent(p.id)}/` }, p.player || p.id), ` (${p.code})`),
          p.steps.map(stepCell)));
        seats.append(table(`Seat ${b.seat} after each deal${where}${grp}`, phead, prows, { cls: 'running' }));
      }
      playerParts.push(seats);
    }
  }
  out.push(section('running-teams', 'Teams, deal by deal', ...teamParts));
  out.push(section('running-players', 'Players by seat, deal by deal', ...playerParts));
  out.push(section('downloads', 'Downloads', downloads(event, '')));
  return out;
}

/** The last released deal's leader, for the page's one-line update. */
function runningLeader(view) {
  const block = [...view.blocks].reverse().find((b) => b.deals.length);
  if (!block) return null;
  const g = block.groups[0];
  const d = g.deals[g.deals.length - 1];
  const first = g.teams.filter((t) => t.steps[t.steps.length - 1].rank === 1).map((t) => t.name);
  return first.length ? `after deal ${d}, ${first.join(' and ')} ${first.length > 1 ? 'share the lead' : 'leads'}` : null;
}

// -- the page's life: load, render, follow the feed --

const state = { event: null, summary: null, paused: false, pending: false, timer: null, version: null };

async function load(live = false) {
  const event = await getJson('data/event.json');
  let parts;
  let title;
  let summary;
  if (PAGE === 'deal') {
    const d = Number(pageId(location.pathname, 'deal'));
    // (a deal the event does not list as released is not asked for: its answer is a 404)
    const data = event.released.includes(d) ? await getJson(`data/deal/${d}.json`) : { missing: true };
    parts = renderDeal(event, data, d);
    title = `Deal ${d}`;
    summary = data.missing ? `Deal ${d} is not public yet.` : `Deal ${d}: ${data.traveller.tables.length} tables released.`;
  } else if (PAGE === 'team' || PAGE === 'player') {
    const id = pageId(location.pathname, PAGE);
    const card = await getJson(`data/${PAGE}/${encodeURIComponent(id)}.json`);
    parts = renderCard(event, card, PAGE === 'team');
    title = card.missing ? 'Not found' : `${card.name}: score card`;
    summary = card.missing ? '' : `${card.name}: ${card.rows.length} results, total ${plain(card.total.chips)}.`;
  } else if (PAGE === 'running') {
    const view = await getJson('data/running.json');
    parts = renderRunning(event, view);
    title = 'Running ranking';
    const here = document.querySelector('nav a[href="?view=running"]');
    if (here) here.setAttribute('aria-current', 'page');
    const lead = runningLeader(view);
    summary = `${event.released.length} of ${event.deals} deals released${lead ? `; ${lead}` : ''}.`;
  } else {
    const standings = await getJson('data/standings.json');
    const stats = event.stats ? await getJson('data/stats.json').catch(() => null) : null;
    parts = renderEvent(event, standings, stats && !stats.missing ? stats : null);
    title = event.name || 'Results';
    const top = (standings.like_for_like && standings.like_for_like.teams[0]) || null;
    summary = `${event.released.length} of ${event.deals} deals released${top ? `; ${top.name} leads` : ''}.`;
  }
  if (live && state.paused) { // paused while this was read: keep the page as it stands
    state.pending = true;
    linkText('Live updates paused: new results are waiting.');
    return;
  }
  state.event = event;
  document.getElementById('title').textContent = title;
  document.title = `${title} – ${event.name || 'Results'}`;
  const name = document.getElementById('event-name');
  name.textContent = event.name || 'Results';
  const content = document.getElementById('content');
  const place = readerAt(content);
  content.replaceChildren(...parts);
  backTo(content, place);
  body.dataset.released = event.released.join(',');
  body.dataset.loaded = String(Number(body.dataset.loaded || 0) + 1);
  if (state.summary !== null && summary !== state.summary) announce(summary);
  state.summary = summary;
}

// An element as the reader knows it in a page read again: a table's scroll region by its label
// (its rows may have grown), anything else by its tag, link, label and text.
function likeOf(a) {
  const key = (x) => [x.tagName, x.getAttribute('href'), x.getAttribute('aria-label'), x.getAttribute('role') === 'region' ? '' : x.textContent].join('\u0000');
  const want = key(a);
  return (box) => [...box.querySelectorAll(a.tagName)].filter((x) => key(x) === want);
}

/** Where the reader is in `box` before a live update reads the page again: the element with
 * the keyboard's focus (the nth of its likes) and the tables scrolled sideways. */
function readerAt(box) {
  const a = document.activeElement;
  const focus = a && a !== box && box.contains(a) ? { likes: likeOf(a), nth: likeOf(a)(box).indexOf(a) } : null;
  const scrolled = [...box.querySelectorAll('.scroll')].filter((r) => r.scrollLeft > 0)
    .map((r) => ({ label: r.getAttribute('aria-label'), left: r.scrollLeft }));
  return { focus, scrolled };
}

/** The reader's place again after the update (a live update never moves them: WCAG 2.4.3). */
function backTo(box, { focus, scrolled }) {
  for (const { label, left } of scrolled) {
    const region = [...box.querySelectorAll('.scroll')].find((r) => r.getAttribute('aria-label') === label);
    if (region) region.scrollLeft = left;
  }
  const like = focus && focus.nth >= 0 ? focus.likes(box)[focus.nth] : null;
  if (like) like.focus({ preventScroll: true });
}

function announce(text) {
  const log = document.getElementById('updates');
  if (log.dataset.empty !== 'false') {
    log.replaceChildren();
    log.dataset.empty = 'false';
  }
  const time = new Date().toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
  log.append(el('p', {}, `${time}: ${text}`));
  while (log.children.length > MAX_LOG) log.firstElementChild.remove();
}

function linkText(text) {
  document.getElementById('link').textContent = text;
}

/** Read the page's data again after `wait` ms (a refresh already waiting stands: frames that
 * come meanwhile are covered by it, and a stream of them never holds it back). */
function refreshSoon(wait = 0) {
  if (state.paused) {
    state.pending = true;
    linkText('Live updates paused: new results are waiting.');
    return;
  }
  if (state.timer !== null) return;
  state.timer = setTimeout(() => {
    state.timer = null;
    if (state.paused) {
      state.pending = true;
      linkText('Live updates paused: new results are waiting.');
      return;
    }
    const content = document.getElementById('content');
    content.classList.add('refreshing'); // (a fade, off under prefers-reduced-motion)
    load(true).catch(showError).finally(() => content.classList.remove('refreshing'));
  }, wait);
}

/** A frame of the `released` topic: re-read after this page's share of the spread, unless it
 * shows the version this page already acted on (a snapshot sent again after a reconnect). */
function onReleased(payload, random = Math.random) {
  const version = payload && Number.isInteger(payload.version) ? payload.version : null;
  if (version !== null && version === state.version) return false;
  state.version = version;
  refreshSoon(Math.floor(random() * SPREAD_MS));
  return true;
}

function showError(err) {
  linkText(`Could not load the results (${err.message}). Reload the page to try again.`);
}

async function follow() {
  const served = location.protocol.startsWith('http') && /\/site\//.test(location.pathname);
  if (!served) {
    linkText('A copy of the results: not updated live.');
    return;
  }
  let connect;
  try {
    ({ connect } = await import('../duplicast.js')); // (/site/js/duplicast.js: the site's ASSETS)
  } catch {
    linkText('Live updates are not available here.');
    return;
  }
  const pause = document.getElementById('pause');
  pause.hidden = false;
  pause.addEventListener('click', () => {
    state.paused = !state.paused;
    pause.setAttribute('aria-pressed', String(state.paused));
    pause.textContent = state.paused ? 'Resume live updates' : 'Pause live updates';
    if (!state.paused) {
      linkText('Live: the page updates as results are released.');
      if (state.pending) {
        state.pending = false;
        refreshSoon();
      }
    } else {
      linkText('Live updates paused.');
    }
  });
  const client = connect({
    onStatus: (s) => {
      if (state.paused) return;
      if (s.state === 'open') linkText('Live: the page updates as results are released.');
      else if (s.state === 'connecting' && s.attempt > 0) linkText('Reconnecting to live updates…');
    },
  });
  // Every page follows `released` only: what any page shows (a deal's page too: its
  // traveller, hands and comparisons) moves only by what that topic counts. Its first snapshot
  // re-reads too (the page may have loaded a moment before it); the server answers from its
  // cache (a 304 when nothing moved), and only a change is announced.
  client.subscribe('released', (payload) => onReleased(payload));
}

load().then(() => {
  if (document.getElementById('link').textContent.startsWith('Loading')) linkText('Results loaded.');
  return follow();
}).catch(showError);
