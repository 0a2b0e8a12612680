// Lower-third ticker of notable hands (swings, all-ins, voids). Items rotate every `dwell`
// seconds (URL parameter, default 7); a new item goes on air at once.
import { mountOverlay } from './duplicast.js';
import { el } from './ui.js';
import { topic } from './topics.js';

const win = document.querySelector('[data-testid="ticker-window"]');
const count = document.querySelector('[data-testid="ticker-count"]');
const dwell = (Number.parseFloat(new URLSearchParams(location.search).get('dwell')) || 7) * 1000;
const KIND = { swing: 'Swing', all_in: 'All-in', void: 'Void' };
let items = [];
let index = 0;
let shownKey = null;
let seen = new Set();
let timer = null;

function keyOf(item) {
  return `${item.id}|${item.text}`;
}

function show(item) {
  const key = keyOf(item);
  if (key === shownKey) return;
  shownKey = key;
  for (const old of win.children) {
    old.classList.add('out');
    setTimeout(() => old.remove(), 500);
  }
  const node = el('div', { class: 'item', dataset: { testid: 'ticker-item', id: String(item.id), kind: item.kind } },
    el('span', { class: 'badge', dataset: { kind: item.kind, testid: 'ticker-kind' } }, KIND[item.kind] || item.kind),
    el('span', { class: 'text', dataset: { testid: 'ticker-text' } }, item.text));
  win.append(node);
  count.textContent = items.length > 1 ? `${index + 1}/${items.length}` : '';
  fitText(node);
}

const SIZES = [42, 40, 38, 36, 34, 32, 30]; // px, one line
const TWO_LINES = [32, 30, 28, 26, 24, 22, 20]; // px, wrapped, when one line at 30 px is too long

/**
 * Fit an item's whole text in the ticker: the largest size at which it fits on one line, else
 * wrapped (two lines, more only for a text far too long for any); never cut with an ellipsis.
 */
export function fitText(node) {
  const text = node.querySelector('.text');
  const fits = () => text.scrollWidth <= text.clientWidth && text.scrollHeight <= text.clientHeight
    && text.offsetHeight <= node.clientHeight;
  node.classList.remove('two-lines');
  for (const size of SIZES) {
    node.style.fontSize = `${size}px`;
    if (fits()) return;
  }
  node.classList.add('two-lines');
  for (const size of TWO_LINES) {
    node.style.fontSize = `${size}px`;
    if (fits()) return;
  }
}

function rotate() {
  if (!items.length) return;
  index = (index + 1) % items.length;
  show(items[index]);
}

function render({ states }) {
  const t = states.get(topic('ticker'));
  const list = (t && t.items) || [];
  items = [...list].sort((a, b) => (typeof a.id === 'number' && typeof b.id === 'number' ? b.id - a.id : 0));
  if (!items.length) {
    shownKey = null;
    win.replaceChildren();
    return false;
  }
  const fresh = items.findIndex((i) => !seen.has(keyOf(i)));
  seen = new Set(items.map(keyOf));
  const current = items.findIndex((i) => keyOf(i) === shownKey);
  index = fresh >= 0 && shownKey !== null ? fresh : current >= 0 ? current : 0;
  show(items[index]);
  if (!timer) timer = setInterval(rotate, dwell);
  return true;
}

if (document.fonts) {
  const refitAll = () => win.querySelectorAll('.item').forEach(fitText);
  document.fonts.ready.then(refitAll);
  document.fonts.addEventListener('loadingdone', refitAll); // a face first used later
}

mountOverlay({ slot: 'ticker', topics: () => [topic('ticker')], render, next: rotate });
