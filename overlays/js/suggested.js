// Suggested split-screens: the deal x seat comparisons the hub ranks worth airing (topic
// `suggestions`: the live list for a commentator or operator token, released deals only for
// the public). Each entry's Cue button offers the comparison to whoever handles cues on the
// page (the operator's preview marks it handled with event.preventDefault()); when no one does,
// it takes the compare slot at once, as the slot's own Take does.
import { el, keepChildren } from './ui.js';
import { topic } from './topics.js';

/** The compare slot's value of an entry: deal, seat and the tables to put side by side. */
export function cueValue(entry) {
  return { deal: entry.deal, seat: entry.seat, tables: [...(entry.tables || [])] };
}

/**
 * Offer an entry as a cue (`duplicast:cue` on window, cancelable). Returns true when a
 * listener handled it; otherwise `take(value)` ran (the fallback: on air at once).
 */
export function cue(entry, take) {
  const value = cueValue(entry);
  const event = new CustomEvent('duplicast:cue', { cancelable: true, detail: { slot: 'compare', value } });
  const handled = !window.dispatchEvent(event);
  if (!handled && take) take(value);
  return handled;
}

/** "D3 · S2" */
function title(e) {
  return `D${e.deal} · S${e.seat}`;
}

function row(e, take, unreleased) {
  const held = Boolean(unreleased && unreleased(e.deal));
  return el('li', { class: `sug${held ? ' unreleased' : ''}`, dataset: { testid: 'suggestion', deal: String(e.deal), seat: String(e.seat), released: String(!held) } },
    el('span', { class: 'sug-title' }, title(e)),
    held ? el('span', { class: 'unrel', dataset: { testid: 'suggestion-unreleased' }, title: 'tables still play this deal: live sources only' }, 'not released') : null,
    el('span', { class: 'sug-score', dataset: { testid: 'suggestion-score' } }, String(e.score)),
    el('span', { class: 'sug-reasons', dataset: { testid: 'suggestion-reasons' } }, (e.reasons || []).join(' · ')),
    el('span', { class: 'sug-tables', dataset: { testid: 'suggestion-tables' } }, (e.tables || []).map((t) => `T${t}`).join(' ')),
    take ? el('button', { class: 'primary', dataset: { testid: 'suggestion-cue' }, onclick: () => cue(e, take) }, 'Cue') : null);
}

/**
 * Keep `root` (a list element) showing the suggestions of `client`'s connection. `take`: what
 * an unhandled cue does (the operator panel's take of the compare slot); without it the list
 * has no Cue buttons (the commentator desk). `unreleased(deal)`: true for a deal not released
 * yet, marked "not released" (the operator's live list holds any deal). Returns `{off,
 * redraw}` (redraw: the release state moved).
 */
export function mountSuggested({ client, root, take, unreleased }) {
  let last = null;
  const draw = (state) => {
    last = state;
    const list = (state && state.suggestions) || [];
    // (the operator's panel redraws it on every ops update: an unchanged entry stays, a Cue
    // pressed before an update and released after it is a click on it still)
    keepChildren(root, list.length
      ? list.map((e) => row(e, take, unreleased))
      : [el('li', { class: 'note', dataset: { testid: 'suggestion-none' } }, 'nothing to suggest yet')]);
  };
  draw(null);
  const off = client.subscribe(topic('suggestions'), draw);
  return { off, redraw: () => draw(last) };
}
