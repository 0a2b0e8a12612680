// Live table: seats round an oval, pot, board, who is to act and the last action. Hole cards
// only when the payload carries them (commentator role); the public payload is a roster only.
import { mountOverlay } from './duplicast.js';
import { STREET_LABEL, actionText, cardText, cards, el, fmtInt, fmtPct, setText, statusOf, teamStyle } from './ui.js';
import { gameOf, markGame } from './games/index.js';
import { patch, patchCards } from './keyed.js';
import { drawShowdown } from './showdown.js';
import { topic } from './topics.js';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const seatsEl = $('seats');
// Geometry on the 1920x1080 stage, all inside the 10 % title-safe area (x 192-1728, y 108-972):
// the title bar sits at the top of title-safe, the seats round an oval below it, each street bet
// beside its seat on the side facing the felt (never over the street label, board or banner).
export const GEOMETRY = { cx: 960, cy: 578, rx: 700, ry: 306 };
// Four seats or fewer sit square to the felt (left and right on its axis, not at ±30°): a
// narrower, flatter oval keeps the side boxes, and a taller box (RPS throws) at the foot,
// inside title-safe, the acting seat's 6 % zoom included (foot seat y 764-948, 954 acting), and
// clear of the centre's pot, to-act line and action banner (down to y 759).
const SMALL = { ...GEOMETRY, cy: 570, rx: 590, ry: 286 };

function place(seat, n) {
  const a = ((90 + ((seat - 1) * 360) / n) * Math.PI) / 180;
  return [Math.cos(a), Math.sin(a)];
}

function seatBox(s, t, n, live, playing) {
  const { cx, cy, rx, ry } = n <= 4 ? SMALL : GEOMETRY;
  const [dx, dy] = place(s.seat, n);
  const x = cx + dx * rx;
  const y = cy + dy * ry;
  const own = live && gameOf(t).seatParts ? gameOf(t).seatParts(s, t) : null; // a game's own (RPS: score, throws)
  const box = el('div', {
    class: `seat${s.folded ? ' folded' : ''}${live && t.to_act === s.seat ? ' acting' : ''}`,
    style: { left: `${x}px`, top: `${y}px` },
    dataset: { testid: 'seat', seat: String(s.seat), team: String(s.team) },
  },
  el('div', { class: 'top' }, el('span', { class: 'chip' }, s.code || String(s.team)),
    s.hole ? el('span', { class: 'hole', dataset: { testid: 'hole' } }, cards(s.hole, 0, 'sm')) : null,
    playing && s.equity ? el('span', { class: 'eq num', dataset: { testid: 'seat-equity', seat: String(s.seat) } }, fmtPct(s.equity.win)) : null,
    own ? own.top : null,
    el('span', { class: 'sno' }, `S${s.seat}`)),
  el('div', { class: 'player' }, el('span', { class: 'pname' }, s.player || s.name || ''),
    s.all_in ? el('span', { class: 'badge allin allin-badge', dataset: { testid: 'all-in' } }, 'All-in') : null,
    live && t.button === s.seat ? el('span', { class: 'dealer', dataset: { testid: 'dealer' } }, 'D') : null),
  own ? own.below : null,
  live ? el('div', { class: 'nums' }, el('span', {}, 'Stack ', el('b', { class: 'num', dataset: { testid: 'seat-stack' } }, fmtInt(s.stack))),
    el('span', {}, 'In ', el('b', { class: 'num', dataset: { testid: 'seat-committed' } }, fmtInt(s.committed)))) : null);
  if (playing && s.equity) {
    // The chance to win as a bar along the foot of the box (no change to its size).
    box.append(el('div', { class: 'eqbar', style: { width: `${Math.round(s.equity.win * 100)}%` } }));
  }
  for (const [k, v] of Object.entries(teamStyle(s.colour))) box.style.setProperty(k, v);
  const parts = [box];
  if (live && s.street_bet > 0) {
    // Top and bottom seats: to the right of the box; side seats: on the side facing the felt.
    const right = Math.abs(dx) < 0.3 || dx < 0;
    parts.push(el('div', {
      class: `bet num ${right ? 'right' : 'left'}`,
      style: { left: `${right ? x + SEAT_HALF + BET_GAP : x - SEAT_HALF - BET_GAP}px`, top: `${y}px` },
      dataset: { testid: 'bet', seat: String(s.seat) },
    }, fmtInt(s.street_bet)));
  }
  return parts;
}

/** Under the board: the odds when the players were all in before a run-out, else the outs of
 * each player behind ("ECU 2 outs: J♠ J♣"). */
export function equityNote(t) {
  const e = t.equity;
  if (!e) return '';
  const code = (seat) => {
    const s = (t.seats || []).find((x) => String(x.seat) === String(seat));
    return s ? s.code || s.player || `S${seat}` : `S${seat}`;
  };
  if (e.runout) {
    const odds = Object.entries(e.runout.seats).map(([seat, f]) => `${code(seat)} ${fmtPct(f.win)}`);
    return `All-in ${STREET_LABEL[e.runout.street] || e.runout.street}: ${odds.join(' · ')}`;
  }
  return Object.entries((e.now && e.now.seats) || {}).filter(([, f]) => f.outs && f.outs.length)
    .map(([seat, f]) => `${code(seat)} ${f.outs.length} out${f.outs.length > 1 ? 's' : ''}: ${f.outs.map(cardText).join(' ')}`)
    .join(' · ');
}

