// RPS Poker's throws on the table console (docs/console.md "RPS Poker"): the pad's field widget
// of kind `throws` (games/rps-poker.js `padFields`), for a player's throws (secret: each tap
// fills a dot beside a 'hidden' chip, the letters never shown) and the dealer's (`reveal`:
// shown as tapped). Rock, Paper and Scissors buttons add a throw until the round's `count`
// (the field's constraints now; 9 when none is given), ⌫ takes the last back, Clear empties it.
//
// `mount(container, ctx)` answers {value(), problem(), reset()} (the interface of a game
// module's `padFields`, games/index.js): `value()` the letters ("RPS"), or null while none is
// tapped; `problem()` "N more throws to enter" while fewer than the round's count are in.
// The widget keeps its throws across the pad's redraws (it is mounted once per form, in the
// form's rows: not `wide`); it reads `ctx.limits` when it draws (on each tap) and checks, so
// the constraints the pad gives it afresh are the ones it uses. Tests drive it by `data-testid`: throw-R, throw-P, throw-S, `{name}-slots`,
// `{name}-back`, `{name}-clear`.
import { el } from './ui.js';

const LETTERS = [['R', 'Rock'], ['P', 'Paper'], ['S', 'Scissors']];

export function mount(box, ctx) {
  const name = ctx.field.name;
  let now = '';
  const set = (next) => {
    now = next;
    draw();
    if (ctx.changed) ctx.changed();
  };
  const button = (testid, label, onclick) => el('button', { class: 'big', dataset: { testid }, onclick }, label);
  const slots = el('div', { class: 'slots', dataset: { testid: `${name}-slots` } });
  const letters = LETTERS.map(([k, label]) => button(`throw-${k}`, label, () => set(now + k)));
  const back = button(`${name}-back`, '⌫', () => set(now.slice(0, -1)));
  const clear = button(`${name}-clear`, 'Clear', () => set(''));

  /** The slots and the buttons as the throws now are (the buttons stay: one keeps its focus). */
  function draw() {
    const count = (ctx.limits || {}).count || 9;
    slots.replaceChildren((ctx.field.secret ? '●'.repeat(now.length) : now) + '○'.repeat(Math.max(0, count - now.length)),
      ...(ctx.field.secret ? [el('span', { class: 'chip hidden' }, 'hidden')] : []));
    for (const b of letters) b.disabled = now.length >= count;
    back.disabled = !now.length;
    clear.disabled = !now.length;
  }

  box.classList.add('throws');
  box.append(slots, el('div', { class: 'row' }, letters), el('div', { class: 'row' }, back, clear));
  draw();
  return {
    value: () => now || null,
    problem() {
      const count = (ctx.limits || {}).count;
      if (!now || !count || now.length === count) return null;
      const left = count - now.length;
      return `${left} more throw${left === 1 ? '' : 's'} to enter`;
    },
    reset: () => set(''),
  };
}
