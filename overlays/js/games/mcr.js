// Duplicate MCR mahjong (docs/mahjong.md): walls of tiles, hands scored in points. It draws its
// own live table (seat rows with winds and tiles), split screen (each table's result for the
// seat) and commentator desk card, and says its showdown package in words: ../mahjong.js.
import { WIND_NAME, fansText, renderCompare, renderTable, resultText, tiles, winningHand } from '../mahjong.js';
import { el, fmtSigned, signClass, statusOf } from '../ui.js';
// The console pad's winning hand (field kind `mcr_hand`, CONTRACT32): the tile picker.
import { mount as mcrHand } from '../tilepicker.js';

/** The commentator desk's table (docs/mahjong.md): each seat's wind, 13 tiles and points, the
 * hand's result, and the last finished deal's swing against the seat average (`last`: that
 * deal, `swings`: seat -> swing, `team(seat)`: the team's chip). None before the deal's
 * `mahjong` block is there (the desk draws its card as hold'em's). */
function renderDeskCard(t, s, { last: ld, swings: sw, team: code }) {
  const m = s.mahjong;
  if (!m) return null;
  const points = (m.result && m.result.points) || {};
  const name = (seat) => {
    const st = (s.seats || []).find((x) => x.seat === seat);
    return st ? `${st.code || st.team} (${m.winds[String(seat)]})` : `S${seat}`;
  };
  return el('div', { class: 'card-box', dataset: { testid: 'com-table', table: String(t), game: 'mcr' } },
    el('h2', {}, `Table ${t}`, ` · deal ${m.deal} · prevalent ${WIND_NAME[m.prevalent] || m.prevalent}`),
    el('div', { class: 'tline' },
      el('span', { dataset: { testid: 'com-mj-result' } },
        m.result ? resultText(m.result, name) : s.status === 'void' ? 'Void (misdeal)' : 'Playing'),
      el('span', {}, statusOf(s.status))),
    m.result && m.result.hand && s.status !== 'disputed' ? el('div', { class: 'tline mj-desk-win', dataset: { testid: 'com-mj-fans' } },
      winningHand(m.result.hand, 'xs'), el('span', {}, `${fansText(m.result.fans)} = ${m.result.fan} fan`)) : null,
    el('table', { class: 't' },
      el('thead', {}, el('tr', {}, el('th', {}, 'Seat'), el('th', {}, 'Team'), el('th', {}, 'Player'), el('th', {}, 'Hand'),
        el('th', { class: 'r' }, 'Points'),
        el('th', { class: 'r', dataset: { testid: 'last-hand' }, title: 'points in the last finished hand against the seat average' },
          ld ? `D${ld} swing` : 'Last swing'))),
      el('tbody', {}, (s.seats || []).map((st) => {
        const wind = m.winds[String(st.seat)];
        const pts = points[String(st.seat)];
        return el('tr', { class: m.result && m.result.winner === st.seat ? 'acting' : '', dataset: { testid: 'com-seat', seat: String(st.seat) } },
          el('td', {}, `S${st.seat} ${wind}`), el('td', {}, code(st)), el('td', {}, st.player || ''),
          el('td', {}, el('span', { class: 'mini', dataset: { testid: 'com-mj-hand' } }, tiles(m.hands[String(st.seat)] || [], 'xs'))),
          el('td', { class: `r num ${pts === undefined ? '' : signClass(pts)}` }, pts === undefined ? '' : fmtSigned(pts)),
          el('td', { class: `r num ${sw.has(st.seat) ? signClass(sw.get(st.seat)) : ''}`, dataset: { testid: 'last-swing' } },
            sw.has(st.seat) ? fmtSigned(sw.get(st.seat)) : '–'));
      }))));
}

/** The showdown package's lines (../showdown.js): the hand's result, its fans and the
 * payments; none for a package without the `mahjong` result (drawn as hold'em's). */
function showdownLines(sd, who) {
  if (!sd.mahjong) return null;
  const pay = Object.entries(sd.mahjong.points || {}).map(([s, p]) => `${who(Number(s))} ${fmtSigned(p)}`);
  return [{ kind: 'result', text: resultText(sd.mahjong, who) },
    ...(sd.fans && sd.fans.length ? [{ kind: 'result', text: `Fans: ${fansText(sd.fans)}` }] : []),
    ...(pay.length ? [{ kind: 'result', text: `Payments: ${pay.join(' · ')}` }] : [])];
}

export default {
  name: 'mcr', pieces: 'tiles', unit: 'Points', chip: 'hand point',
  renderTable, renderCompare, renderDeskCard, showdownLines, padFields: { mcr_hand: mcrHand },
  /** The console's headings of its own refusals (hub/domain/games/mahjong/fan.py). */
  refusalTitles: { impossible_hand: 'Not a possible hand', not_winning: 'Not a winning hand', below_minimum: 'Below the minimum' },
};
