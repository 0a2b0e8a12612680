// Keyed DOM updates: a page builds its elements afresh on every update and `patch` carries the
// changes over to the ones on screen, so an element that did not change stays the same node.
// A card or tile that is still the same card is never replaced (nor moved): its entering
// animation ran once, when it was dealt, and an unrelated update (a bet, a pot, another seat's
// action) does not make it fade in again. Only a card new to its place is inserted, with `enter`.

/** A card, tile or card slot: compared by what it shows, never patched inside. */
function cardKey(node) {
  if (node.nodeType !== 1 || !node.classList.contains('card')) return null;
  const cls = [...node.classList].filter((c) => c !== 'enter').sort().join(' ');
  return `${node.dataset.card ?? ''}|${cls}`;
}

function syncAttributes(old, fresh) {
  for (const { name } of [...old.attributes]) if (!fresh.hasAttribute(name)) old.removeAttribute(name);
  for (const { name, value } of [...fresh.attributes]) {
    if (old.getAttribute(name) !== value) old.setAttribute(name, value);
  }
}

/** Carry `fresh` over to `old` (same tag): attributes, text, children by position. Returns the
 * node now on screen (`old`, or `fresh` when it had to replace it). */
export function morph(old, fresh) {
  if (old.nodeType !== fresh.nodeType || old.nodeName !== fresh.nodeName) {
    old.replaceWith(fresh);
    return fresh;
  }
  if (old.nodeType === 3) {
    if (old.nodeValue !== fresh.nodeValue) old.nodeValue = fresh.nodeValue;
    return old;
  }
  if (old.nodeType !== 1) return old;
  const key = cardKey(fresh);
  if (key !== null || cardKey(old) !== null) {
    if (key === cardKey(old)) return old;
    old.replaceWith(fresh);
    return fresh;
  }
  syncAttributes(old, fresh);
  morphChildren(old, [...fresh.childNodes]);
  return old;
}

/** The children of `parent` become `list`, paired by position. */
function morphChildren(parent, list) {
  const olds = [...parent.childNodes];
  list.forEach((fresh, i) => {
    if (i < olds.length) morph(olds[i], fresh);
    else parent.append(fresh);
  });
  for (const extra of olds.slice(list.length)) extra.remove();
}

/**
 * The children of `parent` become `list`, paired by `keyOf` (an element whose key is gone is
 * removed first, so the ones that stay are never moved: moving restarts CSS animations).
 */
export function patch(parent, list, keyOf) {
  const fresh = new Map(list.map((n) => [keyOf(n), n]));
  const old = new Map();
  for (const child of [...parent.children]) {
    const k = keyOf(child);
    if (fresh.has(k) && !old.has(k)) old.set(k, child);
    else child.remove();
  }
  for (const child of [...parent.childNodes]) if (child.nodeType !== 1) child.remove();
  list.forEach((node, i) => {
    const prev = old.get(keyOf(node));
    const shown = prev ? morph(prev, node) : node;
    if (parent.children[i] !== shown) parent.insertBefore(shown, parent.children[i] || null);
  });
}

/** A row of cards patched in place: unchanged cards stay, new ones are inserted (and animate). */
export function patchCards(parent, list) {
  morphChildren(parent, list);
}
