// The operator's mixer (docs/overlays.md "Preview, Take and Cut"): a preview monitor of what
// Take will put on air (the real overlay page in a scaled iframe, showing the pending selection
// from its URL), an "On air" monitor (the overlay following its slot as a programme source
// shows it: the program feed when a delay is set, the public feed otherwise), Take (the overlay's
// transition), Cut (no transition), Hide, Undo take, the hub's cue list (shared by every operator
// browser, journaled) and keyboard hotkeys for a Stream Deck. The preview is the hub's too (the
// `ops` topic's `preview`, moved by the `preview` op): every operator browser and every control
// surface (docs/companion.md) shows the same one, and Take or Cut here sends the hub's `take`,
// as a Stream Deck's button does. A preview of a deal not released yet is marked, and Take or
// Cut asks before it goes on air (airguard.js).
import { el, keepChildren } from './ui.js';
import { asking, guardedTake, outputs, programmeFeed, unreleasedDeal } from './airguard.js';
import { topic } from './topics.js';

export const SLOT_PAGES = {
  leaderboard: 'leaderboard.html', seat: 'seat.html', table: 'table.html', compare: 'compare.html', ticker: 'ticker.html',
};
// The selection keys of each slot: Take sends every one (null: the overlay's URL decides), so
// what goes on air is exactly the preview, not the preview merged over the slot's old keys.
export const SLOT_KEYS = {
  leaderboard: ['view', 'group', 'scope', 'stage', 'session'],
  seat: ['seat', 'view'],
  table: ['table'],
  compare: ['deal', 'seat', 'tables', 'mode'],
  ticker: [],
};
export const HOTKEYS = [
  ['Space / Enter', 'Take'], ['C', 'Cut'], ['1–9', 'cue N to preview'], ['↑ ↓', 'previous / next cue'],
  ['H', 'hide'], ['Ctrl+Z', 'undo take'],
];
const CUE_ROWS = 9; // cue rows shown at once (a window round the selected cue beyond that)
const SETTLE_MS = 1500; // the longest Take waits for this browser's own preview command

/** A slot's selection in words: "compare · deal 3 · seat 5 · tables 1, 4 · live". */
export function describe(slot, value) {
  const v = value || {};
  const parts = [slot];
  for (const k of ['table', 'deal', 'seat', 'group', 'scope', 'stage', 'session']) {
    if (v[k] !== undefined && v[k] !== null && v[k] !== '') parts.push(`${k} ${v[k]}`);
  }
  if (Array.isArray(v.tables) && v.tables.length) parts.push(`tables ${v.tables.join(', ')}`);
  if (v.view) parts.push(String(v.view).replace(/_/g, ' '));
  if (v.mode) parts.push(v.mode === 'sync' ? 'deal-aligned replay' : 'live');
  return parts.join(' · ');
}

function query(base, extra) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...base, ...extra })) {
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && !v.length)) continue;
    q.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  return q.toString();
}

/** The preview monitor's page: the slot's overlay showing `value` from its URL (no slot). */
export function previewUrl(slot, value, link) {
  const v = {};
  for (const k of SLOT_KEYS[slot] || []) if (value && value[k] !== undefined) v[k] = value[k];
  return `${SLOT_PAGES[slot]}?${query({ ...link, theme: 'dark', slot: '0' }, v)}`;
}

/**
 * The on-air monitor's page: the slot's overlay following its slot, as a programme source shows
 * it: no token; the program feed (its default output) when `ops.program` names outputs (a
 * `[broadcast] delay`), else the public feed.
 */
export function airUrl(slot, link, ops) {
  const feed = outputs(ops).length ? { feed: 'program' } : {};
  return `${SLOT_PAGES[slot]}?${query({ ws: link.ws, tournament: link.tournament, theme: 'dark', slot: '1', ...feed }, {})}`;
}

/** The on-air value Take (or Cut) sends for a preview. */
export function takeValue(slot, value, cut) {
  const out = Object.fromEntries((SLOT_KEYS[slot] || []).map((k) => [k, null]));
  for (const [k, v] of Object.entries(value || {})) if (k !== 'visible' && k !== 'cut') out[k] = v;
  out.visible = true;
  if (cut) out.cut = true;
  return out;
}

