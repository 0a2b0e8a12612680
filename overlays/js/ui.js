// Rendering helpers shared by the pages: elements, numbers, cards, team colours, FLIP moves.

// A game's own pieces drawn where a card would be ({is(code), draw(code, size), text(code)}: a
// game module's `piece`, each added by games/index.js as it loads them; piecepack hold'em's
// tiles). A page that loads no game module draws cards only (the site's replayer).
const PIECES = [];

/** Draw the codes `piece.is` knows with `piece.draw` and `piece.text` instead of as cards. */
export function addPieces(piece) {
  if (!PIECES.includes(piece)) PIECES.push(piece);
}

const pieceOf = (code) => PIECES.find((p) => p.is(code));

/** Create an element: el('div', {class: 'x', dataset: {testid: 'y'}}, child, 'text', ...). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'style' && typeof v === 'object') Object.assign(node.style, v);
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/**
 * Put `nodes` in `parent` in place of its children, keeping each child equal to one of them
 * (isEqualNode: the same tags, attributes and text) where it is: a page redrawn on every feed
 * update changes only what changed, and what the user is doing in the rest stays theirs (a
 * field's typing and focus, which are no attributes; a button between its press and release).
 * A kept child keeps its listeners, so they may read only what its attributes and text say.
 */
export function keepChildren(parent, nodes, { live = null } = {}) {
  const old = [...parent.childNodes];
  // With `live` (a selector): the text of those parts may change in place ("12 s ago"), a
  // child equal to its redraw in all else is kept and given the new text.
  const bare = (node) => {
    if (!live || !(node instanceof Element)) return node;
    const copy = node.cloneNode(true);
    for (const part of copy.querySelectorAll(live)) part.textContent = '';
    return copy;
  };
  const oldBare = old.map(bare);
  const want = nodes.map((node) => {
    const mine = bare(node);
    const i = old.findIndex((o, j) => o !== null && oldBare[j].isEqualNode(mine));
    if (i < 0) return node;
    const kept = old[i];
    old[i] = null;
    if (mine !== node) {
      const now = node.querySelectorAll(live);
      kept.querySelectorAll(live).forEach((part, j) => {
        if (part.textContent !== now[j].textContent) part.textContent = now[j].textContent;
      });
    }
    return kept;
  });
  for (const o of old) if (o !== null) o.remove();
  want.forEach((node, i) => {
    const at = parent.childNodes[i];
    if (at !== node) parent.insertBefore(node, at || null); // (a kept one stays unless reordered)
  });
}

const INT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const POINTS = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

/** 12,345 */
export function fmtInt(n) {
  return n === undefined || n === null ? '–' : INT.format(n);
}

/** +1,200 / −350 / 0 (true minus sign reads better on air). */
export function fmtSigned(n) {
  if (n === undefined || n === null) return '–';
  if (n > 0) return `+${INT.format(n)}`;
  if (n < 0) return `\u2212${INT.format(-n)}`;
  return '0';
}

/** A signed figure that may be fractional, with a true minus sign: −3.5 */
export function fmtMinus(n) {
  return typeof n === 'number' && n < 0 ? `\u2212${POINTS.format(-n)}` : POINTS.format(n);
}

/** Points may be fractional when tied players share places: 4.5 */
export function fmtPoints(n) {
  return n === undefined || n === null ? '–' : POINTS.format(n);
}

/**
 * True when nothing separates the rows yet (before any deal counts): every row on 0 chips and
 * the same points. The scoring still gives them the shared places (every team "1" on 21 points),
 * which reads wrong on air; pages show such rows unranked.
 */
export function unscored(rows) {
  return rows.length > 0 && rows.every((r) => !r.chips && r.points === rows[0].points);
}

export function signClass(n) {
  return n > 0 ? 'pos' : n < 0 ? 'neg' : 'zero';
}

const SUITS = { s: '\u2660', h: '\u2665', d: '\u2666', c: '\u2663' };

/** A rendered playing card from its 2-char code ("Ah", "Td"); null or "??" draws a card back. */
export function card(code, size = '') {
  if (!code || code.length < 2 || code === '??') {
    return el('span', { class: `card back ${size} enter`, dataset: { card: '' } });
  }
  const piece = pieceOf(code); // a game's own piece (piecepack hold'em's "Nbs")
  if (piece) return piece.draw(code, size);
  const rank = code[0].toUpperCase() === 'T' ? '10' : code[0].toUpperCase();
  const suit = code[1].toLowerCase();
  const red = suit === 'h' || suit === 'd';
  return el(
    'span',
    { class: `card ${red ? 'red' : 'black'} ${size} enter`, dataset: { card: code } },
    el('span', { class: 'rank' }, rank),
    el('span', { class: 'suit' }, SUITS[suit] || suit),
  );
}

/** A row of cards; `count` pads with empty slots (board placeholders). */
export function cards(codes, count = 0, size = '') {
  const list = [...(codes || [])].map((c) => card(c, size));
  while (list.length < count) list.push(el('span', { class: `card slot ${size}` }));
  return list;
}

/** Team colour as a CSS colour, with a readable text colour on top of it. */
export function teamStyle(colour) {
  const c = colour && /^#?[0-9a-f]{6}$/i.test(colour) ? (colour[0] === '#' ? colour : `#${colour}`) : '#5a6b7d';
  const r = parseInt(c.slice(1, 3), 16);
  const g = parseInt(c.slice(3, 5), 16);
  const b = parseInt(c.slice(5, 7), 16);
  const ink = 0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#0b0f14' : '#ffffff';
  return { '--team': c, '--team-ink': ink };
}

