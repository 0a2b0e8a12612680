// The showdown package (docs/overlays.md): once a hand settles, each pot with its winners and
// winning hand ("Main pot 2,400: BRA S2 and DEN S5 split, Two pair, aces and kings"), every
// hand shown, an all-in's run-out street by street; a game's own lines where its module says
// them (`showdownLines`, games/index.js: mahjong's result and payments; asked of every game's
// module, as a public table's payload names no game). Drawn from the payload's `showdown`
// field; a page redraws it only when that field changes.
import { everyGame } from './games/index.js';
import { el, fmtInt } from './ui.js';

const STREET = { preflop: 'Pre-flop', flop: 'Flop', turn: 'Turn', river: 'River' };

const pct = (v) => `${Number(v).toFixed(1)}%`;

/** "Side pot 800: BRA S4" — one pot, its winners and the winning hand. */
export function potText(p, count, who) {
  const label = p.kind === 'side' ? 'Side pot' : count > 1 ? 'Main pot' : 'Pot';
  const names = (p.winners || []).map(who);
  const won = names.length > 1 ? `${names.join(' and ')} split` : names[0] || '';
  return `${label} ${fmtInt(p.amount)}: ${won}${p.hand ? `, ${p.hand}` : ''}`;
}

/** The package as lines of text: {kind: 'pot'|'hand'|'runout'|'result', seat?, text}; a game
 * module's when it knows the package (its `showdownLines` answers). */
export function showdownLines(sd, who = (seat) => `S${seat}`) {
  if (!sd) return [];
  for (const game of everyGame()) {
    const own = game.showdownLines ? game.showdownLines(sd, who) : null;
    if (own) return own;
  }
  const pots = sd.pots || [];
  const shown = Object.entries(sd.hands || {});
  const lines = pots.map((p) => ({ kind: 'pot', text: potText(p, pots.length, who) }));
  if (pots.length && !shown.length) lines[0].text += ' · no showdown';
  for (const [seat, name] of shown) lines.push({ kind: 'hand', seat, text: `${who(Number(seat))}: ${name}` });
  for (const r of sd.runout || []) {
    const tie = r.tie || {};
    const odds = Object.entries(r.equity).map(([s, v]) => `${who(Number(s))} ${pct(v)}${tie[s] ? ` (tie ${pct(tie[s])})` : ''}`);
    lines.push({ kind: 'runout', street: r.street, text: `${STREET[r.street] || r.street}: ${odds.join(' · ')}` });
  }
  return lines;
}

/** A key that changes only when the package does (so a page leaves it alone otherwise). */
export function showdownKey(sd) {
  return sd ? JSON.stringify(sd) : '';
}

/** Fill `box` with the package (emptied when there is none), only if it changed. */
export function drawShowdown(box, sd, who, title = 'Showdown') {
  const key = showdownKey(sd) + (sd ? `|${(sd.pots || []).flatMap((p) => p.winners).map(who).join(',')}` : '');
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  const lines = showdownLines(sd, who);
  if (!lines.length) {
    box.replaceChildren();
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const deal = sd && sd.deal ? ` · deal ${sd.deal}` : '';
  const hands = lines.filter((l) => l.kind === 'hand');
  const runout = lines.filter((l) => l.kind === 'runout');
  box.replaceChildren(...[
    el('div', { class: 'sd-title' }, `${title}${deal}`),
    ...lines.filter((l) => l.kind === 'pot' || l.kind === 'result')
      .map((l) => el('div', { class: 'sd-pot', dataset: { testid: 'sd-pot' } }, l.text)),
    hands.length ? el('div', { class: 'sd-hands' }, hands.map((l) =>
      el('span', { class: 'sd-hand', dataset: { testid: 'sd-hand', seat: l.seat } }, l.text))) : null,
    runout.length ? el('div', { class: 'sd-runout', dataset: { testid: 'sd-runout' } }, runout.map((l) =>
      el('span', { class: 'sd-street', dataset: { street: l.street } }, l.text))) : null,
  ].filter(Boolean));
}
