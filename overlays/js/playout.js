// The playout protocols (docs/overlays.md "CasparCG", "SPX", "OGraf"): one adapter that maps
// each tool's template calls onto the overlay's own URL parameters (deal, seat, tables, table,
// feed, output, ...), for every page that `mountOverlay` runs. No page has a copy of it.
//
// - CasparCG HTML templates: global play(), stop(), next(), update(data), `data` being CasparCG's
//   templateData XML (<templateData><componentData id="deal"><data id="text" value="3"/>…),
//   JSON text or an object.
// - SPX-GC: the same globals (SPX's renderer calls update(JSON text), play(), stop(), next());
//   each page declares `window.SPXGCTemplateDefinition` in an inline script, as SPX reads it.
//   runTemplateUpdate() is there too, for SPX tooling that calls it.
// - EBU OGraf: the web component (js/playout-ograf.js) frames the page and drives it by
//   postMessage ({duplicast: 'playout', action, data}); only the parent frame is obeyed, and the
//   page answers each message with its state ({duplicast: 'playout-state', id, playing, visible}).
//
// A template's data never carries a token (the keys `token` and `key` are dropped): what a
// playout controls is a programme source, and a playout's project files are no place for a key.

/** The protocols a page may be told it runs under (`playout=` in the URL or the data). */
export const PROTOCOLS = ['casparcg', 'spx', 'ograf'];

const DROPPED = new Set(['token', 'key']);

/** CasparCG's templateData XML as {id: value}: each componentData's id names a URL parameter
 * (`deal`, `seat`, `tables`…), its first data element's `value` is the value. */
function fromXml(text) {
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  const out = {};
  for (const comp of doc.querySelectorAll('componentData')) {
    const d = comp.querySelector('data');
    if (d && comp.getAttribute('id')) out[comp.getAttribute('id')] = d.getAttribute('value');
  }
  return out;
}

/** Template data of any of the protocols' shapes as a plain object of URL parameters: a JSON
 * string, an object, templateData XML, or `a=1&b=2` text. Never a token. */
export function parseTemplateData(data) {
  let raw = {};
  if (data === undefined || data === null || data === '') raw = {};
  else if (typeof data === 'object') raw = { ...data };
  else {
    const text = String(data).trim();
    if (text.startsWith('<')) raw = fromXml(text);
    else {
      try {
        const parsed = JSON.parse(text);
        raw = parsed && typeof parsed === 'object' ? parsed : {};
      } catch {
        raw = Object.fromEntries(new URLSearchParams(text));
      }
    }
  }
  const out = {};
  for (const [k, v] of Object.entries(raw)) {
    if (DROPPED.has(k)) continue;
    // SPX sends an empty field as '' (or the text "undefined"/"null"): the URL's value stays.
    if (v === undefined || v === null || v === 'undefined' || v === 'null' || v === '') continue;
    out[k] = v;
  }
  return out;
}

// A playout calls the hooks as soon as the page has loaded; the page's modules may still be
// settling then (a top-level await), so until `installPlayout` the hooks queue the calls, and
// the page answers them in order once it runs.
const HOOKS = ['play', 'stop', 'next', 'update'];
const early = [];
if (typeof window !== 'undefined') {
  for (const name of HOOKS) window[name] = (data) => { early.push([name, data]); };
}

/**
 * Install the template hooks of every protocol on this window.
 *   play(), stop(), next(): the graphic's state; update(raw): new selection (parsed data);
 *   state(): {playing, visible} for the OGraf bridge's answers.
 */
export function installPlayout({ play, stop, update, next, state }) {
  const hooks = {
    play: () => play(),
    stop: () => stop(),
    next: () => next(),
    update: (data) => update(parseTemplateData(data)),
  };
  window.play = hooks.play;
  window.stop = hooks.stop;
  window.next = hooks.next;
  window.update = hooks.update;
  window.runTemplateUpdate = () => update({});
  for (const [name, data] of early.splice(0)) hooks[name](data);

  const framed = window.parent && window.parent !== window;
  if (!framed) return;
  window.addEventListener('message', (ev) => {
    if (ev.source !== window.parent) return;
    const m = ev.data;
    if (!m || typeof m !== 'object' || m.duplicast !== 'playout' || !(m.action in hooks)) return;
    hooks[m.action](m.data);
    // The answer waits for the draw the action scheduled (a microtask).
    setTimeout(() => {
      window.parent.postMessage({ duplicast: 'playout-state', id: m.id, ...state() }, '*');
    }, 0);
  });
  window.parent.postMessage({ duplicast: 'playout-ready' }, '*');
}
