// The MCR tile picker of the table console (issue #32, docs/console.md "Entering an MCR hand"):
// the winning hand entered the way it lies on the table, for the `hand` of a mahjong `result`
// (CONTRACT32: concealed tiles, declared melds, the winning tile, the flags MCR scoring needs).
//
// `handProblem(hand)` is the page's copy of the hub's three refusals of an impossible hand, in
// their order and word for word (tests/test_tilepicker_js.py holds them against a Python
// reference); the hub alone says whether the tiles make a winning hand of 8 fan or more.
//
// `mount(container, ctx)` is the pad's field widget of kind `mcr_hand` (games/mcr.js
// `padFields`). It answers {value(), problem(), reset(), wide}: `value()` the contract's `hand`, or
// null while `problem()` names what is wrong with it (the first refusal sentence); left empty
// it is no hand at all, value() and problem() both null (the field is optional: a result with
// the official's fan alone stays valid). ctx, all optional:
//   changed()   called after every change (the pad re-checks its send button)
//   field       the pad's field declaration (its label names the widget for screen readers)
//   store       a plain object the widget keeps its whole working state in, for a pad that
//               mounts afresh on each redraw: given the same object, nothing is lost
//   value       a `hand` to start from when the store is empty (an entry to correct)
// Tests and the console's end-to-end drive it by `data-tile` ("5p"), `data-zone`
// (concealed, melds, winning), `data-target`, `data-flag` and `data-testid`.
import { tile } from './mahjong.js';
import { el } from './ui.js';

export const SUITED = 'mps';
/** The 34 tiles in the palette's order: characters, dots, bamboo (1-9), honours E S W N P F C. */
export const TILES = Object.freeze([
  ...[...SUITED].flatMap((s) => [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `${n}${s}`)),
  ...[1, 2, 3, 4, 5, 6, 7].map((n) => `${n}z`),
]);
const KNOWN = new Set(TILES);
export const FLAGS = Object.freeze(['last_tile', 'kong_replacement', 'robbing_kong', 'last_of_kind']);
const FLAG_LABEL = {
  last_tile: 'Last tile',
  kong_replacement: 'Kong replacement',
  robbing_kong: 'Robbing the kong',
  last_of_kind: 'Last of its kind',
};
export const MELD_SIZE = Object.freeze({ chow: 3, pung: 3, kong: 4, concealed_kong: 4 });
const MELD_LABEL = { chow: 'Chow', pung: 'Pung', kong: 'Kong', concealed_kong: 'Concealed kong' };
const TARGETS = ['concealed', 'chow', 'pung', 'kong', 'concealed_kong', 'winning'];
const TARGET_LABEL = { concealed: 'Concealed', ...MELD_LABEL, winning: 'Winning tile' };
const SUIT_NAME = { m: 'characters', p: 'dots', s: 'bamboo' };
const HONOUR_NAME = ['East wind', 'South wind', 'West wind', 'North wind', 'White dragon', 'Green dragon', 'Red dragon'];
export const MISSING_WINNING = "the hand has no winning tile: tap 'Winning tile', then the tile it was won with";

/** A tile for people (and screen readers): "5 of dots", "East wind", "Red dragon". */
export function tileName(code) {
  return code[1] === 'z' ? HONOUR_NAME[Number(code[0]) - 1] : `${code[0]} of ${SUIT_NAME[code[1]]}`;
}

const sentenceOf = (tiles) => tiles.join(' ');

/** Why a declared meld is not one, or null (chow: three of one suit in a row, in any order). */
export function meldProblem(meld) {
  const tiles = meld.tiles || [];
  if (meld.kind === 'chow') {
    const nums = tiles.map((t) => Number(t[0])).sort((a, b) => a - b);
    const suited = tiles.length === 3 && tiles.every((t) => SUITED.includes(t[1]) && t[1] === tiles[0][1]);
    if (!suited || nums[1] !== nums[0] + 1 || nums[2] !== nums[0] + 2) {
      return `'${sentenceOf(tiles)}' is not a chow: three tiles in a row of one suit`;
    }
    return null;
  }
  const size = MELD_SIZE[meld.kind];
  if (tiles.length !== size || tiles.some((t) => t !== tiles[0])) {
    return size === 3
      ? `'${sentenceOf(tiles)}' is not a pung: three of the same tile`
      : `'${sentenceOf(tiles)}' is not a kong: four of the same tile`;
  }
  return null;
}

/** Every tile of a hand, concealed, melds and winning, in that order. */
function allTiles(hand) {
  return [...(hand.concealed || []), ...(hand.melds || []).flatMap((m) => m.tiles || []), ...(hand.winning ? [hand.winning] : [])];
}

