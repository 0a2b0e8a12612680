// Bet and raise amounts on the table console: the preset amounts (min, pot, all-in) and the
// check of a keyed amount against the legal range, with the reason in words when it is out.

import { fmtInt } from './ui.js';

/** The seat's all-in total on this street: what it has behind plus its bet already in. */
export function allInTotal(seat) {
  return seat ? (seat.stack || 0) + (seat.bet || 0) : null;
}

/**
 * The presets of a bet or raise `range` ({min, max}) for `seat`: min, pot (the pot-limit
 * maximum) and all-in (only when the cap is within the range: under pot-limit a stack above the
 * pot limit cannot go all-in yet).
 */
export function presets(range, seat) {
  if (!range) return null;
  const all = allInTotal(seat);
  return {
    min: range.min,
    pot: range.max,
    allIn: all !== null && all >= range.min && all <= range.max ? all : null,
  };
}

/** Why `amount` cannot be sent for `range` (null when it can), in the official's words. */
export function amountProblem(amount, range, seat, kind = 'raise') {
  if (!range) return `no ${kind} is possible now`;
  if (amount === null || amount === undefined || amount === '') return `key in the total the ${kind} reaches`;
  if (!Number.isInteger(amount)) return 'whole chips only';
  const all = allInTotal(seat);
  if (amount < range.min) return `below the minimum: a ${kind} must reach at least ${fmtInt(range.min)}`;
  if (amount > range.max) {
    if (all !== null && all <= range.max) return `more than seat ${seat.seat} has: all-in is ${fmtInt(all)}`;
    return `over the pot limit: at most ${fmtInt(range.max)}`;
  }
  return null;
}

/** The keyed digits after one key: a digit, 'back' or 'clear'; at most 9 digits. */
export function keyIn(text, key) {
  if (key === 'clear') return '';
  if (key === 'back') return text.slice(0, -1);
  if (!/^[0-9]$/.test(key)) return text;
  const next = (text + key).replace(/^0+(?=[0-9])/, '');
  return next.length > 9 ? text : next;
}
