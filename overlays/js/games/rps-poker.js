// RPS Poker (docs/rps-poker.md): every table plays against the same dealer's throws; seats show
// their throws and score against him (../rps.js) where hold'em has its hole cards and chances,
// the dealer's rounds where hold'em has its board, and its rounds' names for the streets'.
import { ROUND_LABEL, dealerRounds, scoreText, throwTiles } from '../rps.js';
import { el, fmtPct } from '../ui.js';
import { patchCards } from '../keyed.js';
// The console pad's throws (field kind `throws`, masked when secret): ../throwpad.js.
import { mount as throwsField } from '../throwpad.js';

const hasWin = (s) => s.win !== null && s.win !== undefined && !s.folded;

export default {
  name: 'rps-poker',
  pieces: 'dealer throws',
  unit: 'Chips',
  padFields: { throws: throwsField },
  /** The console's headings of its own refusals (hub/domain/games/rps/rules.py). */
  refusalTitles: { throws_pending: 'Throws still to come', bad_throws: 'Wrong throws' },
  /** The round a payload is in ("Gambit"): a table's `round`, else its street. */
  streetLabel: (x) => ROUND_LABEL[x.round || x.street],
  shortLabels: { preflop: 'Gam' },
  /** The live table's seat: the score and the chance where hold'em has its hole cards and
   * equity (the throws line below holds all nine throws of a river, 270 of the box's 276 px);
   * nothing for the dealer. */
  seatParts(s, t) {
    if (s.seat === t.button) return null;
    return {
      top: [el('span', { class: 'rps-score num', dataset: { testid: 'seat-score', seat: String(s.seat) } }, scoreText(s.score)),
        hasWin(s) ? el('span', { class: 'eq num', dataset: { testid: 'seat-win', seat: String(s.seat) } }, fmtPct(s.win)) : null],
      below: el('div', { class: 'rpsline' }, throwTiles(s.throws, 'sm', 'seat-throws')),
    };
  },
  /** The live table's board: the dealer's rounds (kept while they are the same). */
  renderBoard(board, t) {
    const boardKey = `rps ${(t.dealer_throws || []).join(' ')}`;
    if (board.dataset.cards !== boardKey) {
      patchCards(board, [dealerRounds(t.dealer_throws)]);
      board.dataset.cards = boardKey;
    }
  },
  /** Who the table waits for while throws are due. */
  toActText(t) {
    const awaited = t.throws_awaited || [];
    if (!awaited.length) return null;
    return awaited.includes(t.button) ? 'Dealer to reveal' : `Throwing: ${awaited.map((x) => `S${x}`).join(' ')}`;
  },
  /** The commentator desk's board, a seat's hand and its chance columns. */
  deskBoard: (s) => throwTiles(s.dealer_throws, 'sm', 'com-rps-dealer'),
  deskHole: (st, s) => (st.throws && st.seat !== s.button ? el('span', { class: 'mini' }, throwTiles(st.throws, 'sm', 'com-throws'), ` ${scoreText(st.score)}`) : ''),
  deskChances: (s, st) => [el('td', { class: 'r num', dataset: { testid: 'com-rps-win' } }, hasWin(st) ? fmtPct(st.win) : ''), el('td', {})],
  /** The split screen's panel: the seat's throws, its score, the dealer's line. */
  panelParts: (row) => ({
    hole: throwTiles(row.throws, 'sm', 'panel-throws'),
    score: el('span', { class: 'rps-score num', dataset: { testid: 'panel-score' } }, scoreText(row.score)),
    line: el('div', { class: 'rpsline' }, 'Dealer', throwTiles(row.dealer_throws, 'sm', 'panel-dealer')),
  }),
};