/** How many of each tile a hand uses, by first appearance (concealed, melds, winning). */
export function usage(hand) {
  const used = new Map();
  for (const t of allTiles(hand)) used.set(t, (used.get(t) || 0) + 1);
  return used;
}

/** The tiles a hand counts: each meld as 3 (a kong too), the winning tile as 1. */
export function handCount(hand) {
  return (hand.concealed || []).length + 3 * (hand.melds || []).length + (hand.winning ? 1 : 0);
}

/** Rule 1: the first declared meld that is not one, in the order given. */
function meldsProblem(hand) {
  for (const meld of hand.melds || []) {
    const problem = meldProblem(meld);
    if (problem) return problem;
  }
  return null;
}

/** Rule 2: the first tile used more than four times, in the order the hand gives its tiles. */
function overuseProblem(hand) {
  const used = usage(hand);
  const over = [...used.keys()].find((t) => used.get(t) > 4);
  return over ? `${over} is used ${used.get(over)} times: a set has only four of each tile` : null;
}

/** Rule 3: not 14 tiles, counting each kong as 3. */
function countProblem(hand) {
  const count = handCount(hand);
  return count === 14 ? null : `a winning hand has 14 tiles, counting each kong as 3: this one has ${count}`;
}

/**
 * The first of the hub's refusals of an impossible hand (code `impossible_hand`), or null:
 * 1. a meld that is not one (the melds in order); 2. a tile used more than four times (the
 * first such to appear: concealed, melds, winning); 3. not 14 tiles, counting each kong as 3.
 */
export function handProblem(hand) {
  return meldsProblem(hand) || overuseProblem(hand) || countProblem(hand);
}

const ORDER = (code) => TILES.indexOf(code);
const sorted = (tiles) => [...tiles].sort((a, b) => ORDER(a) - ORDER(b));

/** A fresh working state: what the hand holds, what a palette tap enters, the undo history. */
function emptyState() {
  return { concealed: [], melds: [], winning: null, flags: [], target: 'concealed', quick: false, open: null, history: [] };
}

/** The state a `hand` starts from (an entry to correct); unknown tiles and flags are left out. */
function stateOf(hand) {
  const s = emptyState();
  if (!hand || typeof hand !== 'object') return s;
  const ok = (t) => KNOWN.has(t);
  s.concealed = sorted((hand.concealed || []).filter(ok));
  s.melds = (hand.melds || []).filter((m) => MELD_SIZE[m.kind]).map((m) => ({ kind: m.kind, tiles: (m.tiles || []).filter(ok) }));
  s.winning = ok(hand.winning) ? hand.winning : null;
  s.flags = FLAGS.filter((f) => (hand.flags || []).includes(f));
  return s;
}

const HAND_KEYS = ['concealed', 'melds', 'winning', 'flags', 'open'];
const snapshot = (s) => JSON.parse(JSON.stringify(Object.fromEntries(HAND_KEYS.map((k) => [k, s[k]]))));

/** The contract's `hand` of the state, as it stands (possible or not). */
function handOf(s) {
  const hand = { concealed: [...s.concealed], melds: s.melds.map((m) => ({ kind: m.kind, tiles: [...m.tiles] })), winning: s.winning };
  if (s.flags.length) hand.flags = FLAGS.filter((f) => s.flags.includes(f));
  return hand;
}

/** Nothing entered: no tile and no flag. */
const isEmpty = (s) => !s.concealed.length && !s.melds.length && !s.winning && !s.flags.length;

/** The widget's problem: none when empty; the hub's refusals, with a missing winning tile
 * named before the count. */
function problemOf(s) {
  if (isEmpty(s)) return null;
  const hand = handOf(s);
  return meldsProblem(hand) || overuseProblem(hand) || (s.winning ? countProblem(hand) : MISSING_WINNING);
}

/** The tiles one quick tap enters for a meld: a chow from its lowest tile, a pung, a kong. */
function quickTiles(kind, code) {
  if (kind === 'chow') return chowStarts(code) ? [0, 1, 2].map((i) => `${Number(code[0]) + i}${code[1]}`) : null;
  return Array(MELD_SIZE[kind]).fill(code);
}

const chowStarts = (code) => SUITED.includes(code[1]) && Number(code[0]) <= 7;

function ensureStyles() {
  for (const name of ['mahjong.css', 'tilepicker.css']) {
    const href = new URL(`../css/${name}`, import.meta.url).href;
    if ([...document.querySelectorAll('link[rel="stylesheet"]')].some((l) => l.href === href)) continue;
    document.head.append(el('link', { rel: 'stylesheet', href }));
  }
}

