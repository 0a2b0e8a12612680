// Nothing unreleased on air by accident (issue #30 item 3). In a duplicate event a deal shown
// before every table has played it is spoiled for the tables still to play it, so the operator
// panel marks every deal not released yet (suggestions, slot rows, preview) and asks before
// taking one to air, naming the sources that would show it (a page on the live feed, with a
// token) and those that stay blank (the programme sources: the program feed or the public).
// What is released comes from the `ops` topic: its `release` table (per group and deal), its
// tables' current and last deal, and `program` (the program outputs, name -> delay).
import { el } from './ui.js';

export const PAGES = { compare: 'compare.html', table: 'table.html' };

/** The deals released to the public, or null before the ops topic came. */
export function releasedDeals(ops) {
  if (!ops || !Array.isArray(ops.release)) return null;
  return new Set(ops.release.filter((r) => r.released).map((r) => Number(r.deal)));
}

/** Is `deal` a deal of the tournament not released yet? (The release table not come yet:
 * taken as not released; a deal that does not exist is the hub's to refuse.) */
export function isUnreleased(ops, deal) {
  if (deal === undefined || deal === null || deal === '' || !Number.isFinite(Number(deal))) return false;
  const released = releasedDeals(ops);
  if (!released) return true;
  return ops.release.some((r) => Number(r.deal) === Number(deal)) && !released.has(Number(deal));
}

/**
 * The deal a slot's value shows on a live page: the compare slot's deal; the table slot's
 * table's hand in play, else the hand it finished last (an idle live table still shows it).
 */
export function dealShown(slot, value, ops) {
  const v = value || {};
  if (slot === 'compare') return v.deal ?? null;
  if (slot === 'table' && v.table !== undefined && v.table !== null) {
    const row = ((ops && ops.tables) || []).find((t) => Number(t.table) === Number(v.table));
    if (!row) return null;
    return row.deal ?? row.last_deal ?? null;
  }
  return null;
}

/** The unreleased deal a slot value would put on air, or null. */
export function unreleasedDeal(slot, value, ops) {
  const deal = dealShown(slot, value, ops);
  return isUnreleased(ops, deal) ? Number(deal) : null;
}

function delayWords(s) {
  const n = Math.round(Number(s));
  if (n < 120) return `${n} s`;
  const m = Math.round(n / 60);
  return m >= 60 ? `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ''}` : `${m} min`;
}

/** The program outputs, [[name, delay], ...] (none: no [broadcast] delay). */
export function outputs(ops) {
  return Object.entries((ops && ops.program) || {});
}

/** The feed the programme sources read, in words: "program feed, 20 min behind" / "public feed". */
export function programmeFeed(ops) {
  const out = outputs(ops);
  if (!out.length) return 'public feed';
  return `program feed, ${delayWords(out[0][1])} behind`;
}

/**
 * The sources of a slot, in two lists: those that would show the deal now (`shows`) and
 * those that stay blank for it (`blank`), each {source, what}.
 */
export function sourcesFor(slot, deal, ops) {
  const page = PAGES[slot] || `${slot}.html`;
  const blankWhat = slot === 'table'
    ? `no cards, no board: "Hand in progress · deal ${deal}" until it is released`
    : `blank until deal ${deal} is released`;
  const shows = [{ source: `${page}?slot=1&token=… (commentator or operator token: the live feed)`, what: 'its hole cards and board, now' }];
  const blank = outputs(ops).map(([name, delay]) => ({
    source: `${page}?slot=1&feed=program${name === 'program' ? '' : `&output=${name}`} (programme, ${name}, ${delayWords(delay)} behind)`,
    what: blankWhat,
  }));
  blank.push({ source: `${page}?slot=1 (public, no token)`, what: blankWhat });
  return { shows, blank };
}

let dialog = null;

function ensureDialog() {
  if (dialog) return dialog;
  dialog = el('dialog', { class: 'airguard', dataset: { testid: 'unreleased-dialog' } });
  document.body.append(dialog);
  return dialog;
}

/** Is the question on screen (the mixer's hotkeys wait)? */
export function asking() {
  return Boolean(dialog && dialog.open);
}

/** Ask before `deal` goes on air in `slot`: resolves true (take it) or false (cancel). */
export function confirmUnreleased(slot, deal, ops) {
  const box = ensureDialog();
  const { shows, blank } = sourcesFor(slot, deal, ops);
  const item = (s, id) => el('li', { dataset: { testid: id } }, el('code', {}, s.source), ` — ${s.what}`);
  return new Promise((resolve) => {
    const done = (yes) => {
      box.close();
      resolve(yes);
    };
    box.replaceChildren(
      el('h3', {}, `Deal ${deal} is not released`),
      el('p', {}, `Tables still play deal ${deal}: what shows it now spoils it for them. `
        + `Taking the ${slot} slot to air:`),
      el('div', { class: 'ag-head shows' }, 'Would show it'),
      el('ul', { dataset: { testid: 'unreleased-shows' } }, shows.map((s) => item(s, 'unreleased-source-shows'))),
      el('div', { class: 'ag-head blank' }, 'Stay blank for it (the programme sources)'),
      el('ul', { dataset: { testid: 'unreleased-blank' } }, blank.map((s) => item(s, 'unreleased-source-blank'))),
      el('div', { class: 'ag-buttons' },
        el('button', { dataset: { testid: 'unreleased-cancel' }, onclick: () => done(false) }, 'Cancel'),
        el('button', { class: 'cut', dataset: { testid: 'unreleased-confirm' }, onclick: () => done(true) }, `Take deal ${deal} to air anyway`)));
    box.onclose = () => resolve(false); // Escape: nothing sent (a second resolve does nothing)
    box.showModal();
    box.querySelector('[data-testid="unreleased-cancel"]').focus();
  });
}

/**
 * Send an on-air value, asking first when it shows an unreleased deal (only when it makes the
 * slot visible). `current`: the slot's value now (a Show keeps its selection). Resolves true
 * when sent.
 */
export async function guardedTake(slot, value, ops, send, current = {}) {
  if (value && value.visible === true) {
    const merged = { ...(current || {}) };
    for (const [k, v] of Object.entries(value)) if (v !== undefined) merged[k] = v;
    const deal = unreleasedDeal(slot, merged, ops);
    if (deal !== null && !(await confirmUnreleased(slot, deal, ops))) return false;
  }
  send(value);
  return true;
}

/** A small "not released" mark (hidden when `deal` is null). */
export function mark(deal, testid) {
  return el('span', { class: 'unrel', dataset: { testid }, hidden: deal === null }, deal === null ? '' : `deal ${deal} not released`);
}
