// RPS Poker (docs/rps-poker.md) on the live table and the split screen: throws as letter tiles
// (R rock, P paper, S scissors: legible on any machine, no emoji font needed), round by round,
// the dealer's four rounds with the ones not yet turned over as empty slots, and a player's
// score against the dealer so far ("+3 (4-1)": points difference, wins-losses).
import { el, fmtSigned } from './ui.js';

export const ROUND_THROWS = [3, 1, 2, 3];
export const ROUND_LABEL = { gambit: 'Gambit', preflop: 'Gambit', flop: 'Flop', turn: 'Turn', river: 'River', showdown: 'Showdown', complete: 'Complete' };
const NAME = { R: 'Rock', P: 'Paper', S: 'Scissors' };

function tile(t, size) {
  return el('span', { class: `throw t-${t} ${size}`, title: NAME[t] || t }, t);
}

/** A seat's throws: one group of tiles per round thrown. */
export function throwTiles(rounds, size = '', testid = 'throws') {
  return el('span', { class: 'throws', dataset: { testid, throws: (rounds || []).join(' ') } },
    ...(rounds || []).map((r) => el('span', { class: 'tround' }, ...[...r].map((t) => tile(t, size)))));
}

/** The dealer's rounds: turned over ones as tiles, the rest as empty slots, each labelled. */
export function dealerRounds(shown, size = '') {
  const rounds = shown || [];
  return el('span', { class: 'dealer-throws', dataset: { testid: 'rps-dealer', throws: rounds.join(' ') } },
    ...ROUND_THROWS.map((n, i) => el('span', { class: 'tround' },
      el('span', { class: 'rlabel' }, ['Gambit', 'Flop', 'Turn', 'River'][i]),
      el('span', { class: 'tiles' }, ...(rounds[i] ? [...rounds[i]].map((t) => tile(t, size))
        : Array.from({ length: n }, () => el('span', { class: `throw slot ${size}` })))))));
}

export function scoreText(s) {
  return s ? `${s.diff === 0 ? '0' : fmtSigned(s.diff)} (${s.wins}-${s.losses})` : '';
}