/** A tile face for a button (mahjong.js draws it; the button carries the name and data-tile). */
function face(code) {
  const node = tile(code);
  delete node.dataset.tile;
  node.removeAttribute('title');
  node.setAttribute('aria-hidden', 'true');
  return node;
}

/** What names the focused button of the widget (a redraw replaces it: focus moves to its
 * successor, so a keyboard or switch user goes on where they were). */
function focusKey(body) {
  const active = document.activeElement;
  if (!active || !body.contains(active)) return null;
  const zone = active.closest('[data-zone], [data-testid="tp-palette"]');
  const where = zone ? (zone.dataset.zone ? `[data-zone="${zone.dataset.zone}"]` : '[data-testid="tp-palette"]') : '';
  for (const key of ['testid', 'target', 'flag', 'tile']) {
    const v = active.dataset[key];
    if (v !== undefined) return `${where} button[data-${key}="${v}"]`;
  }
  return null;
}

function refocus(body, key) {
  if (key === null) return;
  const next = body.querySelector(key) || body.querySelector('[data-testid="tp-palette"] button');
  if (next) next.focus();
}

/** The `mcr_hand` field: the tile picker in `container` (see the module's head for ctx). */
export function mount(container, ctx = {}) {
  ensureStyles();
  const store = ctx.store && typeof ctx.store === 'object' ? ctx.store : {};
  if (!store.state) store.state = stateOf(ctx.value);
  const label = (ctx.field && ctx.field.label) || 'The winning hand';
  const root = el('div', { class: 'tp', role: 'group', 'aria-label': label, dataset: { testid: 'tilepicker' } });
  const notify = () => {
    if (typeof ctx.changed === 'function') ctx.changed();
  };
  const body = el('div', { class: 'tp-body' });
  // The sentence stays one live region (a fresh one each draw would not be read out).
  const status = el('p', { class: 'tp-problem', role: 'status', 'aria-live': 'polite', dataset: { testid: 'tp-problem' } });
  root.append(body, status);
  container.replaceChildren(root);

  const state = () => store.state;
  const change = (mutate) => {
    const s = state();
    s.history.push(snapshot(s));
    if (s.history.length > 200) s.history.shift();
    mutate(s);
    draw();
    notify();
  };
  const view = (mutate) => {
    mutate(state());
    draw();
  };

  function tap(code) {
    const s = state();
    if (s.target === 'concealed') return change((x) => { x.concealed = sorted([...x.concealed, code]); });
    if (s.target === 'winning') return change((x) => { x.winning = code; });
    const kind = s.target;
    if (s.quick) {
      const tiles = quickTiles(kind, code);
      return tiles && change((x) => { x.melds.push({ kind, tiles }); x.open = null; });
    }
    return change((x) => {
      const open = x.open === null ? null : x.melds[x.open];
      if (open && open.kind === kind && open.tiles.length < MELD_SIZE[kind]) open.tiles.push(code);
      else {
        x.melds.push({ kind, tiles: [code] });
        x.open = x.melds.length - 1;
      }
      if (x.melds[x.open].tiles.length === MELD_SIZE[kind]) x.open = null;
    });
  }

  function paletteButton(code, used) {
    const s = state();
    const left = 4 - used;
    const quickChow = s.quick && s.target === 'chow' && !chowStarts(code);
    const name = `${tileName(code)}, ${left > 0 ? `${left} left` : left === 0 ? 'none left' : `${-left} too many`}`;
    return el('button', {
      type: 'button',
      class: `tp-tile${left <= 0 ? ' out' : ''}${left < 0 ? ' over' : ''}`,
      'aria-label': name,
      dataset: { tile: code, left: String(left) },
      disabled: quickChow || null,
      onclick: () => tap(code),
    }, face(code), el('span', { class: 'tp-left', 'aria-hidden': 'true' }, String(Math.max(left, 0))));
  }

  function zoneTile(code, label, onclick, extra = {}) {
    return el('button', { type: 'button', class: 'tp-tile in', 'aria-label': label, dataset: { tile: code, ...extra }, onclick }, face(code));
  }

  function draw() {
    const s = state();
    const used = usage(handOf(s));
    const meldTarget = MELD_SIZE[s.target] !== undefined;
    const targets = el('div', { class: 'tp-targets', role: 'radiogroup', 'aria-label': 'A tap enters' },
      TARGETS.map((t) => el('button', {
        type: 'button', role: 'radio', 'aria-checked': String(s.target === t), class: s.target === t ? 'on' : '',
        dataset: { target: t, testid: `tp-target-${t}` },
        onclick: () => view((x) => { x.target = t; x.open = null; }),
      }, TARGET_LABEL[t])),
      el('button', {
        type: 'button', class: `tp-quick${s.quick ? ' on' : ''}`, 'aria-pressed': String(s.quick), disabled: !meldTarget || null,
        dataset: { testid: 'tp-quick' },
        onclick: () => view((x) => { x.quick = !x.quick; x.open = null; }),
      }, 'One tap a meld'));
    const palette = el('div', { class: 'tp-palette', role: 'group', 'aria-label': 'Tiles', dataset: { testid: 'tp-palette' } },
      TILES.map((code) => paletteButton(code, used.get(code) || 0)));
    const concealed = el('div', { class: 'tp-zone', role: 'group', 'aria-label': 'Concealed', dataset: { zone: 'concealed' } },
      el('span', { class: 'tp-zlabel' }, `Concealed (${s.concealed.length})`),
      s.concealed.map((code, i) => zoneTile(code, `Remove ${tileName(code)} from the concealed tiles`, () => change((x) => { x.concealed.splice(i, 1); }))));
    const melds = el('div', { class: 'tp-zone', role: 'group', 'aria-label': 'Melds', dataset: { zone: 'melds' } },
      el('span', { class: 'tp-zlabel' }, 'Melds'),
      s.melds.map((m, i) => el('span', {
        class: `tp-meld${s.open === i ? ' open' : ''}${meldProblem(m) ? ' bad' : ''}`,
        dataset: { kind: m.kind, meld: String(i) },
      }, el('span', { class: 'tp-mkind' }, MELD_LABEL[m.kind]),
      el('span', { class: 'tp-mrow' },
        m.tiles.map((code) => el('span', { class: 'tp-mtile', dataset: { tile: code } }, face(code))),
        el('button', {
          type: 'button', class: 'tp-x', 'aria-label': `Remove the ${MELD_LABEL[m.kind].toLowerCase()} ${m.tiles.join(' ')}`,
          dataset: { testid: `tp-remove-meld-${i}` },
          onclick: () => change((x) => { x.melds.splice(i, 1); x.open = null; }),
        }, '×')))));
    const winning = el('div', { class: 'tp-zone tp-win', role: 'group', 'aria-label': 'Winning tile', dataset: { zone: 'winning' } },
      el('span', { class: 'tp-zlabel' }, 'Winning tile'),
      s.winning ? zoneTile(s.winning, `Remove ${tileName(s.winning)}, the winning tile`, () => change((x) => { x.winning = null; })) : el('span', { class: 'tp-none' }, '–'));
    const flags = el('div', { class: 'tp-flags', role: 'group', 'aria-label': 'Scoring flags' },
      FLAGS.map((f) => el('button', {
        type: 'button', class: s.flags.includes(f) ? 'on' : '', 'aria-pressed': String(s.flags.includes(f)),
        dataset: { flag: f, testid: `tp-flag-${f}` },
        onclick: () => change((x) => { x.flags = x.flags.includes(f) ? x.flags.filter((g) => g !== f) : [...x.flags, f]; }),
      }, FLAG_LABEL[f])),
      el('button', {
        type: 'button', class: 'tp-undo', disabled: !s.history.length || null, dataset: { testid: 'tp-undo' },
        onclick: () => {
          view((x) => { Object.assign(x, x.history.pop()); });
          notify();
        },
      }, 'Undo'),
      el('button', {
        type: 'button', class: 'tp-clear', dataset: { testid: 'tp-clear' },
        onclick: () => change((x) => { Object.assign(x, snapshot({ ...emptyState(), history: [] })); }),
      }, 'Clear'));
    const problem = problemOf(s);
    status.classList.toggle('bad', problem !== null);
    status.textContent = isEmpty(s) ? 'Tap the tiles as they lie on the table: the concealed ones, each declared meld, the winning tile.'
      : problem || `${handCount(handOf(s))} tiles: a possible hand (the hub counts the fan).`;
    root.dataset.problem = problem ? 'true' : 'false';
    const focused = focusKey(body);
    body.replaceChildren(targets, palette, el('div', { class: 'tp-zones' }, concealed, melds, winning), flags);
    refocus(body, focused);
  }

  draw();
  return {
    value() {
      return isEmpty(state()) || problemOf(state()) !== null ? null : handOf(state());
    },
    problem() {
      return problemOf(state());
    },
    reset() {
      store.state = emptyState();
      draw();
      notify();
    },
    wide: true, // drawn beside the form's fields, taking the whole console (consolepad.js)
  };
}
