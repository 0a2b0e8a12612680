// Duplicate MCR mahjong on the live table and the split screen (docs/mahjong.md): tiles as
// text on tile faces (suits by colour, honours by letter), the seats' winds, hands and the
// hand's result. table.js and compare.js hand over to these when the payload has `mahjong`.
import { el, fmtMinus, fmtSigned, signClass, statusOf, teamStyle } from './ui.js';

const SUIT_NAME = { m: 'characters', p: 'dots', s: 'bamboo', z: 'honour' };
const HONOURS = { 1: 'E', 2: 'S', 3: 'W', 4: 'N', 5: 'P', 6: 'F', 7: 'C' };
export const WIND_NAME = { E: 'East', S: 'South', W: 'West', N: 'North' };

/** One tile from its code ("5m", "1z"): number and suit letter, or the honour's letter. */
export function tile(code, size = '') {
  const suit = code.slice(1);
  const face = suit === 'z' ? HONOURS[code[0]] : code[0];
  return el('span', {
    class: `tile suit-${suit} ${suit === 'z' ? `honour h${code[0]}` : ''} ${size}`.trim(),
    title: `${face} ${SUIT_NAME[suit] || ''}`,
    dataset: { tile: code },
  }, el('b', {}, face), suit === 'z' ? null : el('i', {}, suit));
}

const ORDER = (code) => 'mpsz'.indexOf(code[1]) * 10 + Number(code[0]);

/** Tiles as a player arranges a hand: characters, dots, bamboo, then honours, by number. */
export function tiles(codes, size = '') {
  const sorted = [...(codes || [])].sort((a, b) => ORDER(a) - ORDER(b));
  return el('span', { class: 'tiles' }, ...sorted.map((c) => tile(c, size)));
}

/** The result for people: "S2 wins 10 fan on S4's discard", "S3 self-draws 8 fan", "Draw". */
export function resultText(result, name = (seat) => `S${seat}`) {
  if (!result) return '';
  if (result.kind === 'draw') return 'Draw (no winner)';
  if (result.kind === 'self_draw') return `${name(result.winner)} self-draws ${result.fan} fan`;
  return `${name(result.winner)} wins ${result.fan} fan on ${name(result.discarder)}'s discard`;
}

/** The fans for people: "Pure Straight 16, Half Flush 6, Pung of Terminals or Honors 1 ×2". */
export function fansText(fans) {
  return (fans || []).map((f) => `${f.name} ${f.value}${f.count > 1 ? ` ×${f.count}` : ''}`).join(', ');
}

const MELD_NAME = { chow: 'Chow', pung: 'Pung', kong: 'Kong', concealed_kong: 'Concealed kong' };

/** The winning hand as a player lays it down: the standing tiles (sorted), each meld apart
 * (a concealed kong with its two end tiles face down), then the winning tile, marked. */
export function winningHand(hand, size = 'sm') {
  if (!hand) return null;
  const melds = (hand.melds || []).map((m) => {
    const group = el('span', { class: `mj-meld ${m.kind}`, title: MELD_NAME[m.kind] || m.kind, dataset: { testid: 'mj-meld', kind: m.kind } },
      ...m.tiles.map((c, i) => {
        const t = tile(c, size);
        if (m.kind === 'concealed_kong' && (i === 0 || i === m.tiles.length - 1)) t.classList.add('face-down');
        return t;
      }));
    return group;
  });
  const win = tile(hand.winning, size);
  win.classList.add('winning-tile');
  return el('span', { class: 'mj-winning-hand', dataset: { testid: 'mj-winning-hand' } },
    el('span', { class: 'mj-meld concealed' }, ...[...(hand.concealed || [])].sort((a, b) => ORDER(a) - ORDER(b)).map((c) => tile(c, size))),
    ...melds,
    el('span', { class: 'mj-meld win', title: 'Winning tile' }, win));
}

/** The winning hand and its fans under a result (nothing for a result entered without tiles). */
function winningBlock(result, size) {
  if (!result || !result.hand) return null;
  return el('div', { class: 'mj-winning', dataset: { testid: 'mj-winning' } },
    winningHand(result.hand, size),
    el('div', { class: 'mj-fans', dataset: { testid: 'mj-fans' } }, `${fansText(result.fans)} = ${result.fan} fan`));
}

/** What the result was for one seat: "Won 10 fan", "Paid in: 12 fan to S3", "Draw". */
function seatOutcome(result, seat) {
  if (!result) return '';
  if (result.kind === 'draw') return 'Draw';
  if (result.winner === seat) return `Won ${result.fan} fan${result.kind === 'self_draw' ? ' self-drawn' : ''}`;
  if (result.discarder === seat) return `Discarded: ${result.fan} fan to S${result.winner}`;
  return result.kind === 'self_draw' ? `S${result.winner} self-drew ${result.fan}` : `S${result.winner} won on S${result.discarder}`;
}