/**
 * FLIP: record the position of each keyed child, let `mutate` reorder/replace them, then
 * animate every child from its old position to its new one.
 */
export function flip(container, keyOf, mutate) {
  const before = new Map();
  for (const child of container.children) before.set(keyOf(child), child.getBoundingClientRect().top);
  mutate();
  for (const child of container.children) {
    const top = before.get(keyOf(child));
    if (top === undefined) {
      child.animate([{ opacity: 0, transform: 'translateX(-40px)' }, { opacity: 1, transform: 'none' }],
        { duration: 450, easing: 'cubic-bezier(.2,.8,.2,1)' });
      continue;
    }
    const dy = top - child.getBoundingClientRect().top;
    if (Math.abs(dy) > 1) {
      child.animate([{ transform: `translateY(${dy}px)` }, { transform: 'none' }],
        { duration: 700, easing: 'cubic-bezier(.2,.8,.2,1)' });
    }
  }
}

/** Briefly flash an element whose value changed. */
export function pulse(node) {
  node.animate([{ filter: 'brightness(1.9)', transform: 'scale(1.08)' }, { filter: 'none', transform: 'none' }],
    { duration: 600, easing: 'ease-out' });
}

/** Set text and pulse when it changed (not on first draw). */
export function setText(node, text) {
  const s = String(text);
  if (node.textContent === s) return;
  const first = node.textContent === '';
  node.textContent = s;
  if (!first) pulse(node);
}

const STATUS = [
  ['disputed', 'disputed'], ['void', 'void'], ['complete', 'complete'], ['done', 'complete'],
  ['settled', 'complete'], ['showdown', 'in progress'], ['progress', 'in progress'],
  ['play', 'in progress'], ['live', 'in progress'], ['reopen', 'in progress'],
];

/** Map a hub status string to one of: waiting, in progress, complete, void, disputed. */
export function statusOf(raw) {
  const s = String(raw || '').toLowerCase();
  for (const [needle, label] of STATUS) if (s.includes(needle)) return label;
  return 'waiting';
}

const KIND = { fold: 'folds', check: 'checks', call: 'calls', bet: 'bets', raise: 'raises to', post: 'posts', sb: 'posts SB', bb: 'posts BB', small_blind: 'posts SB', big_blind: 'posts BB' };

/** "raises to 600" */
export function actionText(a) {
  if (!a) return '';
  if (typeof a === 'string') return a;
  const verb = KIND[a.kind] || a.kind || '';
  const amount = a.kind === 'fold' || a.kind === 'check' ? '' : a.kind === 'call' ? a.added : a.to;
  return amount ? `${verb} ${fmtInt(amount)}` : verb;
}

export const STREETS = ['preflop', 'flop', 'turn', 'river'];
export const STREET_LABEL = { preflop: 'Pre-flop', flop: 'Flop', turn: 'Turn', river: 'River', showdown: 'Showdown', complete: 'Complete' };
/** Board cards visible once a street is reached. */
export const BOARD_AT = { preflop: 0, flop: 3, turn: 4, river: 5, showdown: 5, complete: 5 };

/**
 * Desks (operator, commentator) are laid out for a 1920x1080 window: in a smaller one the whole
 * page is zoomed down to fit, so nothing is cut or pushed off screen.
 */
export function fitDesk(width = 1920, height = 1080, { content = false } = {}) {
  const fit = () => {
    const z = Math.min(1, window.innerWidth / width, window.innerHeight / height);
    document.body.style.zoom = z === 1 ? '' : String(z);
    if (!content) return;
    // With `content`, zoom further when the desk is taller than the window (scrollHeight is in
    // zoomed pixels), so all of it stays on one screen.
    const tall = document.documentElement.scrollHeight;
    if (tall > window.innerHeight + 1) document.body.style.zoom = String((z * window.innerHeight) / tall);
  };
  fit();
  window.addEventListener('resize', fit);
  if (content && typeof ResizeObserver === 'function') {
    // The content grows and shrinks with the feed: fitted again in the next frame, not at the
    // page's next poll (a desk zoomed up to a second after it grew moved what was under the
    // pointer between the aim and the click: another button, or none, took it).
    let queued = false;
    new ResizeObserver(() => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        fit();
      });
    }).observe(document.body);
  }
  return fit;
}

/** A probability as broadcasts print it: 0.6234 -> "62.3%" ("–" when there is none). */
export function fmtPct(p) {
  return typeof p === 'number' ? `${(p * 100).toFixed(1)}%` : '–';
}

/** A seat's chances as one short text: "62.3%", with the split share when there is one. */
export function equityText(e) {
  if (!e) return '';
  return e.tie >= 0.0005 ? `${fmtPct(e.win)} (tie ${fmtPct(e.tie)})` : fmtPct(e.win);
}

/** A card as text: "Ah" -> "A♥", "Td" -> "10♦" (lists of outs). */
export function cardText(code) {
  const piece = pieceOf(code);
  if (piece) return piece.text(code);
  return `${code[0] === 'T' ? '10' : code[0]}${SUITS[code[1]] || code[1]}`;
}