const SEAT_HALF = 150; // half the seat box width (table.css .seat width)
const BET_GAP = 14;

/** The board's cards (five places, the ones not dealt as empty slots); unchanged cards keep
 * their nodes. */
function drawBoard(codes) {
  const board = $('board');
  const key = (codes || []).join(' ');
  if (board.dataset.cards === key && board.childElementCount) return;
  patchCards(board, codes ? cards(codes, 5, 'lg') : []);
  board.dataset.cards = key;
}
const FINISHED = ['complete', 'void', 'disputed'];
const seatKey = (node) => `${node.dataset.testid}:${node.dataset.seat}`;

function render({ sel, states }) {
  if (sel.table === null) return false;
  const t = states.get(topic('table', sel.table));
  if (!t || !t.seats || !t.seats.length) return false;
  const live = 'status' in t || 'actions' in t || 'pot' in t;
  const n = Math.max(t.seats.length, ...t.seats.map((s) => s.seat));
  $('table-title').textContent = `Table ${t.table ?? sel.table}`;
  markGame(t);
  const own = live ? gameOf(t).renderTable : null; // a game's own live table (mahjong's)
  if (own) {
    $('deal-label').textContent = '';
    own($('gfx'), t);
    return true;
  }
  // Keyed by seat: a seat box and its hole cards stay the same nodes across updates (keyed.js).
  const playing = live && !FINISHED.includes(statusOf(t.status)); // no chances on a finished hand
  // Between hands the last hand's showdown stays on the felt with its cards: the board as the
  // hand ended and the hands shown (the package's `board` and `cards`), the package beside them.
  // The public table (a roster: its table plays on) draws the released deal's package alone.
  const sd = live && t.showdown ? t.showdown : null;
  const shown = (sd && sd.cards) || {};
  const seats = sd ? t.seats.map((s) => (s.hole || !shown[s.seat] ? s : { ...s, hole: shown[s.seat] })) : t.seats;
  patch(seatsEl, seats.flatMap((s) => seatBox(s, t, n, live, playing)), seatKey);
  document.querySelector('.tablegfx').classList.toggle('at-showdown', Boolean(sd));
  const who = (seat) => {
    const s = t.seats.find((x) => x.seat === seat);
    return s && s.code ? `${s.code} S${seat}` : `S${seat}`;
  };
  drawShowdown($('showdown'), t.showdown, who); // the last hand's, until the next one starts
  if (!live) {
    $('deal-label').textContent = t.released !== undefined
      ? `${t.released}${t.deals_total ? ` of ${t.deals_total}` : ''} deals released`
      : t.completed !== undefined ? `${t.completed} deals completed` : '';
    $('street').textContent = '';
    drawBoard(null);
    $('pot').parentElement.hidden = true;
    $('to-act').textContent = '';
    $('notice').textContent = 'Hand in progress';
    $('last-action').textContent = '';
    $('equity-note').textContent = '';
    return true;
  }
  const status = statusOf(t.status);
  $('deal-label').textContent = t.deal ? `Deal ${t.deal} · ${status}` : status;
  const game = gameOf(t); // its streets' names, board and who it waits for
  $('street').textContent = game.streetLabel(t) || t.street || '';
  const board = $('board');
  if (game.renderBoard) game.renderBoard(board, t);
  else drawBoard(sd && sd.board && !(t.board || []).length ? sd.board : t.board);
  // Between hands the last hand's showdown sits under its board (no pot of 0); a game whose
  // package carries no board (mahjong has its own rows) keeps the felt for the package.
  board.hidden = Boolean(t.showdown) && !(sd && sd.board);
  $('pot').parentElement.hidden = Boolean(t.showdown);
  setText($('pot'), fmtInt(t.pot ?? 0));
  const acting = t.seats.find((s) => s.seat === t.to_act);
  const toAct = $('to-act');
  toAct.dataset.seat = acting ? String(acting.seat) : '';
  toAct.textContent = acting ? `To act: ${acting.code || ''} ${acting.player || ''} (seat ${acting.seat})` : '';
  const waiting = game.toActText ? game.toActText(t) : null;
  if (waiting) toAct.textContent = waiting;
  $('notice').textContent = ['void', 'disputed'].includes(status) ? status : '';
  $('equity-note').textContent = FINISHED.includes(status) ? '' : equityNote(t);
  const la = t.last_action;
  const banner = $('last-action');
  const laSeat = la && typeof la === 'object' ? t.seats.find((s) => s.seat === la.seat) : null;
  const text = la ? `${laSeat ? `${laSeat.code || ''} ${laSeat.player || ''} ` : ''}${actionText(la)}` : '';
  if (banner.textContent !== text) {
    banner.textContent = text;
    banner.style.setProperty('--team', laSeat ? teamStyle(laSeat.colour)['--team'] : 'var(--accent)');
    banner.style.animation = 'none';
    void banner.offsetWidth;
    banner.style.animation = '';
  }
  return true;
}

mountOverlay({ slot: 'table', topics: (sel) => (sel.table === null ? [] : [topic('table', sel.table)]), render });