function mjRoot(section, cls) {
  let root = section.querySelector('.mj');
  if (!root) {
    root = el('div', { class: `mj ${cls}`, dataset: { testid: 'mahjong' } });
    section.append(root);
  }
  return root;
}

/** The live table (commentator): deal, prevalent wind, result; each seat's wind, 13 tiles, points. */
export function renderTable(section, t) {
  section.classList.add('mahjong');
  const root = mjRoot(section, 'mj-table');
  const m = t.mahjong;
  if (!m) {
    root.replaceChildren(el('div', { class: 'mj-head' }, 'No hand yet'));
    return;
  }
  const seatName = (seat) => {
    const s = (t.seats || []).find((x) => x.seat === seat);
    return s ? `${s.code || s.team} ${s.player || ''} (${m.winds[String(seat)]})` : `S${seat}`;
  };
  const points = (m.result && m.result.points) || {};
  const rows = (t.seats || []).map((s) => {
    const wind = m.winds[String(s.seat)];
    const p = points[String(s.seat)];
    const row = el('div', {
      class: `mj-seat${m.result && m.result.winner === s.seat ? ' winner' : ''}`,
      dataset: { testid: 'mj-seat', seat: String(s.seat), wind },
    },
    el('span', { class: `wind w${wind}`, title: WIND_NAME[wind] }, wind),
    el('span', { class: 'chip' }, s.code || String(s.team)),
    el('span', { class: 'pname' }, s.player || ''),
    el('span', { class: 'hand', dataset: { testid: 'mj-hand' } }, tiles(m.hands[String(s.seat)] || [], 'md')),
    el('span', { class: `pts num ${p === undefined ? '' : signClass(p)}`, dataset: { testid: 'mj-points' } },
      p === undefined ? '' : fmtSigned(p)));
    for (const [k, v] of Object.entries(teamStyle(s.colour))) row.style.setProperty(k, v);
    return row;
  });
  root.replaceChildren(
    el('div', { class: 'mj-head' },
      el('span', { dataset: { testid: 'mj-deal' } }, `Deal ${m.deal} · ${statusOf(m.status)}`),
      el('span', { class: 'prevalent', dataset: { testid: 'mj-prevalent' } }, `Prevalent wind ${WIND_NAME[m.prevalent] || m.prevalent}`)),
    ...rows,
    el('div', { class: 'mj-result', dataset: { testid: 'mj-result' } },
      m.result ? resultText(m.result, seatName) : m.status === 'void' ? 'Void (misdeal)' : 'Playing…'),
    m.status === 'disputed' ? null : winningBlock(m.result, 'sm'));
}

/** The split screen: the seat's wind and tiles in the header, one panel per table with its
 * result for this seat, its points and the swing against the average. */
export function renderCompare(section, c, rows, $) {
  section.classList.add('mahjong');
  const m = c.mahjong;
  $('compare-title').textContent = `Deal ${c.deal} · Seat ${c.seat} (${WIND_NAME[m.wind]}) · Prevalent ${WIND_NAME[m.prevalent]}`;
  const hole = $('hole');
  const key = (c.hole || []).join(' ');
  if (hole.dataset.cards !== key) {
    hole.replaceChildren(tiles(c.hole, 'sm'));
    hole.dataset.cards = key;
  }
  $('board').replaceChildren();
  const cur = $('cursor');
  cur.textContent = c.average === null || c.average === undefined ? '' : `Average ${fmtMinus(c.average)}`;
  const panels = rows.map((r) => {
    const status = statusOf(r.status);
    const node = el('div', { class: 'panel mj-panel', dataset: { testid: 'panel', table: String(r.table) } },
      el('div', { class: 'ph' }, el('span', { class: 'chip' }, r.code || r.team || ''),
        el('span', { class: 'pname' }, r.player || ''), el('span', { class: 'tno' }, `T${r.table}`)),
      el('div', { class: 'mj-outcome', dataset: { testid: 'mj-outcome' } },
        r.result ? seatOutcome(r.result, c.seat) : status),
      r.status === 'disputed' ? null : winningBlock(r.result, 'xs'),
      el('div', { class: 'mj-nums' },
        el('span', { class: `num ${signClass(r.chips)}`, dataset: { testid: 'panel-points' } }, r.chips === null ? '–' : fmtSigned(r.chips)),
        r.swing === undefined ? null : el('span', { class: `swing num ${signClass(r.swing)}` }, `vs avg ${fmtSigned(r.swing)}`)));
    for (const [k, v] of Object.entries(teamStyle(r.colour))) node.style.setProperty(k, v);
    return node;
  });
  return panels;
}