/** A selection as text, its keys in order: a preview and a cue of the same selection agree. */
function same(a, b) {
  const text = (v) => JSON.stringify(Object.keys(v || {}).sort().map((k) => [k, v[k]]));
  return text(a) === text(b);
}

/** The hotkey of a keydown, or null: never while typing in a field. */
export function hotkey(e) {
  const t = e.target;
  if (t && (t.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(t.tagName))) return null;
  if (e.altKey || e.metaKey) return null;
  if (e.ctrlKey) return e.key === 'z' || e.key === 'Z' ? 'undo' : null;
  if (e.key === ' ' || e.key === 'Enter') return 'take';
  if (/^[1-9]$/.test(e.key)) return `cue${e.key}`;
  return {
    c: 'cut', C: 'cut', h: 'hide', H: 'hide', ArrowDown: 'next', ArrowRight: 'next', ArrowUp: 'previous', ArrowLeft: 'previous',
  }[e.key] || null;
}

/** Mount the mixer in `root` (its section), speaking through the operator page's `client`;
 * the page hands it the hub's `ok` frames (`answered(frame)`). */
export function mountMixer(root, client, p) {
  const link = { token: p.token, ws: p.ws, tournament: p.tournament };
  const $ = (id) => root.querySelector(`[data-testid="${id}"]`);
  let preview = null; // { slot, value, cue }: the hub's preview (ops.preview), what Take takes
  let airSlot = 'leaderboard';
  let cues = [];
  let cursor = -1; // the index of the preview's cue (-1: none)
  let onair = { slots: {} };
  let undo = null;
  let ops = null; // the ops topic: the release table and the program outputs
  // This browser's preview commands not answered yet, and whether the ops topic has shown the
  // preview since the last answer: Take (and Add to cues) wait for them, so what the guard
  // asks about is what the hub takes (a Preview then Take within one feed tick included).
  let moving = 0;
  let unseen = false;
  let sentFrom = ''; // the preview (as text) when the latest of them was sent
  let sent = 0; // preview commands sent (a wait's timeout forgets only those sent before it)
  let waiting = [];
  let refusals = 0; // of them

  const monitor = (id) => el('iframe', { class: 'monitor', tabindex: '-1', dataset: { testid: id }, title: id });
  const button = (id, text, cls, onclick) => el('button', { class: cls, dataset: { testid: id }, onclick }, text);
  root.replaceChildren(
    el('h2', {}, 'Preview · On air', el('span', { class: 'mixmsg', dataset: { testid: 'mixer-msg' } })),
    el('div', { class: 'mixrow' },
      el('div', { class: 'mon' }, el('div', { class: 'monlabel pv' }, 'Preview',
        el('span', { class: 'unrel', dataset: { testid: 'preview-unreleased' }, hidden: true })), monitor('preview-frame'),
        el('div', { class: 'moncap', dataset: { testid: 'preview-summary' } }, 'nothing in preview')),
      el('div', { class: 'mixbuttons' },
        button('mix-take', 'Take', 'primary', () => take(false)),
        button('mix-cut', 'Cut', 'cut', () => take(true)),
        button('mix-hide', 'Hide', '', hide),
        button('mix-undo', 'Undo take', '', undoTake),
        button('cue-add', 'Add to cues', '', addCue)),
      el('div', { class: 'mon' }, el('div', { class: 'monlabel air' }, 'On air',
        el('span', { class: 'feed', dataset: { testid: 'air-feed' } })), monitor('air-frame'),
        el('div', { class: 'moncap', dataset: { testid: 'air-summary' } }, '')),
      el('div', { class: 'cuebox' }, el('div', { class: 'cuehead' }, 'Cues'),
        el('table', { class: 't cues' }, el('tbody', { dataset: { testid: 'cues' } })))),
    el('div', { class: 'hotkeys', dataset: { testid: 'hotkeys' } },
      HOTKEYS.map(([k, what]) => el('span', { dataset: { key: what } }, el('kbd', {}, k), ` ${what}`))));

  function say(text, bad = false) {
    $('mixer-msg').textContent = text;
    $('mixer-msg').className = `mixmsg ${bad ? 'err' : ''}`;
  }
  function setSrc(frame, url) {
    if (frame.getAttribute('src') !== url) frame.setAttribute('src', url);
  }
  function draw() {
    setSrc($('preview-frame'), preview ? previewUrl(preview.slot, preview.value, link) : 'about:blank');
    $('preview-summary').textContent = preview ? describe(preview.slot, preview.value) : 'nothing in preview';
    root.dataset.previewCue = preview && preview.cue ? String(preview.cue) : '';
    const deal = preview ? unreleasedDeal(preview.slot, preview.value, ops) : null;
    $('preview-unreleased').hidden = deal === null;
    $('preview-unreleased').textContent = deal === null ? '' : ` · deal ${deal} not released: live sources only`;
    root.dataset.previewUnreleased = deal === null ? '' : String(deal);
    $('air-feed').textContent = ` · as the programme shows it (${programmeFeed(ops)})`;
    if (ops) setSrc($('air-frame'), airUrl(airSlot, link, ops)); // which feed: known with ops
    const cur = (onair.slots || {})[airSlot];
    $('air-summary').textContent = cur ? `${cur.visible === true ? 'on air' : 'hidden'} · ${describe(airSlot, cur)}` : airSlot;
    // A preview of a slot's selection that no cue holds yet: offered for the cue list.
    const offer = Boolean(preview && !preview.cue && !cues.some((c) => c.slot === preview.slot && same(c.value, preview.value)));
    $('cue-add').classList.toggle('offer', offer);
    $('mix-undo').disabled = !undo;
    $('mix-undo').title = undo ? `back to: ${describe(undo.slot, undo.value)}` : 'nothing to undo';
    const first = Math.max(0, Math.min(cursor - 4, cues.length - CUE_ROWS));
    // Every event redraws the mixer: a cue row stays while it is unchanged (a button pressed
    // before an update and released after it is a click on it still).
    keepChildren($('cues'), [...cues.slice(first, first + CUE_ROWS).map((c, j) => cueRow(c, first + j)),
      ...(cues.length > CUE_ROWS ? [el('tr', { class: 'note' }, el('td', { colspan: 3 }, `${cues.length} cues`))] : []),
      ...(cues.length ? [] : [el('tr', { class: 'note' }, el('td', {}, 'no cues: Preview a slot, then Add to cues'))])]);
  }
  function cueRow(c, i) {
    const act = (id, text, fn) => el('button', { dataset: { testid: id }, onclick: fn }, text);
    return el('tr', { dataset: { testid: 'cue-row', id: String(c.id), index: String(i), selected: String(i === cursor) } },
      el('td', { class: 'cueno' }, i < 9 ? String(i + 1) : ''),
      el('td', { class: 'cuetext' }, c.label ? `${c.label} · ` : '', describe(c.slot, c.value),
        unreleasedDeal(c.slot, c.value, ops) === null ? null : el('span', { class: 'unrel', dataset: { testid: 'cue-unreleased' } }, ' · not released')),
      el('td', { class: 'cueacts' },
        act('cue-load', 'Preview', () => loadCue(i)),
        act('cue-up', '↑', () => send({ op: 'cue', action: 'move', cue: c.id, to: Math.max(0, i - 1) })),
        act('cue-down', '↓', () => send({ op: 'cue', action: 'move', cue: c.id, to: Math.min(cues.length - 1, i + 1) })),
        act('cue-remove', '✕', () => send({ op: 'cue', action: 'remove', cue: c.id }))));
  }
  function send(op) {
    say('');
    if (client.send(op)) return true;
    say('not connected: nothing sent', true);
    return false;
  }
  function sendPreview(op) {
    if (!send(op)) return;
    moving += 1;
    sent += 1;
    sentFrom = JSON.stringify(preview);
  }
  function answered(ok) {
    if (moving === 0) return;
    moving -= 1;
    if (!ok) refusals += 1;
    // Applied, and the ops topic still shows the preview it was sent from: its frame is to come
    // (or the command moved nothing: the timeout ends the wait).
    if (ok && moving === 0 && JSON.stringify(preview) === sentFrom) unseen = true;
    settle();
  }
  function settle() {
    if (moving > 0 || unseen) return;
    const ready = waiting;
    waiting = [];
    for (const fn of ready) fn();
  }
  /** Resolves once the hub answered this browser's preview commands and the ops topic shows
   * the preview since (or after SETTLE_MS: a lost answer never blocks Take for long). */
  function settled() {
    if (moving === 0 && !unseen) return Promise.resolve();
    const since = sent;
    return new Promise((resolve) => {
      waiting.push(resolve);
      setTimeout(() => {
        if (sent === since) { // nothing sent since: what is unanswered is lost
          moving = 0;
          unseen = false;
          settle();
        }
        if (waiting.includes(resolve)) {
          waiting = waiting.filter((fn) => fn !== resolve);
          resolve();
        }
      }, SETTLE_MS);
    });
  }
  // The preview is the hub's: each of these asks the hub to move it, and the monitor follows
  // the `ops` topic (as every other operator browser's and the control surfaces' do).
  function load(slot, value) {
    if (!SLOT_PAGES[slot]) {
      say(`unknown slot ${slot}`, true);
      return;
    }
    sendPreview({ op: 'preview', action: 'set', slot, value: { ...(value || {}) } });
  }
  function loadCue(i) {
    if (i < 0 || i >= cues.length) {
      say(`there is no cue ${i + 1}`, true);
      return;
    }
    sendPreview({ op: 'preview', action: 'cue', cue: cues[i].id });
  }
  function step(action) {
    if (!cues.length) {
      say('no cues: Preview a slot, then Add to cues', true);
      return;
    }
    sendPreview({ op: 'preview', action }); // from the preview's cue (none: the first); ends stay put
  }
  async function take(cut) {
    const [pending, refused] = [moving > 0 || unseen, refusals];
    await settled();
    if (pending && refusals !== refused) { // what was pressed for is not in the preview
      say(`${$('mixer-msg').textContent} · nothing taken`, true);
      return;
    }
    if (!preview) {
      say('nothing in preview: load a cue or press Preview on a slot', true);
      return;
    }
    // Asked about what the monitor shows; the hub takes its preview (the same, unless a
    // control surface moved it this instant), as a Stream Deck's Take does.
    const { slot } = preview;
    guardedTake(slot, takeValue(slot, preview.value, cut), ops, () => send(cut ? { op: 'take', cut: true } : { op: 'take' }));
  }
  function hide() {
    send({ op: 'onair', slot: airSlot, value: { visible: false } });
  }
  function undoTake() {
    send({ op: 'undo_take' });
  }
  async function addCue() {
    await settled();
    if (!preview) {
      say('nothing in preview to add', true);
      return;
    }
    const value = Object.fromEntries(Object.entries(preview.value).filter(([, v]) => v !== null && v !== undefined));
    send({ op: 'cue', action: 'add', slot: preview.slot, value });
  }

  const ACTIONS = {
    take: () => take(false), cut: () => take(true), hide, undo: undoTake,
    next: () => step('next'),
    previous: () => step('previous'),
  };
  document.addEventListener('keydown', (e) => {
    const action = hotkey(e);
    if (!action || asking()) return; // the unreleased-deal question takes its own keys
    e.preventDefault();
    if (document.activeElement && document.activeElement.tagName === 'BUTTON') document.activeElement.blur();
    root.dataset.lastKey = action;
    if (action.startsWith('cue')) loadCue(Number(action.slice(3)) - 1);
    else ACTIONS[action]();
  });
  // Another part of the panel (a slot's Preview, a suggested split-screen's Cue) hands a
  // selection to the hub's preview (offered for the cue list while no cue holds it).
  window.addEventListener('duplicast:cue', (e) => {
    const d = e.detail || {};
    load(d.slot, d.value);
    e.preventDefault(); // handled: a suggested split-screen's Cue does not take it at once
  });
  window.addEventListener('duplicast:error', (e) => {
    const f = e.detail || {};
    if (f.op === 'preview') answered(false);
    if (['onair', 'cue', 'undo_take', 'preview', 'take'].includes(f.op)) say(`${f.op}: ${f.message || f.code}`, true);
  });
  client.subscribe(topic('ops'), (state) => {
    ops = state;
    cues = state.cues || [];
    undo = state.undo_take || null;
    preview = state.preview || null;
    cursor = preview && preview.cue ? cues.findIndex((c) => c.id === preview.cue) : -1;
    if (preview) airSlot = preview.slot; // the on-air monitor follows the preview's slot
    draw();
    if (moving === 0 && unseen) {
      unseen = false;
      settle();
    }
  });
  client.subscribe(topic('onair'), (state) => {
    onair = state;
    draw();
  });
  draw();
  return {
    answered: (frame) => {
      if (frame && frame.op === 'preview') answered(true);
    },
  };
}
